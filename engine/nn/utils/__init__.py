"""agrad.nn.utils: gradient clipping, as torch.nn.utils."""
from .clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
