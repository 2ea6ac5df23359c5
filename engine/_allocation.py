"""An allocation refused before NumPy attempts it, with PyTorch's messages.

NumPy asked for an absurd array raises MemoryError (or ValueError, "array is too big") from
deep inside a kernel, after the work that led there; PyTorch's allocator raises a
RuntimeError naming the bytes. The factories and the sampling ops, whose sizes are numbers a
caller (or a hostile file) writes, ask here first: a negative size, a byte count beyond int64
(c10's computeStorageNbytes), or more bytes than this machine's memory (memory_bytes: the limit
the graph runner, the ONNX importer and the .npy readers refuse at too).
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from .errors import AllocationError

__all__ = ["check_allocation", "memory_bytes"]

_STORAGE_MAX = 2 ** 63 - 1          # c10's storage_max(): the most bytes a storage can number


@functools.cache
def memory_bytes() -> int | None:
    """This machine's physical memory (None where the system does not say); asked once (every factory
    call checks against it)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_allocation(shape, dtype) -> None:
    """Refuse an array of `shape` and NumPy `dtype` that could not be made, before making it."""
    shape = [int(s) for s in shape]
    for size in shape:          # (c10's check_size_nonnegative: the first negative size)
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {shape}")
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes > _STORAGE_MAX:
        raise AllocationError(f"Storage size calculation overflowed with sizes={shape}")
    memory = memory_bytes()
    if memory is not None and nbytes > memory:
        raise AllocationError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
                              f"Error code 12 (Cannot allocate memory)")
