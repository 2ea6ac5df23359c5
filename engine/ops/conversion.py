"""`to` (device and dtype moves, whose backward moves the gradient back) and `detach`.

As in PyTorch, `to` is a composite: the tensor itself when nothing changes, else `_to_copy`,
the one op whose output lives on another backend than its input (`moves_device`: its kernel
takes Tensors), whose ToCopyBackward0 sends the gradient back to the input's device and dtype.
"""
from __future__ import annotations

from .. import dtypes
from .._device import device as Device
from .._tensor import Tensor
from ..backends.meta import MetaArray
from ..shapes import pointwise_meta
from .registry import defop
from .samples import SampleInput, make_arg


def _np_dtype(current, dtype):
    return current if dtype is None else (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_name(str(dtype))).np


def _target(self: Tensor, device, dtype):
    return (self._device if device is None else Device(device)), _np_dtype(self._data.dtype, dtype)


def _to_copy_meta(self, dtype, device):
    # NOTE: on Meta a move is only a dtype change: the graph being inferred stays on Meta
    if device is not None:
        Device(device)         # still reject a malformed device string
    return MetaArray(self.shape, _np_dtype(self.dtype, dtype))


def _to_copy_kernel(self, dtype, device):
    dev, np_dtype = _target(self, device, dtype)
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
    else:
        data = data.astype(np_dtype)
    return Tensor._make(data, dev, dst.key)


def _to_samples(op):
    return [SampleInput("float64->float32->", make_arg((3,), key=(op, 0)), None, "float64"),
            SampleInput("cpu->cpu", make_arg((2, 2), key=(op, 1)), "cpu")]


_to_copy = defop(
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    kernel=_to_copy_kernel, moves_device=True, meta=_to_copy_meta,
    grads={"self": lambda grad, self_options: _to_copy(grad, dtype=self_options[1], device=self_options[0])},
    backward_name="ToCopyBackward0",
    samples=lambda op: [SampleInput("float64 copy", make_arg((3,), key=(op, 0)), dtype="float64"),
                        SampleInput("cpu->cpu", make_arg((2, 2), key=(op, 1)), device="cpu")],
    doc="A copy on another device and/or with another dtype (what `to` runs when something changes); "
        "the gradient goes back to the input's device and dtype.")


def _to(self, device, dtype, copy):
    """PyTorch's `to`: `self` itself when nothing changes and no copy is asked for, else `_to_copy`."""
    dev, np_dtype = _target(self, device, dtype)
    if self._device.type == "meta":
        dev = self._device      # a graph being inferred stays on Meta: only the dtype changes
    if dev is self._device and np_dtype == self._data.dtype and not copy:
        return self
    return _to_copy(self, dtype=dtypes.from_numpy(np_dtype), device=dev)


to = defop(
    "to(Tensor self, Device? device=None, ScalarType? dtype=None, bool copy=False) -> Tensor",
    composite=_to, samples=_to_samples,
    torch="lambda x, device=None, dtype=None: x.to(device=device, dtype=getattr(torch, dtype) if dtype else None)",
    doc="Move to another device and/or dtype; the gradient moves back.")

detach = defop(
    "detach(Tensor self) -> Tensor",
    kernel=lambda xp, self: self, meta=pointwise_meta(),
    doc="A tensor sharing the data, outside the graph: no gradient flows through it.",
    samples=lambda op: [SampleInput("(3,)", make_arg((3,), key=(op, 0)))], torch="torch.detach")
