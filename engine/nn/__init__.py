"""agrad.nn: the parts of torch.nn that work on plain tensors (`agrad.nn.utils`)."""
from . import utils

__all__ = ["utils"]
