"""Core elementwise ops: arithmetic, exp/log, and the activations PyTorch gives
dedicated backward ops (tanh_backward, sigmoid_backward, threshold_backward)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import tensor, zeros_like
from ..errors import DtypeError
from ..shapes import broadcast_shapes, pointwise_meta, shape_of
from .registry import defop, promote_float, promote_same
from .samples import (
    SampleInput,
    binary_samples,
    make_arg,
    positive_unary_samples,
    quotient_off_integers,
    unary_samples,
)

same_meta = pointwise_meta()
bool_meta = pointwise_meta(np.bool_)


def _is_number(x) -> bool:
    return not hasattr(x, "shape")


add = defop(
    "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    kernel=lambda xp, self, other, alpha: xp.add(self, other if alpha == 1 else xp.multiply(other, alpha)),
    meta=same_meta, promote="same", wraps_numbers=True,
    grads={"self": lambda grad: grad,
           "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha},
    samples=binary_samples(), torch="torch.add")

def _no_bool_sub(rule):
    """PyTorch rejects `-` on two bools (before promotion could make it legal)."""
    def checked(*args):
        self, other = args[-3], args[-2]
        if getattr(self, "dtype", None) == np.bool_ and getattr(other, "dtype", None) == np.bool_:
            raise DtypeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                             "Use the `^` or `logical_xor()` operator instead.")
        return rule(*args)
    return checked


sub = defop(
    "sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    kernel=_no_bool_sub(lambda xp, self, other, alpha: xp.subtract(self, other if alpha == 1 else
                                                                  xp.multiply(other, alpha))),
    meta=_no_bool_sub(same_meta), promote="same", wraps_numbers=True,
    grads={"self": lambda grad: grad,
           "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha},
    array_grads={"self": lambda grad: grad,
                 "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha},
    samples=binary_samples(), torch="torch.sub")

mul = defop(
    "mul(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.multiply(self, other),
    meta=same_meta, promote="same", wraps_numbers=True,
    grads={"self": lambda grad, other: grad * other,
           "other": lambda grad, self: grad * self},
    array_grads={"self": lambda grad, other: grad * other,
                 "other": lambda grad, self: grad * self},
    samples=binary_samples(), torch="torch.mul")

def _check_rounding_mode(rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")


def _div_kernel(xp, self, other, rounding_mode):
    if rounding_mode is None:
        return xp.true_divide(self, other)
    _check_rounding_mode(rounding_mode)
    dtype = (other if _is_number(self) else self).dtype
    if dtype.kind in "iub":
        if bool(xp.any(xp.asarray(other) == 0)):
            raise RuntimeError("ZeroDivisionError")       # PyTorch's message; NumPy would give 0
        q = xp.floor_divide(self, other)
        if rounding_mode == "trunc":      # C's integer division: floor, plus one where it rounded a negative down
            q = q + ((q < 0) & (q * other != self))
    elif rounding_mode == "floor":
        q = xp.floor_divide(self, other)          # Python's floor division, as PyTorch's div_floor
    else:
        q = xp.trunc(xp.true_divide(self, other))
    return xp.asarray(q).astype(dtype, copy=False)


def _div_promote(arrays, positions):
    # true division computes integers in the default float; trunc and floor keep the promoted dtype
    (promote_same if arrays[2] is not None else promote_float)(arrays, positions)


def _div_meta(self, other, rounding_mode):
    _check_rounding_mode(rounding_mode)
    return same_meta(self, other)


def _div_samples(op):
    a, b = quotient_off_integers((3, 4), (3, 4), key=(op, "mode"))
    ints = (make_arg((6,), key=(op, "ia"), dtype=dtypes.int64, low=-9, high=10, integer=True),
            tensor([3, -3, 4, -4, 5, 2]))
    return binary_samples(other_low=0.5, other_high=2.0)(op) + [
        SampleInput("rounding_mode=floor", a, b, rounding_mode="floor"),
        SampleInput("rounding_mode=trunc", a, b, rounding_mode="trunc"),
        SampleInput("int64 floor", *ints, rounding_mode="floor"),
        SampleInput("int64 trunc", *ints, rounding_mode="trunc"),
        SampleInput("int64 true", *ints), SampleInput("int64 trunc scalar", ints[0], -4, rounding_mode="trunc")]


# NOTE: with a rounding_mode the result is piecewise constant: PyTorch's gradient is zeros, not None
div = defop(
    "div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor",
    kernel=_div_kernel, meta=_div_meta, promote=_div_promote, wraps_numbers=True,
    grads={"self": lambda grad, other, rounding_mode: grad / other if rounding_mode is None else zeros_like(grad),
           "other": lambda grad, self, other, rounding_mode: -grad * self / (other * other) if rounding_mode is None
           else zeros_like(grad)},
    array_grads={"self": lambda grad, other, rounding_mode: grad / other if rounding_mode is None
                 else np.zeros_like(grad),
                 "other": lambda grad, self, other, rounding_mode: -grad * self / (other * other)
                 if rounding_mode is None else np.zeros_like(grad)},
    # div.Tensor (DivBackward0) and div.Tensor_mode (DivBackward2)
    backward_name=("DivBackward0", "DivBackward2"),
    overload=lambda self, other, rounding_mode: int(rounding_mode is not None),
    samples=_div_samples, torch="torch.div")

def _no_bool_neg(rule):
    def checked(*args):
        if args[-1].dtype == np.bool_:
            raise DtypeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                             "to invert a mask, use the `~` or `logical_not()` operator instead.")
        return rule(*args)
    return checked


neg = defop(
    "neg(Tensor self) -> Tensor",
    kernel=_no_bool_neg(lambda xp, self: xp.negative(self)), meta=_no_bool_neg(same_meta),
    grads={"self": lambda grad: -grad},
    array_grads={"self": lambda grad: -grad},
    samples=unary_samples(), torch="torch.neg")


def _pow_self_grad(grad, self, exponent):
    if _is_number(exponent):
        if exponent == 0:
            return grad * 0
        return grad * (exponent * self ** (exponent - 1))
    # NOTE: where exponent == 0 the gradient is 0, even at self == 0 (0 * inf would be nan)
    return grad * where(exponent == 0, 0.0, exponent * self ** (exponent - 1))


def _pow_exponent_grad(grad, self, exponent, result):
    # NOTE: at self == 0 with exponent >= 0 the gradient is 0 (PyTorch), not 0 * log(0) = nan
    if _is_number(self):
        if self == 0:
            return grad * where(exponent >= 0, 0.0, result * float("-inf"))
        with np.errstate(invalid="ignore"):
            return grad * (result * float(np.log(self)))
    return grad * where((self == 0) * (exponent >= 0), 0.0, result * log(self))


def _pow_samples(op):
    base = [SampleInput(f"{s}**{e}", make_arg(s, key=(op, i), low=0.5, high=2.0), e)
            for i, (s, e) in enumerate([((), 2.0), ((3, 2), 3), ((4,), -1.5), ((2, 3), 0.5)])]
    tensor_exp = [SampleInput("tensor**tensor", make_arg((2, 3), key=(op, "b"), low=0.5, high=2.0),
                              make_arg((3,), key=(op, "e"), low=-1.0, high=2.0)),
                  SampleInput("scalar**tensor", 2.0, make_arg((3,), key=(op, "s"), low=-1.0, high=2.0))]
    return base + tensor_exp


def _pow_kernel(xp, self, exponent):
    # NOTE: integers to negative integer powers: a negative number is PyTorch's error; a tensor of
    # exponents gives what integer division gives, 1 ** -n = 1, (-1) ** -n = +-1, else 0 (NumPy raises)
    if _is_number(exponent):
        if isinstance(exponent, int) and exponent < 0 and self.dtype.kind in "iu":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return xp.power(self, exponent)
    if exponent.dtype.kind == "i" and (isinstance(self, int) if _is_number(self) else self.dtype.kind in "iu"):
        negative = exponent < 0
        out = xp.power(self, xp.where(negative, 0, exponent))
        odd = (exponent % 2) == 1
        inverse = xp.where(self == 1, 1, xp.where(self == -1, xp.where(odd, -1, 1), 0))
        return xp.where(negative, inverse, out).astype(out.dtype, copy=False)
    return xp.power(self, exponent)


pow = defop(  # noqa: A001 — PyTorch's name
    "pow(Tensor self, Tensor exponent) -> Tensor",
    kernel=_pow_kernel,
    meta=same_meta, promote="same", wraps_numbers=True,
    grads={"self": _pow_self_grad, "exponent": _pow_exponent_grad},
    backward_name=("PowBackward0", "PowBackward1", "PowBackward2"),
    overload=lambda self, exponent: 0 if _is_number(exponent) else (2 if _is_number(self) else 1),
    samples=_pow_samples, torch="torch.pow")

exp = defop(
    "exp(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.exp(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, result: grad * result},
    array_grads={"self": lambda grad, result: grad * result},
    samples=unary_samples(), torch="torch.exp")

log = defop(
    "log(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.log(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, self: grad / self},
    array_grads={"self": lambda grad, self: grad / self},
    samples=positive_unary_samples(), torch="torch.log")

def _tanh_backward_kernel(xp, grad_output, output):
    return grad_output * (1 - output * output)


tanh_backward = defop(
    "tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
    kernel=_tanh_backward_kernel,
    meta=same_meta, promote="same",
    grads={"grad_output": lambda grad, output: tanh_backward(grad, output),
           "output": lambda grad, grad_output, output: -2 * output * grad_output * grad},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1), low=-0.9, high=0.9))],
    torch="torch.ops.aten.tanh_backward")

tanh = defop(
    "tanh(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.tanh(self), meta=same_meta, promote="float",
    grads={"self": lambda grad, result: tanh_backward(grad, result)},
    array_grads={"self": lambda grad, result: _tanh_backward_kernel(np, grad, result)},
    samples=unary_samples(), torch="torch.tanh")


def _sigmoid_kernel(xp, x):
    # NOTE: exp(-|x|) never overflows; 1/(1+exp(-x)) does for x << 0
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _sigmoid_backward_kernel(xp, grad_output, output):
    return grad_output * output * (1 - output)


sigmoid_backward = defop(
    "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
    kernel=_sigmoid_backward_kernel,
    meta=same_meta, promote="same",
    grads={"grad_output": lambda grad, output: sigmoid_backward(grad, output),
           "output": lambda grad, grad_output, output: grad * grad_output * (1 - 2 * output)},
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)), make_arg((3,), key=(op, 1), low=0.1, high=0.9))],
    torch="torch.ops.aten.sigmoid_backward")

sigmoid = defop(
    "sigmoid(Tensor self) -> Tensor",
    kernel=_sigmoid_kernel, meta=same_meta, promote="float",
    grads={"self": lambda grad, result: sigmoid_backward(grad, result)},
    array_grads={"self": lambda grad, result: _sigmoid_backward_kernel(np, grad, result)},
    samples=unary_samples(low=-4.0, high=4.0), torch="torch.sigmoid")

def _threshold_backward_kernel(xp, grad_output, self, threshold):
    keep = ~(self <= threshold)            # NaN in self keeps its gradient, as where(self <= t, 0, g) does
    dt = grad_output.dtype
    if dt.kind == "f" and dt.itemsize in (2, 4, 8) and keep.shape == grad_output.shape:
        # where() branches per element (10x a multiply on a random mask); the same bits, +0.0 where
        # dropped and NaN and -0.0 kept, come from the gradient's bits AND a mask word
        bits = grad_output.view(f"u{dt.itemsize}")
        return (bits & -keep.astype(bits.dtype)).view(dt)
    return xp.where(~keep, 0, grad_output).astype(dt, copy=False)


threshold_backward = defop(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    kernel=_threshold_backward_kernel,
    meta=lambda grad_output, self, threshold: MetaArray(broadcast_shapes(grad_output.shape, self.shape),
                                                        grad_output.dtype),
    promote=lambda arrays, positions: promote_same(arrays, positions),
    grads={"grad_output": lambda grad, self, threshold: threshold_backward(grad, self, threshold),
           "self": lambda grad: grad * 0},
    samples=lambda op: [SampleInput("(4,)", make_arg((4,), key=(op, 0)),
                                    make_arg((4,), key=(op, 1), away_from=0.0), 0.0)],
    torch="torch.ops.aten.threshold_backward")

relu = defop(
    "relu(Tensor self) -> Tensor",
    kernel=lambda xp, self: xp.maximum(self, 0).astype(self.dtype, copy=False), meta=same_meta,
    grads={"self": lambda grad, result: threshold_backward(grad, result, 0)},
    array_grads={"self": lambda grad, result: _threshold_backward_kernel(np, grad, result, 0)},
    samples=unary_samples(away_from=0.0), torch="torch.relu")


# ---- comparisons and where: no gradient flows through a comparison ----------------

def _comparison(name, ufunc):
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor",
                 kernel=lambda xp, self, other: getattr(xp, ufunc)(self, other),
                 meta=bool_meta, promote="same", wraps_numbers=True,
                 samples=binary_samples(), torch=f"torch.{name}", tags=("comparison",))


eq = _comparison("eq", "equal")
ne = _comparison("ne", "not_equal")
lt = _comparison("lt", "less")
le = _comparison("le", "less_equal")
gt = _comparison("gt", "greater")
ge = _comparison("ge", "greater_equal")


def _where_dtype(self, other):
    # the values' promoted dtype (promote= ran); two Python numbers: PyTorch's result_type of them
    for a in (self, other):
        if not _is_number(a):
            return a.dtype
    return dtypes.result_type([self, other])


def _where_meta(condition, self, other):
    if condition.dtype != np.bool_:
        raise DtypeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                         f"{condition.dtype}")
    shape = broadcast_shapes(condition.shape, shape_of(self), shape_of(other))
    return MetaArray(shape, _where_dtype(self, other))


def _where_kernel(xp, condition, self, other):
    if condition.dtype != np.bool_:
        _where_meta(condition, self, other)
    return xp.where(condition, self, other).astype(_where_dtype(self, other), copy=False)


def _where_samples(op):
    cond = make_arg((2, 3), key=(op, "c"), requires_grad=False)
    return [SampleInput("broadcast", cond > 0, make_arg((2, 3), key=(op, "a")), make_arg((3,), key=(op, "b"))),
            SampleInput("scalar", cond > 0.5, make_arg((2, 3), key=(op, "a2")), 0.0)]


where = defop(
    "where(Tensor condition, Tensor self, Tensor other) -> Tensor",
    kernel=_where_kernel, meta=_where_meta, wraps_numbers=True,
    promote=lambda arrays, positions: promote_same(arrays, (1, 2)),
    grads={"condition": None,
           "self": lambda grad, condition: where(condition, grad, 0.0),
           "other": lambda grad, condition: where(condition, 0.0, grad)},
    samples=_where_samples, torch="torch.where")
