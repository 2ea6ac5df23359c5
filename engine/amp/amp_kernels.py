"""The two ops GradScaler is built on, PyTorch's ATen/native/AmpKernels.cpp (cpu/AmpGradScalerKernels.cpp), with its
checks and messages: torch._amp_foreach_non_finite_check_and_unscale_ and torch._amp_update_scale_. Both write their
tensors in place and record no graph (GradScaler calls them under no_grad)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import DtypeNotImplementedError
from ..grad_mode import no_grad
from ..messages import scalar_type_name

__all__ = ["_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale) -> None:
    """Multiplies each tensor of `self` by `inv_scale` in place; if any element of any of them is inf or NaN,
    sets `found_inf` (a 1-element float32 tensor) to 1.0."""
    if inv_scale.numel() != 1:
        raise RuntimeError("inv_scale must be a 1-element tensor.")
    if found_inf.numel() != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if inv_scale.dtype is not dtypes.float32:
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf.dtype is not dtypes.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    with no_grad():
        for t in self:
            if not t.is_floating_point():
                raise DtypeNotImplementedError(f"\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented "
                                               f"for '{scalar_type_name(t.dtype.np)}'")
            if not bool(t.isfinite().all()):
                found_inf.fill_(1.0)
            t.mul_(inv_scale.to(t.dtype))


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor: float, scale_backoff_factor: float,
                       growth_interval: int):
    """GradScaler's scale update, in place on `self` (the scale) and `growth_tracker`: after a step with an inf or
    NaN the scale is multiplied by the backoff factor and the tracker reset; after `growth_interval` steps in a row
    without, by the growth factor (where that stays finite) and the tracker reset; else the tracker counts one more.
    Returns `self`."""
    if growth_tracker.numel() != 1:
        raise RuntimeError("growth_tracker must be a 1-element tensor.")
    if self.numel() != 1:
        raise RuntimeError("current_scale must be a 1-element tensor.")
    if found_inf.numel() != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if growth_tracker.dtype is not dtypes.int32:
        raise RuntimeError("growth_tracker must be an int tensor.")
    if self.dtype is not dtypes.float32:
        raise RuntimeError("current_scale must be a float tensor.")
    if found_inf.dtype is not dtypes.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    with no_grad():
        if float(found_inf.item()):
            self.mul_(scale_backoff_factor)
            growth_tracker.fill_(0)
        else:
            successful = int(growth_tracker.item()) + 1
            if successful == growth_interval:
                # the product in float32, as the kernel computes it
                with np.errstate(over="ignore"):
                    new_scale = np.float32(self.item()) * np.float32(scale_growth_factor)
                if np.isfinite(new_scale):
                    self.fill_(float(new_scale))
                growth_tracker.fill_(0)
            else:
                growth_tracker.fill_(successful)
    return self

