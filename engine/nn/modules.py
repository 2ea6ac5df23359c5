"""torch.nn's parameter-free layer classes that wrap one functional op: `Softmax`,
`LogSoftmax`, `ReLU` and `CrossEntropyLoss`, built and called as in PyTorch
(`agrad.nn.Softmax(dim=1)(x)`). They hold only their options (no parameters, no
state), so a script written against torch.nn for these runs unchanged."""
from __future__ import annotations

import warnings

from .. import _api as _ops

__all__ = ["Softmax", "LogSoftmax", "ReLU", "CrossEntropyLoss"]


class _Layer:
    """What these layers share: `layer(*inputs)` runs `forward`, and torch.nn's repr."""
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


def _softmax_dim(name, ndim, stacklevel=4):
    """PyTorch's _get_softmax_dim: the implicit dim when none was given (deprecated there too)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  f"dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


class _AlongDim(_Layer):
    """A layer applying `_name` (softmax, log_softmax) along `dim`."""
    __slots__ = ("dim",)
    _name = ""

    def __init__(self, dim=None):
        self.dim = dim

    def forward(self, input):
        dim = _softmax_dim(self._name, input.ndim) if self.dim is None else self.dim
        return getattr(_ops, self._name)(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    __slots__ = ()
    _name = "softmax"


class LogSoftmax(_AlongDim):
    __slots__ = ()
    _name = "log_softmax"


class ReLU(_Layer):
    __slots__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else _ops.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CrossEntropyLoss(_Layer):
    __slots__ = ("weight", "ignore_index", "reduction", "label_smoothing")

    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return _ops.cross_entropy(input, target, self.weight, reduction=self.reduction,
                                  ignore_index=self.ignore_index, label_smoothing=self.label_smoothing)
