"""Each agrad op call as ONNX nodes: the export table.

A translator gets the builder (`b`: `t(x)` an argument's ONNX name, `node(op, inputs, **attrs)`,
`ints(list)` an int64 constant, `shape(x)`, `dtype(x)`) and the call's arguments by schema
name, and returns the ONNX name of the result (a list for a tuple result). `NoMapping` means
this call has no ONNX equivalent here: the exporter then uses the ops it was written with,
or a node of the custom domain `agrad`.

A complex tensor is, in ONNX, a real one with a trailing dim of 2 (real, imaginary), as DFT reads and
writes it: the exporter declares and stores complex values so, and only translators registered with
`complex_values=True` (`COMPLEX`) see calls that read or return one; any other call on complex values
goes through the ops it is written with, else to the custom domain.
"""
from __future__ import annotations

import math

import numpy as np


class NoMapping(Exception):
    pass


TABLE: dict = {}
COMPLEX: set[str] = set()


def op(*names: str, complex_values: bool = False):
    def register(fn):
        for name in names:
            TABLE[name] = fn
            if complex_values:
                COMPLEX.add(name)
        return fn
    return register


_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "reciprocal": "Reciprocal", "abs": "Abs",
          "sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu", "erf": "Erf", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "floor": "Floor", "ceil": "Ceil", "round": "Round", "sign": "Sign",
          "logical_not": "Not", "isnan": "IsNaN", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "softsign": "Softsign", "mish": "Mish", "hardswish": "HardSwish"}
for _agrad, _onnx in _UNARY.items():
    TABLE[_agrad] = (lambda kind: lambda b, a: b.node(kind, [b.t(a["self"])]))(_onnx)
TABLE["_neg_view_copy"] = TABLE["neg"]
COMPLEX.update({"neg", "_neg_view_copy"})       # (Neg of the (real, imaginary) pairs is the complex negation)

_BINARY = {"mul": "Mul", "maximum": "Max", "minimum": "Min", "eq": "Equal", "lt": "Less", "le": "LessOrEqual",
           "gt": "Greater", "ge": "GreaterOrEqual", "logical_and": "And", "logical_or": "Or",
           "logical_xor": "Xor", "pow": "Pow"}


def _operands(b, a, first="self", second="other"):
    """Both operands in the result's dtype where PyTorch's promotion casts one (comparisons: their
    common dtype)."""
    x, y = a[first], a[second]
    common = b.common_dtype(x, y)
    return b.t(x, common), b.t(y, common)


def _binary(kind: str):
    second = "exponent" if kind == "Pow" else "other"
    return lambda b, a: b.node(kind, list(_operands(b, a, "self", second)))


for _agrad, _onnx in _BINARY.items():
    TABLE[_agrad] = _binary(_onnx)


@op("ne")
def _ne(b, a):
    return b.node("Not", [b.node("Equal", list(_operands(b, a)))])


@op("add", "sub", complex_values=True)
def _add(b, a):
    if b.out_dtype.kind == "c":
        return _complex_add(b, a)
    x, y = _operands(b, a)
    alpha = a.get("alpha", 1)
    if alpha != 1:
        y = b.node("Mul", [y, b.scalar(alpha, b.out_dtype)])
    return b.node("Add" if b.op == "add" else "Sub", [x, y])


@op("div")
def _div(b, a):
    mode = a.get("rounding_mode")
    x, y = _operands(b, a)
    if b.out_dtype.kind == "f" and np.dtype(b.common_dtype(a["self"], a["other"])).kind != "f":
        x, y = b.cast(x, b.out_dtype), b.cast(y, b.out_dtype)
    out = b.node("Div", [x, y])
    if mode == "floor" and b.out_dtype.kind == "f":
        return b.node("Floor", [out])
    if mode is not None and b.out_dtype.kind != "f":
        raise NoMapping()
    return out


@op("rsqrt")
def _rsqrt(b, a):
    return b.node("Reciprocal", [b.node("Sqrt", [b.t(a["self"])])])


@op("where")
def _where(b, a):
    return b.node("Where", [b.t(a["condition"]), b.t(a["self"], b.out_dtype), b.t(a["other"], b.out_dtype)])


@op("masked_fill")
def _masked_fill(b, a):
    return b.node("Where", [b.t(a["mask"]), b.t(a["value"], b.out_dtype), b.t(a["self"])])


@op("alias", "clone", "contiguous", "detach", complex_values=True)
def _identity(b, a):
    return b.node("Identity", [b.t(a.get("self", a.get("input")))])


@op("to")
def _to(b, a):
    return b.cast(b.t(a["self"]), b.out_dtype)


@op("leaky_relu")
def _leaky_relu(b, a):
    return b.node("LeakyRelu", [b.t(a["self"])], alpha=float(a["negative_slope"]))


@op("elu")
def _elu(b, a):
    x = b.t(a["self"])
    if a["input_scale"] != 1:
        x = b.node("Mul", [x, b.scalar(a["input_scale"], b.out_dtype)])
    out = b.node("Elu", [x], alpha=float(a["alpha"]))
    return out if a["scale"] == 1 else b.node("Mul", [out, b.scalar(a["scale"], b.out_dtype)])


@op("gelu")
def _gelu(b, a):
    x = b.t(a["self"])
    if a.get("approximate", "none") != "none":
        raise NoMapping()
    inner = b.node("Erf", [b.node("Mul", [x, b.scalar(1 / math.sqrt(2), b.out_dtype)])])
    half = b.node("Mul", [x, b.scalar(0.5, b.out_dtype)])
    return b.node("Mul", [half, b.node("Add", [inner, b.scalar(1.0, b.out_dtype)])])


@op("softplus")
def _softplus(b, a):
    if a["beta"] != 1:
        raise NoMapping()
    return b.node("Softplus", [b.t(a["self"])])


@op("hardtanh")
def _hardtanh(b, a):
    return b.node("Clip", [b.t(a["self"]), b.scalar(a["min_val"], b.out_dtype), b.scalar(a["max_val"], b.out_dtype)])


@op("clamp")
def _clamp(b, a):
    out = b.t(a["self"], b.out_dtype)
    if a.get("min") is not None:
        out = b.node("Max", [out, b.t(a["min"], b.out_dtype)])
    if a.get("max") is not None:
        out = b.node("Min", [out, b.t(a["max"], b.out_dtype)])
    return out


@op("threshold_backward")
def _threshold_backward(b, a):
    keep = b.node("Greater", [b.t(a["self"]), b.scalar(a["threshold"], b.dtype(a["self"]))])
    return b.node("Where", [keep, b.t(a["grad_output"]), b.scalar(0, b.out_dtype)])


# ---- products --------------------------------------------------------------------------

@op("matmul", "mm", "bmm")
def _matmul(b, a):
    return b.node("MatMul", [b.t(a["self"]), b.t(a["other" if "other" in a else "mat2"])])


@op("addmm")
def _addmm(b, a):
    return b.node("Gemm", [b.t(a["mat1"]), b.t(a["mat2"]), b.t(a["self"])], alpha=float(a["alpha"]),
                  beta=float(a["beta"]))


@op("linear")
def _linear(b, a):
    inputs = [b.t(a["input"]), b.t(a["weight"])]
    if len(b.shape(a["input"])) == 2:
        if a["bias"] is not None:
            inputs.append(b.t(a["bias"]))
        return b.node("Gemm", inputs, transB=1)
    out = b.node("MatMul", [inputs[0], b.node("Transpose", [inputs[1]], perm=[1, 0])])
    return out if a["bias"] is None else b.node("Add", [out, b.t(a["bias"])])


@op("einsum")
def _einsum(b, a):
    return b.node("Einsum", [b.t(x) for x in a["tensors"]], equation=a["equation"])


# ---- shapes --------------------------------------------------------------------------------

@op("reshape", "view", "_unsafe_view", "flatten", "unflatten", "squeeze", "unsqueeze")
def _reshape(b, a):
    return b.node("Reshape", [b.t(a["self"]), b.ints(b.out_shape)])


@op("expand", "broadcast_to")
def _expand(b, a):
    return b.node("Expand", [b.t(a["self"]), b.ints(b.out_shape)])


@op("transpose", "swapaxes", "swapdims")
def _transpose(b, a):
    rank = len(b.shape(a["self"]))
    d0, d1 = a.get("dim0", a.get("axis0")), a.get("dim1", a.get("axis1"))
    d0, d1 = (d0 % rank, d1 % rank) if rank else (0, 0)
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.node("Transpose", [b.t(a["self"])], perm=perm)


@op("t")
def _t(b, a):
    rank = len(b.shape(a["self"]))
    return b.node("Transpose", [b.t(a["self"])], perm=list(range(rank))[::-1])


@op("permute")
def _permute(b, a):
    rank = len(b.shape(a["self"]))
    return b.node("Transpose", [b.t(a["self"])], perm=[d % rank for d in a["dims"]])


@op("cat")
def _cat(b, a):
    tensors = [x for x in a["tensors"]]
    rank = len(b.out_shape)
    return b.node("Concat", [b.t(x, b.out_dtype) for x in tensors], axis=a["dim"] % rank)


@op("split_with_sizes", "split")
def _split(b, a):
    rank = len(b.shape(a["self"]))
    sizes = a.get("split_sizes", a.get("split_size_or_sections"))
    dim = a["dim"] % rank
    if b.op == "split" and len(sizes) == 1:          # split(x, 4): chunks of 4, the last one shorter
        sizes = sizes[0]
    if isinstance(sizes, int):
        total = b.shape(a["self"])[dim]
        sizes = [sizes] * (total // sizes) + ([total % sizes] if total % sizes else [])
    return b.node("Split", [b.t(a["self"]), b.ints(list(sizes))], outputs=len(sizes), axis=dim)


@op("select", complex_values=True)
def _select(b, a):
    shape = b.shape(a["self"])
    dim = a["dim"] % len(shape)
    index = a["index"] % shape[dim]
    return b.node("Gather", [b.t(a["self"]), b.ints(index, scalar=True)], axis=dim)


@op("slice", complex_values=True)
def _slice(b, a):
    shape = b.shape(a["self"])
    dim = a["dim"] % len(shape)
    start = 0 if a["start"] is None else a["start"]
    end = shape[dim] if a["end"] is None else a["end"]
    # Python's slices take any int (`x[10**20:]` is empty), ONNX's are int64: ONNX clamps to the
    # dimension too, so a bound past 2**62 either way means the same
    bound = lambda v: max(-2**62, min(v, 2**62))    # noqa: E731
    return b.node("Slice", [b.t(a["self"]), b.ints([bound(start)]), b.ints([bound(end)]), b.ints([dim]),
                            b.ints([bound(a["step"])])])


@op("index_select")
def _index_select(b, a):
    return b.node("Gather", [b.t(a["self"]), b.t(a["index"])], axis=a["dim"] % len(b.shape(a["self"])))


@op("gather")
def _gather(b, a):
    return b.node("GatherElements", [b.t(a["self"]), b.t(a["index"])], axis=a["dim"] % len(b.shape(a["self"])))


@op("embedding")
def _embedding(b, a):
    return b.node("Gather", [b.t(a["weight"]), b.t(a["input"])], axis=0)


@op("embedding_dense_backward")
def _embedding_backward(b, a):
    if a["padding_idx"] not in (None, -1) or a["scale_grad_by_freq"]:
        raise NoMapping()
    grad = b.t(a["grad_output"])
    width = b.shape(a["grad_output"])[-1]
    rows = b.node("Reshape", [grad, b.ints([-1, width])])
    index = b.node("Reshape", [b.t(a["indices"]), b.ints([-1])])
    hot = b.node("OneHot", [index, b.ints(a["num_weights"], scalar=True),
                            b.const(np.array([0, 1], dtype=b.out_dtype))], axis=-1)
    return b.node("MatMul", [b.node("Transpose", [hot], perm=[1, 0]), rows])


@op("triu", "tril")
def _trilu(b, a):
    return b.node("Trilu", [b.t(a["self"]), b.ints(a["diagonal"], scalar=True)], upper=int(b.op == "triu"))


@op("pad", complex_values=True)
def _pad(b, a):
    if a["mode"] not in ("constant", "reflect", "replicate", "circular"):
        raise NoMapping()
    pairs = b.dtype(a["input"]).kind == "c"        # (their trailing (real, imaginary) dim unpadded)
    if pairs and a["value"]:
        raise NoMapping()
    rank = len(b.shape(a["input"])) + pairs
    flat = list(a["pad"])
    begin, end = [0] * rank, [0] * rank
    for i in range(len(flat) // 2):
        begin[rank - 1 - pairs - i], end[rank - 1 - pairs - i] = flat[2 * i], flat[2 * i + 1]
    mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[a["mode"]]
    inputs = [b.t(a["input"]), b.ints(begin + end)]
    if mode == "constant":
        inputs.append(b.scalar(0.0 if a["value"] is None else a["value"], _real_dtype(b.out_dtype)))
    return b.node("Pad", inputs, mode=mode)


# ---- reductions ----------------------------------------------------------------------------

def _dims(b, x, dim) -> list[int]:
    rank = len(b.shape(x))
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % rank for d in dims) if rank else []


def _reduce(kind: str):
    def translate(b, a):
        x = a["self"]
        dims = _dims(b, x, a.get("dim"))
        keep = int(bool(a.get("keepdim", False)))
        if not dims:
            return b.node("Identity", [b.t(x, b.out_dtype)])
        return b.node(kind, [b.t(x, b.out_dtype), b.ints(dims)], keepdims=keep)
    return translate


TABLE.update({"sum": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"), "amax": _reduce("ReduceMax"),
              "amin": _reduce("ReduceMin"), "prod": _reduce("ReduceProd"), "logsumexp": _reduce("ReduceLogSumExp")})


@op("sum_to_size", complex_values=True)
def _sum_to_size(b, a):
    pairs = [2] if b.dtype(a["self"]).kind == "c" else []      # (kept: not a dim `size` names)
    shape, size = list(b.shape(a["self"])) + pairs, list(a["size"]) + pairs
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    out = b.t(a["self"])
    if dims:
        out = b.node("ReduceSum", [out, b.ints(dims)], keepdims=1)
    return b.node("Reshape", [out, b.ints(size)])


@op("argmax", "argmin")
def _argmax(b, a):
    if a["dim"] is None:
        raise NoMapping()
    return b.node("ArgMax" if b.op == "argmax" else "ArgMin", [b.t(a["self"])], axis=a["dim"],
                  keepdims=int(bool(a["keepdim"])))


# ---- nn ------------------------------------------------------------------------------------------

def per_dim(value, d: int) -> list[int]:
    """An int[] argument per spatial dim: the dispatcher keeps `stride=2` as (2,), meaning every dim."""
    values = [value] if isinstance(value, int) else list(value)
    return values * d if len(values) == 1 else values


def _conv_attrs(a, d: int) -> dict:
    def tup(v):
        return per_dim(v, d)
    if isinstance(a["padding"], str):
        raise NoMapping()
    pads = tup(a["padding"])
    return {"strides": tup(a["stride"]), "pads": pads + pads, "dilations": tup(a["dilation"]), "group": a["groups"]}


@op("conv1d", "conv2d", "conv3d")
def _conv(b, a):
    d = int(b.op[4])
    inputs = [b.t(a["input"]), b.t(a["weight"])] + ([b.t(a["bias"])] if a["bias"] is not None else [])
    return b.node("Conv", inputs, **_conv_attrs(a, d))


@op("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(b, a):
    d = int(b.op[-2])
    attrs = _conv_attrs(a, d)
    attrs["output_padding"] = per_dim(a["output_padding"], d)
    inputs = [b.t(a["input"]), b.t(a["weight"])] + ([b.t(a["bias"])] if a["bias"] is not None else [])
    return b.node("ConvTranspose", inputs, **attrs)


@op("convolution_backward_input")
def _conv_backward_input(b, a):
    """d input = the transposed convolution of the gradient, its output padded to the input's size."""
    gy, w = a["grad_output"], a["weight"]
    d = len(b.shape(w)) - 2
    stride, padding, dilation = per_dim(a["stride"], d), per_dim(a["padding"], d), per_dim(a["dilation"], d)
    size, gshape, kernel = list(a["input_size"]), b.shape(gy), b.shape(w)[2:]
    out_pad = [size[2 + i] - ((gshape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1)
               for i in range(d)]
    return b.node("ConvTranspose", [b.t(gy), b.t(w)], strides=stride, pads=padding + padding, dilations=dilation,
                  group=a["groups"], output_padding=out_pad)


@op("convolution_backward_weight")
def _conv_backward_weight(b, a):
    """d weight = a convolution of the input by the gradient over the batch (batch and channels
    swapped; stride and dilation swap roles), cropped to the kernel."""
    if a["groups"] != 1:
        raise NoMapping()
    gy, x = a["grad_output"], a["input"]
    rank = len(b.shape(x))
    d = rank - 2
    swap = [1, 0] + list(range(2, rank))
    stride, padding, dilation = per_dim(a["stride"], d), per_dim(a["padding"], d), per_dim(a["dilation"], d)
    out = b.node("Conv", [b.node("Transpose", [b.t(x)], perm=swap), b.node("Transpose", [b.t(gy)], perm=swap)],
                 strides=dilation, dilations=stride, pads=padding + padding)
    out = b.node("Transpose", [out], perm=swap)
    kernel = list(a["weight_size"])[2:]
    return b.node("Slice", [out, b.ints([0] * d), b.ints(kernel), b.ints(list(range(2, rank)))])


@op("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(b, a):
    d = int(b.op[len("max_pool")])
    if a.get("return_indices") or len(b.shape(a["self"])) != d + 2:       # (ONNX's MaxPool takes a batch)
        raise NoMapping()
    kernel = per_dim(a["kernel_size"], d)
    stride = per_dim(a["stride"], d) if a["stride"] else kernel
    pad, dil = per_dim(a["padding"], d), per_dim(a["dilation"], d)
    return b.node("MaxPool", [b.t(a["self"])], kernel_shape=kernel, strides=stride, pads=pad + pad, dilations=dil,
                  ceil_mode=int(bool(a["ceil_mode"])))


@op("max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward")
def _max_pool_backward(b, a):
    """The gradient goes where MaxPool's Indices (flat over the whole input) point, added up."""
    x = a["self"]
    d = int(b.op[len("max_pool")])
    if len(b.shape(x)) != d + 2:
        raise NoMapping()
    kernel = per_dim(a["kernel_size"], d)
    stride = per_dim(a["stride"], d) if a["stride"] else kernel
    pad, dil = per_dim(a["padding"], d), per_dim(a["dilation"], d)
    _, indices = b.node("MaxPool", [b.t(x)], outputs=2, kernel_shape=kernel, strides=stride, pads=pad + pad,
                        dilations=dil, ceil_mode=int(bool(a["ceil_mode"])))
    total = int(np.prod(b.shape(x)))
    zeros = b.const(np.zeros(total, dtype=b.out_dtype))
    flat = b.node("ScatterElements", [zeros, b.node("Reshape", [indices, b.ints([-1])]),
                                      b.node("Reshape", [b.t(a["grad_output"]), b.ints([-1])])],
                  axis=0, reduction="add")
    return b.node("Reshape", [flat, b.ints(list(b.shape(x)))])


@op("avg_pool2d", "avg_pool1d")
def _avg_pool(b, a):
    d = 1 if b.op == "avg_pool1d" else 2
    if a.get("divisor_override") is not None:
        raise NoMapping()
    kernel = per_dim(a["kernel_size"], d)
    stride = per_dim(a["stride"], d) if a["stride"] else kernel
    pad = per_dim(a["padding"], d)
    return b.node("AveragePool", [b.t(a["self"])], kernel_shape=kernel, strides=stride, pads=pad + pad,
                  ceil_mode=int(bool(a["ceil_mode"])), count_include_pad=int(bool(a["count_include_pad"])))


@op("adaptive_avg_pool2d")
def _adaptive_avg_pool(b, a):
    size = a["output_size"]
    if list(size) not in ([1], [1, 1]):
        raise NoMapping()
    return b.node("GlobalAveragePool", [b.t(a["self"])])


@op("batch_norm")
def _batch_norm(b, a):
    if a["training"] or a["running_mean"] is None:
        return _batch_norm_batch_stats(b, a)
    if a["weight"] is None or a["bias"] is None:
        raise NoMapping()
    return b.node("BatchNormalization", [b.t(a["input"]), b.t(a["weight"]), b.t(a["bias"]), b.t(a["running_mean"]),
                                         b.t(a["running_var"])], epsilon=float(a["eps"]))


def _batch_norm_batch_stats(b, a):
    """Training mode: normalised by the batch's own mean and (biased) variance. The update of
    the running statistics, a side effect, is not part of the exported model."""
    x = b.t(a["input"])
    rank = len(b.shape(a["input"]))
    dims = b.ints([0] + list(range(2, rank)))
    mean = b.node("ReduceMean", [x, dims], keepdims=1)
    centred = b.node("Sub", [x, mean])
    var = b.node("ReduceMean", [b.node("Mul", [centred, centred]), dims], keepdims=1)
    out = b.node("Div", [centred, b.node("Sqrt", [b.node("Add", [var, b.scalar(a["eps"], b.out_dtype)])])])
    channels = [1, -1] + [1] * (rank - 2)
    if a["weight"] is not None:
        out = b.node("Mul", [out, b.node("Reshape", [b.t(a["weight"]), b.ints(channels)])])
    if a["bias"] is not None:
        out = b.node("Add", [out, b.node("Reshape", [b.t(a["bias"]), b.ints(channels)])])
    return out


@op("adaptive_avg_pool2d_backward")
def _adaptive_avg_pool_backward(b, a):
    gshape, shape = b.shape(a["grad_output"]), b.shape(a["self"])
    if list(gshape[-2:]) != [1, 1]:
        raise NoMapping()
    share = b.node("Div", [b.t(a["grad_output"]), b.scalar(shape[-1] * shape[-2], b.out_dtype)])
    return b.node("Expand", [share, b.ints(list(shape))])


@op("layer_norm")
def _layer_norm(b, a):
    rank = len(b.shape(a["input"]))
    axis = rank - len(a["normalized_shape"])
    inputs = [b.t(a["input"])]
    inputs.append(b.t(a["weight"]) if a["weight"] is not None else
                  b.const(np.ones(list(a["normalized_shape"]), dtype=b.out_dtype)))
    if a["bias"] is not None:
        inputs.append(b.t(a["bias"]))
    from onnx import helper
    # the statistics in float64 for a float64 input (ONNX's default is float32)
    stash = helper.TensorProto.DOUBLE if b.out_dtype == np.float64 else helper.TensorProto.FLOAT
    return b.node("LayerNormalization", inputs, axis=axis, epsilon=float(a["eps"]), stash_type=stash)


@op("affine_grid_generator")
def _affine_grid_generator(b, a):
    # the base grid (every location's normalized coordinates and a 1, a constant of the size) @ theta^T:
    # its coordinates are affine_grid_generator's own output for the identity theta
    import agrad
    size, dims = list(a["size"]), len(a["size"]) - 2
    identity = agrad.eye(dims, dims + 1, dtype=agrad.float64).unsqueeze(0)
    coords = agrad.affine_grid_generator(identity, [1] + size[1:], a["align_corners"]).reshape(-1, dims)
    base = np.concatenate([coords.numpy(), np.ones((coords.shape[0], 1))], axis=1).astype(b.out_dtype)
    theta_t = b.node("Transpose", [b.t(a["theta"])], perm=[0, 2, 1])
    return b.node("Reshape", [b.node("MatMul", [b.const(base), theta_t]), b.ints(b.out_shape)])


@op("softmax", "log_softmax")
def _softmax(b, a):
    if a.get("dtype") is not None:
        raise NoMapping()
    return b.node("Softmax" if b.op == "softmax" else "LogSoftmax", [b.t(a["self"])], axis=a["dim"])


@op("_softmax_backward_data")
def _softmax_backward(b, a):
    gy, y = b.t(a["grad_output"]), b.t(a["output"])
    dot = b.node("ReduceSum", [b.node("Mul", [gy, y]), b.ints([a["dim"]])], keepdims=1)
    return b.node("Mul", [b.node("Sub", [gy, dot]), y])


@op("_log_softmax_backward_data")
def _log_softmax_backward(b, a):
    gy, y = b.t(a["grad_output"]), b.t(a["output"])
    total = b.node("ReduceSum", [gy, b.ints([a["dim"]])], keepdims=1)
    return b.node("Sub", [gy, b.node("Mul", [b.node("Exp", [y]), total])])


@op("zeros_like", "ones_like", "full_like", "empty_like", "fill")
def _value_only(b, a):
    return b.const(b.result_array())        # depends on its input's shape only, which is fixed here


# ---- the backward ops that formulas call -----------------------------------------------------

def _one(b, value) -> str:
    return b.scalar(1.0, b.out_dtype) if value is None else b.scalar(value, b.out_dtype)


@op("tanh_backward")
def _tanh_backward(b, a):
    y = b.t(a["output"])
    return b.node("Mul", [b.t(a["grad_output"]), b.node("Sub", [_one(b, 1.0), b.node("Mul", [y, y])])])


@op("sigmoid_backward")
def _sigmoid_backward(b, a):
    y = b.t(a["output"])
    return b.node("Mul", [b.t(a["grad_output"]), b.node("Mul", [y, b.node("Sub", [_one(b, 1.0), y])])])


@op("silu")
def _silu(b, a):
    x = b.t(a["self"])
    return b.node("Mul", [x, b.node("Sigmoid", [x])])


@op("silu_backward")
def _silu_backward(b, a):
    x = b.t(a["self"])
    s = b.node("Sigmoid", [x])
    inner = b.node("Add", [_one(b, 1.0), b.node("Mul", [x, b.node("Sub", [_one(b, 1.0), s])])])
    return b.node("Mul", [b.t(a["grad_output"]), b.node("Mul", [s, inner])])


@op("gelu_backward")
def _gelu_backward(b, a):
    if a.get("approximate", "none") != "none":
        raise NoMapping()
    x = b.t(a["self"])
    cdf = b.node("Mul", [b.node("Add", [_one(b, 1.0), b.node("Erf", [b.node("Mul", [x, b.scalar(1 / math.sqrt(2),
                                                                                                   b.out_dtype)])])]),
                         b.scalar(0.5, b.out_dtype)])
    pdf = b.node("Mul", [b.node("Exp", [b.node("Mul", [b.node("Mul", [x, x]), b.scalar(-0.5, b.out_dtype)])]),
                         b.scalar(1 / math.sqrt(2 * math.pi), b.out_dtype)])
    return b.node("Mul", [b.t(a["grad_output"]), b.node("Add", [cdf, b.node("Mul", [x, pdf])])])


@op("leaky_relu_backward")
def _leaky_relu_backward(b, a):
    positive = b.node("Greater", [b.t(a["self"]), b.scalar(0, b.dtype(a["self"]))])
    gy = b.t(a["grad_output"])
    return b.node("Where", [positive, gy, b.node("Mul", [gy, b.scalar(a["negative_slope"], b.out_dtype)])])


@op("hardtanh_backward")
def _hardtanh_backward(b, a):
    x = b.t(a["self"])
    inside = b.node("And", [b.node("Greater", [x, b.scalar(a["min_val"], b.dtype(a["self"]))]),
                            b.node("Less", [x, b.scalar(a["max_val"], b.dtype(a["self"]))])])
    return b.node("Where", [inside, b.t(a["grad_output"]), b.scalar(0, b.out_dtype)])


def _zero_padded(b, x: str, begin: list[int], end: list[int]) -> str:
    """`x` zero-padded by `begin` and `end` per dim (a complex result's (real, imaginary) dim unpadded)."""
    pairs = [0] if b.out_dtype.kind == "c" else []
    return b.node("Pad", [x, b.ints(begin + pairs + end + pairs), b.scalar(0, _real_dtype(b.out_dtype))],
                  mode="constant")


@op("select_backward", complex_values=True)
def _select_backward(b, a):
    sizes, dim = list(a["input_sizes"]), a["dim"] % len(a["input_sizes"])
    index = a["index"] % sizes[dim]
    begin, end = [0] * len(sizes), [0] * len(sizes)
    begin[dim], end[dim] = index, sizes[dim] - index - 1
    return _zero_padded(b, b.node("Unsqueeze", [b.t(a["grad_output"]), b.ints([dim])]), begin, end)


@op("slice_backward", complex_values=True)
def _slice_backward(b, a):
    sizes, dim = list(a["input_sizes"]), a["dim"] % len(a["input_sizes"])
    if a["step"] != 1:
        raise NoMapping()
    start = max(0, min(a["start"] + sizes[dim] if a["start"] < 0 else a["start"], sizes[dim]))
    length = b.shape(a["grad_output"])[dim]
    begin, end = [0] * len(sizes), [0] * len(sizes)
    begin[dim], end[dim] = start, sizes[dim] - start - length
    return _zero_padded(b, b.t(a["grad_output"]), begin, end)


@op("mse_loss")
def _mse_loss(b, a):
    diff = b.node("Sub", [b.t(a["input"]), b.t(a["target"])])
    square = b.node("Mul", [diff, diff])
    if a["reduction"] == "none":
        return square
    rank = len(b.shape(a["input"]))
    kind = "ReduceMean" if a["reduction"] == "mean" else "ReduceSum"
    return b.node(kind, [square, b.ints(list(range(rank)))], keepdims=0) if rank else square


@op("mse_loss_backward")
def _mse_loss_backward(b, a):
    diff = b.node("Sub", [b.t(a["input"]), b.t(a["target"])])
    scale = 2.0 / (int(np.prod(b.shape(a["input"]))) if a["reduction"] == "mean" else 1)
    return b.node("Mul", [b.node("Mul", [diff, b.scalar(scale, b.out_dtype)]), b.t(a["grad_output"])])


@op("nll_loss")
def _nll_loss(b, a):
    if a["weight"] is not None:
        raise NoMapping()
    return b.node("NegativeLogLikelihoodLoss", [b.t(a["input"]), b.t(a["target"])], reduction=a["reduction"],
                  ignore_index=a["ignore_index"])


@op("nll_loss_backward")
def _nll_loss_backward(b, a):
    """-grad at each row's target class (divided by the rows counted, for `mean`), 0 elsewhere."""
    if a["weight"] is not None or a["reduction"] not in ("mean", "sum") or len(b.shape(a["input"])) != 2:
        raise NoMapping()
    rows, classes = b.shape(a["input"])
    target = b.t(a["target"])
    off_on = b.const(np.array([0, 1], dtype=b.out_dtype))
    hot = b.node("OneHot", [target, b.ints(classes, scalar=True), off_on], axis=-1)
    valid = b.cast(b.node("Not", [b.node("Equal", [target, b.ints(a["ignore_index"], scalar=True)])]), b.out_dtype)
    hot = b.node("Mul", [hot, b.node("Unsqueeze", [valid, b.ints([1])])])
    out = b.node("Mul", [hot, b.node("Neg", [b.t(a["grad_output"])])])
    if a["reduction"] == "mean":
        out = b.node("Div", [out, b.node("ReduceSum", [valid], keepdims=0)])
    return out


@op("stack")
def _stack(b, a):
    rank = len(b.out_shape)
    dim = a["dim"] % rank
    parts = [b.node("Unsqueeze", [b.t(x, b.out_dtype), b.ints([dim])]) for x in a["tensors"]]
    return b.node("Concat", parts, axis=dim)


@op("unbind")
def _unbind(b, a):
    shape = b.shape(a["self"])
    dim = a["dim"] % len(shape)
    parts = b.node("Split", [b.t(a["self"]), b.ints([1] * shape[dim])], outputs=shape[dim], axis=dim)
    parts = parts if isinstance(parts, list) else [parts]
    return [b.node("Squeeze", [p, b.ints([dim])]) for p in parts]


@op("index_add")
def _index_add(b, a):
    """ScatterElements adding along `dim`, the 1-D index spread over the source's shape."""
    source = a["source"]
    shape = b.shape(source)
    dim = a["dim"] % len(shape)
    src = b.t(source, b.out_dtype)
    if a["alpha"] != 1:
        src = b.node("Mul", [src, b.scalar(a["alpha"], b.out_dtype)])
    along = [1] * len(shape)
    along[dim] = -1
    index = b.node("Expand", [b.node("Reshape", [b.t(a["index"]), b.ints(along)]), b.ints(list(shape))])
    return b.node("ScatterElements", [b.t(a["self"], b.out_dtype), index, src], axis=dim, reduction="add")


@op("scatter_add")
def _scatter_add(b, a):
    if b.shape(a["index"]) != b.shape(a["src"]):
        raise NoMapping()          # torch reads only the index's part of src: not ScatterElements' rule
    dim = a["dim"] % len(b.shape(a["self"]))
    return b.node("ScatterElements", [b.t(a["self"]), b.t(a["index"]), b.t(a["src"], b.out_dtype)], axis=dim,
                  reduction="add")


# ---- complex values: (..., 2) real pairs -------------------------------------------------------

@op("view_as_real", "view_as_complex", complex_values=True)
def _complex_view(b, a):
    return b.node("Identity", [b.t(a["self"])])        # (both are the pairs already)


def _real_dtype(dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def _spectral_scale(b, x: str, normalization: int, n: int, undo: int = 1) -> str:
    """`x` times aten's fft_norm_mode factor over n points (1, 1/sqrt(n), 1/n), and times `undo` (the
    n of an inverse DFT, which divides by it where aten's primitives do not)."""
    factor = undo * {0: 1.0, 1: 1.0 / math.sqrt(n), 2: 1.0 / n}[normalization]
    return x if factor == 1 else b.node("Mul", [x, b.scalar(factor, _real_dtype(b.out_dtype))])


def _dft(b, x: str, axis: int, inverse: bool = False, onesided: bool = False, length: int | None = None) -> str:
    inputs = [x] if length is None else [x, b.ints(length, scalar=True)]
    return b.node("DFT", inputs, axis=axis, inverse=int(inverse), onesided=int(onesided))


@op("_fft_r2c", complex_values=True)
def _fft_r2c(b, a):
    """The real signal as pairs of one (..., 1); the last dim of `dim` first, one-sided if asked, the
    others full (onnxscript's torchlib writes it so)."""
    shape = b.shape(a["self"])
    dims = [d % len(shape) for d in a["dim"]]
    x = b.node("Unsqueeze", [b.t(a["self"]), b.ints([len(shape)])])
    for i, d in enumerate(reversed(dims)):
        x = _dft(b, x, d, onesided=bool(a["onesided"]) and i == 0)
    return _spectral_scale(b, x, a["normalization"], math.prod(shape[d] for d in dims))


@op("_fft_c2c", complex_values=True)
def _fft_c2c(b, a):
    shape = b.shape(a["self"])
    dims = [d % len(shape) for d in a["dim"]]
    x = b.t(a["self"])
    for d in dims:
        x = _dft(b, x, d, inverse=not a["forward"])
    n = math.prod(shape[d] for d in dims)
    return _spectral_scale(b, x, a["normalization"], n, 1 if a["forward"] else n)


@op("_fft_c2r", complex_values=True)
def _fft_c2r(b, a):
    """The full inverse over the other dims of `dim`, then the one-sided spectrum's inverse over its last
    into last_dim_size real points ((..., 1) pairs: squeezed)."""
    shape = b.shape(a["self"])
    dims = [d % len(shape) for d in a["dim"]]
    x = b.t(a["self"])
    for d in dims[:-1]:
        x = _dft(b, x, d, inverse=True)
    x = _dft(b, x, dims[-1], inverse=True, onesided=True, length=a["last_dim_size"])
    x = b.node("Squeeze", [x, b.ints([len(shape)])])
    n = math.prod(shape[d] for d in dims[:-1]) * a["last_dim_size"]
    return _spectral_scale(b, x, a["normalization"], n, n)


@op("_conj", "_conj_physical", complex_values=True)
def _conj(b, a):
    return b.node("Mul", [b.t(a["self"]), b.const(np.array([1, -1], _real_dtype(b.out_dtype)))])


@op("mul", complex_values=True)
def _mul(b, a):
    """A product with a complex operand: a real one times both parts (a trailing dim of 1), two complex
    ones (ar br - ai bi, ar bi + ai br)."""
    x, y = a["self"], a["other"]
    if b.out_dtype.kind != "c":
        return _binary("Mul")(b, a)
    px, py = _as_pairs(b, x), _as_pairs(b, y)
    if px is None or py is None:
        return b.node("Mul", [px or py, _real_part(b, y if px else x)])
    (xr, xi), (yr, yi) = ([b.node("Slice", [p, b.ints([i]), b.ints([i + 1]), b.ints([-1])]) for i in (0, 1)]
                          for p in (px, py))
    re = b.node("Sub", [b.node("Mul", [xr, yr]), b.node("Mul", [xi, yi])])
    im = b.node("Add", [b.node("Mul", [xr, yi]), b.node("Mul", [xi, yr])])
    return b.node("Concat", [re, im], axis=-1)


def _is_tensor_arg(v) -> bool:
    return hasattr(v, "detach")


def _as_pairs(b, v) -> str | None:
    """A complex operand (a tensor or a Python complex) as pairs in the result's precision; None for a
    real one."""
    if isinstance(v, complex):
        return b.const(np.array(v, b.out_dtype))
    if not _is_tensor_arg(v) or b.dtype(v).kind != "c":
        return None
    part = _real_dtype(b.out_dtype)
    return b.t(v) if _real_dtype(b.dtype(v)) == part else b.cast(b.t(v), part)


def _real_part(b, v) -> str:
    """A real operand in the result's precision, with a trailing dim of 1 that meets the pairs' 2."""
    part = _real_dtype(b.out_dtype)
    if not _is_tensor_arg(v):
        return b.scalar(v, part)
    return b.node("Unsqueeze", [b.t(v, part), b.ints([-1])])


def _complex_add(b, a):
    """A sum with a complex operand: pairs add up; a real operand adds to the real parts (paired with
    zeros)."""
    def operand(v):
        pairs = _as_pairs(b, v)
        if pairs is not None:
            return pairs
        r = _real_part(b, v)
        if not _is_tensor_arg(v):
            r = b.node("Unsqueeze", [r, b.ints([0])])
        zero = b.node("Expand", [b.const(np.zeros(1, _real_dtype(b.out_dtype))), b.node("Shape", [r])])
        return b.node("Concat", [r, zero], axis=-1)

    x, y = operand(a["self"]), operand(a["other"])
    alpha = a.get("alpha", 1)
    if alpha != 1:
        if isinstance(alpha, complex):
            raise NoMapping()
        y = b.node("Mul", [y, b.scalar(alpha, _real_dtype(b.out_dtype))])
    return b.node("Add" if b.op == "add" else "Sub", [x, y])
