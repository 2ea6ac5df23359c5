"""The CPU backend: NumPy."""
from __future__ import annotations

import numpy as np

from .._device import Backend
from ..dispatch_keys import DispatchKey


class CPUBackend(Backend):
    type = "cpu"
    key = int(DispatchKey.CPU)
    xp = np

    def check_device(self, dev):
        if dev.index not in (None, 0):
            from .._device import DeviceUnavailableError
            raise DeviceUnavailableError(f"invalid device {dev}: cpu has no index {dev.index}")

    def asarray(self, data, np_dtype, dev):
        return np.asarray(data, dtype=np_dtype)

    def full(self, shape, fill_value, np_dtype, dev):
        return np.full(shape, fill_value, dtype=np_dtype)

    def to_numpy(self, array):
        return array
