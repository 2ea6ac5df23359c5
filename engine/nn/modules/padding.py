"""torch.nn's padding layers (torch/nn/modules/padding.py): ConstantPad, ZeroPad, ReflectionPad,
ReplicationPad and CircularPad, each over the last 1, 2 or 3 dims; `padding` is one int for
every side or (left, right[, top, bottom[, front, back]]), as F.pad takes it. CircularPad checks
the input's dims itself; the others leave that to F.pad."""
from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

# the padding's tuple maker for 1, 2 and 3 padded dims (PyTorch: _pair, _quadruple, _ntuple(6))
_PADDING = {1: _pair, 2: _quadruple, 3: _ntuple(6)}


class _PadNd(Module):
    """CircularPad, ReflectionPad and ReplicationPad: the padding, and F.pad in the class's mode."""
    _dims = 0
    _mode = ""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _PADDING[self._dims](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input) -> None:
        if input.dim() != self._dims + 1 and input.dim() != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _dims = 1


class CircularPad2d(_CircularPadNd):
    _dims = 2


class CircularPad3d(_CircularPadNd):
    _dims = 3


class _ConstantPadNd(Module):
    _dims = 0

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _PADDING[self._dims](padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    _dims = 3


class _ZeroPad:
    """ZeroPad1d/2d/3d: ConstantPad with value 0.0, printed as the padding alone."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    pass
