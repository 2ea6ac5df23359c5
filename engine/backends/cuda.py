"""The CUDA backend: CuPy, imported only when a CUDA tensor is first made.

CuPy mirrors NumPy's array API (and cupyx.scipy.special SciPy's special functions), so
every op's one kernel serves both backends.
Backward work for a CUDA device runs on that device's own engine worker thread.
"""
from __future__ import annotations

import numpy as np

from .._device import Backend, DeviceUnavailableError
from ..dispatch_keys import DispatchKey

INSTALL_HINT = "install the GPU extra with: pip install 'agrad[cuda]'"


class CUDABackend(Backend):
    type = "cuda"
    key = int(DispatchKey.CUDA)
    uses_worker_thread = True

    def __init__(self):
        self._cupy = None
        self._special = None

    @property
    def xp(self):
        if self._cupy is None:
            self._cupy = self._import_cupy()
        return self._cupy

    @property
    def special(self):
        # cupyx.scipy.special ships with CuPy: the same functions as scipy.special, on CuPy arrays
        if self._special is None:
            self.xp             # noqa: B018 — raises DeviceUnavailableError without CuPy or a GPU
            import cupyx.scipy.special
            self._special = cupyx.scipy.special
        return self._special

    @staticmethod
    def _import_cupy():
        try:
            import cupy
        except ImportError:
            raise DeviceUnavailableError(f"CUDA is not available: CuPy is not installed; {INSTALL_HINT}") from None
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:    # CuPy raises its own CUDARuntimeError without a driver
            raise DeviceUnavailableError(f"CUDA is not available: CuPy found no usable GPU ({exc})") from None
        if count == 0:
            raise DeviceUnavailableError("CUDA is not available: CuPy is installed but this machine has no GPU")
        return cupy

    def device_count(self) -> int:
        return self.xp.cuda.runtime.getDeviceCount()

    def check_device(self, dev):
        count = self.device_count()
        if dev.index >= count:
            raise DeviceUnavailableError(f"CUDA error: invalid device ordinal {dev.index} (this machine has {count} GPU(s))")

    def asarray(self, data, np_dtype, dev):
        xp = self.xp
        with xp.cuda.Device(dev.index):
            return xp.asarray(data, dtype=np_dtype)

    def full(self, shape, fill_value, np_dtype, dev):
        xp = self.xp
        with xp.cuda.Device(dev.index):
            return xp.full(shape, fill_value, dtype=np_dtype)

    def to_numpy(self, array):
        return self.xp.asnumpy(array) if not isinstance(array, np.ndarray) else array


_segment_sums = None        # the kernel, compiled by CuPy on first use


def bincount_in_order(cupy, positions, weights, minlength: int):
    """NumPy's `bincount(positions, weights, minlength)` on CuPy arrays, summed as NumPy sums it:
    in float64, each position's weights added one after another in the order given, so equal
    inputs give equal bits, and the bits NumPy gives.

    CuPy's own bincount (and `add.at`) adds with atomics, in whatever order the threads run: a
    gradient's last bits vary from run to run, and a check that backward is reentrant fails (it did
    for an embedding's gradient on an H100). Here the weights are sorted by position (CuPy's sort is
    stable: a position's weights keep their order) and each position's run is summed by one thread."""
    global _segment_sums
    n = positions.size
    length = max(minlength, int(positions.max()) + 1) if n else minlength
    out = cupy.zeros(length, dtype=np.float64)
    if n == 0:
        return out
    order = cupy.argsort(positions.reshape(-1))
    keys = positions.reshape(-1)[order]
    values = weights.reshape(-1).astype(np.float64, copy=False)[order]
    first = cupy.ones(n, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = cupy.flatnonzero(first)
    ends = cupy.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = n
    if _segment_sums is None:
        _segment_sums = cupy.ElementwiseKernel(
            "int64 start, int64 end, raw float64 values", "float64 total",
            "double s = 0.0; for (long long k = start; k < end; ++k) s += values[k]; total = s;",
            "agrad_segment_sums")
    out[keys[starts]] = _segment_sums(starts, ends, values)
    return out
