"""agrad.nn: the parts of torch.nn that work on plain tensors (`agrad.nn.utils`, `agrad.nn.functional`,
and parameter-free layers such as `agrad.nn.Softmax(dim=1)`)."""
from . import functional, utils
from .modules import CrossEntropyLoss, LogSoftmax, ReLU, Softmax

__all__ = ["functional", "utils", "CrossEntropyLoss", "LogSoftmax", "ReLU", "Softmax"]
