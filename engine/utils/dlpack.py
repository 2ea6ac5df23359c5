"""agrad.utils.dlpack, as torch.utils.dlpack (PyTorch 2.13's): tensors to and from DLPack, the protocol
array libraries share memory through. A tensor's capsule is its array's own (NumPy's on the CPU, CuPy's
on CUDA), and from_dlpack builds on the array library that the producer's device belongs to, so the
memory stays shared both ways; `device=` and `copy=` are from_dlpack's, as PyTorch's.
"""
from __future__ import annotations

from .. import creation
from .._device import DLDeviceType
from .._device import device as Device
from .._tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of `tensor` (unversioned, as torch.to_dlpack's; unlike Tensor.__dlpack__ it takes a
    tensor that requires grad)."""
    return tensor._dlpack()


class _Capsule:
    """An old-style capsule made a producer, for the array library's from_dlpack (which asks the protocol)."""

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _writable(array):
    """The same memory, writable: NumPy marks what it reads from an old-style capsule read-only (DLPack
    before 1.0 has no read-only flag), where PyTorch's tensor from one is writable. The alias keeps the
    array, and through it the capsule's memory, alive."""
    import ctypes

    import numpy as np

    if array.size == 0:
        return np.empty(array.shape, array.dtype)
    low, high = np.lib.array_utils.byte_bounds(array)
    memory = (ctypes.c_char * (high - low)).from_address(low)
    memory.owner = array
    return np.ndarray(array.shape, array.dtype, buffer=memory, offset=array.ctypes.data - low,
                      strides=array.strides)


def from_dlpack(ext_tensor, *, device=None, copy=None) -> Tensor:
    """A tensor sharing memory with `ext_tensor`: an object with __dlpack__ (a NumPy or CuPy array, an agrad
    or torch tensor) or a DLPack capsule (consumed: a capsule makes one tensor). `device` moves it (a
    copy), `copy=True` copies it. NOTE: a bare capsule is read as a CPU one (PyTorch reads the device
    inside it; the array libraries take it through the protocol, which names the device beside it)."""
    if hasattr(ext_tensor, "__dlpack__"):
        source = DLDeviceType(ext_tensor.__dlpack_device__()[0])
        target = Device(device) if isinstance(device, str) else device
        if target is not None and not isinstance(target, Device):
            raise AssertionError(f"from_dlpack: unsupported device type: {type(device)}")
        source_type = "cuda" if source in (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM) else "cpu"
        cross_device = target is not None and target.type != source_type
        if cross_device and copy is False:
            raise ValueError(f"cannot move DLPack tensor from device {ext_tensor.__dlpack_device__()} to "
                             f"{target} without copying. Set copy=None or copy=True.")
        producer = ext_tensor
    else:
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
        source_type, target, cross_device = "cpu", None, False
        producer = _Capsule(ext_tensor, (DLDeviceType.kDLCPU, 0))
    dev = Device(source_type)
    xp = dev.backend.xp
    try:
        array = xp.from_dlpack(producer)
    except (TypeError, ValueError, RuntimeError) as exc:
        if producer is ext_tensor:
            raise
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.") from exc
    if producer is not ext_tensor and source_type == "cpu" and not array.flags.writeable:
        array = _writable(array)
    tensor = creation._finish(array, dev, dev.backend, False)
    if cross_device:
        return tensor.to(target)
    return tensor.clone() if copy else tensor
