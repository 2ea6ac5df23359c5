"""Tensors made from other data, as torch's Python bindings make them (torch/csrc/utils/tensor_new.cpp):
asarray (alias where it can, copy where it must or is told to), frombuffer (a 1-D tensor over a
Python buffer's memory) and scalar_tensor (a 0-d tensor of a number, the default float dtype).

asarray's rule, ATen's: a Tensor, a NumPy array or a buffer is aliased unless `copy=True`, or
`copy=None` and another dtype or device is asked for (then converted, `to`'s ToCopyBackward0 when
it requires grad); `copy=False` refuses what would need a copy. Anything else (numbers, nested
sequences) is a new tensor. `requires_grad` left unset follows the input tensor's, with torch's
warning; set, it is set on the result (an aliased leaf is the input itself, so it changes too, as
in PyTorch), and a non-leaf that must not require grad is detached.
"""
from __future__ import annotations

import numpy as np

from . import creation, dtypes
from ._device import device as Device
from ._tensor import Tensor
from .messages import scalar_type_name
from .warn_once import warn_once

__all__ = ["asarray", "frombuffer", "scalar_tensor"]


def _dtype(dtype):
    return None if dtype is None else (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype)))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-D tensor over `buffer`'s memory (shared: writing one changes the other): `count` elements of
    `dtype` (all that fit, with -1) starting `offset` bytes in."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    np_dtype = _dtype(dtype).np
    length, size = view.nbytes, np_dtype.itemsize
    if view.readonly:
        warn_once("frombuffer_readonly", "The given buffer is not writable, and PyTorch does not support "
                  "non-writable tensors. This means you can write to the underlying (supposedly non-writable) "
                  "buffer using the tensor. You may want to copy the buffer to protect its data or make it "
                  "writable before converting it to a tensor. This type of warning will be suppressed for the "
                  "rest of this program.")
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0 and (length - offset) % size:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({size})")
    n = (length - offset) // size if count < 0 else count
    if offset + n * size > length:
        raise ValueError(f"requested buffer length ({n} * {size} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({length} bytes)")
    out = creation.from_numpy(np.frombuffer(view.cast("B"), dtype=np_dtype, count=n, offset=offset))
    return out.requires_grad_(requires_grad) if requires_grad else out


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """`obj` as a tensor: the same memory where it can be (Tensors, NumPy arrays, buffers), a new tensor
    where it must be or `copy=True`; see the module's docstring for the rules."""
    dtype = _dtype(dtype)
    force_copy, force_alias = bool(copy), copy is False
    t = obj if isinstance(obj, Tensor) else None
    wants_grad = requires_grad if requires_grad is not None else (t is not None and t.requires_grad)
    if wants_grad and requires_grad is None:
        warn_once("asarray_requires_grad", "torch.asarray: unspecified requires_grad now defaults to "
                  "obj.requires_grad instead of False. Pass requires_grad=False explicitly to get the old "
                  "behavior and silence this warning.")
    if t is None and isinstance(obj, np.generic):
        if force_alias:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
        t, force_copy = creation.from_numpy(np.array(obj)), False      # a new array already
    elif t is None and isinstance(obj, np.ndarray):
        t = creation.from_numpy(obj)
    elif t is None and _has_buffer(obj):
        t = frombuffer(obj, dtype=dtype or dtypes.get_default_dtype(), requires_grad=wants_grad)
    if t is None:
        if force_alias:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _set_requires_grad(creation.tensor(obj, dtype=dtype, device=device), wants_grad)
    wrong_device = device is not None and Device(device) != t.device
    wrong_dtype = dtype is not None and dtype != t.dtype
    if force_copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            t = t.to(device=device if device is not None else t.device, dtype=dtype or t.dtype, copy=force_copy)
        else:
            t = t.clone()
    elif wrong_device:
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{Device(device)}'.")
    elif wrong_dtype:
        raise ValueError(f"can't alias tensor with dtype '{scalar_type_name(t.dtype.np)}' into dtype "
                         f"'{scalar_type_name(dtype.np)}'.")
    if not t.is_leaf and not wants_grad:
        return t.detach()
    return _set_requires_grad(t, wants_grad)


def _set_requires_grad(t, flag):
    """C++'s set_requires_grad, with its message (requires_grad_'s differs)."""
    if flag and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return t.requires_grad_(flag)


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding the number `s`, of the default float dtype unless `dtype` is given (an int or a
    bool too: torch.scalar_tensor(3) is tensor(3.))."""
    if isinstance(s, Tensor):
        raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not Tensor")
    return creation.full((), s, dtype=dtype or dtypes.get_default_dtype(), device=device,
                         requires_grad=requires_grad)
