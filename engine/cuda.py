"""agrad.cuda: whether CUDA tensors can be made here, as torch.cuda.is_available() says.

Asking imports CuPy (through the CUDA backend) only when called, never when agrad is
imported; without CuPy or without a GPU the answer is False, never an error.
"""
from __future__ import annotations

from ._device import DeviceUnavailableError, device, get_backend

__all__ = ["is_available"]


def is_available() -> bool:
    # NOTE: the backends register themselves when imported: asked before any tensor was made (a
    # profiler's CUDA activity, at its start), the answer would otherwise be False on a GPU too
    from . import backends  # noqa: F401
    try:
        get_backend("cuda").check_device(device("cuda", 0))
    except DeviceUnavailableError:
        return False
    return True
