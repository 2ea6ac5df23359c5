"""Conversions and copies (ATen's TensorConversions, Copy): `to` (device and dtype moves,
whose backward moves the gradient back), `detach`, `clone`, `contiguous`, `copy` (the op
behind `copy_`), and `_view_dtype`, Tensor.view(dtype): the same memory read as another
dtype (PyTorch's view.dtype).

As in PyTorch, `to` is a composite: the tensor itself when nothing changes, else `_to_copy`,
the one op whose output lives on another backend than its input (`moves_device`: its kernel
takes Tensors), whose ToCopyBackward0 sends the gradient back to the input's device and dtype.

No gradient flows through `_view_dtype` (PyTorch marks its output non-differentiable). The
result shares self's memory; NOTE: it is not registered as an autograd view (PyTorch's is
a non-differentiable view sharing the version counter), so in-place ops on it do not bump
self's version. With a different element size the last dim shrinks or grows by the
ratio, which needs it contiguous and divisible, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, memory_formats, watchers
from .._device import device as Device
from .._tensor import Tensor
from ..backends.meta import MetaArray
from ..dispatcher import ops as _ops
from ..creation import zeros_like
from ..grad_mode import no_grad as _no_grad
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes, pointwise_meta
from ..warn_once import warn_once
from .registry import defop
from .samples import SampleInput, make_arg

# ---- clone, contiguous, copy ----------------------------------------------------------------


def _clone_kernel(xp, self, memory_format):
    return memory_formats.copy(xp, self, memory_format)


def _clone_meta(self, memory_format):
    memory_formats.resolve(self, memory_format)          # a channels-last format still checks the rank
    return MetaArray(self.shape, self.dtype)


def _clone_samples(op):
    x = make_arg((2, 3, 4, 5), key=(op, 3))
    return [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
            SampleInput("0-d", make_arg((), key=(op, 1))),
            SampleInput("T (3,2) contiguous_format", make_arg((3, 2), key=(op, 2), transposed=True),
                        memory_format=memory_formats.contiguous_format),
            SampleInput("(2,3,4,5) channels_last", x, memory_format=memory_formats.channels_last),
            SampleInput("(2,3,4,5,2) channels_last_3d", make_arg((2, 3, 4, 5, 2), key=(op, 4)),
                        memory_format=memory_formats.channels_last_3d),
            SampleInput("T (3,2) preserve_format", make_arg((3, 2), key=(op, 5), transposed=True),
                        memory_format=memory_formats.preserve_format)]


clone = defop(
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    supports_complex=True, kernel=_clone_kernel, meta=_clone_meta,
    grads={"self": lambda grad: grad},
    samples=_clone_samples,
    torch="lambda x, memory_format=None: x.clone(memory_format=memory_format or torch.preserve_format)",
    doc="A copy with its own memory, laid out in memory_format (preserve_format, the default, keeps a dense "
        "tensor's strides).")


def _contiguous(self, memory_format):
    fmt = memory_formats.from_arg(memory_format)
    if fmt is memory_formats.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if memory_formats.is_in(self._data, fmt):
        return self            # NOTE: PyTorch returns the tensor itself: no node is recorded
    return clone(self, memory_format=fmt)


contiguous = defop(
    "contiguous(Tensor self, *, MemoryFormat memory_format=\"contiguous_format\") -> Tensor",
    composite=_contiguous,
    samples=lambda op: [SampleInput("(2,3) already", make_arg((2, 3), key=(op, 0))),
                        SampleInput("T (3,2)", make_arg((3, 2), key=(op, 1), transposed=True)),
                        SampleInput("(2,3,4,5) channels_last", make_arg((2, 3, 4, 5), key=(op, 2)),
                                    memory_format=memory_formats.channels_last)],
    torch="lambda x, memory_format=torch.contiguous_format: x.contiguous(memory_format=memory_format)",
    doc="self when its memory already has memory_format's strides, else a clone in that format "
        "(CloneBackward0).")


def _copy_kernel(xp, self, src):
    return xp.array(xp.broadcast_to(_astype(src, self.dtype, copy=False), self.shape), copy=True)


def _copy_meta(self, src):
    broadcast_shapes(self.shape, src.shape)
    if broadcast_shapes(self.shape, src.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(self.shape, src.shape))}")
    return MetaArray(self.shape, self.dtype)


copy = defop(
    "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    supports_complex=True, kernel=lambda xp, self, src, non_blocking: _copy_kernel(xp, self, src),
    meta=lambda self, src, non_blocking: _copy_meta(self, src),
    # NOTE: src's gradient is grad itself: the engine casts it to src's dtype and sums out broadcast
    # dimensions, so nothing of src is saved (an in-place write into src's memory stays legal)
    grads={"self": lambda grad: zeros_like(grad), "src": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3) <- (3,)", make_arg((2, 3), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,2) <- (2,2)", make_arg((2, 2), key=(op, 2)), make_arg((2, 2), key=(op, 3)))],
    backward_name="CopyBackwards",
    torch="lambda self, src, non_blocking=False: self.clone().copy_(src)",
    doc="src cast to self's dtype and broadcast to its shape (the pure form of copy_).")


def _np_dtype(current, dtype):
    return current if dtype is None else (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype))).np


def _target(self: Tensor, device, dtype):
    return (self._device if device is None else Device(device)), _np_dtype(self._data.dtype, dtype)


def _to_copy_meta(self, dtype, device, memory_format):
    # NOTE: on Meta a move is only a dtype change: the graph being inferred stays on Meta
    if device is not None:
        Device(device)         # still reject a malformed device string
    return MetaArray(self.shape, _np_dtype(self.dtype, dtype))


def _astype(array, dtype, copy=True):
    """array.astype(dtype); a complex array cast to a real dtype keeps its real part, with PyTorch's
    warning (copy_'s TORCH_WARN_ONCE) instead of NumPy's ComplexWarning."""
    if array.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        warn_once("complex_to_real", "Casting complex values to real discards the imaginary part", at_user=True)
        array = array.real
    return array.astype(dtype, copy=copy)


def _to_copy_kernel(self, dtype, device, memory_format):
    dev, np_dtype = _target(self, device, dtype)
    src, dst = self._device.backend, dev.backend
    data = self._data
    moved = dev is not self._device
    if moved:
        if dev.type != "meta" and dev.type != "cpu":
            dst.check_device(dev)
        if src.type == "meta" and dst.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data! Please use agrad.empty_like() "
                                      "instead of to() when moving a meta tensor to another device.")
        host = data if src.type == "meta" else src.to_numpy(data)
        if host.dtype.kind == "c" and np_dtype.kind != "c" and src.type != "meta":
            host = _astype(host, host.real.dtype, copy=False)       # (the warning; asarray casts the rest)
        data = dst.asarray(host, np_dtype, dev)
    else:
        data = _astype(data, np_dtype)       # (NumPy's order K: self's strides, as preserve_format)
    if dev.type != "meta" and memory_format is not None and getattr(data, "strides", None) is not None and \
            memory_formats.dims_order(data, None) != memory_formats.dims_order(self._data, memory_format):
        data = memory_formats.copy(dst.xp, data, memory_format, like=self._data)
        moved = True            # (not one astype: the replay below cannot write it as one)
    result = Tensor._make(data, dev, dst.key)
    recorder = watchers.recorder
    if recorder is not None:
        # this kernel is boxed (it may move between backends), so no backend kernel call records it: a
        # pass recorded for replay must see the cast as a step, or it would replay the value cast when
        # recorded (a training step's batch, a perturbed input of `check`)
        if moved:
            recorder.unreplayable("a tensor moved between devices or memory formats (`to`)")
        else:
            recorder.kernel(_astype, (), [self._data, np_dtype], [self._data, np_dtype], data, result)
    return result


def _to_copy_backward(grad, self_options):
    """FunctionsManual's _to_copy_backward: a real input's gradient is the real part of a complex one
    (taken before the cast, so the real <- complex copy gives no warning)."""
    device, dtype = self_options
    if grad.is_complex() and not dtype.is_complex:
        grad = _ops.real(grad)       # (pointwise/complex's op, by name: that family imports this one)
    return _to_copy(grad, dtype=dtype, device=device)


def _to_samples(op):
    return [SampleInput("float64->float32->", make_arg((3,), key=(op, 0)), None, "float64"),
            SampleInput("cpu->cpu", make_arg((2, 2), key=(op, 1)), "cpu")]


_to_copy = defop(
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None) -> Tensor",
    kernel=_to_copy_kernel, moves_device=True, meta=_to_copy_meta,
    grads={"self": lambda grad, self_options: _to_copy_backward(grad, self_options)},
    backward_name="ToCopyBackward0", supports_complex=True,
    samples=lambda op: [SampleInput("float64 copy", make_arg((3,), key=(op, 0)), dtype="float64"),
                        SampleInput("cpu->cpu", make_arg((2, 2), key=(op, 1)), device="cpu")],
    doc="A copy on another device and/or with another dtype (what `to` runs when something changes); "
        "the gradient goes back to the input's device and dtype.")


def _to(self, device, dtype, copy, memory_format):
    """PyTorch's `to`: `self` itself when nothing changes and no copy is asked for, else `_to_copy`."""
    dev, np_dtype = _target(self, device, dtype)
    if self._device.type == "meta":
        dev = self._device      # a graph being inferred stays on Meta: only the dtype changes
    fmt = memory_formats.from_arg(memory_format)
    # (to_will_alias: a format asked for is kept when it is the one self's strides suggest)
    same_format = fmt in (None, memory_formats.preserve_format) or getattr(self._data, "strides", None) is None \
        or memory_formats.suggest(self.shape, self.stride()) is fmt
    if dev is self._device and np_dtype == self._data.dtype and not copy and same_format:
        return self
    if np_dtype.kind not in "fc":
        # derivatives.yaml's output_differentiability for _to_copy, "!dtype || isDifferentiableType(*dtype)":
        # an integral or bool copy is outside the graph (x.long() does not require grad), so the copy is
        # made as under no_grad
        with _no_grad():
            return _to_copy(self, dtype=dtypes.from_numpy(np_dtype), device=dev, memory_format=fmt)
    return _to_copy(self, dtype=dtypes.from_numpy(np_dtype), device=dev, memory_format=fmt)


to = defop(
    "to(Tensor self, Device? device=None, ScalarType? dtype=None, bool copy=False, *, "
    "MemoryFormat? memory_format=None) -> Tensor",
    composite=_to, samples=_to_samples,
    torch="lambda x, device=None, dtype=None: x.to(device=device, dtype=getattr(torch, dtype) if dtype else None)",
    doc="Move to another device and/or dtype; the gradient moves back.")

detach = defop(
    "detach(Tensor self) -> Tensor",
    supports_complex=True, kernel=lambda xp, self: self, meta=pointwise_meta(),
    doc="A tensor sharing the data, outside the graph: no gradient flows through it.",
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)))], torch="torch.detach")


def _bitcast_target(dtype):
    return dtypes.from_name(dtype).np if isinstance(dtype, str) else dtype.np


def _bitcast_shape(self, dtype):
    """The viewed shape, after PyTorch's checks (view_dtype in TensorConversions.cpp)."""
    new = _bitcast_target(dtype)
    old, size = self.dtype.itemsize, new.itemsize
    if old == size:
        return tuple(self.shape)
    names = f"to view {scalar_type_name(self.dtype)} as {scalar_type_name(new)} (different element sizes)"
    if self.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {names}")
    strides = getattr(self, "strides", None)        # Meta arrays are contiguous
    step = strides[-1] // old if strides is not None and self.shape[-1] > 1 else 1
    if step != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {names}, but got {step}")
    last = self.shape[-1]
    if size > old:
        if last % (size // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {size // old} {names}, but got {last}")
        last //= size // old
    else:
        last *= old // size
    return tuple(self.shape[:-1]) + (last,)


def _bitcast_meta(self, dtype):
    return MetaArray(_bitcast_shape(self, dtype), _bitcast_target(dtype))


def _bitcast_kernel(xp, self, dtype):
    _bitcast_shape(self, dtype)
    if self.ndim and self.shape[-1] == 1 and self.dtype.itemsize != _bitcast_target(dtype).itemsize:
        self = self[..., :1]            # a size-1 last dim with any stride: make it a unit-stride one
    try:
        return self.view(_bitcast_target(dtype))
    except ValueError as e:             # other strides not multiples of the new element size
        raise RuntimeError(f"view(dtype): the strides of this tensor cannot be read as "
                           f"{scalar_type_name(_bitcast_target(dtype))}: {e}") from None


_view_dtype = defop(
    "_view_dtype(Tensor self, ScalarType dtype) -> Tensor",
    supports_complex=True, kernel=_bitcast_kernel, meta=_bitcast_meta,
    samples=lambda op: [
        SampleInput("float64 as int64", make_arg((2, 4), key=(op, 0), requires_grad=False), dtypes.int64),
        SampleInput("float64 as int32", make_arg((2, 4), key=(op, 1), requires_grad=False), dtypes.int32),
        SampleInput("float32 as float64", make_arg((3, 4), key=(op, 2), requires_grad=False,
                                                   dtype=dtypes.float32), dtypes.float64)],
    torch="lambda self, dtype: self.view(dtype)",
    doc="Tensor.view(dtype): self's memory read as dtype (no gradient); with a different element size the "
        "last dim (contiguous) is divided or multiplied by the size ratio.")
