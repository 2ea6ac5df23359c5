"""agrad.utils, as torch.utils: tools built on the engine that are not part of it.

    from agrad.utils.checkpoint import checkpoint     # activation checkpointing

Submodules load on first use (`agrad.utils.checkpoint` imports it), as agrad's own do, so that
importing agrad.utils costs nothing a program does not use.
"""
import importlib
import pkgutil

_SUBMODULES = {m.name for m in pkgutil.iter_modules(__path__)}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
