"""torch.nn.utils and torch.nn.init scenarios written once for any torch-like library: run with
`torch` by tests/reference/make_nn_utils_reference.py (which writes nn_utils_fixtures.json) and
with `agrad` by tests/engine/test_nn_utils.py, which compares the two.

Each scenario is `fn(lib, initial) -> {"initial": ..., <results>}`: it builds its modules, and
when `initial` (torch's recorded state) is given, loads it first — so agrad runs from torch's
weights and, for spectral_norm, torch's power-iteration vectors u and v (drawn at random at
registration). Results are nested lists of float64 values, key lists, or messages."""
from __future__ import annotations

import warnings

import numpy as np


def _values(t) -> list:
    return np.asarray(t.detach().numpy(), dtype=np.float64).tolist()


def _state(module) -> dict:
    return {k: _values(v) for k, v in module.state_dict().items()}


def _load(lib, module, initial) -> dict:
    """Load torch's recorded state (when given) into module; return the state it runs from."""
    if initial is not None:
        sd = module.state_dict()
        module.load_state_dict({k: lib.tensor(initial[k], dtype=sd[k].dtype) for k in sd})
    return _state(module)


def _input(lib, seed, *shape):
    rng = np.random.default_rng([seed, *shape])
    return lib.tensor(rng.normal(size=shape).astype(np.float32).tolist(), dtype=lib.float32)


def _grads(module) -> dict:
    return {n: _values(p.grad) for n, p in module.named_parameters() if p.grad is not None}


def _run(lib, module, x, calls=(True, True, False)) -> dict:
    """Outputs of calls in training (True) or eval mode; the gradients of the last call's sum."""
    outputs = []
    for training in calls:
        module.train(training)
        module.zero_grad()
        out = module(x)
        outputs.append(_values(out))
    out.sum().backward()
    return {"outputs": outputs, "grads": _grads(module)}


def _structure(module) -> dict:
    return {"keys": list(module.state_dict()), "parameters": [n for n, _ in module.named_parameters()],
            "buffers": [n for n, _ in module.named_buffers()], "class": type(module).__name__}


# ---- parametrize ------------------------------------------------------------------------------------

def _parametrizations(lib):
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, X):
            return X.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, X):
            return X / 2.0

    class Sum(nn.Module):     # two originals: right_inverse returns a pair
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X * 0.25, X * 0.75

    return Symmetric, Scale, Sum


def parametrize_chain(lib, initial) -> dict:
    """Symmetric then Scale on a Linear's weight: keys, values, gradients, assignment through
    right_inverse, cached(), and removal both ways."""
    P = lib.nn.utils.parametrize
    Symmetric, Scale, _ = _parametrizations(lib)
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 3)
    start = _load(lib, m, initial)
    original = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    out = {"initial": start, "structure": _structure(m),
           "same_original": m.parametrizations.weight.original is original, "weight": _values(m.weight),
           "is_parametrized": [P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias")]}
    x = _input(lib, 1, 2, 3)
    out.update(_run(lib, m, x, calls=(True,)))
    with P.cached():
        out["cached_same"] = m.weight is m.weight
    out["uncached_same"] = m.weight is m.weight
    with lib.no_grad():
        m.weight = lib.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    out["assigned_original"] = _values(m.parametrizations.weight.original)
    out["assigned_weight"] = _values(m.weight)
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    out["removed_unparametrized"] = {"structure": _structure(m), "weight": _values(m.weight),
                                     "same_original": m.weight is original}
    return out


def parametrize_two_originals(lib, initial) -> dict:
    """A parametrization of two tensors (original0, original1); removal leaves its value."""
    P = lib.nn.utils.parametrize
    _, _, Sum = _parametrizations(lib)
    lib.manual_seed(0)
    m = lib.nn.Linear(4, 2)
    start = _load(lib, m, initial)
    P.register_parametrization(m, "weight", Sum())
    out = {"initial": start, "structure": _structure(m),
           "originals": [_values(m.parametrizations.weight.original0),
                         _values(m.parametrizations.weight.original1)]}
    out.update(_run(lib, m, _input(lib, 2, 3, 4), calls=(True,)))
    P.remove_parametrizations(m, "weight")
    out["removed"] = {"structure": _structure(m), "weight": _values(m.weight)}
    return out


def parametrize_buffer(lib, initial) -> dict:
    """A buffer parametrized: its original is a buffer too."""
    P = lib.nn.utils.parametrize
    _, Scale, _ = _parametrizations(lib)
    m = lib.nn.BatchNorm1d(3)
    start = _load(lib, m, initial)
    P.register_parametrization(m, "running_var", Scale())
    out = {"initial": start, "structure": _structure(m), "running_var": _values(m.running_var)}
    P.remove_parametrizations(m, "running_var")
    out["removed"] = {"structure": _structure(m), "running_var": _values(m.running_var)}
    return out


# ---- parametrizations --------------------------------------------------------------------------------

def _weight_norm_module(build, dim, x_shape):
    def scenario(lib, initial):
        lib.manual_seed(0)
        m = build(lib)
        start = _load(lib, m, initial)
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        out = {"initial": start, "structure": _structure(m), "state": _state(m)}
        out.update(_run(lib, m, _input(lib, 3, *x_shape), calls=(True,)))
        out["weight"] = _values(m.weight)
        return out
    return scenario


def _spectral_norm_module(build, x_shape, dim=None):
    def scenario(lib, initial):
        lib.manual_seed(0)
        m = build(lib)
        lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2, dim=dim)
        if initial is None:
            # u and v far from converged (registration ran 15 steps): each training call's steps show
            sn = m.parametrizations.weight[0]
            with lib.no_grad():
                for buf in (sn._u, sn._v):
                    buf.copy_(lib.tensor(np.cos(np.arange(buf.numel()) + 1.0).astype(np.float32).tolist()))
                    buf.div_(buf.norm())
        start = _load(lib, m, initial)
        out = {"initial": start, "structure": _structure(m)}
        out.update(_run(lib, m, _input(lib, 4, *x_shape), calls=(True, True, True, False)))
        out["state"] = _state(m)         # u and v after three training calls (the eval call keeps them)
        out["weight_eval"] = _values(m.weight)
        return out
    return scenario


def _orthogonal_module(shape, orthogonal_map, use_trivialization=True):
    def scenario(lib, initial):
        lib.manual_seed(0)
        m = lib.nn.Linear(shape[1], shape[0])
        if initial is not None:
            m.load_state_dict({k: lib.tensor(v) for k, v in initial["before"].items()})
        before = _state(m)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                                 use_trivialization=use_trivialization)
        # the state the registration made from the same weight; then torch's (a wide or tall
        # weight's base is completed with random columns)
        registered = _state(m)
        out = {"initial": {"before": before, "after": _load(lib, m, None if initial is None else initial["after"])},
               "registered": registered, "structure": _structure(m)}
        out.update(_run(lib, m, _input(lib, 5, 2, shape[1]), calls=(True,)))
        out["weight"] = _values(m.weight)
        return out
    return scenario


# ---- the hook API ------------------------------------------------------------------------------------

def old_weight_norm(lib, initial) -> dict:
    lib.manual_seed(0)
    m = lib.nn.Linear(5, 4)
    start = _load(lib, m, initial)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.nn.utils.weight_norm(m, dim=1)
    out = {"initial": start, "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
           "structure": _structure(m), "state": _state(m)}
    out.update(_run(lib, m, _input(lib, 6, 3, 5), calls=(True,)))
    lib.nn.utils.remove_weight_norm(m)
    out["removed"] = {"structure": _structure(m), "weight": _values(m.weight)}
    return out


def old_spectral_norm(lib, initial) -> dict:
    lib.manual_seed(0)
    m = lib.nn.ConvTranspose2d(2, 3, 2)     # dim 1 by default
    lib.nn.utils.spectral_norm(m, n_power_iterations=3)
    start = _load(lib, m, initial)
    sd = m.state_dict()
    out = {"initial": start, "structure": _structure(m),
           "metadata": {k: v for k, v in sd._metadata[""].items() if k == "spectral_norm"}}
    out.update(_run(lib, m, _input(lib, 7, 1, 2, 3, 3), calls=(True, True, False)))
    out["state"] = _state(m)
    lib.nn.utils.remove_spectral_norm(m)
    out["removed"] = {"structure": _structure(m), "weight": _values(m.weight)}
    return out


def old_spectral_norm_version0(lib, initial) -> dict:
    """A state dict as version 0 saved it (<name> and no <name>_v, no metadata) loads: v is solved for."""
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 4)          # W^T W of full rank: v is determined
    lib.nn.utils.spectral_norm(m)
    start = _load(lib, m, initial)
    sd = dict(m.state_dict())
    m.eval()
    m(_input(lib, 8, 1, 3))
    sd["weight"] = m.weight.detach().clone()
    del sd["weight_v"]
    m.load_state_dict(sd)
    return {"initial": start, "weight_v": _values(m.weight_v), "output": _values(m(_input(lib, 8, 2, 3)))}


# ---- clipping, vectors, fusion, functional_call, memory formats ---------------------------------------

def clipping(lib, initial) -> dict:
    out = {"initial": None}
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        params = [lib.nn.Parameter(_input(lib, 9, 3, 4)), lib.nn.Parameter(_input(lib, 10, 5))]
        for i, p in enumerate(params):
            p.grad = _input(lib, 11 + i, *p.shape)
        total = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type)
        lib.nn.utils.clip_grads_with_norm_(params, 1.5, total)
        out[str(norm_type)] = {"total": _values(total), "grads": [_values(p.grad) for p in params]}
    params = [lib.nn.Parameter(_input(lib, 9, 3, 4))]
    params[0].grad = _input(lib, 13, 3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["deprecated"] = _values(lib.nn.utils.clip_grad_norm(params, 0.5))
        lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    out["clipped"] = _values(params[0].grad)
    return out


def vectors(lib, initial) -> dict:
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Conv1d(2, 2, 2))
    start = _load(lib, m, initial)
    vec = lib.nn.utils.parameters_to_vector(m.parameters())
    new = lib.arange(float(vec.numel()))
    lib.nn.utils.vector_to_parameters(new, m.parameters())
    try:
        lib.nn.utils.vector_to_parameters([1.0], m.parameters())
        error = None
    except TypeError as exc:
        error = str(exc)
    return {"initial": start, "vector": _values(vec), "after": _state(m), "error": error}


def fusion(lib, initial) -> dict:
    lib.manual_seed(0)
    nn = lib.nn
    m = nn.ModuleDict({"conv": nn.Conv2d(2, 3, 2), "bn": nn.BatchNorm2d(3), "tconv": nn.ConvTranspose2d(3, 2, 2),
                       "tbn": nn.BatchNorm2d(2), "linear": nn.Linear(4, 3, bias=False), "lbn": nn.BatchNorm1d(3)})
    if initial is None:       # torch: running statistics away from 0 and 1, affine weights away from 1 and 0
        with lib.no_grad():
            for bn in (m["bn"], m["tbn"], m["lbn"]):
                bn.running_mean.normal_()
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.normal_()
                bn.bias.normal_()
    start = _load(lib, m, initial)
    m.eval()
    x, xl = _input(lib, 14, 2, 2, 4, 4), _input(lib, 15, 3, 4)
    fused = nn.utils.fuse_conv_bn_eval(m["conv"], m["bn"])
    tfused = nn.utils.fuse_conv_bn_eval(m["tconv"], m["tbn"], transpose=True)
    lfused = nn.utils.fuse_linear_bn_eval(m["linear"], m["lbn"])
    out = {"initial": start, "conv": _state(fused), "tconv": _state(tfused), "linear": _state(lfused),
           "outputs": [_values(fused(x)), _values(m["bn"](m["conv"](x))),
                       _values(tfused(fused(x))), _values(lfused(xl)), _values(m["lbn"](m["linear"](xl)))]}
    try:
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))
    except AssertionError as exc:
        out["training_error"] = str(exc)
    try:
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())
    except AssertionError as exc:
        out["features_error"] = str(exc)
    return out


def functional_call(lib, initial) -> dict:
    lib.manual_seed(0)
    nn = lib.nn
    shared = nn.Linear(3, 3)
    m = nn.Sequential(shared, nn.Tanh(), shared, nn.Tanh(), nn.Linear(3, 2))     # 0.* and 2.* are tied
    start = _load(lib, m, initial)
    x = _input(lib, 16, 4, 3)
    w = _input(lib, 17, 3, 3).requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = nn.utils.stateless.functional_call(m, {"0.weight": w}, (x,))
        y_untied = nn.utils.stateless.functional_call(m, {"0.weight": w}, x, tie_weights=False)
    y.sum().backward()
    out = {"initial": start, "output": _values(y), "untied": _values(y_untied), "grad": _values(w.grad),
           "module_unchanged": _state(m) == start, "warnings": sorted({str(w.message) for w in caught})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for given in ({"0.weight": w, "extra": w}, {}):
            try:
                nn.utils.stateless.functional_call(m, given, (x,), strict=True)
            except RuntimeError as exc:
                out.setdefault("strict_errors", []).append(str(exc))
        try:
            nn.utils.stateless.functional_call(m, {"0.weight": w, "2.weight": w * 2}, (x,))
        except ValueError as exc:
            out["tied_error"] = str(exc)
    return out


def memory_format(lib, initial) -> dict:
    nn = lib.nn
    m = nn.Sequential(nn.Conv2d(2, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 3, 2), nn.Conv3d(3, 2, 2)))
    weights = [m[0].weight, m[1][0].weight]
    nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
    nn.utils.convert_conv3d_weight_memory_format(m, lib.channels_last_3d)
    return {"initial": None, "strides": [list(mod.weight.stride()) for mod in (m[0], m[1][0], m[1][1])],
            "same_parameters": [w is p for w, p in zip(weights, [m[0].weight, m[1][0].weight])]}


def skip_init(lib, initial) -> dict:
    m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4, bias=True)
    try:
        lib.nn.utils.skip_init(lib.nn.ReLU)
    except RuntimeError as exc:
        error = str(exc)
    return {"initial": None, "shapes": [list(p.shape) for p in m.parameters()],
            "devices": [p.device.type for p in m.parameters()], "error": error}


# ---- nn.init ----------------------------------------------------------------------------------------

def init_structure(lib, initial) -> dict:
    """dirac_ (deterministic), and the messages and warnings of the new functions and the deprecated names."""
    init = lib.nn.init
    out = {"initial": None}
    for shape, groups in (((4, 2, 3), 1), ((6, 2, 3, 3), 3), ((2, 3, 1, 2, 3), 1)):
        out[f"dirac {shape} {groups}"] = _values(init.dirac_(lib.empty(shape), groups))
    errors = []
    for call in (lambda: init.dirac_(lib.empty(2, 2)), lambda: init.dirac_(lib.empty(5, 2, 3), 2),
                 lambda: init.orthogonal_(lib.empty(3)), lambda: init.sparse_(lib.empty(3, 4, 2), 0.5)):
        try:
            call()
        except ValueError as exc:
            errors.append(str(exc))
    out["errors"] = errors
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = lib.empty(6, 4)
        for name in ("uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
                     "orthogonal"):
            getattr(init, name)(t)
        init.constant(t, 0.5)
        init.eye(t)
        out["eye"] = _values(t)
        init.dirac(lib.empty(2, 2, 3))
        init.sparse(t, 0.5)
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return out


SCENARIOS = {
    "parametrize_chain": parametrize_chain,
    "parametrize_two_originals": parametrize_two_originals,
    "parametrize_buffer": parametrize_buffer,
    "weight_norm_linear": _weight_norm_module(lambda lib: lib.nn.Linear(5, 4), 0, (3, 5)),
    "weight_norm_conv_dim_none": _weight_norm_module(lambda lib: lib.nn.Conv2d(2, 3, 2), None, (1, 2, 4, 4)),
    "weight_norm_conv_dim_1": _weight_norm_module(lambda lib: lib.nn.Conv1d(2, 3, 2), 1, (2, 2, 5)),
    "spectral_norm_linear": _spectral_norm_module(lambda lib: lib.nn.Linear(5, 4), (3, 5)),
    "spectral_norm_conv": _spectral_norm_module(lambda lib: lib.nn.Conv2d(2, 3, 2), (1, 2, 4, 4)),
    "spectral_norm_conv_transpose": _spectral_norm_module(lambda lib: lib.nn.ConvTranspose1d(2, 3, 2),
                                                          (1, 2, 5)),
    "spectral_norm_dim_minus_1": _spectral_norm_module(lambda lib: lib.nn.Linear(3, 4), (2, 3), dim=-1),
    "orthogonal_matrix_exp": _orthogonal_module((4, 4), None),
    "orthogonal_cayley": _orthogonal_module((4, 4), "cayley"),
    "orthogonal_householder_square": _orthogonal_module((4, 4), "householder"),
    "orthogonal_householder_tall": _orthogonal_module((5, 3), None),
    "orthogonal_householder_wide": _orthogonal_module((2, 4), None),
    "orthogonal_matrix_exp_wide": _orthogonal_module((3, 5), "matrix_exp"),
    "orthogonal_householder_untrivialized": _orthogonal_module((5, 3), "householder", False),
    "orthogonal_matrix_exp_untrivialized": _orthogonal_module((3, 3), "matrix_exp", False),
    "old_weight_norm": old_weight_norm,
    "old_spectral_norm": old_spectral_norm,
    "old_spectral_norm_version0": old_spectral_norm_version0,
    "clipping": clipping,
    "vectors": vectors,
    "fusion": fusion,
    "functional_call": functional_call,
    "memory_format": memory_format,
    "skip_init": skip_init,
    "init_structure": init_structure,
}
