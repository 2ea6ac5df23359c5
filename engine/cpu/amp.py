"""agrad.cpu.amp, torch.cpu.amp: the spellings of agrad.amp that PyTorch keeps for old code, each with its
deprecation warning (torch/cpu/amp/autocast_mode.py, grad_scaler.py). torch.cpu.amp.autocast's default dtype is
bfloat16, which agrad has not: pass dtype=agrad.float16 (the error says so)."""
from __future__ import annotations

import warnings

from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler
from ..amp.state import ERR_BFLOAT16

__all__ = ["autocast", "GradScaler"]

# torch's default dtype here, bfloat16: not a dtype agrad has, so autocast refuses it (amp/state.py's ERR_BFLOAT16)
_BFLOAT16 = None


class autocast(_autocast_mode.autocast):
    """See agrad.autocast. ``agrad.cpu.amp.autocast(args...)`` is deprecated. Please use
    ``agrad.amp.autocast("cpu", args...)`` instead."""

    def __init__(self, enabled: bool = True, dtype=_BFLOAT16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        if dtype is None and enabled:
            raise RuntimeError(ERR_BFLOAT16)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """See agrad.amp.GradScaler. ``agrad.cpu.amp.GradScaler(args...)`` is deprecated. Please use
    ``agrad.amp.GradScaler("cpu", args...)`` instead."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
