"""Autocast's thread-local state and its torch-level switches (ATen's autocast_mode.cpp, torch/csrc/autograd/init.cpp):
per device type whether autocast is enabled and its lower-precision dtype, whether the weight cast cache is on, the
nesting depth of autocast regions, and the cache of casted weights.

Enabled is PyTorch's "the device type's Autocast key is not excluded": here the one Autocast key is in the included
keys (grad_mode.tls) exactly while some device type is enabled, so a call made outside every region never reaches the
autocast fallback (amp/autocast_kernel.py) and pays nothing for it.

CPU autocast's default dtype in torch is bfloat16, which agrad has not (NumPy has no bfloat16): the CPU default stays
unset, and asking for it (what `autocast("cpu")` without a dtype does) is refused with an error that names float16,
the dtype agrad can autocast to, and how to ask for it.
"""
from __future__ import annotations

import threading
import warnings
import weakref

from .. import dtypes
from .._device import device as _Device
from ..dispatch_keys import AUTOCAST
from ..grad_mode import tls as _dispatch_tls

__all__ = ["is_autocast_available", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
           "set_autocast_gpu_dtype"]

AUTOCAST_DEVICE_TYPES = ("cpu", "cuda")

ERR_BFLOAT16 = ("CPU autocast's default dtype is torch.bfloat16, which agrad does not have (NumPy has no bfloat16). "
                "agrad autocasts to float16: use agrad.autocast('cpu', dtype=agrad.float16), or "
                "agrad.set_autocast_dtype('cpu', agrad.float16) first.")


class _AutocastTLS(threading.local):
    def __init__(self):
        self.enabled = frozenset()                              # the device types autocast is enabled for
        self.dtype = {"cpu": None, "cuda": dtypes.float16}      # None: torch's bfloat16 (ERR_BFLOAT16)
        self.cache_enabled = True
        self.nesting = 0


state = _AutocastTLS()

# The weight cast cache (autocast_mode.cpp's cached_casts, shared by all threads as there): id of a float32 leaf that
# requires grad -> (a weak reference to it, its lower-precision cast). The reference tells a tensor apart from a later
# one that got the same id; clear_autocast_cache empties it when the outermost region exits.
cached_casts: dict = {}
cached_casts_lock = threading.Lock()


def _device_type(device_type) -> str:
    """The device type a string names ('cuda:0' is 'cuda'); an unknown one is agrad's device error, as torch's a
    RuntimeError."""
    try:
        return _Device(device_type).type
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None


def _autocast_device_type(device_type) -> str:
    kind = _device_type(device_type)
    if kind not in AUTOCAST_DEVICE_TYPES:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return kind


def is_autocast_available(device_type: str) -> bool:
    """torch.amp.is_autocast_available: whether autocast can run on `device_type` (agrad: cpu and cuda)."""
    return _device_type(device_type) in AUTOCAST_DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is enabled for `device_type` on this thread (without one, for cuda, as torch's)."""
    return _autocast_device_type("cuda" if device_type is None else device_type) in state.enabled


def set_autocast_enabled(device_type, enabled=None) -> None:
    """`set_autocast_enabled(device_type, enabled)`; torch's older `set_autocast_enabled(enabled)` sets cuda's."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    kind = _autocast_device_type(device_type)
    state.enabled = state.enabled | {kind} if enabled else state.enabled - {kind}
    _dispatch_tls.included = (_dispatch_tls.included | AUTOCAST) if state.enabled else (_dispatch_tls.included
                                                                                         & ~AUTOCAST)


def get_autocast_dtype(device_type: str):
    """The dtype autocast's lower-precision ops run in on `device_type`."""
    kind = _device_type(device_type)
    if kind not in AUTOCAST_DEVICE_TYPES:
        raise RuntimeError("unsupported scalarType")
    dtype = state.dtype[kind]
    if dtype is None:
        raise RuntimeError(ERR_BFLOAT16)
    return dtype


def set_autocast_dtype(device_type: str, dtype) -> None:
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, "
                        f"not {type(dtype).__name__}")
    state.dtype[_autocast_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    with cached_casts_lock:
        cached_casts.clear()


def autocast_increment_nesting() -> int:
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting() -> int:
    state.nesting -= 1
    return state.nesting


def cached(arg):
    """The cached cast of `arg`, or None."""
    with cached_casts_lock:
        entry = cached_casts.get(id(arg))
    if entry is not None and entry[0]() is arg:
        return entry[1]
    return None


def cache(arg, casted) -> None:
    with cached_casts_lock:
        cached_casts[id(arg)] = (weakref.ref(arg), casted)


# ---- torch's per-device spellings, deprecated in its favour of the device_type argument (torch/csrc/autograd/init.cpp)

def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)
