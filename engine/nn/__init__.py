"""agrad.nn: the parts of torch.nn that work on plain tensors (`agrad.nn.utils`)."""
from . import functional, utils

__all__ = ["functional", "utils"]
