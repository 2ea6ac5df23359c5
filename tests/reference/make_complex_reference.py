"""Record what PyTorch does with complex numbers in the complex scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_complex_reference.py

Runs every scenario of tests/engine/complex_scenarios.py with `torch` as the library and writes
tests/reference/engine/complex.json (torch version, then one entry per scenario: dtypes, values as
[re, im] pairs, grad_fn names, gradients for a fixed complex grad_output, printed tensors, errors and
warnings). Deterministic: running it twice writes the same bytes. tests/engine/test_complex.py runs the
same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from complex_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "complex.json")


if __name__ == "__main__":
    sys.exit(main())
