"""Convolutions over 1, 2 or 3 spatial dims — conv1d/2d/3d, conv_transpose1d/2d/3d — and
the two backward ops they all share.

One N-d kernel: the forward gathers every receptive field with one `as_strided` view
(im2col) and multiplies by the weight in one matmul. The gradient w.r.t. the input is
a transposed convolution written as a convolution (grad_output spread out by the
stride into a zero buffer, correlated with the flipped, channel-swapped weight, the
padding cropped off); the gradient w.r.t. the weight is one matmul of grad_output
with the same windows.

The ops are closed under differentiation — convolution_backward_input is the adjoint
of convNd in `input` (and is conv_transposeNd's forward), convolution_backward_weight
its adjoint in `weight` — so their formulas call each other and double backward needs
nothing more. padding="same" may be asymmetric (PyTorch's extra pad goes after); every
op here takes the padding string and resolves it from the weight's shape.
"""
from __future__ import annotations

import itertools
import math

from ...backends.meta import MetaArray
from ...errors import DtypeError, ShapeError
from ...messages import c_type_name, require_floating, sizes, tensor_type_name
from ..reduce.arithmetic import sum  # noqa: A004
from ..registry import defop
from ..samples import SampleInput, make_arg
from ..shape.indexing import slice as _slice
from ..shape.pad import pad
from ..shape.view import permute


def _expand_param(value, name, dims=2):
    """An int or a list of 1 or `dims` values as a `dims`-tuple (PyTorch's expand_param_if_needed)."""
    value = tuple(value)
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match "
                           f"the convolution dimensions, but got {name}={sizes(value)}")
    return value


class _Geometry:
    """The checked parameters of one convolution (for a transposed one: of the convolution it inverts)."""
    __slots__ = ("dims", "batched", "stride", "lo", "hi", "dilation", "groups")


def _padding(padding, dims, kernel, stride, dilation):
    """(before, after) padding per dim; "same" pads dilation*(k-1) in all, the odd one after."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * dims, (0,) * dims
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    pad = _expand_param(padding, "padding", dims)
    return pad, pad


def _check_conv(name, dims, input, weight, bias, stride, padding, dilation, groups, transposed=False,
                output_padding=(0,)):
    """PyTorch's checks, in PyTorch's order. Returns the geometry and the output shape."""
    if bias is not None and bias.dtype != input.dtype:
        raise DtypeError(f"Input type ({c_type_name(input.dtype)}) and bias type ({c_type_name(bias.dtype)}) "
                           f"should be the same")
    if input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
                           f"input of size: {sizes(input.shape)}")
    geo = _Geometry()
    geo.dims, geo.groups = dims, groups
    geo.batched = input.ndim == dims + 2
    shape = tuple(input.shape) if geo.batched else (1,) + tuple(input.shape)
    geo.stride = _expand_param(stride, "stride", dims)
    geo.dilation = _expand_param(dilation, "dilation", dims)
    ws = tuple(weight.shape)
    kernel = ws[2:] if len(ws) == dims + 2 else (1,) * dims
    geo.lo, geo.hi = _padding(padding, dims, kernel, geo.stride, geo.dilation)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(geo.lo + geo.hi) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(geo.stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(geo.dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if len(ws) != dims + 2:
        raise ShapeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight {sizes(ws)}, "
                           f"but got {dims + 2}-dimensional input of size {sizes(shape)} instead")
    if ws[0] < groups:
        raise ShapeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {sizes(ws)} instead")
    if ws[0] % groups:
        # NOTE: the doubled brackets are PyTorch's own message
        raise ShapeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{sizes(ws)}] instead")
    channels, out_channels = (ws[0], ws[1] * groups) if transposed else (ws[1] * groups, ws[0])
    if shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise ShapeError(f"Given {given}, weight of size {sizes(ws)}, expected input{sizes(shape)} to have "
                           f"{channels} channels, but got {shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        given = "transposed=1, " if transposed else ""
        raise ShapeError(f"Given {given}weight of size {sizes(ws)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {sizes(bias.shape)} instead")
    size = shape[2:]
    if transposed:
        output_padding = _expand_param(output_padding, "output_padding", dims)
        if any(p >= max(s, d) for p, s, d in zip(output_padding, geo.stride, geo.dilation)):
            names = ("height", "width") if dims == 2 else ("width",) if dims == 1 else ("depth", "height", "width")
            parts = [f"output_padding_{n}: {p}" for n, p in zip(names, output_padding)]
            parts += [f"stride_{n}: {s}" for n, s in zip(names, geo.stride)]
            parts += [f"dilation_{n}: {d}" for n, d in zip(names, geo.dilation)]
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"{' '.join(parts)}")
        out = tuple((i - 1) * s - lo - hi + d * (k - 1) + p + 1 for i, s, lo, hi, d, k, p in
                    zip(size, geo.stride, geo.lo, geo.hi, geo.dilation, kernel, output_padding))
        if min(out) < 1:
            raise ShapeError(f"Given input size per channel: ({' x '.join(map(str, size))}). Calculated output "
                               f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    else:
        padded = tuple(i + lo + hi for i, lo, hi in zip(size, geo.lo, geo.hi))
        extent = tuple(d * (k - 1) + 1 for d, k in zip(geo.dilation, kernel))
        if any(p < e for p, e in zip(padded, extent)):
            raise ShapeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, extent))}). Kernel size can't be greater than "
                               f"actual input size")
        out = tuple((p - e) // s + 1 for p, e, s in zip(padded, extent, geo.stride))
    if weight.dtype != input.dtype:
        raise DtypeError(f"Input type ({tensor_type_name(input.dtype)}) and weight type "
                           f"({tensor_type_name(weight.dtype)}) should be the same")
    require_floating(f"slow_conv{'_transpose' if transposed else ''}{max(dims, 2)}d_cpu", input.dtype)
    full = (shape[0], out_channels) + out
    return geo, full if geo.batched else full[1:]


# ---- kernels on batched (N, C, *spatial) arrays ------------------------------------------------------

def _padded(xp, x, lo, hi):
    if any(lo) or any(hi):
        # xp.pad's zeros without its general machinery (most of a small convolution's time)
        padded = xp.zeros(tuple(x.shape[:2]) + tuple(s + a + b for s, a, b in zip(x.shape[2:], lo, hi)), dtype=x.dtype)
        padded[(slice(None),) * 2 + tuple(slice(a, a + s) for a, s in zip(lo, x.shape[2:]))] = x
        return padded
    return x


def _columns(xp, x, kernel, stride, dilation, groups, out):
    """im2col of a padded input: (N, groups, prod(out), C/groups * prod(kernel)), one as_strided view."""
    n, c = x.shape[:2]
    dims = len(kernel)
    if hasattr(x, "strides"):
        st = x.strides
        windows = xp.lib.stride_tricks.as_strided(
            x, (n, c) + tuple(out) + tuple(kernel),
            st[:2] + tuple(st[2 + i] * stride[i] for i in range(dims))
            + tuple(st[2 + i] * dilation[i] for i in range(dims)))
    else:       # an array without a memory layout (dask): one strided slice per kernel tap, stacked
        taps = [x[(slice(None), slice(None)) + tuple(slice(k[i] * dilation[i], k[i] * dilation[i]
                                                           + (out[i] - 1) * stride[i] + 1, stride[i])
                                                     for i in range(dims))]
                for k in itertools.product(*(range(size) for size in kernel))]
        windows = xp.stack(taps, axis=-1).reshape((n, c) + tuple(out) + tuple(kernel))
    cg = c // groups
    windows = windows.reshape((n, groups, cg) + tuple(out) + tuple(kernel))
    order = (0, 1) + tuple(range(3, 3 + dims)) + (2,) + tuple(range(3 + dims, 3 + 2 * dims))
    return windows.transpose(order).reshape(n, groups, math.prod(out), cg * math.prod(kernel))


def _conv(xp, x, weight, stride, lo, hi, dilation, groups):
    o, cg, kernel = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    x = _padded(xp, x, lo, hi)
    out = tuple((x.shape[2 + i] - dilation[i] * (k - 1) - 1) // stride[i] + 1 for i, k in enumerate(kernel))
    cols = _columns(xp, x, kernel, stride, dilation, groups, out)
    w = weight.reshape(groups, o // groups, cg * math.prod(kernel)).transpose(0, 2, 1)
    res = xp.matmul(cols, w)                                  # (N, groups, prod(out), O/groups)
    return res.transpose(0, 1, 3, 2).reshape((x.shape[0], o) + out)


def _conv_input_grad(xp, grad_output, weight, size, stride, lo, hi, dilation, groups):
    """The adjoint of _conv in x, for an input of spatial `size` (a transposed convolution)."""
    n, o = grad_output.shape[:2]
    out = grad_output.shape[2:]
    cg, kernel = weight.shape[1], tuple(weight.shape[2:])
    dims = len(kernel)
    reach = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
    buf = xp.zeros((n, o) + tuple(s + a + b + r for s, a, b, r in zip(size, lo, hi, reach)), dtype=grad_output.dtype)
    buf[(slice(None),) * 2 + tuple(slice(r, r + (m - 1) * s + 1, s) for r, m, s in zip(reach, out, stride))] = \
        grad_output
    flipped = weight.reshape((groups, o // groups, cg) + kernel).swapaxes(1, 2)
    flipped = flipped.reshape((groups * cg, o // groups) + kernel)[(Ellipsis,) + (slice(None, None, -1),) * dims]
    full = _conv(xp, buf, flipped, (1,) * dims, (0,) * dims, (0,) * dims, dilation, groups)
    return full[(slice(None),) * 2 + tuple(slice(a, a + s) for a, s in zip(lo, size))]


def _conv_weight_grad(xp, grad_output, x, weight_size, stride, lo, hi, dilation, groups):
    o, cg, kernel = weight_size[0], weight_size[1], tuple(weight_size[2:])
    n, out = grad_output.shape[0], tuple(grad_output.shape[2:])
    positions = math.prod(out)
    cols = _columns(xp, _padded(xp, x, lo, hi), kernel, stride, dilation, groups, out)
    cols = cols.transpose(1, 0, 2, 3).reshape(groups, n * positions, cg * math.prod(kernel))
    g = grad_output.reshape(n, groups, o // groups, positions).transpose(1, 2, 0, 3)
    g = g.reshape(groups, o // groups, n * positions)
    return xp.matmul(g, cols).reshape(tuple(weight_size))


def _batch(a, batched):
    return a if batched else a.reshape((1,) + tuple(a.shape))


def _unbatch(a, batched):
    return a if batched else a.reshape(a.shape[1:])


def _bias_grad(grad, dims):
    batched = grad.ndim == dims + 2
    return sum(grad, [0] + list(range(2, grad.ndim)) if batched else list(range(1, grad.ndim)))


def _add_bias(out, bias):
    return out if bias is None else out + bias.reshape((1, -1) + (1,) * (out.ndim - 2))


# ---- conv1d, conv2d, conv3d -------------------------------------------------------------------------

def _spatial(dims, sizes2d, extra):
    """Sample spatial sizes written for 2-D, cut to 1-D or grown to 3-D (by repeating sizes2d[extra])."""
    return tuple(sizes2d[:dims]) if dims <= 2 else tuple(sizes2d) + (sizes2d[extra],)


def _conv_samples(dims):
    def samples(op):
        def arg(shape, k, **kw):
            return make_arg(shape, key=(op, k), **kw)

        def sp(*sizes2d):
            return _spatial(dims, sizes2d, -1)
        return [SampleInput("(2,2,*5)*(3,2,*3)+b", arg((2, 2) + sp(5, 5), 0), arg((3, 2) + sp(3, 3), 1), arg((3,), 2)),
                SampleInput("stride 2, uncovered edge", arg((1, 2) + sp(6, 6), 3), arg((2, 2) + sp(3, 3), 4), None, 2),
                SampleInput("padding, dilation 2", arg((1, 1) + sp(5, 6), 5), arg((2, 1) + sp(2, 2), 6), arg((2,), 7),
                            1, list(sp(1, 2)), 2),
                SampleInput("groups 2, stride", arg((1, 4) + sp(5, 4), 8), arg((4, 2) + sp(2, 3), 9), None,
                            list(sp(2, 1)), 1, 1, 2),
                SampleInput("unbatched", arg((2,) + sp(4, 4), 10), arg((3, 2) + sp(3, 3), 11), arg((3,), 12), 1, 1),
                SampleInput("non-contiguous input", arg((2, 2) + sp(4, 4), 13, transposed=True),
                            arg((2, 2) + sp(2, 2), 14)),
                SampleInput("padding wider than the kernel", arg((1, 1) + sp(3, 3), 15), arg((2, 1) + sp(1, 1), 16),
                            None, 1, 2),
                SampleInput("padding='same', even kernel, dilation", arg((1, 2) + sp(5, 4), 17, low=0.5, high=1.5),
                            arg((2, 2) + sp(2, 3), 18), arg((2,), 19), 1, "same", list(sp(3, 1))),
                SampleInput("padding='valid'", arg((1, 2) + sp(4, 5), 20), arg((2, 2) + sp(2, 2), 21), None, 1,
                            "valid")]
    return samples


def _conv_op(dims):
    name = f"conv{dims}d"

    def meta(input, weight, bias, stride, padding, dilation, groups):
        return MetaArray(_check_conv(name, dims, input, weight, bias, stride, padding, dilation, groups)[1],
                         input.dtype)

    def kernel(xp, input, weight, bias, stride, padding, dilation, groups):
        geo, _ = _check_conv(name, dims, input, weight, bias, stride, padding, dilation, groups)
        out = _conv(xp, _batch(input, geo.batched), weight, geo.stride, geo.lo, geo.hi, geo.dilation, groups)
        return _unbatch(_add_bias(out, bias), geo.batched).astype(input.dtype, copy=False)

    return defop(
        f"{name}(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, "
        f"int[] dilation=1, int groups=1) -> Tensor",
        kernel=kernel, meta=meta,
        grads={"input": lambda grad, weight, input_shape, stride, padding, dilation, groups:
                   convolution_backward_input(grad, weight, input_shape, stride, padding, dilation, groups),
               "weight": lambda grad, input, weight_shape, stride, padding, dilation, groups:
                   convolution_backward_weight(grad, input, weight_shape, stride, padding, dilation, groups),
               "bias": lambda grad: _bias_grad(grad, dims)},
        backward_name="ConvolutionBackward0", samples=_conv_samples(dims), torch=f"torch.nn.functional.{name}",
        doc=f"{dims}-D cross-correlation of (N, C, *) or (C, *) input with (O, C/groups, *kernel) weight; stride, "
            f"padding and dilation are an int or {dims} ints; padding may be 'same' or 'valid'.")


conv1d = _conv_op(1)
conv2d = _conv_op(2)
conv3d = _conv_op(3)
_CONV = {1: conv1d, 2: conv2d, 3: conv3d}


# ---- conv_transpose1d, conv_transpose2d --------------------------------------------------------------

def _transpose_input_grad(grad, input, weight, stride, padding, dilation, groups):
    dims = weight.ndim - 2
    g = _CONV[dims](grad, weight, None, stride, padding, dilation, groups)
    for d in range(dims):       # output_padding >= stride: the convolution sees more than the input
        if g.shape[-dims + d] != input.shape[-dims + d]:
            g = _slice(g, g.ndim - dims + d, 0, input.shape[-dims + d])
    return g


def _transpose_weight_grad(grad, input, weight_shape, stride, padding, dilation, groups):
    dims = len(weight_shape) - 2
    stride, dilation = _expand_param(stride, "stride", dims), _expand_param(dilation, "dilation", dims)
    lo, hi = _padding(padding, dims, weight_shape[2:], stride, dilation)
    expected = [(g + a + b - d * (k - 1) - 1) // s + 1 for g, a, b, d, k, s in
                zip(grad.shape[-dims:], lo, hi, dilation, weight_shape[2:], stride)]
    extra = [e - s for e, s in zip(expected, input.shape[-dims:])]
    if any(extra):
        input = pad(input, [p for e in reversed(extra) for p in (0, e)])
    return convolution_backward_weight(input, grad, weight_shape, stride, padding, dilation, groups)


def _transpose_samples(dims):
    def samples(op):
        def arg(shape, k, **kw):
            return make_arg(shape, key=(op, k), **kw)

        def sp(*sizes2d):
            return _spatial(dims, sizes2d, 0)
        return [SampleInput("(2,3,*4)*(3,2,*3)+b", arg((2, 3) + sp(4, 4), 0), arg((3, 2) + sp(3, 3), 1), arg((2,), 2)),
                SampleInput("stride 2 padding 1 output_padding 1", arg((1, 2) + sp(3, 4), 3),
                            arg((2, 3) + sp(3, 2), 4), arg((3,), 5), 2, 1, 1),
                SampleInput("groups 2 dilation 2", arg((1, 4) + sp(3, 3), 6), arg((4, 1) + sp(2, 2), 7), None,
                            1, 0, 0, 2, 2),
                SampleInput("output_padding >= stride, < dilation", arg((1, 2) + sp(3, 3), 8),
                            arg((2, 2) + sp(2, 2), 9), None, 1, 0, 1, 1, 2),
                SampleInput("unbatched, stride", arg((2,) + sp(3, 3), 10), arg((2, 2) + sp(2, 3), 11), None,
                            list(sp(2, 3))),
                SampleInput("non-contiguous input", arg((2, 2) + sp(3, 3), 12, transposed=True),
                            arg((2, 1) + sp(2, 2), 13))]
    return samples


def _transpose_op(dims):
    name = f"conv_transpose{dims}d"

    def check(input, weight, bias, stride, padding, output_padding, groups, dilation):
        return _check_conv(name, dims, input, weight, bias, stride, padding, dilation, groups, True, output_padding)

    def meta(input, weight, bias, stride, padding, output_padding, groups, dilation):
        return MetaArray(check(input, weight, bias, stride, padding, output_padding, groups, dilation)[1],
                         input.dtype)

    def kernel(xp, input, weight, bias, stride, padding, output_padding, groups, dilation):
        geo, shape = check(input, weight, bias, stride, padding, output_padding, groups, dilation)
        out = _conv_input_grad(xp, _batch(input, geo.batched), weight, shape[-dims:], geo.stride, geo.lo, geo.hi,
                               geo.dilation, groups)
        return _unbatch(_add_bias(out, bias), geo.batched).astype(input.dtype, copy=False)

    return defop(
        f"{name}(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, "
        f"int[] output_padding=0, int groups=1, int[] dilation=1) -> Tensor",
        kernel=kernel, meta=meta,
        grads={"input": lambda grad, input, weight, stride, padding, dilation, groups:
                   _transpose_input_grad(grad, input, weight, stride, padding, dilation, groups),
               "weight": lambda grad, input, weight_shape, stride, padding, dilation, groups:
                   _transpose_weight_grad(grad, input, weight_shape, stride, padding, dilation, groups),
               "bias": lambda grad: _bias_grad(grad, dims)},
        backward_name="ConvolutionBackward0", samples=_transpose_samples(dims), torch=f"torch.nn.functional.{name}",
        doc=f"The {dims}-D transposed convolution (the gradient of conv{dims}d w.r.t. its input) of (N, Cin, *) or "
            f"(Cin, *) input with (Cin, Cout/groups, *kernel) weight; output_padding adds to one side of the output.")


conv_transpose1d = _transpose_op(1)
conv_transpose2d = _transpose_op(2)
conv_transpose3d = _transpose_op(3)


# ---- the backward ops ----------------------------------------------------------------------------

def _check_grad_output(grad_output, expected):
    if tuple(grad_output.shape) != tuple(expected):
        raise ShapeError(f"Expected grad_output of size {sizes(expected)}, but got grad_output of size "
                           f"{sizes(grad_output.shape)}")


def _backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups):
    dims = weight.ndim - 2
    shape = MetaArray(input_size, grad_output.dtype)
    geo, out = _check_conv(f"conv{dims}d", dims, shape, weight, None, stride, padding, dilation, groups)
    _check_grad_output(grad_output, out)
    return shape, geo


def _backward_input_kernel(xp, grad_output, weight, input_size, stride, padding, dilation, groups):
    _, geo = _backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups)
    out = _conv_input_grad(xp, _batch(grad_output, geo.batched), weight, tuple(input_size[-geo.dims:]), geo.stride,
                           geo.lo, geo.hi, geo.dilation, groups)
    return _unbatch(out, geo.batched).astype(grad_output.dtype, copy=False)


def _backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation, groups):
    dims = len(weight_size) - 2
    weight = MetaArray(weight_size, input.dtype)
    geo, out = _check_conv(f"conv{dims}d", dims, input, weight, None, stride, padding, dilation, groups)
    _check_grad_output(grad_output, out)
    return weight, geo


def _backward_weight_kernel(xp, grad_output, input, weight_size, stride, padding, dilation, groups):
    _, geo = _backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation, groups)
    out = _conv_weight_grad(xp, _batch(grad_output, geo.batched), _batch(input, geo.batched), tuple(weight_size),
                            geo.stride, geo.lo, geo.hi, geo.dilation, groups)
    return out.astype(input.dtype, copy=False)


def _backward_samples(op, which):
    cases = [("(2,2,5,5) (3,2,3,3)", (2, 2, 5, 5), (3, 2, 3, 3), (2, 3, 3, 3), (1, 0, 1, 1)),
             ("stride 2 padding 1 groups 2", (1, 4, 6, 5), (2, 2, 3, 2), (1, 2, 3, 3), (2, 1, 1, 2)),
             ("unbatched dilation 2", (2, 5, 5), (2, 2, 2, 2), (2, 3, 3), (1, 0, 2, 1)),
             ("1-D stride 2", (2, 2, 7), (3, 2, 3), (2, 3, 4), (2, 1, 1, 1)),
             ("3-D", (1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (1, 2, 2, 3, 2), (1, 0, 1, 1))]
    out = []
    for i, (name, xs, ws, gs, (stride, padding, dilation, groups)) in enumerate(cases):
        g = make_arg(gs, key=(op, i, "g"))
        if which == "input":
            out.append(SampleInput(name, g, make_arg(ws, key=(op, i, "w")), list(xs), stride, padding, dilation,
                                   groups))
        else:
            out.append(SampleInput(name, g, make_arg(xs, key=(op, i, "x")), list(ws), stride, padding, dilation,
                                   groups))
    return out


def _conv_nd(weight):
    return _CONV[weight.ndim - 2]


_TORCH_BACKWARD = ("torch.ops.aten.convolution_backward(g if {batched} else g.unsqueeze(0), {input}, {weight}, None, "
                   "*[[p] * (len({wsize}) - 2) if isinstance(p, int) else list(p) for p in (stride, padding, "
                   "dilation)], False, [0] * (len({wsize}) - 2), groups, {mask})[{index}]")

convolution_backward_input = defop(
    "convolution_backward_input(Tensor grad_output, Tensor weight, int[] input_size, int[] stride, int[] padding, "
    "int[] dilation, int groups) -> Tensor",
    kernel=_backward_input_kernel, meta=lambda *args: _backward_input_meta(*args)[0],
    grads={"grad_output": lambda grad, weight, stride, padding, dilation, groups:
               _conv_nd(weight)(grad, weight, None, stride, padding, dilation, groups),
           "weight": lambda grad, grad_output, weight_shape, stride, padding, dilation, groups:
               convolution_backward_weight(grad_output, grad, weight_shape, stride, padding, dilation, groups)},
    backward_name="ConvolutionBackwardBackward0", samples=lambda op: _backward_samples(op, "input"),
    torch="lambda g, w, size, stride, padding, dilation, groups: " + _TORCH_BACKWARD.format(
        batched="len(size) == w.dim()", wsize="w.shape",
        input="torch.zeros(size if len(size) == w.dim() else [1] + list(size), dtype=g.dtype)", weight="w",
        mask="[True, False, False]", index="0") + ".reshape(size)",
    doc="The gradient of conv1d/2d/3d w.r.t. its input (a transposed convolution); input_size is the input's shape.")

convolution_backward_weight = defop(
    "convolution_backward_weight(Tensor grad_output, Tensor input, int[] weight_size, int[] stride, int[] padding, "
    "int[] dilation, int groups) -> Tensor",
    kernel=_backward_weight_kernel, meta=lambda *args: _backward_weight_meta(*args)[0],
    grads={"grad_output": lambda grad, input, stride, padding, dilation, groups:
               _conv_nd(grad)(input, grad, None, stride, padding, dilation, groups),
           "input": lambda grad, grad_output, input_shape, stride, padding, dilation, groups:
               convolution_backward_input(grad_output, grad, input_shape, stride, padding, dilation, groups)},
    backward_name="ConvolutionBackwardBackward0", samples=lambda op: _backward_samples(op, "weight"),
    torch="lambda g, x, size, stride, padding, dilation, groups: " + _TORCH_BACKWARD.format(
        batched="x.dim() == len(size)", wsize="size", input="x if x.dim() == len(size) else x.unsqueeze(0)",
        weight="torch.zeros(size, dtype=g.dtype)", mask="[False, True, False]", index="1"),
    doc="The gradient of conv1d/2d/3d w.r.t. its weight; weight_size is the weight's shape.")


# ---- convolution, _convolution: ATen's entry points, one of the ops above by the weight's rank -----

def _convolution_composite(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                           *_backend_flags):
    # ATen's convolution takes a batch only (conv1d ... add the batch dim of unbatched input themselves)
    if input.ndim != weight.ndim:
        raise ShapeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                         f"{sizes(weight.shape)}, but got {input.ndim}-dimensional input of size {sizes(input.shape)} "
                         f"instead")
    dims = weight.ndim - 2
    if dims not in (1, 2, 3):
        raise ShapeError(f"convolution: expected a weight of 1, 2 or 3 spatial dims (3-, 4- or 5-dimensional), but "
                         f"got weight of size {sizes(weight.shape)}")
    if transposed:
        return _TRANSPOSED[dims](input, weight, bias, stride, padding, output_padding, groups, dilation)
    return _CONV[dims](input, weight, bias, stride, padding, dilation, groups)


_TRANSPOSED = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


def _convolution_samples(op):
    out = []
    for dims in (1, 2, 3):
        def arg(shape, k, **kw):
            return make_arg(shape, key=(op, dims, k), **kw)

        def sp(n, extra=0):
            return (n + extra,) * dims if dims < 3 else (n,) * dims

        def rep(v):
            return [v] * dims
        out += [SampleInput(f"{dims}-d +b", arg((2, 3) + sp(3, 1), 0), arg((2, 3) + sp(2, 1), 1), arg((2,), 2),
                            rep(1), rep(0), rep(1), False, rep(0), 1),
                SampleInput(f"{dims}-d stride padding dilation groups", arg((1, 4) + sp(4), 3),
                            arg((4, 2) + sp(2), 4), None, rep(2), rep(1), rep(2), False, rep(0), 2),
                SampleInput(f"{dims}-d transposed stride padding output_padding", arg((1, 2) + sp(3), 5),
                            arg((2, 3) + sp(2), 6), arg((3,), 7), rep(2), rep(1), rep(1), True, rep(1), 1)]
    return out


_CONVOLUTION_ARGS = ("Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
                     "bool transposed, int[] output_padding, int groups")

convolution = defop(
    f"convolution({_CONVOLUTION_ARGS}) -> Tensor",
    composite=_convolution_composite, samples=_convolution_samples, torch="torch.convolution",
    doc="ATen's convolution: conv1d/2d/3d, or conv_transpose1d/2d/3d where transposed, of batched (N, C, *) input, "
        "by the weight's rank.")

_convolution = defop(
    f"_convolution({_CONVOLUTION_ARGS}, bool benchmark, bool deterministic, bool cudnn_enabled, "
    f"bool allow_tf32=True) -> Tensor",
    composite=_convolution_composite,
    samples=lambda op: [SampleInput(s.name, *s.args, False, False, True, True) for s in _convolution_samples(op)],
    torch="torch._convolution",
    doc="ATen's _convolution: convolution, its backend flags (benchmark, deterministic, cudnn_enabled, "
        "allow_tf32) without effect on the CPU.")


# ---- convolution_backward: ATen's backward of convolution, the gradients output_mask asks for ----------

def _convolution_backward_composite(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                    output_padding, groups, output_mask):
    # a gradient output_mask leaves out is None (ATen's undefined tensor); each is computed by the op
    # convolution's own backward formula calls, so it is differentiable again (and has forward AD)
    if len(output_mask) != 3:
        raise ValueError(f"convolution_backward: output_mask must have 3 entries, got {len(output_mask)}")
    dims = weight.ndim - 2
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = (_transpose_input_grad(grad_output, input, weight, stride, padding, dilation, groups)
                      if transposed else
                      convolution_backward_input(grad_output, weight, list(input.shape), stride, padding, dilation,
                                                 groups))
    if output_mask[1]:
        grad_weight = (_transpose_weight_grad(grad_output, input, list(weight.shape), stride, padding, dilation,
                                              groups)
                       if transposed else
                       convolution_backward_weight(grad_output, input, list(weight.shape), stride, padding, dilation,
                                                   groups))
    if output_mask[2]:
        grad_bias = _bias_grad(grad_output, dims)
    return grad_input, grad_weight, grad_bias


def _convolution_backward_samples(op):
    out = []
    for k, s in enumerate(_convolution_samples(op)):
        input, weight, bias, stride, padding, dilation, transposed, output_padding, groups = s.args
        result = convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
        grad = make_arg(tuple(result.shape), key=(op, k, "g"))
        out.append(SampleInput(s.name, grad, input, weight, None if bias is None else list(bias.shape), stride,
                               padding, dilation, transposed, output_padding, groups, [True, True, True]))
    return out


convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[]? bias_sizes, int[] stride, "
    "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool[] output_mask) "
    "-> (Tensor, Tensor, Tensor)",
    composite=_convolution_backward_composite, samples=_convolution_backward_samples,
    torch="torch.ops.aten.convolution_backward",
    doc="ATen's backward of convolution: (grad_input, grad_weight, grad_bias) of batched input, each one None "
        "where output_mask is False.")


# ---- conv_tbc: a 1-d convolution of (time, batch, channel) input -------------------------------------

def _tbc_meta(self, weight, bias, pad):
    if self.ndim != 3:
        raise ShapeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise ShapeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise ShapeError("Bias must be 1-D")
    if self.shape[2] != weight.shape[1]:
        raise ShapeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise ShapeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    length = self.shape[0] + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise ShapeError(f"conv_tbc: the padded input ({self.shape[0] + 2 * pad} steps) is shorter than the kernel "
                         f"({weight.shape[0]})")
    require_floating("conv_tbc", self.dtype)
    return MetaArray((length, self.shape[1], weight.shape[2]), self.dtype)


def _tbc_kernel(xp, self, weight, bias, pad):
    _tbc_meta(self, weight, bias, pad)
    # (T, B, Cin) -> (B, Cin, T) and (K, Cin, Cout) -> (Cout, Cin, K): conv1d's layout
    out = _conv(xp, xp.transpose(self, (1, 2, 0)), xp.transpose(weight, (2, 1, 0)), (1,), (pad,), (pad,), (1,), 1)
    return (xp.transpose(out, (2, 0, 1)) + bias).astype(self.dtype, copy=False)


def _tbc_grad_self(grad, self, weight, pad):
    g = permute(grad, [1, 2, 0])
    size = [self.shape[1], self.shape[2], self.shape[0]]
    return permute(convolution_backward_input(g, permute(weight, [2, 1, 0]), size, [1], [pad], [1], 1), [2, 0, 1])


def _tbc_grad_weight(grad, self, weight_shape, pad):
    size = [weight_shape[2], weight_shape[1], weight_shape[0]]
    return permute(convolution_backward_weight(permute(grad, [1, 2, 0]), permute(self, [1, 2, 0]), size, [1], [pad],
                                               [1], 1), [2, 1, 0])


conv_tbc = defop(
    "conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor",
    kernel=_tbc_kernel, meta=_tbc_meta,
    grads={"self": _tbc_grad_self, "weight": _tbc_grad_weight, "bias": lambda grad: sum(grad, [0, 1])},
    backward_name="ConvTbcBackward0",
    samples=lambda op: [
        SampleInput("(7,2,3)*(3,3,4)", make_arg((7, 2, 3), key=(op, 0)), make_arg((3, 3, 4), key=(op, 1)),
                    make_arg((4,), key=(op, 2))),
        SampleInput("pad 2", make_arg((5, 3, 2), key=(op, 3)), make_arg((4, 2, 3), key=(op, 4)),
                    make_arg((3,), key=(op, 5)), 2)],
    torch="torch.conv_tbc",
    doc="ATen's conv_tbc: the 1-d convolution of (time, batch, in_channels) input with (kernel_width, "
        "in_channels, out_channels) weight and (out_channels,) bias, time padded by `pad` on both sides.")
