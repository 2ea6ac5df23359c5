"""The op library. Every op is declared once (see registry.defop); importing the family
modules registers them with the dispatcher, and this namespace exposes each op's function,
as `agrad.<op>` does. Loading ends by binding Tensor's methods (`_tensor_methods`)."""
from __future__ import annotations

import importlib
import pkgutil

from ..dispatcher import all_ops
from . import conversion, linalg, pointwise, reduction, shape  # noqa: F401 — the core families, in order
from ._tensor_methods import bind as _bind_tensor_methods
from .registry import defop, get_info, registered

_CORE = {"registry", "samples", "conversion", "linalg", "pointwise", "reduction", "shape"}

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
_bind_tensor_methods()          # last: every family has registered its ops
