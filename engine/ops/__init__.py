"""The op library, a table of contents named after ATen's own files. Every op is declared
once (see registry.defop) in the family file its content belongs to:

    pointwise/  binary, unary, special, logical, activation
    reduce/     arithmetic, moments, selection, cumulative
    shape/      view, diagonal, rearrange, join, pad, indexing, advanced_indexing
    nn/         convolution, pooling, normalization, loss, distance, softmax, dropout,
                attention, upsample
    linalg, factories, conversion, distributions, autograd

Importing the family modules registers their ops with the dispatcher, and this namespace
exposes each op's function, as `agrad.<op>` does. Every family module is found by walking
the package, so a new one is added without touching this file; `_`-named modules are
helpers (`_common`, the in-place Tensor methods, `_tensor_methods`), as are `registry`
(defop), `samples` and `formulas` (each op's derivative formulas read back as text).
Loading ends by binding Tensor's methods (`_tensor_methods`)."""
from __future__ import annotations

import importlib
import pkgutil

from ..dispatcher import all_ops
from . import conversion, linalg  # noqa: F401 — the core families first, in order
from ._tensor_methods import bind as _bind_tensor_methods
from .pointwise import binary, unary  # noqa: F401
from .reduce import arithmetic  # noqa: F401
from .registry import defop, get_info, registered
from .shape import view  # noqa: F401

_NOT_FAMILIES = {f"{__name__}.{name}" for name in ("registry", "samples", "formulas")}

# Every other module in this package and its subpackages is an op family (added without
# touching this file); a family's `__all__` names plain functions it exports beside its ops
# (advanced_indexing's getitem).
_helpers = []
for _info in sorted(pkgutil.walk_packages(__path__, f"{__name__}."), key=lambda m: m.name):
    _parts = _info.name.split(".")[2:]
    if _info.ispkg or _info.name in _NOT_FAMILIES or any(p.startswith("_") for p in _parts):
        continue
    _module = importlib.import_module(_info.name)
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
