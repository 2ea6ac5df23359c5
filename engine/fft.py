"""agrad.fft: PyTorch's torch.fft namespace. Each transform is the op library's fft_<name> op itself
(torch.fft.fft is torch._C._fft.fft_fft), so values, gradients and grad_fn names are the op's
(agrad.ops.spectral: composites over the primitives _fft_r2c, _fft_c2r and _fft_c2c); fftshift and
ifftshift likewise. fftfreq and rfftfreq are factories, as ATen's fft_fftfreq: the sample
frequencies of an n-point transform, computed in the result's dtype."""
from __future__ import annotations

import numpy as np

from . import creation, dtypes
from .errors import DtypeError, DtypeNotImplementedError
from .messages import scalar_type_name
from .ops import fft_fft as fft
from .ops import fft_fft2 as fft2
from .ops import fft_fftn as fftn
from .ops import fft_fftshift as fftshift
from .ops import fft_hfft as hfft
from .ops import fft_hfft2 as hfft2
from .ops import fft_hfftn as hfftn
from .ops import fft_ifft as ifft
from .ops import fft_ifft2 as ifft2
from .ops import fft_ifftn as ifftn
from .ops import fft_ifftshift as ifftshift
from .ops import fft_ihfft as ihfft
from .ops import fft_ihfft2 as ihfft2
from .ops import fft_ihfftn as ihfftn
from .ops import fft_irfft as irfft
from .ops import fft_irfft2 as irfft2
from .ops import fft_irfftn as irfftn
from .ops import fft_rfft as rfft
from .ops import fft_rfft2 as rfft2
from .ops import fft_rfftn as rfftn

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(name, n, d, count, dtype, device, requires_grad, negative_half):
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise DtypeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:        # (ATen makes them with arange, which has no complex kernel)
        raise DtypeNotImplementedError(f"\"arange_cpu\" not implemented for '{scalar_type_name(dtype.np)}'")
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    k = np.arange(count)
    if negative_half:
        k[(n + 1) // 2:] -= n
    with np.errstate(divide="ignore", invalid="ignore"):
        # ATen's result.mul_(1.0 / (n * d)): the factor in double, the product in the result's dtype
        scale = np.float64(1.0) / (np.float64(n) * np.float64(d))
        values = k.astype(dtype.np) * dtype.np.type(scale)
    return creation.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point fft, d apart: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    return _frequencies("fftfreq", n, d, n, dtype, device, requires_grad, True)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point rfft, d apart: [0, 1, ..., n // 2] / (d n)."""
    return _frequencies("rfftfreq", n, d, n // 2 + 1, dtype, device, requires_grad, False)
