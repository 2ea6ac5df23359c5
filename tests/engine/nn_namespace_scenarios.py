"""torch.nn's and torch.autograd's newer or less used names, as scenarios that run on PyTorch and on
agrad alike: nn.Buffer (construction, registration by assignment, persistence, state_dict, `to`),
nn.attention (SDPBackend, sdpa_kernel's flags and priority, scaled_dot_product_attention under each
backend list with PyTorch's CPU errors and warnings, SDPAParams, can_use_*), nn.attention.bias (the
causal variants, their masks and outputs), nn.grad (the convolutions' input and weight gradients),
F.linear_cross_entropy and nn.LinearCrossEntropyLoss, nn.SyncBatchNorm on one process, nn.Container,
nn.factory_kwargs, and torch.autograd's is_tensor_like, NestedIOFunction, DeviceType,
enforce_grad_layout_policy and torch.set_anomaly_enabled.

Each scenario takes the library module `T` (torch, or agrad) and returns plain JSON values.
`tests/reference/make_nn_namespace_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/nn_namespace.json`; `test_nn_namespace.py` runs them on agrad and compares
(never importing torch), floats to float32's precision. An error is its built-in type (agrad's
ShapeError is a RuntimeError) and its message's first line, which reads LIB for the library's name;
PyTorch's C++ warnings lose their "(Triggered internally at ...)" tail. Inputs are fixed (no random
draws); a scenario puts back any global setting it changes.
"""
from __future__ import annotations

import copy
import importlib
import warnings

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _F(T):
    return importlib.import_module(f"{T.__name__}.nn.functional")


def _warned(call):
    """(what call() returned or [error type, message], the [category, message] of each warning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
            kind = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
            result = [kind.__name__, str(exc).split("\n")[0].replace("torch", "LIB").replace("agrad", "LIB")]
    return result, [[w.category.__name__, str(w.message).split(" (Triggered internally")[0]] for w in caught]


def _vals(t):
    return t.detach().tolist()


def _smooth(T, *shape, dtype=None, scale=1.0):
    """A fixed tensor of `shape` with distinct values (sin of a ramp), float64 unless told."""
    n = 1
    for s in shape:
        n *= s
    return (T.arange(n, dtype=T.float64).sin() * scale).reshape(shape).to(dtype or T.float64)


# ---- nn.Buffer -------------------------------------------------------------------------------------

@scenario
def buffer_construction(T):
    nn = T.nn
    t = T.ones(2, requires_grad=True)
    b = nn.Buffer(t, persistent=False)
    plain = nn.Buffer(T.arange(3.0))
    derived = nn.Buffer(t * 2)
    t.data.add_(1)          # an alias: the buffer sees the change
    return {"class": type(b).__name__, "requires_grad": [b.requires_grad, plain.requires_grad],
            "persistent": [b.persistent, plain.persistent], "marked": [b._is_buffer, plain._is_buffer],
            "isinstance": [isinstance(b, nn.Buffer), isinstance(T.ones(1), nn.Buffer),
                           isinstance(nn.Parameter(T.ones(1)), nn.Buffer), isinstance(3, nn.Buffer)],
            "alias": _vals(b), "leaf": [b.is_leaf, derived.is_leaf, derived.grad_fn is None],
            "default": [list(nn.Buffer().shape), nn.Buffer().persistent],
            "not_a_tensor": _error(lambda: nn.Buffer([1.0, 2.0])),
            "deepcopy": [copy.deepcopy(b).persistent, isinstance(copy.deepcopy(b), nn.Buffer)]}


@scenario
def buffer_in_module(T):
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.steps = nn.Buffer(T.zeros(1))
            self.cache = nn.Buffer(T.ones(2), persistent=False)

    m = Net()
    out = {"buffers": [n for n, _ in m.named_buffers()], "keys": list(m.state_dict()),
           "non_persistent": sorted(m._non_persistent_buffers_set), "not_parameters": [n for n, _ in
                                                                                       m.named_parameters()]}
    m.cache = T.full((2,), 5.0)             # a plain tensor keeps the registered persistence
    out["after_plain"] = [list(m.state_dict()), _vals(m.cache)]
    m.cache = nn.Buffer(T.full((2,), 6.0))  # a Buffer brings its own
    out["after_buffer"] = list(m.state_dict())
    m.register_buffer("extra", nn.Buffer(T.ones(1), persistent=False))     # register_buffer's flag wins
    out["register_buffer"] = list(m.state_dict())
    m.double()
    out["double"] = [str(m.steps.dtype).split(".")[-1], isinstance(m.steps, nn.Buffer),
                     type(m.steps).__name__, "steps" in m._buffers]
    del m.steps
    m.steps = nn.Buffer(T.zeros(3), persistent=False)
    out["reassigned"] = [list(m.state_dict()), list(m.steps.shape)]
    m.attr = 1
    out["over_attribute"] = _error(lambda: setattr(m, "attr", nn.Buffer(T.ones(1))))
    out["over_parameter"] = _error(lambda: setattr(m.lin, "weight", nn.Buffer(T.ones(1))))[0]

    class Early(nn.Module):
        def __init__(self):
            self.b = nn.Buffer(T.ones(1))
    out["before_init"] = _error(Early)
    clone = copy.deepcopy(m)
    out["deepcopy"] = [list(clone.state_dict()), sorted(clone._non_persistent_buffers_set)]
    return out


# ---- nn.attention ----------------------------------------------------------------------------------

def _backends(A):
    return [repr(b) for b in A._cur_sdpa_kernel_backends(with_priority=True)]


@scenario
def sdp_backend_enum(T):
    SDPBackend = T.nn.attention.SDPBackend
    members = ["ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE"]
    return {"members": [[repr(getattr(SDPBackend, n)), str(getattr(SDPBackend, n)), int(getattr(SDPBackend, n)),
                         getattr(SDPBackend, n).name] for n in members],
            "equal_int": SDPBackend.MATH == 0, "name": SDPBackend.__name__,
            "module": SDPBackend.__module__.replace("torch", "LIB").replace("agrad", "LIB"),
            "all": sorted(set(T.nn.attention.__all__) & {"SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"}),
            "warn_flag": T.nn.attention.WARN_FOR_UNFUSED_KERNELS}


@scenario
def sdpa_kernel_flags(T):
    A = T.nn.attention
    B = A.SDPBackend
    out = {"initial": _backends(A)}
    with A.sdpa_kernel(B.MATH) as ctx:
        out["math"] = [_backends(A), ctx]
    with A.sdpa_kernel([B.EFFICIENT_ATTENTION, B.MATH, B.MATH]):
        out["list"] = _backends(A)
    with A.sdpa_kernel([B.MATH, B.FLASH_ATTENTION], set_priority=True):
        out["priority"] = _backends(A)
        with A.sdpa_kernel([]):
            out["nested_empty"] = _backends(A)
        out["after_nested"] = _backends(A)
    out["restored"] = _backends(A)
    try:
        with A.sdpa_kernel(B.MATH):
            raise KeyError("inside")
    except KeyError:
        out["restored_after_error"] = _backends(A)
    out["bad_type"] = _error(lambda: A.sdpa_kernel("math").__enter__())
    out["bad_tuple"] = _error(lambda: A.sdpa_kernel((B.MATH,)).__enter__())
    return out


def _qkv(T, shape_q, shape_kv=None, requires_grad=False):
    shape_kv = shape_kv or shape_q
    q = _smooth(T, *shape_q, dtype=T.float32)
    k = _smooth(T, *shape_kv, dtype=T.float32, scale=0.7).flip(-1)
    v = _smooth(T, *shape_kv, dtype=T.float32, scale=1.3).cos()
    return [t.requires_grad_(requires_grad) for t in (q, k, v)]


@scenario
def sdpa_under_backends(T):
    F = _F(T)
    A = T.nn.attention
    B = A.SDPBackend
    q4, k4, v4 = _qkv(T, (1, 2, 3, 4))
    q4x4 = T.cat([q4, q4.flip(-2)], 1)        # 4 query heads over k4's and v4's 2
    q3, k3, v3 = _qkv(T, (2, 3, 4))
    mask = T.tensor([[True, False, True], [True, True, False], [False, True, True]])
    float_mask = _smooth(T, 3, 3, dtype=T.float32, scale=0.5)
    cases = {
        "4d": lambda: F.scaled_dot_product_attention(q4, k4, v4),
        "3d": lambda: F.scaled_dot_product_attention(q3, k3, v3),
        "4d_bool_mask": lambda: F.scaled_dot_product_attention(q4, k4, v4, mask),
        "4d_causal_and_mask": lambda: F.scaled_dot_product_attention(q4, k4, v4, float_mask, is_causal=True),
        "3d_causal_and_mask": lambda: F.scaled_dot_product_attention(q3, k3, v3, float_mask, is_causal=True),
        "dropout": lambda: list(F.scaled_dot_product_attention(q4, k4, v4, dropout_p=0.5).shape),
        "batch_mismatch": lambda: F.scaled_dot_product_attention(q4, k4.expand(2, 2, 3, 4), v4.expand(2, 2, 3, 4)),
        "heads_mismatch": lambda: F.scaled_dot_product_attention(q4x4, k4, v4),
        "gqa": lambda: F.scaled_dot_product_attention(q4x4, k4, v4, enable_gqa=True),
        "gqa_kv_heads": lambda: F.scaled_dot_product_attention(q4x4, k4, v4[:, :1].contiguous(), enable_gqa=True),
        "int64": lambda: F.scaled_dot_product_attention(*(t.long() for t in (q4, k4, v4))),
        "strided_mask": lambda: F.scaled_dot_product_attention(q4, k4, v4, float_mask.T.contiguous().T),
        "head_dim": lambda: F.scaled_dot_product_attention(q4, k4, v4[..., :2].contiguous()),
        "mask_1d": lambda: F.scaled_dot_product_attention(q4, k4, v4, float_mask[0]),
        "mask_3d": lambda: F.scaled_dot_product_attention(q4, k4, v4, mask.unsqueeze(0)),
        "mask_heads": lambda: F.scaled_dot_product_attention(q4, k4, v4, float_mask.expand(1, 3, 3, 3)),
        "strided": lambda: F.scaled_dot_product_attention(q4.transpose(-1, -2).contiguous().transpose(-1, -2), k4,
                                                          v4),
    }
    lists = {"math": [B.MATH], "flash": [B.FLASH_ATTENTION], "efficient": [B.EFFICIENT_ATTENTION],
             "cudnn": [B.CUDNN_ATTENTION], "overrideable": [B.OVERRIDEABLE], "none": [], "error": [B.ERROR],
             "flash_math": [B.FLASH_ATTENTION, B.MATH]}
    out = {}
    for lname, backends in lists.items():
        for cname, call in cases.items():
            if lname not in ("math", "flash", "flash_math") and cname not in ("4d", "3d"):
                continue
            if cname == "int64" and lname != "flash":
                continue        # (the flash kernel's dtype check; the math path's own message is the op's)
            with A.sdpa_kernel(backends):
                result, warned = _warned(call)
            if isinstance(result, T.Tensor):
                result = _vals(result)
            out[f"{lname}/{cname}"] = [result, warned]
    return out


@scenario
def sdpa_empty_inputs(T):
    """No value or no query row: zeros before any backend is chosen, zero gradients for every input."""
    F = _F(T)
    A = T.nn.attention
    out = {}
    for shapes in (((2, 0), (2, 0), (2, 3)), ((2, 0), (2, 0), (0, 3)), ((0, 4), (2, 4), (2, 3)),
                   ((1, 4), (0, 4), (0, 3)), ((1, 4), (2, 4), (2, 0)), ((1, 2, 0, 4), (1, 2, 3, 4), (1, 2, 3, 4)),
                   ((1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 4))):
        for name, backends in (("all", None), ("none", [])):
            q, k, v = (T.ones(s, requires_grad=True) for s in shapes)

            def run():
                y = F.scaled_dot_product_attention(q, k, v)
                y.sum().backward()
                return [list(y.shape), y.sum().item(), [None if t.grad is None else list(t.grad.shape)
                                                        for t in (q, k, v)]]
            if backends is None:
                out[f"{shapes}/{name}"] = _error(run) or run()
            else:
                with A.sdpa_kernel(backends):
                    out[f"{shapes}/{name}"] = _error(run) or run()
    return out


@scenario
def sdpa_gradients_under_flash(T):
    """The value and the gradients do not depend on the kernel chosen."""
    F = _F(T)
    A = T.nn.attention
    out = {}
    for name, backends in (("math", [A.SDPBackend.MATH]), ("flash", [A.SDPBackend.FLASH_ATTENTION])):
        q, k, v = _qkv(T, (1, 2, 3, 4), requires_grad=True)
        with A.sdpa_kernel(backends):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        (y * y).sum().backward()
        out[name] = [_vals(y), _vals(q.grad), _vals(k.grad), _vals(v.grad)]
    return out


@scenario
def sdpa_params(T):
    A = T.nn.attention
    q, k, v = _qkv(T, (1, 2, 3, 4))
    p = A.SDPAParams(q, k, v, None, 0.25, True, False)
    out = {"fields": [p.query is q, p.key is k, p.value is v, p.attn_mask, p.dropout, p.is_causal, p.enable_gqa],
           "name": type(p).__name__}
    for debug in (False, True):
        out[f"can_use_debug_{debug}"] = _warned(lambda: [A.can_use_flash_attention(p, debug),
                                                         A.can_use_efficient_attention(p, debug)])
    out["too_few"] = _error(lambda: A.SDPAParams(q, k, v, None, 0.0, False))[0]
    out["read_only"] = _error(lambda: setattr(p, "dropout", 0.5))[0]
    return out


# ---- nn.attention.bias -----------------------------------------------------------------------------

@scenario
def causal_bias_masks(T):
    bias = importlib.import_module(f"{T.__name__}.nn.attention.bias")
    out = {"variants": [[v.name, int(v)] for v in bias.CausalVariant], "all": sorted(bias.__all__)}
    for name, make in (("upper_left", bias.causal_upper_left), ("lower_right", bias.causal_lower_right)):
        for size in ((3, 4), (4, 3), (3, 3)):
            b, warned = _warned(lambda: make(*size))
            out[f"{name}{size}"] = [_vals(b._materialize()), repr(b).replace("torch", "LIB").replace("agrad", "LIB"),
                                    b.variant.name, b.seq_len_q, b.seq_len_kv, isinstance(b, T.Tensor),
                                    type(b).__name__, warned]
    out["one_size"] = _error(lambda: bias.causal_upper_left(3))
    out["three_sizes"] = _error(lambda: bias.causal_lower_right(1, 2, 3))
    out["bad_variant"] = _error(lambda: bias.CausalBias(1, 2, 3))
    return out


@scenario
def causal_bias_attention(T):
    F = _F(T)
    A = T.nn.attention
    bias = importlib.import_module(f"{T.__name__}.nn.attention.bias")
    out = {}
    for name, qs, kvs in (("square", (1, 2, 3, 4), None), ("wide", (1, 2, 2, 4), (1, 2, 5, 4)),
                          ("3d_wide", (2, 2, 3), (2, 4, 3))):
        for variant, make in (("upper_left", bias.causal_upper_left), ("lower_right", bias.causal_lower_right)):
            q, k, v = _qkv(T, qs, kvs, requires_grad=True)
            b = make(q.shape[-2], k.shape[-2])
            y, warned = _warned(lambda: F.scaled_dot_product_attention(q, k, v, b))
            y.sum().backward()
            plain = F.scaled_dot_product_attention(q.detach(), k.detach(), v.detach(), b._materialize())
            out[f"{name}/{variant}"] = [_vals(y), _vals(q.grad), _vals(k.grad), warned,
                                        bool(((y - plain).abs() < 1e-6).all())]
    q, k, v = _qkv(T, (1, 1, 2, 4), (1, 1, 3, 4))
    out["with_is_causal"] = _error(lambda: F.scaled_dot_product_attention(q, k, v, bias.causal_lower_right(2, 3),
                                                                          is_causal=True))
    out["dtype_mismatch"] = _error(lambda: F.scaled_dot_product_attention(q, k.double(), v,
                                                                          bias.causal_lower_right(2, 3)))
    out["scale"] = _vals(F.scaled_dot_product_attention(q, k, v, bias.causal_lower_right(2, 3), scale=0.3))
    A.WARN_FOR_UNFUSED_KERNELS = True
    try:
        out["warn_unfused"] = _warned(lambda: list(F.scaled_dot_product_attention(
            q, k, v, bias.causal_lower_right(2, 3)).shape))
    finally:
        A.WARN_FOR_UNFUSED_KERNELS = False
    with A.sdpa_kernel([]):
        out["no_backend"] = _warned(lambda: F.scaled_dot_product_attention(q, k, v, bias.causal_lower_right(2, 3)))
    return out


# ---- nn.grad ---------------------------------------------------------------------------------------

@scenario
def conv_grads(T):
    G = importlib.import_module(f"{T.__name__}.nn.grad")
    out = {}
    for n, kw in ((1, dict(stride=2, padding=1)), (2, dict(stride=(2, 1), padding=1, dilation=(1, 2))),
                  (2, dict(groups=2)), (3, dict(stride=1, padding=(0, 1, 1)))):
        spatial = (7,) * n if n < 3 else (4, 5, 4)
        groups = kw.get("groups", 1)
        x = _smooth(T, 2, 4, *spatial, scale=0.9)
        w = _smooth(T, 6, 4 // groups, *(3,) * n, scale=1.1).cos()
        conv = getattr(_F(T), f"conv{n}d")
        y = conv(x, w, None, **kw)
        g = _smooth(T, *y.shape, scale=0.5).cos()
        gi = getattr(G, f"conv{n}d_input")(x.shape, w, g, **kw)
        gw = getattr(G, f"conv{n}d_weight")(x, w.shape, g, **kw)
        out[f"conv{n}d {sorted(kw.items())}"] = [list(gi.shape), _vals(gi.sum()), _vals(gi.flatten()[:12]),
                                                 list(gw.shape), _vals(gw.sum()), _vals(gw.flatten()[:12])]
    # differentiable again: the input gradient's gradient with respect to the weight
    x = _smooth(T, 1, 2, 5, 5)
    w = _smooth(T, 3, 2, 3, 3).cos().requires_grad_(True)
    g = _smooth(T, 1, 3, 3, 3, scale=0.3)
    gi = G.conv2d_input(x.shape, w, g)
    (gi * x).sum().backward()
    out["double"] = [_vals(w.grad.flatten()[:9]), gi.grad_fn is not None]
    out["names"] = sorted(n for n in dir(G) if n.startswith("conv"))
    return out


# ---- linear_cross_entropy ---------------------------------------------------------------------------

@scenario
def linear_cross_entropy_values(T):
    F = _F(T)
    out = {}

    def run(name, x_shape, w_shape, target, **kw):
        x = _smooth(T, *x_shape, scale=0.8).requires_grad_(True)
        w = _smooth(T, *w_shape, scale=1.2).cos().requires_grad_(True)
        b = kw.pop("bias_shape", None)
        if b is not None:
            kw["linear_bias"] = _smooth(T, *b, scale=0.1).requires_grad_(True)
        loss = F.linear_cross_entropy(x, w, target, **kw)
        loss.sum().backward()
        ref = F.cross_entropy((x @ w.reshape(-1, w.shape[-1]).T).reshape(
            (*x.shape[:-1], *w.shape[:-1])) + (0 if b is None else kw["linear_bias"]), target,
            weight=kw.get("weight"), reduction=kw.get("reduction", "mean"),
            ignore_index=-100 if kw.get("ignore_index") is None else kw["ignore_index"],
            label_smoothing=kw.get("label_smoothing", 0.0))
        out[name] = [_vals(loss), _vals(x.grad), _vals(w.grad.flatten()[:8]), bool(((loss - ref).abs() < 1e-9).all())]

    run("indices", (3, 4), (5, 4), T.tensor([0, 4, 2]))
    run("unbatched", (4,), (5, 4), T.tensor(3))
    run("bias_weight_smoothing", (3, 4), (5, 4), T.tensor([1, 1, 3]), bias_shape=(5,),
        weight=_smooth(T, 5).abs() + 0.5, label_smoothing=0.2)
    run("ignore_index_none", (4, 4), (5, 4), T.tensor([0, 2, 2, 4]), ignore_index=2, reduction="none")
    run("probabilities", (3, 4), (5, 4), _smooth(T, 3, 5).softmax(-1), reduction="sum")
    run("k_dimensional", (2, 3), (4, 2, 3, 3), T.tensor([[[0, 3, 1], [2, 2, 0]], [[1, 1, 3], [0, 2, 3]]]),
        bias_shape=(4, 2, 3))
    x, w = _smooth(T, 3, 4), _smooth(T, 5, 4)
    t = T.tensor([0, 1, 2])
    out["errors"] = [
        _error(lambda: F.linear_cross_entropy(_smooth(T, 2, 3, 4), w, t)),
        _error(lambda: F.linear_cross_entropy(x, _smooth(T, 4), t)),
        _error(lambda: F.linear_cross_entropy(x, _smooth(T, 5, 3), t)),
        _error(lambda: F.linear_cross_entropy(x, w, t, linear_bias=_smooth(T, 4))),
        _error(lambda: F.linear_cross_entropy(_smooth(T, 4), _smooth(T, 5, 2, 4), T.tensor([1, 2]))),
        _error(lambda: F.linear_cross_entropy(x, w, _smooth(T, 3, 5).softmax(-1), ignore_index=1)),
    ]
    return out


@scenario
def linear_cross_entropy_module(T):
    nn = T.nn
    loss = nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True, label_smoothing=0.1,
                                     weight=T.tensor([1.0, 2.0, 0.5, 1.0]))
    with T.no_grad():
        loss.linear.weight.copy_(_smooth(T, 8, 3, dtype=T.float32))
        loss.linear.bias.copy_(_smooth(T, 8, dtype=T.float32, scale=0.1))
    x = _smooth(T, 2, 3, dtype=T.float32).requires_grad_(True)
    t = T.tensor([[0, 3], [2, 1]])
    y = loss(x, t)
    y.backward()
    plain = nn.LinearCrossEntropyLoss(3, 4)
    return {"repr": repr(loss), "plain_repr": repr(plain), "keys": list(loss.state_dict()),
            "shapes": [list(p.shape) for p in loss.parameters()], "value": _vals(y),
            "x_grad": _vals(x.grad), "bias_grad": _vals(loss.linear.bias.grad),
            "attributes": [loss.num_classes, list(loss.out_features), loss.ignore_index, loss.reduction],
            "bad_weight": _error(lambda: nn.LinearCrossEntropyLoss(3, 4, weight=T.ones(3))),
            "bad_smoothing": _error(lambda: nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5))}


# ---- SyncBatchNorm, Container -------------------------------------------------------------------------

@scenario
def sync_batch_norm(T):
    nn = T.nn
    bn = nn.SyncBatchNorm(3, momentum=None)
    x = _smooth(T, 4, 3, 2, 2, dtype=T.float32)
    y_train = bn(x)
    bn(x * 2)
    stats = [_vals(bn.running_mean), _vals(bn.running_var), int(bn.num_batches_tracked)]
    bn.eval()
    y_eval = bn(x)
    model = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2), nn.Sequential(nn.BatchNorm1d(2)),
                          nn.InstanceNorm2d(2), nn.LazyBatchNorm1d())
    model[1].eval()
    weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="group")
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2, affine=False))
    return {"repr": repr(bn), "keys": list(bn.state_dict()), "train": _vals(y_train[0, :, 0]),
            "stats": stats, "eval": _vals(y_eval[0, :, 0]),
            "any_dims": [list(bn(_smooth(T, 5, 3, dtype=T.float32)).shape),
                         list(bn(_smooth(T, 2, 3, 2, 2, 2, dtype=T.float32)).shape)],
            "one_dim": _error(lambda: bn(T.ones(3))), "no_channels": _error(lambda: nn.SyncBatchNorm(0)(T.ones(2, 0))),
            "converted": [type(m).__name__ for m in converted.modules()],
            "shares": [converted[1].weight is weight, converted[1].training, converted[1].process_group],
            "single": [type(single).__name__, single.affine, list(single.state_dict())]}


@scenario
def container(T):
    nn = T.nn
    c, warned = _warned(lambda: nn.Container(a=nn.Linear(2, 1), b=nn.ReLU()))
    return {"repr": repr(c), "children": [n for n, _ in c.named_children()], "warned": warned,
            "parameters": [n for n, _ in c.named_parameters()], "is_module": isinstance(c, nn.Module)}


@scenario
def factory_kwargs(T):
    fk = T.nn.factory_kwargs
    both = fk({"device": "cpu", "factory_kwargs": {"dtype": T.float64}})
    given = {"dtype": T.float16}
    fk({"factory_kwargs": given, "device": "cpu"})
    return {"none": fk(None), "empty": fk({}), "both": sorted(both), "dtype": str(both["dtype"]).split(".")[-1],
            "untouched": sorted(given), "made": str(T.empty(2, **both).dtype).split(".")[-1],
            "unexpected": _error(lambda: fk({"device": "cpu", "requires_grad": True})),
            "twice": _error(lambda: fk({"dtype": T.float32, "factory_kwargs": {"dtype": T.float64}}))}


# ---- torch.autograd --------------------------------------------------------------------------------

@scenario
def autograd_names(T):
    class Like:
        def __torch_function__(self, *args):
            return None

    x = T.ones(2, requires_grad=True)
    out = {"is_tensor_like": [T.autograd.is_tensor_like(v) for v in (x, T.nn.Parameter(T.ones(1)), 1, [x], Like(),
                                                                      x.detach().numpy())]}

    class Nested(T.autograd.NestedIOFunction):
        def forward_extended(self, a, b):
            return a * b

        def backward_extended(self, g):
            return g, g

    f, warned = _warned(Nested)
    out["nested_instance"] = [warned, _error(lambda: f(x, x))]
    out["nested_apply"] = _error(lambda: Nested.apply(x, x))
    out["nested_is_function"] = issubclass(Nested, T.autograd.Function)
    out["device_type"] = [[d.name, int(d)] for d in (T.autograd.DeviceType.CPU, T.autograd.DeviceType.CUDA)]
    T.set_anomaly_enabled(True, False)
    out["anomaly_on"] = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
    T.set_anomaly_enabled(False)
    out["anomaly_off"] = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
    out["anomaly_bad"] = [_error(lambda: T.set_anomaly_enabled(1)), _error(lambda: T.set_anomaly_enabled(True, 0))]
    return out


@scenario
def grad_layout_policy(T):
    def strides_after(policy):
        p = T.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_()
        if policy is None:
            (p * 2).sum().backward()
        else:
            with T.autograd.enforce_grad_layout_policy(policy):
                (p * 2).sum().backward()
        return [list(p.stride()), list(p.grad.stride()), _vals(p.grad.flatten()[:3])]

    out = {"default": strides_after(None), "enforced": strides_after(True), "relaxed": strides_after(False),
           "after": strides_after(None)}

    @T.autograd.enforce_grad_layout_policy(False)
    def relaxed_backward(p):
        (p * 2).sum().backward()
        return list(p.grad.stride())
    out["decorated"] = relaxed_backward(T.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_())
    out["after_decorated"] = strides_after(None)
    return out
