"""Conversions and copies (ATen's TensorConversions, Copy): `to` (device and dtype moves,
whose backward moves the gradient back), `detach`, `clone`, `contiguous`, `copy` (the op
behind `copy_`), and `_view_dtype`, Tensor.view(dtype): the same memory read as another
dtype (PyTorch's view.dtype).

`to` is the one op whose output lives on another backend than its input, so its
kernels are written by hand against the dispatcher instead of through defop.

No gradient flows through `_view_dtype` (PyTorch marks its output non-differentiable). The
result shares self's memory; NOTE: it is not registered as an autograd view (PyTorch's is
a non-differentiable view sharing the version counter), so in-place ops on it do not bump
self's version. With a different element size the last dim shrinks or grows by the
ratio, which needs it contiguous and divisible, as in PyTorch.
"""
from __future__ import annotations

from .. import dtypes
from .._device import device as Device
from .._tensor import Tensor
from ..autograd.node import Node, gradient_edge, set_history
from ..backends.meta import MetaArray
from ..creation import zeros_like
from ..dispatch_keys import AUTOGRAD
from ..dispatcher import DispatchKey, define, impl
from ..messages import scalar_type_name
from ..shapes import broadcast_shapes, pointwise_meta
from .registry import OpInfo, _infos, defop
from .samples import SampleInput, make_arg

# ---- clone, contiguous, copy ----------------------------------------------------------------


def _clone_kernel(xp, self, memory_format):
    if memory_format not in (None, "preserve_format", "contiguous_format"):
        raise RuntimeError(f"unsupported memory format {memory_format!r}: 'preserve_format' or "
                           f"'contiguous_format'")
    return xp.array(self, copy=True, order="C" if memory_format == "contiguous_format" else "K")


clone = defop(
    "clone(Tensor self, *, str? memory_format=None) -> Tensor",
    kernel=_clone_kernel, meta=lambda self, memory_format: MetaArray(self.shape, self.dtype),
    grads={"self": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3)", make_arg((2, 3), key=(op, 0))),
                        SampleInput("0-d", make_arg((), key=(op, 1))),
                        SampleInput("T (3,2) contiguous_format", make_arg((3, 2), key=(op, 2), transposed=True),
                                    memory_format="contiguous_format")],
    torch="lambda x, memory_format=None: x.clone(memory_format=torch.contiguous_format) "
          "if memory_format == 'contiguous_format' else x.clone()",
    doc="A copy with its own memory (the same strides unless memory_format='contiguous_format').")


def _contiguous(self):
    flags = getattr(self._data, "flags", None)
    if flags is None or flags.c_contiguous:
        return self            # NOTE: PyTorch returns the tensor itself: no node is recorded
    return clone(self, memory_format="contiguous_format")


contiguous = defop(
    "contiguous(Tensor self) -> Tensor",
    composite=_contiguous,
    samples=lambda op: [SampleInput("(2,3) already", make_arg((2, 3), key=(op, 0))),
                        SampleInput("T (3,2)", make_arg((3, 2), key=(op, 1), transposed=True))],
    torch="lambda x: x.contiguous()",
    doc="self when its memory is already C-contiguous, else a contiguous clone (CloneBackward0).")


def _copy_kernel(xp, self, src):
    return xp.array(xp.broadcast_to(src.astype(self.dtype, copy=False), self.shape), copy=True)


def _copy_meta(self, src):
    broadcast_shapes(self.shape, src.shape)
    if broadcast_shapes(self.shape, src.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(self.shape, src.shape))}")
    return MetaArray(self.shape, self.dtype)


copy = defop(
    "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    kernel=lambda xp, self, src, non_blocking: _copy_kernel(xp, self, src),
    meta=lambda self, src, non_blocking: _copy_meta(self, src),
    # NOTE: src's gradient is grad itself: the engine casts it to src's dtype and sums out broadcast
    # dimensions, so nothing of src is saved (an in-place write into src's memory stays legal)
    grads={"self": lambda grad: zeros_like(grad), "src": lambda grad: grad},
    samples=lambda op: [SampleInput("(2,3) <- (3,)", make_arg((2, 3), key=(op, 0)), make_arg((3,), key=(op, 1))),
                        SampleInput("(2,2) <- (2,2)", make_arg((2, 2), key=(op, 2)), make_arg((2, 2), key=(op, 3)))],
    backward_name="CopyBackwards",
    torch="lambda self, src, non_blocking=False: self.clone().copy_(src)",
    doc="src cast to self's dtype and broadcast to its shape (the pure form of copy_).")


def _target(self: Tensor, device, dtype):
    dev = self._device if device is None else Device(device)
    np_dtype = self._data.dtype if dtype is None else (
        dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype))).np
    return dev, np_dtype


def _to_meta(op, keyset, args):
    # NOTE: on Meta a move is only a dtype change: the graph being inferred stays on Meta
    self, device, dtype, copy = args
    if device is not None:
        Device(device)         # still reject a malformed device string
    _, np_dtype = _target(self, None, dtype)
    if np_dtype == self._data.dtype and not copy:
        return self
    return Tensor._make(self._data.astype(np_dtype), self._device, self._device.backend.key)


def _to_kernel(op, keyset, args):
    self, device, dtype, copy = args
    dev, np_dtype = _target(self, device, dtype)
    if dev is self._device and np_dtype == self._data.dtype and not copy:
        return self
    src, dst = self._device.backend, dev.backend
    data = self._data
    if dev is not self._device:
        if dev.type != "meta" and dev.type != "cpu":
            dst.check_device(dev)
        if src.type == "meta" and dst.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data! Please use agrad.empty_like() "
                                      "instead of to() when moving a meta tensor to another device.")
        host = data if src.type == "meta" else src.to_numpy(data)
        data = dst.asarray(host, np_dtype, dev)
    elif np_dtype != data.dtype or copy:
        data = data.astype(np_dtype)
    return Tensor._make(data, dev, dst.key)


class ToCopyBackward0(Node):
    """The gradient goes back to the input's device and dtype."""
    __slots__ = ("self_device", "self_dtype")

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None]
        return [to(grad, device=self.self_device, dtype=dtypes.from_numpy(self.self_dtype))]


def _to_autograd(op, keyset, args):
    out = op.redispatch(keyset & ~AUTOGRAD, args)
    self = args[0]
    if out is self:
        return out
    edge = gradient_edge(self)
    if edge.function is None or out._data.dtype.kind != "f":
        return out
    node = ToCopyBackward0()
    node.set_next_edges([edge])
    node.self_device, node.self_dtype = self._device, self._data.dtype
    set_history(out, node)
    return out


_entry = define("to(Tensor self, Device? device=None, ScalarType? dtype=None, bool copy=False) -> Tensor",
                doc="Move to another device and/or dtype; the gradient moves back.")
impl("to", DispatchKey.CPU, _to_kernel)
impl("to", DispatchKey.CUDA, _to_kernel)
impl("to", DispatchKey.Meta, _to_meta)
impl("to", DispatchKey.Autograd, _to_autograd)
to = _entry.function


def _to_samples(op):
    return [SampleInput("float64->float32->", make_arg((3,), key=(op, 0)), None, "float64"),
            SampleInput("cpu->cpu", make_arg((2, 2), key=(op, 1)), "cpu")]


_entry.info = _infos["to"] = OpInfo(
    _entry, kernel=None, meta=None, promote=None, grads=None, composite=None, samples=_to_samples,
    backward_names=["ToCopyBackward0"], overload=None, differentiable=True, gradgrad=True,
    torch="lambda x, device=None, dtype=None: x.to(device=device, dtype=getattr(torch, dtype) if dtype else None)",
    tags=())

detach = defop(
    "detach(Tensor self) -> Tensor",
    kernel=lambda xp, self: self, meta=pointwise_meta(),
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
    kernel=_bitcast_kernel, meta=_bitcast_meta,
    samples=lambda op: [
        SampleInput("float64 as int64", make_arg((2, 4), key=(op, 0), requires_grad=False), dtypes.int64),
        SampleInput("float64 as int32", make_arg((2, 4), key=(op, 1), requires_grad=False), dtypes.int32),
        SampleInput("float32 as float64", make_arg((3, 4), key=(op, 2), requires_grad=False,
                                                   dtype=dtypes.float32), dtypes.float64)],
    torch="lambda self, dtype: self.view(dtype)",
    doc="Tensor.view(dtype): self's memory read as dtype (no gradient); with a different element size the "
        "last dim (contiguous) is divided or multiplied by the size ratio.")
