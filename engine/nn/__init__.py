"""agrad.nn: torch.nn as a PyTorch user writes it — `Module` and `Parameter` (with the lazy
modules' `UninitializedParameter` and `UninitializedBuffer`), the common layers (`Linear`,
`Conv2d`, `Embedding`, `LayerNorm`, `BatchNorm2d`, `Dropout`, `Sequential` …), activations and
losses as modules, `agrad.nn.init`, `agrad.nn.functional`, `agrad.nn.utils`, `agrad.nn.grad` (the
convolutions' gradients) and `agrad.nn.attention` (scaled_dot_product_attention's backends and biases);
`Buffer` marks a tensor that a Module registers as a buffer."""
from . import attention, functional, grad, init, utils
from .modules import *  # noqa: F401,F403 — every layer is agrad.nn.<Layer>
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = (["attention", "functional", "grad", "init", "utils", "Parameter", "Buffer", "UninitializedParameter",
            "UninitializedBuffer"] + list(_modules_all))
