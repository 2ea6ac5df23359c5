"""agrad.amp, torch.amp: automatic mixed precision. `autocast` regions run each op in the dtype its list picks
(autocast_mode.py, the Autocast dispatch key's fallback in autocast_kernel.py, the lists in cast_policies.py);
`GradScaler` scales the loss so that float16 gradients keep their small values (grad_scaler.py)."""
from . import autocast_kernel  # noqa: F401 — registers the Autocast key's fallback
from .autocast_mode import _cast, autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
