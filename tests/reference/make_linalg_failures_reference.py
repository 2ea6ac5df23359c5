"""Record what PyTorch does with every linear-algebra op on hostile matrices, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_linalg_failures_reference.py

Runs every scenario of tests/engine/linalg_failures_scenarios.py with `torch` as the library and writes
tests/reference/engine/linalg_failures.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_linalg_failures.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from linalg_failures_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    torch.set_num_threads(1)
    return record(torch, SCENARIOS, "linalg_failures.json")


if __name__ == "__main__":
    sys.exit(main())
