"""Pooling: max_pool2d and max_pool3d (also with indices, and on integers), avg_pool2d,
avg_pool3d, the 1-D forms (the 2-D pools of a row, as PyTorch), adaptive_avg_pool1d/2d/3d and
adaptive_max_pool2d, with their backward ops; and max_unpool2d, max_pool2d's partial inverse.

Every window is gathered with one fancy index into the flattened input (a table of
flat positions per (output pixel, kernel tap), over 2 or 3 spatial dims, padding pointing
at one extra sentinel column), so ceil_mode's ragged last windows and adaptive pooling's
uneven windows need no special case; the backward ops scatter-add with one `bincount`.
Adaptive average pooling is separable: one averaging matrix per dim. The pools are
linear in the values they pick, so their backward ops differentiate into each other:
max pooling's gradient goes to the argmax of each window, as in PyTorch. max_unpool2d
writes each value at its flat index in a zero plane; its gradient reads grad back at the
same indices (a `gather`), whose own gradient is scatter_add.
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ...backends.meta import MetaArray
from ...errors import ShapeError
from ...messages import require_floating, scalar_type_name, sizes
from .._common import weighted_bincount
from ..registry import defop
from ..samples import SampleInput, grad_output_samples, make_arg
from ..shape.advanced_indexing import gather
from ..shape.view import flatten, reshape, squeeze, unsqueeze

__all__ = ["max_pool2d", "avg_pool2d", "max_pool2d_with_indices_backward", "avg_pool2d_backward",
           "max_pool2d_double_backward", "max_pool3d", "max_pool3d_with_indices_backward",
           "max_pool3d_double_backward"]


def _pair(value, message):
    value = tuple(value)
    if len(value) not in (1, 2):
        raise RuntimeError(message)
    return value * 2 if len(value) == 1 else value


def _output_size(size, kernel, pad, stride, dilation, ceil_mode):
    # PyTorch's pooling_output_shape
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1            # the last window must start inside the input or its left padding
    return out


class _Pool:
    """The checked geometry of one pooling call over the trailing len(size) dims of (N, C, *size)
    or (C, *size) input: `size` the input's spatial sizes, `out` the output's. This constructor
    makes PyTorch's 2-D checks; _MaxPool3d makes max_pool3d's."""
    __slots__ = ("batched", "n", "c", "size", "out", "kernel", "stride", "padding", "dilation")

    def __init__(self, name, input, kernel_size, stride, padding, dilation, ceil_mode):
        self.kernel = _pair(kernel_size, f"{name}: kernel_size must either be a single int, or a tuple of two ints")
        if stride is None or len(stride) == 0:
            self.stride = self.kernel
        else:
            self.stride = _pair(stride, f"{name}: stride must either be omitted, a single int, or a tuple of two ints")
        self.padding = _pair(padding, f"{name}: padding must either be a single int, or a tuple of two ints")
        self.dilation = _pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two ints")
        if input.ndim not in (3, 4):
            raise ShapeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel, self.stride, self.padding, self.dilation
        if kh <= 0 or kw <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
        if sh <= 0 or sw <= 0:
            raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
        if dh <= 0 or dw <= 0:
            raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
        self.batched = input.ndim == 4
        self.n = input.shape[0] if self.batched else 1
        self.c, h, w = input.shape[-3:]
        self.size = (h, w)
        if 0 in (self.c, h, w):
            raise ShapeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                             f"but got:{sizes(input.shape)}")
        if kw // 2 < pw or kh // 2 < ph:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                               f"padH = {ph}, kW = {kw}, kH = {kh}")
        self.out = (_output_size(h, kh, ph, sh, dh, ceil_mode), _output_size(w, kw, pw, sw, dw, ceil_mode))
        if min(self.out) < 1:
            raise ShapeError(f"Given input size: ({self.c}x{h}x{w}). Calculated output size: "
                             f"({self.c}x{self.out[0]}x{self.out[1]}). Output size is too small")
        if not (name == "max_pool2d" and input.dtype.kind in "iu"):    # max pooling takes integers too
            require_floating(name, input.dtype)

    @property
    def out_shape(self):
        return ((self.n,) if self.batched else ()) + (self.c,) + tuple(self.out)

    @property
    def plane(self):
        """The number of positions in one input plane (the padding sentinel's flat position)."""
        return math.prod(self.size)

    def taps(self):
        """(*out, prod(kernel)) flat input positions of each window's taps; `plane` where a tap is padding."""
        dims = len(self.size)
        flat, inside = np.zeros((), np.int64), np.ones((), bool)
        for d, (size, out, k, s, p, dl) in enumerate(zip(self.size, self.out, self.kernel, self.stride,
                                                         self.padding, self.dilation)):
            pos = (np.arange(out) * s - p)[:, None] + np.arange(k) * dl            # (out, k) along dim d
            shape = [1] * (2 * dims)
            shape[d], shape[dims + d] = out, k
            pos = pos.reshape(shape)                                                # output dims, then kernel dims
            flat, inside = flat * size + pos, inside & (pos >= 0) & (pos < size)
        return np.where(inside, flat, self.plane).reshape(tuple(self.out) + (-1,))

    def windows(self, xp, input, fill):
        """(N, C, *out, prod(kernel)) values of every window, padding read as `fill`."""
        flat = input.reshape(self.n, self.c, self.plane)
        pad = xp.full((self.n, self.c, 1), fill, dtype=input.dtype)
        taps = self.taps()
        # one flat index array: what every library's indexing takes (dask's takes no n-d one)
        picked = xp.take(xp.concatenate([flat, pad], axis=2), xp.asarray(taps.reshape(-1)), axis=2)
        return picked.reshape((self.n, self.c) + taps.shape)

    def scatter(self, xp, positions, values, dtype):
        """Sum `values` into an input-shaped array at flat `positions` (`plane`: dropped)."""
        size = self.plane + 1
        planes = xp.arange(self.n * self.c).reshape((self.n, self.c) + (1,) * (positions.ndim - 2)) * size
        out = weighted_bincount(xp, (planes + positions).ravel(), values.ravel(), self.n * self.c * size)
        out = out.reshape(self.n, self.c, size)[:, :, :-1].astype(dtype, copy=False)
        return out.reshape(((self.n,) if self.batched else ()) + (self.c,) + tuple(self.size))


def _triple(value, message):
    value = tuple(value)
    if len(value) not in (1, 3):
        raise RuntimeError(message)
    return value * 3 if len(value) == 1 else value


def _trunc_half(value):
    return -(-value // 2) if value < 0 else value // 2         # C++'s value / 2


class _MaxPool3d(_Pool):
    """The geometry of one max_pool3d call, after PyTorch's checks in PyTorch's order
    (max_pool3d_with_indices_out_cpu_template, pooling_output_shape, pool3d_shape_check)."""
    __slots__ = ()

    def __init__(self, input, kernel_size, stride, padding, dilation, ceil_mode):
        self.kernel = _triple(kernel_size, "max_pool3d: kernel_size must either be a single int, or a tuple of "
                                           "three ints")
        self.stride = self.kernel if stride is None or len(stride) == 0 else \
            _triple(stride, "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints")
        self.padding = _triple(padding, "max_pool3d: padding must either be a single int, or a tuple of three ints")
        self.dilation = _triple(dilation, "max_pool3d: dilation must be either a single int, or a tuple of three ints")
        if input.ndim not in (4, 5):
            raise ShapeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        self.batched = input.ndim == 5
        self.n = input.shape[0] if self.batched else 1
        self.c, self.size = input.shape[-4], tuple(input.shape[-3:])
        out = []
        for size, k, s, p, dl in zip(self.size, self.kernel, self.stride, self.padding, self.dilation):
            if s == 0:
                raise RuntimeError("stride should not be zero")
            if p < 0:
                raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
            if p > _trunc_half((k - 1) * dl + 1):
                raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                                   f"kernel_size={k} and dilation={dl}")
            out.append(_output_size(size, k, p, s, dl, ceil_mode))
        self.out = tuple(out)
        (kt, kh, kw), (st, sh, sw), (pt, ph, pw), (dt, dh, dw) = self.kernel, self.stride, self.padding, self.dilation
        if kt <= 0 or kh <= 0 or kw <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}")
        if st <= 0 or sh <= 0 or sw <= 0:
            raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} dW: {sw}")
        if dt <= 0 or dh <= 0 or dw <= 0:
            raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} dilationH: {dh} "
                               f"dilationW: {dw}")
        if 0 in tuple(input.shape[-4:]):
            raise ShapeError(f"max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to "
                             f"have positive length, but input has a shape of {sizes(input.shape)} and non-batch "
                             f"dimension 0 has length zero!")
        if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kt} "
                               f"kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
        if min(self.out) < 1:
            raise ShapeError(f"Given input size: ({self.c}x{'x'.join(map(str, self.size))}). Calculated output size: "
                             f"({self.c}x{'x'.join(map(str, self.out))}). Output size is too small")
        if input.dtype.kind not in "iuf":                             # max pooling takes integers too
            require_floating("max_pool3d", input.dtype)


# ---- max_pool2d, max_pool3d -------------------------------------------------------------------------

def _argmax(pool, xp, input):
    """Per output pixel: the window's max and its flat position in the input (PyTorch's indices)."""
    fill = -np.inf if input.dtype.kind == "f" else np.iinfo(input.dtype).min
    values = pool.windows(xp, input, fill)
    arg = xp.argmax(values, axis=-1)[..., None]         # NOTE: the first maximum, and a NaN wins, as in PyTorch
    taps = xp.broadcast_to(xp.asarray(pool.taps()), values.shape)
    return xp.take_along_axis(values, arg, -1)[..., 0], xp.take_along_axis(taps, arg, -1)[..., 0]


def _check_grad_output(grad_output, expected):
    if tuple(grad_output.shape) != tuple(expected):
        raise ShapeError(f"Expected grad_output of size {sizes(expected)}, but got grad_output of size "
                         f"{sizes(grad_output.shape)}")


_POOL_ARGS = "int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False"


def _max_pool_ops(dims, geometry, samples, int_samples, plane):
    """max_poolNd and max_poolNd_with_indices, the backward op they share and its double backward,
    declared once for 2-D and 3-D: only the geometry (PyTorch's checks and messages), the samples
    and the plane's name differ. The indices are flat over each `plane` (PyTorch's)."""
    name = f"max_pool{dims}d"
    grad_name = f"MaxPool{dims}DWithIndicesBackward0"
    indices = (f"torch.nn.functional.{name}(x, kernel_size, stride, padding, dilation, ceil_mode, "
               f"return_indices=True)[1]")

    def meta(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=False):
        pool = geometry(input, kernel_size, stride, padding, dilation, ceil_mode)
        out = MetaArray(pool.out_shape, input.dtype)
        return (out, MetaArray(pool.out_shape, np.int64)) if return_indices else out

    def kernel(xp, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=False):
        pool = geometry(input, kernel_size, stride, padding, dilation, ceil_mode)
        values, positions = _argmax(pool, xp, input)
        if return_indices:
            return values.reshape(pool.out_shape), positions.astype(np.int64).reshape(pool.out_shape)
        return values.reshape(pool.out_shape)

    def backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode):
        pool = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
        _check_grad_output(grad_output, pool.out_shape)
        return MetaArray(self.shape, grad_output.dtype)

    def backward_kernel(xp, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode):
        pool = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
        _check_grad_output(grad_output, pool.out_shape)
        _, positions = _argmax(pool, xp, self)
        return pool.scatter(xp, positions, grad_output, grad_output.dtype)

    def double_meta(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
        pool = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
        _check_grad_output(grad, self.shape)
        return MetaArray(pool.out_shape, grad.dtype)

    def double_kernel(xp, grad, self, kernel_size, stride, padding, dilation, ceil_mode):
        pool = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
        _check_grad_output(grad, self.shape)
        _, positions = _argmax(pool, xp, self)
        flat = grad.reshape(pool.n, pool.c, pool.plane)
        return xp.take_along_axis(flat, positions.reshape(pool.n, pool.c, -1), 2).reshape(pool.out_shape)

    def double_samples(op, grad_shape_of):
        out = []
        for s in samples(op):
            x = s.args[0].detach()
            g = make_arg(grad_shape_of(s, x), key=(op, s.name, "g"))
            out.append(SampleInput(s.name, g, x, *s.args[1:], **s.kwargs))
        return out

    def pooled_shape(sample, x):
        return tuple(ops["forward"](x.to("meta"), *sample.args[1:], **sample.kwargs).shape)

    ops = {}
    ops["double"] = defop(
        f"{name}_double_backward(Tensor grad, Tensor self, {_POOL_ARGS}) -> Tensor",
        kernel=double_kernel, meta=double_meta,
        grads={"grad": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
                   ops["backward"](grad, self, kernel_size, stride, padding, dilation, ceil_mode),
               "self": None},
        samples=lambda op: double_samples(op, lambda s, x: tuple(x.shape)),
        torch=f"lambda g, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False: "
              f"g.flatten(-{dims}).gather(-1, {indices}.flatten(-{dims})).view_as({indices})",
        doc=f"The gradient of {name}'s backward w.r.t. its grad_output: `grad` read at each window's argmax.")
    ops["backward"] = defop(
        f"{name}_with_indices_backward(Tensor grad_output, Tensor self, {_POOL_ARGS}) -> Tensor",
        kernel=backward_kernel, meta=backward_meta,
        grads={"grad_output": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
                   ops["double"](grad, self, kernel_size, stride, padding, dilation, ceil_mode),
               "self": lambda grad: grad * 0},
        backward_name=f"MaxPool{dims}DWithIndicesBackwardBackward0",
        samples=lambda op: double_samples(op, pooled_shape),
        torch=f"lambda g, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False: "
              f"torch.ops.aten.{name}_with_indices_backward(g, x, kernel_size, stride or kernel_size, padding, "
              f"dilation, ceil_mode, {indices})",
        doc=f"The gradient of {name}: grad_output added at each window's argmax (recomputed from self; PyTorch "
            f"passes the saved indices instead).")
    grads = {"self": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
             ops["backward"](grad, self, kernel_size, stride, padding, dilation, ceil_mode)}
    ops["forward"] = defop(
        f"{name}(Tensor self, {_POOL_ARGS}, bool return_indices=False) -> Tensor",
        kernel=kernel, meta=meta, grads=grads, backward_name=grad_name,
        samples=lambda op: samples(op) + int_samples(op) + [
            SampleInput("return_indices", make_arg((1, 2) + (5, 4, 3)[:dims], key=(op, "ri")), 3, 2, 1,
                        return_indices=True)],
        torch=f"torch.nn.functional.{name}",
        doc=f"The max of each window of {plane} input; padding counts as -inf (the dtype's minimum for "
            f"integers); return_indices also returns each max's flat position in its plane.")
    ops["with_indices"] = defop(
        f"{name}_with_indices(Tensor self, {_POOL_ARGS}) -> (Tensor, Tensor)",
        kernel=lambda xp, *args: kernel(xp, *args, True), meta=lambda *args: meta(*args, True),
        grads=grads, backward_name=grad_name,
        samples=lambda op: samples(op) + int_samples(op), torch=f"torch.nn.functional.{name}_with_indices",
        doc=f"{name} with return_indices=True: (values, indices), indices the flat position of each max in its "
            f"plane (int64, no gradient).")
    return ops["forward"], ops["with_indices"], ops["backward"], ops["double"]


def _max_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,4,4) k2", arg((2, 2, 4, 4), 0), 2),
            SampleInput("k3 s1 overlapping", arg((1, 2, 5, 5), 1), 3, 1),
            SampleInput("k3 s2 p1 ceil_mode", arg((1, 1, 6, 5), 2), [3, 3], 2, 1, ceil_mode=True),
            SampleInput("k(2,3) dilation 2", arg((1, 2, 7, 7), 3), [2, 3], [1, 2], 0, 2),
            SampleInput("unbatched T", arg((2, 4, 4), 4, transposed=True), 2)]


def _int_samples(op):
    x = make_arg((1, 2, 5, 5), key=(op, "int"), low=-50, high=50, integer=True, dtype=dtypes.int64)
    return [SampleInput("int64 k2 p1", x, 2, 2, 1)]


max_pool2d, max_pool2d_with_indices, max_pool2d_with_indices_backward, max_pool2d_double_backward = _max_pool_ops(
    2, lambda *args: _Pool("max_pool2d", *args), _max_samples, _int_samples, "(N, C, H, W) or (C, H, W)")


def _max3d_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,4,4,4) k2", arg((2, 2, 4, 4, 4), 0), 2),
            SampleInput("k3 s1 overlapping", arg((1, 2, 4, 5, 4), 1), 3, 1),
            SampleInput("k3 s2 p1 ceil_mode", arg((1, 1, 6, 5, 4), 2), [3, 3, 3], 2, 1, ceil_mode=True),
            SampleInput("k(2,3,2) s(1,2,1) p(1,1,0) dilation (2,1,2)", arg((1, 2, 5, 7, 6), 3), [2, 3, 2],
                        [1, 2, 1], [1, 1, 0], [2, 1, 2]),
            SampleInput("unbatched T", arg((2, 4, 4, 3), 4, transposed=True), [2, 2, 3]),
            SampleInput("k2 s1 p1 dilation 3 ceil_mode", arg((1, 1, 5, 4, 6), 5), 2, 1, 1, 3, True)]


def _int3d_samples(op):
    x = make_arg((1, 2, 4, 5, 3), key=(op, "int"), low=-50, high=50, integer=True, dtype=dtypes.int64)
    return [SampleInput("int64 k2 p1", x, 2, 2, 1)]


max_pool3d, max_pool3d_with_indices, max_pool3d_with_indices_backward, max_pool3d_double_backward = _max_pool_ops(
    3, _MaxPool3d, _max3d_samples, _int3d_samples, "(N, C, D, H, W) or (C, D, H, W)")


# ---- avg_pool2d -----------------------------------------------------------------------------------

def _avg_pool(input, kernel_size, stride, padding, ceil_mode):
    return _Pool("avg_pool2d", input, kernel_size, stride, padding, (1,), ceil_mode)


def _divisor(pool, count_include_pad, divisor_override):
    """(OH, OW) divisors as PyTorch's avg_pool2d computes them per window."""
    if divisor_override is not None:
        return np.full(pool.out, float(divisor_override))
    counts = []
    for out, k, s, p, size in zip(pool.out, pool.kernel, pool.stride, pool.padding, pool.size):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, size + p)
        counts.append(end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0))
    return np.outer(counts[0], counts[1]).astype(np.float64)


def _check_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


def _avg_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    _check_divisor(divisor_override)
    return MetaArray(_avg_pool(self, kernel_size, stride, padding, ceil_mode).out_shape, self.dtype)


def _avg_kernel(xp, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    _check_divisor(divisor_override)
    pool = _avg_pool(self, kernel_size, stride, padding, ceil_mode)
    total = xp.sum(pool.windows(xp, self, 0), axis=-1)
    divisor = xp.asarray(_divisor(pool, count_include_pad, divisor_override))
    return (total / divisor).astype(self.dtype, copy=False).reshape(pool.out_shape)


def _avg_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    _check_divisor(divisor_override)
    _check_grad_output(grad_output, _avg_pool(self, kernel_size, stride, padding, ceil_mode).out_shape)
    return MetaArray(self.shape, grad_output.dtype)


def _avg_backward_kernel(xp, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override):
    _check_divisor(divisor_override)
    pool = _avg_pool(self, kernel_size, stride, padding, ceil_mode)
    _check_grad_output(grad_output, pool.out_shape)
    share = grad_output.reshape((pool.n, pool.c) + pool.out) / xp.asarray(
        _divisor(pool, count_include_pad, divisor_override))
    taps = xp.asarray(pool.taps())
    values = xp.broadcast_to(share[..., None], share.shape + (taps.shape[-1],))
    return pool.scatter(xp, xp.broadcast_to(taps, values.shape), values, grad_output.dtype)


_AVG_ARGS = ("int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, "
             "bool count_include_pad=True, int? divisor_override=None")


def _avg_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,4,4) k2", arg((2, 2, 4, 4), 0), 2),
            SampleInput("k3 s2 p1", arg((1, 2, 5, 5), 1), 3, 2, 1),
            SampleInput("k3 s2 p1 exclude pad ceil_mode", arg((1, 1, 6, 5), 2), 3, 2, 1, True, False),
            SampleInput("k(2,3) s1 divisor_override", arg((1, 2, 4, 5), 3), [2, 3], 1, divisor_override=5),
            SampleInput("unbatched T ceil_mode", arg((2, 5, 5), 4, transposed=True), 2, ceil_mode=True)]


def _avg_pool_ops(dims, kernel, meta, backward_kernel, backward_meta, samples, window):
    """avg_poolNd and its backward op, declared once for 2-D and 3-D: only kernels, samples and the
    window's name differ."""
    name, ops = f"avg_pool{dims}d", {}

    def avg_pool(*args):        # the forward op, declared below the backward that calls it
        return ops["forward"](*args)

    avg_pool_backward = defop(
        f"{name}_backward(Tensor grad_output, Tensor self, {_AVG_ARGS}) -> Tensor",
        kernel=backward_kernel, meta=backward_meta,
        grads={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                     divisor_override:
                   avg_pool(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
               "self": lambda grad: grad * 0},
        backward_name=f"AvgPool{dims}DBackwardBackward0",
        samples=lambda op: grad_output_samples(op, ops["forward"], samples(op),
                                               lambda s: ((s.args[0].detach(),) + s.args[1:], s.kwargs)),
        torch=f"lambda g, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
              f"divisor_override=None: torch.ops.aten.{name}_backward(g, x, kernel_size, stride or kernel_size, "
              f"padding, ceil_mode, count_include_pad, divisor_override)",
        doc=f"The gradient of {name}: each window's grad_output, divided by its divisor, spread over its taps.")
    ops["forward"] = defop(
        f"{name}(Tensor self, {_AVG_ARGS}) -> Tensor",
        kernel=kernel, meta=meta,
        grads={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override:
                   avg_pool_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                     divisor_override)},
        backward_name=f"AvgPool{dims}DBackward0", samples=samples, torch=f"torch.nn.functional.{name}",
        doc=f"The mean of each {window} input; count_include_pad counts the zero padding in the divisor; "
            f"divisor_override replaces it.")
    return ops["forward"], avg_pool_backward


avg_pool2d, avg_pool2d_backward = _avg_pool_ops(2, _avg_kernel, _avg_meta, _avg_backward_kernel, _avg_backward_meta,
                                                _avg_samples, "window of (N, C, H, W) or (C, H, W)")


# ---- avg_pool3d: separable, one window-sum matrix per spatial dim ----------------------------------
# A box window's sum is a sum along each dim in turn, and PyTorch's divisor is the product of the
# per-dim counts (or divisor_override), so the pool is three matrix products and a division; its
# backward, the adjoint, is the transposed products of grad / divisor.

class _Pool3d:
    """The checked geometry of one avg_pool3d call (PyTorch's avg_pool3d meta and pool3d_shape_check)."""
    __slots__ = ("batched", "spatial", "kernel", "stride", "padding", "out")

    def __init__(self, input, kernel_size, stride, padding, ceil_mode, divisor_override):
        self.kernel = _triple(kernel_size, "avg_pool3d: kernel_size must be a single int, or a tuple of three ints")
        self.stride = self.kernel if stride is None or len(stride) == 0 else \
            _triple(stride, "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints")
        self.padding = _triple(padding, "avg_pool3d: padding must be a single int, or a tuple of three ints")
        if input.ndim not in (4, 5):
            raise ShapeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        _check_divisor(divisor_override)
        self.batched = input.ndim == 5
        self.spatial = tuple(input.shape[-3:])
        self.out = []
        for size, k, st, p in zip(self.spatial, self.kernel, self.stride, self.padding):
            if st == 0:
                raise RuntimeError("stride should not be zero")
            if p < 0:
                raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
            if p > k // 2:
                raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                                   f"kernel_size={k} and dilation=1")
            self.out.append(_output_size(size, k, p, st, 1, ceil_mode))
        (kt, kh, kw), (st, sh, sw) = self.kernel, self.stride
        t, h, w = self.spatial
        if kt <= 0 or kh <= 0 or kw <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}")
        if st <= 0 or sh <= 0 or sw <= 0:
            raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} dW: {sw}")
        channels = input.shape[-4]
        if 0 in (channels, t, h, w):
            raise ShapeError(f"Expected input's non-batch dimensions to have positive length, but input has a shape "
                             f"of {sizes(input.shape)} and non-batch dimension {min(channels, t, h, w)} has length "
                             f"zero!")
        if t < kt or h < kh or w < kw:
            raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                               f"(kT: {kt} kH: {kh} kW: {kw})")
        ot, oh, ow = self.out
        if ot < 1 or oh < 1 or ow < 1:
            raise ShapeError(f"Given input size: ({channels}x{t}x{h}x{w}). Calculated output size: "
                             f"({channels}x{ot}x{oh}x{ow}). Output size is too small")
        require_floating("avg_pool3d_out_frame", input.dtype)

    def out_shape(self, shape):
        return tuple(shape[:-3]) + tuple(self.out)

    def sums(self, xp, dtype):
        """Per spatial dim, the (out, in) matrix of 0/1 that sums each window's taps inside the input."""
        mats = []
        for size, out, k, st, p in zip(self.spatial, self.out, self.kernel, self.stride, self.padding):
            start = np.arange(out) * st - p
            end = np.minimum(start + k, size + p)
            j = np.arange(size)
            mats.append(xp.asarray((j >= np.maximum(start, 0)[:, None]) & (j < np.minimum(end, size)[:, None]))
                        .astype(dtype))
        return mats

    def divisor(self, xp, count_include_pad, divisor_override, dtype):
        if divisor_override is not None:
            return xp.asarray(float(divisor_override), dtype=dtype)
        counts = []
        for size, out, k, st, p in zip(self.spatial, self.out, self.kernel, self.stride, self.padding):
            start = np.arange(out) * st - p
            end = np.minimum(start + k, size + p)
            counts.append(end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0))
        return xp.asarray(np.einsum("i,j,k->ijk", *counts).astype(np.float64)).astype(dtype)


def _along(xp, x, matrix, axis):
    """`matrix` (out, in) applied along `axis` of x."""
    return xp.swapaxes(xp.matmul(matrix, xp.swapaxes(x, axis, -2)), axis, -2)


def _avg3d_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    pool = _Pool3d(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    return MetaArray(pool.out_shape(self.shape), self.dtype)


def _avg3d_kernel(xp, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    pool = _Pool3d(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    x = self
    for axis, m in zip((-3, -2, -1), pool.sums(xp, self.dtype)):
        x = _along(xp, x, m, axis)
    return (x / pool.divisor(xp, count_include_pad, divisor_override, self.dtype)).astype(self.dtype, copy=False)


def _avg3d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override):
    pool = _Pool3d(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_grad_output(grad_output, pool.out_shape(self.shape))
    return MetaArray(self.shape, grad_output.dtype)


def _avg3d_backward_kernel(xp, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override):
    pool = _Pool3d(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_grad_output(grad_output, pool.out_shape(self.shape))
    g = grad_output / pool.divisor(xp, count_include_pad, divisor_override, grad_output.dtype)
    for axis, m in zip((-3, -2, -1), pool.sums(xp, grad_output.dtype)):
        g = _along(xp, g, m.T, axis)
    return g.astype(grad_output.dtype, copy=False)


def _avg3d_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,4,4,4) k2", arg((2, 2, 4, 4, 4), 0), 2),
            SampleInput("k3 s2 p1", arg((1, 2, 5, 5, 4), 1), 3, 2, 1),
            SampleInput("k3 s2 p1 exclude pad ceil_mode", arg((1, 1, 6, 5, 4), 2), 3, 2, 1, True, False),
            SampleInput("k(2,3,2) s1 divisor_override", arg((1, 2, 3, 4, 5), 3), [2, 3, 2], 1,
                        divisor_override=5),
            SampleInput("unbatched ceil_mode", arg((2, 3, 5, 5), 4), 2, ceil_mode=True)]


avg_pool3d, avg_pool3d_backward = _avg_pool_ops(3, _avg3d_kernel, _avg3d_meta, _avg3d_backward_kernel,
                                                _avg3d_backward_meta, _avg3d_samples,
                                                "box window of (N, C, T, H, W) or (C, T, H, W)")


# ---- max_pool1d, avg_pool1d: the 2-D pools over (N, C, 1, L), as PyTorch -------------------------

def _one(value, name, op):
    value = tuple(value)
    if len(value) != 1:
        raise RuntimeError(f"{op}: {name} must be a single int, got {sizes(value)}")
    return value[0]


def _lift(input, op):
    if input.ndim not in (2, 3):
        raise ShapeError(f"{op}() Expected 2D or 3D input tensor, but got {sizes(input.shape)}")
    return unsqueeze(input, -2)


def _max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if not return_indices:      # NOTE: PyTorch's max_pool1d without indices has no integer kernel
        require_floating("max_pool1d_impl", self.dtype.np)
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = [1, _one(stride, "stride", "max_pool1d")] if stride else [1, k]
    out = max_pool2d(_lift(self, "max_pool1d"), [1, k], s, [0, _one(padding, "padding", "max_pool1d")],
                     [1, _one(dilation, "dilation", "max_pool1d")], ceil_mode, return_indices)
    return tuple(squeeze(o, -2) for o in out) if return_indices else squeeze(out, -2)


def _avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = [1, _one(stride, "stride", "avg_pool1d")] if stride else [1, k]
    out = avg_pool2d(_lift(self, "avg_pool1d"), [1, k], s, [0, _one(padding, "padding", "avg_pool1d")], ceil_mode,
                     count_include_pad)
    return squeeze(out, -2)


def _pool1d_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,3,8) k2", arg((2, 3, 8), 0), 2),
            SampleInput("(2,7) k3 s2 p1 ceil_mode", arg((2, 7), 1), 3, 2, 1, ceil_mode=True),
            SampleInput("(1,2,9)T k3 s1", arg((1, 2, 9), 2, transposed=True), 3, 1)]


max_pool1d = defop(
    "max_pool1d(Tensor self, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, "
    "bool ceil_mode=False, bool return_indices=False) -> Tensor",
    composite=_max_pool1d,
    samples=lambda op: _pool1d_samples(op) + [
        SampleInput("dilation 2, return_indices", make_arg((1, 2, 9), key=(op, 3)), 2, 2, 1, 2, return_indices=True)],
    torch="torch.nn.functional.max_pool1d",
    doc="The max of each window of (N, C, L) or (C, L) input: max_pool2d over (N, C, 1, L).")

max_pool1d_with_indices = defop(
    "max_pool1d_with_indices(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0, int[] dilation=1, "
    "bool ceil_mode=False) -> (Tensor, Tensor)",
    composite=lambda self, kernel_size, stride, padding, dilation, ceil_mode: _max_pool1d(
        self, kernel_size, stride, padding, dilation, ceil_mode, True),
    samples=lambda op: [SampleInput(s.name, *s.args, **s.kwargs) for s in _pool1d_samples(op)],
    torch="torch.max_pool1d_with_indices",
    doc="ATen's max_pool1d_with_indices: max_pool1d's (values, indices); an empty stride is kernel_size.")

avg_pool1d = defop(
    "avg_pool1d(Tensor self, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, "
    "bool count_include_pad=True) -> Tensor",
    composite=_avg_pool1d,
    samples=lambda op: _pool1d_samples(op) + [
        SampleInput("exclude pad", make_arg((1, 2, 6), key=(op, 3)), 3, 2, 1, False, False)],
    torch="torch.nn.functional.avg_pool1d",
    doc="The mean of each window of (N, C, L) or (C, L) input: avg_pool2d over (N, C, 1, L).")


# ---- adaptive_avg_pool2d: separable, one averaging matrix per dim ------------------------------------

def _adaptive_size(input, output_size, op):
    if input.ndim not in (3, 4) or 0 in tuple(input.shape[-3:]):
        raise ShapeError(f"{op}(): Expected 3D or 4D tensor, but got {sizes(input.shape)}")
    size = tuple(output_size)
    if len(size) == 1:
        size = size * 2
    if len(size) != 2:
        raise RuntimeError(f"{op}: output_size must be 2")
    return size


def _averaging(xp, n_in, n_out, dtype):
    """(n_out, n_in): row i averages input [floor(i * n_in / n_out), ceil((i + 1) * n_in / n_out))."""
    i = np.arange(n_out)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    j = np.arange(n_in)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return xp.asarray(inside / (end - start)[:, None]).astype(dtype)


def _adaptive_avg_meta(self, output_size):
    size = _adaptive_size(self, output_size, "adaptive_avg_pool2d")
    require_floating("adaptive_avg_pool2d", self.dtype)
    return MetaArray(tuple(self.shape[:-2]) + size, self.dtype)


def _adaptive_avg_kernel(xp, self, output_size):
    oh, ow = _adaptive_size(self, output_size, "adaptive_avg_pool2d")
    require_floating("adaptive_avg_pool2d", self.dtype)
    h, w = self.shape[-2:]
    return xp.matmul(xp.matmul(_averaging(xp, h, oh, self.dtype), self), _averaging(xp, w, ow, self.dtype).T)


def _adaptive_avg_backward_meta(grad_output, self):
    _adaptive_avg_meta(self, grad_output.shape[-2:])
    if tuple(grad_output.shape[:-2]) != tuple(self.shape[:-2]):
        raise ShapeError(f"Expected grad_output of size {sizes(self.shape[:-2])} in its leading dims, but got "
                           f"{sizes(grad_output.shape)}")
    return MetaArray(self.shape, grad_output.dtype)


def _adaptive_avg_backward_kernel(xp, grad_output, self):
    _adaptive_avg_backward_meta(grad_output, self)
    (h, w), (oh, ow) = self.shape[-2:], grad_output.shape[-2:]
    return xp.matmul(xp.matmul(_averaging(xp, h, oh, grad_output.dtype).T, grad_output),
                     _averaging(xp, w, ow, grad_output.dtype))


def _adaptive_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,3,5,7)->(3,4)", arg((2, 3, 5, 7), 0), [3, 4]),
            SampleInput("(2,6,6)->2", arg((2, 6, 6), 1), 2),
            SampleInput("(1,2,4,5)T->(6,5) up", arg((1, 2, 4, 5), 2, transposed=True), [6, 5]),
            SampleInput("global (2,3,4,4)->1", arg((2, 3, 4, 4), 3), 1)]


adaptive_avg_pool2d_backward = defop(
    "adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_adaptive_avg_backward_kernel, meta=_adaptive_avg_backward_meta,
    grads={"grad_output": lambda grad, grad_output_shape: adaptive_avg_pool2d(grad, grad_output_shape[-2:]),
           "self": None},
    backward_name="AdaptiveAvgPool2DBackwardBackward0",
    samples=lambda op: grad_output_samples(op, adaptive_avg_pool2d, _adaptive_samples(op),
                                           lambda s: ((s.args[0].detach(),), {})),
    torch="torch.ops.aten._adaptive_avg_pool2d_backward",
    doc="The gradient of adaptive_avg_pool2d: each output's gradient spread evenly over its window.")

adaptive_avg_pool2d = defop(
    "adaptive_avg_pool2d(Tensor self, int[] output_size) -> Tensor",
    kernel=_adaptive_avg_kernel, meta=_adaptive_avg_meta,
    grads={"self": lambda grad, self: adaptive_avg_pool2d_backward(grad, self)},
    # NOTE: PyTorch computes a 1x1 output with mean(-1, -2) (MeanBackward1)
    backward_name=("AdaptiveAvgPool2DBackward0", "MeanBackward1"),
    overload=lambda self, output_size: int(tuple(output_size) in ((1,), (1, 1))),
    samples=_adaptive_samples, torch="torch.nn.functional.adaptive_avg_pool2d",
    doc="The mean of (N, C, H, W) or (C, H, W) input over output_size windows: window i along a dim of size n "
        "covers [floor(i * n / out), ceil((i + 1) * n / out)).")


# ---- adaptive_avg_pool3d (separable, as adaptive_avg_pool2d) and adaptive_avg_pool1d (PyTorch's composite)

def _adaptive3d_size(input, output_size):
    size = tuple(output_size)
    if len(size) == 1:
        size = size * 3
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if input.ndim not in (4, 5):
        raise ShapeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {sizes(input.shape)}")
    if 0 in tuple(input.shape[-4:]):
        raise ShapeError(f"adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, "
                         f"but input has sizes {sizes(input.shape)} with dimension {list(input.shape).index(0)} "
                         f"being empty")
    return size


def _adaptive3d_meta(self, output_size):
    size = _adaptive3d_size(self, output_size)
    require_floating("adaptive_avg_pool3d_cpu", self.dtype)
    return MetaArray(tuple(self.shape[:-3]) + size, self.dtype)


def _adaptive3d_kernel(xp, self, output_size):
    size = _adaptive3d_size(self, output_size)
    require_floating("adaptive_avg_pool3d_cpu", self.dtype)
    x = self
    for axis, n_out in zip((-3, -2, -1), size):
        x = _along(xp, x, _averaging(xp, x.shape[axis], n_out, self.dtype), axis)
    return x


def _adaptive3d_backward_meta(grad_output, self):
    _adaptive3d_meta(self, grad_output.shape[-3:])
    if tuple(grad_output.shape[:-3]) != tuple(self.shape[:-3]):
        raise ShapeError(f"Expected grad_output of size {sizes(self.shape[:-3])} in its leading dims, but got "
                         f"{sizes(grad_output.shape)}")
    return MetaArray(self.shape, grad_output.dtype)


def _adaptive3d_backward_kernel(xp, grad_output, self):
    _adaptive3d_backward_meta(grad_output, self)
    g = grad_output
    for axis in (-3, -2, -1):
        g = _along(xp, g, _averaging(xp, self.shape[axis], grad_output.shape[axis], grad_output.dtype).T, axis)
    return g


def _adaptive3d_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,5,4,7)->(3,2,4)", arg((2, 2, 5, 4, 7), 0), [3, 2, 4]),
            SampleInput("(2,4,4,6)->2", arg((2, 4, 4, 6), 1), 2),
            SampleInput("(1,1,3,4,2)->(4,6,3) up", arg((1, 1, 3, 4, 2), 2), [4, 6, 3]),
            SampleInput("global (1,2,3,3,2)->1", arg((1, 2, 3, 3, 2), 3), 1)]


adaptive_avg_pool3d_backward = defop(
    "adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_adaptive3d_backward_kernel, meta=_adaptive3d_backward_meta,
    grads={"grad_output": lambda grad, grad_output_shape: adaptive_avg_pool3d(grad, grad_output_shape[-3:]),
           "self": None},
    backward_name="AdaptiveAvgPool3DBackwardBackward0",
    samples=lambda op: grad_output_samples(op, adaptive_avg_pool3d, _adaptive3d_samples(op),
                                           lambda s: ((s.args[0].detach(),), {})),
    torch="lambda g, x: torch.ops.aten._adaptive_avg_pool3d_backward(g, x)",
    doc="The gradient of adaptive_avg_pool3d: each output's gradient spread evenly over its window.")

adaptive_avg_pool3d = defop(
    "adaptive_avg_pool3d(Tensor self, int[] output_size) -> Tensor",
    kernel=_adaptive3d_kernel, meta=_adaptive3d_meta,
    grads={"self": lambda grad, self: adaptive_avg_pool3d_backward(grad, self)},
    # NOTE: PyTorch computes a 1x1x1 output with mean(-1, -2, -3) (MeanBackward1)
    backward_name=("AdaptiveAvgPool3DBackward0", "MeanBackward1"),
    overload=lambda self, output_size: int(tuple(output_size) in ((1,), (1, 1, 1))),
    samples=_adaptive3d_samples, torch="torch.nn.functional.adaptive_avg_pool3d",
    doc="The mean of (N, C, T, H, W) or (C, T, H, W) input over output_size windows, per dim as "
        "adaptive_avg_pool2d's.")


def _adaptive_avg_pool1d(self, output_size):
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_avg_pool1d)")
    if len(output_size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    return squeeze(adaptive_avg_pool2d(unsqueeze(self, -2), [1, output_size[0]]), -2)


adaptive_avg_pool1d = defop(
    "adaptive_avg_pool1d(Tensor self, int[] output_size) -> Tensor",
    composite=_adaptive_avg_pool1d,
    samples=lambda op: [SampleInput("(2,3,7)->3", make_arg((2, 3, 7), key=(op, 0)), 3),
                        SampleInput("(2,5)->[7] up", make_arg((2, 5), key=(op, 1)), [7]),
                        SampleInput("(1,2,4)->1", make_arg((1, 2, 4), key=(op, 2)), 1)],
    torch="torch.nn.functional.adaptive_avg_pool1d",
    doc="The mean of (N, C, L) or (C, L) input over output_size windows: adaptive_avg_pool2d over (N, C, 1, L).")


# ---- adaptive_max_pool2d: variable windows as a tap table, as max_pool2d ----------------------------

class _Adaptive(_Pool):
    """The windows of adaptive pooling: the same tap-table machinery, windows [start, end) per dim."""
    __slots__ = ()

    def __init__(self, input, output_size):
        self.out = _adaptive_size(input, output_size, "adaptive_max_pool2d")
        self.batched = input.ndim == 4
        self.n = input.shape[0] if self.batched else 1
        self.c, self.size = input.shape[-3], tuple(input.shape[-2:])
        require_floating("adaptive_max_pool2d", input.dtype)

    def taps(self):
        def per_dim(n_in, n_out):
            i = np.arange(n_out)
            start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
            pos = start[:, None] + np.arange(int((end - start).max()))
            return pos, pos < end[:, None]
        (h, w), (oh, ow) = self.size, self.out
        rows, rin = per_dim(h, oh)
        cols, cin = per_dim(w, ow)
        inside = rin[:, None, :, None] & cin[None, :, None, :]
        flat = rows[:, None, :, None] * w + cols[None, :, None, :]
        return np.where(inside, flat, h * w).reshape(oh, ow, -1)


def _adaptive_max_meta(self, output_size, return_indices=False):
    pool = _Adaptive(self, output_size)
    out = MetaArray(pool.out_shape, self.dtype)
    return (out, MetaArray(pool.out_shape, np.int64)) if return_indices else out


def _adaptive_max_kernel(xp, self, output_size, return_indices=False):
    pool = _Adaptive(self, output_size)
    values, positions = _argmax(pool, xp, self)
    values = values.reshape(pool.out_shape)
    return (values, positions.astype(np.int64).reshape(pool.out_shape)) if return_indices else values


def _adaptive_max_backward_meta(grad_output, self):
    pool = _Adaptive(self, grad_output.shape[-2:])
    _check_grad_output(grad_output, pool.out_shape)
    return MetaArray(self.shape, grad_output.dtype)


def _adaptive_max_backward_kernel(xp, grad_output, self):
    pool = _Adaptive(self, grad_output.shape[-2:])
    _check_grad_output(grad_output, pool.out_shape)
    return pool.scatter(xp, _argmax(pool, xp, self)[1], grad_output, grad_output.dtype)


def _at_argmax(grad, self, output_size):
    """grad (input-shaped) read at each window's argmax: the adjoint of the backward's scatter."""
    indices = adaptive_max_pool2d(self.detach(), list(output_size), True)[1]
    return reshape(gather(flatten(grad, -2), -1, flatten(indices, -2)), list(indices.shape))


def _adaptive_max_samples(op):
    return _adaptive_samples(op)[:3] + [
        SampleInput("return_indices", make_arg((1, 2, 5, 5), key=(op, 3)), [2, 3], True)]


adaptive_max_pool2d_backward = defop(
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
    kernel=_adaptive_max_backward_kernel, meta=_adaptive_max_backward_meta,
    grads={"grad_output": lambda grad, self, grad_output_shape: _at_argmax(grad, self, grad_output_shape[-2:]),
           "self": None},
    backward_name="AdaptiveMaxPool2DBackwardBackward0",
    samples=lambda op: grad_output_samples(op, adaptive_max_pool2d, _adaptive_max_samples(op),
                                           lambda s: ((s.args[0].detach(),), {})),
    torch="lambda g, x: torch.ops.aten.adaptive_max_pool2d_backward(g, x, torch.nn.functional.adaptive_max_pool2d("
          "x, g.shape[-2:], return_indices=True)[1])",
    doc="The gradient of adaptive_max_pool2d: each output's gradient added at its window's argmax.")

adaptive_max_pool2d = defop(
    "adaptive_max_pool2d(Tensor self, int[] output_size, bool return_indices=False) -> Tensor",
    kernel=_adaptive_max_kernel, meta=_adaptive_max_meta,
    grads={"self": lambda grad, self: adaptive_max_pool2d_backward(grad, self)},
    backward_name="AdaptiveMaxPool2DBackward0", samples=_adaptive_max_samples,
    torch="torch.nn.functional.adaptive_max_pool2d",
    doc="The max of (N, C, H, W) or (C, H, W) input over output_size windows (as adaptive_avg_pool2d's); "
        "return_indices also returns each max's flat position in its (H, W) plane.")


def _two(value, name):
    value = (value,) if isinstance(value, int) else tuple(value)
    if len(value) not in (1, 2):
        raise RuntimeError(f"max_unpool2d: {name} must either be a single int, or a tuple of two ints")
    return value * 2 if len(value) == 1 else value


def _unpool_size(self, indices, kernel_size, stride, padding, output_size):
    """The (H_out, W_out) plane, as torch.nn.functional._unpool_output_size, after PyTorch's checks."""
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(self.shape):
        raise ShapeError(f"Expected shape of indices to be same as that of the input tensor ({sizes(self.shape)}) "
                         f"but got indices tensor with shape: {sizes(indices.shape)}")
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise ShapeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                         f"{self.ndim} dimensions.")
    require_floating("max_unpool2d", self.dtype)
    kernel = _two(kernel_size, "kernel_size")
    stride = kernel if stride is None or len(tuple(stride)) == 0 else _two(stride, "stride")
    padding = _two(padding, "padding")
    default = tuple((self.shape[-2 + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(2))
    if output_size is None:
        return default
    output_size = tuple(output_size)
    if len(output_size) == self.ndim:
        output_size = output_size[-2:]
    if len(output_size) != 2:
        raise ValueError(f"output_size should be a sequence containing 2 or {self.ndim} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(2):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return output_size


def _unpool_meta(self, indices, kernel_size, stride=None, padding=0, output_size=None):
    return MetaArray(tuple(self.shape[:-2]) + _unpool_size(self, indices, kernel_size, stride, padding,
                                                           output_size), self.dtype)


def _unpool_kernel(xp, self, indices, kernel_size, stride, padding, output_size):
    oh, ow = _unpool_size(self, indices, kernel_size, stride, padding, output_size)
    planes = int(np.prod(self.shape[:-2]))
    flat = indices.reshape(planes, -1)
    bad = (flat < 0) | (flat >= oh * ow)
    if bool(bad.any()):
        raise RuntimeError(f"Found an invalid max index: {int(flat[bad][0])} (output volumes are of size "
                           f"{oh}x{ow})")
    out = xp.zeros((planes, oh * ow), dtype=self.dtype)
    rows = xp.broadcast_to(xp.arange(planes)[:, None], flat.shape)
    out[rows, flat] = self.reshape(planes, -1)      # NOTE: repeated indices: one of the values wins, as in PyTorch
    return out.reshape(tuple(self.shape[:-2]) + (oh, ow))


def _unpool_grad(grad, indices):
    """PyTorch's max_pool_double_backward(grad, indices, 2): grad read at each index."""
    plane = reshape(grad, list(grad.shape[:-2]) + [-1])
    return reshape(gather(plane, -1, reshape(indices, list(indices.shape[:-2]) + [-1])), list(indices.shape))


def _unpool_samples(op):
    def pooled(shape, key, kernel, stride=None, padding=0):
        x = make_arg(shape, key=(op, key), requires_grad=False)
        values, idx = max_pool2d_with_indices(x, kernel, stride or [], padding)
        return make_arg(tuple(values.shape), key=(op, key, "v")), idx
    v0, i0 = pooled((2, 3, 4, 4), 0, [2, 2])
    v1, i1 = pooled((1, 2, 5, 5), 1, [2, 2])
    v2, i2 = pooled((2, 6, 7), 2, [3, 3], [3, 3], [1, 1])
    return [SampleInput("(2,3,4,4) k2", v0, i0, [2, 2]),
            SampleInput("(1,2,5,5) k2 output_size", v1, i1, [2, 2], output_size=[5, 5]),
            SampleInput("(2,6,7) unbatched k3 s3 p1", v2, i2, [3, 3], [3, 3], [1, 1], [6, 7])]


max_unpool2d = defop(
    "max_unpool2d(Tensor self, Tensor indices, int[] kernel_size, int[]? stride=None, int[] padding=0, "
    "int[]? output_size=None) -> Tensor",
    kernel=_unpool_kernel, meta=_unpool_meta,
    grads={"self": lambda grad, indices: _unpool_grad(grad, indices), "indices": None},
    backward_name="MaxUnpool2DBackward0",
    samples=_unpool_samples, torch="torch.nn.functional.max_unpool2d",
    doc="max_pool2d's partial inverse: each value of (N, C, H, W) or (C, H, W) self placed at its flat index "
        "(from max_pool2d's return_indices) in a zero (H_out, W_out) plane; H_out = (H - 1) * stride - "
        "2 * padding + kernel_size unless output_size is given.")
