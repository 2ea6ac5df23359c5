"""torch's functions that are not ops of agrad's table, as scenarios that run on PyTorch and on agrad
alike: the factories that take no tensor (the window functions), those that make a tensor from other
data (asarray, frombuffer, scalar_tensor), torch.functional's unravel_index: values, dtypes,
requires_grad and the messages of bad arguments; torch.return_types' named-tuple types; torch.cond and
torch.while_loop; empty_permuted; DLPack; the linear-algebra functions PyTorch removed.

`tests/reference/make_torch_functions_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/torch_functions.json`; `test_torch_functions_reference.py` runs them on agrad and
compares (floats to 1e-6 relative: float32 windows may differ from PyTorch's in the last bit of
a cosine).
"""
from __future__ import annotations

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _described(t):
    return {"values": t.tolist(), "dtype": str(t.dtype).split(".")[-1], "shape": list(t.shape),
            "requires_grad": t.requires_grad, "is_leaf": t.is_leaf}


_WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@scenario
def window_functions(T):
    out = {}
    for name in _WINDOWS:
        fn = getattr(T, name)
        out[name] = {
            "default": _described(fn(7)),
            "symmetric_float64": _described(fn(6, False, dtype=T.float64)),
            "periodic_even_float64": _described(fn(8, True, dtype=T.float64)),
            "length_0": _described(fn(0)), "length_1": _described(fn(1, dtype=T.float64)),
            "length_2_symmetric": _described(fn(2, periodic=False, dtype=T.float64)),
            "float16": _described(fn(5, dtype=T.float16)),
            "requires_grad": _described(fn(4, requires_grad=True)),
            "negative": _error(lambda: fn(-2)),
            "integer_dtype": _error(lambda: fn(4, dtype=T.int64)),
            "int32_dtype": _error(lambda: fn(4, dtype=T.int32)),
        }
    out["hamming_alpha_beta"] = [_described(T.hamming_window(5, False, 0.6, dtype=T.float64)),
                                 _described(T.hamming_window(6, True, 0.6, 0.3, dtype=T.float64))]
    out["kaiser_beta"] = [_described(T.kaiser_window(6, False, 5.0, dtype=T.float64)),
                          _described(T.kaiser_window(9, True, 0.5, dtype=T.float64)),
                          _described(T.kaiser_window(5, True, 30.0))]
    return out


@scenario
def scalar_tensor(T):
    return {"int": _described(T.scalar_tensor(3)), "bool": _described(T.scalar_tensor(True)),
            "float": _described(T.scalar_tensor(-2.5)),
            "int64": _described(T.scalar_tensor(7, dtype=T.int64)),
            "float64 requires_grad": _described(T.scalar_tensor(1.5, dtype=T.float64, requires_grad=True))}


def _asarray_case(T, make, **kwargs):
    """What asarray(make(), **kwargs) gives: the result, whether it is the input object or shares its memory,
    and what became of the input; or the error."""
    import warnings
    obj = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = T.asarray(obj, **kwargs)
        except Exception as exc:  # noqa: BLE001 — the scenario records what was raised
            return {"error": [type(exc).__name__, str(exc)]}
    before = obj.tolist() if hasattr(obj, "tolist") else None
    first = out.reshape(-1)[:1]
    if out.numel() and out.dtype in (T.float32, T.float64, T.int64, T.int32):
        with T.no_grad():
            first.add_(100)           # the memory shared, or not
    after = obj.tolist() if hasattr(obj, "tolist") else None
    grad_fn = out.grad_fn
    return {"out": _described(out.detach()), "requires_grad": out.requires_grad, "is_leaf": out.is_leaf,
            "grad_fn": None if grad_fn is None else type(grad_fn).__name__, "is_input": out is obj,
            "shares_memory": before != after if before is not None else None,
            "input_requires_grad": getattr(obj, "requires_grad", None),
            "warned": sorted({str(w.message)[:60] for w in caught})}


@scenario
def asarray(T):
    import numpy as np

    def leaf():
        return T.tensor([1.0, 2.0], requires_grad=True)

    def non_leaf():
        return T.tensor([1.0, 2.0], requires_grad=True) * 2

    def plain():
        return T.tensor([1.0, 2.0, 3.0])

    cases = {
        "tensor": (plain, {}), "tensor copy": (plain, {"copy": True}),
        "tensor float64": (plain, {"dtype": T.float64}),
        "tensor float64 copy=False": (plain, {"dtype": T.float64, "copy": False}),
        "tensor int64 copy=True": (plain, {"dtype": T.int64, "copy": True}),
        "tensor requires_grad": (plain, {"requires_grad": True}),
        "leaf": (leaf, {}), "leaf requires_grad=False": (leaf, {"requires_grad": False}),
        "leaf copy": (leaf, {"copy": True}),
        "leaf copy requires_grad=False": (leaf, {"copy": True, "requires_grad": False}),
        "non-leaf": (non_leaf, {}), "non-leaf requires_grad=False": (non_leaf, {"requires_grad": False}),
        "non-leaf float64": (non_leaf, {"dtype": T.float64}),
        "int tensor requires_grad": (lambda: T.tensor([1, 2]), {"requires_grad": True}),
        "numpy int": (lambda: np.array([1, 2, 3]), {}),
        "numpy float64 as float32": (lambda: np.array([1.0, 2.0]), {"dtype": T.float32}),
        "numpy float64 as float32 copy=False": (lambda: np.array([1.0, 2.0]), {"dtype": T.float32, "copy": False}),
        "numpy copy": (lambda: np.array([1.0, 2.0]), {"copy": True}),
        "numpy requires_grad": (lambda: np.array([1.0, 2.0]), {"requires_grad": True}),
        "numpy scalar": (lambda: np.float32(2.5), {}),
        "numpy int16 scalar": (lambda: np.int16(3), {}),
        "list int": (lambda: [1, 2], {}), "list float": (lambda: [1.0, 2.0], {}),
        "list mixed": (lambda: [1, 2.5, True], {}), "nested float64": (lambda: [[1, 2], [3, 4]], {"dtype": T.float64}),
        "list as int64": (lambda: [1.0, 2.7], {"dtype": T.int64}),
        "list copy=False": (lambda: [1, 2], {"copy": False}), "number": (lambda: 3, {}), "float": (lambda: 3.5, {}),
        "bool": (lambda: True, {}), "list requires_grad": (lambda: [1.0, 2.0], {"requires_grad": True}),
        "int list requires_grad": (lambda: [1, 2], {"requires_grad": True}),
        "bytearray int32": (lambda: bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00"), {"dtype": T.int32}),
        "bytearray default dtype": (lambda: bytearray(b"\x00\x00\x80\x3f"), {}),
        "bytes odd length": (lambda: b"\x01\x02", {}),
    }
    return {name: _asarray_case(T, make, **kwargs) for name, (make, kwargs) in cases.items()}


@scenario
def frombuffer(T):
    def case(buffer, **kwargs):
        try:
            return _described(T.frombuffer(buffer, **kwargs))
        except Exception as exc:  # noqa: BLE001
            return [type(exc).__name__, str(exc)]
    data = bytearray(range(1, 17))
    shared = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    t = T.frombuffer(shared, dtype=T.int32)
    shared[0] = 7
    return {"int32": case(data, dtype=T.int32), "uint8 count offset": case(data, dtype=T.uint8, count=4, offset=3),
            "int16 offset": case(data, dtype=T.int16, offset=2), "float64": case(data, dtype=T.float64),
            "shared": t.tolist(), "requires_grad": case(bytearray(8), dtype=T.float32, requires_grad=True),
            "empty": case(bytearray(), dtype=T.int32), "count 0": case(data, dtype=T.int32, count=0),
            "offset past end": case(data, dtype=T.int32, offset=16),
            "negative offset": case(data, dtype=T.int32, offset=-1),
            "not a multiple": case(data, dtype=T.int32, offset=1),
            "count too large": case(data, dtype=T.int32, count=5),
            "count too large offset": case(data, dtype=T.int16, count=8, offset=2),
            "not a buffer": case([1, 2], dtype=T.int32)}


@scenario
def unravel_index(T):
    def case(indices, shape):
        try:
            return [t.tolist() for t in T.unravel_index(indices, shape)]
        except Exception as exc:  # noqa: BLE001
            return [type(exc).__name__, str(exc).replace(T.__name__ + ".", "LIB.")]
    return {"vector": case(T.tensor([4, 1, 5]), (2, 3)), "0-d int shape": case(T.tensor(7), 5),
            "negative": case(T.tensor([-1, -6]), (2, 3)), "2-D int32": case(T.tensor([[0, 11], [5, 6]],
                                                                                        dtype=T.int32), [3, 2, 2]),
            "past the end wraps": case(T.tensor([6, 13]), (2, 3)), "empty shape": case(T.tensor([0]), ()),
            "float indices": case(T.tensor([1.0]), (2,)), "bool indices": case(T.tensor([True]), (2,)),
            "float in shape": case(T.tensor([1]), (2.0,)), "negative shape": case(T.tensor([1]), (-2, 3)),
            "float shape": case(T.tensor([1]), 2.0), "str shape": case(T.tensor([1]), "ab")}


@scenario
def histogram_and_histogramdd(T):
    """histogram's two forms (bin count, edge tensor) and histogramdd's (ints, edge tensors), their
    results and grad_fn, and the checks of ATen's histogramdd with their messages."""
    def case(call):
        try:
            out = call()
        except Exception:  # noqa: BLE001 — the scenario records what was raised
            return _error(call)
        edges = out.bin_edges if isinstance(out.bin_edges, tuple) else (out.bin_edges,)
        return {"type": type(out).__name__, "hist": _described(out.hist.detach()),
                "edges": [e.detach().tolist() for e in edges], "grad_fn": _name(out.hist)}

    def _name(t):
        return None if t.grad_fn is None else type(t.grad_fn).__name__

    x = T.tensor([1.0, 2, 1, 4, 2.5, 2])
    y = T.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5], [0.3, 2.0]])
    return {
        "bin count requires grad": case(lambda: T.histogram(x.clone().requires_grad_(), 3)),
        "edges": case(lambda: T.histogram(x, T.tensor([0.0, 1.5, 2.0, 5.0]))),
        "range weight density": case(lambda: T.histogram(x, 4, range=(0.0, 3.0),
                                                         weight=T.tensor([1.0, 2, 3, 4, 5, 6]), density=True)),
        "one value": case(lambda: T.histogram(T.tensor([3.0, 3.0]), 2)),
        "empty": case(lambda: T.histogram(T.tensor([]), 2)),
        "2-D weight": case(lambda: T.histogram(T.tensor([[1.0, 2], [3, 4]]), 2, weight=T.tensor([[1.0, 1], [2, 2]]))),
        "decreasing edges": case(lambda: T.histogram(x, T.tensor([2.0, 1.0]))),
        "int input": case(lambda: T.histogram(T.tensor([1, 2]), 2)),
        "0 bins": case(lambda: T.histogram(x, 0)),
        "min > max": case(lambda: T.histogram(x, 2, range=(3.0, 1.0))),
        "weight shape": case(lambda: T.histogram(x, 2, weight=T.ones(3))),
        "weight dtype": case(lambda: T.histogram(x, 2, weight=T.ones(6, dtype=T.float64))),
        "2-D edges": case(lambda: T.histogram(x, T.tensor([[1.0, 2.0]]))),
        "no edges": case(lambda: T.histogram(x, T.tensor([]))),
        "nan range": case(lambda: T.histogram(x, 2, range=(float("nan"), 1.0))),
        "inf data": case(lambda: T.histogram(T.tensor([1.0, float("inf")]), 2)),
        "edges dtype": case(lambda: T.histogram(x.double(), T.tensor([0.0, 1.0]))),
        "range of 3": case(lambda: T.histogram(x, 2, range=[0.0, 1.0, 2.0])),
        "dd ints": case(lambda: T.histogramdd(y, bins=[2, 3])),
        "dd int range density": case(lambda: T.histogramdd(y, bins=2, range=[0.0, 2.0, 0.0, 2.0], density=True)),
        "dd edges": case(lambda: T.histogramdd(y, bins=[T.tensor([0.0, 1.0, 2.0]), T.tensor([0.0, 2.0])])),
        "dd weight": case(lambda: T.histogramdd(y, bins=[2, 2], weight=T.tensor([1.0, 2.0, 3.0, 4.0]))),
        "dd requires grad": case(lambda: T.histogramdd(y.clone().requires_grad_(), bins=[2, 1])),
        "dd bins count": case(lambda: T.histogramdd(y, bins=[2, 3, 4])),
        "dd edge count": case(lambda: T.histogramdd(y, bins=[T.tensor([0.0, 1.0, 2.0])])),
        "dd empty edges": case(lambda: T.histogramdd(y, bins=[T.tensor([0.0, 1.0]), T.tensor([])])),
        "dd 0 bins": case(lambda: T.histogramdd(y, bins=[2, 0])),
        "dd range of 3": case(lambda: T.histogramdd(y, bins=2, range=[0.0, 1.0, 2.0])),
        "dd 1-D input": case(lambda: T.histogramdd(T.tensor([1.0, 2.0, 3.0]), bins=2)),
    }


@scenario
def gradient(T):
    """torch.gradient's forms (a number, one per dim, coordinates), edge orders, an integer input, the
    gradients through it (coordinates' included), and its checks."""
    x = T.tensor([[1.0, 2, 4, 8, 10], [0, 3, 1, 2, 7], [5, 5, 1, 0, 2]], dtype=T.float64, requires_grad=True)
    rows = T.tensor([0.0, 1, 3], dtype=T.float64, requires_grad=True)
    columns = T.tensor([0.0, 0.5, 2, 2.5, 4], dtype=T.float64)
    out = {"default": [g.tolist() for g in T.gradient(x.detach())],
           "number dim edge_order 2": [g.tolist() for g in T.gradient(x.detach(), spacing=2.0, dim=1, edge_order=2)],
           "per dim": [g.tolist() for g in T.gradient(x.detach(), spacing=[0.5, 3.0])],
           "coordinates edge_order 2": [g.tolist() for g in T.gradient(x.detach(), spacing=(rows.detach(), columns),
                                                                       edge_order=2)],
           "coordinates dim -1": [g.tolist() for g in T.gradient(x.detach(), spacing=[columns], dim=-1)],
           "int": [[g.tolist(), str(g.dtype).split(".")[-1]] for g in T.gradient(T.tensor([1, 4, 9, 16]))]}
    gx, gy = T.gradient(x, spacing=(rows, columns), edge_order=2)
    (gx * T.arange(15.0, dtype=T.float64).reshape(3, 5)).sum().add(gy.pow(2).sum()).backward()
    out["backward"] = [x.grad.tolist(), rows.grad.tolist(), type(gx.grad_fn).__name__]
    for name, call in {"spacing length": lambda: T.gradient(x, spacing=[1.0, 2, 3]),
                       "spacing and dim": lambda: T.gradient(x, spacing=[1.0, 2], dim=1),
                       "edge_order 3": lambda: T.gradient(x, edge_order=3),
                       "repeated dim": lambda: T.gradient(x, dim=[0, 0]),
                       "too short": lambda: T.gradient(T.ones(2, 3), edge_order=2),
                       "2-D coordinates": lambda: T.gradient(x, spacing=[T.ones(2, 2)], dim=0),
                       "uint8": lambda: T.gradient(T.tensor([1, 2], dtype=T.uint8))}.items():
        out[name] = _error(call)
    return out


@scenario
def return_types(T):
    """torch.return_types: each type's field names, and the type that ops with several results return."""
    rt = T.return_types
    names = sorted(n for n in rt.__all__ if not n.endswith("_out") and n not in ("pytree_register_structseq",
                                                                                  "all_return_types"))
    x = T.tensor([[1.5, 3.0], [0.25, -4.0]], dtype=T.float64)
    calls = {"max": lambda: T.max(x, 0), "min": lambda: x.min(1), "sort": lambda: x.sort(), "topk": lambda: x.topk(1),
             "frexp": lambda: T.frexp(x), "geqrf": lambda: T.geqrf(x), "histogram": lambda: T.histogram(x, 3),
             "histogramdd": lambda: T.histogramdd(x, 2), "aminmax": lambda: T.aminmax(x),
             "cummax": lambda: x.cummax(0), "linalg_eigh": lambda: T.linalg.eigh(x @ x.mT),
             "linalg_slogdet": lambda: T.linalg.slogdet(x), "linalg_qr": lambda: T.linalg.qr(x), "svd": lambda: T.svd(x),
             "linalg_lstsq": lambda: T.linalg.lstsq(x, x)}
    returned = {}
    for name, call in calls.items():
        result = call()
        returned[name] = [type(result).__name__, type(result) is getattr(rt, name), len(result)]
    return {"names": names, "fields": {n: list(getattr(rt, n).__match_args__) for n in names},
            "all_return_types": len(rt.all_return_types) >= len(names), "returned": returned}


@scenario
def cond_and_while_loop(T):
    """torch.cond and torch.while_loop run eagerly: results, gradients through the branch and the body, and
    the messages of their argument checks (where PyTorch's come from its tracer, only the kind of error)."""
    x = T.arange(4.0, requires_grad=True)
    out = {}
    for pred in (T.tensor(True), T.tensor(False), T.tensor(1.0), True, 0):
        y = T.cond(pred, lambda v: v.sin(), lambda v: v.cos(), (x,))
        (g,) = T.autograd.grad(y.sum(), x)
        out[f"cond {pred!r}"] = [_described(y)["values"], g.tolist()]
    nested = T.cond(T.tensor(True), lambda d: d["a"] * 2 + d["b"][0], lambda d: d["a"] - d["b"][0], ({"a": x, "b": [x]},))
    out["cond nested operands"] = nested.tolist()
    out["cond errors"] = [
        _error(lambda: T.cond(T.tensor([True, False]), lambda v: v, lambda v: v, (x,))),
        _error(lambda: T.cond("a", lambda v: v, lambda v: v, (x,))),
        _error(lambda: T.cond(T.tensor(True), 3, lambda v: v, (x,))),
        _error(lambda: T.cond(T.tensor(True), lambda v, n: v, lambda v, n: v, (x, 3))),
        _error(lambda: T.cond(T.tensor(True), lambda v: v, lambda v: v, x))]

    def counted(i, v):
        return i < 3

    def doubled(i, v):
        return i + 1, v * 2

    i, v = T.while_loop(counted, doubled, (T.tensor(0), x))
    (g,) = T.autograd.grad(v.sum(), x)
    out["while_loop"] = [int(i), v.tolist(), g.tolist()]
    n, w = T.while_loop(lambda i, v: 2 * i < v.shape[0], lambda i, v: (i + 1, v + i), (0, T.zeros(4)))
    out["while_loop int carry"] = [n, w.tolist()]
    none = T.while_loop(lambda i, v: i > 3, doubled, (T.tensor(0), x))
    out["while_loop no iteration"] = [type(none).__name__, none[1].tolist(), none[1] is x]
    d, z = T.while_loop(lambda d, z: d["i"] < 2, lambda d, z: ({"i": d["i"] + 1}, z + 1),
                        ({"i": T.tensor(0)}, T.zeros(2)))
    out["while_loop nested"] = [int(d["i"]), z.tolist()]
    out["while_loop errors"] = [
        _error(lambda: T.while_loop(3, doubled, (T.tensor(0), x))),
        _error(lambda: T.while_loop(counted, doubled, (T.tensor(0), 2.5)))[0],    # (torch names its SymInt)
        _error(lambda: T.while_loop(counted, lambda i, v: (i + 1,), (T.tensor(0), x)))[0],
        _error(lambda: T.while_loop(counted, lambda i, v: (i + 1, v.double()), (T.tensor(0), x)))[0],
        _error(lambda: T.while_loop(counted, lambda i, v: (i + 1, v[:2] * 1), (T.tensor(0), x)))[0],
        _error(lambda: T.while_loop(lambda i, v: (i < 3).float(), doubled, (T.tensor(0), x)))[0]]
    return out


@scenario
def empty_permuted(T):
    def laid_out(t):
        return [list(t.shape), list(t.stride()), str(t.dtype).split(".")[-1], t.requires_grad, t.is_contiguous()]
    return {"(0, 2, 1)": laid_out(T.empty_permuted((2, 3, 4), (0, 2, 1))),
            "(2, 0, 1) float64 requires_grad": laid_out(T.empty_permuted((2, 3, 4), (2, 0, 1), dtype=T.float64,
                                                                          requires_grad=True)),
            "identity": laid_out(T.empty_permuted([3, 2], [0, 1])),
            "zero size": laid_out(T.empty_permuted((2, 0, 3), (1, 2, 0))),
            "duplicate": _error(lambda: T.empty_permuted((2, 3), (0, 0))),
            "length": _error(lambda: T.empty_permuted((2, 3), (0,))),
            "out of range": _error(lambda: T.empty_permuted((2, 3), (0, 2)))}


@scenario
def dlpack(T):
    """torch.from_dlpack / to_dlpack and Tensor.__dlpack__: memory shared both ways (with NumPy too), the
    capsule consumed once, and the refusals."""
    import numpy as np

    out = {}
    t = T.ones(2)
    device_type, index = t.__dlpack_device__()
    out["device"] = [type(device_type).__name__, device_type.name, int(device_type), index]
    capsule = T.to_dlpack(t)
    u = T.from_dlpack(capsule)
    u[0] = 5
    out["capsule shares"] = [type(capsule).__name__, t.tolist()]
    out["capsule twice"] = _error(lambda: T.from_dlpack(capsule))
    out["to_dlpack requires_grad"] = type(T.to_dlpack(T.ones(2, requires_grad=True))).__name__
    a = np.arange(3.0)
    x = T.from_dlpack(a)
    x[0] = 9
    z = T.arange(4.0)
    w = T.from_dlpack(z)
    w[1] = -1
    out["numpy shares"] = [a.tolist(), str(x.dtype).split(".")[-1]]
    out["tensor shares"] = [z.tolist(), w.requires_grad, w.is_leaf, w.grad_fn is None]
    out["to numpy"] = np.from_dlpack(T.arange(3)).tolist()
    copied = T.from_dlpack(a, copy=True)
    copied[1] = 100
    out["copy"] = [a.tolist(), copied.tolist()]
    out["strides"] = list(T.from_dlpack(T.arange(6.0).reshape(2, 3).t()).stride())
    out["int32 device=cpu copy=False"] = str(T.from_dlpack(np.arange(3, dtype=np.int32), device="cpu",
                                                           copy=False).dtype).split(".")[-1]
    out["errors"] = [_error(lambda: T.ones(2, requires_grad=True).__dlpack__()),
                     _error(lambda: T.ones(2).__dlpack__(stream=5)),
                     _error(lambda: T.ones(2).__dlpack__(stream="a")),
                     _error(lambda: T.from_dlpack(T.arange(3.0).__dlpack__(), device="cpu")),
                     _error(lambda: T.empty(2, device="meta").__dlpack__()),
                     _error(lambda: T.empty(2, device="meta").__dlpack_device__()),
                     _error(lambda: T.from_dlpack(3))]
    return out


@scenario
def removed_linalg_functions(T):
    """torch.symeig, eig, lstsq, matrix_rank, solve and their Tensor methods, removed in PyTorch 1.9: the
    errors that name what replaces them."""
    A = T.eye(2)
    return {"symeig": _error(lambda: T.symeig(A)), "eig": _error(lambda: T.eig(A, True)),
            "lstsq": _error(lambda: T.lstsq(A, A)), "matrix_rank": _error(lambda: T.matrix_rank(A)),
            "solve": _error(lambda: T.solve(A, A)),
            "methods": [_error(lambda: A.symeig()), _error(lambda: A.eig()), _error(lambda: A.lstsq(A)),
                        _error(lambda: A.solve(A))]}
