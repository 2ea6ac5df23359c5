"""Optimizer and scheduler scenarios written once for any torch-like library: run with
`torch` by tests/reference/make_optim_reference.py (which writes optim_fixtures.json) and
with `agrad` by tests/engine/test_optim_reference.py, which compares the two."""
from __future__ import annotations

import copy

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
    "adamax": ("Adamax", {"lr": 0.02}),
    "adamax_wd_maximize": ("Adamax", {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1,
                                      "maximize": True}),
    "adamax_groups": ("Adamax", {"lr": 0.01, "groups": [{"lr": 0.05}, {"weight_decay": 0.2, "betas": (0.5, 0.9)}]}),
    "nadam": ("NAdam", {"lr": 0.01}),
    "nadam_decoupled": ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
                                  "momentum_decay": 0.01}),
    "nadam_wd_maximize": ("NAdam", {"lr": 0.02, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    "nadam_groups": ("NAdam", {"lr": 0.01, "groups": [{"lr": 0.03, "momentum_decay": 0.1},
                                                      {"weight_decay": 0.2, "decoupled_weight_decay": True}]}),
    # beta2 = 0.99: rho_t passes 5 at step 7, so steps 1-6 are plain and 7-10 rectified
    "radam": ("RAdam", {"lr": 0.01, "betas": (0.9, 0.99), "steps": 10}),
    "radam_decoupled": ("RAdam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1,
                                  "decoupled_weight_decay": True, "steps": 10}),
    "radam_wd_maximize": ("RAdam", {"lr": 0.02, "betas": (0.9, 0.98), "weight_decay": 0.1, "maximize": True,
                                    "steps": 9}),
    "radam_groups": ("RAdam", {"lr": 0.01, "betas": (0.9, 0.99), "steps": 9,
                               "groups": [{"lr": 0.05}, {"weight_decay": 0.2, "betas": (0.9, 0.95)}]}),
    "adadelta": ("Adadelta", {}),
    "adadelta_wd_maximize": ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
    "adadelta_groups": ("Adadelta", {"groups": [{"lr": 2.0}, {"rho": 0.5, "weight_decay": 0.1}]}),
    "rprop": ("Rprop", {"lr": 0.05, "steps": 10}),
    "rprop_etas_maximize": ("Rprop", {"lr": 0.02, "etas": (0.3, 1.7), "step_sizes": (1e-3, 0.05),
                                      "maximize": True, "steps": 10}),
    "rprop_groups": ("Rprop", {"lr": 0.05, "steps": 10, "groups": [{"lr": 0.2}, {"etas": (0.4, 1.1)}]}),
    "asgd": ("ASGD", {"lr": 0.05}),
    # t0 = 2: from step 5 on mu != 1 and `ax` averages rather than copies
    "asgd_t0_wd": ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.5, "t0": 2, "weight_decay": 0.1, "steps": 8}),
    "asgd_groups_maximize": ("ASGD", {"lr": 0.05, "t0": 1, "maximize": True,
                                      "groups": [{"lr": 0.1}, {"lambd": 0.1, "alpha": 1.0}]}),
    # float64: LBFGS's iterations turn float32's last-bit gradient differences (NumPy's
    # matmul and tanh against torch's) into other iterates; in float64 the runs agree to 1e-9
    "lbfgs": ("LBFGS", {"lr": 1, "max_iter": 5, "steps": 4, "dtype": "float64"}),
    "lbfgs_strong_wolfe": ("LBFGS", {"lr": 1, "max_iter": 10, "line_search_fn": "strong_wolfe", "steps": 4,
                                     "dtype": "float64"}),
    "lbfgs_history": ("LBFGS", {"lr": 0.5, "max_iter": 6, "history_size": 2, "tolerance_change": 1e-7,
                                "steps": 4, "dtype": "float64"}),
    "adafactor": ("Adafactor", {"lr": 0.01}),
    "adafactor_options": ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-6, 1e-3), "d": 1.5,
                                        "weight_decay": 0.1, "maximize": True}),
    "adafactor_groups": ("Adafactor", {"lr": 0.02, "groups": [{"lr": 0.5, "d": 1.0}, {"weight_decay": 0.2}]}),
    # Muon takes 2-D parameters only ("matrix_only": W alone); W is 4x3, so tall: transposed for Newton-Schulz.
    # float64: the update is bfloat16 (Muon's own rounding), the rest of the step float64's
    "muon": ("Muon", {"lr": 0.02, "matrix_only": True, "dtype": "float64"}),
    "muon_plain_momentum_rms": ("Muon", {"lr": 0.01, "momentum": 0.9, "nesterov": False, "weight_decay": 0.05,
                                         "adjust_lr_fn": "match_rms_adamw", "matrix_only": True,
                                         "dtype": "float64"}),
    "muon_coefficients_wide": ("Muon", {"lr": 0.03, "ns_coefficients": (2.0, -1.5, 0.5), "ns_steps": 3,
                                        "eps": 1e-5, "weight_decay": 0.0, "adjust_lr_fn": "original",
                                        "matrix_only": True, "wide": True, "dtype": "float64"}),
}
# the step after which run_optimizer(..., resume=True) saves the optimizer and goes on with a new one
RESUME_AT = 3

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
    "multiplicative": ("MultiplicativeLR", {"lr_lambda": "alternating"}, 10),
    "constant": ("ConstantLR", {"factor": 0.5, "total_iters": 4}, 8),
    "constant_default": ("ConstantLR", {}, 7),
    "polynomial": ("PolynomialLR", {"total_iters": 6, "power": 2.0}, 9),
    "polynomial_linear": ("PolynomialLR", {"total_iters": 4}, 6),
    "cosine_restarts": ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.01}, 20),
    "cosine_restarts_flat": ("CosineAnnealingWarmRestarts", {"T_0": 4}, 10),
    "cyclic": ("CyclicLR", {"base_lr": 0.01, "max_lr": [0.1, 0.2], "step_size_up": 3}, 14),
    "cyclic_triangular2_no_momentum": ("CyclicLR", {"base_lr": [0.01, 0.02], "max_lr": 0.1, "step_size_up": 2,
                                                    "step_size_down": 4, "mode": "triangular2",
                                                    "cycle_momentum": False}, 16),
    "cyclic_exp_range_adam_beta1": ("CyclicLR", {"optimizer": "Adam", "base_lr": 0.001, "max_lr": 0.01,
                                                 "step_size_up": 2, "mode": "exp_range", "gamma": 0.9,
                                                 "base_momentum": 0.7, "max_momentum": [0.95, 0.9]}, 12),
    "sequential": ("SequentialLR", {"schedulers": [("LinearLR", {"start_factor": 0.25, "total_iters": 3}),
                                                   ("ExponentialLR", {"gamma": 0.8})], "milestones": [3]}, 10),
    "sequential_three": ("SequentialLR", {"schedulers": [("ConstantLR", {"factor": 0.5, "total_iters": 2}),
                                                         ("CosineAnnealingLR", {"T_max": 4}),
                                                         ("StepLR", {"step_size": 2, "gamma": 0.5})],
                                          "milestones": [2, 6]}, 12),
    "chained": ("ChainedScheduler", {"schedulers": [("ConstantLR", {"factor": 0.5, "total_iters": 3}),
                                                    ("ExponentialLR", {"gamma": 0.9})]}, 8),
    # swa_utils.SWALR: annealed to swa_lr, then held
    "swalr": ("SWALR", {"swa_lr": 0.05, "anneal_epochs": 4}, 8),
    "swalr_linear_per_group": ("SWALR", {"swa_lr": [0.01, 0.5], "anneal_epochs": 3, "anneal_strategy": "linear"},
                               6),
    "swalr_no_annealing": ("SWALR", {"swa_lr": 0.02, "anneal_epochs": 0}, 4),
    "swalr_after_exponential": ("SequentialLR", {"schedulers": [("ExponentialLR", {"gamma": 0.5}),
                                                                ("SWALR", {"swa_lr": 0.2, "anneal_epochs": 3})],
                                                 "milestones": [3]}, 9),
}
# lr_lambda by name (functions are not data)
LAMBDAS = {"pow095": lambda epoch: 0.95 ** epoch, "alternating": lambda epoch: 0.9 if epoch % 2 else 0.95}

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


def _scheduler_class(lib, name: str):
    """lr_scheduler's classes, and swa_utils' SWALR."""
    return getattr(lib.optim.swa_utils if name == "SWALR" else lib.optim.lr_scheduler, name)


def _params(lib, dtype: str = "float32", wide: bool = False):
    """W (4x3; `wide`: stored transposed, 3x4, for the loss to use as W.T), b, x, y."""
    d = _data()
    dtype = getattr(lib, dtype)
    W = lib.tensor((d["W"].T if wide else d["W"]).tolist(), dtype=dtype, requires_grad=True)
    b = lib.tensor(d["b"].tolist(), dtype=dtype, requires_grad=True)
    x = lib.tensor(d["x"].tolist(), dtype=dtype)
    y = lib.tensor(d["y"].tolist(), dtype=dtype)
    return W, b, x, y


def _loss(lib, W, b, x, y, wide: bool = False):
    W = W.T if wide else W
    return ((lib.tanh(lib.matmul(x, W) + b) - y) ** 2).mean() + (W * W).sum() * 0.01


def _values(t) -> list:
    return np.asarray(t.detach().numpy(), dtype=np.float64).tolist()


def run_optimizer(lib, name: str, resume: bool = False) -> dict:
    """The losses and parameters after each scenario's steps, and the keys of the first
    parameter's state; `resume`: the optimizer's state_dict after step RESUME_AT, copied,
    loaded into a new optimizer that takes the remaining steps (the same values are due)."""
    cls_name, kwargs = OPTIMIZERS[name]
    kwargs = dict(kwargs)
    groups = kwargs.pop("groups", None)
    steps = kwargs.pop("steps", STEPS)
    matrix_only, wide = kwargs.pop("matrix_only", False), kwargs.pop("wide", False)
    W, b, x, y = _params(lib, kwargs.pop("dtype", "float32"), wide)

    def make():
        params = [W, b] if groups is None else [dict(groups[0], params=[W]), dict(groups[1], params=[b])]
        if matrix_only:
            params = [W]
        return getattr(lib.optim, cls_name)(params, **kwargs)
    opt = make()
    losses = []

    def closure():                      # LBFGS evaluates the loss as often as it needs
        opt.zero_grad()
        loss = _loss(lib, W, b, x, y)
        loss.backward()
        return loss
    for i in range(steps):
        if resume and i == RESUME_AT:
            saved = copy.deepcopy(opt.state_dict())
            opt = make()
            opt.load_state_dict(saved)
        if cls_name == "LBFGS":
            losses.append(float(opt.step(closure).item()))
            continue
        opt.zero_grad()
        loss = _loss(lib, W, b, x, y, wide)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    state_keys = sorted(opt.state_dict()["state"].get(0, {}))
    return {"losses": losses, "W": _values(W.T if wide else W), "b": _values(b), "state_keys": state_keys}


# float64 scenarios whose trajectories agree with torch's to 1e-13: Muon's bfloat16 update is
# rounded as torch's (only a float32 accumulation tie could tell them apart, and none occurs here)
FLOAT64_EXACT = {"muon", "muon_plain_momentum_rms", "muon_coefficients_wide"}

# Scenarios whose parameters equal torch's bit for bit when both take the same gradients
# (run_fixed_gradients): each op is one torch's CPU kernel rounds alike. The others differ in
# the last bits where torch's AVX2 kernels fuse (lerp, addcmul and add(alpha=) are FMAs),
# round sqrt otherwise (Sleef), or reduce in another order (norms): within float32 rounding.
BIT_EXACT = {"sgd", "adam", "adam_amsgrad_wd", "adam_maximize", "adamw", "adamw_amsgrad", "adam_groups", "adamax",
             "adamax_groups", "nadam_decoupled", "nadam_wd_maximize", "radam", "adadelta", "adadelta_wd_maximize",
             "adadelta_groups", "rprop", "rprop_etas_maximize", "rprop_groups"}


def run_fixed_gradients(lib, name: str) -> dict:
    """The parameters after each scenario's steps on gradients drawn once (not computed by
    the library): what is left to compare is the optimizer's own arithmetic."""
    cls_name, kwargs = OPTIMIZERS[name]
    kwargs = dict(kwargs)
    groups, steps = kwargs.pop("groups", None), kwargs.pop("steps", STEPS)
    matrix_only, wide = kwargs.pop("matrix_only", False), kwargs.pop("wide", False)
    dtype = kwargs.pop("dtype", "float32")
    W, b, _, _ = _params(lib, dtype, wide)
    params = [W, b] if groups is None else [dict(groups[0], params=[W]), dict(groups[1], params=[b])]
    opt = getattr(lib.optim, cls_name)([W] if matrix_only else params, **kwargs)
    rng = np.random.default_rng(7)
    for _ in range(steps):
        W.grad = lib.tensor(rng.normal(size=tuple(W.shape)).astype(np.float32).tolist(), dtype=getattr(lib, dtype))
        b.grad = lib.tensor(rng.normal(size=(3,)).astype(np.float32).tolist(), dtype=getattr(lib, dtype))
        opt.step()
    return {"W": _values(W.T if wide else W), "b": _values(b)}


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


def run_scheduler(lib, name: str, resume: bool = False) -> dict:
    """The lr of each group after every step; OneCycleLR's and CyclicLR's cycled momentum
    (or beta1) too. `resume`: after step RESUME_AT the optimizer's and the scheduler's
    state_dicts, copied, are loaded into new ones made as the first (the same lrs are due)."""
    cls_name, kwargs, steps = SCHEDULERS[name]
    kwargs = dict(kwargs)
    if "lr_lambda" in kwargs:
        kwargs["lr_lambda"] = LAMBDAS[kwargs["lr_lambda"]]
    optimizer = kwargs.pop("optimizer", "SGD")
    metrics = kwargs.pop("metrics", None)
    inner = kwargs.pop("schedulers", None)
    W = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([1.0], requires_grad=True)
    schedulers = lib.optim.lr_scheduler

    def make():
        opt = getattr(lib.optim, optimizer)([{"params": [W]}, {"params": [b], "lr": 0.3}], lr=0.1)
        if inner is None:
            return opt, _scheduler_class(lib, cls_name)(opt, **kwargs)
        made = [_scheduler_class(lib, inner_name)(opt, **inner_kwargs) for inner_name, inner_kwargs in inner]
        if cls_name == "ChainedScheduler":
            return opt, schedulers.ChainedScheduler(made)
        return opt, getattr(schedulers, cls_name)(opt, made, **kwargs)
    opt, sched = make()

    def momentums():
        return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]

    lrs, moms = [list(sched.get_last_lr())], [momentums()]
    for i in range(steps):
        if resume and i == RESUME_AT:
            saved = copy.deepcopy((opt.state_dict(), sched.state_dict()))
            opt, sched = make()
            opt.load_state_dict(saved[0])
            sched.load_state_dict(saved[1])
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        lrs.append(list(sched.get_last_lr()))
        moms.append(momentums())
    cycles_momentum = cls_name == "OneCycleLR" or (cls_name == "CyclicLR" and kwargs.get("cycle_momentum", True))
    return {"lrs": lrs, "momentums": moms} if cycles_momentum else {"lrs": lrs}


# name -> (optimizer class name, keyword arguments) that its constructor refuses, or
# (scheduler class name, its keyword arguments, the SGD's) for a scheduler's
ERRORS = {
    "adamax_lr": ("Adamax", {"lr": -0.1}),
    "adamax_eps": ("Adamax", {"eps": -1e-8}),
    "adamax_beta0": ("Adamax", {"betas": (1.0, 0.9)}),
    "adamax_wd": ("Adamax", {"weight_decay": -0.5}),
    "nadam_beta1": ("NAdam", {"betas": (0.9, 1.5)}),
    "nadam_momentum_decay": ("NAdam", {"momentum_decay": -0.1}),
    "radam_beta0": ("RAdam", {"betas": (-0.1, 0.9)}),
    "radam_wd": ("RAdam", {"weight_decay": -1}),
    "adadelta_rho": ("Adadelta", {"rho": 1.5}),
    "adadelta_eps": ("Adadelta", {"eps": -1.0}),
    "adadelta_lr": ("Adadelta", {"lr": -1.0}),
    "rprop_etas": ("Rprop", {"etas": (0.5, 0.9)}),
    "rprop_etas_low": ("Rprop", {"etas": (0.0, 1.2)}),
    "asgd_lr": ("ASGD", {"lr": -0.01}),
    "asgd_wd": ("ASGD", {"weight_decay": -0.01}),
    "lbfgs_lr": ("LBFGS", {"lr": -1.0}),
    "lbfgs_groups": ("LBFGS", {"groups": True}),
    "lbfgs_line_search": ("LBFGS", {"line_search_fn": "armijo", "step": True}),
    "adafactor_lr": ("Adafactor", {"lr": -0.1}),
    "adafactor_beta2_decay": ("Adafactor", {"beta2_decay": 0.5}),
    "adafactor_eps1": ("Adafactor", {"eps": (-1.0, 1e-3)}),
    "adafactor_eps2": ("Adafactor", {"eps": (None, -1e-3)}),
    "adafactor_d": ("Adafactor", {"d": 0.5}),
    "adafactor_wd": ("Adafactor", {"weight_decay": -0.1}),
    "constant_factor": ("ConstantLR", {"factor": 1.5}, {}),
    "multiplicative_count": ("MultiplicativeLR", {"lr_lambda": ["alternating"]}, {}),
    "multiplicative_callable": ("MultiplicativeLR", {"lr_lambda": [0.5, 0.5]}, {}),
    "cyclic_mode": ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "mode": "square"}, {}),
    "cyclic_no_momentum": ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1}, {"optimizer": "Adagrad"}),
    "cyclic_max_lr_count": ("CyclicLR", {"base_lr": 0.01, "max_lr": [0.1, 0.2, 0.3]}, {}),
    "restarts_t0": ("CosineAnnealingWarmRestarts", {"T_0": 0}, {}),
    "restarts_t_mult": ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 0}, {}),
    "restarts_eta_min": ("CosineAnnealingWarmRestarts", {"T_0": 2, "eta_min": "0"}, {}),
    "sequential_empty": ("SequentialLR", {"schedulers": [], "milestones": []}, {}),
    "sequential_milestones": ("SequentialLR", {"schedulers": [("ConstantLR", {})], "milestones": [2]}, {}),
    "sequential_plateau": ("SequentialLR", {"schedulers": [("ReduceLROnPlateau", {})], "milestones": []}, {}),
    "chained_empty": ("ChainedScheduler", {"schedulers": []}, {}),
    "swalr_strategy": ("SWALR", {"swa_lr": 0.1, "anneal_strategy": "exp"}, {}),
    "swalr_epochs": ("SWALR", {"swa_lr": 0.1, "anneal_epochs": -1}, {}),
    "swalr_epochs_float": ("SWALR", {"swa_lr": 0.1, "anneal_epochs": 2.5}, {}),
    "swalr_lrs_count": ("SWALR", {"swa_lr": [0.1, 0.2, 0.3]}, {}),
    "muon_vector": ("Muon", {}),                    # b is 1-D
    "muon_lr": ("Muon", {"lr": -0.1, "matrix_only": True}),
    "muon_momentum": ("Muon", {"momentum": -0.5, "matrix_only": True}),
    "muon_wd": ("Muon", {"weight_decay": -0.1, "matrix_only": True}),
    "muon_adjust_lr_fn": ("Muon", {"adjust_lr_fn": "spectral", "matrix_only": True}),
    "muon_ns_steps": ("Muon", {"ns_steps": 100, "matrix_only": True, "step": True}),
    "muon_coefficients": ("Muon", {"ns_coefficients": (1.0, 2.0), "matrix_only": True, "step": True}),
}


def run_error(lib, name: str) -> list:
    """[the exception's class name, its message] of a refused construction (or LBFGS step)."""
    entry = ERRORS[name]
    kwargs = dict(entry[1])
    W, b, x, y = _params(lib)
    try:
        if len(entry) == 2:
            groups, step = kwargs.pop("groups", False), kwargs.pop("step", False)
            params = [W] if kwargs.pop("matrix_only", False) else [W, b]
            opt = getattr(lib.optim, entry[0])([{"params": [W]}, {"params": [b]}] if groups else params, **kwargs)
            if step:
                def closure():
                    loss = _loss(lib, W, b, x, y)
                    loss.backward()
                    return loss
                opt.step(closure)
        else:
            optimizer = entry[2].get("optimizer", "SGD")
            opt = getattr(lib.optim, optimizer)([{"params": [W]}, {"params": [b], "lr": 0.3}], lr=0.1)
            schedulers = lib.optim.lr_scheduler
            if "lr_lambda" in kwargs:
                kwargs["lr_lambda"] = [LAMBDAS.get(f, f) for f in kwargs["lr_lambda"]]
            if "schedulers" in kwargs:
                kwargs["schedulers"] = [_scheduler_class(lib, n)(opt, **k) for n, k in kwargs["schedulers"]]
                if entry[0] == "ChainedScheduler":
                    schedulers.ChainedScheduler(**kwargs)
                    return ["no error", ""]
            _scheduler_class(lib, entry[0])(opt, **kwargs)
    except Exception as exc:   # noqa: BLE001 - the error is the result
        # the library's name in its own reprs (torch.Size, agrad.Size) is not the message's
        return [type(exc).__name__, str(exc).replace("torch.", "LIB.").replace("agrad.", "LIB.")]
    return ["no error", ""]


# swa_utils.AveragedModel over a small BatchNorm network trained with SGD (float64): name ->
# keyword arguments; "avg_fn"/"multi_avg_fn" name a maker and its arguments. After the steps,
# update_bn over batches given as tensors and as (input, target) pairs.
SWA = {
    "swa": {},
    "swa_buffers": {"use_buffers": True},
    "swa_avg_fn": {"avg_fn": ("get_swa_avg_fn",)},
    "swa_multi_avg_fn": {"multi_avg_fn": ("get_swa_multi_avg_fn",)},
    "ema_avg_fn": {"avg_fn": ("get_ema_avg_fn", 0.8)},
    "ema_multi_avg_fn_buffers": {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9), "use_buffers": True},
    "ema_default_decay": {"multi_avg_fn": ("get_ema_multi_avg_fn",)},
}
SWA_STEPS = 5
# refusals of swa_utils' makers and AveragedModel
SWA_ERRORS = {
    "ema_decay_high": ("get_ema_avg_fn", 1.5),
    "ema_multi_decay_negative": ("get_ema_multi_avg_fn", -0.1),
    "averaged_model_both_fns": ("AveragedModel",),
}


def _swa_network(lib):
    rng = np.random.default_rng(99)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=0.3), nn.ReLU(), nn.Linear(4, 2)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)).tolist(), dtype=lib.float64))
    batches = [(lib.tensor(rng.normal(size=(6, 3)).tolist(), dtype=lib.float64),
                lib.tensor(rng.normal(size=(6, 2)).tolist(), dtype=lib.float64)) for _ in range(SWA_STEPS)]
    return model, batches


def _state_values(module) -> dict:
    return {k: np.asarray(v.detach().numpy(), dtype=np.float64).tolist() for k, v in module.state_dict().items()}


def run_swa(lib, name: str) -> dict:
    """The averaged model's state after each update_parameters, then after update_bn, and its
    output in eval mode on the first batch's input."""
    swa_utils = lib.optim.swa_utils
    kwargs = dict(SWA[name])
    for key in ("avg_fn", "multi_avg_fn"):
        if key in kwargs:
            maker, *args = kwargs[key]
            kwargs[key] = getattr(swa_utils, maker)(*args)
    model, batches = _swa_network(lib)
    averaged = swa_utils.AveragedModel(model, **kwargs)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    states = []
    for x, y in batches:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
        states.append(_state_values(averaged))
    averaged.eval()
    swa_utils.update_bn([batches[0][0], batches[1], list(batches[2])], averaged)
    out = averaged(batches[3][0])
    return {"states": states, "after_update_bn": _state_values(averaged), "training": averaged.training,
            "output": np.asarray(out.detach().numpy(), dtype=np.float64).tolist()}


def run_swa_error(lib, name: str) -> list:
    maker, *args = SWA_ERRORS[name]
    swa_utils = lib.optim.swa_utils
    try:
        if maker == "AveragedModel":
            swa_utils.AveragedModel(lib.nn.Linear(2, 2), avg_fn=swa_utils.get_swa_avg_fn(),
                                    multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
        else:
            getattr(swa_utils, maker)(*args)
    except Exception as exc:   # noqa: BLE001 - the error is the result
        return [type(exc).__name__, str(exc)]
    return ["no error", ""]
