"""Optimizers and learning-rate schedules from plain data (`{type: adam, lr: 1e-3}`):
what the `train:` section checks against and what the training loop builds, in one
place below both.
"""
from __future__ import annotations

import bisect
import math
from typing import Callable

import agrad.optim

OPTIMIZERS: dict[str, Callable] = {"sgd": agrad.optim.SGD, "adam": agrad.optim.Adam, "adamw": agrad.optim.AdamW,
                                   "rmsprop": agrad.optim.RMSprop, "adagrad": agrad.optim.Adagrad,
                                   "adamax": agrad.optim.Adamax, "nadam": agrad.optim.NAdam,
                                   "radam": agrad.optim.RAdam, "adadelta": agrad.optim.Adadelta,
                                   "rprop": agrad.optim.Rprop, "asgd": agrad.optim.ASGD,
                                   "adafactor": agrad.optim.Adafactor}
# torch.optim's optimizers a `train:` section cannot run, and why (its check says so, located)
REFUSED_OPTIMIZERS: dict[str, str] = {
    "lbfgs": "LBFGS re-evaluates the loss several times per step through a closure, and a `train:` step "
             "evaluates the graph once; use agrad.optim.LBFGS from Python with a closure",
    "sparseadam": "SparseAdam needs sparse gradients, which agrad does not have",
}
# keyword arguments each schedule takes (besides `warmup`), as lr_scheduler's classes name them
SCHEDULES: dict[str, tuple[str, ...]] = {
    "constant": (), "step": ("step_size", "gamma"), "multistep": ("milestones", "gamma"),
    "exponential": ("gamma",), "cosine": ("t_max", "eta_min"), "linear": ("start_factor", "end_factor",
                                                                         "total_iters"),
}
METRICS = ("loss", "accuracy")


def make_optimizer(spec: dict, params: list) -> agrad.optim.Optimizer:
    """`{type: adam, lr: 1e-3, ...}`: the rest of the mapping is the class's keyword arguments."""
    options = dict(spec)
    kind = options.pop("type")
    for key, value in options.items():        # betas, etas, step_sizes, Adafactor's eps: pairs
        if isinstance(value, list):
            options[key] = tuple(value)
    return OPTIMIZERS[kind](params, **options)


def schedule_factor(spec: dict | None, total_steps: int) -> Callable[[int], float] | None:
    """The schedule's multiplier of the base lr at step t, from the closed forms of
    lr_scheduler's classes (cosine's goes on past t_max: it rises again, as
    CosineAnnealingLR's does). `warmup: W` multiplies the first W steps by (t + 1) / W,
    then runs the schedule from its step 0: PyTorch's SequentialLR([LinearLR(start_factor=1/W,
    total_iters=W - 1), schedule], milestones=[W])."""
    if spec is None:
        return None
    options = dict(spec)
    kind = options.pop("type", "constant")
    warmup = int(options.pop("warmup", 0))
    if kind == "constant":
        def after(t):
            return 1.0
    elif kind == "step":
        step_size, gamma = options["step_size"], options.get("gamma", 0.1)

        def after(t):
            return gamma ** (t // step_size)
    elif kind == "multistep":
        milestones, gamma = sorted(options["milestones"]), options.get("gamma", 0.1)

        def after(t):
            return gamma ** bisect.bisect_right(milestones, t)
    elif kind == "exponential":
        gamma = options["gamma"]

        def after(t):
            return gamma ** t
    elif kind == "cosine":
        t_max = options.get("t_max", max(1, total_steps - warmup))
        eta_min = options.get("eta_min", 0.0)          # a fraction of the base lr here

        def after(t):
            return eta_min + (1 - eta_min) * (1 + math.cos(math.pi * t / t_max)) / 2
    else:
        start, end = options.get("start_factor", 1.0 / 3), options.get("end_factor", 1.0)
        total = options.get("total_iters", 5)

        def after(t):
            return start + (end - start) * min(total, t) / total

    def factor(t: int) -> float:
        if t < warmup:
            return (t + 1) / warmup
        return after(t - warmup)
    return factor
