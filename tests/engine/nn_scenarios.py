"""torch.nn scenarios written once for any torch-like library: run with `torch` by
tests/reference/make_nn_reference.py (which writes nn_fixtures.json) and with `agrad` by
tests/engine/test_nn_reference.py, which compares the two.

- STRUCTURES: a module's state_dict keys (in order), shapes and dtypes, its parameter,
  buffer and submodule names, and its repr.
- FORWARDS: a module loaded with torch's initial state runs on fixed inputs, in training
  and then in eval mode; its outputs and its state afterwards (BatchNorm's running
  statistics) are recorded.
- INITS: large tensors initialised by the modules' reset_parameters and by nn.init, with
  the bound or standard deviation torch's own formula gives; compared statistically.
- TRAIN: a few Adam steps of a small model from torch's initial state.
"""
from __future__ import annotations

import math

import numpy as np


def _custom(lib):
    """A user's Module: direct Parameter, None parameter, persistent and non-persistent
    buffers, a shared child, ModuleList, ModuleDict and a nested Sequential."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(3))
            self.register_parameter("unused", None)
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            shared = nn.Linear(3, 3)
            self.first = shared
            self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Tanh(), shared])
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Sequential(nn.LayerNorm(3), nn.Linear(3, 2))})

        def forward(self, x):
            x = x * self.scale
            for layer in self.layers:
                x = layer(x)
            return self.heads["a"](x) + self.heads["b"](x).sum(-1, keepdim=True)

    return Block()


# name -> builder(lib) -> module
STRUCTURES = {
    "linear": lambda lib: lib.nn.Linear(5, 3),
    "linear_nobias": lambda lib: lib.nn.Linear(4, 2, bias=False),
    "conv1d": lambda lib: lib.nn.Conv1d(2, 4, 3, stride=2, padding=1),
    "conv2d_groups": lambda lib: lib.nn.Conv2d(3, 6, (3, 2), padding=1, groups=3),
    "conv2d_reflect": lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect", bias=False),
    "conv2d_same": lambda lib: lib.nn.Conv2d(2, 2, 3, padding="same", dilation=2),
    "conv1d_circular": lambda lib: lib.nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular"),
    "conv2d_replicate_same": lambda lib: lib.nn.Conv2d(1, 2, (2, 3), padding="same", padding_mode="replicate"),
    "embedding": lambda lib: lib.nn.Embedding(7, 4, padding_idx=-2),
    "layernorm": lambda lib: lib.nn.LayerNorm([3, 4]),
    "layernorm_nobias": lambda lib: lib.nn.LayerNorm(4, bias=False),
    "batchnorm1d": lambda lib: lib.nn.BatchNorm1d(3),
    "batchnorm2d_cma": lambda lib: lib.nn.BatchNorm2d(2, momentum=None),
    "batchnorm1d_untracked": lambda lib: lib.nn.BatchNorm1d(3, affine=False, track_running_stats=False),
    "dropout": lambda lib: lib.nn.Dropout(0.3),
    "mlp": lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Dropout(0.1),
                                         lib.nn.Linear(8, 2)),
    "cnn": lambda lib: lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.GELU(),
                                         lib.nn.Flatten(), lib.nn.Linear(4 * 3 * 3, 5), lib.nn.LogSoftmax(dim=1)),
    "pooling": lambda lib: lib.nn.Sequential(lib.nn.MaxPool2d(2, stride=1, padding=1, ceil_mode=True),
                                             lib.nn.AvgPool2d((2, 3), count_include_pad=False, padding=1),
                                             lib.nn.AdaptiveAvgPool2d((2, 1))),
    "custom": _custom,
    "cross_entropy_weighted": lambda lib: lib.nn.CrossEntropyLoss(weight=lib.tensor([1.0, 2.0, 0.5]),
                                                                  label_smoothing=0.1),
    "bce_logits_pos_weight": lambda lib: lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([2.0, 0.5])),
    "activations": lambda lib: lib.nn.Sequential(
        lib.nn.ReLU(), lib.nn.ReLU(inplace=True), lib.nn.LeakyReLU(0.2), lib.nn.GELU(approximate="tanh"),
        lib.nn.SiLU(), lib.nn.ELU(alpha=0.5), lib.nn.Tanh(), lib.nn.Sigmoid(), lib.nn.Softplus(beta=2.0),
        lib.nn.Mish(), lib.nn.Softmax(dim=0), lib.nn.LogSoftmax(dim=1), lib.nn.Identity()),
    "activations_more": lambda lib: lib.nn.Sequential(
        lib.nn.Hardtanh(-0.5, 0.8), lib.nn.PReLU(3, init=0.1), lib.nn.ReLU6(), lib.nn.SELU(), lib.nn.CELU(0.7),
        lib.nn.Hardsigmoid(), lib.nn.Hardswish(), lib.nn.LogSigmoid(), lib.nn.Softsign(), lib.nn.Tanhshrink(),
        lib.nn.Softmin(dim=2), lib.nn.Softmax2d(), lib.nn.GLU(dim=-1)),
    "shrinks": lambda lib: lib.nn.Sequential(lib.nn.Threshold(0.1, -1.0), lib.nn.Hardshrink(0.3),
                                             lib.nn.Softshrink(0.2)),
    "instancenorm2d": lambda lib: lib.nn.InstanceNorm2d(3),
    "instancenorm2d_affine_tracked": lambda lib: lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                                        momentum=0.3),
    "losses": lambda lib: lib.nn.ModuleList([
        lib.nn.MSELoss(), lib.nn.L1Loss(reduction="sum"), lib.nn.NLLLoss(ignore_index=1),
        lib.nn.CrossEntropyLoss(), lib.nn.BCELoss(), lib.nn.SmoothL1Loss(beta=0.5),
        lib.nn.HuberLoss(delta=0.5), lib.nn.KLDivLoss(reduction="batchmean", log_target=True)]),
}


def _values(t) -> list:
    return np.asarray(t.detach().numpy(), dtype=np.float64).tolist()


def structure(lib, name: str) -> dict:
    module = STRUCTURES[name](lib)
    sd = module.state_dict()
    return {"keys": list(sd), "shapes": [list(v.shape) for v in sd.values()],
            "dtypes": [str(v.dtype).rsplit(".", 1)[-1] for v in sd.values()],
            "parameters": [n for n, _ in module.named_parameters()],
            "buffers": [n for n, _ in module.named_buffers()],
            "modules": [n for n, _ in module.named_modules()],
            "children": [type(m).__name__ for m in module.children()],
            "repr": repr(module)}


# name -> (structure name, input shapes (float), integer input (high, shape) or None)
FORWARDS = {
    "linear": ("linear", [(2, 5)]),
    "conv1d": ("conv1d", [(2, 2, 7)]),
    "conv2d_groups": ("conv2d_groups", [(2, 3, 5, 4)]),
    "conv2d_reflect": ("conv2d_reflect", [(1, 2, 4, 5)]),
    "conv2d_same": ("conv2d_same", [(1, 2, 6, 6)]),
    "conv1d_circular": ("conv1d_circular", [(2, 2, 5)]),
    "conv2d_replicate_same": ("conv2d_replicate_same", [(1, 1, 4, 5)]),
    "embedding": ("embedding", "indices"),
    "layernorm": ("layernorm", [(2, 3, 4)]),
    "layernorm_nobias": ("layernorm_nobias", [(3, 4)]),
    "batchnorm1d": ("batchnorm1d", [(6, 3)]),
    "batchnorm2d_cma": ("batchnorm2d_cma", [(3, 2, 2, 3)]),
    "batchnorm1d_untracked": ("batchnorm1d_untracked", [(4, 3, 2)]),
    "cnn": ("cnn", [(2, 1, 5, 5)]),
    "pooling": ("pooling", [(2, 3, 7, 6)]),
    "custom": ("custom", [(4, 3)]),
    "activations": ("activations", [(3, 4)]),
    "activations_more": ("activations_more", [(2, 3, 4, 4)]),
    "shrinks": ("shrinks", [(3, 4)]),
    "instancenorm2d": ("instancenorm2d", [(2, 3, 4, 5)]),
    "instancenorm2d_affine_tracked": ("instancenorm2d_affine_tracked", [(2, 3, 4, 5)]),
    "instancenorm2d_unbatched": ("instancenorm2d_affine_tracked", [(3, 4, 5)]),
}


def _inputs(lib, name: str, call: int) -> list:
    """A forward's inputs: float32 normals of the given shapes, "indices", or what a callable
    `spec(lib, rng)` makes (a family's own inputs: integer targets, masks, initial states)."""
    rng = np.random.default_rng([17, call, len(name)])
    spec = FORWARDS[name][1]
    if spec == "indices":
        return [lib.tensor(rng.integers(0, 7, size=(2, 5)).tolist(), dtype=lib.int64)]
    if callable(spec):
        return list(spec(lib, rng))
    return [lib.tensor(rng.normal(size=shape).astype(np.float32).tolist(), dtype=lib.float32) for shape in spec]


def _output_values(out):
    """A module's output as values: a tensor's nested list, a tuple's or list's (an RNN's `(output, h_n)`)
    as {"items": [...]}, None as None."""
    if out is None:
        return None
    if isinstance(out, (tuple, list)):
        return {"items": [_output_values(o) for o in out]}
    return _values(out)


def _float_outputs(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _float_outputs(o)]
    return [out] if out is not None and out.dtype.is_floating_point and out.requires_grad else []


def state_values(module) -> dict:
    return {k: _values(v) for k, v in module.state_dict().items()}


def load_state(lib, module, values: dict) -> None:
    """Load recorded values into a freshly built module, keeping each tensor's dtype."""
    sd = module.state_dict()
    module.load_state_dict({k: lib.tensor(values[k], dtype=sd[k].dtype) for k in sd})


def forward(lib, name: str, initial: dict | None) -> dict:
    """Train-mode output (twice: BatchNorm's statistics move), then eval-mode output, and the
    state at the end. `initial` is the state to start from (None: the module's own)."""
    module = STRUCTURES[FORWARDS[name][0]](lib)
    if initial is not None:
        load_state(lib, module, initial)
    out = {"initial": state_values(module)}
    outputs = []
    for call, training in enumerate((True, True, False)):
        module.train(training)
        outputs.append(_output_values(module(*_inputs(lib, name, call))))
    out["outputs"] = outputs
    out["final"] = state_values(module)
    # the gradients of the eval-mode call (the sum of its float outputs) w.r.t. the parameters and the
    # float inputs, by name ("input.<i>")
    module.zero_grad()
    inputs = [t.requires_grad_() if t.dtype.is_floating_point else t for t in _inputs(lib, name, 2)]
    floats = _float_outputs(module(*inputs))
    grads = {}
    if floats:
        try:
            sum(f.sum() for f in floats).backward()
        except RuntimeError as exc:         # a backward both libraries refuse (an in-place ReLU on a saved output)
            grads = {"raises": type(exc).__name__}
        else:
            grads = {n: _values(p.grad) for n, p in module.named_parameters() if p.grad is not None}
            grads.update({f"input.{i}": _values(t.grad) for i, t in enumerate(inputs) if t.grad is not None})
    out["grads"] = grads
    return out


def _loss_inputs(lib):
    rng = np.random.default_rng(5)
    f = lambda *shape: lib.tensor(rng.normal(size=shape).astype(np.float32).tolist())  # noqa: E731
    logits, target = f(4, 3), lib.tensor([0, 2, 1, 2])
    probs = lib.tensor(rng.uniform(0.05, 0.95, size=(4, 2)).astype(np.float32).tolist())
    labels = lib.tensor(rng.integers(0, 2, size=(4, 2)).astype(np.float32).tolist())
    return logits, target, probs, labels, f(4, 3), f(4, 3)


def losses(lib) -> dict:
    """Each loss module of STRUCTURES' `losses`, `cross_entropy_weighted` and
    `bce_logits_pos_weight` on fixed inputs."""
    logits, target, probs, labels, a, b = _loss_inputs(lib)
    log_probs = lib.log_softmax(logits, 1)
    mse, l1, nll, ce, bce, smooth, huber, kl = STRUCTURES["losses"](lib)
    return {"mse": _values(mse(a, b)), "l1": _values(l1(a, b)), "nll": _values(nll(log_probs, target)),
            "ce": _values(ce(logits, target)), "bce": _values(bce(probs, labels)),
            "smooth_l1": _values(smooth(a, b)), "huber": _values(huber(a, b)),
            "kl": _values(kl(log_probs, lib.log_softmax(b, 1))),
            "ce_weighted": _values(STRUCTURES["cross_entropy_weighted"](lib)(logits, target)),
            "bce_logits": _values(STRUCTURES["bce_logits_pos_weight"](lib)(a[:, :2], labels))}


# name -> (builder, parameter name or None for a bare tensor, init call or None for reset_parameters)
INITS = {
    "linear_weight": (lambda lib: lib.nn.Linear(300, 400), "weight"),
    "linear_bias": (lambda lib: lib.nn.Linear(300, 20000), "bias"),
    "conv2d_weight": (lambda lib: lib.nn.Conv2d(8, 64, (5, 3), groups=2), "weight"),
    "conv2d_bias": (lambda lib: lib.nn.Conv2d(8, 20000, (5, 3), groups=2), "bias"),
    "conv1d_weight": (lambda lib: lib.nn.Conv1d(6, 200, 7), "weight"),
    "embedding_weight": (lambda lib: lib.nn.Embedding(1000, 64), "weight"),
    "xavier_uniform_tanh": ("xavier_uniform_", {"gain": "tanh"}),
    "xavier_normal": ("xavier_normal_", {}),
    "kaiming_uniform_relu_fan_out": ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    "kaiming_normal_leaky": ("kaiming_normal_", {"a": 0.1}),
    "trunc_normal": ("trunc_normal_", {"std": 0.5, "a": -0.6, "b": 0.9}),
    "trunc_normal_tail": ("trunc_normal_", {"mean": 0.0, "std": 1.0, "a": 2.0, "b": 3.0}),
    "normal": ("normal_", {"mean": 1.0, "std": 2.0}),
    "uniform": ("uniform_", {"a": -3.0, "b": 1.0}),
}
INIT_SHAPE = (400, 30, 2, 5)      # fan_in 300, fan_out 4000 for the nn.init calls


def init_sample(lib, name: str) -> np.ndarray:
    how, what = INITS[name]
    if callable(how):
        return np.asarray(getattr(how(lib), what).detach().numpy(), dtype=np.float64)
    kwargs = dict(what)
    if "gain" in kwargs:
        kwargs["gain"] = lib.nn.init.calculate_gain(kwargs["gain"])
    t = lib.empty(INIT_SHAPE)
    getattr(lib.nn.init, how)(t, **kwargs)
    return np.asarray(t.numpy(), dtype=np.float64)


def init_stats(sample: np.ndarray) -> dict:
    return {"n": int(sample.size), "min": float(sample.min()), "max": float(sample.max()),
            "mean": float(sample.mean()), "std": float(sample.std())}


# (nonlinearity, param) for calculate_gain; shapes for the fan computation
GAINS = [["linear", None], ["conv2d", None], ["sigmoid", None], ["tanh", None], ["relu", None],
         ["leaky_relu", None], ["leaky_relu", 0.2], ["leaky_relu", math.sqrt(5)], ["selu", None]]
FAN_SHAPES = [[4, 3], [6, 2, 5], [8, 4, 3, 2], [2, 3, 1, 1, 4]]


def gains_and_fans(lib) -> dict:
    init = lib.nn.init
    return {"gains": [init.calculate_gain(n, p) for n, p in GAINS],
            "fans": [list(init._calculate_fan_in_and_fan_out(lib.empty(s))) for s in FAN_SHAPES]}


# load_state_dict's errors: (structure, edit of its own state dict)
LOAD_ERRORS = {
    "missing_unexpected_size": ("mlp", {"drop": ["0.bias"], "add": {"2.weight": [2, 2], "extra": [1]},
                                        "resize": {"3.weight": [3, 8]}}),
    "nested_unexpected": ("custom", {"drop": ["heads.b.0.weight"], "add": {"layers.5.weight": [1],
                                                                          "heads.c.bias": [1]}}),
}


def load_error(lib, name: str) -> dict:
    structure_name, edit = LOAD_ERRORS[name]
    module = STRUCTURES[structure_name](lib)
    sd = dict(module.state_dict())
    for key in edit.get("drop", []):
        del sd[key]
    for key, shape in {**edit.get("add", {}), **edit.get("resize", {})}.items():
        sd[key] = lib.zeros(shape)
    try:
        module.load_state_dict(sd)
        strict_message = None
    except RuntimeError as exc:
        strict_message = str(exc)
    result = module.load_state_dict(sd, strict=False) if not edit.get("resize") else None
    return {"strict": strict_message,
            "not_strict": None if result is None else [list(result.missing_keys), list(result.unexpected_keys)]}


TRAIN_STEPS = 5


def train(lib, initial: dict | None) -> dict:
    """Adam on a small classifier with dropout off (eval-free, deterministic)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 3))
    if initial is not None:
        load_state(lib, model, initial)
    start = state_values(model)
    rng = np.random.default_rng(11)
    x = lib.tensor(rng.normal(size=(10, 4)).astype(np.float32).tolist())
    y = lib.tensor(rng.integers(0, 3, size=10).tolist())
    opt = lib.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    losses_ = []
    for _ in range(TRAIN_STEPS):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses_.append(float(loss.item()))
    return {"initial": start, "losses": losses_, "final": state_values(model)}


# ---- families kept in files of their own (each defines STRUCTURES and FORWARDS as above) ----------------

def _merge_families() -> None:
    import importlib
    for family in FAMILIES:
        module = importlib.import_module(family)
        for table, own in ((STRUCTURES, module.STRUCTURES), (FORWARDS, module.FORWARDS)):
            clash = set(table) & set(own)
            if clash:
                raise ValueError(f"{family}: scenario names taken already: {sorted(clash)}")
            table.update(own)


FAMILIES = ["nn_rnn_scenarios", "nn_transformer_scenarios", "nn_layers_scenarios", "nn_losses_scenarios",
            "nn_lazy_scenarios"]
_merge_families()
