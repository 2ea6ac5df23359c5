"""max_pool2d and avg_pool2d, with their backward ops.

Every window is gathered with one fancy index into the flattened input (a table of
flat positions per (output pixel, kernel tap), padding pointing at one extra
sentinel column), so ceil_mode's ragged last windows need no special case; the
backward ops scatter-add with one `bincount`. Both pools are linear in the values
they pick, so their backward ops differentiate into each other: max pooling's
gradient goes to the argmax of each window, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from ..backends.meta import MetaArray
from .nn import require_floating, sizes
from .registry import defop
from .samples import SampleInput, make_arg

__all__ = ["max_pool2d", "avg_pool2d", "max_pool2d_with_indices_backward", "avg_pool2d_backward",
           "max_pool2d_double_backward"]


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
    """The checked geometry of one pooling call."""
    __slots__ = ("batched", "n", "c", "h", "w", "kernel", "stride", "padding", "dilation", "oh", "ow")

    def __init__(self, name, input, kernel_size, stride, padding, dilation, ceil_mode):
        self.kernel = _pair(kernel_size, f"{name}: kernel_size must either be a single int, or a tuple of two ints")
        if stride is None or len(stride) == 0:
            self.stride = self.kernel
        else:
            self.stride = _pair(stride, f"{name}: stride must either be omitted, a single int, or a tuple of two ints")
        self.padding = _pair(padding, f"{name}: padding must either be a single int, or a tuple of two ints")
        self.dilation = _pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two ints")
        if input.ndim not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel, self.stride, self.padding, self.dilation
        if kh <= 0 or kw <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
        if sh <= 0 or sw <= 0:
            raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
        if dh <= 0 or dw <= 0:
            raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
        self.batched = input.ndim == 4
        self.n = input.shape[0] if self.batched else 1
        self.c, self.h, self.w = input.shape[-3:]
        if 0 in (self.c, self.h, self.w):
            raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{sizes(input.shape)}")
        if kw // 2 < pw or kh // 2 < ph:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                               f"padH = {ph}, kW = {kw}, kH = {kh}")
        self.oh = _output_size(self.h, kh, ph, sh, dh, ceil_mode)
        self.ow = _output_size(self.w, kw, pw, sw, dw, ceil_mode)
        if self.oh < 1 or self.ow < 1:
            raise RuntimeError(f"Given input size: ({self.c}x{self.h}x{self.w}). Calculated output size: "
                               f"({self.c}x{self.oh}x{self.ow}). Output size is too small")
        require_floating(name, input.dtype)

    @property
    def out_shape(self):
        return ((self.n,) if self.batched else ()) + (self.c, self.oh, self.ow)

    def taps(self):
        """(OH, OW, KH*KW) flat input positions of each window's taps; h*w where a tap is padding."""
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel, self.stride, self.padding, self.dilation
        rows = (np.arange(self.oh) * sh - ph)[:, None] + np.arange(kh) * dh
        cols = (np.arange(self.ow) * sw - pw)[:, None] + np.arange(kw) * dw
        inside = ((rows >= 0) & (rows < self.h))[:, None, :, None] & ((cols >= 0) & (cols < self.w))[None, :, None, :]
        flat = rows[:, None, :, None] * self.w + cols[None, :, None, :]
        return np.where(inside, flat, self.h * self.w).reshape(self.oh, self.ow, kh * kw)

    def windows(self, xp, input, fill):
        """(N, C, OH, OW, KH*KW) values of every window, padding read as `fill`."""
        flat = input.reshape(self.n, self.c, self.h * self.w)
        pad = xp.full((self.n, self.c, 1), fill, dtype=input.dtype)
        return xp.concatenate([flat, pad], axis=2)[:, :, xp.asarray(self.taps())]

    def scatter(self, xp, positions, values, dtype):
        """Sum `values` into an input-shaped array at flat `positions` (h*w: dropped)."""
        size = self.h * self.w + 1
        planes = xp.arange(self.n * self.c).reshape((self.n, self.c) + (1,) * (positions.ndim - 2)) * size
        out = xp.bincount((planes + positions).ravel(), weights=values.ravel(), minlength=self.n * self.c * size)
        out = out.reshape(self.n, self.c, size)[:, :, :-1].astype(dtype, copy=False)
        return out.reshape(((self.n,) if self.batched else ()) + (self.c, self.h, self.w))


# ---- max_pool2d -----------------------------------------------------------------------------------

def _argmax(pool, xp, input):
    """Per output pixel: the window's max and its flat position in the input (PyTorch's indices)."""
    values = pool.windows(xp, input, -np.inf)
    arg = xp.argmax(values, axis=-1)[..., None]         # NOTE: the first maximum, and a NaN wins, as in PyTorch
    taps = xp.broadcast_to(xp.asarray(pool.taps()), values.shape)
    return xp.take_along_axis(values, arg, -1)[..., 0], xp.take_along_axis(taps, arg, -1)[..., 0]


def _max_meta(input, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return MetaArray(pool.out_shape, input.dtype)


def _max_kernel(xp, input, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return _argmax(pool, xp, input)[0].reshape(pool.out_shape)


def _max_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)
    _check_grad_output(grad_output, pool.out_shape)
    return MetaArray(self.shape, grad_output.dtype)


def _max_backward_kernel(xp, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)
    _check_grad_output(grad_output, pool.out_shape)
    _, positions = _argmax(pool, xp, self)
    return pool.scatter(xp, positions, grad_output, grad_output.dtype)


def _max_double_meta(grad, self, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)
    _check_grad_output(grad, self.shape)
    return MetaArray(pool.out_shape, grad.dtype)


def _max_double_kernel(xp, grad, self, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _Pool("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)
    _check_grad_output(grad, self.shape)
    _, positions = _argmax(pool, xp, self)
    flat = grad.reshape(pool.n, pool.c, pool.h * pool.w)
    return xp.take_along_axis(flat, positions.reshape(pool.n, pool.c, -1), 2).reshape(pool.out_shape)


def _check_grad_output(grad_output, expected):
    if tuple(grad_output.shape) != tuple(expected):
        raise RuntimeError(f"Expected grad_output of size {sizes(expected)}, but got grad_output of size "
                           f"{sizes(grad_output.shape)}")


_POOL_ARGS = "int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False"
_TORCH_INDICES = ("torch.nn.functional.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, "
                  "return_indices=True)[1]")


def _max_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,4,4) k2", arg((2, 2, 4, 4), 0), 2),
            SampleInput("k3 s1 overlapping", arg((1, 2, 5, 5), 1), 3, 1),
            SampleInput("k3 s2 p1 ceil_mode", arg((1, 1, 6, 5), 2), [3, 3], 2, 1, ceil_mode=True),
            SampleInput("k(2,3) dilation 2", arg((1, 2, 7, 7), 3), [2, 3], [1, 2], 0, 2),
            SampleInput("unbatched T", arg((2, 4, 4), 4, transposed=True), 2)]


def _double_samples(op, grad_shape_of):
    out = []
    for s in _max_samples(op):
        x = s.args[0].detach()
        g = make_arg(grad_shape_of(s, x), key=(op, s.name, "g"))
        out.append(SampleInput(s.name, g, x, *s.args[1:], **s.kwargs))
    return out


def _pooled_shape(sample, x):
    return tuple(max_pool2d(x.to("meta"), *sample.args[1:], **sample.kwargs).shape)


max_pool2d_double_backward = defop(
    f"max_pool2d_double_backward(Tensor grad, Tensor self, {_POOL_ARGS}) -> Tensor",
    kernel=_max_double_kernel, meta=_max_double_meta,
    grads={"grad": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
               max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode),
           "self": None},
    samples=lambda op: _double_samples(op, lambda s, x: tuple(x.shape)),
    torch="lambda g, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False: "
          "g.flatten(-2).gather(-1, " + _TORCH_INDICES + ".flatten(-2)).view_as(" + _TORCH_INDICES + ")",
    doc="The gradient of max_pool2d's backward w.r.t. its grad_output: `grad` read at each window's argmax.")

max_pool2d_with_indices_backward = defop(
    f"max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, {_POOL_ARGS}) -> Tensor",
    kernel=_max_backward_kernel, meta=_max_backward_meta,
    grads={"grad_output": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
               max_pool2d_double_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode),
           "self": lambda grad: grad * 0},
    backward_name="MaxPool2DWithIndicesBackwardBackward0", samples=lambda op: _double_samples(op, _pooled_shape),
    torch="lambda g, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False: "
          "torch.ops.aten.max_pool2d_with_indices_backward(g, x, kernel_size, stride or kernel_size, padding, "
          "dilation, ceil_mode, " + _TORCH_INDICES + ")",
    doc="The gradient of max_pool2d: grad_output added at each window's argmax (recomputed from self; PyTorch "
        "passes the saved indices instead).")

max_pool2d = defop(
    f"max_pool2d(Tensor self, {_POOL_ARGS}) -> Tensor",
    kernel=_max_kernel, meta=_max_meta,
    grads={"self": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode:
               max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode)},
    backward_name="MaxPool2DWithIndicesBackward0", samples=_max_samples, torch="torch.nn.functional.max_pool2d",
    doc="The max of each window of (N, C, H, W) or (C, H, W) input; padding counts as -inf.")


# ---- avg_pool2d -----------------------------------------------------------------------------------

def _avg_pool(input, kernel_size, stride, padding, ceil_mode):
    return _Pool("avg_pool2d", input, kernel_size, stride, padding, (1,), ceil_mode)


def _divisor(pool, count_include_pad, divisor_override):
    """(OH, OW) divisors as PyTorch's avg_pool2d computes them per window."""
    if divisor_override is not None:
        return np.full((pool.oh, pool.ow), float(divisor_override))
    counts = []
    for out, k, s, p, size in ((pool.oh, pool.kernel[0], pool.stride[0], pool.padding[0], pool.h),
                               (pool.ow, pool.kernel[1], pool.stride[1], pool.padding[1], pool.w)):
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
    share = grad_output.reshape(pool.n, pool.c, pool.oh, pool.ow) / xp.asarray(
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


avg_pool2d_backward = defop(
    f"avg_pool2d_backward(Tensor grad_output, Tensor self, {_AVG_ARGS}) -> Tensor",
    kernel=_avg_backward_kernel, meta=_avg_backward_meta,
    grads={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
               avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
           "self": lambda grad: grad * 0},
    backward_name="AvgPool2DBackwardBackward0",
    samples=lambda op: [SampleInput(s.name, make_arg(tuple(avg_pool2d(s.args[0].to("meta"), *s.args[1:],
                                                                      **s.kwargs).shape), key=(op, s.name)),
                                    s.args[0].detach(), *s.args[1:], **s.kwargs) for s in _avg_samples(op)],
    torch="lambda g, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
          "divisor_override=None: torch.ops.aten.avg_pool2d_backward(g, x, kernel_size, stride or kernel_size, "
          "padding, ceil_mode, count_include_pad, divisor_override)",
    doc="The gradient of avg_pool2d: each window's grad_output, divided by its divisor, spread over its taps.")

avg_pool2d = defop(
    f"avg_pool2d(Tensor self, {_AVG_ARGS}) -> Tensor",
    kernel=_avg_kernel, meta=_avg_meta,
    grads={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
               avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override)},
    backward_name="AvgPool2DBackward0", samples=_avg_samples, torch="torch.nn.functional.avg_pool2d",
    doc="The mean of each window of (N, C, H, W) or (C, H, W) input; count_include_pad counts the zero padding "
        "in the divisor; divisor_override replaces it.")
