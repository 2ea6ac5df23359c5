"""conv2d and its two backward ops.

The forward gathers every receptive field with one `as_strided` view (im2col) and
multiplies by the weight in one matmul per call. The gradient w.r.t. the input is a
transposed convolution written as a convolution (grad_output spread out by the
stride into a zero buffer, correlated with the flipped, channel-swapped weight);
the gradient w.r.t. the weight is one matmul of grad_output with the same windows.

The three ops are closed under differentiation — conv2d_backward_input is the
adjoint of conv2d in `input`, conv2d_backward_weight its adjoint in `weight` — so
their formulas call each other and double backward needs nothing more.
"""
from __future__ import annotations

from ..backends.meta import MetaArray
from .nn import c_type_name, require_floating, sizes, tensor_type_name
from .registry import defop
from .samples import SampleInput, make_arg

__all__ = ["conv2d", "conv2d_backward_input", "conv2d_backward_weight", "expand_param", "conv_output_size"]


def expand_param(value, name):
    """An int or a 1- or 2-element list as a pair (PyTorch's expand_param_if_needed)."""
    value = tuple(value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values to match "
                           f"the convolution dimensions, but got {name}={sizes(value)}")
    return value


def conv_output_size(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _params(stride, padding, dilation):
    return expand_param(stride, "stride"), expand_param(padding, "padding"), expand_param(dilation, "dilation")


def _check_conv(input, weight, bias, stride, padding, dilation, groups):
    """PyTorch's checks, in PyTorch's order. Returns (batched, output shape)."""
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({c_type_name(input.dtype)}) and bias type ({c_type_name(bias.dtype)}) "
                           f"should be the same")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{sizes(input.shape)}")
    batched = input.ndim == 4
    shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    (sh, sw), (ph, pw), (dh, dw) = _params(stride, padding, dilation)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    if sh <= 0 or sw <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if dh <= 0 or dw <= 0:
        raise RuntimeError("dilation should be greater than zero")
    ws = tuple(weight.shape)
    if len(ws) != 4:
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight {sizes(ws)}, "
                           f"but got 4-dimensional input of size {sizes(shape)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {sizes(ws)} instead")
    if ws[0] % groups:
        # NOTE: the doubled brackets are PyTorch's own message
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{sizes(ws)}] instead")
    if shape[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {sizes(ws)}, expected input{sizes(shape)} to have "
                           f"{ws[1] * groups} channels, but got {shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != ws[0]):
        raise RuntimeError(f"Given weight of size {sizes(ws)}, expected bias to be 1-dimensional with {ws[0]} "
                           f"elements, but got bias of size {sizes(bias.shape)} instead")
    padded = (shape[2] + 2 * ph, shape[3] + 2 * pw)
    extent = (dh * (ws[2] - 1) + 1, dw * (ws[3] - 1) + 1)
    if padded[0] < extent[0] or padded[1] < extent[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel size: "
                           f"({extent[0]} x {extent[1]}). Kernel size can't be greater than actual input size")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"Input type ({tensor_type_name(input.dtype)}) and weight type "
                           f"({tensor_type_name(weight.dtype)}) should be the same")
    require_floating("slow_conv2d_cpu", input.dtype)
    out = (shape[0], ws[0], conv_output_size(shape[2], ws[2], sh, ph, dh),
           conv_output_size(shape[3], ws[3], sw, pw, dw))
    return batched, out if batched else out[1:]


# ---- kernels on batched (N, C, H, W) arrays ---------------------------------------------------------

def _columns(xp, x, kh, kw, stride, padding, dilation, groups, oh=None, ow=None):
    """im2col: (N, groups, OH*OW, C/groups*KH*KW), from one as_strided view of the padded input."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    if ph or pw:
        x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, w = x.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1 if oh is None else oh
    ow = (w - dw * (kw - 1) - 1) // sw + 1 if ow is None else ow
    s_n, s_c, s_h, s_w = x.strides
    windows = xp.lib.stride_tricks.as_strided(x, (n, c, oh, ow, kh, kw),
                                              (s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw))
    cg = c // groups
    windows = windows.reshape(n, groups, cg, oh, ow, kh, kw).transpose(0, 1, 3, 4, 2, 5, 6)
    return windows.reshape(n, groups, oh * ow, cg * kh * kw), oh, ow


def _conv(xp, x, weight, stride, padding, dilation, groups):
    o, cg, kh, kw = weight.shape
    cols, oh, ow = _columns(xp, x, kh, kw, stride, padding, dilation, groups)
    w = weight.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    out = xp.matmul(cols, w)                                  # (N, groups, OH*OW, O/groups)
    return out.transpose(0, 1, 3, 2).reshape(x.shape[0], o, oh, ow)


def _conv_input_grad(xp, grad_output, weight, size, stride, padding, dilation, groups):
    n, o, oh, ow = grad_output.shape
    _, cg, kh, kw = weight.shape
    h, w = size
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    eh, ew = dh * (kh - 1), dw * (kw - 1)
    # margins for padding wider than the kernel's reach: those outputs only ever saw padding
    mh, mw = max(0, ph - eh), max(0, pw - ew)
    buf = xp.zeros((n, o, h + eh + 2 * mh, w + ew + 2 * mw), dtype=grad_output.dtype)
    top, left = mh + eh - ph, mw + ew - pw
    buf[:, :, top:top + (oh - 1) * sh + 1:sh, left:left + (ow - 1) * sw + 1:sw] = grad_output
    buf = buf[:, :, mh:mh + h + eh, mw:mw + w + ew]
    flipped = weight.reshape(groups, o // groups, cg, kh, kw).transpose(0, 2, 1, 3, 4)
    flipped = flipped.reshape(groups * cg, o // groups, kh, kw)[:, :, ::-1, ::-1]
    return _conv(xp, buf, flipped, (1, 1), (0, 0), (dh, dw), groups)


def _conv_weight_grad(xp, grad_output, x, weight_size, stride, padding, dilation, groups):
    o, cg, kh, kw = weight_size
    n, _, oh, ow = grad_output.shape
    cols, _, _ = _columns(xp, x, kh, kw, stride, padding, dilation, groups, oh, ow)
    cols = cols.transpose(1, 0, 2, 3).reshape(groups, n * oh * ow, cg * kh * kw)
    g = grad_output.reshape(n, groups, o // groups, oh * ow).transpose(1, 2, 0, 3)
    g = g.reshape(groups, o // groups, n * oh * ow)
    return xp.matmul(g, cols).reshape(o, cg, kh, kw)


def _batch(a, batched):
    return a if batched else a.reshape((1,) + tuple(a.shape))


def _unbatch(a, batched):
    return a if batched else a.reshape(a.shape[1:])


# ---- conv2d ---------------------------------------------------------------------------------------

def _conv2d_meta(input, weight, bias, stride, padding, dilation, groups):
    _, out = _check_conv(input, weight, bias, stride, padding, dilation, groups)
    return MetaArray(out, input.dtype)


def _conv2d_kernel(xp, input, weight, bias, stride, padding, dilation, groups):
    batched, _ = _check_conv(input, weight, bias, stride, padding, dilation, groups)
    out = _conv(xp, _batch(input, batched), weight, *_params(stride, padding, dilation), groups)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return _unbatch(out, batched).astype(input.dtype, copy=False)


def _bias_grad(grad):
    return sum(grad, [0, 2, 3] if grad.ndim == 4 else [1, 2])


def _conv2d_samples(op):
    def arg(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    return [SampleInput("(2,2,5,5)*(3,2,3,3)+b", arg((2, 2, 5, 5), 0), arg((3, 2, 3, 3), 1), arg((3,), 2)),
            SampleInput("stride 2, uncovered edge", arg((1, 2, 6, 6), 3), arg((2, 2, 3, 3), 4), None, 2),
            SampleInput("padding [1,2] dilation 2", arg((1, 1, 5, 6), 5), arg((2, 1, 2, 2), 6), arg((2,), 7),
                        1, [1, 2], 2),
            SampleInput("groups 2, stride (2,1)", arg((1, 4, 5, 4), 8), arg((4, 2, 2, 3), 9), None, [2, 1], 1, 1, 2),
            SampleInput("unbatched (2,4,4)", arg((2, 4, 4), 10), arg((3, 2, 3, 3), 11), arg((3,), 12), 1, 1),
            SampleInput("non-contiguous input", arg((2, 2, 4, 4), 13, transposed=True), arg((2, 2, 2, 2), 14)),
            SampleInput("padding wider than the kernel", arg((1, 1, 3, 3), 15), arg((2, 1, 1, 1), 16), None, 1, 2)]


conv2d = defop(
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] dilation=1, "
    "int groups=1) -> Tensor",
    kernel=_conv2d_kernel, meta=_conv2d_meta,
    grads={"input": lambda grad, weight, input_shape, stride, padding, dilation, groups:
               conv2d_backward_input(grad, weight, input_shape, stride, padding, dilation, groups),
           "weight": lambda grad, input, weight_shape, stride, padding, dilation, groups:
               conv2d_backward_weight(grad, input, weight_shape, stride, padding, dilation, groups),
           "bias": lambda grad: _bias_grad(grad)},
    backward_name="ConvolutionBackward0", samples=_conv2d_samples, torch="torch.nn.functional.conv2d",
    doc="2-D cross-correlation of (N, C, H, W) or (C, H, W) input with (O, C/groups, KH, KW) weight; stride, "
        "padding and dilation are an int or a pair.")


def _check_grad_output(grad_output, expected):
    if tuple(grad_output.shape) != tuple(expected):
        raise RuntimeError(f"Expected grad_output of size {sizes(expected)}, but got grad_output of size "
                           f"{sizes(grad_output.shape)}")


def _backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups):
    shape = MetaArray(input_size, grad_output.dtype)
    _, out = _check_conv(shape, weight, None, stride, padding, dilation, groups)
    _check_grad_output(grad_output, out)
    return shape


def _backward_input_kernel(xp, grad_output, weight, input_size, stride, padding, dilation, groups):
    _backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups)
    batched = len(input_size) == 4
    out = _conv_input_grad(xp, _batch(grad_output, batched), weight, tuple(input_size[-2:]),
                           *_params(stride, padding, dilation), groups)
    return _unbatch(out, batched).astype(grad_output.dtype, copy=False)


def _backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation, groups):
    weight = MetaArray(weight_size, input.dtype)
    _, out = _check_conv(input, weight, None, stride, padding, dilation, groups)
    _check_grad_output(grad_output, out)
    return weight


def _backward_weight_kernel(xp, grad_output, input, weight_size, stride, padding, dilation, groups):
    _backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation, groups)
    batched = input.ndim == 4
    out = _conv_weight_grad(xp, _batch(grad_output, batched), _batch(input, batched), tuple(weight_size),
                            *_params(stride, padding, dilation), groups)
    return out.astype(input.dtype, copy=False)


def _backward_samples(op, which):
    cases = [("(2,2,5,5) (3,2,3,3)", (2, 2, 5, 5), (3, 2, 3, 3), (2, 3, 3, 3), (1, 0, 1, 1)),
             ("stride 2 padding 1 groups 2", (1, 4, 6, 5), (2, 2, 3, 2), (1, 2, 3, 3), (2, 1, 1, 2)),
             ("unbatched dilation 2", (2, 5, 5), (2, 2, 2, 2), (2, 3, 3), (1, 0, 2, 1))]
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


_TORCH_BACKWARD = ("torch.ops.aten.convolution_backward(g if len(size) == 4 else g.unsqueeze(0), {input}, {weight}, "
                   "None, *[[p, p] if isinstance(p, int) else list(p) for p in (stride, padding, dilation)], False, [0, 0], "
                   "groups, {mask})[{index}]")

conv2d_backward_input = defop(
    "conv2d_backward_input(Tensor grad_output, Tensor weight, int[] input_size, int[] stride, int[] padding, "
    "int[] dilation, int groups) -> Tensor",
    kernel=_backward_input_kernel, meta=_backward_input_meta,
    grads={"grad_output": lambda grad, weight, stride, padding, dilation, groups:
               conv2d(grad, weight, None, stride, padding, dilation, groups),
           "weight": lambda grad, grad_output, weight_shape, stride, padding, dilation, groups:
               conv2d_backward_weight(grad_output, grad, weight_shape, stride, padding, dilation, groups)},
    backward_name="ConvolutionBackwardBackward0", samples=lambda op: _backward_samples(op, "input"),
    torch="lambda g, w, size, stride, padding, dilation, groups: " + _TORCH_BACKWARD.format(
        input="torch.zeros(size if len(size) == 4 else [1] + list(size), dtype=g.dtype)", weight="w",
        mask="[True, False, False]", index="0") + ".reshape(size)",
    doc="The gradient of conv2d w.r.t. its input (a transposed convolution); input_size is the input's shape.")

conv2d_backward_weight = defop(
    "conv2d_backward_weight(Tensor grad_output, Tensor input, int[] weight_size, int[] stride, int[] padding, "
    "int[] dilation, int groups) -> Tensor",
    kernel=_backward_weight_kernel, meta=_backward_weight_meta,
    grads={"grad_output": lambda grad, input, stride, padding, dilation, groups:
               conv2d(input, grad, None, stride, padding, dilation, groups),
           "input": lambda grad, grad_output, input_shape, stride, padding, dilation, groups:
               conv2d_backward_input(grad_output, grad, input_shape, stride, padding, dilation, groups)},
    backward_name="ConvolutionBackwardBackward0", samples=lambda op: _backward_samples(op, "weight"),
    torch="lambda g, x, size, stride, padding, dilation, groups: " + _TORCH_BACKWARD.format(
        input="x if x.dim() == 4 else x.unsqueeze(0)", weight="torch.zeros(size, dtype=g.dtype)",
        mask="[False, True, False]", index="1").replace("len(size) == 4", "x.dim() == 4"),
    doc="The gradient of conv2d w.r.t. its weight; weight_size is the weight's shape.")


from .reduction import sum  # noqa: E402,A004
