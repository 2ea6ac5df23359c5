"""torch.autograd.Variable: the legacy name of a tensor that records history. Every Tensor is a
Variable (isinstance says so); calling it gives the tensor detached, requiring grad as asked; and
`Variable._execution_engine` is the engine, whose queue_callback code of that era still calls."""
from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..creation import empty
from .engine import get_default_engine

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)

    @property
    def _execution_engine(cls):
        return get_default_engine()


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False, _grad_fn=None, name=None):
        # python_legacy_variable.cpp's THPVariable_pynew
        if volatile:
            warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        if _grad_fn is not None:
            raise RuntimeError("_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, "
                               "please invoke your _grad_fn to produce a variable with it as the _grad_fn.")
        if data is None:
            var = empty(0)
        elif isinstance(data, Tensor):
            var = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return var.requires_grad_(requires_grad)
