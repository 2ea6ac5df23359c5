"""torch.autocast and torch.amp's custom_fwd/custom_bwd, line for line PyTorch 2.13's torch/amp/autocast_mode.py.

An autocast region sets its device type's state (amp/state.py) on entering and restores it on leaving; while some
device type is enabled the Autocast dispatch key is included in every call and its fallback (amp/autocast_kernel.py)
casts each op's inputs as the op's list says. Leaving the outermost region (the nesting count back to 0) clears the
weight cast cache. Used as a decorator, each call of the function runs inside the region.

What agrad cannot do: bfloat16 (NumPy has none). CPU autocast's default dtype is bfloat16 in torch, so autocast("cpu")
without a dtype is refused (state.ERR_BFLOAT16); autocast("cpu", dtype=agrad.float16) runs, as does cuda (float16 by
default) where agrad has a CUDA device.
"""
from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from .. import dtypes
from .._tensor import Tensor
from ..cuda import is_available as _cuda_is_available
from . import state as _state
from .state import is_autocast_available

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# the dtypes agrad can autocast to on cpu (torch: bfloat16 and float16)
_CPU_SUPPORTED_DTYPES = (dtypes.float16,)


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """A region (context manager or decorator) whose ops run in the dtype autocast picks per op: the device type's
    autocast dtype (float16) for matrix products and convolutions, float32 for ops that need its range or precision,
    the widest input dtype for ops that mix inputs, and the inputs' own dtype for every other op.

    Args: device_type ('cpu' or 'cuda'), dtype (default: get_autocast_dtype(device_type); cpu's, torch's bfloat16, is
    refused: pass agrad.float16), enabled (default True), cache_enabled (the weight cast cache; default: as now)."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if dtype is None:
            # (a disabled region may leave cpu's default unset: it casts nothing)
            dtype = _state.get_autocast_dtype(device_type) if enabled else _state.state.dtype.get(
                _state._device_type(device_type))
        self.fast_dtype = dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = _state.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        device_name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                if not _cuda_is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in _CPU_SUPPORTED_DTYPES:
                warnings.warn(f"In {device_name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{device_name} Autocast only supports dtypes of "
                              + ", ".join(map(str, _CPU_SUPPORTED_DTYPES)) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _state.is_autocast_cache_enabled()
        self.prev = _state.is_autocast_enabled(self.device)
        self.prev_fastdtype = _state.state.dtype[_state._device_type(self.device)]    # None: cpu's unset default
        _state.set_autocast_enabled(self.device, self._enabled)
        if self.fast_dtype is not None:
            _state.set_autocast_dtype(self.device, self.fast_dtype)
        _state.autocast_increment_nesting()
        _state.set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Drop the cache when we exit to a nesting level that's outside any instance of autocast.
        if _state.autocast_decrement_nesting() == 0:
            _state.clear_autocast_cache()
        _state.set_autocast_enabled(self.device, self.prev)
        _state.state.dtype[_state._device_type(self.device)] = self.prev_fastdtype
        _state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            f"Did you mean to use autocast as a context manager? For example:\n"
                            f"    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")
        return autocast_decorator(self, func)


# Casts Tensors and containers of Tensors.  Special-cases passthroughs for strings and np.ndarrays, which
# may be falsely detected as "Iterables."
def _cast(value, device_type: str, dtype):
    if isinstance(value, Tensor):
        is_eligible = (value.is_floating_point() and value.device.type == device_type
                       and value.dtype is not dtypes.float64)
        return value.to(dtype) if is_eligible else value
    elif isinstance(value, (str, bytes, np.ndarray)):
        return value
    elif isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    elif isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        if isinstance(value, (list, tuple)):
            return type(value)(iterable)
        return iterable
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorates a custom autograd Function's `forward`: with `cast_inputs`, inside an autocast-enabled region its
    floating tensor inputs are cast to that dtype and it runs with autocast off; without, it runs in the region as it
    is. Records on ctx what `custom_bwd` needs to run backward in the same autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _state.state.dtype[_state._autocast_device_type(device_type)]
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _state.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


# Autograd ensures incoming gradients are the same type as forward outputs.  Allowing a separate
# cast_inputs argument on custom_bwd is unnecessary and could cause errors if it doesn't match
# cast_inputs supplied to custom_fwd.
def custom_bwd(bwd=None, *, device_type: str):
    """Decorates a custom autograd Function's `backward`: it runs in the autocast state its `forward` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
