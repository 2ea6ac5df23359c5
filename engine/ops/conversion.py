"""`to` (device and dtype moves, whose backward moves the gradient back) and `detach`.

`to` is the one op whose output lives on another backend than its input, so its
kernels are written by hand against the dispatcher instead of through defop.
"""
from __future__ import annotations

from .. import dtypes
from .._device import device as Device
from .._tensor import Tensor
from ..autograd.node import Node, gradient_edge, record
from ..dispatch_keys import AUTOGRAD
from ..dispatcher import DispatchKey, define, impl
from ..shapes import pointwise_meta
from .registry import OpInfo, _infos, defop
from .samples import SampleInput, make_arg


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
    node.self_device, node.self_dtype = self._device, self._data.dtype
    record(node, [edge], [out])
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
