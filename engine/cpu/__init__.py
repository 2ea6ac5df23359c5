"""agrad.cpu, torch.cpu: the CPU device's namespace. Its `amp` (torch.cpu.amp's deprecated spellings of agrad.amp)
is a submodule built on the op library, loaded on its first use, as agrad.cuda.amp is."""
from __future__ import annotations

import importlib

__all__ = ["is_available"]


def is_available() -> bool:
    """Always True, as torch.cpu.is_available()."""
    return True


def __getattr__(name):
    if name == "amp":
        # (an edge up, named in tests/test_layering.py: torch.cpu.amp is an attribute of its package, and is
        # agrad.amp's old spelling, which sits above the backends)
        return importlib.import_module("agrad.cpu.amp")   # (`from . import amp` would ask this function)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
