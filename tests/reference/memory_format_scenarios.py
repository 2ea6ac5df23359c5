"""Memory-format scenarios, each a function of the library (torch or agrad) returning plain data:
the strides and contiguity answers of tensors made with memory formats. make_memory_format_reference.py
records PyTorch's answers in memory_format_scenarios.json; tests/engine/test_memory_format.py runs the
same functions with agrad and compares."""
from __future__ import annotations

import numpy as np


def _x(lib, *shape):
    """Deterministic values of `shape` (float64), made row-major."""
    n = int(np.prod(shape))
    return lib.tensor(np.linspace(-1.0, 1.0, n).reshape(shape), dtype=lib.float64)


def _layout(t):
    return {"stride": list(t.stride()), "contiguous": t.is_contiguous()}


def _formats(t, lib):
    return {"contiguous_format": t.is_contiguous(memory_format=lib.contiguous_format),
            "channels_last": t.is_contiguous(memory_format=lib.channels_last),
            "channels_last_3d": t.is_contiguous(memory_format=lib.channels_last_3d)}


def contiguous_channels_last(lib):
    y = _x(lib, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
    return {**_layout(y), **_formats(y, lib), "repr": repr(lib.channels_last).split(".")[1]}


def contiguous_channels_last_3d(lib):
    y = _x(lib, 2, 3, 4, 5, 2).contiguous(memory_format=lib.channels_last_3d)
    return {**_layout(y), **_formats(y, lib)}


def size_one_dims(lib):
    """c10's rule skips dimensions of size 1: a tensor can be both contiguous and channels_last."""
    a = _x(lib, 2, 1, 4, 5)
    b = _x(lib, 2, 3, 1, 1)
    return {"c1": {**_layout(a.contiguous(memory_format=lib.channels_last)), **_formats(a, lib)},
            "hw1": _formats(b, lib), "2d": _formats(_x(lib, 2, 3), lib)}


def clone_and_likes_preserve(lib):
    y = _x(lib, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
    t = _x(lib, 2, 3, 4, 5).transpose(1, 3)
    nd = _x(lib, 2, 3, 4, 5)[:, :, ::2]
    nd_cl = y[:, :, ::2]
    return {name: [list(f(v).stride()) for v in (y, t, nd, nd_cl)] for name, f in [
        ("clone", lambda v: v.clone()), ("empty_like", lib.empty_like), ("zeros_like", lib.zeros_like),
        ("ones_like", lib.ones_like), ("full_like", lambda v: lib.full_like(v, 2.0)),
        ("rand_like", lib.rand_like), ("randn_like", lib.randn_like)]}


def clone_and_likes_asked(lib):
    x = _x(lib, 2, 3, 4, 5)
    y = x.contiguous(memory_format=lib.channels_last)
    return {"clone_cl": list(x.clone(memory_format=lib.channels_last).stride()),
            "clone_contig": list(y.clone(memory_format=lib.contiguous_format).stride()),
            "zeros_like_cl": list(lib.zeros_like(x, memory_format=lib.channels_last).stride()),
            "empty_like_contig": list(lib.empty_like(y, memory_format=lib.contiguous_format).stride())}


def pointwise_and_conv(lib):
    x = _x(lib, 2, 3, 4, 5)
    y = x.contiguous(memory_format=lib.channels_last)
    w = _x(lib, 6, 3, 3, 3)
    conv = lib.nn.functional.conv2d
    return {"add_scalar": list((y + 1).stride()), "exp": list(y.exp().stride()), "mul": list((y * y).stride()),
            "x_plus_y": list((x + y).stride()),
            "conv_cl_input": list(conv(y, w).stride()),
            "conv_cl_weight": list(conv(x, w.contiguous(memory_format=lib.channels_last)).stride())}


def to_and_resize(lib):
    x = _x(lib, 2, 3, 4, 5)
    y = x.contiguous(memory_format=lib.channels_last)
    q = _x(lib, 2, 3, 4, 5)
    q.resize_(2, 3, 5, 5, memory_format=lib.channels_last)
    return {"to_cl": list(x.to(memory_format=lib.channels_last).stride()),
            "to_float32_cl": list(x.to(lib.float32, memory_format=lib.channels_last).stride()),
            "to_same_is_self": y.to(memory_format=lib.channels_last) is y,
            "resize_cl": list(q.stride())}


def gradients(lib):
    """The gradient of a channels_last leaf has its strides (AccumulateGrad's layout contract)."""
    out = {}
    w = _x(lib, 6, 3, 3, 3)
    for name, f in [("mul", lambda v: v * 2), ("sum", lambda v: v), ("conv", lambda v: lib.nn.functional.conv2d(v, w)),
                    ("contiguous", lambda v: v.contiguous() * 2)]:
        leaf = _x(lib, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last).requires_grad_()
        f(leaf).sum().backward()
        out[name] = list(leaf.grad.stride())
    return out


def advanced_indexing_backwards(lib):
    """PyTorch's test_advanced_indexing_backwards_memory_format: a channels_last index tensor."""
    shape = (2, 8, 1, 2)
    i = (lib.arange(32).reshape(shape) % 2).contiguous(memory_format=lib.channels_last)
    x = _x(lib, *shape).requires_grad_()
    x[i].sum().backward()
    return {"grad_sum": float(x.grad.sum()), "index_stride": list(i.stride())}


def errors(lib):
    out = {}
    for name, f in [("rank2_cl", lambda: _x(lib, 2, 3).contiguous(memory_format=lib.channels_last)),
                    ("rank4_cl3d", lambda: _x(lib, 2, 3, 4, 5).clone(memory_format=lib.channels_last_3d)),
                    ("preserve_contiguous", lambda: _x(lib, 2, 3).t().contiguous(memory_format=lib.preserve_format))]:
        try:
            f()
            out[name] = None
        except RuntimeError as exc:
            out[name] = str(exc).split("\n")[0]
    return out


SCENARIOS = {f.__name__: f for f in (contiguous_channels_last, contiguous_channels_last_3d, size_one_dims,
                                      clone_and_likes_preserve, clone_and_likes_asked, pointwise_and_conv,
                                      to_and_resize, gradients, advanced_indexing_backwards, errors)}
