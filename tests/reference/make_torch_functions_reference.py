"""Record what PyTorch does in the scenarios of torch functions that are not ops, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_torch_functions_reference.py

Runs every scenario of tests/engine/torch_functions_scenarios.py (the window functions, the functions
that make tensors from other data) with `torch` as the library and writes
tests/reference/engine/torch_functions.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_torch_functions_reference.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from torch_functions_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "torch_functions.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
