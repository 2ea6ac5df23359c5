"""torch.nn's activation layers (torch/nn/modules/activation.py): parameter-free Modules
that hold only their options and call one functional op, built and called as in PyTorch
(`agrad.nn.Softmax(dim=1)(x)`, `agrad.nn.ReLU(inplace=True)`)."""
from __future__ import annotations

import warnings

from .. import functional as F, init as nn_init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "GELU", "SiLU", "ELU", "SELU", "CELU", "GLU", "Hardtanh",
           "Hardsigmoid", "Hardswish", "Tanh", "Sigmoid", "LogSigmoid", "Softplus", "Softsign", "Tanhshrink", "Mish",
           "Softmax", "Softmin", "Softmax2d", "LogSoftmax", "Threshold", "Hardshrink", "Softshrink", "RReLU"]


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


class ReLU6(_InplaceOption):
    _op = "relu6"


class SELU(_InplaceOption):
    _op = "selu"


class Hardsigmoid(_InplaceOption):
    _op = "hardsigmoid"


class Hardswish(_InplaceOption):
    _op = "hardswish"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val >= max_val:          # PyTorch's check
            raise ValueError(f"min_val ({min_val}) must be less than max_val ({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU: a slope drawn uniformly from [lower, upper) for each negative element in
    training (agrad's global generator), the mean slope (lower + upper) / 2 in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """max(0, x) + weight * min(0, x), with one learnable slope, or one per channel (dim 1)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        import agrad

        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(agrad.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


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


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Mish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class _Shrink(Module):
    _op = ""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return getattr(F, self._op)(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    _op = "hardshrink"


class Softshrink(_Shrink):
    _op = "softshrink"


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


class Softmin(_AlongDim):
    _name = "softmin"


class LogSoftmax(_AlongDim):
    _name = "log_softmax"


class Softmax2d(Module):
    """Softmax over the channels of each location: dim -3 of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
