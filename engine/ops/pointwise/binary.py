"""Binary elementwise ops (ATen's BinaryOps, PointwiseOps, TensorCompare): arithmetic
(add, sub, mul, div, true_divide, floor_divide, pow, float_power, remainder, fmod, atan2,
copysign, hypot, logaddexp, heaviside), the comparisons (eq, ne, lt, le, gt, ge), the
selections maximum, minimum, fmax, fmin and clamp (clamp_min, clamp_max, clip), and the
fused forms where, lerp, addcmul and addcdiv.

Each gradient is the formula of PyTorch's derivatives.yaml, written with agrad ops, so
double backward works; a selection's gradient follows the selected operand (ties split in
half, bounds get the gradient where they win). Dtypes follow PyTorch's type promotion;
aliases (clip, floor_divide, true_divide) are composites over their target, as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ..._tensor import Tensor
from ...backends.meta import MetaArray
from ...creation import tensor, zeros, zeros_like
from ...creation import tensor as _tensor
from ...dispatcher import ops as _ops
from ...errors import DtypeError
from ...shapes import broadcast_shapes, pointwise_meta, shape_of
from .._common import _float_only, conj_of
from ..conversion import to
from ..registry import defop, promote_float, promote_same
from ..samples import (
    SampleInput,
    binary_samples,
    make_arg,
    off_integers,
    quotient_off_integers,
)
from .logical import isnan, logical_or

same_meta = pointwise_meta()
bool_meta = pointwise_meta(np.bool_)


def _is_number(x) -> bool:
    return not hasattr(x, "shape")


add = defop(
    "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    kernel=lambda xp, self, other, alpha: xp.add(self, other if alpha == 1 else xp.multiply(other, alpha)),
    meta=same_meta, promote="same", wraps_numbers=True, supports_complex=True,
    grads={"self": lambda grad: grad,
           "other": lambda grad, alpha: grad if alpha == 1 else grad * conj_of(alpha)},
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
    meta=_no_bool_sub(same_meta), promote="same", wraps_numbers=True, supports_complex=True,
    grads={"self": lambda grad: grad,
           "other": lambda grad, alpha: -grad if alpha == 1 else grad * -conj_of(alpha)},
    samples=binary_samples(), torch="torch.sub")

# rsub: other - alpha * self, its own op in PyTorch (RsubBackward0; RsubBackward1 where other is a number)
rsub = defop(
    "rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    kernel=_no_bool_sub(lambda xp, self, other, alpha: xp.subtract(other, self if alpha == 1 else
                                                                  xp.multiply(self, alpha))),
    meta=_no_bool_sub(same_meta), promote="same", wraps_numbers=True, supports_complex=True,
    grads={"self": lambda grad, alpha: -grad if alpha == 1 else grad * -conj_of(alpha),
           "other": lambda grad: grad},
    backward_name=("RsubBackward0", "RsubBackward1"), overload=lambda self, other, alpha=1: int(_is_number(other)),
    samples=lambda op: binary_samples()(op) + [
        SampleInput("alpha=3", make_arg((2, 3), key=(op, "a")), make_arg((3,), key=(op, "b")), alpha=3),
        SampleInput("scalar other, alpha=2", make_arg((4,), key=(op, "s")), 2.0, alpha=2)],
    torch="torch.rsub", doc="other - alpha * self.")

mul = defop(
    "mul(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.multiply(self, other),
    meta=same_meta, promote="same", wraps_numbers=True, supports_complex=True,
    # derivatives.yaml: grad * other.conj(), grad * self.conj() (a real input takes the real part: engine)
    grads={"self": lambda grad, other: grad * conj_of(other),
           "other": lambda grad, self: grad * conj_of(self)},
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
    kernel=_div_kernel, meta=_div_meta, promote=_div_promote, wraps_numbers=True, supports_complex=True,
    # derivatives.yaml: grad / other.conj() and -grad * ((self / other) / other).conj()
    grads={"self": lambda grad, other, rounding_mode: grad / conj_of(other) if rounding_mode is None
           else zeros_like(grad),
           "other": lambda grad, self, other, rounding_mode: -grad * conj_of(self) / conj_of(other * other)
           if rounding_mode is None else zeros_like(grad)},
    array_grads={"self": lambda grad, other, rounding_mode: grad / conj_of(other) if rounding_mode is None
                 else np.zeros_like(grad),
                 "other": lambda grad, self, other, rounding_mode: -grad * conj_of(self) / conj_of(other * other)
                 if rounding_mode is None else np.zeros_like(grad)},
    # div.Tensor (DivBackward0) and div.Tensor_mode (DivBackward2)
    backward_name=("DivBackward0", "DivBackward2"),
    overload=lambda self, other, rounding_mode: int(rounding_mode is not None),
    samples=_div_samples, torch="torch.div")


def _pow_self_grad(grad, self, exponent):
    # FunctionsManual's pow_backward / pow_backward_self: grad * (exponent * self ** (exponent - 1)).conj()
    if _is_number(exponent):
        if exponent == 0:
            return grad * 0
        return grad * conj_of(exponent * self ** (exponent - 1))
    # NOTE: where exponent == 0 the gradient is 0, even at self == 0 (0 * inf would be nan)
    return grad * where(exponent == 0, 0.0, conj_of(exponent * self ** (exponent - 1)))


def _nonnegative_exponent(exponent):
    """pow_backward_exponent's condition on the exponent: >= 0, or for a complex one real and >= 0."""
    if exponent.is_complex():
        return (_ops.imag(exponent) == 0) * (_ops.real(exponent) >= 0)
    return exponent >= 0


def _pow_exponent_grad(grad, self, exponent, result):
    # FunctionsManual's pow_backward_exponent: grad * (result * log(self)).conj(), with self in the result's
    # dtype (a negative real base of a complex exponent has a complex log)
    # NOTE: at self == 0 with exponent >= 0 the gradient is 0 (PyTorch), not 0 * log(0) = nan
    if _is_number(self):
        base = complex(self) if result.is_complex() else self
        if self == 0:
            return grad * where(_nonnegative_exponent(exponent), 0.0, conj_of(result * float("-inf")))
        return grad * conj_of(result * (complex(np.log(base)) if result.is_complex() else float(np.log(base))))
    base = self if self.dtype == result.dtype else to(self, dtype=result.dtype)
    return grad * where((self == 0) * _nonnegative_exponent(exponent), 0.0,
                        conj_of(result * _ops.log(base)))  # log is unary's: called by name


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
    meta=same_meta, promote="same", wraps_numbers=True, supports_complex=True,
    grads={"self": _pow_self_grad, "exponent": _pow_exponent_grad},
    backward_name=("PowBackward0", "PowBackward1", "PowBackward2"),
    overload=lambda self, exponent: 0 if _is_number(exponent) else (2 if _is_number(self) else 1),
    samples=_pow_samples, torch="torch.pow")


# ---- comparisons and where: no gradient flows through a comparison ----------------

def _comparison(name, ufunc, supports_complex=False):
    # (complex numbers have equality, not order: PyTorch's lt_cpu … refuse them)
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor",
                 kernel=lambda xp, self, other: getattr(xp, ufunc)(self, other),
                 meta=bool_meta, promote="same", wraps_numbers=True, supports_complex=supports_complex,
                 samples=binary_samples(), torch=f"torch.{name}", tags=("comparison",))


eq = _comparison("eq", "equal", supports_complex=True)
ne = _comparison("ne", "not_equal", supports_complex=True)
lt = _comparison("lt", "less")
le = _comparison("le", "less_equal")
gt = _comparison("gt", "greater")
ge = _comparison("ge", "greater_equal")

# ---- the in-place comparisons' computation (Tensor.eq_ … in ops/_inplace.py) -----------------------

_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_UFUNCS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
           "ge": "greater_equal"}


def _zeros(shape, options):
    # zeros_like(other), from what PyTorch's Node keeps of other (its TypeAndSize), not other itself
    return zeros(list(shape), dtype=options[1], device=options[0])


def _compare_as_self_kernel(xp, self, other, op):
    # compared in the promoted dtype (an int tensor lt_ 2.5 compares 2 < 2.5), written as self's dtype
    arrays = [self, other]
    promote_same(arrays, (0, 1))
    return getattr(xp, _UFUNCS[op])(*arrays).astype(self.dtype, copy=False)


def _compare_as_self_meta(self, other, op):
    if op not in _UFUNCS:
        raise ValueError(f"_compare_as_self: op must be one of {', '.join(_COMPARISONS)}, not {op!r}")
    return pointwise_meta(self.dtype)(self, other)


def _compare_as_self_samples(op):
    samples = []
    for i, name in enumerate(_COMPARISONS):
        a = make_arg((2, 3), key=(op, name, "a"))
        b = a.detach().clone()
        b.data[1] += 0.5
        if name not in ("eq", "ne"):     # (a tie is a jump of lt's value: no finite difference across it)
            b.data[0] -= 0.5             # eq and ne: equal in one row, apart in the other
        samples += [SampleInput(f"{name} tensor", a, b.requires_grad_(), name),
                    SampleInput(f"{name} broadcast", a, make_arg((3,), key=(op, name, "b")), name),
                    SampleInput(f"{name} scalar", a, 0.25 * (i - 2), name)]
    return samples


# PyTorch's eq_.Scalar / eq_.Tensor (derivatives.yaml): no gradient flows, but the in-place comparison
# is recorded, EqBackward0 for a number, EqBackward1 for a tensor, zeros for self and other
_compare_as_self = defop(
    "_compare_as_self(Tensor self, Tensor other, str op) -> Tensor",
    kernel=_compare_as_self_kernel, meta=_compare_as_self_meta, wraps_numbers=True,
    grads={"self": lambda grad: zeros_like(grad),
           "other": lambda other_shape, other_options: _zeros(other_shape, other_options)},
    backward_name=[f"{n.capitalize()}Backward{k}" for n in _COMPARISONS for k in (0, 1)],
    overload=lambda self, other, op: 2 * _COMPARISONS.index(op) + (not _is_number(other)),
    samples=_compare_as_self_samples, torch="lambda self, other, op: getattr(self.clone(), op + '_')(other)",
    doc="The comparison `op` (eq, ne, lt, le, gt, ge) of self and other, in self's dtype: what Tensor.eq_ … "
        "write into self.")


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
    supports_complex=True, kernel=_where_kernel, meta=_where_meta, wraps_numbers=True,
    promote=lambda arrays, positions: promote_same(arrays, (1, 2)),
    grads={"condition": None,
           "self": lambda grad, condition: where(condition, grad, 0.0),
           "other": lambda grad, condition: where(condition, 0.0, grad)},
    samples=_where_samples, torch="torch.where")


def _where_overloads(condition, *args, **kwargs):
    """where(Tensor condition, Tensor self, Tensor other) -> Tensor

    self where condition holds, other elsewhere (broadcast); where(condition) alone is
    nonzero(condition, as_tuple=True), the overload PyTorch's argument parser picks in Python."""
    if not args and not kwargs:
        return _ops.nonzero(condition, as_tuple=True)
    return where(condition, *args, **kwargs)


# NOTE: agrad.where is the function above; the formulas here and elsewhere call the op itself (no frame between)
_where_overloads.op = where.op
_where_overloads.__name__ = _where_overloads.__qualname__ = "where"
_where_overloads.__module__ = "agrad"
where.op.function = _where_overloads


def _selection_grad(grad, self, other, loses):
    # PyTorch: at::where(self == other, grad / 2, grad).masked_fill_(loses, 0)
    return where(loses, 0.0, where(self == other, grad / 2, grad))


maximum = defop(
    "maximum(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.maximum(self, other), meta=same_meta, promote="same",
    grads={"self": lambda grad, self, other: _selection_grad(grad, self, other, self < other),
           "other": lambda grad, self, other: _selection_grad(grad, self, other, self > other)},
    samples=binary_samples(scalar_other=None), torch="torch.maximum")

minimum = defop(
    "minimum(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.minimum(self, other), meta=same_meta, promote="same",
    grads={"self": lambda grad, self, other: _selection_grad(grad, self, other, self > other),
           "other": lambda grad, self, other: _selection_grad(grad, self, other, self < other)},
    samples=binary_samples(scalar_other=None), torch="torch.minimum")


# ---- clamp ----------------------------------------------------------------------------------

def _check_bounds(min, max):  # noqa: A002 — PyTorch's argument names
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (min is not None and max is not None) and hasattr(min, "shape") != hasattr(max, "shape"):
        # PyTorch has clamp(Tensor, Tensor?, Tensor?) and clamp(Tensor, Scalar?, Scalar?), nothing mixed
        got = ", ".join("Tensor" if hasattr(a, "shape") else type(a).__name__ for a in (min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        f"one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)")


def _clamp_kernel(xp, self, min, max):  # noqa: A002
    _check_bounds(min, max)
    out = self
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out.astype(self.dtype, copy=False)


def _clamp_meta(self, min, max):  # noqa: A002
    _check_bounds(min, max)
    return MetaArray(broadcast_shapes(self.shape, shape_of(min), shape_of(max)), self.dtype)


def _clamp_self_grad(grad, self, min, max):  # noqa: A002
    # the subgradient 1 at the bounds, as PyTorch's clamp_backward
    if min is not None and max is not None:
        return where((self >= min) * (self <= max), grad, 0.0)
    if min is not None:
        return where(self >= min, grad, 0.0)
    return where(self <= max, grad, 0.0)


def _clamp_min_grad(grad, self, min, max):  # noqa: A002
    # min wins where self is below it, unless min > max (then max wins everywhere)
    if max is not None:
        return where((self < min) * (min < max), grad, 0.0)
    return where(self < min, grad, 0.0)


def _clamp_max_grad(grad, self, min, max):  # noqa: A002
    if min is not None:
        return where((self > max) + (max < min), grad, 0.0)
    return where(self > max, grad, 0.0)


def _away_from(shape, key, points, low=-2.0, high=2.0):
    """Values in [low, high) at least 0.1 from each of `points` (clamp is not differentiable there)."""
    values = make_arg(shape, key=key, low=low, high=high, requires_grad=False).numpy().copy()
    for p in points:
        close = np.abs(values - p) < 0.1
        values = np.where(close, values + np.where(values >= p, 0.2, -0.2), values)
    return _tensor(values, requires_grad=True)


def _clamp_samples(op):
    x = _away_from((3, 4), (op, "x"), [-0.5, 0.5])
    lo = make_arg((4,), key=(op, "lo"), low=-1.5, high=-0.1)
    hi = make_arg((3, 1), key=(op, "hi"), low=0.1, high=1.5)
    crossing_lo = make_arg((3, 4), key=(op, "clo"), low=-1.0, high=1.0)
    crossing_hi = make_arg((3, 4), key=(op, "chi"), low=-1.0, high=1.0)
    return [
        SampleInput("scalar min,max", x, -0.5, 0.5),
        SampleInput("scalar min kw", x, min=-0.5),
        SampleInput("scalar max kw", x, max=0.5),
        SampleInput("0-d scalar", _away_from((), (op, "0d"), [0.5]), 0.5),
        SampleInput("T scalar", _away_from((4, 3), (op, "T"), [-0.5, 0.5]).detach().T.requires_grad_(), -0.5, 0.5),
        SampleInput("tensor min,max broadcast", make_arg((3, 4), key=(op, "tx")), lo, hi),
        SampleInput("tensor min only", make_arg((3, 4), key=(op, "tm")), lo),
        SampleInput("tensor max only", make_arg((2, 3, 1), key=(op, "tM")), None, hi),
        SampleInput("tensor min > max somewhere", make_arg((3, 4), key=(op, "cx")), crossing_lo, crossing_hi),
        SampleInput("int self, float bound", make_arg((5,), key=(op, "int"), low=-5, high=5, integer=True,
                                                      dtype=dtypes.int64), 0.5),
    ]


def _clamp_overload(self, min, max):  # noqa: A002
    # clamp.Tensor (ClampBackward0) when a bound is a tensor, clamp with Scalar bounds (ClampBackward1)
    return 0 if isinstance(min, Tensor) or isinstance(max, Tensor) else 1


clamp = defop(
    "clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    kernel=_clamp_kernel, meta=_clamp_meta, promote="same", wraps_numbers=True,
    grads={"self": _clamp_self_grad, "min": _clamp_min_grad, "max": _clamp_max_grad},
    backward_name=("ClampBackward0", "ClampBackward1"), overload=_clamp_overload,
    samples=_clamp_samples, torch="torch.clamp")

clip = defop(
    "clip(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    composite=lambda self, min=None, max=None: clamp(self, min, max),  # noqa: A002 — PyTorch's names
    wraps_numbers=True,
    samples=lambda op: [SampleInput("scalar min,max", make_arg((3, 4), key=(op, 0)), -0.5, 0.5),
                        SampleInput("max only", make_arg((3, 4), key=(op, 1)), None, 0.5),
                        SampleInput("tensor bounds", make_arg((3, 4), key=(op, 2)),
                                    make_arg((3, 1), key=(op, 3), low=-1.5, high=-0.1),
                                    make_arg((4,), key=(op, 4), low=0.1, high=1.5))],
    torch="torch.clip", doc="clamp, NumPy's name.")


def _floor_divide_samples(op):
    ints = make_arg((6,), key=(op, 0), low=-9, high=9, integer=True, dtype=dtypes.int64)
    return [SampleInput("float", make_arg((3, 4), key=(op, 1)), make_arg((4,), key=(op, 2), away_from=0.0)),
            SampleInput("int64", ints, make_arg((6,), key=(op, 3), low=1, high=4, integer=True, dtype=dtypes.int64)),
            SampleInput("int64 // number", ints, 2)]


floor_divide = defop(
    "floor_divide(Tensor self, Tensor other) -> Tensor",
    composite=lambda self, other: div(self, other, rounding_mode="floor"), wraps_numbers=True,
    samples=_floor_divide_samples, torch="torch.floor_divide",
    doc="self / other rounded down (div with rounding_mode='floor'); integers stay integers.")


def _dtype(*args):
    """The (promoted) dtype of the first tensor argument: the result's."""
    return next(a.dtype for a in args if not _is_number(a))


def _is_integral(a) -> bool:
    return not _is_number(a) and a.dtype.kind in "iub"


def _checked_meta(check):
    def rule(*args):
        check(*args)
        return same_meta(*args)
    return rule


def _atan2_samples(op):
    return binary_samples(scalar_other=None)(op) + [
        SampleInput("int64", make_arg((4,), key=(op, "i1"), dtype=dtypes.int64, low=-3, high=4, integer=True),
                    make_arg((4,), key=(op, "i2"), dtype=dtypes.int64, low=1, high=4, integer=True))]


def _atan2_denominator(self, other):
    """self^2 + other^2, with 1 where both are 0: atan2 is flat there by convention, so the gradient is
    the signed zero grad * other (PyTorch's value), not 0 / 0."""
    denominator = self * self + other * other
    return where(denominator == 0, 1.0, denominator)


def _atan2_self_grad(grad, self, other):
    return grad * other / _atan2_denominator(self, other)


def _atan2_other_grad(grad, self, other):
    return grad * -self / _atan2_denominator(self, other)


atan2 = defop(
    "atan2(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.arctan2(self, other), meta=same_meta, promote="float",
    grads={"self": _atan2_self_grad, "other": _atan2_other_grad},
    samples=_atan2_samples, torch="torch.atan2")


def _copysign_self_grad(grad, self, result):
    # PyTorch's copysign_tensor_self_backward: grad * result / self, 0 where self == 0
    zero = self == 0
    return grad * where(zero, 0.0, result / where(zero, 1.0, self))


copysign = defop(
    "copysign(Tensor self, Tensor other) -> Tensor",
    kernel=lambda xp, self, other: xp.copysign(self, other), meta=same_meta, promote="float",
    grads={"self": _copysign_self_grad, "other": lambda grad, other: zeros_like(other)},
    samples=lambda op: _atan2_samples(op) + [
        SampleInput("signed zeros", _tensor([0.0, -0.0, 1.5, -2.0], dtype=dtypes.float64),
                    _tensor([-0.0, 1.0, -0.0, 0.0], dtype=dtypes.float64))],
    torch="torch.copysign", doc="|self| with the sign of other (signed zeros included), in a float dtype.")


# ---- remainder and fmod ---------------------------------------------------------------------

def _no_integer_division_by_zero(xp, self, other):
    # NOTE: NumPy returns 0 for an integer x % 0 (with a warning); PyTorch raises
    if _is_integral(self) and _is_integral(other) and bool(xp.any(other == 0)):
        raise RuntimeError("ZeroDivisionError")
    if _is_integral(self) and _is_number(other) and other == 0:
        raise RuntimeError("ZeroDivisionError")


def _modulo(name, ufunc, rounding_mode):
    def kernel(xp, self, other):
        _no_integer_division_by_zero(xp, self, other)
        return xp.asarray(getattr(xp, ufunc)(self, other)).astype(_dtype(self, other), copy=False)

    return defop(
        f"{name}(Tensor self, Tensor other) -> Tensor",
        kernel=kernel, meta=same_meta, promote="same", wraps_numbers=True,
        grads={"self": lambda grad: grad,
               "other": lambda grad, self, other: -grad * div(self, other, rounding_mode=rounding_mode)},
        # name.Scalar (a number divisor: Backward0) and name.Tensor (Backward1)
        backward_name=(f"{name.capitalize()}Backward0", f"{name.capitalize()}Backward1"),
        overload=lambda self, other: 0 if _is_number(other) else 1,
        samples=_modulo_samples, torch=f"torch.{name}")


def _modulo_samples(op):
    a, b = quotient_off_integers((3, 4), (3, 4), key=(op, 0))
    a2, b2 = quotient_off_integers((2, 3), (3,), key=(op, 1))
    ints = [make_arg((6,), key=(op, "ia"), dtype=dtypes.int64, low=-9, high=10, integer=True),
            _tensor([3, -3, 4, -4, 5, 2])]
    scalar = _tensor(off_integers((2, 3), (op, "sq"), requires_grad=False).numpy() * 1.5, dtype=dtypes.float64,
                     requires_grad=True)
    return [SampleInput("(3,4)", a, b), SampleInput("broadcast", a2, b2), SampleInput("scalar other", scalar, 1.5),
            SampleInput("int64", *ints), SampleInput("int64 scalar", ints[0], 4)]


remainder = _modulo("remainder", "remainder", "floor")
fmod = _modulo("fmod", "fmod", "trunc")


# ---- lerp, addcmul, addcdiv -----------------------------------------------------------------

_C10_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _lerp_check(self, end, weight):
    kernel = "lerp_kernel_scalar" if _is_number(weight) else "lerp_kernel_tensor"
    for name, other in (("end", end), ("weight", weight)):
        if not _is_number(other) and other.dtype != self.dtype:
            raise DtypeError(f"expected dtype {_C10_NAMES[dtypes.from_numpy(self.dtype).name]} for `{name}` but got "
                             f"dtype {_C10_NAMES[dtypes.from_numpy(other.dtype).name]}")
    _float_only(kernel, self, complex_too=True)


def _lerp_kernel(xp, self, end, weight):
    _lerp_check(self, end, weight)
    return _lerp_formula(xp, self, end, weight)


def _lerp_formula(xp, self, end, weight):
    # PyTorch's lerp: from the nearer end, so that weight 0 gives self and weight 1 gives end exactly
    if _is_number(weight):          # one end for every element: only its formula is computed
        out = self + weight * (end - self) if abs(weight) < 0.5 else end - (end - self) * (1 - weight)
        return xp.asarray(out).astype(self.dtype, copy=False)
    small = xp.abs(weight) < 0.5
    out = xp.where(small, self + weight * (end - self), end - (end - self) * (1 - weight))
    return out.astype(self.dtype, copy=False)


_lerp_kernel.replay_kernel = _lerp_formula    # its checks are of dtypes, which a replay has as recorded


def _lerp_meta(self, end, weight):
    _lerp_check(self, end, weight)
    return MetaArray(broadcast_shapes(self.shape, end.shape, shape_of(weight)), self.dtype)


def _lerp_samples(op):
    x, y = make_arg((3, 4), key=(op, "x")), make_arg((3, 4), key=(op, "y"))
    return [SampleInput("scalar weight", x, y, 0.3), SampleInput("scalar weight > 0.5", x, y, 0.8),
            SampleInput("tensor weight broadcast", make_arg((2, 3, 4), key=(op, "bx")), y,
                        make_arg((4,), key=(op, "w"), low=-0.5, high=1.5)),
            SampleInput("0-d", make_arg((), key=(op, "0x")), make_arg((), key=(op, "0y")), 1.2)]


lerp = defop(
    "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor",
    kernel=_lerp_kernel, meta=_lerp_meta, wraps_numbers=True, supports_complex=True,
    grads={"self": lambda grad, weight: grad * conj_of(1 - weight), "end": lambda grad, weight: grad * conj_of(weight),
           "weight": lambda grad, self, end: grad * conj_of(end - self)},
    # lerp.Scalar (LerpBackward0) and lerp.Tensor (LerpBackward1)
    backward_name=("LerpBackward0", "LerpBackward1"), overload=lambda self, end, weight: 0 if _is_number(weight) else 1,
    samples=_lerp_samples, torch="torch.lerp")


def _addc_samples(op):
    return [SampleInput("broadcast", make_arg((2, 3), key=(op, "s")), make_arg((3,), key=(op, "a")),
                        make_arg((2, 1), key=(op, "b"), low=0.5, high=2.0)),
            SampleInput("value=-0.5", make_arg((4,), key=(op, "s2")), make_arg((4,), key=(op, "a2")),
                        make_arg((4,), key=(op, "b2"), low=-2.0, high=-0.5), value=-0.5),
            SampleInput("float32 self", make_arg((3,), key=(op, "s3"), dtype=dtypes.float32, requires_grad=False),
                        make_arg((3,), key=(op, "a3")), make_arg((3,), key=(op, "b3"), low=0.5, high=2.0), value=2)]


addcmul = defop(
    "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    kernel=lambda xp, self, tensor1, tensor2, value: (self + value * tensor1 * tensor2).astype(self.dtype, copy=False),
    meta=same_meta, promote="same", supports_complex=True,
    # derivatives.yaml: grad * (tensor2 * value).conj(), grad * (tensor1 * value).conj()
    grads={"self": lambda grad: grad, "tensor1": lambda grad, tensor2, value: grad * conj_of(tensor2 * value),
           "tensor2": lambda grad, tensor1, value: grad * conj_of(tensor1 * value)},
    samples=_addc_samples, torch="torch.addcmul")


def _addcdiv_check(self, tensor1, tensor2, value):
    if _is_integral(tensor1) and _is_integral(tensor2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


def _addcdiv_kernel(xp, self, tensor1, tensor2, value):
    _addcdiv_check(self, tensor1, tensor2, value)
    return (self + value * tensor1 / tensor2).astype(self.dtype, copy=False)


# its check is of dtypes, which a replay has as recorded
_addcdiv_kernel.replay_kernel = lambda xp, self, tensor1, tensor2, value: \
    (self + value * tensor1 / tensor2).astype(self.dtype, copy=False)


addcdiv = defop(
    "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    kernel=_addcdiv_kernel, meta=_checked_meta(_addcdiv_check), promote="same", supports_complex=True,
    # derivatives.yaml: grad * (value / tensor2).conj(), -grad * (value * tensor1 / (tensor2 * tensor2)).conj()
    grads={"self": lambda grad: grad, "tensor1": lambda grad, tensor2, value: grad * conj_of(value / tensor2),
           "tensor2": lambda grad, tensor1, tensor2, value: -grad * conj_of(value * tensor1 / (tensor2 * tensor2))},
    samples=_addc_samples, torch="torch.addcdiv")


# ---- hypot, logaddexp -----------------------------------------------------------------------

def _float_binary(name, kernel_name, fn, grads, samples):
    def kernel(xp, self, other):
        _float_only(kernel_name, self, other)
        return fn(xp, self, other).astype(self.dtype, copy=False)
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", kernel=kernel,
                 meta=_checked_meta(lambda self, other: _float_only(kernel_name, self, other)), promote="same",
                 grads=grads, samples=samples, torch=f"torch.{name}")


hypot = _float_binary(
    "hypot", "hypot_cpu", lambda xp, self, other: xp.hypot(self, other),
    {"self": lambda grad, self, result: grad * self / result,
     "other": lambda grad, other, result: grad * other / result},
    binary_samples(scalar_other=None))

logaddexp = _float_binary(
    "logaddexp", "logaddexp_cpu", lambda xp, self, other: xp.logaddexp(self, other),
    {"self": lambda grad, self, other: grad / (1 + _ops.exp(other - self)),
     "other": lambda grad, self, other: grad / (1 + _ops.exp(self - other))},
    lambda op: binary_samples(scalar_other=None)(op) + [
        SampleInput("far apart", make_arg((3,), key=(op, "f1"), low=-40.0, high=-30.0),
                    make_arg((3,), key=(op, "f2"), low=30.0, high=40.0))])

logaddexp2 = _float_binary(
    "logaddexp2", "logaddexp2_cpu",
    lambda xp, self, other: xp.logaddexp2(self, other),
    {"self": lambda grad, self, other: grad / (1 + _ops.pow(2, other - self)),
     "other": lambda grad, self, other: grad / (1 + _ops.pow(2, self - other))},
    lambda op: binary_samples(scalar_other=None)(op) + [
        SampleInput("far apart", make_arg((3,), key=(op, "f1"), low=-40.0, high=-30.0),
                    make_arg((3,), key=(op, "f2"), low=30.0, high=40.0))])


# ---- ldexp, nextafter (ATen's: own Nodes, LdexpBackward0 and NextafterBackward0) ---------------

ldexp = defop(
    "ldexp(Tensor self, Tensor other) -> Tensor",
    # as ATen's ldexp: self * 2 ** other, in the floating type of the two
    kernel=lambda xp, self, other: (self * xp.exp2(other)).astype(self.dtype, copy=False),
    meta=same_meta, promote="float",
    grads={"self": lambda grad, other: grad * _ops.pow(2, other),
           "other": lambda grad, result: grad * result * math.log(2.0)},
    samples=lambda op: binary_samples(low=-2.0, high=2.0)(op)[:-1] + [
        SampleInput("int64 exponents", make_arg((4,), key=(op, "m")),
                    # (non-negative: PyTorch's formula pow(2, other) is an integer power, 0 for a negative one)
                    make_arg((4,), key=(op, "e"), dtype=dtypes.int64, low=0, high=4, integer=True,
                             requires_grad=False))],
    torch="torch.ldexp", doc="self * 2 ** other, elementwise, in a floating dtype.")


def _nextafter_kernel(xp, self, other):
    _float_only("nextafter_cpu", self, other)
    return xp.nextafter(self, other)


nextafter = defop(
    "nextafter(Tensor self, Tensor other) -> Tensor",
    kernel=_nextafter_kernel,
    meta=_checked_meta(lambda self, other: _float_only("nextafter_cpu", self, other)), promote="same",
    grads={"self": lambda grad, self, other: where(self != other, grad, 0.0),
           "other": lambda grad, other: zeros_like(other)},
    samples=binary_samples(scalar_other=None),
    torch="torch.nextafter", doc="The next floating-point value after self towards other, elementwise.")


# ---- true_divide, float_power: composites as in PyTorch ---------------------------------------

true_divide = defop(
    "true_divide(Tensor self, Tensor other) -> Tensor",
    composite=lambda self, other: div(self, other), wraps_numbers=True,
    samples=lambda op: binary_samples(other_low=0.5, other_high=2.0)(op) + [
        SampleInput("int64/2", make_arg((4,), key=(op, "i"), dtype=dtypes.int64, low=-3, high=4, integer=True), 2)],
    torch="torch.true_divide",
    doc="self / other with true (float) division: div without rounding_mode (DivBackward0).")


def _to_double(x):
    if _is_number(x):
        return float(x)
    return x if x.dtype == dtypes.float64 else to(x, dtype=dtypes.float64)


def _float_power(self, exponent):
    return pow(_to_double(self), _to_double(exponent))


float_power = defop(
    "float_power(Tensor self, Tensor exponent) -> Tensor",
    composite=_float_power, wraps_numbers=True,
    samples=lambda op: [
        SampleInput("tensor^2", make_arg((2, 3), key=(op, 0), low=0.5, high=2.0), 2),
        SampleInput("tensor^tensor", make_arg((3,), key=(op, 1), low=0.5, high=2.0),
                    make_arg((2, 3), key=(op, 2), low=-1.5, high=1.5)),
        SampleInput("2^tensor", 2, make_arg((4,), key=(op, 3))),
        SampleInput("float32^1.5", make_arg((3,), key=(op, 4), dtype=dtypes.float32, low=0.5, high=2.0,
                                            requires_grad=False), 1.5),
        SampleInput("int64^2", make_arg((4,), key=(op, 5), dtype=dtypes.int64, low=-3, high=4, integer=True), 2)],
    torch="torch.float_power",
    doc="self ** exponent computed in float64 (the result is float64 whatever the inputs).")


# ---- heaviside: no derivative ------------------------------------------------------------------

def _heaviside_check(self, values):
    if self.dtype != values.dtype:
        raise DtypeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside_meta(self, values):
    _heaviside_check(self, values)
    return same_meta(self, values)


def _heaviside_kernel(xp, self, values):
    _heaviside_check(self, values)
    return xp.where(self == 0, values, self > 0).astype(self.dtype, copy=False)


def _heaviside_not_implemented(grad):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


heaviside = defop(
    "heaviside(Tensor self, Tensor values) -> Tensor",
    kernel=_heaviside_kernel, meta=_heaviside_meta,
    # PyTorch records a node named NotImplemented whose backward raises (derivatives.yaml: not_implemented)
    grads={"self": _heaviside_not_implemented, "values": _heaviside_not_implemented},
    backward_name="NotImplemented", differentiable=False,
    samples=lambda op: [
        SampleInput("(5,)x(1,)", tensor([-1.5, 0.0, 2.0, 0.0, -0.0], dtype=dtypes.float64),
                    tensor([0.5], dtype=dtypes.float64)),
        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 0), low=-2, high=3, integer=True, dtype=dtypes.int64),
                    make_arg((3,), key=(op, 1), low=5, high=8, integer=True, dtype=dtypes.int64))],
    torch="torch.heaviside",
    doc="0 where self < 0, values where self == 0, 1 where self > 0 (same dtypes required; no gradient).")


# ---- fmax, fmin: NaN-ignoring maximum and minimum ---------------------------------------------

def _picks_self(cmp):
    """Where the result is self's element: self wins the comparison, or other is NaN."""
    return lambda self, other: logical_or(cmp(self, other), isnan(other))


def _fminmax(name, ufunc, cmp):
    picks = _picks_self(cmp)
    return defop(
        f"{name}(Tensor self, Tensor other) -> Tensor",
        kernel=lambda xp, self, other: getattr(xp, ufunc)(self, other), meta=same_meta, promote="same",
        grads={"self": lambda grad, self, other: where(picks(self, other), grad, 0.0),
               "other": lambda grad, self, other: where(picks(self, other), 0.0, grad)},
        samples=lambda op: binary_samples(scalar_other=None)(op) + [
            SampleInput("nan", tensor([1.0, math.nan, -2.0], dtype=dtypes.float64,
                                            requires_grad=True),
                        tensor([math.nan, 3.0, 0.5], dtype=dtypes.float64, requires_grad=True)),
            SampleInput("int64", make_arg((4,), key=(op, "i"), dtype=dtypes.int64, low=-3, high=4, integer=True),
                        make_arg((4,), key=(op, "j"), dtype=dtypes.int64, low=-3, high=4, integer=True))],
        torch=f"torch.{name}",
        doc=f"Elementwise {name[1:]}imum that ignores NaN (NaN only where both are NaN).")


fmax = _fminmax("fmax", "fmax", lambda a, b: ge(a, b))
fmin = _fminmax("fmin", "fmin", lambda a, b: le(a, b))


# ---- clamp_max ----------------------------------------------------------------------------------

clamp_max = defop(
    "clamp_max(Tensor self, Tensor max) -> Tensor",
    kernel=lambda xp, self, max: xp.minimum(self, max), meta=same_meta, promote="same",  # noqa: A006
    wraps_numbers=True,
    grads={"self": lambda grad, self, max: where(le(self, max), grad, 0.0),  # noqa: A006
           "max": lambda grad, self, max: where(gt(self, max), grad, 0.0)},  # noqa: A006
    # clamp_max (Scalar max): ClampMaxBackward0; clamp_max.Tensor: ClampMaxBackward1
    backward_name=("ClampMaxBackward0", "ClampMaxBackward1"),
    overload=lambda self, max: 0 if _is_number(max) else 1,  # noqa: A006
    samples=lambda op: [
        SampleInput("(3,4) 0", make_arg((3, 4), key=(op, 0), away_from=0.0), 0.0),
        SampleInput("(5,) 0.5", make_arg((5,), key=(op, 1), away_from=0.5), 0.5),
        SampleInput("(2,3)x(3,)", make_arg((2, 3), key=(op, 2)), make_arg((3,), key=(op, 3), low=-0.5, high=0.5)),
        SampleInput("int64 2.5", make_arg((4,), key=(op, 4), dtype=dtypes.int64, low=-3, high=5, integer=True), 2.5),
        SampleInput("int64 2", make_arg((4,), key=(op, 5), dtype=dtypes.int64, low=-3, high=5, integer=True), 2)],
    torch="torch.clamp_max",
    doc="min(self, max); the gradient flows to self where self <= max and to a tensor max elsewhere.")


# ---- clamp_min: the hinge of the margin losses -----------------------------------------------

def _clamp_min_meta(self, min):  # noqa: A002
    return MetaArray(self.shape, dtypes.result_type([self, min]))   # an int tensor and a float min: float


clamp_min = defop(
    "clamp_min(Tensor self, Scalar min) -> Tensor",
    kernel=lambda xp, self, min: xp.maximum(self, min).astype(_clamp_min_meta(self, min).dtype, copy=False),
    meta=_clamp_min_meta,
    grads={"self": lambda grad, self, min: where(ge(self, min), grad, 0.0)},  # noqa: A006
    samples=lambda op: [SampleInput("(3,4) 0", make_arg((3, 4), key=(op, 0), away_from=0.0), 0.0),
                        SampleInput("(5,) 0.5", make_arg((5,), key=(op, 1), away_from=0.5), 0.5)],
    torch="torch.clamp_min",
    doc="max(self, min); the gradient flows where self >= min.")
