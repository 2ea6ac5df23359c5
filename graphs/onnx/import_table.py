"""Each ONNX op as an expression of agrad ops: the import table.

A translator gets the importer (`ctx`: `ref(name)` a tensor's expression, `arg(name)` the same
or a number literal, `const(name)` a value known at import time, `shape`, `dtype`, `opset`)
and the node's attributes, and returns the expression of the node's output, or `Multi(expr)`
when the op returns a tuple (Split, TopK). A value the import keeps without a line of its own is
`Sequence(names)` (a sequence: agrad's graph is static, so its length and elements are known at
import), `Same(name)` (an existing value itself: SequenceAt) or `Known(array)` (SequenceLength).
`Refuse(reason)` is raised for what agrad cannot express exactly; the importer lists every such
node at once.

`TABLE` maps op types to translators; `COMPOSED` names those written as several agrad ops;
`TRAINING_OPS`, those of the domain `ai.onnx.preview.training` (`import_training`). The sequence
ops are in `import_sequences`.
"""
from __future__ import annotations

import math

import numpy as np


class Refuse(Exception):
    """This node (with these attributes) has no exact agrad expression."""


class Multi(str):
    """The expression of an op that returns several tensors: output i is `name[i]`."""


class Outputs(list):
    """One expression per output (None: not made), each written as a line of its own."""


class Sequence(list):
    """A sequence's elements, by the names of their values; None for an element whose value agrad
    cannot know (a split by sizes from the data), `why` saying so where it is read."""

    def __init__(self, names=(), why: str = ""):
        super().__init__(names)
        self.why = why


class Same:
    """The output is the value `name` itself."""

    def __init__(self, name: str):
        self.name = name


class Known:
    """The output is known at import time: `array`."""

    def __init__(self, array):
        self.array = array


def lit(value) -> str:
    """A Python literal for a number, bool or nested list (no inf/nan: the caller checks)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    number = float(value)
    if not math.isfinite(number):
        raise Refuse(f"the number {number} cannot be written in an expression")
    return repr(number)


def ints(values) -> list[int]:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _scalar(array) -> int | float | bool:
    """A scalar input's number: ONNX asks for a 0-d tensor, exporters and onnxruntime also accept
    a one-element 1-d one (a CumSum axis of shape [1])."""
    values = np.asarray(array).reshape(-1)
    if values.size != 1:
        raise Refuse(f"a scalar input with {values.size} elements")
    return values[0].item()


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


TABLE: dict = {}
COMPOSED: set[str] = set()
TRAINING_OPS: set[str] = set()


def op(*names: str, composed: bool = False):
    def register(fn):
        for name in names:
            TABLE[name] = fn
            if composed:
                COMPOSED.add(name)
        return fn
    return register


# ---- elementwise ---------------------------------------------------------------------

_UNARY = {"Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Reciprocal": "reciprocal",
          "Sigmoid": "sigmoid", "Tanh": "tanh", "Relu": "relu", "Erf": "erf", "Sin": "sin", "Cos": "cos",
          "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh",
          "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Floor": "floor", "Ceil": "ceil",
          "Round": "round", "Sign": "sign", "Softsign": "softsign", "Not": "logical_not", "IsNaN": "isnan",
          "Mish": "mish", "HardSwish": "hardswish", "BitwiseNot": "bitwise_not"}

for _onnx, _agrad in _UNARY.items():
    TABLE[_onnx] = (lambda name: lambda ctx, node, a: f"{name}({ctx.ref(node.input[0])})")(_agrad)

_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Equal": "eq", "Less": "lt",
           "LessOrEqual": "le", "Greater": "gt", "GreaterOrEqual": "ge", "And": "logical_and",
           "Or": "logical_or", "Xor": "logical_xor", "BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or",
           "BitwiseXor": "bitwise_xor"}


def _binary(name: str):
    def translate(ctx, node, a):
        return f"{name}({ctx.arg(node.input[0])}, {ctx.arg(node.input[1])})"
    return translate


for _onnx, _agrad in _BINARY.items():
    TABLE[_onnx] = _binary(_agrad)


@op("Pow")
def _pow(ctx, node, a):
    x, y = node.input
    expr = f"pow({ctx.arg(x)}, {ctx.arg(y)})"
    base, exponent = ctx.dtype(x), ctx.dtype(y)
    if base.kind in "iu" and exponent.kind == "f":     # ONNX: the base's type; torch would promote to float
        return f"to({expr}, dtype={dtype_name(base)!r})"
    return expr


@op("BitShift")
def _bit_shift(ctx, node, a):
    fn = "bitwise_left_shift" if a["direction"] == "LEFT" else "bitwise_right_shift"
    return f"{fn}({ctx.arg(node.input[0])}, {ctx.arg(node.input[1])})"


@op("Div")
def _div(ctx, node, a):
    x, y = node.input
    rounding = ", rounding_mode='trunc'" if ctx.dtype(x).kind in "iu" else ""    # ONNX's integer Div truncates
    return f"div({ctx.arg(x)}, {ctx.arg(y)}{rounding})"


@op("Mod")
def _mod(ctx, node, a):
    x, y = node.input
    fn = "fmod" if a.get("fmod", 0) else "remainder"     # fmod=0: the sign of the divisor, as Python's %
    return f"{fn}({ctx.ref(x)}, {ctx.arg(y)})"


@op("Max", "Min", "Sum", "Mean", composed=True)
def _variadic(ctx, node, a):
    names = [n for n in node.input if n]
    fn = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}[node.op_type]
    expr = ctx.ref(names[0])
    for n in names[1:]:
        expr = f"{fn}({expr}, {ctx.ref(n)})"
    if len(names) == 1:
        expr = f"alias({expr})"
    return f"div({expr}, {len(names)})" if node.op_type == "Mean" and len(names) > 1 else expr


@op("Where")
def _where(ctx, node, a):
    c, x, y = node.input
    return f"where({ctx.ref(c)}, {ctx.ref(x)}, {ctx.ref(y)})"


@op("IsInf")
def _isinf(ctx, node, a):
    x = ctx.ref(node.input[0])
    neg, pos = a.get("detect_negative", 1), a.get("detect_positive", 1)
    if neg and pos:
        return f"isinf({x})"
    if not neg and not pos:
        return f"logical_and(isinf({x}), False)"
    return f"logical_and(isinf({x}), {x} {'>' if pos else '<'} 0)"


@op("LeakyRelu")
def _leaky_relu(ctx, node, a):
    return f"leaky_relu({ctx.ref(node.input[0])}, {lit(a.get('alpha', 0.01))})"


@op("Elu")
def _elu(ctx, node, a):
    return f"elu({ctx.ref(node.input[0])}, {lit(a.get('alpha', 1.0))})"


@op("Celu")
def _celu(ctx, node, a):
    return f"celu({ctx.ref(node.input[0])}, {lit(a.get('alpha', 1.0))})"


@op("Selu")
def _selu(ctx, node, a):
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
    return f"elu({ctx.ref(node.input[0])}, {lit(alpha)}, {lit(gamma)})"      # selu is elu with a scale


@op("Shrink", composed=True)
def _shrink(ctx, node, a):
    """torch's hardshrink (bias 0) and softshrink (bias lambd), as exported."""
    x = ctx.ref(node.input[0])
    lambd, bias = lit(a.get("lambd", 0.5)), lit(a.get("bias", 0.0))
    return f"where({x} < -{lambd}, {x} + {bias}, where({x} > {lambd}, {x} - {bias}, zeros_like({x})))"


@op("ThresholdedRelu", composed=True)
def _thresholded_relu(ctx, node, a):
    x = ctx.ref(node.input[0])
    return f"where({x} > {lit(a.get('alpha', 1.0))}, {x}, zeros_like({x}))"


@op("HardSigmoid", composed=True)
def _hard_sigmoid(ctx, node, a):
    x = ctx.ref(node.input[0])
    return f"hardtanh({x} * {lit(a.get('alpha', 0.2))} + {lit(a.get('beta', 0.5))}, 0.0, 1.0)"


@op("Softplus")
def _softplus(ctx, node, a):
    return f"softplus({ctx.ref(node.input[0])})"


@op("PRelu", composed=True)
def _prelu(ctx, node, a):
    x, slope = ctx.ref(node.input[0]), ctx.ref(node.input[1])
    shape, slope_shape = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    if ctx.loaded.original_opset < 7 and len(slope_shape) == 1 and len(shape) > 2 and slope_shape[0] == shape[1] > 1:
        # before opset 7 a 1-d slope of C values is one per channel (there was no numpy broadcasting)
        slope = f"reshape({slope}, {lit([shape[1]] + [1] * (len(shape) - 2))})"
    return f"where({x} > 0, {x}, {x} * {slope})"


@op("Gelu")
def _gelu(ctx, node, a):
    approximate = a.get("approximate", "none")
    return f"gelu({ctx.ref(node.input[0])}, approximate={approximate!r})"


@op("Clip")
def _clip(ctx, node, a):
    x = ctx.ref(node.input[0])
    if len(node.input) == 1 or ctx.opset < 11:        # opset 6: bounds are attributes
        low, high = a.get("min"), a.get("max")
    else:
        low = ctx.const(node.input[1]).item() if len(node.input) > 1 and node.input[1] else None
        high = ctx.const(node.input[2]).item() if len(node.input) > 2 and node.input[2] else None
    if low is None and high is None:
        return f"alias({x})"
    return f"clamp({x}, {'None' if low is None else lit(low)}, {'None' if high is None else lit(high)})"


@op("Identity", "Dropout")
def _identity(ctx, node, a):
    if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2] and bool(ctx.const(node.input[2])):
        raise Refuse("Dropout in training mode (training_mode=True) draws a random mask; export the model in eval "
                     "mode")
    if node.op_type == "Identity" and ctx.is_sequence(node.input[0]):
        return Same(node.input[0])                  # (the same list)
    x = ctx.ref(node.input[0])
    if len(node.output) > 1 and node.output[1] and ctx.used(node.output[1]):
        return Outputs([f"alias({x})", f"ones_like({x}, dtype='bool')"])      # (inference: nothing dropped)
    return f"alias({x})"


@op("Cast", "CastLike")
def _cast(ctx, node, a):
    if node.op_type == "Cast":
        from .loading import np_dtype
        target = np_dtype(a["to"])
    else:
        target = ctx.dtype(node.input[1])
    if target is None:
        raise Refuse("a cast to a dtype agrad does not have")
    try:
        same = ctx.dtype(node.input[0]) == target
    except Refuse:                 # (a dtype inference did not give: the cast written as one)
        same = False
    if same:
        # the identity (the dynamo exporter ends EmbeddingBag so); an alias, so that a graph run in float64
        # (`agrad check`'s differences) stays float64 there
        return f"alias({ctx.ref(node.input[0])})"
    return f"to({ctx.ref(node.input[0])}, dtype={dtype_name(target)!r})"


def dtype_name(dtype: np.dtype) -> str:
    name = np.dtype(dtype).name
    if name not in ("float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"):
        raise Refuse(f"agrad has no dtype {name}")
    return name


# ---- matrix products -----------------------------------------------------------------

@op("MatMul")
def _matmul(ctx, node, a):
    return f"matmul({ctx.ref(node.input[0])}, {ctx.ref(node.input[1])})"


@op("Gemm")
def _gemm(ctx, node, a):
    A, B = ctx.ref(node.input[0]), ctx.ref(node.input[1])
    C = ctx.ref(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    ta, tb = a.get("transA", 0), a.get("transB", 0)
    if not ta and tb and alpha == 1.0 and beta == 1.0:
        return f"linear({A}, {B}{', ' + C if C else ''})"      # y = A B^T + C: torch's Linear, as exported
    expr = f"matmul({'t(' + A + ')' if ta else A}, {'t(' + B + ')' if tb else B})"
    if alpha != 1.0:
        expr = f"{expr} * {lit(alpha)}"
    if C:
        expr = f"{expr} + {C}" if beta == 1.0 else f"{expr} + {C} * {lit(beta)}"
    return expr


@op("Einsum")
def _einsum(ctx, node, a):
    equation = a["equation"]      # (string attributes come decoded: importing._text)
    return f"einsum({equation.replace(' ', '')!r}, [{', '.join(ctx.ref(n) for n in node.input)}])"


# ---- convolution and pooling ---------------------------------------------------------

def _pads(ctx, node, a, spatial: list[int], kernel: list[int], strides: list[int], dilations: list[int]):
    """(begin pads, end pads) per spatial dim, with auto_pad resolved on the input's shape."""
    auto = a.get("auto_pad", "NOTSET")
    d = len(kernel)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, dil in zip(spatial, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * dil + 1 - size)
            small, big = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return begin, end
    if auto == "VALID":
        return [0] * d, [0] * d
    pads = a.get("pads", [0] * (2 * d))
    return list(pads[:d]), list(pads[d:])


def _pre_pad(x: str, begin: list[int], end: list[int], value: str = "0.0") -> str:
    """`x` padded on its trailing spatial dims (pad's list runs from the last dim)."""
    flat = []
    for b, e in reversed(list(zip(begin, end))):
        flat += [b, e]
    return f"pad({x}, {lit(flat)}, 'constant', {value})"


@op("Conv")
def _conv(ctx, node, a):
    x, w = node.input[0], node.input[1]
    wshape = ctx.shape(w)
    d = len(wshape) - 2
    if d not in (1, 2, 3):
        raise Refuse(f"a {d}-d convolution (agrad has conv1d, conv2d and conv3d)")
    kernel = list(a.get("kernel_shape", wshape[2:]))
    strides = list(a.get("strides", [1] * d))
    dilations = list(a.get("dilations", [1] * d))
    begin, end = _pads(ctx, node, a, list(ctx.shape(x)[2:]), kernel, strides, dilations)
    xs = ctx.ref(x)
    if begin != end:
        xs, begin = _pre_pad(xs, begin, end), [0] * d
    bias = ctx.ref(node.input[2]) if len(node.input) > 2 and node.input[2] else "None"
    return (f"conv{d}d({xs}, {ctx.ref(w)}, {bias}, stride={lit(strides)}, padding={lit(begin)}, "
            f"dilation={lit(dilations)}, groups={a.get('group', 1)})")


@op("ConvTranspose")
def _conv_transpose(ctx, node, a):
    x, w = node.input[0], node.input[1]
    wshape, xshape = ctx.shape(w), ctx.shape(x)
    d = len(wshape) - 2
    if d not in (1, 2, 3):
        raise Refuse(f"a {d}-d transposed convolution")
    group = a.get("group", 1)
    kernel = list(a.get("kernel_shape", wshape[2:]))
    strides = list(a.get("strides", [1] * d))
    dilations = list(a.get("dilations", [1] * d))
    out_pad = list(a.get("output_padding", [0] * d))
    auto = a.get("auto_pad", "NOTSET")
    if "output_shape" in a or auto in ("SAME_UPPER", "SAME_LOWER"):
        wanted = list(a["output_shape"])[-d:] if "output_shape" in a else [s * st for s, st in zip(xshape[2:],
                                                                                                   strides)]
        begin, end = [], []
        for i in range(d):
            total = strides[i] * (xshape[2 + i] - 1) + out_pad[i] + ((kernel[i] - 1) * dilations[i] + 1) - wanted[i]
            upper = auto != "SAME_LOWER"
            if total < 0:         # an output_shape larger than it makes: zeros at the end (onnx's reference)
                begin.append(0)
                end.append(total)
                continue
            begin.append(total // 2 if upper else total - total // 2)
            end.append(total - begin[-1])
    elif auto == "VALID":
        begin, end = [0] * d, [0] * d
    else:
        pads = list(a.get("pads", [0] * (2 * d)))
        begin, end = pads[:d], pads[d:]
    bias = ctx.ref(node.input[2]) if len(node.input) > 2 and node.input[2] else "None"
    if begin != end or any(b < 0 for b in begin):
        # the extra rows at the end come back through output_padding when they are fewer
        extra = [b - e for b, e in zip(begin, end)]
        if any(b < 0 or e < 0 or e + o >= max(s, dl) for b, e, o, s, dl in zip(begin, extra, out_pad, strides,
                                                                                 dilations)):
            return _conv_transpose_cropped(ctx, node, d, strides, dilations, group, begin, end, out_pad, bias)
        out_pad = [o + e for o, e in zip(out_pad, extra)]
    return (f"conv_transpose{d}d({ctx.ref(x)}, {ctx.ref(w)}, {bias}, stride={lit(strides)}, padding={lit(begin)}, "
            f"output_padding={lit(out_pad)}, groups={group}, dilation={lit(dilations)})")


def _conv_transpose_cropped(ctx, node, d, strides, dilations, group, begin, end, out_pad, bias) -> str:
    """A ConvTranspose conv_transpose's padding cannot make (more pads at the end than output_padding
    can take back; negative pads from an output_shape larger than it makes): the whole unpadded output
    cropped to [begin, full - end + output_padding), zeros where that reaches past it, then the bias."""
    x, w = node.input[0], node.input[1]
    xshape, wshape = ctx.shape(x), ctx.shape(w)
    full = [s * (n - 1) + (k - 1) * dl + 1 for s, n, k, dl in zip(strides, xshape[2:], wshape[2:], dilations)]
    expr = (f"conv_transpose{d}d({ctx.ref(x)}, {ctx.ref(w)}, None, stride={lit(strides)}, padding={lit([0] * d)}, "
            f"output_padding={lit([0] * d)}, groups={group}, dilation={lit(dilations)})")
    lo = begin
    hi = [f - e + o for f, e, o in zip(full, end, out_pad)]
    if any(l > 0 or h < f for l, h, f in zip(lo, hi, full)):
        items = [":", ":"] + [f"{max(l, 0)}:{min(h, f)}" for l, h, f in zip(lo, hi, full)]
        expr = f"{expr}[{', '.join(items)}]"
    if any(l < 0 or h > f for l, h, f in zip(lo, hi, full)):
        expr = _pre_pad(expr, [max(0, -l) for l in lo], [max(0, h - f) for h, f in zip(hi, full)])
    if bias != "None":
        channels = wshape[1] * group
        expr = f"{expr} + reshape({bias}, {lit([channels] + [1] * d)})"
    return expr


def _lowest(dtype) -> str:
    return lit(float(np.finfo(dtype).min)) if np.dtype(dtype).kind == "f" else lit(int(np.iinfo(dtype).min))


@op("MaxPool", "AveragePool")
def _pool(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    d = len(shape) - 2
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1] * d))               # ONNX's default stride is 1, torch's the kernel
    dilations = list(a.get("dilations", [1] * d))
    begin, end = _pads(ctx, node, a, list(shape[2:]), kernel, strides, dilations)
    ceil = bool(a.get("ceil_mode", 0))
    maxpool = node.op_type == "MaxPool"
    indices = maxpool and len(node.output) > 1 and bool(node.output[1]) and ctx.used(node.output[1])
    if maxpool and d not in (1, 2, 3):
        raise Refuse(f"a {d}-d MaxPool (agrad has max_pool1d, max_pool2d and max_pool3d)")
    xs = ctx.ref(x)
    padded, pre = list(shape[2:]), [0] * d
    uneven = begin != end or any(2 * b > k for b, k in zip(begin, kernel))
    if not maxpool and (any(dl != 1 for dl in dilations) or
                        uneven and a.get("count_include_pad", 0) == 0 and any(begin + end)):
        return _avg_pool_counted(ctx, node, a, kernel, strides, dilations, begin, end)
    if uneven:
        xs = _pre_pad(xs, begin, end, _lowest(ctx.dtype(x)) if maxpool else "0.0")
        padded, pre = [n + b + e for n, b, e in zip(shape[2:], begin, end)], begin
        begin = [0] * d
    if maxpool and indices:
        return _max_pool_indices(ctx, xs, list(shape), padded, pre, kernel, strides, begin, dilations, ceil,
                                 column_major=a.get("storage_order", 0) == 1)
    if maxpool:
        return (f"max_pool{d}d({xs}, {lit(kernel)}, {lit(strides)}, {lit(begin)}, {lit(dilations)}, "
                f"ceil_mode={ceil})")
    if any(dl != 1 for dl in dilations):
        raise Refuse("AveragePool with dilations")
    if d not in (1, 2, 3):
        raise Refuse(f"a {d}-d AveragePool (agrad has avg_pool1d, avg_pool2d and avg_pool3d)")
    include = bool(a.get("count_include_pad", 0))            # ONNX's default leaves pads out, torch's counts them
    return (f"avg_pool{d}d({xs}, {lit(kernel)}, {lit(strides)}, {lit(begin)}, ceil_mode={ceil}, "
            f"count_include_pad={include})")


def _avg_pool_counted(ctx, node, a, kernel, strides, dilations, begin, end) -> str:
    """An AveragePool avg_pool cannot make (dilations; uneven pads left out of the count): each
    window's sum, a convolution of every plane with a kernel of ones on the zero-padded input, times
    1 / the number of elements it counts (pads where count_include_pad=1, never the rows a ceil_mode
    window reaches past them), counted now."""
    x = node.input[0]
    shape = list(ctx.shape(x))
    d = len(kernel)
    out = ctx.loaded.shapes.get(node.output[0])
    if d not in (1, 2, 3) or out is None:
        raise Refuse(f"a {d}-d AveragePool with dilations or uneven pads" if out is not None else
                     "an AveragePool whose output shape is not known after shape inference")
    out = list(out[2:])
    reach = [(k - 1) * dl + 1 for k, dl in zip(kernel, dilations)]
    padded = [n + b + e for n, b, e in zip(shape[2:], begin, end)]
    # rows past the pads that the last (ceil_mode) window reaches: in the sum as zeros, never counted
    extra = [max(0, (o - 1) * s + r - p) for o, s, r, p in zip(out, strides, reach, padded)]
    counted = np.pad(np.ones(shape[2:]), list(zip(begin, end)), constant_values=float(a.get("count_include_pad", 0)))
    counted = np.pad(counted, [(0, e) for e in extra])
    windows = np.lib.stride_tricks.sliding_window_view(counted, reach)
    windows = windows[tuple(slice(None, o * s, s) for o, s in zip(out, strides))]
    windows = windows[(Ellipsis,) + tuple(slice(None, None, dl) for dl in dilations)]
    count = windows.sum(axis=tuple(range(d, 2 * d)))[tuple(slice(0, o) for o in out)]
    dtype = ctx.dtype(x)
    planes = shape[0] * shape[1]
    xs = _pre_pad(ctx.ref(x), [b for b in begin], [e + x_ for e, x_ in zip(end, extra)])
    xs = f"reshape({xs}, {lit([planes, 1] + [p + e for p, e in zip(padded, extra)])})"
    ones = ctx.constant(np.ones([1, 1] + kernel, dtype=dtype))
    summed = f"conv{d}d({xs}, {ones}, None, stride={lit(strides)}, padding={lit([0] * d)}, dilation={lit(dilations)})"
    scale = ctx.constant((1.0 / np.maximum(count, 1)).astype(dtype))
    return f"reshape({summed}, {lit(shape[:2] + out)}) * {scale}"


def _max_pool_indices(ctx, xs, shape, padded, pre, kernel, strides, pads, dilations, ceil, column_major=False):
    """MaxPool's (Y, Indices): max_poolNd_with_indices (a 1-d pool as a 2-d one over (N, C, 1, L)),
    its indices (each max's position in its own plane, PyTorch's) made ONNX's: positions in the
    whole (N, C, *spatial) input, row-major, or with storage_order=1 column-major within the plane
    (the first spatial dim varying fastest; planes still one after another, as onnx's reference
    and onnxruntime count them). A pre-padded input (`pre`: the pads before each dim) has its
    positions taken back to the unpadded plane first."""
    d = len(kernel)
    args = [kernel, strides, pads, dilations]
    source = xs
    if d == 1:
        source, args = f"unsqueeze({xs}, -2)", [[1] + v for v in args[:2]] + [[0] + pads, [1] + dilations]
    pooled = ctx.step(f"max_pool{max(d, 2)}d_with_indices({source}, {', '.join(lit(v) for v in args)}, "
                      f"ceil_mode={ceil})", "pooled")
    values, positions = f"{pooled}[0]", f"{pooled}[1]"
    if d == 1:
        values, positions = f"squeeze({values}, -2)", f"squeeze({positions}, -2)"
    spatial = shape[2:]
    if any(pre) or column_major and d > 1:   # the padded plane's position -> the position in the input's plane
        coords = []
        for i in range(d):
            stride = math.prod(padded[i + 1:])
            coord = f"floor_divide({positions}, {stride})" if stride > 1 else positions
            coord = f"remainder({coord}, {padded[i]})" if i else coord
            coord = f"({coord} - {pre[i]})" if pre[i] else coord
            place = math.prod(spatial[:i]) if column_major else math.prod(spatial[i + 1:])
            coords.append(f"{coord} * {place}" if place != 1 else coord)
        positions = " + ".join(coords)
    planes = np.arange(shape[0] * shape[1], dtype=np.int64).reshape(shape[:2] + [1] * d) * math.prod(spatial)
    return Outputs([values, f"{positions} + {ctx.index_tensor_nd(planes)}"])


@op("Col2Im")
def _col2im(ctx, node, a):
    x, image, block = node.input
    size, kernel = ints(ctx.const(image)), ints(ctx.const(block))
    d = len(size)
    dilations = list(a.get("dilations", [1] * d))
    strides = list(a.get("strides", [1] * d))
    pads = list(a.get("pads", [0] * (2 * d)))
    begin, end = pads[:d], pads[d:]
    if d != 2:
        return _col2im_nd(ctx, x, size, kernel, dilations, strides, begin, end)
    if begin == end:
        return f"col2im({ctx.ref(x)}, {lit(size)}, {lit(kernel)}, {lit(dilations)}, {lit(begin)}, {lit(strides)})"
    # unequal pads: the blocks folded into the padded image, the padding cut off
    padded = [n + b + e for n, b, e in zip(size, begin, end)]
    crop = ", ".join(f"{b}:{b + n}" for b, n in zip(begin, size))
    return (f"col2im({ctx.ref(x)}, {lit(padded)}, {lit(kernel)}, {lit(dilations)}, {lit([0] * d)}, "
            f"{lit(strides)})[:, :, {crop}]")


def _col2im_nd(ctx, x: str, size, kernel, dilations, strides, begin, end) -> str:
    """A Col2Im of other than 2 spatial dims (agrad's col2im is torch's 2-d fold): each column entry
    added at its place in the padded image, an index_add of positions computed here, then the padding
    cut off. Column rows are channel-major over the kernel's offsets, columns row-major over the
    blocks, as in the 2-d case (onnx's reference: _col2im_naive_implementation)."""
    n, rows, length = ctx.shape(x)
    padded = [s + b + e for s, b, e in zip(size, begin, end)]
    blocks = [(p - (dl * (k - 1) + 1)) // st + 1 for p, k, dl, st in zip(padded, kernel, dilations, strides)]
    k_size = math.prod(kernel)
    if rows % k_size or math.prod(blocks) != length or min(blocks) <= 0:
        raise Refuse(f"Col2Im input of shape {[n, rows, length]} for an image {size} in blocks {kernel}")
    offsets = np.indices(kernel).reshape(len(kernel), -1, 1)       # [d, K, 1]: each kernel offset
    starts = np.indices(blocks).reshape(len(blocks), 1, -1)         # [d, 1, L]: each block's corner
    coords = starts * np.reshape(strides, (-1, 1, 1)) + offsets * np.reshape(dilations, (-1, 1, 1))
    flat = np.ravel_multi_index(tuple(coords), padded).reshape(-1)  # [K * L] places in the padded image
    channels = rows // k_size
    zeros = ctx.zeros([n, channels, math.prod(padded)], ctx.dtype(x))
    added = (f"index_add({zeros}, 2, {ctx.index_tensor_nd(flat)}, "
             f"reshape({ctx.ref(x)}, {lit([n, channels, k_size * length])}))")
    crop = ", ".join(f"{b}:{b + s}" for b, s in zip(begin, size))
    return f"reshape({added}, {lit([n, channels, *padded])})[:, :, {crop}]"


_GRID_MODES = {"bilinear": 0, "linear": 0, "nearest": 1, "bicubic": 2, "cubic": 2}     # opset 16's and 20's names
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


@op("GridSample")
def _grid_sample(ctx, node, a):
    x, grid = node.input
    d = len(ctx.shape(x)) - 2
    if d not in (2, 3):
        raise Refuse(f"a {d}-d GridSample (agrad's grid_sampler is 2-d or 3-d)")
    mode = a.get("mode", "linear" if ctx.opset >= 20 else "bilinear")
    padding = a.get("padding_mode", "zeros")
    if mode not in _GRID_MODES or padding not in _GRID_PADDINGS:
        raise Refuse(f"GridSample with mode {mode!r} and padding_mode {padding!r}")
    if d == 3 and _GRID_MODES[mode] == 2:
        raise Refuse(f"a 3-d GridSample with mode {mode!r} (agrad's cubic grid_sampler is 2-d, as torch's)")
    return (f"grid_sampler_{d}d({ctx.ref(x)}, {ctx.ref(grid)}, {_GRID_MODES[mode]}, {_GRID_PADDINGS[padding]}, "
            f"{bool(a.get('align_corners', 0))})")


@op("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, node, a):
    rank = len(ctx.shape(node.input[0]))
    dims = list(range(2, rank))
    fn = "mean" if node.op_type == "GlobalAveragePool" else "amax"
    return f"{fn}({ctx.ref(node.input[0])}, {lit(dims)}, True)"


# ---- normalisation ---------------------------------------------------------------------

@op("BatchNormalization")
def _batch_norm(ctx, node, a):
    x, scale, bias, mean, var = node.input[:5]
    training = a.get("training_mode", 0)
    # (in training mode the batch's statistics normalise, and batch_norm would update given ones in place,
    # as torch's does: ONNX's node changes nothing, so it is given none)
    stats = "None, None" if training else f"{ctx.ref(mean, grad=False)}, {ctx.ref(var, grad=False)}"
    y = (f"batch_norm({ctx.ref(x)}, {stats}, {ctx.ref(scale)}, {ctx.ref(bias)}, {bool(training)}, 0.1, "
         f"{lit(a.get('epsilon', 1e-5))})")
    if not any(ctx.used(o) for o in node.output[1:] if o):
        return y
    if not training:
        raise Refuse("the running-statistics outputs of a BatchNormalization not in training mode")
    # training mode's updated running statistics: the batch's mean and (biased) variance over all but the
    # channel dim, blended with the given ones by `momentum` (ONNX's: the old ones' weight)
    rank = len(ctx.shape(x))
    dims = lit([0] + list(range(2, rank)))
    momentum = a.get("momentum", 0.9)
    xs = ctx.ref(x)
    return Outputs([y, f"{ctx.ref(mean, grad=False)} * {lit(momentum)} + mean({xs}, {dims}) * {lit(1 - momentum)}",
                    f"{ctx.ref(var, grad=False)} * {lit(momentum)} + var({xs}, {dims}, correction=0) * "
                    f"{lit(1 - momentum)}"])


@op("InstanceNormalization")
def _instance_norm(ctx, node, a):
    x, scale, bias = node.input
    return (f"instance_norm({ctx.ref(x)}, None, None, {ctx.ref(scale)}, {ctx.ref(bias)}, True, 0.1, "
            f"{lit(a.get('epsilon', 1e-5))})")


@op("LayerNormalization")
def _layer_norm(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    axis = _axis(a.get("axis", -1), len(shape))
    scale = ctx.ref(node.input[1])
    bias = ctx.ref(node.input[2]) if len(node.input) > 2 and node.input[2] else "None"
    eps = lit(a.get('epsilon', 1e-5))
    y = f"layer_norm({ctx.ref(x)}, {lit(list(shape[axis:]))}, {scale}, {bias}, {eps})"
    if not any(ctx.used(o) for o in node.output[1:] if o):
        return y
    # Mean and InvStdDev (the statistics over the normalised dims, kept as dims of size 1)
    dims = lit(list(range(axis, len(shape))))
    xs = ctx.ref(x)
    return Outputs([y, f"mean({xs}, {dims}, True)", f"rsqrt(var({xs}, {dims}, correction=0, keepdim=True) + {eps})"])


@op("GroupNormalization", composed=True)
def _group_norm(ctx, node, a):
    x, scale, bias = node.input
    groups = a["num_groups"]
    channels = ctx.shape(x)[1]
    eps = lit(a.get("epsilon", 1e-5))
    s, b = ctx.ref(scale), ctx.ref(bias)
    if ctx.shape(scale)[0] == groups and groups != channels:
        # opset 18's scale and bias hold one value per group (opset 21: per channel)
        k = channels // groups
        s = f"reshape(expand(reshape({s}, [{groups}, 1]), [{groups}, {k}]), [{channels}])"
        b = f"reshape(expand(reshape({b}, [{groups}, 1]), [{groups}, {k}]), [{channels}])"
    return f"group_norm({ctx.ref(x)}, {groups}, {s}, {b}, {eps})"


@op("LRN", composed=True)
def _lrn(ctx, node, a):
    """x / (bias + alpha / size * the sum of squares over `size` neighbouring channels) ** beta, the sum
    a convolution along the channels (of [N, 1, C, the rest]) with a kernel of ones."""
    x = node.input[0]
    shape = list(ctx.shape(x))
    size = int(a["size"])
    before, after = (size - 1) // 2, -(-(size - 1) // 2)
    xs = ctx.ref(x)
    rest = math.prod(shape[2:])
    squares = f"pad(reshape({xs} * {xs}, {lit([shape[0], 1, shape[1], rest])}), {lit([0, 0, before, after])}, " \
              f"'constant', 0.0)"
    ones = ctx.constant(np.ones([1, 1, size, 1], dtype=ctx.dtype(x)))
    summed = f"reshape(conv2d({squares}, {ones}), {lit(shape)})"
    alpha, beta, bias = a.get("alpha", 1e-4), a.get("beta", 0.75), a.get("bias", 1.0)
    return f"{xs} / pow({summed} * {lit(alpha / size)} + {lit(bias)}, {lit(beta)})"


@op("LpNormalization", composed=True)
def _lp_normalization(ctx, node, a):
    x = ctx.ref(node.input[0])
    p = a.get("p", 2)
    n = f"norm({x}, {p}, [{a.get('axis', -1)}], True)"
    return f"div({x}, where(eq({n}, 0), 1.0, {n}))"     # a zero norm: x is 0 there, and so is the result


@op("MeanVarianceNormalization", composed=True)
def _mvn(ctx, node, a):
    x = ctx.ref(node.input[0])
    axes = lit(list(a.get("axes", [0, 2, 3])))
    return f"div({x} - mean({x}, {axes}, True), sqrt(var({x}, {axes}, correction=0, keepdim=True)))"


def _softmax_like(fn: str):
    def translate(ctx, node, a):
        x = node.input[0]
        shape = ctx.shape(x)
        if ctx.opset >= 13:
            return f"{fn}({ctx.ref(x)}, {a.get('axis', -1)})"
        axis = _axis(a.get("axis", 1), len(shape))       # before opset 13: over the flattened trailing dims
        if axis == len(shape) - 1:
            return f"{fn}({ctx.ref(x)}, -1)"
        rows = math.prod(shape[:axis])
        return f"reshape({fn}(reshape({ctx.ref(x)}, [{rows}, -1]), 1), {lit(list(shape))})"
    return translate


TABLE["Softmax"] = _softmax_like("softmax")
TABLE["LogSoftmax"] = _softmax_like("log_softmax")


# ---- shapes ------------------------------------------------------------------------------

def reshape_target(ctx, x: str, target: list[int], allowzero: bool) -> list[int]:
    shape = ctx.shape(x)
    out = [shape[i] if s == 0 and not allowzero else s for i, s in enumerate(target)]
    if -1 in out:
        known = math.prod(s for s in out if s != -1)
        out[out.index(-1)] = math.prod(shape) // known if known else 0
    return out


@op("Reshape")
def _reshape(ctx, node, a):
    x = node.input[0]
    target = reshape_target(ctx, x, ints(ctx.const(node.input[1])), bool(a.get("allowzero", 0)))
    return f"reshape({ctx.ref(x)}, {lit(ctx.batch_free(x, target))})"


@op("Flatten")
def _flatten(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    axis = _axis(a.get("axis", 1), len(shape))
    if axis == 1 and len(shape) >= 2:
        return f"flatten({ctx.ref(x)}, 1)"
    target = [math.prod(shape[:axis]), math.prod(shape[axis:])]
    return f"reshape({ctx.ref(x)}, {lit(ctx.batch_free(x, target))})"


@op("Transpose")
def _transpose(ctx, node, a):
    rank = len(ctx.shape(node.input[0]))
    perm = list(a.get("perm", list(range(rank))[::-1]))
    return f"permute({ctx.ref(node.input[0])}, {lit(perm)})"


def _axes(ctx, node, a, position: int) -> list[int] | None:
    if "axes" in a:
        return list(a["axes"])
    if len(node.input) > position and node.input[position]:
        return ints(ctx.const(node.input[position]))
    return None


@op("Squeeze")
def _squeeze(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    axes = _axes(ctx, node, a, 1)
    if axes is None:
        axes = [i for i, s in enumerate(shape) if s == 1]
    axes = sorted(_axis(i, len(shape)) for i in axes)
    return f"squeeze({ctx.ref(x)}, {lit(axes)})"


@op("Unsqueeze")
def _unsqueeze(ctx, node, a):
    x = node.input[0]
    axes = _axes(ctx, node, a, 1)
    rank = len(ctx.shape(x)) + len(axes)
    expr = ctx.ref(x)
    for axis in sorted(_axis(i, rank) for i in axes):
        expr = f"unsqueeze({expr}, {axis})"
    return expr


@op("Concat")
def _concat(ctx, node, a):
    names = [n for n in node.input if n]
    return f"cat([{', '.join(ctx.ref(n) for n in names)}], {a['axis']})"


@op("Split")
def _split(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    axis = _axis(a.get("axis", 0), len(shape))
    if "split" in a:
        sizes = list(a["split"])
    elif len(node.input) > 1 and node.input[1]:
        sizes = ints(ctx.const(node.input[1]))
    else:
        n = a.get("num_outputs", len(node.output))
        chunk = -(-shape[axis] // n)
        sizes = [chunk] * (shape[axis] // chunk) + ([shape[axis] % chunk] if shape[axis] % chunk else [])
    return Multi(f"split_with_sizes({ctx.ref(x)}, {lit(sizes)}, {axis})")


@op("Slice")
def _slice(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    if ctx.opset < 10:
        starts, ends = list(a["starts"]), list(a["ends"])
        axes = list(a.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = ints(ctx.const(node.input[1])), ints(ctx.const(node.input[2]))
        axes = ints(ctx.const(node.input[3])) if len(node.input) > 3 and node.input[3] else list(range(len(starts)))
        steps = ints(ctx.const(node.input[4])) if len(node.input) > 4 and node.input[4] else [1] * len(starts)
    items = [":"] * len(shape)
    lists = []
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = _axis(axis, len(shape))
        dim = shape[axis]
        if step == 0:
            raise Refuse("a Slice step of 0")
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
            text = f"{start if start else ''}:{end if end < dim else ''}{':' + str(step) if step != 1 else ''}"
            items[axis] = text
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
            lists.append((axis, list(range(start, end, step))))
    expr = ctx.ref(x)
    if any(i != ":" for i in items):
        while items and items[-1] == ":":
            items.pop()
        expr = f"{expr}[{', '.join(items)}]"
    for axis, index in lists:          # negative steps: an index list on that dim, one dim at a time
        if not index:
            raise Refuse("a Slice with a negative step that selects nothing")
        expr = f"index_select({expr}, {axis}, {ctx.index_tensor(index)})"
    return expr if expr != ctx.ref(x) else f"alias({expr})"


@op("Gather")
def _gather(ctx, node, a):
    data, indices = node.input
    shape = ctx.shape(data)
    axis = _axis(a.get("axis", 0), len(shape))
    if ctx.is_const(indices):
        index = np.asarray(ctx.const(indices)).astype(np.int64)
        index = np.where(index < 0, index + shape[axis], index)
        if index.ndim == 0:
            return f"select({ctx.ref(data)}, {axis}, {int(index)})"
        selected = f"index_select({ctx.ref(data)}, {axis}, {ctx.index_tensor(index.reshape(-1).tolist())})"
        if index.ndim == 1:
            return selected
        out = list(shape[:axis]) + list(index.shape) + list(shape[axis + 1:])
        return f"reshape({selected}, {lit(out)})"
    index = _from_the_start(ctx, indices, shape[axis])
    if axis == 0 and len(shape) == 2:
        return f"embedding({index}, {ctx.ref(data)})"     # a token embedding, as exported
    ishape = ctx.shape(indices)
    out = list(shape[:axis]) + list(ishape) + list(shape[axis + 1:])
    return f"reshape(index_select({ctx.ref(data)}, {axis}, reshape({index}, [-1])), {lit(out)})"


def _from_the_start(ctx, indices: str, size: int) -> str:
    """Indices along a dim of `size`, where ONNX counts a negative one from the end (-1 the last) and
    torch's gather and index_select refuse it: constants made non-negative now, others by a where."""
    if ctx.is_const(indices):
        index = np.asarray(ctx.const(indices)).astype(np.int64)
        return ctx.index_tensor_nd(np.where(index < 0, index + size, index))
    i = ctx.ref(indices)
    return f"where(lt({i}, 0), {i} + {size}, {i})"


@op("GatherElements")
def _gather_elements(ctx, node, a):
    data, indices = node.input
    axis = _axis(a.get("axis", 0), len(ctx.shape(data)))
    return f"gather({ctx.ref(data)}, {axis}, {_from_the_start(ctx, indices, ctx.shape(data)[axis])})"


@op("ScatterElements")
def _scatter_elements(ctx, node, a):
    data, indices, updates = node.input
    axis = _axis(a.get("axis", 0), len(ctx.shape(data)))
    reduction = a.get("reduction", "none")
    d, i, u = ctx.ref(data), _from_the_start(ctx, indices, ctx.shape(data)[axis]), ctx.ref(updates)
    if reduction == "none":
        return f"scatter({d}, {axis}, {i}, {u})"
    if reduction == "add":
        return f"scatter_add({d}, {axis}, {i}, {u})"
    return f"scatter_reduce({d}, {axis}, {i}, {u}, {({'mul': 'prod', 'max': 'amax', 'min': 'amin'})[reduction]!r})"


def _flat_positions(ctx, indices: str, dims: list[int], batch: int = 0) -> tuple[str, list[int]]:
    """GatherND's and ScatterND's index tuples (the last dim of `indices`) over `dims`, as positions
    in those dims flattened, counted from 0 in each of the `batch` leading dims' blocks: (an int64
    expression, or an index constant when `indices` is one; the positions' shape)."""
    ishape = list(ctx.shape(indices))
    strides = [math.prod(dims[j + 1:]) for j in range(len(dims))]
    block = math.prod(dims)
    batch_shape = ishape[:batch]
    # each batch position's first flat position, shaped to broadcast over the index tuples
    offsets = (np.arange(math.prod(batch_shape), dtype=np.int64) * block).reshape(
        batch_shape + [1] * (len(ishape) - 1 - batch))
    if ctx.is_const(indices):
        index = np.asarray(ctx.const(indices)).astype(np.int64)
        flat = (np.mod(index, dims) * strides).sum(-1) + offsets      # ONNX counts negative ones from the end
        return ctx.index_tensor_nd(flat), list(flat.shape)
    idx = ctx.ref(indices)
    flat = f"sum(remainder({idx}, {ctx.index_tensor(dims)}) * {ctx.index_tensor(strides)}, -1)"
    if batch:
        flat = f"{flat} + {ctx.index_tensor_nd(offsets)}"
    return flat, ishape[:-1]


@op("GatherND", composed=True)
def _gather_nd(ctx, node, a):
    data, indices = node.input
    shape = list(ctx.shape(data))
    batch = a.get("batch_dims", 0)
    k = ctx.shape(indices)[-1]
    dims, rest = shape[batch:batch + k], shape[batch + k:]
    positions, pshape = _flat_positions(ctx, indices, dims, batch)
    flat = f"reshape({ctx.ref(data)}, {lit([math.prod(shape[:batch + k])] + rest)})"
    return f"reshape(index_select({flat}, 0, reshape({positions}, [-1])), {lit(pshape + rest)})"


@op("ScatterND", composed=True)
def _scatter_nd(ctx, node, a):
    data, indices, updates = node.input
    shape = list(ctx.shape(data))
    k = ctx.shape(indices)[-1]
    dims, rest = shape[:k], shape[k:]
    reduction = a.get("reduction", "none")
    positions, pshape = _flat_positions(ctx, indices, dims)
    count = math.prod(pshape)
    # one row of the flattened data per index tuple: scatter's index is the row's position, repeated
    rows = f"expand(reshape({positions}, {lit([count] + [1] * len(rest))}), {lit([count] + rest)})"
    flat = f"reshape({ctx.ref(data)}, {lit([math.prod(dims)] + rest)})"
    values = f"reshape({ctx.ref(updates)}, {lit([count] + rest)})"
    if reduction == "none":
        scattered = f"scatter({flat}, 0, {rows}, {values})"
    else:
        how = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}.get(reduction)
        if how is None:
            raise Refuse(f"ScatterND reduction {reduction!r}")
        scattered = f"scatter_reduce({flat}, 0, {rows}, {values}, {how!r})"
    return f"reshape({scattered}, {lit(shape)})"


def _class_loss(ctx, node, a, fn: str, scores: str | None = None) -> str:
    """ONNX's class-index losses as agrad's of PyTorch's name: the scores (or `scores`, an expression
    for them), the int64 classes, an optional weight per class, `reduction` and `ignore_index`
    (without one no target is ignored: ONNX's targets then lie in [0, C), and PyTorch's -100 is none)."""
    args = [scores or ctx.ref(node.input[0]), ctx.ref(node.input[1], grad=False)]
    if len(node.input) > 2 and node.input[2]:       # (PyTorch's nll_loss refuses a weight that requires grad)
        weight = ctx.ref(node.input[2], grad=False)
        args.append(f"weight={weight if ctx.is_const(node.input[2]) or ctx.is_param(node.input[2]) else f'detach({weight})'}")
    reduction = a.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        raise Refuse(f"{node.op_type} reduction {reduction!r}")
    args.append(f"reduction={reduction!r}")
    if "ignore_index" in a:
        args.append(f"ignore_index={int(a['ignore_index'])}")
    return f"{fn}({', '.join(args)})"


@op("NegativeLogLikelihoodLoss")
def _nll_loss(ctx, node, a):
    return _class_loss(ctx, node, a, "nll_loss")


@op("SoftmaxCrossEntropyLoss", composed=True)
def _softmax_cross_entropy(ctx, node, a):
    """cross_entropy; with the log-probabilities too where the second output is used (the legacy
    exporter's F.cross_entropy), nll_loss of them."""
    if len(node.output) > 1 and node.output[1] and ctx.used(node.output[1]):
        log_prob = ctx.step(f"log_softmax({ctx.ref(node.input[0])}, 1)", "log_prob")
        return Outputs([_class_loss(ctx, node, a, "nll_loss", log_prob), f"alias({log_prob})"])
    return _class_loss(ctx, node, a, "cross_entropy")


@op("Expand")
def _expand(ctx, node, a):
    x = node.input[0]
    target = ints(ctx.const(node.input[1]))
    out = list(np.broadcast_shapes(tuple(ctx.shape(x)), tuple(target)))
    return f"expand({ctx.ref(x)}, {lit(out)})"


@op("ConstantOfShape")
def _constant_of_shape(ctx, node, a):
    """One value everywhere: folded when small (folding), else this value expanded to the shape."""
    from onnx import numpy_helper

    shape = ints(ctx.const(node.input[0]))
    value = numpy_helper.to_array(a["value"]).reshape(-1) if "value" in a else np.zeros(1, np.float32)
    return f"expand({ctx.constant(value.reshape(()))}, {lit(shape)})"


@op("Tile")
def _tile(ctx, node, a):
    return f"repeat({ctx.ref(node.input[0])}, {lit(ints(ctx.const(node.input[1])))})"


@op("Pad")
def _pad(ctx, node, a):
    x = node.input[0]
    rank = len(ctx.shape(x))
    mode = a.get("mode", "constant")
    if ctx.opset < 11:
        pads, value = list(a["pads"]), a.get("value", 0.0)
        axes = list(range(rank))
    else:
        pads = ints(ctx.const(node.input[1]))
        value = ctx.const(node.input[2]).item() if len(node.input) > 2 and node.input[2] else 0
        axes = ints(ctx.const(node.input[3])) if len(node.input) > 3 and node.input[3] else list(range(rank))
    axes = [_axis(i, rank) for i in axes]
    begin = dict(zip(axes, pads[:len(axes)]))
    end = dict(zip(axes, pads[len(axes):]))
    first = min((i for i in axes if begin[i] or end[i]), default=rank)
    flat = []
    for i in range(rank - 1, first - 1, -1):
        flat += [begin.get(i, 0), end.get(i, 0)]
    if not flat:
        return f"alias({ctx.ref(x)})"
    torch_mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}.get(mode)
    if torch_mode is None:
        raise Refuse(f"Pad mode {mode!r}")
    if torch_mode == "constant":
        return f"pad({ctx.ref(x)}, {lit(flat)}, 'constant', {lit(float(value))})"
    padded = len(flat) // 2
    if padded > 3:
        raise Refuse(f"Pad mode {mode!r} on {padded} dims (agrad pads at most the last 3 this way)")
    if rank - padded >= 1:
        return f"pad({ctx.ref(x)}, {lit(flat)}, {torch_mode!r})"
    # these modes want a batch dim before the padded ones: lend one, then take it back
    shape = list(ctx.shape(x))
    out = [s + begin.get(i, 0) + end.get(i, 0) for i, s in enumerate(shape)]
    return f"reshape(pad(reshape({ctx.ref(x)}, {lit([1] + shape)}), {lit(flat)}, {torch_mode!r}), {lit(out)})"


@op("Trilu")
def _trilu(ctx, node, a):
    k = int(_scalar(ctx.const(node.input[1]))) if len(node.input) > 1 and node.input[1] else 0
    return f"{'triu' if a.get('upper', 1) else 'tril'}({ctx.ref(node.input[0])}, {k})"


@op("DepthToSpace", "SpaceToDepth", composed=True)
def _depth_space(ctx, node, a):
    x = node.input[0]
    n, c, h, w = ctx.shape(x)
    b = a["blocksize"]
    mode = a.get("mode", "DCR")
    xs = ctx.ref(x)
    if node.op_type == "SpaceToDepth":
        inner = f"reshape({xs}, [{n}, {c}, {h // b}, {b}, {w // b}, {b}])"
        # DCR (the default): the block's offsets before the channel; CRD (opset 28): after it
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        return f"reshape(permute({inner}, {lit(perm)}), [{n}, {c * b * b}, {h // b}, {w // b}])"
    if mode == "DCR":
        inner = f"permute(reshape({xs}, [{n}, {b}, {b}, {c // (b * b)}, {h}, {w}]), [0, 3, 4, 1, 5, 2])"
    else:
        inner = f"permute(reshape({xs}, [{n}, {c // (b * b)}, {b}, {b}, {h}, {w}]), [0, 1, 4, 2, 5, 3])"
    return f"reshape({inner}, [{n}, {c // (b * b)}, {h * b}, {w * b}])"


# ---- reductions and the like ---------------------------------------------------------------

def _reduce(fn: str, square: bool = False, after: str | None = None, absolute: bool = False):
    def translate(ctx, node, a):
        x = node.input[0]
        rank = len(ctx.shape(x))
        axes = _axes(ctx, node, a, 1)
        keep = bool(a.get("keepdims", 1))
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return f"alias({ctx.ref(x)})"
            axes = list(range(rank))
        axes = sorted(_axis(i, rank) for i in axes)
        xs = ctx.ref(x)
        shape = ctx.shape(x)
        if fn in ("amax", "amin") and any(shape[i] == 0 for i in axes):
            # the reduction of nothing: ONNX's identity (-inf for a max), which torch's amax refuses
            dtype = ctx.dtype(x)
            low = np.finfo(dtype).min if dtype.kind == "f" else (False if dtype.kind == "b" else np.iinfo(dtype).min)
            identity = -np.inf if dtype.kind == "f" else low
            if fn == "amin":
                identity = np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)
            out = [1 if i in axes else s for i, s in enumerate(shape)] if keep else \
                [s for i, s in enumerate(shape) if i not in axes]
            return f"expand({ctx.constant(np.array(identity, dtype=dtype))}, {lit(out)})"
        inner = f"{xs} * {xs}" if square else (f"abs({xs})" if absolute else xs)
        expr = f"{fn}({inner}, {lit(axes)}, {keep})"
        return f"{after}({expr})" if after else expr
    return translate


TABLE.update({"ReduceSum": _reduce("sum"), "ReduceMean": _reduce("mean"), "ReduceMax": _reduce("amax"),
              "ReduceMin": _reduce("amin"), "ReduceProd": _reduce("prod"),
              "ReduceLogSumExp": _reduce("logsumexp"), "ReduceSumSquare": _reduce("sum", square=True),
              "ReduceL2": _reduce("sum", square=True, after="sqrt"), "ReduceL1": _reduce("sum", absolute=True),
              "ReduceLogSum": _reduce("sum", after="log")})
COMPOSED.update({"ReduceSumSquare", "ReduceL2", "ReduceL1", "ReduceLogSum"})


@op("ArgMax", "ArgMin")
def _argmax(ctx, node, a):
    fn = node.op_type.lower()
    axis, keep = a.get("axis", 0), bool(a.get("keepdims", 1))
    if a.get("select_last_index", 0):
        # the last of equal extremes: the first one in the tensor flipped along the axis, counted back
        shape = ctx.shape(node.input[0])
        axis = _axis(axis, len(shape))
        return f"{shape[axis] - 1} - {fn}(flip({ctx.ref(node.input[0])}, [{axis}]), {axis}, {keep})"
    return f"{fn}({ctx.ref(node.input[0])}, {axis}, {keep})"


@op("Hardmax", composed=True)
def _hardmax(ctx, node, a):
    x = node.input[0]
    shape = ctx.shape(x)
    axis = _axis(a.get("axis", -1), len(shape))
    hot = f"to(one_hot(argmax({ctx.ref(x)}, {axis}, False), {shape[axis]}), dtype={dtype_name(ctx.dtype(x))!r})"
    return hot if axis == len(shape) - 1 else f"movedim({hot}, [{len(shape) - 1}], [{axis}])"


@op("TopK")
def _topk(ctx, node, a):
    k = int(_scalar(ctx.const(node.input[1])))
    return Multi(f"topk({ctx.ref(node.input[0])}, {k}, {a.get('axis', -1)}, {bool(a.get('largest', 1))}, "
                 f"{bool(a.get('sorted', 1))})")


@op("CumSum", composed=True)
def _cumsum(ctx, node, a):
    x = ctx.ref(node.input[0])
    rank = len(ctx.shape(node.input[0]))
    axis = _axis(int(_scalar(ctx.const(node.input[1]))), rank)
    reverse, exclusive = a.get("reverse", 0), a.get("exclusive", 0)
    if reverse:
        x = f"flip({x}, [{axis}])"
    if exclusive:
        # NOTE: shifted by one along axis (a 0 in front, the last dropped), never cumsum - x: that
        # difference cancels where an element is large beside the sum before it
        padded = f"pad({x}, {lit([0, 0] * (rank - 1 - axis) + [1, 0])}, 'constant', 0.0)"
        x = f"{padded}[{', '.join([':'] * axis + [':-1'])}]"
    expr = f"cumsum({x}, {axis})"
    return f"flip({expr}, [{axis}])" if reverse else expr


@op("Resize", "Upsample")
def _resize(ctx, node, a):
    x = node.input[0]
    shape = list(ctx.shape(x))
    rank = len(shape)
    mode = a.get("mode", "nearest")
    coord = a.get("coordinate_transformation_mode", "half_pixel" if node.op_type == "Resize" else "asymmetric")
    axes = [_axis(i, rank) for i in a.get("axes", range(rank))]
    scales = sizes = None
    if node.op_type == "Upsample" or ctx.opset < 11:
        scales = list(a.get("scales") or ctx.const(node.input[1]).tolist())
    elif not (len(node.input) > 3 and node.input[3]):
        scales = ctx.const(node.input[2]).tolist()
    else:
        sizes = ints(ctx.const(node.input[3]))
    # the scales and sizes of every dim (`axes` names the dims they are given for), as onnx's reference
    full_scales, out = [1.0] * rank, list(shape)
    if scales is not None:
        for i, s in zip(axes, scales):
            full_scales[i], out[i] = float(s), int(math.floor(s * shape[i]))
    else:
        for i, n in zip(axes, sizes):
            full_scales[i], out[i] = n / shape[i], n
        policy = a.get("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            scale = pick(full_scales[i] for i in axes)
            for i in axes:
                full_scales[i], out[i] = scale, int(scale * shape[i] + 0.5)
            scales = [scale] * len(axes)      # (onnx maps coordinates through this scale, not out / in)
    if coord == "align_corners":
        # onnxruntime maps align_corners through the whole output size (x * (in - 1) / (out - 1)), where onnx's
        # reference takes the unrounded in * scale: agrad follows onnxruntime, as exporters' users check with it
        full_scales = [n / s for n, s in zip(out, shape)]
    expr = None
    if out[:2] == shape[:2] and not a.get("antialias", 0) and coord != "tf_crop_and_resize":
        expr = _resize_interpolate(ctx, node, a, mode, coord, shape, out, full_scales if scales is not None else None)
    return expr or _resize_separable(ctx, node, a, mode, coord, shape, out, full_scales)


def _resize_interpolate(ctx, node, a, mode: str, coord: str, shape: list[int], sizes: list[int],
                        scales: list[float] | None) -> str | None:
    """The Resize as agrad's interpolate, where its modes are one of interpolate's (torch's exports);
    None where they are not."""
    x = node.input[0]
    # the output's size, or, where a scale does not divide it evenly, the scales: ONNX maps each output
    # coordinate through the scale given (x / scale), as interpolate's scale_factor does, not out / in
    exact = scales is None or all(s * f == n for s, f, n in zip(shape[2:], scales[2:], sizes[2:]))
    spatial = lit(sizes[2:]) if exact else f"scale_factor={lit([float(f) for f in scales[2:]])}"
    if mode == "nearest":
        nearest = a.get("nearest_mode", "round_prefer_floor")
        if coord == "asymmetric" and (nearest == "floor" or node.op_type == "Upsample"):
            return f"interpolate({ctx.ref(x)}, {spatial}, mode='nearest')"
        return None
    if mode == "linear":
        fn = {3: "linear", 4: "bilinear", 5: "trilinear"}.get(len(shape))
        if fn is None:
            return None
        if coord == "align_corners":
            return f"interpolate({ctx.ref(x)}, {lit(sizes[2:])}, mode={fn!r}, align_corners=True)"
        # torch's source index is half_pixel's (clamped at 0: where linear's edge would be); pytorch_half_pixel
        # differs where an output has size 1
        if coord == "half_pixel" or coord == "pytorch_half_pixel" and all(s > 1 for s in sizes[2:]):
            return f"interpolate({ctx.ref(x)}, {spatial}, mode={fn!r}, align_corners=False)"
        return None
    if mode == "cubic":
        if len(shape) == 4 and a.get("cubic_coeff_a", -0.75) == -0.75 and not a.get("exclude_outside", 0) and \
                (coord == "align_corners" or coord in ("half_pixel", "pytorch_half_pixel")
                 and all(s > 1 for s in sizes[2:])):
            corners = coord == "align_corners"
            return f"interpolate({ctx.ref(x)}, {lit(sizes[2:]) if corners else spatial}, mode='bicubic', " \
                   f"align_corners={corners})"
        return None
    raise Refuse(f"Resize mode {mode!r}")


# past this many coefficients per dim a Resize is not made a matrix product
MAX_RESIZE_MATRIX = 1 << 16


def _resize_separable(ctx, node, a, mode: str, coord: str, shape: list[int], out: list[int],
                      scales: list[float]) -> str:
    """Any Resize as one step per resized dim: an index_select of the nearest input (mode nearest), or
    a product with the dim's interpolation matrix (linear, cubic, antialiased), each row made by onnx's
    reference implementation of one output coordinate (`_interpolate_1d_with_x`), so every
    coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside and tf_crop_and_resize's
    region and extrapolation value are ONNX's. ONNX's n-d interpolation is this 1-d one dim after dim."""
    from onnx.reference.ops import op_resize

    if mode not in ("nearest", "linear", "cubic"):
        raise Refuse(f"Resize mode {mode!r}")
    x = node.input[0]
    rank = len(shape)
    dtype = ctx.dtype(x)
    antialias = bool(a.get("antialias", 0))
    if mode == "nearest":
        if antialias:
            raise Refuse("a nearest Resize with antialias=1")
        nearest = a.get("nearest_mode", "round_prefer_floor")

        def coeffs(ratio, scale):
            return op_resize._nearest_coeffs(ratio, mode=nearest)
    elif mode == "cubic":
        cubic = op_resize._cubic_coeffs_antialias if antialias else op_resize._cubic_coeffs

        def coeffs(ratio, scale):
            return cubic(ratio, scale, A=a.get("cubic_coeff_a", -0.75))
    else:
        coeffs = op_resize._linear_coeffs_antialias if antialias else op_resize._linear_coeffs
    if mode != "nearest" and dtype.kind != "f":
        raise Refuse(f"a {mode} Resize of {dtype.name} values")
    roi = None
    if coord == "tf_crop_and_resize":
        given = np.asarray(ctx.const(node.input[1]), dtype=np.float64).reshape(-1)
        axes = [_axis(i, rank) for i in a.get("axes", range(rank))]
        roi = np.array([0.0] * rank + [1.0] * rank)
        for k, i in enumerate(axes):
            roi[i], roi[rank + i] = given[k], given[len(axes) + k]
    extrapolation = float(a.get("extrapolation_value", 0.0))
    exclude = bool(a.get("exclude_outside", 0))
    expr = ctx.ref(x)

    def row(data, d, position):
        return op_resize._interpolate_1d_with_x(
            data, scales[d], out[d], position, coeffs, roi=None if roi is None else [roi[d], roi[rank + d]],
            extrapolation_value=extrapolation, coordinate_transformation_mode=coord, exclude_outside=exclude)

    for d in range(rank):
        n, m = shape[d], out[d]
        if scales[d] == 1.0 and n == m and roi is None:
            continue
        if mode == "nearest":
            # the coefficients pick one input: on 0, 1, 2 … they give its index
            index = [int(round(row(np.arange(n, dtype=np.float64), d, p))) for p in range(m)]
            if roi is not None and extrapolation != 0.0 or roi is not None and any(
                    row(np.zeros(n), d, p) != 0.0 for p in range(m)):
                raise Refuse("a nearest tf_crop_and_resize Resize with extrapolation")
            expr = f"index_select({expr}, {d}, {ctx.index_tensor(index)})"
            continue
        if m * n > MAX_RESIZE_MATRIX:
            raise Refuse(f"Resize {mode} with coordinate_transformation_mode={coord!r}"
                         f"{' and antialias' if antialias else ''} over {n} -> {m} elements (agrad makes it a "
                         f"product with an {m} x {n} matrix up to {MAX_RESIZE_MATRIX} entries)")
        fill = np.array([row(np.zeros(n), d, p) for p in range(m)])       # tf_crop_and_resize's outside
        eye = np.eye(n)
        matrix = np.array([[row(eye[j], d, p) for j in range(n)] for p in range(m)]) - fill[:, None]
        if d == rank - 1:
            expr = f"matmul({expr}, {ctx.constant(np.ascontiguousarray(matrix.T).astype(dtype))})"
        else:
            moved = f"movedim({expr}, [{d}], [{rank - 2}])"
            expr = f"movedim(matmul({ctx.constant(matrix.astype(dtype))}, {moved}), [{rank - 2}], [{d}])"
        if fill.any():
            expr = f"{expr} + {ctx.constant(fill.reshape([m] + [1] * (rank - 1 - d)).astype(dtype))}"
    return expr if expr != ctx.ref(x) else f"alias({expr})"


@op("Size", "Shape")
def _shape_of(ctx, node, a):
    raise Refuse("a shape that is not known at import time (give the input's size with --shape)")


# ---- recurrent layers, unrolled -----------------------------------------------------------------

# each recurrent op's default activations, per direction (ONNX's spec)
_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


def _recurrent_inputs(ctx, node, a):
    """(X as [seq, batch, input], seq, batch, hidden, [reversed?] per direction, layout)."""
    given, default = a.get("activations"), _DEFAULT_ACTIVATIONS[node.op_type]
    if given is not None and node.op_type != "RNN" and list(given) not in (default, default * 2):
        raise Refuse(f"{node.op_type} with activations {given}")
    if "clip" in a or a.get("input_forget", 0):
        raise Refuse(f"{node.op_type} with clip or input_forget")
    direction = a.get("direction", "forward")
    directions = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
    hidden = a["hidden_size"]
    x = ctx.ref(node.input[0])
    layout = a.get("layout", 0)
    shape = ctx.shape(node.input[0])
    seq, batch = (shape[0], shape[1]) if layout == 0 else (shape[1], shape[0])
    if layout:
        x = ctx.step(f"transpose({x}, 0, 1)", "time_major")
    return x, seq, batch, hidden, directions, layout


def _initial(ctx, node, position: int, d: int, batch: int, hidden: int, layout: int) -> str:
    if len(node.input) > position and node.input[position]:
        state = ctx.ref(node.input[position])
        return f"select({state}, {1 if layout else 0}, {d})"
    return ctx.zeros([batch, hidden], ctx.dtype(node.input[0]))


def _bias(B: str | None, d: int, start: int, stop: int) -> str:
    """The term adding B[d][start:stop], or nothing where the node has no B."""
    return f" + select({B}, 0, {d})[{start}:{stop}]" if B else ""


def _projections(ctx, x: str, W: str, R: str, d: int, bias: str, tag: str, name: str) -> tuple[str, str]:
    # x·Wᵀ for every time step in one matmul (the bias folded in), and Rᵀ once, for direction d
    xw = ctx.step(f"matmul({x}, t(select({W}, 0, {d}))){bias}", f"{tag}{name}")
    return xw, ctx.step(f"t(select({R}, 0, {d}))", f"{tag}R_t")


def _check_lengths(ctx, node, seq: int, layout: int) -> None:
    if len(node.input) > 4 and node.input[4]:
        lengths = np.asarray(ctx.const(node.input[4])).reshape(-1)
        if not (lengths == seq).all():
            raise Refuse(f"{node.op_type} with sequence_lens shorter than the sequence")


def _direction_output(steps: list[str], backwards: bool) -> str:
    """One direction's hidden states over time, [seq, batch, hidden], in time order."""
    return f"stack([{', '.join(reversed(steps) if backwards else steps)}], 0)"


def _recurrent_outputs(ys: list[str], states: list[list[str]], layout: int) -> Outputs:
    """Y, [seq, directions, batch, hidden] (batch first with layout 1), then each final state stacked
    by direction."""
    y = f"stack([{', '.join(ys)}], 1)"
    if layout:
        y = f"permute({y}, [2, 0, 1, 3])"
    return Outputs([y] + [f"stack([{', '.join(s)}], {1 if layout else 0})" for s in states])


@op("LSTM", composed=True)
def _lstm(ctx, node, a):
    x, seq, batch, hidden, directions, layout = _recurrent_inputs(ctx, node, a)
    _check_lengths(ctx, node, seq, layout)
    W, R = ctx.ref(node.input[1]), ctx.ref(node.input[2])
    B = ctx.ref(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    P = ctx.ref(node.input[7]) if len(node.input) > 7 and node.input[7] else None
    H = hidden
    ys, hs, cs = [], [], []
    for d, backwards in enumerate(directions):
        tag = f"d{d}_" if len(directions) > 1 else ""
        xw, rt = _projections(ctx, x, W, R, d, _bias(B, d, 0, 4 * H) + _bias(B, d, 4 * H, 8 * H), tag,
                              "input_gates")
        # peepholes (P: [directions, 3 * hidden], gates i, o, f): the input and forget gates see the cell
        # before the step, the output gate the cell after it (onnx/defs/rnn/defs.cc)
        peep = {gate: f" + select({P}, 0, {d})[{k * H}:{(k + 1) * H}] * " for k, gate in enumerate("iof")} if P else {}
        h = _initial(ctx, node, 5, d, batch, H, layout)
        c = _initial(ctx, node, 6, d, batch, H, layout)
        steps = []
        for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
            g = ctx.step(f"{xw}[{t}] + matmul({h}, {rt})", f"{tag}gates_{t}")
            before = c
            c = ctx.step(f"sigmoid({g}[:, {2 * H}:{3 * H}]{peep['f'] + before if P else ''}) * {c} + "
                         f"sigmoid({g}[:, 0:{H}]{peep['i'] + before if P else ''}) * tanh({g}[:, {3 * H}:{4 * H}])",
                         f"{tag}c_{t}")
            h = ctx.step(f"sigmoid({g}[:, {H}:{2 * H}]{peep['o'] + c if P else ''}) * tanh({c})", f"{tag}h_{t}")
            steps.append(h)
        ys.append(_direction_output(steps, backwards))
        hs.append(h)
        cs.append(c)
    return _recurrent_outputs(ys, [hs, cs], layout)


@op("GRU", composed=True)
def _gru(ctx, node, a):
    x, seq, batch, hidden, directions, layout = _recurrent_inputs(ctx, node, a)
    _check_lengths(ctx, node, seq, layout)
    W, R = ctx.ref(node.input[1]), ctx.ref(node.input[2])
    B = ctx.ref(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    H = hidden
    before_reset = a.get("linear_before_reset", 0)
    ys, hs = [], []
    for d, backwards in enumerate(directions):
        tag = f"d{d}_" if len(directions) > 1 else ""
        rb = _bias(B, d, 3 * H, 6 * H)
        xw, rt = _projections(ctx, x, W, R, d, _bias(B, d, 0, 3 * H), tag, "input_gates")
        h = _initial(ctx, node, 5, d, batch, H, layout)
        steps = []
        for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
            hr = ctx.step(f"matmul({h}, {rt}){rb}", f"{tag}hidden_gates_{t}")
            z = f"sigmoid({xw}[{t}][:, 0:{H}] + {hr}[:, 0:{H}])"
            r = f"sigmoid({xw}[{t}][:, {H}:{2 * H}] + {hr}[:, {H}:{2 * H}])"
            if before_reset:
                n = f"tanh({xw}[{t}][:, {2 * H}:{3 * H}] + {r} * {hr}[:, {2 * H}:{3 * H}])"
            else:
                rbh = f" + select({B}, 0, {d})[{5 * H}:{6 * H}]" if B else ""
                n = (f"tanh({xw}[{t}][:, {2 * H}:{3 * H}] + matmul({r} * {h}, {rt}[:, {2 * H}:{3 * H}]){rbh})")
            h = ctx.step(f"(1.0 - {z}) * {n} + {z} * {h}", f"{tag}h_{t}")
            steps.append(h)
        ys.append(_direction_output(steps, backwards))
        hs.append(h)
    return _recurrent_outputs(ys, [hs], layout)


# an RNN's activation by its ONNX name: the agrad function of the pre-activation
_RNN_ACTIVATIONS = {"Tanh": "tanh({})", "Relu": "relu({})", "Sigmoid": "sigmoid({})"}


@op("RNN", composed=True)
def _rnn(ctx, node, a):
    x, seq, batch, hidden, directions, layout = _recurrent_inputs(ctx, node, a)
    _check_lengths(ctx, node, seq, layout)
    names = list(a.get("activations") or ["Tanh"] * len(directions))
    if len(names) == 1 and len(directions) == 2:
        names = names * 2
    if len(names) != len(directions) or any(n not in _RNN_ACTIVATIONS for n in names):
        raise Refuse(f"RNN with activations {names} (agrad translates {', '.join(_RNN_ACTIVATIONS)}, one per "
                     "direction)")
    W, R = ctx.ref(node.input[1]), ctx.ref(node.input[2])
    B = ctx.ref(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    H = hidden
    ys, hs = [], []
    for d, backwards in enumerate(directions):
        tag = f"d{d}_" if len(directions) > 1 else ""
        xw, rt = _projections(ctx, x, W, R, d, _bias(B, d, 0, H) + _bias(B, d, H, 2 * H), tag, "input_part")
        h = _initial(ctx, node, 5, d, batch, H, layout)
        steps = []
        for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
            h = ctx.step(_RNN_ACTIVATIONS[names[d]].format(f"{xw}[{t}] + matmul({h}, {rt})"), f"{tag}h_{t}")
            steps.append(h)
        ys.append(_direction_output(steps, backwards))
        hs.append(h)
    return _recurrent_outputs(ys, [hs], layout)


@op("OneHot", composed=True)
def _one_hot(ctx, node, a):
    indices, depth, values = node.input
    depth = int(_scalar(ctx.const(depth)))
    off, on = (v.item() for v in np.asarray(ctx.const(values)).reshape(-1)[:2])
    kind = dtype_name(ctx.dtype(values))
    if ctx.is_const(indices):
        index = np.asarray(ctx.const(indices)).astype(np.int64)
        index = np.where(index < 0, index + depth, index)      # ONNX counts negative indices from the end
        idx = ctx.index_tensor_nd(index)
    else:
        idx = ctx.ref(indices)
        if ctx.dtype(indices).kind not in "iu":
            idx = f"to({idx}, dtype='int64')"
        idx = f"remainder({idx}, {depth})"       # negative indices count from the end
    expr = f"to(one_hot({idx}, {depth}), dtype={kind!r})"
    if (off, on) != (0, 1):
        expr = f"{expr} * {lit(on - off)} + {lit(off)}"
    rank = len(ctx.shape(indices)) + 1
    axis = _axis(a.get("axis", -1), rank)
    return expr if axis == rank - 1 else f"movedim({expr}, [{rank - 1}], [{axis}])"



@op("STFT", composed=True)
def _stft(ctx, node, a):
    """Each frame (frame_step apart; as many as fit) times the window, by the DFT's cosine and sine
    matrices, made here: [batch, frames, bins, (real, imaginary)], bins frame_length // 2 + 1 where
    onesided (onnx/defs/math/defs.cc; exporters write torch.stft so)."""
    signal, step = node.input[0], int(_scalar(ctx.const(node.input[1])))
    window = node.input[2] if len(node.input) > 2 and node.input[2] else None
    length = node.input[3] if len(node.input) > 3 and node.input[3] else None
    batch, samples, parts = ctx.shape(signal)
    size = int(_scalar(ctx.const(length))) if length else ctx.shape(window)[0] if window else None
    if size is None or size <= 0 or step <= 0 or size > samples:
        raise Refuse("an STFT without a frame_length or window, or with a frame past the signal or a step of 0")
    if window and ctx.shape(window) != (size,):
        raise Refuse(f"an STFT window of shape {list(ctx.shape(window))} for frames of {size}")
    frames = (samples - size) // step + 1
    bins = size // 2 + 1 if a.get("onesided", 1) else size
    dtype = ctx.dtype(signal)
    places = (np.arange(frames)[:, None] * step + np.arange(size)).reshape(-1)
    angle = 2 * np.pi * np.outer(np.arange(size), np.arange(bins)) / size
    cos, sin = (ctx.constant(f(angle).astype(dtype)) for f in (np.cos, np.sin))
    x = ctx.ref(signal)

    def framed(part: int) -> str:
        expr = f"reshape(index_select(select({x}, 2, {part}), 1, {ctx.index_tensor(places.tolist())}), " \
               f"{lit([batch, frames, size])})"
        return f"{expr} * {ctx.ref(window)}" if window else expr

    real = ctx.step(framed(0), "frames")
    if parts == 1:
        re, im = f"matmul({real}, {cos})", f"neg(matmul({real}, {sin}))"
    elif parts == 2:
        imag = ctx.step(framed(1), "frames_imaginary")
        re = f"matmul({real}, {cos}) + matmul({imag}, {sin})"
        im = f"matmul({imag}, {cos}) - matmul({real}, {sin})"
    else:
        raise Refuse(f"an STFT signal whose last dim is {parts} (1: real, 2: complex)")
    return f"stack([{re}, {im}], -1)"



@op("DFT")
def _dft(ctx, node, a):
    """A DFT along `axis` of a signal whose last dim is 1 (real) or 2 (real, imaginary): agrad.fft's
    transform of it, as floats again (view_as_real), so its gradient is agrad.fft's. As onnx's reference
    (onnx/reference/ops/op_dft.py) and torch.fft: forward is fft of dft_length points (the signal cut or
    zero-padded), onesided rfft of a real signal; inverse is ifft (divided by dft_length), inverse and
    onesided irfft of a complex one-sided spectrum into a real signal of dft_length points (default
    2 * (m - 1); its first dft_length // 2 + 1 frequencies read), its last dim 1. The axis is an
    attribute before opset 20 (default 1), an input from it (default -2); it counts the trailing dim,
    which it may not name."""
    signal = node.input[0]
    shape, dtype = ctx.shape(signal), ctx.dtype(signal)
    rank, parts = len(shape), shape[-1] if shape else 0
    if parts not in (1, 2):
        raise Refuse(f"a DFT signal whose last dim is {parts} (1: real, 2: complex)")
    if dtype not in (np.float32, np.float64):
        raise Refuse(f"a DFT of {dtype_name(dtype)} (agrad.fft transforms float32 and float64, as torch.fft on "
                     "the CPU)")
    length = node.input[1] if len(node.input) > 1 and node.input[1] else None
    if ctx.opset >= 20:
        axis = int(_scalar(ctx.const(node.input[2]))) if len(node.input) > 2 and node.input[2] else -2
    else:
        axis = a.get("axis", 1)
    if not -rank <= axis < rank:
        raise Refuse(f"a DFT along axis {axis} of a signal of rank {rank}")
    axis = _axis(axis, rank)
    if axis == rank - 1:
        raise Refuse(f"a DFT along axis {axis}, the signal's (real, imaginary) dim")
    inverse, onesided = bool(a.get("inverse", 0)), bool(a.get("onesided", 0))
    if onesided and parts != (2 if inverse else 1):
        # (onnx/defs/math/defs.cc: "only real input is supported" for RFFT, "only complex input" for IRFFT)
        raise Refuse(f"a onesided {'inverse ' if inverse else ''}DFT of a {'real' if parts == 1 else 'complex'} "
                     f"signal (ONNX takes a {'complex' if inverse else 'real'} one)")
    n = int(_scalar(ctx.const(length))) if length else None
    count = n if n is not None else 2 * (shape[axis] - 1) if inverse and onesided else shape[axis]
    if count < 1:
        raise Refuse(f"a DFT of {count} points (dft_length {'given' if n is not None else 'from the signal'})")
    x = ctx.ref(signal)
    x = f"select({x}, -1, 0)" if parts == 1 else f"view_as_complex(contiguous({x}))"
    points = "" if n is None else f", n={n}"
    if inverse and onesided:
        return f"unsqueeze(fft_irfft({x}{points}, dim={axis}), -1)"
    if inverse:
        return f"view_as_real(fft_ifft({x}{points}, dim={axis}))"
    return f"view_as_real(fft_{'rfft' if onesided else 'fft'}({x}{points}, dim={axis}))"
