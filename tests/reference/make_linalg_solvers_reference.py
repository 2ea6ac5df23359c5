"""Record what PyTorch does in the scenarios of its iterative and randomized linear-algebra solvers, for
tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_linalg_solvers_reference.py

Runs every scenario of tests/engine/linalg_solvers_scenarios.py (torch.lobpcg, torch.svd_lowrank,
torch.pca_lowrank, torch._lowrank.get_approximate_basis) with `torch` as the library and writes
tests/reference/engine/linalg_solvers.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_linalg_solvers.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from linalg_solvers_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    torch.set_num_threads(1)
    return record(torch, SCENARIOS, "linalg_solvers.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
