"""agrad.cuda: whether CUDA tensors can be made here, as torch.cuda.is_available() says.

Asking imports CuPy (through the CUDA backend) only when called, never when agrad is
imported; without CuPy or without a GPU the answer is False, never an error.

`agrad.cuda.amp` (torch.cuda.amp's deprecated spellings of agrad.amp) is a submodule built on the
op library, loaded on its first use, as agrad's own submodules are (engine/__init__.py).
"""
from __future__ import annotations

import importlib

from .._device import DeviceUnavailableError, device, get_backend

__all__ = ["is_available"]


def is_available() -> bool:
    # NOTE: the backends register themselves when imported: asked before any tensor was made (a
    # profiler's CUDA activity, at its start), the answer would otherwise be False on a GPU too
    from .. import backends  # noqa: F401
    try:
        get_backend("cuda").check_device(device("cuda", 0))
    except DeviceUnavailableError:
        return False
    return True


def __getattr__(name):
    if name == "amp":
        # (an edge up, named in tests/test_layering.py: torch.cuda.amp is an attribute of its package, and is
        # agrad.amp's old spelling, which sits above the backends)
        return importlib.import_module("agrad.cuda.amp")   # (`from . import amp` would ask this function)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
