"""Optimizer and scheduler scenarios written once for any torch-like library: run with
`torch` by tests/reference/make_optim_reference.py (which writes optim_fixtures.json) and
with `agrad` by tests/engine/test_optim_reference.py, which compares the two."""
from __future__ import annotations

import numpy as np

STEPS = 6

# name -> (optimizer class name, keyword arguments); one parameter group unless "groups"
OPTIMIZERS = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd_dampening_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.1}),
    "sgd_nesterov_maximize": ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    "adam": ("Adam", {"lr": 0.01}),
    "adam_amsgrad_wd": ("Adam", {"lr": 0.02, "betas": (0.8, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    "adam_maximize": ("Adam", {"lr": 0.01, "eps": 1e-6, "maximize": True}),
    "adamw": ("AdamW", {"lr": 0.01}),
    "adamw_amsgrad": ("AdamW", {"lr": 0.02, "weight_decay": 0.2, "amsgrad": True}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop_centered_momentum_wd": ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True,
                                                 "weight_decay": 0.05}),
    "rmsprop_maximize": ("RMSprop", {"lr": 0.005, "momentum": 0.9, "maximize": True}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad_decay_wd": ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1,
                                     "initial_accumulator_value": 0.2}),
    "adagrad_maximize": ("Adagrad", {"lr": 0.05, "maximize": True}),
    "sgd_groups": ("SGD", {"lr": 0.1, "momentum": 0.5, "groups": [{"lr": 0.2}, {"momentum": 0.0}]}),
    "adam_groups": ("Adam", {"lr": 0.01, "groups": [{"lr": 0.05, "amsgrad": True}, {"weight_decay": 0.3}]}),
}

# ReduceLROnPlateau's metric, one per step: improvements, stalls, a drop and a rise
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.91, 0.92, 0.8999, 0.9, 0.9, 0.9, 0.5, 0.6, 0.7, 0.8, 0.9]

# name -> (scheduler class name, keyword arguments, steps); kwargs may name the optimizer
# ("optimizer", SGD by default) and the metrics a ReduceLROnPlateau steps on ("metrics")
SCHEDULERS = {
    "step": ("StepLR", {"step_size": 3, "gamma": 0.5}, 12),
    "multistep": ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.5}, 12),
    "exponential": ("ExponentialLR", {"gamma": 0.9}, 12),
    "cosine": ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}, 23),
    "linear": ("LinearLR", {"start_factor": 0.25, "total_iters": 4}, 8),
    "linear_decay": ("LinearLR", {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 6}, 9),
    "lambda": ("LambdaLR", {"lr_lambda": "pow095"}, 8),
    "onecycle": ("OneCycleLR", {"max_lr": [0.5, 1.0], "total_steps": 12}, 12),
    "onecycle_three_phase_linear": ("OneCycleLR", {"max_lr": 0.4, "epochs": 2, "steps_per_epoch": 5,
                                                   "pct_start": 0.25, "anneal_strategy": "linear",
                                                   "three_phase": True, "div_factor": 10.0,
                                                   "final_div_factor": 100.0}, 10),
    "onecycle_adam_beta1": ("OneCycleLR", {"optimizer": "Adam", "max_lr": 0.01, "total_steps": 8,
                                           "pct_start": 0.5, "base_momentum": [0.8, 0.7]}, 8),
    "plateau": ("ReduceLROnPlateau", {"factor": 0.5, "patience": 2, "metrics": PLATEAU_METRICS}, 14),
    "plateau_max_abs_cooldown": ("ReduceLROnPlateau", {"mode": "max", "threshold_mode": "abs", "threshold": 0.05,
                                                       "factor": 0.3, "patience": 1, "cooldown": 2,
                                                       "min_lr": [0.02, 0.1], "metrics": PLATEAU_METRICS}, 14),
}

# name -> (clip function, max value); SGD steps with the gradients clipped first
CLIPS = {
    "clip_norm": ("clip_grad_norm_", {"max_norm": 0.5}),
    "clip_norm_inf": ("clip_grad_norm_", {"max_norm": 0.3, "norm_type": float("inf")}),
    "clip_norm_1": ("clip_grad_norm_", {"max_norm": 0.4, "norm_type": 1.0}),
    "clip_value": ("clip_grad_value_", {"clip_value": 0.05}),
}


def _data():
    rng = np.random.default_rng(1234)
    f32 = np.float32
    return {"W": rng.normal(size=(4, 3)).astype(f32), "b": rng.normal(size=(3,)).astype(f32),
            "x": rng.normal(size=(5, 4)).astype(f32), "y": rng.normal(size=(5, 3)).astype(f32)}


def _params(lib):
    d = _data()
    W = lib.tensor(d["W"].tolist(), dtype=lib.float32, requires_grad=True)
    b = lib.tensor(d["b"].tolist(), dtype=lib.float32, requires_grad=True)
    x = lib.tensor(d["x"].tolist(), dtype=lib.float32)
    y = lib.tensor(d["y"].tolist(), dtype=lib.float32)
    return W, b, x, y


def _loss(lib, W, b, x, y):
    return ((lib.tanh(lib.matmul(x, W) + b) - y) ** 2).mean() + (W * W).sum() * 0.01


def _values(t) -> list:
    return np.asarray(t.detach().numpy(), dtype=np.float64).tolist()


def run_optimizer(lib, name: str) -> dict:
    cls_name, kwargs = OPTIMIZERS[name]
    kwargs = dict(kwargs)
    groups = kwargs.pop("groups", None)
    W, b, x, y = _params(lib)
    params = [W, b] if groups is None else [dict(groups[0], params=[W]), dict(groups[1], params=[b])]
    opt = getattr(lib.optim, cls_name)(params, **kwargs)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = _loss(lib, W, b, x, y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return {"losses": losses, "W": _values(W), "b": _values(b)}


def run_clip(lib, name: str) -> dict:
    fn_name, kwargs = CLIPS[name]
    W, b, x, y = _params(lib)
    opt = lib.optim.SGD([W, b], lr=0.5)
    norms = []
    for _ in range(STEPS):
        opt.zero_grad()
        _loss(lib, W, b, x, y).backward()
        result = getattr(lib.nn.utils, fn_name)([W, b], **kwargs)
        if result is not None:
            norms.append(float(result.item()))
        opt.step()
    return {"norms": norms, "W": _values(W), "b": _values(b)}


def run_scheduler(lib, name: str) -> dict:
    """The lr of each group after every step; OneCycleLR's cycled momentum (or beta1) too."""
    cls_name, kwargs, steps = SCHEDULERS[name]
    kwargs = dict(kwargs)
    if kwargs.get("lr_lambda") == "pow095":
        kwargs["lr_lambda"] = lambda epoch: 0.95 ** epoch
    optimizer = kwargs.pop("optimizer", "SGD")
    metrics = kwargs.pop("metrics", None)
    W = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([1.0], requires_grad=True)
    opt = getattr(lib.optim, optimizer)([{"params": [W]}, {"params": [b], "lr": 0.3}], lr=0.1)
    sched = getattr(lib.optim.lr_scheduler, cls_name)(opt, **kwargs)

    def momentums():
        return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]

    lrs, moms = [list(sched.get_last_lr())], [momentums()]
    for i in range(steps):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        lrs.append(list(sched.get_last_lr()))
        moms.append(momentums())
    return {"lrs": lrs, "momentums": moms} if cls_name == "OneCycleLR" else {"lrs": lrs}
