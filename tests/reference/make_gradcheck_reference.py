"""Record what PyTorch's gradcheck does in the gradcheck scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_gradcheck_reference.py

Runs every scenario of tests/engine/gradcheck_scenarios.py with `torch` as the library
and writes tests/reference/engine/gradcheck.json (torch version, then one entry per
scenario: what gradcheck returned or raised, and the warnings it gave). Deterministic:
running it twice writes the same bytes. tests/engine/test_gradcheck_reference.py runs
the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from gradcheck_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "gradcheck.json")


if __name__ == "__main__":
    sys.exit(main())
