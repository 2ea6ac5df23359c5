"""Tensor: an array plus the autograd metadata PyTorch keeps beside it.

The metadata lives in a separate `AutogradMeta` that stays `None` for tensors
that need no gradient, so a plain tensor costs five slots.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import dtypes
from ._device import device as Device
from .dispatch_keys import AUTOGRAD

__all__ = ["Tensor", "AutogradMeta"]

class _OpLibrary:
    """Stands for agrad.ops until it has loaded (it imports this module, so cannot be
    imported here); the first op used loads it, and it then binds itself in our place."""

    def __getattr__(self, name):
        import importlib
        return getattr(importlib.import_module("agrad.ops"), name)


_ops = _OpLibrary()


class AutogradMeta:
    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "retains_grad",
                 "grad_accumulator", "hooks")

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad   # leaves only: set by the user
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.grad_accumulator = None          # weakref to the leaf's AccumulateGrad
        self.hooks = None                     # a leaf's tensor hooks, run by its AccumulateGrad


class RemovableHandle:
    __slots__ = ("_hooks", "_entry")

    def __init__(self, hooks, entry):
        self._hooks, self._entry = hooks, entry

    def remove(self):
        try:
            self._hooks.remove(self._entry)
        except ValueError:
            pass


class Tensor:
    __slots__ = ("_data", "_device", "_keys", "_autograd_meta", "_version", "__weakref__")
    __array_priority__ = 1000      # `ndarray * tensor` defers to Tensor.__rmul__

    # -- construction ------------------------------------------------------------
    def __init__(self, *args, **kwargs):
        raise TypeError("use agrad.tensor(data, ...) or the creation functions to make a Tensor")

    @classmethod
    def _make(cls, data, device, key):
        t = object.__new__(cls)
        t._data = data
        t._device = device
        t._keys = key
        t._autograd_meta = None
        t._version = 0
        return t

    # -- array facts -------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    def size(self, dim=None):
        return self._data.shape if dim is None else self._data.shape[dim]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._data.dtype)

    @property
    def device(self) -> Device:
        return self._device

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._host().item()

    def tolist(self):
        return self._host().tolist()

    def _host(self) -> np.ndarray:
        return self._device.backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        arr = self._host()
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self):
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__     # __eq__ is elementwise, as in PyTorch

    # -- autograd metadata -------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        m = self._autograd_meta
        return m is not None and (m.requires_grad or m.grad_fn is not None)

    @requires_grad.setter
    def requires_grad(self, value: bool):
        m = self._autograd_meta
        if m is not None and m.grad_fn is not None:
            if value:
                return
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if value and self._data.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if m is None:
            if not value:
                return
            m = self._autograd_meta = AutogradMeta()
        m.requires_grad = bool(value)
        self._keys = (self._keys | AUTOGRAD) if value else (self._keys & ~AUTOGRAD)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        m = self._autograd_meta
        return m is None or m.grad_fn is None

    @property
    def grad_fn(self):
        m = self._autograd_meta
        return None if m is None else m.grad_fn

    @property
    def output_nr(self) -> int:
        m = self._autograd_meta
        return 0 if m is None else m.output_nr

    @property
    def grad(self):
        m = self._autograd_meta
        return None if m is None else m.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._device is not self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        m = self._autograd_meta
        if m is None:
            if value is None:
                return
            m = self._autograd_meta = AutogradMeta()
        m.grad = value

    @property
    def retains_grad(self) -> bool:
        m = self._autograd_meta
        return m is not None and m.retains_grad

    def retain_grad(self) -> None:
        m = self._autograd_meta
        if m is None or not (m.requires_grad or m.grad_fn is not None):
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if m.grad_fn is None or m.retains_grad:
            return     # leaves keep .grad anyway
        m.retains_grad = True
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is None or grad is None:
                return None
            tm = t._autograd_meta
            if tm.grad is None:
                # NOTE: detached copy of the buffer, so later in-place use of .grad cannot alter other grads
                tm.grad = grad if grad.requires_grad else grad.detach()
            else:
                tm.grad = tm.grad + grad
            return None
        m.grad_fn.register_retains_grad_hook(m.output_nr, retain)

    def register_hook(self, hook) -> RemovableHandle:
        """`hook(grad) -> Tensor or None`, run when the gradient of this tensor is computed."""
        m = self._autograd_meta
        if m is None or not (m.requires_grad or m.grad_fn is not None):
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if m.grad_fn is not None:
            return m.grad_fn.register_tensor_pre_hook(m.output_nr, hook)
        if m.hooks is None:
            m.hooks = []
        m.hooks.append(hook)
        return RemovableHandle(m.hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        from .autograd.functional import backward
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        return Tensor._make(self._data, self._device, self._keys & ~AUTOGRAD)

    def detach_(self) -> "Tensor":
        m = self._autograd_meta
        if m is not None:
            m.grad_fn, m.requires_grad = None, False
        self._keys &= ~AUTOGRAD
        return self

    # -- in-place updates (outside autograd: optimisers, zeroing grads) -----------
    def _check_inplace(self):
        from .grad_mode import is_grad_enabled
        m = self._autograd_meta
        if m is not None and is_grad_enabled() and (m.requires_grad or m.grad_fn is not None):
            if m.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            raise RuntimeError("agrad does not record in-place operations on tensors that require grad; "
                               "use the out-of-place op, or run it under agrad.no_grad()")

    def _set_data(self, array):
        self._check_inplace()
        self._data = array
        self._version += 1      # saved tensors compare versions at backward time
        return self

    def zero_(self):
        return self._set_data(self._device.backend.full(self.shape, 0, self._data.dtype, self._device))

    def fill_(self, value):
        return self._set_data(self._device.backend.full(self.shape, value, self._data.dtype, self._device))

    def copy_(self, src: "Tensor"):
        """Copy `src` in, moved to this tensor's device and dtype and broadcast to its shape."""
        value = _ops.expand(_ops.to(src.detach(), device=self._device, dtype=self.dtype), list(self.shape))
        data = value._data
        return self._set_data(data.copy() if hasattr(data, "copy") else data)

    def add_(self, other, alpha=1):
        other = other * alpha if alpha != 1 else other
        return self._set_data(_ops.add(self.detach(), other.detach() if isinstance(other, Tensor) else other)._data)

    def sub_(self, other, alpha=1):
        return self.add_(other, alpha=-alpha)

    def mul_(self, other):
        return self._set_data(_ops.mul(self.detach(), other.detach() if isinstance(other, Tensor) else other)._data)

    # -- conversions -------------------------------------------------------------
    def to(self, *args, device=None, dtype=None, copy=False) -> "Tensor":
        for a in args:     # t.to("cuda"), t.to(agrad.float64), t.to(other_tensor)
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = a
        return _ops.to(self, device=device, dtype=dtype, copy=copy)

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, index=0):
        return self.to(device=Device("cuda", index))

    def float(self):
        return self.to(dtype=dtypes.float32)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def bool(self):
        return self.to(dtype=dtypes.bool_)

    def type_as(self, other):
        return self.to(dtype=other.dtype)

    @property
    def T(self):
        return _ops.permute(self, list(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    # -- infix operators: each is the op of the same name -------------------------
    def __add__(self, other): return _ops.add(self, other)
    def __radd__(self, other): return _ops.add(other, self)
    def __sub__(self, other): return _ops.sub(self, other)
    def __rsub__(self, other): return _ops.sub(other, self)
    def __mul__(self, other): return _ops.mul(self, other)
    def __rmul__(self, other): return _ops.mul(other, self)
    def __truediv__(self, other): return _ops.div(self, other)
    def __rtruediv__(self, other): return _ops.div(other, self)
    def __pow__(self, other): return _ops.pow(self, other)
    def __rpow__(self, other): return _ops.pow(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __neg__(self): return _ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __eq__(self, other): return _ops.eq(self, other)
    def __ne__(self, other): return _ops.ne(self, other)
    def __lt__(self, other): return _ops.lt(self, other)
    def __le__(self, other): return _ops.le(self, other)
    def __gt__(self, other): return _ops.gt(self, other)
    def __ge__(self, other): return _ops.ge(self, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    # -- printing ----------------------------------------------------------------
    def __repr__(self):
        extras = []
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self._device.type == "meta":
            body = "..."
            extras.append(f"size={self.shape}")
        else:
            body = np.array2string(self._host(), separator=", ", prefix="tensor(",
                                   formatter=None, threshold=1000)
        if self._data.dtype != dtypes.get_default_dtype().np and self._data.dtype not in (np.int64, np.bool_):
            extras.append(f"dtype={self.dtype!r}")
        m = self._autograd_meta
        if m is not None and m.grad_fn is not None:
            extras.append(f"grad_fn=<{m.grad_fn.name()}>")
        elif m is not None and m.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"


Tensor.__module__ = "agrad"      # agrad.Tensor, as torch.Tensor (the module is private)


def filled(shape, value, np_dtype, device) -> Tensor:
    """A new tensor of `value` on `device`: implicit root gradients, zeros for missing ones."""
    backend = device.backend
    return Tensor._make(backend.full(shape, value, np_dtype, device), device, backend.key)


def _bind_ops(module) -> None:
    global _ops
    _ops = module
