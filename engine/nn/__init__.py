"""agrad.nn: torch.nn as a PyTorch user writes it — `Module` and `Parameter` (with the lazy
modules' `UninitializedParameter` and `UninitializedBuffer`), the common layers (`Linear`,
`Conv2d`, `Embedding`, `LayerNorm`, `BatchNorm2d`, `Dropout`, `Sequential` …), activations and
losses as modules, `agrad.nn.init`, `agrad.nn.functional` and `agrad.nn.utils`."""
from . import functional, init, utils
from .modules import *  # noqa: F401,F403 — every layer is agrad.nn.<Layer>
from .modules import __all__ as _modules_all
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter

__all__ = (["functional", "init", "utils", "Parameter", "UninitializedParameter", "UninitializedBuffer"]
           + list(_modules_all))
