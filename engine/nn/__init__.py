"""agrad.nn: torch.nn as a PyTorch user writes it — `Module` and `Parameter` (with the lazy
modules' `UninitializedParameter` and `UninitializedBuffer`), the common layers (`Linear`,
`Conv2d`, `Embedding`, `LayerNorm`, `BatchNorm2d`, `Dropout`, `Sequential` …), activations and
losses as modules, `agrad.nn.init`, `agrad.nn.functional`, `agrad.nn.utils`, `agrad.nn.grad` (the
convolutions' gradients) and `agrad.nn.attention` (scaled_dot_product_attention's backends and biases);
`Buffer` marks a tensor that a Module registers as a buffer; `DataParallel` (agrad.nn.parallel) calls its
module on one device."""
from . import attention, functional, grad, init, parallel, utils
from .modules import *  # noqa: F401,F403 — every layer is agrad.nn.<Layer>
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = (["attention", "functional", "grad", "init", "parallel", "utils", "DataParallel", "Parameter", "Buffer", "UninitializedParameter",
            "UninitializedBuffer", "factory_kwargs"] + list(_modules_all))


def factory_kwargs(kwargs):
    """torch.nn.factory_kwargs: the `device`, `dtype` and `memory_format` of a module's **kwargs as one dict
    for a creation function (`agrad.empty(10, **factory_kwargs(kwargs))`), with those given in a nested
    `factory_kwargs` dict; any other key is a TypeError, and one given both ways too."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))     # (the caller's dicts are left as they are)
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
