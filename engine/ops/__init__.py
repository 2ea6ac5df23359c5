"""The op library, a table of contents named after ATen's own files. Every op is declared
once (see registry.defop) in the family file its content belongs to:

    pointwise/  binary, unary, special, logical, activation
    reduce/     arithmetic, moments, selection, cumulative
    shape/      view, diagonal, rearrange, join, pad, indexing, advanced_indexing
    nn/         convolution, pooling, normalization, loss, distance, softmax, dropout,
                attention, upsample, pixel_shuffle, im2col, grid_sampler, multi_margin,
                ctc, embedding_bag, rnn
    linalg, blas, determinants, factories, conversion, distributions, autograd,
    spectral (torch.fft's transforms), short_time_fourier (stft, istft)

A family is imported when one of its ops is first asked for — `agrad.ops.<op>`, the
dispatcher's `get_op` (a graph's ops, `dispatcher.ops.<op>`), a Tensor method — and its
import registers its ops with the dispatcher (contents.py says which family declares which
op), so a program pays for the families it uses; `all_ops()` imports them all. Every family
module is found by walking the package, so a new one is added without touching this file;
`_`-named modules are helpers (`_common`, the in-place Tensor methods, `_tensor_methods`),
as are `registry` (defop), `samples`, `formulas` (each op's derivative formulas read back
as text) and `contents`. A family's `__all__` names plain functions it exports beside its
ops (advanced_indexing's getitem). Loading ends by binding Tensor's methods
(`_tensor_methods`), each resolved on its first use."""
from __future__ import annotations

import importlib
import pkgutil

from ._tensor_methods import bind as _bind_tensor_methods
from .contents import FAMILIES
from .registry import defop, get_info, registered

_NOT_FAMILIES = {"registry", "samples", "formulas", "contents"}
# operator namespaces besides aten whose ops are registered where their concept lives, on first use
_NAMESPACE_MODULES = {"profiler": "agrad.autograd.profiler_ops"}

_FAMILY_OF: dict = {}       # op or exported function -> the family module that declares it
_HELPERS: set = set()
for _family, (_ops, _helpers) in FAMILIES.items():
    _FAMILY_OF.update(dict.fromkeys(_ops + _helpers, _family))
    _HELPERS.update(_helpers)
_all_loaded = False


def family_modules() -> list[str]:
    """Every family module's name below agrad.ops (`pointwise.binary`), found by walking the package."""
    # NOTE: no builtin here that an op shadows once it is this module's attribute (`any`, `sum`)
    names = []
    for info in pkgutil.walk_packages(__path__, f"{__name__}."):
        name = info.name[len(__name__) + 1:]
        if not info.ispkg and name.split(".")[0] not in _NOT_FAMILIES and not ("." + name).count("._"):
            names.append(name)
    names.sort()
    return names


def load(op: str | None = None) -> None:
    """Register op `op` by importing the family that declares it; with no `op`, or one the
    table of contents does not list, every family (an unlisted op may be a new one)."""
    global _all_loaded
    family = _FAMILY_OF.get(op) if op is not None else None
    ns = op.partition("::")[0] if op is not None and "::" in op else None
    if ns in _NAMESPACE_MODULES:
        importlib.import_module(_NAMESPACE_MODULES[ns])
    elif family is not None:
        importlib.import_module(f"{__name__}.{family}")
    elif not _all_loaded and (op is None or "::" not in op):      # `ns::op` comes from agrad.library
        for family in family_modules():
            importlib.import_module(f"{__name__}.{family}")
        _all_loaded = True


def __getattr__(name):
    """`agrad.ops.<op>`: the op's function, its family imported on first use; `agrad.ops.<ns>`
    (`aten`, `profiler`, a namespace of agrad.library's): its ops as PyTorch's OpOverloadPackets."""
    family = _FAMILY_OF.get(name)
    if family is None:
        from ..dispatcher import dispatcher
        if not name.startswith("__") and dispatcher.has_namespace(name):
            space = globals()[name] = dispatcher.namespace(name)
            return space
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{family}")
    if name in _HELPERS:
        value = getattr(module, name)
    else:
        from ..dispatcher import get_op
        value = get_op(name).function
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_FAMILY_OF))


__all__ = sorted(name for name in _FAMILY_OF if name not in _HELPERS and "::" not in name) + \
    sorted(_HELPERS) + ["defop", "registered", "get_info"]
_bind_tensor_methods()
