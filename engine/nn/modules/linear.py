"""torch.nn.Identity, Linear and Bilinear (torch/nn/modules/linear.py)."""
from __future__ import annotations

import math

from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b, W of shape (out_features, in_features); W and b start as PyTorch's:
    U(-1/√in_features, 1/√in_features) (kaiming_uniform_ with a = √5)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        import agrad
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(agrad.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(agrad.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1ᵀ A x2 + b, A of shape (out_features, in1_features, in2_features); A and b start
    U(-1/√in1_features, 1/√in1_features), as PyTorch's."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        import agrad
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(agrad.empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(agrad.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
