"""A stand-in CUDA backend: NumPy arrays behind the CUDA dispatch key, so the GPU
code paths (the CUDA kernels, device checks, transfers, the engine's per-device
worker thread) run on a machine without a GPU."""
import numpy as np

from agrad.backends import Backend, DeviceUnavailableError
from agrad.dispatcher import DispatchKey


class StandInCUDA(Backend):
    type = "cuda"
    key = int(DispatchKey.CUDA)
    uses_worker_thread = True
    xp = np
    count = 2

    @property
    def special(self):
        import scipy.special
        return scipy.special

    def check_device(self, dev):
        if dev.index >= self.count:
            raise DeviceUnavailableError(f"CUDA error: invalid device ordinal {dev.index}")

    def asarray(self, data, np_dtype, dev):
        return np.array(data, dtype=np_dtype)        # a copy: the "device" owns its memory

    def full(self, shape, fill_value, np_dtype, dev):
        return np.full(shape, fill_value, dtype=np_dtype)

    def to_numpy(self, array):
        return np.array(array)
