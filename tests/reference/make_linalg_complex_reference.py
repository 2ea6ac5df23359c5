"""Record what PyTorch does in the scenarios of complex linear algebra, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_linalg_complex_reference.py

Runs every scenario of tests/engine/linalg_complex_scenarios.py (linalg.eig, eigvals, eigh, svd, qr,
cholesky, inv, det, slogdet, solve, lu_factor/lu_solve, matrix_exp, pinv and the norms of complex matrices)
with `torch` as the library and writes tests/reference/engine/linalg_complex.json. Deterministic: running it
twice writes the same bytes. tests/engine/test_linalg_complex.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from linalg_complex_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    torch.set_num_threads(1)
    return record(torch, SCENARIOS, "linalg_complex.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
