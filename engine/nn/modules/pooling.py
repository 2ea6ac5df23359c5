"""torch.nn's pooling layers (torch/nn/modules/pooling.py): MaxPool1d/2d/3d, MaxUnpool1d/2d/3d,
AvgPool1d/2d/3d, LPPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d and
FractionalMaxPool2d/3d. Options only, each forward one F call; the stride defaults to the kernel
size (LPPool's stays None). A fractional pool's `_random_samples`, when given, is a buffer.
The 1-d average and the unpooling layers keep their sizes as tuples, the others as given."""
from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    _function = ""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    _function = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    _function = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    _function = "max_pool3d"


class _MaxUnpoolNd(Module):
    _function = ""
    _ntuple = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = self._ntuple(kernel_size)
        self.stride = self._ntuple(stride if (stride is not None) else kernel_size)
        self.padding = self._ntuple(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._function)(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _function = "max_unpool1d"
    _ntuple = staticmethod(_single)


class MaxUnpool2d(_MaxUnpoolNd):
    _function = "max_unpool2d"
    _ntuple = staticmethod(_pair)


class MaxUnpool3d(_MaxUnpoolNd):
    _function = "max_unpool3d"
    _ntuple = staticmethod(_triple)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPool(_AvgPoolNd):
    """AvgPool2d and AvgPool3d: one constructor (PyTorch writes it twice), with divisor_override."""
    _function = ""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                          self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPool):
    _function = "avg_pool2d"


class AvgPool3d(_AvgPool):
    _function = "avg_pool3d"

    def __setstate__(self, d):
        self.__dict__.update(d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


class _LPPoolNd(Module):
    _function = ""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, float(self.norm_type), self.kernel_size, self.stride,
                                          self.ceil_mode)

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    _function = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    _function = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    _function = "lp_pool3d"


class _AdaptiveMaxPoolNd(Module):
    _function = ""

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._function)(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _function = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _function = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _function = "adaptive_max_pool3d"


class _AdaptiveAvgPoolNd(Module):
    _function = ""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._function)(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _function = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _function = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _function = "adaptive_avg_pool3d"


class _FractionalMaxPoolNd(Module):
    """FractionalMaxPool2d and 3d: PyTorch writes the constructor once per class; the 3-d one alone
    refuses a kernel_size that is not positive."""
    _function = ""
    _ntuple = None
    _dims = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        if self._dims == 3 and (
                (isinstance(kernel_size, int) and kernel_size <= 0)
                or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = self._ntuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._ntuple(output_size) if output_size is not None else None
        self.output_ratio = self._ntuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{self._dims}d requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            if not all(0 < r < 1 for r in self.output_ratio):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.output_size, self.output_ratio,
                                          self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _function = "fractional_max_pool2d"
    _ntuple = staticmethod(_pair)
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _function = "fractional_max_pool3d"
    _ntuple = staticmethod(_triple)
    _dims = 3
