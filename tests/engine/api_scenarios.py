"""PyTorch's API around autograd, as scenarios that run on PyTorch and on agrad alike:
inference tensors, as_strided's geometry and gradient, bernoulli, unsafe_split, nanmedian,
autograd.graph.increment_version, autograd.grad(is_grads_batched=True), anomaly mode without
NaN checks, ctx.saved_variables, Function._backward_cls, nn.functional's inplace flags,
uint32/uint64 promotion, interpolate's bicubic and area modes, avg_pool3d's checks, max_pool3d's,
pixel_shuffle's and fold/unfold's checks and modules, grid_sample's and affine_grid's checks.

Each scenario takes the library module `T` (torch, or agrad) and returns plain JSON values.
`tests/reference/make_api_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/api.json`; `test_api_contract.py` runs them on agrad and compares
(never importing torch). Messages read LIB for the library's name (engine_contract_scenarios'
`_error`).
"""
from __future__ import annotations

import importlib
import warnings

from engine_contract_scenarios import _error as _raised, _vals

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _error(call, shapes=()):
    """_raised's [type, message], the type being the built-in exception the error is (agrad raises its
    own subclasses: ShapeError is a RuntimeError, DtypeNotImplementedError a NotImplementedError)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
        kind = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return [kind.__name__, _raised(call, shapes)[1]]
    return None


def _F(T):
    return importlib.import_module(f"{T.__name__}.nn.functional")


def _name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _round(values, digits=10):
    if isinstance(values, list):
        return [_round(v, digits) for v in values]
    return round(values, digits) if isinstance(values, float) else values


# -- inference tensors ----------------------------------------------------------------------------
@scenario
def inference_tensors_are_made_in_inference_mode(T):
    normal = T.ones(2, 3)
    with T.inference_mode():
        x = T.ones(2, 3)
        made = {"factory": x.is_inference(), "op": (x * 2).is_inference(), "view": x[0].is_inference(),
                "requires_grad_inside": T.ones(2).requires_grad_().requires_grad,
                "view_of_normal": normal[0].is_inference(), "op_on_normal": (normal * 1).is_inference(),
                "grad_mode": T.is_grad_enabled()}
        normal.add_(1)                  # a normal tensor modified inside stays normal, its version moves on
        view = normal[0]
        view.mul_(2)
        made["normal_after_inplace"] = [normal.is_inference(), normal._version, normal.tolist()]
        made["version_inside"] = _error(lambda: x._version)
        with T.inference_mode(False):
            made["nested_off"] = [T.ones(1).is_inference(), T.is_grad_enabled()]
    made["outside"] = {"op": (x * 1).is_inference(), "clone": x.clone().is_inference(),
                       "view": x.view(3, 2).is_inference(), "detach": x.detach().is_inference(),
                       "is_inference": [T.is_inference(x), T.is_inference(normal)],
                       "not_a_tensor": _error(lambda: T.is_inference(3))}
    return made


@scenario
def inference_tensors_outside_inference_mode(T):
    def fresh():
        with T.inference_mode():
            return T.ones(2, 3)
    w = T.ones(2, 3, requires_grad=True)
    out = {"version": _error(lambda: fresh()._version),
           "add_": _error(lambda: fresh().add_(1)),
           "view_mul_": _error(lambda: fresh()[0].mul_(2)),
           "setitem": _error(lambda: fresh().__setitem__(0, 1.0)),
           "t_": _error(lambda: fresh().t_()),
           "requires_grad_": _error(lambda: fresh().requires_grad_()),
           "saved_for_backward": _error(lambda: fresh() * w),
           "saved_by_exp_mul": _error(lambda: T.exp(w) * fresh()),
           "not_saved": (fresh() + w).sum().item(),
           "inplace_in_nested_off": None}
    with T.inference_mode():
        with T.inference_mode(False):
            out["inplace_in_nested_off"] = _error(lambda: fresh().add_(1))
    x = fresh()
    with T.inference_mode():
        x.add_(1)                           # inside inference mode it may be modified
    out["modified_inside"] = x.tolist()
    c = x.clone().requires_grad_()
    (c * c).sum().backward()
    out["clone_is_normal"] = [c.is_inference(), c.grad.tolist()]
    T.autograd.graph.increment_version(x)     # no version counter: nothing to bump, no error
    return out


# -- as_strided -------------------------------------------------------------------------------------
@scenario
def as_strided_geometry_and_gradient(T):
    x = T.arange(6.0, requires_grad=True)
    out = {}
    y = x * 1
    v = y.as_strided((3, 2), (1, 1))
    out["view"] = [_name(v), v._base is y, v.tolist(), v.stride(), v.storage_offset()]
    v.backward(T.arange(6.0).reshape(3, 2))
    out["overlapping_output_grad"] = x.grad.tolist()
    x.grad = None
    e = x.expand(3, 6).as_strided((3, 3), (1, 1))
    e.backward(T.ones(3, 3))
    out["overlapping_input_grad"] = x.grad.tolist()
    x.grad = None
    w = x[2:].as_strided((2, 2), (1, 2))
    out["offset_default"] = [w.storage_offset(), w.tolist()]
    w.backward(T.ones(2, 2))
    out["offset_grad"] = x.grad.tolist()
    x.grad = None
    z = x * 1
    r = z.as_strided_((2, 2), (1, 2))
    out["as_strided_"] = [r is z, _name(z), z.tolist()]
    z.backward(T.ones(2, 2))
    out["as_strided__grad"] = x.grad.tolist()
    b = T.zeros(6)[1:]
    b.as_strided_((2,), (2,))
    out["as_strided__offset"] = [b.storage_offset(), b._base is not None, b.shape[0]]
    a = T.zeros(4)
    out["errors"] = {"bounds": _error(lambda: a.as_strided((3, 2), (2, 1), 1)),
                     "negative": _error(lambda: a.as_strided((3, 2), (-1, 1))),
                     "lengths": _error(lambda: a.as_strided((3, 2), (1,))),
                     "offset": _error(lambda: a.as_strided((3, 2), (1, 1), -1)),
                     "expanded_write": _error(lambda: a.as_strided((3, 2), (0, 1)).add_(1))}
    g = T.arange(4.0, dtype=T.float64, requires_grad=True)
    (gg,) = T.autograd.grad((g.as_strided((2, 2), (1, 1)) ** 2).sum(), g, create_graph=True)
    (ggg,) = T.autograd.grad(gg.sum(), g)
    out["double_backward"] = [gg.tolist(), ggg.tolist()]
    return out


# -- bernoulli, unsafe_split, nanmedian --------------------------------------------------------------
@scenario
def bernoulli_out_of_place(T):
    p = T.tensor([0.0, 1.0, 1.0, 0.0], requires_grad=True)
    y = T.bernoulli(p)
    y.backward(T.ones(4))
    q = T.rand(3, requires_grad=True)
    z = T.bernoulli(q, 0.5)
    return {"values": y.tolist(), "grad_fn": _name(y), "grad": p.grad.tolist(), "dtype": str(y.dtype)[-7:],
            "p_grad_fn": _name(z), "p_backward": _error(lambda: z.sum().backward()),
            "p_all": [T.bernoulli(T.zeros(3), 1.0).tolist(), T.bernoulli(T.ones(3), 0.0).tolist()],
            "method": T.ones(2).bernoulli().tolist()}


@scenario
def unsafe_split_and_chunk(T):
    x = T.arange(10.0, requires_grad=True)
    y = x * 1
    a, b = T.unsafe_split(y, 5)
    c = T.unsafe_chunk(y, 3)
    s = T.unsafe_split_with_sizes(y, [4, 6])
    out = {"names": [_name(a), _name(c[0]), _name(s[1])], "views": [a._base is None, c[2]._base is None],
           "sizes": [list(t.shape) for t in c]}
    a.mul_(2)                               # not a view: recorded as on any non-leaf, no CopySlices
    out["after_inplace"] = [_name(a), y._version]
    (a.sum() + (b * 3).sum() + s[1].sum()).backward()
    out["grad"] = x.grad.tolist()
    return out


@scenario
def nanmedian_with_nans(T):
    n = float("nan")
    x = T.tensor([[n, n, n], [1.0, n, 3.0], [2.0, 5.0, n], [n, 4.0, 4.0]], dtype=T.float64, requires_grad=True)
    values, indices = T.nanmedian(x, 1)
    values.backward(T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64))
    y = T.tensor([1.0, 2.0, 1.0, n], requires_grad=True)
    m = T.nanmedian(y)
    m.backward()
    return {"values": [str(v) for v in values.tolist()], "indices": indices.tolist(), "grad": x.grad.tolist(),
            "full": [m.item(), _name(m), y.grad.tolist()], "all_nan": str(T.nanmedian(T.tensor([n, n])).item()),
            "int": [T.nanmedian(T.tensor([1, 3, 2])).item(), T.nanmedian(T.tensor([[4, 1, 3, 2]]), 1)[1].tolist()]}


# -- autograd API -----------------------------------------------------------------------------------
@scenario
def increment_version(T):
    x = T.ones(2)
    T.autograd.graph.increment_version(x)
    T.autograd.graph.increment_version([x, x])
    a = T.ones(2, requires_grad=True)
    b = a * 1
    c = b * b
    T.autograd.graph.increment_version(b)
    return {"version": x._version, "backward": _error(lambda: c.sum().backward()),
            "not_tensors": _error(lambda: T.autograd.graph.increment_version(3))}


@scenario
def grads_batched(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = T.ones(2, requires_grad=True)
    eye = T.eye(3)
    y = x ** 2
    (jac,) = T.autograd.grad(y, x, eye, is_grads_batched=True, retain_graph=True)
    (jac2,) = T.autograd.grad(y, x, eye, is_grads_batched=True, create_graph=True)
    (hess_diag,) = T.autograd.grad(jac2.sum(), x)
    g1 = T.ones(3)
    g2 = T.ones(2, 4)
    return {"jacobian": jac.tolist(), "create_graph": [jac2.requires_grad, hess_diag.tolist()],
            "shape_0d": _error(lambda: T.autograd.grad(x ** 2, x, g1, is_grads_batched=True), [g1.shape[2:], y.shape]),
            "shape": _error(lambda: T.autograd.grad(x ** 2, x, g2, is_grads_batched=True), [g2.shape[2:], y.shape]),
            "unused": _vals(T.autograd.grad((x ** 2).sum(), [x, z], T.ones(4), is_grads_batched=True,
                                            allow_unused=True)),
            "materialize": _vals(T.autograd.grad((x ** 2).sum(), [x, z], T.ones(2), is_grads_batched=True,
                                                 materialize_grads=True)),
            "graph_freed_after": _error(lambda: T.autograd.grad(y, x, eye, is_grads_batched=True))}


@scenario
def anomaly_mode_without_nan_checks(T):
    def nan_backward():
        x = T.tensor([-1.0, 1.0], requires_grad=True)
        x.sqrt().sum().backward()
        return [str(v) for v in x.grad.tolist()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autograd.detect_anomaly(check_nan=False):
            inside = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled(), nan_backward()]
        with T.autograd.detect_anomaly():
            checked = [T.is_anomaly_check_nan_enabled(), _error(nan_backward)]
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            set_mode = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled(), nan_backward()]
    return {"inside": inside, "checked": checked, "set_detect_anomaly": set_mode,
            "after": [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]}


@scenario
def function_saved_variables_and_backward_cls(T):
    seen = []

    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (x,) = ctx.saved_variables
            seen.extend([w.category.__name__, str(w.message)] for w in caught)
            return 2 * x * g
    x = T.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    cls = Square._backward_cls
    return {"grad": x.grad.tolist(), "warnings": seen, "backward_cls": cls.__name__,
            "grad_fn_is_instance": type(y.grad_fn) is cls, "forward_cls": cls._forward_cls is Square,
            "base": cls.__mro__[1].__name__, "grad_fn_name": y.grad_fn.name()}


# -- nn.functional's inplace flags -------------------------------------------------------------------
_INPLACE_CASES = [("relu", {}), ("relu6", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 0.7}),
                  ("leaky_relu", {"negative_slope": 0.2}), ("hardtanh", {"min_val": -0.5, "max_val": 0.5}),
                  ("hardsigmoid", {}), ("hardswish", {}), ("silu", {}), ("mish", {}), ("dropout", {"p": 0.0}),
                  ("dropout", {"p": 1.0}), ("dropout", {"p": 0.5, "training": False})]


@scenario
def functional_inplace_flags(T):
    F = _F(T)
    out = {}
    for name, kw in _INPLACE_CASES:
        x = T.tensor([-1.5, -0.2, 0.3, 2.0], dtype=T.float64, requires_grad=True)
        y = x * 1
        r = getattr(F, name)(y, inplace=True, **kw)
        r.backward(T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64))
        key = name + "".join(f" {k}={v}" for k, v in kw.items())
        out[key] = [r is y, _name(r), _round(r.tolist()), _round(x.grad.tolist()), y._version]
    x = T.tensor([-1.0, 2.0], requires_grad=True)
    out["leaf"] = _error(lambda: F.relu(x, inplace=True))
    out["positional"] = [F.relu(T.tensor([-1.0, 2.0]), True).tolist(), F.elu_(T.tensor([0.0, 2.0])).tolist(),
                         F.leaky_relu_(T.tensor([-1.0]), 0.5).tolist(), F.hardtanh_(T.tensor([3.0])).tolist()]
    nn = T.nn
    names = []
    for module in (nn.ReLU(True), nn.LeakyReLU(0.1, True), nn.ELU(inplace=True), nn.SiLU(True), nn.Mish(True),
                   nn.Dropout(0.5, True)):
        y = T.tensor([-1.0, 2.0], requires_grad=True) * 1
        r = module(y)
        names.append([type(module).__name__, r is y, _name(r)])
    out["modules"] = names
    return out


# -- uint32 / uint64 ---------------------------------------------------------------------------------
def _typed(f):
    try:
        r = f()
    except Exception:  # noqa: BLE001 — recorded by _error
        return _error(f)
    return [str(r.dtype).split(".")[-1], r.tolist()]


@scenario
def unsigned_dtypes_promotion(T):
    x = T.tensor([1, 2, 3], dtype=T.uint32)
    y = T.tensor([1, 2, 3], dtype=T.uint64)
    return {
        "with_float": [_typed(lambda: x * 2.5), _typed(lambda: x / 2), _typed(lambda: x.float()),
                       _typed(lambda: x * T.tensor([1.0, 2.0, 3.0], dtype=T.float16)),
                       _typed(lambda: y.to(T.float64))],
        "same": [_typed(lambda: y * y)],
        "refused": [_typed(lambda: x + T.tensor([1, 1, 1])), _typed(lambda: y + T.tensor([1], dtype=T.uint8)),
                    _typed(lambda: x * y), _typed(lambda: x * T.tensor([True, False, True])),
                    _typed(lambda: T.tensor(1, dtype=T.uint32) * T.tensor(1))],
        "priority": [_typed(lambda: T.tensor([1, 2]) * T.tensor(3, dtype=T.uint32))],
        "range": [_typed(lambda: T.tensor([4294967295], dtype=T.uint32)),
                  _typed(lambda: T.tensor([2 ** 64 - 1], dtype=T.uint64))],
        "factories": [_typed(lambda: T.ones(2, dtype=T.uint64)),
                      _typed(lambda: T.tensor([1.5, 2.0], requires_grad=True).to(T.uint32))],
        "requires_grad": [_error(lambda: T.zeros(2, dtype=T.uint32).requires_grad_()),
                          _error(lambda: setattr(T.zeros(2, dtype=T.uint64), "requires_grad", True))],
        "reductions": [_typed(lambda: x.sum()), _typed(lambda: y.prod())],
        "facts": [x.dtype.itemsize, y.dtype.itemsize, x.dtype.is_floating_point, x.type().split(".")[-1],
                  y.type().split(".")[-1]]}


# -- interpolate's bicubic and area, avg_pool3d's checks -----------------------------------------------
@scenario
def interpolate_bicubic_and_area(T):
    F = _F(T)
    out = {}
    for shape, size in (((1, 2, 7), 3), ((1, 2, 5, 6), [2, 3]), ((1, 2, 4, 5, 6), [2, 3, 4]),
                        ((1, 2, 4, 5, 6), 1), ((1, 2, 5), 1)):
        x = T.ones(*shape, requires_grad=True)
        out[f"area {list(shape)}->{size}"] = _name(F.interpolate(x, size=size, mode="area"))
    x = T.arange(12.0, dtype=T.float64).reshape(1, 1, 3, 4).requires_grad_()
    y = F.interpolate(x, scale_factor=2, mode="bicubic")
    y.backward(T.ones_like(y))
    out["bicubic"] = [_name(y), list(y.shape), _round(y[0, 0, 2].tolist()), _round(x.grad.flatten().tolist())]
    z = F.interpolate(x, size=[5, 7], mode="bicubic", align_corners=True)
    out["bicubic_align_corners"] = _round(z[0, 0, :, 3].tolist())
    out["errors"] = {
        "bicubic_3d": _error(lambda: F.interpolate(T.ones(1, 1, 4), scale_factor=2.0, mode="bicubic")),
        "bicubic_int": _error(lambda: F.interpolate(T.ones(1, 1, 2, 2, dtype=T.int64), scale_factor=2.0,
                                                    mode="bicubic")),
        "area_align_corners": _error(lambda: F.interpolate(T.ones(1, 1, 4, 4), scale_factor=2.0, mode="area",
                                                           align_corners=False)),
        "area_int": _error(lambda: F.interpolate(T.ones(1, 1, 4, 4, dtype=T.int64), size=[2, 2], mode="area")),
        "unknown_mode": _error(lambda: F.interpolate(T.ones(1, 1, 4, 4), scale_factor=2.0, mode="cubic"))}
    return out


@scenario
def avg_pool3d_checks(T):
    F = _F(T)
    x = T.ones(1, 2, 3, 3, 3, requires_grad=True)
    y = F.avg_pool3d(x, 2, 1, 1, count_include_pad=False)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    return {"grad_fn": [_name(y), _name(g)], "shape": list(y.shape),
            "module": list(T.nn.AvgPool3d(2, ceil_mode=True)(T.ones(1, 1, 3, 3, 3)).shape),
            "errors": [_error(lambda: F.avg_pool3d(x, [2, 2])), _error(lambda: F.avg_pool3d(x, 2, [1, 1])),
                       _error(lambda: F.avg_pool3d(x, 2, 1, [1, 1])), _error(lambda: F.avg_pool3d(x, 2, 1, 2)),
                       _error(lambda: F.avg_pool3d(x, 4)), _error(lambda: F.avg_pool3d(x[0, 0], 2)),
                       _error(lambda: F.avg_pool3d(x, 2, 0)), _error(lambda: F.avg_pool3d(x, 2, divisor_override=0)),
                       _error(lambda: F.avg_pool3d(x.int(), 2))]}


# -- max_pool3d, pixel_shuffle, fold/unfold: their checks and modules ------------------------------------
@scenario
def max_pool3d_checks(T):
    F = _F(T)
    x = T.arange(120.0, dtype=T.float64).reshape(1, 2, 3, 4, 5).requires_grad_()
    y, i = F.max_pool3d(x, 2, 1, 1, return_indices=True)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    module = T.nn.MaxPool3d([2, 3, 2], stride=1, padding=[1, 1, 0], dilation=[1, 2, 1], ceil_mode=True)
    return {"grad_fn": [_name(y), _name(g), _name(F.max_pool3d(x, 2))], "shape": list(y.shape),
            "indices": i.flatten().tolist()[:24], "module": [repr(module), list(module(x).shape)],
            "ints": F.max_pool3d(T.arange(27).reshape(1, 1, 3, 3, 3), 2, 1, 1).flatten().tolist()[:12],
            "empty_batch": list(F.max_pool3d(T.ones(0, 1, 3, 3, 3), 2).shape),
            "errors": [_error(lambda: F.max_pool3d(x, [2, 2])), _error(lambda: F.max_pool3d(x, 2, [1, 1])),
                       _error(lambda: F.max_pool3d(x, 2, 1, [1, 1])),
                       _error(lambda: F.max_pool3d(x, 2, 1, 0, [1, 1])), _error(lambda: F.max_pool3d(x, 2, 1, 2)),
                       _error(lambda: F.max_pool3d(x, 2, 1, 2, 3)), _error(lambda: F.max_pool3d(x, 5)),
                       _error(lambda: F.max_pool3d(x[0, 0], 2)), _error(lambda: F.max_pool3d(x, 2, 0)),
                       _error(lambda: F.max_pool3d(x, 0)), _error(lambda: F.max_pool3d(x, [2, 0, 2], 1)),
                       _error(lambda: F.max_pool3d(x, 2, -1)), _error(lambda: F.max_pool3d(x, 2, dilation=0)),
                       _error(lambda: F.max_pool3d(x, 2, padding=-1)), _error(lambda: F.max_pool3d(x.bool(), 2)),
                       _error(lambda: F.max_pool3d(T.ones(1, 0, 3, 3, 3), 2)),
                       _error(lambda: F.max_pool3d(T.ones(2, 1, 1, 3, 3, 3), 2))]}


@scenario
def pixel_shuffle_checks(T):
    F = _F(T)
    x = T.arange(96.0, dtype=T.float64).reshape(2, 12, 2, 2).requires_grad_()
    y = F.pixel_shuffle(x, 2)
    z = F.pixel_unshuffle(y, 2)
    return {"grad_fn": [_name(y), _name(z)], "values": y[0, 1].flatten().tolist(),
            "round_trip": bool((z == x).all()), "factor_1_copies": F.pixel_shuffle(x, 1).data_ptr() != x.data_ptr(),
            "modules": [repr(T.nn.PixelShuffle(3)), repr(T.nn.PixelUnshuffle(2)),
                        list(T.nn.PixelShuffle(2)(T.ones(3, 8, 2, 2)).shape),
                        list(T.nn.PixelUnshuffle(2)(T.ones(1, 1, 2, 4, 6)).shape)],
            "errors": [_error(lambda: F.pixel_shuffle(x, 3)), _error(lambda: F.pixel_shuffle(x, 0)),
                       _error(lambda: F.pixel_shuffle(x[0, 0], 2)), _error(lambda: F.pixel_unshuffle(x, -2)),
                       _error(lambda: F.pixel_unshuffle(T.ones(1, 3, 2), 2)),
                       _error(lambda: F.pixel_unshuffle(T.ones(1, 2, 3), 2)),
                       _error(lambda: F.pixel_unshuffle(T.ones(4, 4), 2))]}


@scenario
def fold_unfold_checks(T):
    F = _F(T)
    x = T.arange(90.0, dtype=T.float64).reshape(1, 3, 5, 6).requires_grad_()
    u = F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1))
    f = F.fold(u, (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(2, 1))
    c = T.ones(2, 12, 20)
    return {"grad_fn": [_name(u), _name(f)], "shapes": [list(u.shape), list(f.shape)],
            "fold": f[0, 1, 1].tolist(), "unfold": u[0, 7, :6].tolist(),
            "bool": [F.unfold(T.ones(1, 1, 2, 2, dtype=T.bool), 1).dtype == T.bool,
                     F.fold(T.ones(1, 4, 4, dtype=T.bool), (3, 3), 2).flatten().tolist()],
            "modules": [repr(T.nn.Fold((4, 5), 2, padding=1)), repr(T.nn.Unfold(3, stride=2)),
                        list(T.nn.Unfold(3, stride=2)(T.ones(2, 3, 7, 7)).shape),
                        list(T.nn.Fold((5, 6), 2)(c).shape)],
            "unfold_errors": [_error(lambda: F.unfold(x, 0)), _error(lambda: F.unfold(x, 2, 0)),
                              _error(lambda: F.unfold(x, 2, 1, -1)), _error(lambda: F.unfold(x, 2, 1, 0, 0)),
                              _error(lambda: F.unfold(x, 7)), _error(lambda: F.unfold(x[0, 0], 2)),
                              _error(lambda: F.unfold(x[0, 0, 0], 2)), _error(lambda: F.unfold(T.ones(2, 0, 4, 4), 2)),
                              _error(lambda: F.unfold(x.int(), 2)), _error(lambda: F.unfold(x, (2, 3, 4))),
                              _error(lambda: F.unfold(x, [2])), _error(lambda: F.unfold(x[None], 2)),
                              _error(lambda: F.unfold(x, 0, 0, -1, 0))],
            "fold_errors": [_error(lambda: F.fold(c, (6, 7), 2)), _error(lambda: F.fold(c, (5, 6), 3)),
                            _error(lambda: F.fold(c, (5, 6), 2, 0)), _error(lambda: F.fold(c, (5, 6), 0)),
                            _error(lambda: F.fold(c, (5, 6), 2, 1, -1)), _error(lambda: F.fold(c, (5, 6), 2, 1, 0, 0)),
                            _error(lambda: F.fold(c, (0, 6), 2)), _error(lambda: F.fold(c[0, 0], (5, 6), 2)),
                            _error(lambda: F.fold(c.int(), (5, 6), 2)), _error(lambda: F.fold(c, (5,), 2)),
                            _error(lambda: F.fold(c[None], (5, 6), 2)),
                            _error(lambda: F.fold(T.ones(2, 12, 0), (5, 6), 2)),
                            _error(lambda: F.fold(c, (5, 6), 0, 0, -1, 0)), _error(lambda: F.fold(c, 5, 2))]}


@scenario
def grid_sample_checks(T):
    F = _F(T)
    x = T.arange(40.0, dtype=T.float64).reshape(1, 2, 4, 5).requires_grad_()
    theta = T.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]]], dtype=T.float64, requires_grad=True)
    grid = F.affine_grid(theta, [1, 2, 3, 3], align_corners=False)
    y = F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=False)
    (gx, gg) = T.autograd.grad(y.sum(), [x, grid], create_graph=True)
    g = T.zeros(1, 1, 1, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.grid_sample(T.ones(1, 1, 2, 2), g)
        F.affine_grid(T.zeros(1, 2, 3), [1, 1, 2, 2])
        F.affine_grid(T.zeros(1, 2, 3), [1, 1, 1, 2], align_corners=True)
    return {"grad_fn": [_name(y), _name(gx), _name(gg)], "values": _round(y.flatten().tolist()),
            "grid": _round(grid.flatten().tolist()),
            "identity": _round(F.affine_grid(T.tensor([[[1.0, 0, 0], [0, 1.0, 0]]]), [1, 1, 2, 3],
                                             align_corners=True).flatten().tolist()),
            "3d": list(F.affine_grid(T.zeros(2, 3, 4), [2, 1, 2, 3, 4], align_corners=False).shape),
            "warnings": [str(w.message) for w in caught],
            "errors": [_error(lambda: F.grid_sample(x, grid, "linear")),
                       _error(lambda: F.grid_sample(x, grid, padding_mode="edge")),
                       _error(lambda: F.grid_sample(x, T.zeros(2, 3, 3, 2, dtype=T.float64), align_corners=True)),
                       _error(lambda: F.grid_sample(x, T.zeros(1, 3, 3, 1, dtype=T.float64), align_corners=True)),
                       _error(lambda: F.grid_sample(x[:, :, :0], grid, align_corners=True)),
                       _error(lambda: F.grid_sample(x, T.zeros(1, 3, 2, dtype=T.float64), align_corners=True)),
                       _error(lambda: F.grid_sample(x[0], T.zeros(2, 3, 1), align_corners=True)),
                       _error(lambda: F.grid_sample(x[None], T.zeros(1, 1, 3, 3, 3, dtype=T.float64), mode="bicubic",
                                                    align_corners=True)),
                       _error(lambda: F.grid_sample(x, grid.float(), align_corners=True)),
                       _error(lambda: F.grid_sample(x.int(), grid.int(), align_corners=True)),
                       _error(lambda: F.affine_grid(theta, [1, 2, 3, 3, 3], align_corners=False)),
                       _error(lambda: F.affine_grid(theta, [1, 2, 3], align_corners=False)),
                       _error(lambda: F.affine_grid(theta.int(), [1, 2, 3, 3], align_corners=False)),
                       _error(lambda: F.affine_grid(theta, [1, 2, 0, 3], align_corners=False)),
                       _error(lambda: F.affine_grid(theta[0], [1, 2, 3, 3], align_corners=False)),
                       _error(lambda: F.affine_grid(theta, [2, 2, 3, 3], align_corners=False))]}


@scenario
def grid_sampler_3d_checks(T):
    """torch.grid_sampler's dispatch on the input's rank, grid_sampler_3d's checks, affine_grid_generator's."""
    x = T.arange(36.0, dtype=T.float64).reshape(1, 2, 2, 3, 3).requires_grad_()
    theta = T.tensor([[[0.9, 0.2, 0.1, 0.0], [-0.1, 1.1, 0.05, 0.2], [0.1, 0.0, 0.8, -0.1]]], dtype=T.float64,
                     requires_grad=True)
    grid = T.affine_grid_generator(theta, [1, 2, 2, 2, 3], False)
    y = T.grid_sampler(x, grid, 0, 2, False)
    (gx, gg) = T.autograd.grad(y.sum(), [x, grid], create_graph=True)
    (gt,) = T.autograd.grad((gg * gg).sum() + (gx * gx).sum(), [theta])
    g2 = T.zeros(2, 2, 2, 2, dtype=T.float64)
    return {"grad_fn": [_name(y), _name(gx), _name(gg), _name(grid)], "values": _round(y.flatten().tolist()),
            "theta_grad": _round(gt.flatten().tolist()),
            "2d": _name(T.grid_sampler(x[0], g2, 1, 0, True)),
            "errors": [_error(lambda: T.grid_sampler_3d(x, grid, 2, 0, False)),
                       _error(lambda: T.grid_sampler(x, grid, 2, 0, False)),
                       _error(lambda: T.grid_sampler_3d(x, grid.float(), 0, 0, False)),
                       _error(lambda: T.grid_sampler_3d(x.int(), grid.int(), 0, 0, False)),
                       _error(lambda: T.grid_sampler_3d(x[0], grid[0], 0, 0, False)),
                       _error(lambda: T.grid_sampler(x[0], grid[0], 0, 0, False)),
                       _error(lambda: T.grid_sampler(x, grid[..., :2], 0, 0, False)),
                       _error(lambda: T.grid_sampler_3d(x, T.zeros(2, 2, 2, 2, 3, dtype=T.float64), 0, 0, False)),
                       _error(lambda: T.grid_sampler_3d(x[:, :, :0], grid, 0, 0, False)),
                       _error(lambda: T.affine_grid_generator(theta, [1, 2, 3], False)),
                       _error(lambda: T.affine_grid_generator(theta, [2, 2, 3, 3, 3], False)),
                       _error(lambda: T.affine_grid_generator(theta, [1, 2, 3, 3], False)),
                       _error(lambda: T.affine_grid_generator(theta[0], [1, 2, 3, 3, 3], False))]}


@scenario
def recurrent_function_checks(T):
    """torch.lstm / gru / rnn_tanh and the cells with nn.LSTM's and nn.GRU's flat weights: values, grad_fns
    and ATen's checks (two hidden states, the parameter count, the layers' hidden states and weights)."""
    def values(*shape, step=0.37):
        n = 1
        for size in shape:
            n *= size
        return (T.arange(n, dtype=T.float64).reshape(shape) * step).sin() * 0.5

    x = values(5, 3, 4, step=0.7).requires_grad_()
    h, c = values(2, 3, 6, step=0.3), values(2, 3, 6, step=0.9)
    p = [values(*w.shape, step=0.1 * (i + 1)) for i, w in enumerate(T.nn.LSTM(4, 6, 2)._flat_weights)]
    q = [values(*w.shape, step=0.2 * (i + 1)) for i, w in enumerate(T.nn.GRU(4, 6, 1)._flat_weights)]
    out, hn, cn = T.lstm(x, [h, c], p, True, 2, 0.0, False, False, False)
    g_out, g_h = T.gru(x.transpose(0, 1), h[:1], q, True, 1, 0.0, False, False, True)
    cell = T.lstm_cell(x[0], [h[0], c[0]], *p[:4])
    return {"lstm": _round(out.sum(0).flatten().tolist()) + _round(hn.flatten().tolist()),
            "gru": _round(g_h.flatten().tolist()), "cell": _round(cell[1].flatten().tolist()),
            "grad_fn": [_name(out), _name(hn), _name(cn), _name(g_out), _name(g_h), _name(cell[0]),
                        _name(cell[1]), _name(T.gru_cell(x[0], h[0], *q)),
                        _name(T.rnn_tanh_cell(x[0], h[0], q[0][:6], q[1][:6, :6])),
                        _name(T.rnn_relu_cell(x[0], h[0], q[0][:6], q[1][:6, :6]))],
            "errors": [_error(lambda: T.lstm(x, [h], p, True, 2, 0.0, False, False, False)),
                       _error(lambda: T.lstm(x, [h, c], p[:-1], True, 2, 0.0, False, False, False)),
                       _error(lambda: T.lstm(x, [h, c], p[:4], True, 2, 0.0, False, False, False)),
                       _error(lambda: T.lstm(x, [h[:1], c[:1]], p, True, 2, 0.0, False, False, False)),
                       _error(lambda: T.lstm(x, [h, c], p, True, 2, 0.0, False, True, False)),
                       _error(lambda: T.lstm(x[:0], [h, c], p, True, 2, 0.0, False, False, False)),
                       _error(lambda: T.gru(x, h, q, True, 1, 0.0, False, False, False)),
                       _error(lambda: T.gru(x, h[:1], q, True, 1, 0.0, False, True, False)),
                       _error(lambda: T.gru_cell(x[0], h[0, :2], *q)),
                       _error(lambda: T.gru_cell(x[0], h[0, :, :5], *q)),
                       _error(lambda: T.gru_cell(x[0, :, :3], h[0], *q)),
                       _error(lambda: T.lstm_cell(x[0], [h[0]], *p[:4])),
                       _error(lambda: T.lstm_cell(x[0], [h[0], c[0, :, :5]], *p[:4]))]}


@scenario
def aten_function_checks(T):
    """torch.range (deprecated, end included), embedding_renorm_, rrelu_, native_dropout out of training,
    and the checks of convolution, conv_tbc, native_group_norm and native_dropout."""
    x = T.arange(24.0, dtype=T.float64).reshape(2, 3, 4).sin().requires_grad_()
    w = T.arange(12.0, dtype=T.float64).reshape(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranges = [T.range(1, 4).tolist(), T.range(1, 4).dtype == T.float32, T.range(0, 1, 0.25).tolist(),
                  T.range(1, 4, dtype=T.int64).tolist(), T.range(4, 1, -1.5).tolist(),
                  _error(lambda: T.range(1, 4, 0)), _error(lambda: T.range(4, 1))]
    renormed = T.embedding_renorm_(w.clone(), T.tensor([0, 2, 2]), 5.0, 2.0)
    y = x * 1
    kept, mask = T.native_dropout(x, 0.5, False)
    gone, none = T.native_dropout(x, 1.0, True)
    tbc = T.conv_tbc(x.transpose(0, 1).contiguous(), T.ones(2, 4, 5, dtype=T.float64), T.zeros(5, dtype=T.float64), 1)
    return {"range": ranges, "warnings": [str(c.message) for c in caught],
            "embedding_renorm_": _round(renormed.flatten().tolist()),
            "rrelu_": [_name(T.rrelu_(y, 0.1, 0.3)), y is T.rrelu_(y), _round(y.flatten().tolist())],
            "native_dropout": [_name(kept), mask.all().item(), mask.dtype == T.bool, gone.abs().sum().item(),
                               none.any().item()],
            "conv_tbc": [list(tbc.shape), _name(tbc)],
            "adaptive_max_pool1d": [[_round(t.flatten().tolist()) for t in T.adaptive_max_pool1d(x, 3)],
                                    _name(T.adaptive_max_pool1d(x, 3)[0])],
            "errors": [_error(lambda: T.embedding_renorm_(w.clone().requires_grad_(), T.tensor([0]), 5.0, 2.0)),
                       _error(lambda: T.embedding_renorm_(T.ones(3), T.tensor([0]), 5.0, 2.0)),
                       _error(lambda: T.embedding_renorm_(w.clone(), T.tensor([0.0]), 5.0, 2.0)),
                       _error(lambda: T.native_dropout(x, 1.5, True)),
                       _error(lambda: T.native_group_norm(x, None, None, 2, 3, 5, 3, 1e-5)),
                       _error(lambda: T.native_group_norm(x, None, None, 2, 3, 4, 2, 1e-5)),
                       _error(lambda: T.convolution(x[0], T.ones(2, 3, 2, dtype=T.float64), None, [1], [0], [1], False,
                                                    [0], 1)),
                       _error(lambda: T.convolution(x, T.ones(2, 3, 2, dtype=T.float64), None, [1, 1], [0], [1], False,
                                                    [0], 1)),
                       _error(lambda: T.conv_tbc(x[0], T.ones(2, 4, 5, dtype=T.float64), T.zeros(5, dtype=T.float64))),
                       _error(lambda: T.conv_tbc(x, T.ones(2, 4), T.zeros(5, dtype=T.float64))),
                       _error(lambda: T.conv_tbc(x, T.ones(2, 4, 5, dtype=T.float64), T.zeros(1, 5, dtype=T.float64))),
                       _error(lambda: T.conv_tbc(x, T.ones(2, 3, 5, dtype=T.float64), T.zeros(5, dtype=T.float64))),
                       _error(lambda: T.conv_tbc(x, T.ones(2, 4, 5, dtype=T.float64), T.zeros(4, dtype=T.float64)))]}


@scenario
def top_level_functions(T):
    """torch's top-level in-place functions (torch.abs_(x) is x.abs_()), the nn.functional ones it
    re-exports, broadcast_shapes, and the checks of cdist, aminmax, frexp, gcd, combinations, inner and
    chain_matmul."""
    x = T.tensor([[-1.5, 0.25], [2.0, -0.5]], dtype=T.float64, requires_grad=True)
    names = []
    for name, args in (("abs_", ()), ("clamp_", (-1.0, 1.0)), ("cos_", ()), ("sigmoid_", ()), ("round_", ()),
                       ("nan_to_num_", ()), ("xlogy_", (2.0,)), ("relu_", ()), ("celu_", ()), ("selu_", ()),
                       ("threshold_", (0.1, 20.0))):
        y = x * 1
        out = getattr(T, name)(y, *args)
        names.append([name, out is y, _name(y), [round(v, 12) for v in y.detach().flatten().tolist()]])
    z = T.tensor([4, 6, 9])
    T.gcd_(z, T.tensor([6, 4, 3]))
    w = T.tensor([1.0, 2.0])
    T.ldexp_(w, T.tensor([1, 3]))
    ones = T.ones(2, 3, 2)
    return {"in_place": names, "gcd_": z.tolist(), "ldexp_": w.tolist(),
            "dropouts": [T.feature_dropout(ones, 0.0, True).tolist(), T.feature_dropout(ones, 1.0, True).tolist(),
                         T.alpha_dropout(ones, 0.5, False).tolist(), T.dropout_(ones.clone(), 0.0, True).tolist(),
                         _error(lambda: T.feature_alpha_dropout_(T.ones(3), 0.5, True))],
            "channel_shuffle": T.channel_shuffle(T.arange(8.0).reshape(1, 4, 2), 2).tolist(),
            "bilinear": list(T.bilinear(T.ones(2, 3), T.ones(2, 4), T.ones(5, 3, 4), None).shape),
            "broadcast_shapes": [list(T.broadcast_shapes((2,), (3, 1), (1, 1, 1))), list(T.broadcast_shapes()),
                                 list(T.broadcast_shapes(3, [2, 1])), list(T.broadcast_shapes((0, 1), (1,))),
                                 _error(lambda: T.broadcast_shapes((2, 3), (4,))),
                                 _error(lambda: T.broadcast_shapes((1,), (-1,)))],
            "errors": [_error(lambda: T.cdist(T.ones(3), T.ones(2, 3))),
                       _error(lambda: T.cdist(T.ones(2, 3), T.ones(2, 4))),
                       _error(lambda: T.cdist(T.ones(2, 3), T.ones(2, 3), -1.0)),
                       _error(lambda: T.cdist(T.ones(2, 3), T.ones(2, 3), compute_mode="fast")),
                       _error(lambda: T.cdist(T.ones(2, 3, dtype=T.int64), T.ones(2, 3, dtype=T.int64))),
                       _error(lambda: T.aminmax(T.ones(0))), _error(lambda: T.aminmax(T.ones(2, 0), dim=1)),
                       _error(lambda: T.frexp(T.tensor([1, 2]))), _error(lambda: T.gcd(T.ones(2), T.ones(2))),
                       _error(lambda: T.combinations(T.ones(2, 2))), _error(lambda: T.combinations(T.ones(2), -1)),
                       _error(lambda: T.inner(T.ones(2, 3), T.ones(2))),
                       _error(lambda: T.chain_matmul()), _error(lambda: T.chain_matmul(T.ones(2, 2), T.ones(2))),
                       _error(lambda: T.quantile(T.ones(3), 1.5)), _error(lambda: T.quantile(T.ones(3), T.tensor(2.0))),
                       _error(lambda: T.quantile(T.ones(3), 0.5, interpolation="cubic")),
                       _error(lambda: T.quantile(T.ones(3, dtype=T.int64), 0.5)),
                       _error(lambda: T.quantile(T.ones(3), T.tensor(0.5, dtype=T.float64))),
                       _error(lambda: T.nanquantile(T.ones(0), 0.5)),
                       _error(lambda: T.nanquantile(T.ones(3), T.ones(1, 1))),
                       _error(lambda: T.histc(T.tensor([1, 2]), 3)), _error(lambda: T.histc(T.ones(2), 0)),
                       _error(lambda: T.histc(T.ones(2), 3, 2, 1)),
                       _error(lambda: T.histc(T.ones(2), 3, 0, float("inf"))),
                       _error(lambda: T.renorm(T.ones(3), 2, 0, 1.0)), _error(lambda: T.renorm(T.ones(2, 2), 0, 0, 1.0)),
                       _error(lambda: T.renorm(T.ones(2, 2), 2, 0, -1.0)),
                       _error(lambda: T.mode(T.ones(2, 0), 1)), _error(lambda: T.nextafter(T.tensor([1]), T.tensor([2]))),
                       _error(lambda: T.dist(T.ones(2, 3), T.ones(4)))],
            "write errors": [_error(lambda: T.index_copy(T.zeros(3, 4), 0, T.tensor([0.0]), T.ones(1, 4))),
                             _error(lambda: T.index_copy(T.zeros(3, 4), 0, T.tensor([0, 1]), T.ones(1, 4))),
                             _error(lambda: T.index_copy(T.zeros(3, 4), 0, T.tensor([[0]]), T.ones(1, 4))),
                             _error(lambda: T.index_copy(T.zeros(3, 4), 0, T.tensor([5]), T.ones(1, 4))),
                             _error(lambda: T.index_copy(T.zeros(3, 4), 0, T.tensor([0]),
                                                         T.ones(1, 4, dtype=T.float64))),
                             _error(lambda: T.index_fill(T.zeros(3, 4), 0, T.tensor([0.0]), 1)),
                             _error(lambda: T.index_fill(T.zeros(3, 4), 0, T.tensor([7]), 1)),
                             _error(lambda: T.index_fill(T.zeros(3, 4), 0, T.tensor([0]), T.ones(2))),
                             _error(lambda: T.masked_scatter(T.zeros(3, 4), T.ones(3, 4), T.ones(12))),
                             _error(lambda: T.masked_scatter(T.zeros(3, 4), T.ones(3, 4, dtype=T.bool), T.ones(5))),
                             _error(lambda: T.masked_scatter(T.zeros(3, 4), T.ones(3, 4, dtype=T.bool),
                                                             T.ones(12, dtype=T.float64))),
                             _error(lambda: T.slice_scatter(T.zeros(3, 4), T.ones(3, 3), 1, 0, 4, 2)),
                             _error(lambda: T.slice_scatter(T.zeros(3, 4), T.ones(3, 2), 1, 0, 4, 0)),
                             _error(lambda: T.select_scatter(T.zeros(3, 4), T.ones(4), 1, 2)),
                             _error(lambda: T.select_scatter(T.zeros(3, 4), T.ones(3), 1, 9)),
                             _error(lambda: T.diagonal_scatter(T.zeros(3, 4), T.ones(4))),
                             _error(lambda: T.put(T.zeros(3, 4), T.tensor([0, 13]), T.ones(2))),
                             _error(lambda: T.put(T.zeros(3, 4), T.tensor([0, 1]), T.ones(3))),
                             _error(lambda: T.put(T.zeros(3, 4), T.tensor([0.0, 1]), T.ones(2))),
                             _error(lambda: T.put(T.zeros(3, 4), T.tensor([0, -1]), T.ones(2, dtype=T.float64)))],
            "tensordot": [list(T.tensordot(T.ones(2, 3), T.ones(3, 2), dims=([1], [0])).shape),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 4), (1, 0))),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 2), dims=-1)),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 2), dims=3)),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 2), dims=1.5)),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(2, 2), dims=([1], [0]))),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 2), dims=([1, 0], [0]))),
                          _error(lambda: T.tensordot(T.ones(2, 3), T.ones(3, 2, dtype=T.float64), 1))],
            "triangle indices": [T.tril_indices(3, 4, 1).tolist(), T.triu_indices(4, 3, -1).tolist(),
                                 str(T.triu_indices(4, 3, -1).dtype).split(".")[-1], list(T.tril_indices(0, 3).shape),
                                 str(T.tril_indices(3, 3, dtype=T.int32).dtype).split(".")[-1],
                                 T.triu_indices(2, 5, 2).tolist(),
                                 _error(lambda: T.tril_indices(-1, 3)), _error(lambda: T.triu_indices(3, -2)),
                                 _error(lambda: T.tril_indices(3, 3, dtype=T.float32)),
                                 _error(lambda: T.tril_indices(3, 3, dtype=T.int16))],
            "solver errors": [_error(lambda: T.triangular_solve(T.ones(3), T.eye(3))),
                              _error(lambda: T.triangular_solve(T.ones(3, 2), T.ones(3, 2))),
                              _error(lambda: T.triangular_solve(T.ones(2, 2), T.eye(3))),
                              _error(lambda: T.triangular_solve(T.ones(3, 2, dtype=T.float64), T.eye(3))),
                              _error(lambda: T.cholesky_solve(T.ones(3), T.eye(3))),
                              _error(lambda: T.cholesky_solve(T.ones(3, 2), T.ones(3, 2))),
                              _error(lambda: T.cholesky_solve(T.ones(2, 2), T.eye(3))),
                              _error(lambda: T.cholesky_inverse(T.ones(3))),
                              _error(lambda: T.cholesky_inverse(T.ones(3, 2)))],
            "in-place writes": [T.zeros(2, 3).index_fill_(1, T.tensor([0, 2]), 5.0).tolist(),
                                T.zeros(3, 2).index_copy_(0, T.tensor([2, 0]), T.ones(2, 2)).tolist(),
                                T.zeros(2, 2).masked_scatter_(T.tensor([[True, False], [False, True]]),
                                                              T.tensor([7.0, 8.0, 9.0])).tolist(),
                                T.zeros(2, 2).put_(T.tensor([3, 3]), T.tensor([1.0, 2.0]), True).tolist()],
            "nanquantile all nan": T.nanquantile(T.tensor([float("nan")] * 3), 0.5).isnan().item(),
            "histc ranges": [T.histc(T.tensor([1.0, 2, 1, 4, 5, 0.5, 7]), 4, 1, 5).tolist(),
                             T.histc(T.tensor([3.0, 3.0]), 4).tolist(), T.histc(T.ones(0), 3).tolist()],
            "combinations r=0": list(T.combinations(T.ones(3), 0).shape),
            "cdist empty": list(T.cdist(T.ones(0, 3), T.ones(2, 3)).shape),
            "cdist no columns": T.cdist(T.ones(2, 0), T.ones(3, 0)).tolist()}
