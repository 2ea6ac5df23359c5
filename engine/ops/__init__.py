"""The op library. Every op is declared once (see registry.defop); importing the
family modules registers them with the dispatcher, and this namespace exposes each
op's function, as `agrad.<op>` does."""
from __future__ import annotations

import importlib
import pkgutil

from ..autograd.engine import _bind_ops as _bind_engine_ops
from .._tensor import _bind_ops as _bind_tensor_ops
from ..dispatcher import all_ops
from . import conversion, linalg, pointwise, reduction, shape  # noqa: F401 — the core families, in order
from .registry import defop, get_info, registered

_CORE = {"registry", "shapes", "samples", "conversion", "linalg", "pointwise", "reduction", "shape"}

# Every other module in this package is an op family (added without touching this file);
# a family's `__all__` names plain functions it exports beside its ops (indexing's getitem).
_helpers = []
for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod not in _CORE and not _mod.startswith("_"):
        _module = importlib.import_module(f"{__name__}.{_mod}")
        for _name in getattr(_module, "__all__", ()):
            globals()[_name] = getattr(_module, _name)
            _helpers.append(_name)


def _export() -> list[str]:
    names = []
    for entry in all_ops():
        name = entry.name.split("::")[-1]
        if "::" in entry.name:
            continue
        globals()[name] = entry.function
        names.append(name)
    return names


__all__ = _export() + _helpers + ["defop", "registered", "get_info"]


def _bind_methods() -> None:
    """Tensor methods for every op whose first argument is `self`, as PyTorch's method variants."""
    from .._tensor import Tensor
    for entry in all_ops():
        args = entry.schema.arguments
        name = entry.name
        if "::" in name or not args or args[0].name != "self" or hasattr(Tensor, name):
            continue
        rest = [a for a in args[1:] if not a.has_default]
        positional = [a for a in args[1:] if not a.kwarg_only]
        # varargs sizes only where the int list is the one positional argument: t.roll(1, 0) is
        # shifts=1, dims=0 and t.logsumexp(0, True) is keepdim=True, as in PyTorch
        if (len(rest) == 1 and rest[0] is args[1] and args[1].is_list and args[1].base == "int"
                and len(positional) == 1):
            setattr(Tensor, name, _sizes_method(entry.function))    # t.reshape(2, 3) and t.reshape([2, 3])
        else:
            setattr(Tensor, name, entry.function)


def _sizes_method(fn):
    def method(self, *sizes, **kwargs):
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = sizes[0]
        return fn(self, list(sizes), **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


# `x * y` calls the op's function itself: the Python method that would forward to it is one
# frame per op that a chain of small ops would feel (the reflected ones swap their arguments)
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
              "__neg__": "neg", "__pow__": "pow"}


def _bind_operators() -> None:
    from .._tensor import Tensor
    for method, op in _OPERATORS.items():
        setattr(Tensor, method, globals()[op])


_bind_methods()
_bind_operators()
importlib.import_module(f"{__name__}.bitcast").bind_view_method()           # t.view(dtype) beside t.view(sizes)
importlib.import_module(f"{__name__}.inplace").bind_inplace_methods()    # Tensor.add_ …, x[i] = v
importlib.import_module(f"{__name__}.inplace_views").bind_inplace_view_methods()   # Tensor.t_, squeeze_ …
importlib.import_module(f"{__name__}.random_inplace").bind_extras_methods()   # Tensor.uniform_ …, allclose
_bind_tensor_ops(__import__(__name__, fromlist=["_"]))
_bind_engine_ops(__import__(__name__, fromlist=["_"]))
