"""torch.nn's activation layers (torch/nn/modules/activation.py): parameter-free Modules
that hold only their options and call one functional op, built and called as in PyTorch
(`agrad.nn.Softmax(dim=1)(x)`, `agrad.nn.ReLU(inplace=True)`)."""
from __future__ import annotations

import warnings

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Tanh", "Sigmoid", "Softplus", "Mish", "Softmax",
           "LogSoftmax"]


def _softmax_dim(name, ndim, stacklevel=4):
    """PyTorch's _get_softmax_dim: the implicit dim when none was given (deprecated there too)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  f"dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


class _InplaceOption(Module):
    """A layer with PyTorch's `inplace` flag: the in-place op (`relu_`) when it is set."""
    _op = ""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._op)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceOption):
    _op = "relu"


class SiLU(_InplaceOption):
    _op = "silu"


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Mish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _AlongDim(Module):
    """A layer applying `_name` (softmax, log_softmax) along `dim`."""
    _name = ""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        dim = _softmax_dim(self._name, input.ndim) if self.dim is None else self.dim
        return getattr(F, self._name)(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    _name = "softmax"


class LogSoftmax(_AlongDim):
    _name = "log_softmax"
