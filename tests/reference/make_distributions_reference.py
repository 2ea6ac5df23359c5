"""Write tests/reference/distributions_fixtures.json: torch.distributions' log_prob, cdf, icdf, entropy, mean,
mode, variance, … with their gradients, the transforms, kl_divergence of the registered pairs, and the validation errors, for
every scenario in tests/engine/distributions_scenarios.py. Run with the torch venv (tests/reference/README.md):

    /work/torchvenv/bin/python tests/reference/make_distributions_reference.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch
import torch.distributions  # noqa: F401 — `lib.distributions` in the scenarios

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
import distributions_scenarios as S  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    out = {"torch_version": torch.__version__,
           "cases": {name: S.run_case(torch, name) for name in S.CASES},
           "kl": {f"{p}|{q}": S.run_kl(torch, p, q) for p, q in S.KL_PAIRS},
           "transforms": {name: S.run_transform(torch, name) for name in S.TRANSFORMS},
           "straight_through": S.run_straight_through(torch),
           "errors": {name: S.run_error(torch, name) for name in S.ERRORS}}
    path = HERE / "distributions_fixtures.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
