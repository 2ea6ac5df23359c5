"""Whether CuPy finds a real GPU here: the tests that run on one are skipped where it does not
(CI has none; the stand-in backend, tests/standin_cuda.py, covers the CUDA code paths everywhere)."""
from __future__ import annotations

import functools
import importlib.util

import pytest


@functools.cache
def gpu_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:       # CuPy raises its own CUDARuntimeError without a driver
        return False


requires_gpu = pytest.mark.skipif(not gpu_available(), reason="CuPy with a GPU is not available here")
