"""Write tests/reference/distributions_fixtures.json: torch.distributions' log_prob, cdf, icdf, entropy, mean,
mode, variance, … with their gradients, the transforms, kl_divergence of the registered pairs, and the validation errors, for
every scenario in tests/engine/distributions_scenarios.py. Run with the torch venv (tests/reference/README.md):

    /work/torchvenv/bin/python tests/reference/make_distributions_reference.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.distributions  # noqa: F401 — `lib.distributions` in the scenarios

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from scenario_recording import write_fixture  # noqa: E402 - beside this script
import distributions_scenarios as S  # noqa: E402


def sampler_grads() -> dict:
    """ATen's _standard_gamma_grad and _dirichlet_grad on S.sampler_grid(): the pathwise gradients of
    Gamma, Beta and Dirichlet draws, which agrad computes on the host (agrad.distributions._sampling)."""
    (alpha, x), (bx, balpha, btotal) = S.sampler_grid()
    f64 = dict(dtype=torch.float64)
    return {"standard_gamma_grad": torch._standard_gamma_grad(torch.tensor(alpha, **f64),
                                                              torch.tensor(x, **f64)).tolist(),
            "dirichlet_grad": torch._dirichlet_grad(torch.tensor(bx, **f64), torch.tensor(balpha, **f64),
                                                    torch.tensor(btotal, **f64)).tolist()}


def main() -> None:
    torch.set_num_threads(1)
    out = {"torch_version": torch.__version__,
           "cases": {name: S.run_case(torch, name) for name in S.CASES},
           "kl": {f"{p}|{q}": S.run_kl(torch, p, q) for p, q in S.KL_PAIRS},
           "transforms": {name: S.run_transform(torch, name) for name in S.TRANSFORMS},
           "registry": {name: S.run_registry(torch, name) for name in S.REGISTRY},
           "straight_through": S.run_straight_through(torch),
           "sampler_grads": sampler_grads(),
           "errors": {name: S.run_error(torch, name) for name in S.ERRORS}}
    path = HERE / "distributions_fixtures.json"
    write_fixture(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
