"""Write tests/reference/optim_fixtures.json: torch.optim's parameters after N steps, the
gradient-clipping norms, the schedulers' learning rates, swa_utils' averaged models and the
constructors' errors, for every scenario in tests/engine/optim_scenarios.py. Run with the torch venv (tests/reference/README.md):

    /work/torchvenv/bin/python tests/reference/make_optim_reference.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from scenario_recording import write_fixture  # noqa: E402 - beside this script
import optim_scenarios as S  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    out = {"torch_version": torch.__version__, "steps": S.STEPS,
           "optimizers": {name: S.run_optimizer(torch, name) for name in S.OPTIMIZERS},
           "clips": {name: S.run_clip(torch, name) for name in S.CLIPS},
           "schedulers": {name: S.run_scheduler(torch, name) for name in S.SCHEDULERS},
           "errors": {name: S.run_error(torch, name) for name in S.ERRORS},
           "swa": {name: S.run_swa(torch, name) for name in S.SWA},
           "swa_errors": {name: S.run_swa_error(torch, name) for name in S.SWA_ERRORS},
           "fixed_gradients": {name: S.run_fixed_gradients(torch, name) for name in S.OPTIMIZERS
                               if S.OPTIMIZERS[name][0] != "LBFGS"}}
    path = HERE / "optim_fixtures.json"
    write_fixture(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
