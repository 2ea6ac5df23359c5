"""Creating tensors: agrad.tensor and the factory functions."""
from __future__ import annotations

import numpy as np

from . import backends  # noqa: F401 — devices are usable once their backends are registered
from . import dtypes
from ._device import device as Device
from ._tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "arange", "eye",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn", "manual_seed"]

_CPU = None


def _resolve(dtype, device):
    dev = Device(device) if device is not None else _cpu()
    backend = dev.backend
    if dev.type != "cpu" and dev.type != "meta":
        backend.check_device(dev)
    np_dtype = None
    if dtype is not None:
        np_dtype = (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype))).np
    return dev, backend, np_dtype


def _cpu():
    global _CPU
    if _CPU is None:
        _CPU = Device("cpu")
    return _CPU


def _finish(array, dev, backend, requires_grad):
    t = Tensor._make(array, dev, backend.key)
    if requires_grad:
        t.requires_grad = True
    return t


def _infer_np_dtype(data) -> np.dtype:
    """PyTorch's inference: floats -> default dtype, ints -> int64, bools -> bool; arrays keep theirs."""
    if isinstance(data, np.ndarray):
        return dtypes.from_numpy(data.dtype).np
    arr = np.asarray(data)
    kind = arr.dtype.kind
    if kind == "f":
        return dtypes.get_default_dtype().np
    if kind in "iu":
        return np.dtype(np.int64)
    if kind == "b":
        return np.dtype(np.bool_)
    raise TypeError(f"cannot make a tensor from data of type {arr.dtype}")


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of `data` (a number, nested lists, a NumPy array or a Tensor)."""
    if isinstance(data, Tensor):
        data = data._host() if data._device.type != "meta" else data._data
    dev, backend, np_dtype = _resolve(dtype, device)
    if np_dtype is None:
        np_dtype = data.dtype if dev.type == "meta" and hasattr(data, "shape") else _infer_np_dtype(data)
    if dev.type == "cpu":
        array = np.array(data, dtype=np_dtype)      # always a copy, as torch.tensor
    else:
        array = backend.asarray(np.asarray(data, dtype=np_dtype) if dev.type != "meta" else data, np_dtype, dev)
    return _finish(array, dev, backend, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with `array`."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array, _cpu(), _cpu().backend.key)


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    return tuple(int(s) for s in size)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dev, backend, np_dtype = _resolve(dtype, device)
    if np_dtype is None:
        np_dtype = _infer_np_dtype(fill_value)
    return _finish(backend.full(_shape((size,)), fill_value, np_dtype, dev), dev, backend, requires_grad)


def _filled(value):
    def factory(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
        dev, backend, np_dtype = _resolve(dtype, device)
        np_dtype = np_dtype or dtypes.get_default_dtype().np
        return _finish(backend.full(_shape(size), value, np_dtype, dev), dev, backend, requires_grad)
    return factory


zeros = _filled(0)
ones = _filled(1)
empty = _filled(0)     # NOTE: filled anyway; uninitialised memory would make runs irreproducible
zeros.__name__, ones.__name__, empty.__name__ = "zeros", "ones", "empty"


def _like(factory_value):
    def like(t: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        return full(t.shape, factory_value, dtype=dtype or t.dtype, device=device or t.device,
                    requires_grad=requires_grad)
    return like


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)


def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    values = np.arange(start, end, step)
    if dtype is None:
        dtype = dtypes.get_default_dtype() if values.dtype.kind == "f" else dtypes.int64
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return tensor(np.eye(n, m), dtype=dtype or dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seed agrad's global generator (NumPy's PCG64: the same numbers on every device)."""
    global _generator
    _generator = np.random.default_rng(seed)


def _random(sample):
    def factory(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
        rng = generator if generator is not None else _generator
        values = sample(rng, _shape(size))
        return tensor(values, dtype=dtype or dtypes.get_default_dtype(), device=device, requires_grad=requires_grad)
    return factory


rand = _random(lambda rng, shape: rng.random(shape))
randn = _random(lambda rng, shape: rng.standard_normal(shape))
rand.__name__, randn.__name__ = "rand", "randn"
