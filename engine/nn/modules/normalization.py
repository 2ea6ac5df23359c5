"""torch.nn.LocalResponseNorm, CrossMapLRN2d, LayerNorm, GroupNorm and RMSNorm
(torch/nn/modules/normalization.py): weight ones, bias zeros; LayerNorm and RMSNorm over the last
len(normalized_shape) dimensions, GroupNorm over each of num_groups groups of channels,
LocalResponseNorm and CrossMapLRN2d across neighbouring channels (no parameters)."""
from __future__ import annotations

import numbers

from ... import _api as agrad
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """torch/nn/modules/_functions.py's CrossMapLRN2d forward, over agrad's ops in its order: the scale
    of channel c starts as the sum of the squares of channels [0, pre_pad) and moves one channel at a
    time, adding the square entering at c + pre_pad - 1 and removing the one leaving at c - pre_pad
    (only once c > pre_pad: channel 0's square is never removed, as in PyTorch); out = x · (k + α/size ·
    scale)^-β. NOTE: its gradient is the one of this forward; PyTorch's hand-written backward is not
    (it fails torch's own gradcheck) and gives other values wherever a window leaves a channel out."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    channels = input.size(1)
    input_square = agrad.pow(input, 2)
    pre_pad = int((size - 1) / 2 + 1)
    pre_pad_crop = min(pre_pad, channels)
    scale = agrad.zeros_like(input.select(1, 0))
    for c in range(pre_pad_crop):
        scale = scale + input_square.select(1, c)
    scales = [scale]
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            scale = scale + input_square.select(1, c + pre_pad - 1)
        if c > pre_pad:
            scale = scale - input_square.select(1, c - pre_pad)
        scales.append(scale)
    scale = agrad.stack(scales, 1).mul(alpha / size).add(k)
    return agrad.pow(scale, -beta).mul(input)


class CrossMapLRN2d(Module):
    """The legacy (Lua Torch) cross-channel local response normalisation of 4-d input."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, self.elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, num_channels, self.affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        import agrad
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(agrad.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


def _register_affine(module, shape, affine: bool, bias: bool, device, dtype) -> None:
    """A norm's `weight` and `bias` of `shape` (or None), registered in PyTorch's order."""
    import agrad
    if affine:
        module.weight = Parameter(agrad.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(agrad.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module) -> None:
    """reset_parameters of a norm: weight ones, bias zeros (where there are)."""
    if module.weight is not None:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
