"""The CPU backend: NumPy, and SciPy's special functions (imported on first use)."""
from __future__ import annotations

import numpy as np

from .._device import Backend
from ..dispatch_keys import DispatchKey


class CPUBackend(Backend):
    type = "cpu"
    key = int(DispatchKey.CPU)
    xp = np
    _special = None

    @property
    def special(self):
        # NOTE: imported on first use, so that `import agrad` does not pay for SciPy
        sp = self._special
        if sp is None:
            import scipy.special as sp
            CPUBackend._special = sp
        return sp

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
