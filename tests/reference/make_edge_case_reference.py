"""Record what PyTorch does in the edge-case scenarios and lr schedules, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_edge_case_reference.py

Runs every scenario of tests/engine/edge_case_scenarios.py with `torch` as the library, and
torch.optim.lr_scheduler's classes behind agrad's `schedule:` types (CosineAnnealingLR past T_max,
ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR) and the warm-up agrad's `schedule:
{warmup: W}` stands for (SequentialLR of LinearLR(start_factor=1/W, total_iters=W-1) and the
schedule, milestones=[W]), and writes tests/reference/engine/edge_cases.json. Deterministic.
tests/engine/test_edge_cases.py and tests/graphs/test_schedule_reference.py compare agrad.
"""
from __future__ import annotations

import sys
import warnings

import torch

from scenario_recording import record
from edge_case_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts

# (the spec of agrad's `schedule:`, its total steps, the steps to record)
SCHEDULES = [
    ({"type": "cosine", "t_max": 2}, 5, 5),
    ({"type": "cosine", "t_max": 4, "eta_min": 0.1}, 12, 12),
    ({"type": "cosine", "t_max": 6, "warmup": 4}, 10, 20),
    ({"type": "step", "step_size": 2, "gamma": 0.5, "warmup": 3}, 10, 10),
    ({"type": "exponential", "gamma": 0.9, "warmup": 1}, 6, 6),
    ({"type": "constant", "factor": 0.25, "total_iters": 3}, 6, 6),
    ({"type": "polynomial", "total_iters": 6, "power": 2.0}, 10, 10),
    ({"type": "polynomial", "warmup": 2}, 9, 9),
    ({"type": "cosine_restarts", "t_0": 3, "t_mult": 2, "eta_min": 0.05}, 25, 25),
    ({"type": "cosine_restarts", "t_0": 4, "warmup": 2}, 13, 13),
    ({"type": "cyclic", "base_factor": 0.1, "step_size_up": 3, "step_size_down": 5}, 20, 20),
    ({"type": "cyclic", "base_factor": 0.2, "step_size_up": 2, "mode": "triangular2"}, 20, 20),
    ({"type": "cyclic", "base_factor": 0.05, "step_size_up": 2, "mode": "exp_range", "gamma": 0.9}, 20, 20),
]


def _torch_lrs(spec: dict, steps: int) -> list[float]:
    """The lr of each of `steps` optimizer steps, base lr 1, from torch's scheduler classes."""
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    options = dict(spec)
    kind, warmup = options.pop("type"), options.pop("warmup", 0)
    if kind == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=options["t_max"],
                                                           eta_min=options.get("eta_min", 0.0))
    elif kind == "step":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=options["step_size"], gamma=options["gamma"])
    elif kind == "exponential":
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=options["gamma"])
    elif kind == "constant":
        sched = torch.optim.lr_scheduler.ConstantLR(opt, factor=options["factor"], total_iters=options["total_iters"])
    elif kind == "polynomial":
        sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=options.get("total_iters", 5),
                                                      power=options.get("power", 1.0))
    elif kind == "cosine_restarts":
        sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=options["t_0"],
                                                                     T_mult=options.get("t_mult", 1),
                                                                     eta_min=options.get("eta_min", 0.0))
    elif kind == "cyclic":         # base lr 1: base_factor is CyclicLR's base_lr, 1 its max_lr
        sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=options["base_factor"], max_lr=1.0,
                                                  step_size_up=options["step_size_up"],
                                                  step_size_down=options.get("step_size_down"),
                                                  mode=options.get("mode", "triangular"),
                                                  gamma=options.get("gamma", 1.0), cycle_momentum=False)
    if warmup:
        ramp = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / warmup, total_iters=warmup - 1)
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [ramp, sched], milestones=[warmup])
    lrs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the epoch-argument deprecation SequentialLR triggers
        for _ in range(steps):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
    return lrs


def main() -> int:
    schedules = [{"spec": spec, "total_steps": total, "lrs": _torch_lrs(spec, steps)}
                 for spec, total, steps in SCHEDULES]
    return record(torch, SCENARIOS, "edge_cases.json", schedules=schedules)


if __name__ == "__main__":
    sys.exit(main())
