"""The `_foreach_*` functions (agrad._foreach_add, _foreach_mul_, _foreach_norm, …): one op
applied to every tensor of a list, what torch/optim's foreach paths and clip_grad_norm_ call.

Each is PyTorch's slow path (ATen's foreach_tensor_*_slow): a loop over the per-tensor op, so
autograd records one node per tensor, and an in-place form runs the op's in-place variant
(autograd's apply_inplace, as every `<op>_` method does) with its checks (a leaf that requires
grad, saved tensors' versions). PyTorch's list checks come first (ForeachUtils.h: an empty list, lists of different lengths, a scalar list of another
length). An out-of-place form returns a tuple, an in-place one the list it was given, as
torch 2.13's do.

The second operand of a binary form is a Scalar, a list of Scalars (one per tensor), a list of
Tensors, or one Tensor (PyTorch's ScalarTensor overload: the same tensor for every element);
addcmul/addcdiv's `value` is a Scalar, a list of Scalars or a 1-d tensor of them.
"""
from __future__ import annotations

from numbers import Number

from ._tensor import Tensor
from .autograd.inplace import apply_inplace
from .dispatcher import ops as _ops

__all__ = []        # filled below: every `_foreach_<name>` and `_foreach_<name>_`


def _check(tensors, *others) -> list:
    """ForeachUtils.h's check_foreach_api_restrictions: `tensors` not empty, every other tensor list
    of its length. Returns `tensors` as a list."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if len(other) != len(tensors):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} and "
                               f"{len(other)}")
    return tensors


def _per_tensor(tensors, other) -> list:
    """The second operand for each tensor: a list of Tensors or of Scalars, one each; else `other`."""
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            _check(tensors, other)
            return list(other)
        if len(other) != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, (Tensor, Number)):
        return [other] * len(tensors)
    raise TypeError(f"_foreach op: the second operand must be a Scalar, a list of Scalars, a list of Tensors "
                    f"or a Tensor, not {type(other).__name__}")


def _values(tensors, value) -> list:
    """addcmul/addcdiv's `value`: a Scalar, a list of Scalars or a 1-d tensor of them, one per tensor."""
    if isinstance(value, Tensor):
        if value.ndim != 1 or value.numel() != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return value.tolist()
    return _per_tensor(tensors, value)


def _unary(name):
    op = getattr(_ops, name)

    def out_of_place(self):
        return tuple(op(t) for t in _check(self))

    def in_place(self):
        for t in _check(self):
            apply_inplace(t, op)
        return self
    return out_of_place, in_place


_CLAMP_BOUND = {"clamp_min": "min", "clamp_max": "max"}


def _binary(name, alpha=False):
    op = getattr(_ops, name)

    if alpha:                   # add, sub: `alpha` scales a tensor (list) operand, as add's
        def out_of_place(self, other, *, alpha=1):
            tensors = _check(self)
            return tuple(op(t, o, alpha=alpha) for t, o in zip(tensors, _per_tensor(tensors, other)))

        def in_place(self, other, *, alpha=1):
            tensors = _check(self)
            for t, o in zip(tensors, _per_tensor(tensors, other)):
                apply_inplace(t, op, (o,), {"alpha": alpha})
            return self
        return out_of_place, in_place

    bound = _CLAMP_BOUND.get(name)

    def call(o):
        """(op, args, kwargs) for one tensor's operand `o`."""
        if bound is not None and isinstance(o, Tensor):
            return _ops.clamp, (), {bound: o}      # clamp_min.Tensor is clamp with a tensor min
        return op, (o,), {}

    def out_of_place(self, other):
        if isinstance(self, Number) and name == "pow":      # _foreach_pow(Scalar self, Tensor[] exponent)
            return tuple(op(self, e) for e in _check(other))
        tensors = _check(self)
        results = []
        for t, o in zip(tensors, _per_tensor(tensors, other)):
            fn, args, kwargs = call(o)
            results.append(fn(t, *args, **kwargs))
        return tuple(results)

    def in_place(self, other):
        tensors = _check(self)
        for t, o in zip(tensors, _per_tensor(tensors, other)):
            apply_inplace(t, *call(o))
        return self
    return out_of_place, in_place


def _pointwise(name):
    """addcmul, addcdiv: self + value * tensor1 (*, /) tensor2, per tensor."""
    op = getattr(_ops, name)

    def out_of_place(self, tensor1, tensor2, value=1):
        tensors = _check(self, tensor1, tensor2)
        return tuple(op(t, a, b, value=v) for t, a, b, v in zip(tensors, tensor1, tensor2, _values(tensors, value)))

    def in_place(self, tensor1, tensor2, value=1):
        tensors = _check(self, tensor1, tensor2)
        for t, a, b, v in zip(tensors, tensor1, tensor2, _values(tensors, value)):
            apply_inplace(t, op, (a, b), {"value": v})
        return self
    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight):
    tensors = _check(self, tensors1)
    return tuple(_ops.lerp(t, e, w) for t, e, w in zip(tensors, tensors1, _per_tensor(tensors, weight)))


def _foreach_lerp_(self, tensors1, weight):
    tensors = _check(self, tensors1)
    for t, e, w in zip(tensors, tensors1, _per_tensor(tensors, weight)):
        apply_inplace(t, _ops.lerp, (e, w))
    return self


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 — PyTorch's argument name
    """The vector norm of each tensor (what clip_grad_norm_ sums)."""
    return tuple(_ops.norm(t if dtype is None else t.to(dtype), ord) for t in _check(self))


def _foreach_max(self):
    return tuple(_ops.max(t) for t in _check(self))


def _foreach_clone(self):
    return tuple(t.clone() for t in _check(self))


def _foreach_zero_(self):
    for t in _check(self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    tensors = _check(self, src)
    for t, s in zip(tensors, src):
        t.copy_(s)
    return self


_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("mul", "div", "maximum", "minimum", "pow", "clamp_min", "clamp_max")


def _define(name, pair):
    for fn, suffix in zip(pair, ("", "_")):
        full = f"_foreach_{name}{suffix}"
        fn.__name__ = fn.__qualname__ = full
        fn.__doc__ = f"torch.{full}: {name} of every tensor of a list (a loop over agrad.{name})."
        globals()[full] = fn
        __all__.append(full)


for _name in _UNARY:
    _define(_name, _unary(_name))
for _name in _BINARY:
    _define(_name, _binary(_name))
for _name in ("add", "sub"):
    _define(_name, _binary(_name, alpha=True))
for _name in ("addcmul", "addcdiv"):
    _define(_name, _pointwise(_name))
__all__ += ["_foreach_lerp", "_foreach_lerp_", "_foreach_norm", "_foreach_max", "_foreach_clone", "_foreach_zero_",
            "_foreach_copy_"]
