"""One file per backend; registering them here makes their device types usable."""
from ..device import register_backend
from .cpu import CPUBackend
from .cuda import CUDABackend
from .meta import MetaArray, MetaBackend

register_backend(CPUBackend())
register_backend(MetaBackend())
register_backend(CUDABackend())

__all__ = ["CPUBackend", "CUDABackend", "MetaBackend", "MetaArray"]
