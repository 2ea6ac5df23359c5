"""agrad.cuda.amp, torch.cuda.amp: the spellings of agrad.amp that PyTorch keeps for old code, each with its
deprecation warning (torch/cuda/amp/autocast_mode.py, grad_scaler.py, common.py)."""
from __future__ import annotations

import functools
import warnings

from .. import dtypes
from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler
from ..amp.grad_scaler import OptState  # noqa: F401 — torch keeps this import for old code
from . import is_available

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    return not is_available()


class autocast(_autocast_mode.autocast):
    """See agrad.autocast. ``agrad.cuda.amp.autocast(args...)`` is deprecated. Please use
    ``agrad.amp.autocast("cuda", args...)`` instead."""

    def __init__(self, enabled: bool = True, dtype=dtypes.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``agrad.cuda.amp.custom_fwd(args...)`` is deprecated. Please use
    ``agrad.amp.custom_fwd(args..., device_type='cuda')`` instead."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``agrad.cuda.amp.custom_bwd(args...)`` is deprecated. Please use
    ``agrad.amp.custom_bwd(args..., device_type='cuda')`` instead."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use `torch.amp.custom_bwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)


class GradScaler(_grad_scaler.GradScaler):
    """See agrad.amp.GradScaler. ``agrad.cuda.amp.GradScaler(args...)`` is deprecated. Please use
    ``agrad.amp.GradScaler("cuda", args...)`` instead."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
