"""Devices and the backends that serve them.

A backend is one file (backends/cpu.py, backends/cuda.py, backends/meta.py): the
array module its kernels call (and its special functions), its dispatch key, and
how arrays cross to the host.
"""
from __future__ import annotations

import enum
import threading

__all__ = ["device", "Backend", "register_backend", "get_backend", "DeviceUnavailableError", "DLDeviceType"]


class DeviceUnavailableError(RuntimeError):
    """The device named is not usable on this machine (no CuPy, no GPU, no such index)."""


class device:
    """An interned device: `device("cuda:1") is device("cuda", 1)`."""
    __slots__ = ("type", "index", "_str", "__weakref__")
    _interned: dict = {}
    _lock = threading.Lock()

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        key = (type_or_str, index)
        d = cls._interned.get(key)
        if d is not None:
            return d
        text = str(type_or_str)
        if ":" in text:
            if index is not None:
                raise ValueError(f"device {text!r} already has an index")
            text, _, idx = text.partition(":")
            if not idx.isdigit():
                raise ValueError(f"invalid device string {type_or_str!r}: the index must be a number")
            index = int(idx)
        if text not in _BACKENDS and text not in _KNOWN_TYPES:
            raise ValueError(f"unknown device type {text!r}; expected one of cpu, cuda, dask, meta")
        if text == "cuda" and index is None:
            index = 0
        with cls._lock:
            canonical = cls._interned.get((text, index))
            if canonical is None:
                canonical = object.__new__(cls)
                canonical.type, canonical.index = text, index
                canonical._str = text if index is None else f"{text}:{index}"
                cls._interned[(text, index)] = canonical
            cls._interned[key] = canonical
        return canonical

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self._str

    def __reduce__(self):
        return (device, (self._str,))

    @property
    def backend(self) -> "Backend":
        return get_backend(self.type)


device.__module__ = "agrad"


class Backend:
    """What agrad needs of an array library: a module with the array API, and transfers.

    `key` is the DispatchKey bit of tensors on this backend; `uses_worker_thread`
    says whether the engine runs this device's backward work on its own thread (GPUs).
    """
    type: str = ""
    key: int = 0
    uses_worker_thread = False
    lazy = False        # arrays are task graphs, computed when read: read what you need at once (`to_numpy_all`)

    @property
    def xp(self):
        raise NotImplementedError

    @property
    def special(self):
        """The special-function namespace for `xp`'s arrays (scipy.special's API: erf, erfinv, …)."""
        raise NotImplementedError

    def check_device(self, dev: device) -> None:
        """Raise DeviceUnavailableError when `dev` cannot be used here."""

    def asarray(self, data, np_dtype, dev: device):
        """`data` (a NumPy array, a nested list, or a number) as this backend's array."""
        raise NotImplementedError

    def full(self, shape, fill_value, np_dtype, dev: device):
        """A new array of `shape` filled with `fill_value` (zeros, ones, implicit root gradients)."""
        return self.asarray(self.xp.full(shape, fill_value, dtype=np_dtype), np_dtype, dev)

    def to_numpy(self, array):
        raise NotImplementedError

    def to_numpy_all(self, arrays: list) -> list:
        """Each array of `arrays` on the host; a lazy backend computes them together, once."""
        return [self.to_numpy(a) for a in arrays]

    def refusal(self, op_name: str) -> str | None:
        """Why this backend cannot run op `op_name` (its kernel then refuses, and a graph that calls
        it is refused before it runs), or None: it runs it as the CPU does."""
        return None


_KNOWN_TYPES = {"cpu", "cuda", "dask", "meta"}
_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend | None:
    """Install `backend` for its device type and return the one it replaces (tests use a stand-in GPU)."""
    previous = _BACKENDS.get(backend.type)
    _BACKENDS[backend.type] = backend
    _KNOWN_TYPES.add(backend.type)
    return previous


def get_backend(type_: str) -> Backend:
    try:
        return _BACKENDS[type_]
    except KeyError:
        raise DeviceUnavailableError(f"no backend is registered for device type {type_!r}") from None


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (torch.utils.dlpack.DLDeviceType): what Tensor.__dlpack_device__ names a
    device by."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
