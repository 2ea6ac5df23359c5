"""Record what torch.func (grad, vjp, jvp, jacrev, jacfwd, hessian, linearize, vmap, functional_call,
...) returns and raises in every scenario of tests/engine/func_scenarios.py, for tests/engine/test_func.py
(which never imports torch): tests/reference/engine/func.json. Deterministic: running it twice writes
the same bytes.

    /work/torchvenv/bin/python tests/reference/make_func_reference.py
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from func_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    torch.set_num_threads(1)
    return record(torch, SCENARIOS, "func.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
