"""Tensor: an array plus the autograd metadata PyTorch keeps beside it.

The metadata lives in a separate `AutogradMeta` that stays `None` for tensors
that need no gradient, so a plain tensor costs five slots.
"""
from __future__ import annotations

import copyreg
import importlib
import math
import mmap
import re
import warnings
import weakref

import numpy as np

from . import _tensor_str, dtypes, memory_formats, watchers
from ._device import device as Device
from .backends.meta import StridedMetaArray
from .dispatch_keys import AUTOGRAD, CONJUGATE, INFERENCE, NEGATIVE, PYTHON
from .grad_mode import ExcludeDispatchKeyGuard, enable_grad, tls
from .layouts import strided
from .messages import c_type_name, checked_convert, scalar_type_name, size_repr, sizes
from .shapes import normalize_dim
from .storage import TypedStorage, UntypedStorage, storage_root
from .warn_once import warn_once

__all__ = ["Tensor", "AutogradMeta", "DifferentiableViewMeta", "VariableVersion", "update_tensor_hooks_on_new_gradfn"]

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


class AutogradMeta:
    # NOTE: `grad_dtype` stays unset until a leaf's Tensor.grad_dtype is set (unset: the tensor's dtype), so
    # that the kernels that make an output's AutogradMeta without a constructor call need not set it;
    # `fw_grad` (the tangent at the open forward-AD level, PyTorch's fw_grad_) likewise stays unset until
    # autograd/forward_ad.py sets it
    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "retains_grad",
                 "grad_accumulator", "hooks", "post_acc_grad_hooks", "grad_dtype", "fw_grad")

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad   # leaves only: set by the user
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.grad_accumulator = None          # weakref to the leaf's AccumulateGrad
        self.hooks = None                     # a leaf's tensor hooks, run by its AccumulateGrad
        self.post_acc_grad_hooks = None       # a leaf's hooks run after its AccumulateGrad updated .grad


class VariableVersion:
    """PyTorch's VariableVersion: one counter shared by a tensor, its views and its
    detach()ed aliases, bumped by every in-place op on any of them. A tensor gets one
    on first need (its first in-place op, view or saved alias): until then it is at 0.
    `detached`: the tensor was detached in place (detach_()) while it had a history, which a
    formula that saved it as the Tensor itself (save_input_value) must refuse at unpack."""
    __slots__ = ("version", "detached")

    def __init__(self, version: int = 0):
        self.version = version
        self.detached = False


def _address(array) -> int:
    """Where an array's first element is in memory (NumPy's or CuPy's pointer)."""
    ctypes = getattr(array, "ctypes", None)
    return ctypes.data if ctypes is not None else array.data.ptr


def _is_nonzero(t) -> bool:
    if t._data.size != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if t._data.size == 0
                           else "Boolean value of Tensor with more than one value is ambiguous")
    return bool(t.item())


def _bases(array):
    """An array and what holds its memory, outermost last (NumPy's .base chain, through a memoryview)."""
    while array is not None:
        yield array
        array = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)


def version_counter(t) -> VariableVersion:
    vc = t._version_counter
    if vc is None:
        vc = t._version_counter = VariableVersion()
    return vc


# how a view was made (PyTorch's CreationMeta): whether an in-place op on it may rebase its history
(CREATION_DEFAULT, CREATION_NO_GRAD_MODE, CREATION_MULTI_OUTPUT_NODE, CREATION_IN_CUSTOM_FUNCTION,
 CREATION_INFERENCE_MODE) = range(5)
# per creation kind: (the mode named in the message, how the in-place ran, the explanation after it)
_FORBIDDEN_IN_MODE = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                      "code by moving both the view and the inplace either both inside the {} block (if you don't "
                      "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
_REBASE_TEXT = {
    CREATION_NO_GRAD_MODE: ("no_grad mode", "with grad mode enabled", _FORBIDDEN_IN_MODE.format("no_grad")),
    CREATION_INFERENCE_MODE: ("inference mode", "in normal mode", _FORBIDDEN_IN_MODE.format("inference_mode")),
    CREATION_MULTI_OUTPUT_NODE: (None, None, (
        " This view is the output of a function that returns multiple views. Such functions do not allow the "
        "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.")),
    CREATION_IN_CUSTOM_FUNCTION: (None, None, (
        " This view was created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated with the custom "
        "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
        "output of the custom Function.")),
}


def _short_name(node) -> str:
    """A Node's name as PyTorch's messages print it: SliceBackward0 -> Slice."""
    return re.sub(r"Backward\d*$", "", type(node).__name__)


def propagate_creation_meta(previous: int, new: int) -> int:
    """A view of a view keeps the stricter kind (PyTorch's propagate_creation_meta)."""
    if new == CREATION_DEFAULT:
        return previous
    return previous if previous == CREATION_INFERENCE_MODE else new


def handle_view_on_rebase(m, indirect: bool = False) -> None:
    """Refuse to rebase the history of a view that is not CREATION_DEFAULT, in PyTorch's words
    (variable.cpp's handle_view_on_rebase): the view itself is modified in place, or (`indirect`)
    its base or another view of it was and the view's grad_fn is wanted."""
    creation = m.creation_meta
    if creation == CREATION_DEFAULT:
        return
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = m.grad_fn
    mode, how, why = _REBASE_TEXT[creation]
    if mode is not None or fn is None:
        if mode is None:      # no grad_fn: the view was made with grad mode off, whatever its kind says
            mode, how = _REBASE_TEXT[CREATION_NO_GRAD_MODE][:2]
        head = (f"Output {m.output_nr} of {_short_name(fn)} is a view of a view which was created in"
                if fn is not None else "A view was created in")
        msg = f"{head} {mode} and {modified} modified inplace {how}."
    else:
        msg = f"Output {m.output_nr} of {_short_name(fn)} is a view and {modified} modified inplace."
    raise RuntimeError(msg + why)


class DifferentiableViewMeta(AutogradMeta):
    """The AutogradMeta of a view (PyTorch's DifferentiableViewMeta).

    `base` is the tensor that owns the memory (never itself a view); `view_fn` replays
    the view ops from `base` to this view, as ((op, args, output index or None), ...);
    when the shared version counter has moved on since `attr_version` (an in-place op
    on the base or another view), the view's grad_fn is rebuilt from the base, so
    gradients flow through the base's new history: as PyTorch does by default, by one
    as_strided of the base with the view's geometry (AsStridedBackward0), or by
    replaying `view_fn` (ViewBackward0, ...): where the view was made under
    _force_original_view_tracking(True) (`replays`), changes its dtype, or lives on a device
    without as_strided (PyTorch's view_fn cases)."""
    __slots__ = ("base", "view_fn", "creation_meta", "attr_version", "replays")

    def __init__(self, base, view_fn, creation_meta, attr_version, replays=False):
        super().__init__()
        self.base = base
        self.view_fn = view_fn
        self.creation_meta = creation_meta
        self.attr_version = attr_version
        self.replays = replays

    def has_view_fn(self, view) -> bool:
        """Whether PyTorch would keep a view_fn for `view` and rebuild it by replaying that, not by
        as_strided of the base: made under view replay, of another dtype than its base, or on a device
        without as_strided."""
        return self.replays or view._data.dtype != self.base._data.dtype or \
            view._device.type not in _AS_STRIDED_DEVICES

    def current_grad_fn(self, view):
        """The view's grad_fn, rebuilt first if its base changed in place (VariableHooks::grad_fn).
        A view with no history of a base that needs none stays as it is, its attr_version
        untouched: an in-place op that later gives the base a history (a custom Function
        marking the view dirty) must still be seen as a change."""
        old_fn = self.grad_fn
        if old_fn is None and not self.base.requires_grad:
            return None
        vc = view._version_counter
        if vc.version != self.attr_version:
            handle_view_on_rebase(self, indirect=True)
            with enable_grad():
                if self.has_view_fn(view):
                    fresh = replay_view(self.base, self.view_fn)
                else:
                    fresh = self.base.as_strided(view.shape, view.stride(), view.storage_offset())
            fm = fresh._autograd_meta
            self.grad_fn, self.output_nr = (fm.grad_fn, fm.output_nr) if fm is not None else (None, 0)
            self.attr_version = vc.version
            if self.grad_fn is not None:
                update_tensor_hooks_on_new_gradfn(view, old_fn, self.grad_fn)
        return self.grad_fn


def update_tensor_hooks_on_new_gradfn(t, old_fn, new_fn) -> None:
    """`t`'s grad_fn has become `new_fn` (an in-place op, or a view's grad_fn rebuilt): its
    retain_grad() hook moves there from `old_fn`, at t's output_nr (PyTorch's function of this
    name; hooks from register_hook stay with the version of `t` they were registered on)."""
    m = t._autograd_meta
    if not m.retains_grad or old_fn is None:
        return
    hooks = old_fn.hooks
    hook = hooks.retains_grad.pop(m.output_nr, None) if hooks is not None else None
    if hook is not None:
        new_fn.register_retains_grad_hook(m.output_nr, hook)


_AS_STRIDED_DEVICES = frozenset({"cpu", "cuda", "meta"})


def make_view(base, view, op, args, index) -> None:
    """Mark `view` (fresh from a view op's kernel) as a view of `base` (PyTorch's as_view):
    it shares the base's version counter, knows the root base and how to replay itself.
    A float view always carries the Autograd key: an in-place op on its base can make it
    require grad later, and its grad_fn is then rebuilt when an op uses it."""
    bm = base._autograd_meta
    step = ((op, args, index),)
    if tls.inference_mode:
        creation = CREATION_INFERENCE_MODE
    elif not tls.grad_enabled:
        creation = CREATION_NO_GRAD_MODE
    else:
        creation = CREATION_DEFAULT if index is None else CREATION_MULTI_OUTPUT_NODE
    if bm.__class__ is DifferentiableViewMeta:
        root, view_fn, creation = bm.base, bm.view_fn + step, propagate_creation_meta(bm.creation_meta, creation)
        replays = bm.replays
    else:
        root, view_fn = base, step
        replays = False
    replays = replays or tls.view_replay
    vc = version_counter(base)
    view._version_counter = vc
    view._autograd_meta = DifferentiableViewMeta(root, view_fn, creation, vc.version, replays)
    if view._data.dtype.kind in "fc":
        view._keys |= AUTOGRAD
    if base._keys & (CONJUGATE | NEGATIVE):
        # the bits stay with a view (a float view of a conjugate has no conjugate bit: view_as_real, imag)
        view._keys |= base._keys & (CONJUGATE | NEGATIVE if view._data.dtype.kind == "c" else NEGATIVE)


def replay_view(base, view_fn):
    """Apply the recorded view ops to `base` (any tensor of the base's shape)."""
    t = base
    for op, args, index in view_fn:
        t = op.call_boxed([t, *args])
        if index is not None:
            t = t[index]
    return t


class RemovableHandle:
    __slots__ = ("_hooks", "_entry")

    def __init__(self, hooks, entry):
        self._hooks, self._entry = hooks, entry

    def remove(self):
        try:
            self._hooks.remove(self._entry)
        except ValueError:
            pass


class Size(tuple):
    """torch.Size: a tensor's shape, a tuple of ints (equal to the plain tuple, hashed alike) that
    prints as PyTorch prints it (agrad.Size([2, 3])), counts its elements (`numel()`), and stays a Size
    when sliced or added to."""
    __slots__ = ()

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if isinstance(index, slice) else got

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return size_repr(self)

    __str__ = __repr__

    def __reduce__(self):
        return (Size, (tuple(self),))


def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_dispatch_impl, Tensor's own `__torch_dispatch__`: a class whose handler is
    this one has none (its instances carry no Python key); called, it runs `func` below the Python key."""
    with ExcludeDispatchKeyGuard(PYTHON):
        return func(*args, **(kwargs or {}))


def _has_torch_dispatch(cls) -> bool:
    """Whether instances of `cls` go to its `__torch_dispatch__` (torch's check_has_torch_dispatch)."""
    handler = getattr(cls, "__torch_dispatch__", _disabled_torch_dispatch_impl)
    return handler is not _disabled_torch_dispatch_impl


class Tensor:
    # NOTE: __dict__, as torch.Tensor has one: user code and subclasses may set attributes of their own
    # (`p.shared = True`); it costs a pointer, the dict exists only once one is set
    __slots__ = ("_data", "_device", "_keys", "_autograd_meta", "_version_counter", "__weakref__", "__dict__")
    __array_priority__ = 1000      # `ndarray * tensor` defers to Tensor.__rmul__
    # a subclass's check of each op it is passed, `_op_guard(op)` (the dispatcher asks): torch's
    # __torch_function__ as far as agrad needs one (nn.UninitializedParameter refuses ops)
    _op_guard = None
    # a subclass that overrides it gets every op on its instances, below Autograd (_make gives them the
    # Python key; utils/_python_dispatch.py hands the call over); a staticmethod, so that a subclass reads
    # the very function and `cls.__torch_dispatch__ is _disabled_torch_dispatch_impl` says "none"
    __torch_dispatch__ = staticmethod(_disabled_torch_dispatch_impl)

    # -- construction ------------------------------------------------------------
    def __new__(cls, *args, device=None):
        """torch.Tensor(...), the legacy constructor, also what `Sub(...)` runs for a subclass without a
        __new__ of its own: `Tensor(t)` an alias of t (its AliasBackward0 where t requires grad, its own
        dtype), `Tensor(2, 3)` or `Tensor(size)` zeros of that size (agrad hands out no uninitialised
        memory), `Tensor([1, 2])` from data, `Tensor()` empty; the default dtype (as Tensor.new). A
        subclass gets an instance of itself."""
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].as_subclass(cls)
        empty = filled((0,), 0, dtypes.get_default_dtype().np, Device("cpu"))
        out = empty.new(*args, device=device)
        return out if cls is Tensor else out.as_subclass(cls)

    def __init__(self, *args, **kwargs):
        pass        # (everything happens in __new__; a subclass's __init__ may call it with its own arguments)

    @staticmethod
    def _make_subclass(cls, data, require_grad: bool = False):
        """torch.Tensor._make_subclass: an instance of `cls` sharing data's memory and version counter,
        without its history (a leaf), requiring grad as asked: how a subclass such as Parameter wraps a
        tensor in its __new__."""
        if not isinstance(cls, type) or not issubclass(cls, Tensor):
            raise TypeError(f"cls must be a subclass of Tensor, got {cls!r}")
        alias = data.detach()
        t = cls._make(alias._data, alias._device, alias._keys)
        t._version_counter = alias._version_counter
        return t.requires_grad_(require_grad)

    # -- pickling and copying: PyTorch's rules -------------------------------------------
    def __reduce_ex__(self, protocol):
        """Tensor.__reduce_ex__: the values (on the host), the device, requires_grad and the tensor's
        own attributes; never the graph (an unpickled tensor is a leaf, as PyTorch's), any protocol. A wrapper
        subclass's instance has no values: its layout and the attributes holding what it wraps (its slots
        too), made again by _make_wrapper_subclass (torch's _rebuild_wrapper_subclass); copy.deepcopy too."""
        data = self._data
        if data.__class__ is StridedMetaArray:
            attributes = dict(getattr(self, "__dict__", None) or {})
            for name in copyreg._slotnames(type(self)):
                if name not in ("__dict__", "__weakref__") and hasattr(self, name):
                    attributes[name] = getattr(self, name)
            return _rebuild_wrapper_subclass, (type(self), data.shape, data.element_strides, data.offset,
                                               data.dtype.str, str(self._device), self.requires_grad, attributes)
        return _rebuild_tensor, (type(self), np.array(self._device.backend.to_numpy(self._data)), str(self._device),
                                 self.requires_grad, dict(getattr(self, "__dict__", None) or {}))

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None,
                               layout=strided, device=None, pin_memory=False, requires_grad=False,
                               dispatch_sizes_strides_policy=None, dispatch_device=False, dispatch_layout=False,
                               _extra_dispatch_keys=None, storage_size=None):
        """torch.Tensor._make_wrapper_subclass: an instance of `cls` with the sizes, strides, offset, dtype
        and device given and no data of its own (its array a StridedMetaArray: metadata only), for a
        subclass whose `__torch_dispatch__` runs every op on the tensors it wraps. The keys are the
        device's backend key and Python, as PyTorch's (python_variable.cpp)."""
        if not isinstance(cls, type) or not issubclass(cls, Tensor):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not _has_torch_dispatch(cls):
            raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
        shape = tuple(size)
        dt = dtype if dtype is not None else dtypes.get_default_dtype()
        dev = Device(device) if device is not None else Device("cpu")
        data = StridedMetaArray(shape, dt.np, strides, storage_offset)
        t = cls._make(data, dev, dev.backend.key)
        if requires_grad:
            if data.dtype.kind not in "fc":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            t.requires_grad_(True)
        return t

    @classmethod
    def _make(cls, data, device, key):
        if cls is not Tensor:
            # a subclass's instance carries the Python key exactly when its class has a __torch_dispatch__
            key = (key | PYTHON) if _has_torch_dispatch(cls) else (key & ~PYTHON)
        t = object.__new__(cls)
        t._data = data
        t._device = device
        t._keys = key
        t._autograd_meta = None
        t._version_counter = None
        return t

    # -- array facts -------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        return Size(self._data.shape) if dim is None else self._data.shape[dim]

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

    @property
    def layout(self):
        return strided          # every agrad tensor is dense (agrad/layouts.py)

    @property
    def is_sparse(self) -> bool:
        return False            # (PyTorch's sparse COO layout, which agrad has not)

    @property
    def volatile(self) -> bool:
        """Removed from PyTorch with Variable (always False), kept for old code: a warning says so."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      UserWarning, stacklevel=2)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self._data.dtype.kind in "fic"

    def is_conj(self) -> bool:
        """Whether this is what PyTorch holds as a lazily conjugated view (TensorImpl's conjugate bit): the
        result of conj() of a complex tensor and the views of it (ops/pointwise/complex.py)."""
        return bool(self._keys & CONJUGATE)

    def is_neg(self) -> bool:
        """Whether this is what PyTorch holds as a lazily negated view (the negative bit): _neg_view()'s
        result, the imaginary parts of a conjugate, and their views."""
        return bool(self._keys & NEGATIVE)

    # -- where the memory lies: shared between processes, page-locked for transfers --
    def share_memory_(self) -> "Tensor":
        """Moves the values into memory shared with the processes forked after (an anonymous shared
        mapping, as PyTorch's storage in shared memory); a no-op where they are there already, and on a
        GPU. Views taken before keep the old memory (PyTorch moves the storage under them)."""
        if self._device.type == "meta":
            raise RuntimeError("_share_fd_: only available on CPU")
        if self._device.type != "cpu" or self.is_shared():
            return self
        data = self._data
        shared = np.frombuffer(mmap.mmap(-1, max(data.nbytes, 1)), dtype=data.dtype, count=data.size)
        shared = shared.reshape(data.shape)
        shared[...] = data
        self._data = shared
        return self

    def is_shared(self) -> bool:
        """Whether the values lie in shared memory (share_memory_, or a GPU's, as PyTorch counts them)."""
        if self._device.type == "cuda":
            return True
        return any(isinstance(b, mmap.mmap) for b in _bases(self._data))

    def pin_memory(self, device=None) -> "Tensor":
        """A copy in page-locked host memory (CuPy's pinned memory), for faster transfers to a GPU;
        without a GPU, PyTorch's error. Only a CPU tensor can be pinned."""
        from . import cuda

        if self._device.type != "cpu":
            kind = {"cuda": "CUDA"}.get(self._device.type, self._device.type.capitalize())
            raise RuntimeError(f"cannot pin '{kind}{scalar_type_name(self._data.dtype)}Type' only dense CPU tensors "
                               f"can be pinned")
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.is_pinned():
            return self
        import cupyx

        pinned = cupyx.empty_pinned(self._data.shape, self._data.dtype)
        pinned[...] = self._data
        return Tensor._make(pinned, self._device, self._keys & ~AUTOGRAD)

    def is_pinned(self, device=None) -> bool:
        """Whether the values lie in page-locked memory (pin_memory)."""
        return self._device.type == "cpu" and any(type(b).__name__ == "PinnedMemoryPointer"
                                                  for b in _bases(self._data))

    # -- memory layout (PyTorch's terms: strides in elements, the offset into the storage) --
    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None and self._data.__class__ is StridedMetaArray:
            memory_format = memory_formats.contiguous_format      # a wrapper subclass's: the strides it claims
        if memory_format is None:
            flags = getattr(self._data, "flags", None)
            return True if flags is None else bool(flags.c_contiguous)     # a Meta array is contiguous
        return memory_formats.is_in(self._data, memory_format)

    def stride(self, dim=None):
        data = self._data
        strides = getattr(data, "strides", None)
        if strides is not None:
            strides = tuple(st // data.itemsize for st in strides)
        elif data.__class__ is StridedMetaArray:      # a wrapper subclass's: those it claims
            strides = data.element_strides
        else:                                       # Meta: the contiguous strides of its shape
            strides, step = [], 1
            for n in reversed(data.shape):
                strides.insert(0, step)
                step *= max(n, 1)
            strides = tuple(strides)
        if dim is None:
            return strides
        return strides[normalize_dim(dim, data.ndim)]

    def storage_offset(self) -> int:
        data = self._data
        if not hasattr(data, "strides"):
            return getattr(data, "offset", 0)        # Meta: 0; a wrapper subclass's: the one it claims
        return (_address(data) - _address(storage_root(data))) // data.itemsize

    def data_ptr(self) -> int:
        return _address(self._data) if hasattr(self._data, "strides") else 0

    def untyped_storage(self) -> UntypedStorage:
        """The memory this tensor's array lives in, shared by every view of it (agrad/storage.py)."""
        data = self._data
        if not hasattr(data, "strides"):
            return UntypedStorage(None, int(data.size) * data.dtype.itemsize, 0, self.device)
        root = storage_root(data)
        return UntypedStorage(root, int(root.nbytes), _address(root), self.device)

    def storage(self) -> TypedStorage:
        """That memory as elements of this tensor's dtype (PyTorch's deprecated TypedStorage)."""
        warn_once("TypedStorage", "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
                  "will be the only storage class. This should only matter to you if you are using storages "
                  "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                  "tensor.storage()")
        return TypedStorage(self.untyped_storage(), self.dtype)

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.size) * self._data.dtype.itemsize

    def nelement(self) -> int:
        return int(self._data.size)

    def ndimension(self) -> int:
        return self._data.ndim

    def is_same_size(self, other) -> bool:
        return tuple(self._data.shape) == tuple(other._data.shape)

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    def get_device(self) -> int:
        return self._device.index if self._device.type == "cuda" else -1

    def numpy(self) -> np.ndarray:
        if self.requires_grad and tls.grad_enabled:      # under no_grad PyTorch hands out the memory
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        if self._keys & PYTHON:
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        if watchers.recorder is not None:
            watchers.read_value("numpy()")
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if watchers.recorder is not None:       # (bool(), float(), int() and index() come here too)
            watchers.read_value("item()")
        return self._host().item()

    def tolist(self):
        if self._keys & PYTHON:
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(self).__name__}")
        if watchers.recorder is not None:
            watchers.read_value("tolist()")
        return self._host().tolist()

    def _host(self) -> np.ndarray:
        if self._data.__class__ is StridedMetaArray:
            # a wrapper subclass's instance holds no values (torch hands item() to its handler as
            # aten::_local_scalar_dense, an op agrad has not)
            raise RuntimeError(f"{type(self).__name__} is a wrapper subclass: it holds no data to read")
        return self._device.backend.to_numpy(self._data)

    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this tensor's memory (its array's own, NumPy's or CuPy's), for another
        library's from_dlpack; as PyTorch's, refused for a tensor that requires grad."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return self._dlpack(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def _dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        if stream is not None and type(stream) is not int:
            raise TypeError("stream must be ``int`` or ``none``")
        if self._device.type == "cpu" and stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
        if not hasattr(self._data, "__dlpack__"):           # Meta, dask
            raise BufferError(f"Cannot pack tensors on {self._device.type}")
        # NOTE: the array's protocol takes None for the default stream, where PyTorch's -1 means "no sync"
        return self._data.__dlpack__(stream=None if stream == -1 else stream, max_version=max_version,
                                     dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        """(DLDeviceType, index) of this tensor's device."""
        from ._device import DLDeviceType

        if self._device.type == "cuda":
            return DLDeviceType.kDLCUDA, self._device.index or 0
        if self._device.type == "cpu":
            return (DLDeviceType.kDLCUDAHost if self.is_pinned() else DLDeviceType.kDLCPU), 0
        raise ValueError(f"Unknown device type {self._device.type} for Dlpack")

    def __array__(self, dtype=None, copy=None):
        arr = self._host()
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self):
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]


    def __bool__(self):
        return _is_nonzero(self)

    def is_nonzero(self) -> bool:
        """Whether the one element is not zero (NaN is not): PyTorch's is_nonzero, which is bool(t)."""
        return _is_nonzero(self)

    def __float__(self):
        return float(checked_convert(self.item(), np.float64))

    def __int__(self):
        return int(checked_convert(self.item(), np.int64))

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__     # __eq__ is elementwise, as in PyTorch

    # -- autograd metadata -------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        m = self._autograd_meta
        if m is None:
            return False
        if m.__class__ is DifferentiableViewMeta:
            # a view of a tensor that requires grad does too, even one made under no_grad (PyTorch's
            # rule); asking does not rebuild the view's grad_fn, so it never raises (as in PyTorch)
            return m.requires_grad or m.grad_fn is not None or m.base.requires_grad
        return m.requires_grad or m.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool):
        if value and self._keys & INFERENCE and not tls.inference_mode:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        m = self._autograd_meta
        if m is not None and (m.grad_fn is not None or (m.__class__ is DifferentiableViewMeta
                                                        and m.current_grad_fn(self) is not None)):
            if value:
                return
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if m is None:
            if not value:
                return
            m = self._autograd_meta = AutogradMeta()
        m.requires_grad = bool(value)
        if value or m.__class__ is not DifferentiableViewMeta:    # a float view keeps Autograd (see views)
            self._keys = (self._keys | AUTOGRAD) if value else (self._keys & ~AUTOGRAD)

    # NOTE: deletions refused with PyTorch's messages through property deleters, never a __delattr__
    # (which would make every attribute assignment on a tensor go through Python)
    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if requires_grad and self._data.dtype.kind not in "fc":
            # NOTE: the method's own text in PyTorch (THPVariable_requires_grad_), not the attribute's
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    # -- views and the version counter ---------------------------------------------
    @property
    def _version(self) -> int:
        if self._keys & INFERENCE:
            raise RuntimeError("Inference tensors do not track version counter.")
        vc = self._version_counter
        return 0 if vc is None else vc.version

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made in inference mode, or a view of one."""
        return bool(self._keys & INFERENCE)

    @property
    def _base(self):
        m = self._autograd_meta
        return m.base if m.__class__ is DifferentiableViewMeta else None

    def _is_view(self) -> bool:
        return self._autograd_meta.__class__ is DifferentiableViewMeta

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad_fn(self):
        m = self._autograd_meta
        if m is None:
            return None
        return m.current_grad_fn(self) if m.__class__ is DifferentiableViewMeta else m.grad_fn

    @property
    def _grad_fn(self):
        """PyTorch's other name of grad_fn; deleting it is refused, as there."""
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self):
        raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")

    @property
    def output_nr(self) -> int:
        m = self._autograd_meta
        if m is None:
            return 0
        if m.__class__ is DifferentiableViewMeta:
            m.current_grad_fn(self)
        return m.output_nr

    @property
    def grad(self):
        m = self._autograd_meta
        if m is None:
            return None
        # NOTE: the stored grad_fn, as PyTorch's C++ is_leaf(): a view's is not rebuilt by reading .grad
        if m.grad is None and not m.retains_grad and m.grad_fn is not None:
            warnings.warn(NON_LEAF_GRAD_WARNING, stacklevel=2)      # TensorBody.h's TORCH_WARN, as PyTorch
        return m.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            _check_assigned_grad(self, value)
        m = self._autograd_meta
        if m is None:
            if value is None:
                return
            m = self._autograd_meta = AutogradMeta()
        m.grad = value

    @grad.deleter
    def grad(self):
        self.grad = None          # `del t.grad` resets it, as PyTorch's setter given no value

    @property
    def grad_dtype(self):
        """The dtype `.grad` must have (PyTorch 2.9's): the tensor's own unless set; None allows any.
        Leaves only. AccumulateGrad casts an incoming gradient to it (its input metadata)."""
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        value = getattr(self._autograd_meta, "grad_dtype", _UNSET)
        return self.dtype if value is _UNSET else value

    @grad_dtype.setter
    def grad_dtype(self, value):
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, dtypes.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        m = self._autograd_meta
        if m is None:
            m = self._autograd_meta = AutogradMeta()
        if value is not None and m.grad is not None and m.grad._data.dtype != value.np:
            raise RuntimeError(f"Cannot set grad_dtype to '{scalar_type_name(value.np)}' because there is already a "
                               f"gradient with dtype '{c_type_name(m.grad._data.dtype)}'. Please clear the gradient "
                               f"(.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches the "
                               f"existing gradient's dtype.")
        m.grad_dtype = value
        acc = m.grad_accumulator() if m.grad_accumulator is not None else None
        if acc is not None:         # what the engine casts the leaf's gradient to (None: nothing)
            acc.input_metadata = ((self._data.shape, _grad_np_dtype(self), self._device),)

    @property
    def retains_grad(self) -> bool:
        m = self._autograd_meta
        return m is not None and m.retains_grad

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf in `.grad`: a hook on its grad_fn's slot for it,
        which follows the tensor when an in-place op gives it a new grad_fn (inplace.py's
        rebase_history, a view's rebuilt grad_fn: update_tensor_hooks_on_new_gradfn)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        m = self._autograd_meta
        fn = self.grad_fn
        if fn is None or m.retains_grad:
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
        fn.register_retains_grad_hook(m.output_nr, retain)

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

    @property
    def _backward_hooks(self):
        """PyTorch's `_backward_hooks`: None, or the dict of hooks set here (torch's loaders and some
        user code set it). On a leaf that requires grad its hooks run in order on the gradient, read
        when the gradient comes (a hook returning a tensor replaces it), through one register_hook; on
        a non-leaf PyTorch keeps the dict without running it (a grad_fn only runs the dict that
        Tensor.register_hook attached to it), and so does agrad."""
        state = self.__dict__.get("_backward_hooks_state")
        return None if state is None else state[0]

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        state = self.__dict__.pop("_backward_hooks_state", None)
        if state is not None and state[1] is not None:
            state[1].remove()
        if hooks is None:
            return

        def run_hooks(grad):
            for hook in list(hooks.values()):
                result = hook(grad)
                if result is not None:
                    grad = result
            return grad
        handle = self.register_hook(run_hooks) if self.requires_grad and self.is_leaf else None
        self.__dict__["_backward_hooks_state"] = (hooks, handle)

    @_backward_hooks.deleter
    def _backward_hooks(self):
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """`hook(tensor)`, run on a leaf once its AccumulateGrad has updated `.grad`."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        m = self._autograd_meta
        if m.post_acc_grad_hooks is None:
            m.post_acc_grad_hooks = []
        m.post_acc_grad_hooks.append(hook)
        return RemovableHandle(m.post_acc_grad_hooks, hook)


    def detach(self) -> "Tensor":
        """A new tensor sharing the data and the version counter, outside the graph (PyTorch's detach)."""
        if (tls.included | self._keys) & PYTHON:
            # a dispatch mode is pushed, or self's class has a __torch_dispatch__: detach goes through the
            # dispatcher, as torch's aten::detach, so the handler sees it (checkpoint's recomputation detaches
            # what it saves; a wrapper subclass detaches what it wraps) and what it returns is the result
            t = importlib.import_module("agrad.ops").detach(self)
            if t.__class__ is Tensor and t._data is self._data:
                t._version_counter = version_counter(self)      # the op's own result: self's data, as below
            return t
        t = Tensor._make(self._data, self._device, self._keys & ~AUTOGRAD)
        t._version_counter = version_counter(self)
        return t

    @property
    def data(self) -> "Tensor":
        """This tensor's memory outside autograd (PyTorch's `.data`): unlike detach(), it has a
        version counter of its own, so in-place changes through it are not detected."""
        if self._keys & PYTHON:
            # a subclass with a __torch_dispatch__: its handler's detach, as torch's shallow_copy_and_detach
            # of a Python tensor asks its interpreter
            t = importlib.import_module("agrad.ops").detach(self)
            if t is not self:
                t._version_counter = None       # a counter of its own, made on first use (as below)
            return t
        return Tensor._make(self._data, self._device, self._keys & ~AUTOGRAD)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and value._data.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        m = self._autograd_meta
        if m is not None and m.grad_accumulator is not None and (
                value._data.dtype != self._data.dtype or value._device != self._device):
            m.grad_accumulator = None     # its input metadata is out of date (PyTorch's VariableHooks::set_data)
        self._data, self._device = value._data, value._device
        self._keys = (value._keys & ~AUTOGRAD) | (self._keys & AUTOGRAD)

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def detach_(self) -> "Tensor":
        m = self._autograd_meta
        if m.__class__ is DifferentiableViewMeta:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                               "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                               "called on these gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if m is not None:
            if m.grad_fn is not None:
                version_counter(self).detached = True
            m.grad_fn, m.requires_grad, m.output_nr = None, False, 0
            if hasattr(m, "fw_grad"):
                del m.fw_grad       # the tangent goes too, as PyTorch's detach_ resets fw_grad_
        self._keys &= ~AUTOGRAD
        return self

    # -- conversions -------------------------------------------------------------

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

    def cfloat(self):
        return self.to(dtype=dtypes.complex64)

    def cdouble(self):
        return self.to(dtype=dtypes.complex128)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def bool(self):
        return self.to(dtype=dtypes.bool_)

    def type_as(self, other):
        return self.to(dtype=other.dtype)

    def type(self, dtype=None, non_blocking=False):
        """PyTorch's `t.type()`: no dtype, the type's name ('agrad.FloatTensor'); a dtype, a legacy
        type (agrad.DoubleTensor) or such a name ('agrad.DoubleTensor', or as code written for PyTorch
        spells it, 'torch.DoubleTensor'), `t` converted (`t` itself when it already has that dtype)."""
        names = _legacy_type_names()
        if dtype is None:
            return f"agrad.{names[self.dtype]}"
        if isinstance(dtype, str):
            by_name = {f"{module}.{n}": dt for dt, n in names.items() for module in ("agrad", "torch")}
            if dtype not in by_name:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = by_name[dtype]
        elif isinstance(dtype, type) and getattr(dtype, "dtype", None) in names:   # a legacy tensor type
            dtype = dtype.dtype
        return self.to(dtype=dtype)

    # -- shaped like another tensor, and new tensors like this one (PyTorch's methods) ----










    # -- infix operators: each is the op of the same name -------------------------
    def __pos__(self): return self


    # -- printing ----------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        # PyTorch's torch/_tensor_str.py, ported: values, summarization, suffixes; `tensor_contents` what to
        # print in place of the values (a wrapper subclass's repr shows the tensor it wraps so)
        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, format_spec):
        # torch.Tensor.__format__: a 0-d plain tensor formats as its Python number (f"{t:.3f}", and
        # torch.distributions' reprs print "Normal(loc: 0.0, …)"); anything else as object does
        if self._data.ndim == 0 and self._device.type != "meta" and type(self) is Tensor:
            return self.detach().item().__format__(format_spec)
        return object.__format__(self, format_spec)


Tensor.__module__ = "agrad"      # agrad.Tensor, as torch.Tensor (the module is private)


# ---- the op library's door -------------------------------------------------------------------

def load_op_library(op: str | None = None) -> None:
    """Register op `op` with the dispatcher (every op, with None) by loading the op library
    (`agrad.ops`) and the family that declares it; loading the library binds Tensor's methods
    (ops/_tensor_methods.py). This is the engine's one import of a layer
    above from a layer below (tests/test_layering.py allows exactly this edge): the library
    is built on this module, so it cannot be imported here, yet any public part of agrad may
    be a program's first import (`from agrad.creation import ones; ones(2) + 1`). So a
    Tensor used before the library has loaded loads it on its first method call, and the
    dispatcher on its first lookup of an op, as loading libtorch runs ATen's registrations.
    The CLI loads it only when a command needs the engine, and then only the families of
    the ops it runs."""
    importlib.import_module("agrad.ops").load(op)


def _bind_methods() -> None:
    importlib.import_module("agrad.ops")


# Tensor's methods that run ops, until the library binds the real ones over these: Python looks
# operators up on the type, never through __getattr__, so each needs a stand-in of its own
_UNTIL_LOADED = ("__iter__", "__getitem__", "__setitem__", "__neg__", "__abs__", "__invert__",
                 "__iadd__", "__isub__", "__imul__", "__itruediv__",
                 *(f"__{r}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor",
                                             "lshift", "rshift", "pow", "matmul") for r in ("", "r")),
                 "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


def _until_loaded(name):
    def method(self, *args, **kwargs):
        _bind_methods()
        return getattr(self, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.stand_in = True
    return method


def _attribute_until_loaded(self, name):
    """Tensor.__getattr__ until the library has loaded (bound methods like `x.sum` are absent);
    the library replaces it by its own, which binds an op's method on its first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    _bind_methods()
    if Tensor.__dict__["__getattr__"] is _attribute_until_loaded:     # the library is still loading
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")
    return getattr(self, name)


for _name in _UNTIL_LOADED:
    setattr(Tensor, _name, _until_loaded(_name))
Tensor.__getattr__ = _attribute_until_loaded


def _legacy_type_names() -> dict:
    """dtype -> PyTorch's legacy tensor type name (torch.FloatTensor), for Tensor.type()."""
    return {dtypes.float16: "HalfTensor", dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor",
            dtypes.uint8: "ByteTensor", dtypes.int8: "CharTensor", dtypes.int16: "ShortTensor",
            dtypes.int32: "IntTensor", dtypes.int64: "LongTensor", dtypes.bool_: "BoolTensor",
            dtypes.uint32: "UInt32Tensor", dtypes.uint64: "UInt64Tensor", dtypes.complex64: "ComplexFloatTensor",
            dtypes.complex128: "ComplexDoubleTensor"}


_UNSET = object()


def _grad_np_dtype(t: Tensor):
    """The NumPy dtype t's gradient must have (Tensor.grad_dtype), or None where any will do."""
    value = getattr(t._autograd_meta, "grad_dtype", _UNSET)
    return t._data.dtype if value is _UNSET else None if value is None else value.np


def _check_assigned_grad(t: Tensor, grad: Tensor) -> None:
    """`t.grad = grad` keeps t's grad_dtype, device and size, with PyTorch's messages (THPVariable_set_grad)."""
    wanted = _grad_np_dtype(t)
    if wanted is not None and grad._data.dtype != wanted:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{c_type_name(grad._data.dtype)}' to a tensor with "
            f"grad_dtype '{scalar_type_name(wanted)}'. The gradient must match the tensor's grad_dtype "
            f"(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, "
            f"or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
            f"gradient may break downstream systems that assume they match.")
    if grad._device.type != t._device.type:
        raise RuntimeError(f"attempting to assign a gradient with device type '{grad._device.type}' to a tensor with "
                           f"device type '{t._device.type}'. Please ensure that the gradient and the tensor are on "
                           f"the same device")
    if grad._device != t._device:
        raise RuntimeError(f"attempting to assign a gradient located on device with index '{grad._device.index}' to a "
                           f"tensor located on device with index '{t._device.index}'. Please ensure that the "
                           f"gradient and the tensor are on the same device")
    if grad._data.shape != t._data.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{sizes(grad._data.shape)}' to a tensor of size "
                           f"'{sizes(t._data.shape)}'. Please ensure that the gradient and the tensor are the same size")


def _rebuild_tensor(cls, array, device: str, requires_grad: bool, attributes: dict):
    """What Tensor.__reduce_ex__ pickles comes back as: a leaf of `cls` holding `array` on `device`."""
    dev = Device(device)
    data = array if dev.type == "cpu" else dev.backend.asarray(array, array.dtype, dev)
    t = cls._make(data, dev, dev.backend.key)         # (a Parameter too: it holds nothing else)
    if requires_grad:
        t.requires_grad_(True)
    for name, value in attributes.items():
        setattr(t, name, value)
    return t


def _rebuild_wrapper_subclass(cls, size, strides, storage_offset, np_dtype: str, device: str, requires_grad: bool,
                              attributes: dict):
    """What Tensor.__reduce_ex__ pickles of a wrapper subclass's instance comes back as."""
    t = Tensor._make_wrapper_subclass(cls, size, strides, storage_offset, dtype=dtypes.from_numpy(np.dtype(np_dtype)),
                                      device=device, requires_grad=requires_grad)
    for name, value in attributes.items():
        setattr(t, name, value)
    return t


def _size(size) -> tuple:
    """`f(2, 3)`, `f((2, 3))` and `f([2, 3])` alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


def filled(shape, value, np_dtype, device) -> Tensor:
    """A new tensor of `value` on `device`: implicit root gradients, zeros for missing ones."""
    backend = device.backend
    return Tensor._make(backend.full(shape, value, np_dtype, device), device, backend.key)
