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
                                   "adafactor": agrad.optim.Adafactor, "muon": agrad.optim.Muon}
# torch.optim's optimizers a `train:` section cannot run, and why (its check says so, located)
REFUSED_OPTIMIZERS: dict[str, str] = {
    "lbfgs": "LBFGS re-evaluates the loss several times per step through a closure, and a `train:` step "
             "evaluates the graph once; use agrad.optim.LBFGS from Python with a closure",
    "sparseadam": "SparseAdam needs sparse gradients, which agrad does not have",
}
# optimizers for matrices only, and why: every parameter they train must be 2-D
MATRIX_OPTIMIZERS: dict[str, str] = {
    "muon": "Muon orthogonalizes each parameter's update as a matrix; train the others with a second run or "
            "another optimizer",
}
# keyword arguments each schedule takes (besides `warmup`), as lr_scheduler's classes name them
SCHEDULES: dict[str, tuple[str, ...]] = {
    "constant": ("factor", "total_iters"), "step": ("step_size", "gamma"), "multistep": ("milestones", "gamma"),
    "exponential": ("gamma",), "cosine": ("t_max", "eta_min"), "linear": ("start_factor", "end_factor",
                                                                         "total_iters"),
    "polynomial": ("total_iters", "power"), "cosine_restarts": ("t_0", "t_mult", "eta_min"),
    "cyclic": ("base_factor", "step_size_up", "step_size_down", "mode", "gamma"),
}
CYCLIC_MODES = ("triangular", "triangular2", "exp_range")
METRICS = ("loss", "accuracy")


def make_optimizer(spec: dict, params: list) -> agrad.optim.Optimizer:
    """`{type: adam, lr: 1e-3, ...}`: the rest of the mapping is the class's keyword arguments."""
    options = dict(spec)
    kind = options.pop("type")
    for key, value in options.items():        # betas, etas, step_sizes, Adafactor's eps, ns_coefficients
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
    if kind == "constant":          # ConstantLR; without `factor` the lr stays as it is
        low, total = options.get("factor", 1.0), options.get("total_iters", 5)

        def after(t):
            return low + (t >= total) * (1 - low)
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
    elif kind == "polynomial":
        total, power = options.get("total_iters", 5), options.get("power", 1.0)

        def after(t):
            return (1.0 - min(total, t) / total) ** power
    elif kind == "cosine_restarts":
        after = _cosine_restarts(options["t_0"], options.get("t_mult", 1), options.get("eta_min", 0.0))
    elif kind == "cyclic":
        after = _cyclic(options)
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


def _cosine_restarts(t_0: int, t_mult: int, eta_min: float) -> Callable[[int], float]:
    """CosineAnnealingWarmRestarts at epoch t (its `step(epoch)` form): cosine annealing over
    T_i steps, T_i = t_0 * t_mult**n in the n-th cycle; eta_min a fraction of the base lr."""
    def after(t):
        if t >= t_0:
            if t_mult == 1:
                t_cur, t_i = t % t_0, t_0
            else:
                n = int(math.log((t / t_0 * (t_mult - 1) + 1), t_mult))
                t_cur, t_i = t - t_0 * (t_mult ** n - 1) / (t_mult - 1), t_0 * t_mult ** n
        else:
            t_cur, t_i = t, t_0
        return eta_min + (1 - eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2
    return after


def _cyclic(options: dict) -> Callable[[int], float]:
    """CyclicLR's lr at step t between base_factor times the base lr and the base lr (its
    max_lr), up over step_size_up steps and down over step_size_down; `mode` scales each
    cycle's amplitude (triangular2: halved per cycle; exp_range: gamma**t). Momentum does
    not cycle here."""
    base = options.get("base_factor", 0.1)
    up = float(options.get("step_size_up", 2000))
    down = float(options.get("step_size_down", up))
    mode, gamma = options.get("mode", "triangular"), options.get("gamma", 1.0)
    total = up + down
    ratio = up / total

    def after(t):
        cycle = math.floor(1 + t / total)
        x = 1.0 + t / total - cycle
        scale_factor = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
        if mode == "triangular":
            scale = 1.0
        elif mode == "triangular2":
            scale = 1 / (2.0 ** (cycle - 1))
        else:
            scale = gamma ** t
        return base + (1 - base) * scale_factor * scale
    return after
