"""torch.nn.Parameter (torch/nn/parameter.py): a Tensor subclass that a Module registers as
one of its parameters when it is assigned as an attribute (`self.weight = Parameter(...)`).

`Parameter(t)` shares t's memory and version counter (PyTorch's `_make_subclass` on a
detached alias), is a leaf, and requires grad unless told otherwise. Ops on a Parameter
return plain Tensors, as in PyTorch.
"""
from __future__ import annotations

from .._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            import agrad
            data = agrad.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): expected a Tensor, got {type(data).__name__}")
        alias = data.detach()
        param = cls._make(alias._data, alias._device, alias._keys)
        param._version_counter = alias._version_counter
        param.requires_grad_(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass        # NOTE: everything happens in __new__; Tensor.__init__ refuses to be called

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.data.clone(), self.requires_grad)
        return memo[id(self)]

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


Parameter.__module__ = "agrad.nn"
