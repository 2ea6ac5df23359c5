"""One file per backend; registering them here makes their device types usable.

A new device is one file with a `Backend` subclass and a `register_backend` call
(the tests register a stand-in GPU backend this way). dask.array (backends/dask.py) is imported
only when a dask tensor is first made."""
from .._device import Backend, DeviceUnavailableError, get_backend, register_backend
from .cpu import CPUBackend
from .cuda import CUDABackend
from .dask import DaskBackend
from .meta import MetaArray, MetaBackend

register_backend(CPUBackend())
register_backend(MetaBackend())
register_backend(CUDABackend())
register_backend(DaskBackend())

__all__ = ["Backend", "DeviceUnavailableError", "register_backend", "get_backend", "CPUBackend", "CUDABackend",
           "DaskBackend", "MetaBackend", "MetaArray"]
