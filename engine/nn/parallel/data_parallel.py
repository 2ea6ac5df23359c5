"""torch.nn.parallel.DataParallel and data_parallel (torch/nn/parallel/data_parallel.py), as they
run where agrad runs.

Without an accelerator PyTorch's DataParallel holds the module and calls it as it is (`device_ids`
empty), and data_parallel refuses ("device type could not be determined"): code written for a
GPU machine runs unchanged on a CPU one, its state_dict keys under `module.`. With CUDA (CuPy)
the module moves to device_ids[0] and each call's tensors to that device, which is what PyTorch
does for one device id; more than one would need replicas run in parallel threads and their
outputs gathered, which agrad does not build (a NotImplementedError says so)."""
from __future__ import annotations

from itertools import chain
from typing import Any

from ... import cuda
from ..._device import device as _device
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_index(x) -> int:
    """torch's _get_device_index(x, optional=True) for a CUDA id: an int, or a device's index (0 if none)."""
    if isinstance(x, int):
        return x
    d = _device(x)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index or 0


def _one_device(device_ids, output_device) -> tuple[list[int], int]:
    ids = [0] if device_ids is None else [_device_index(x) for x in device_ids]
    if not ids:
        raise RuntimeError("no available devices were found")
    if len(ids) > 1:
        raise NotImplementedError(f"DataParallel over device_ids {ids}: agrad runs a module on one device; "
                                  "replicas on several GPUs and the gathering of their outputs are not built")
    return ids, ids[0] if output_device is None else _device_index(output_device)


def _to(value, device):
    """`value`'s tensors moved to `device` (the scatter of one device: nothing is split), differentiably.
    (agrad.func.pytree's tree_map walks the same containers, but agrad.func imports agrad.nn: the layering
    test refuses the cycle an import of it here would close.)"""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):       # a namedtuple keeps its type
        return type(value)(*(_to(v, device) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _to(v, device)) for k, v in value.items())
    return value


def _check_on(module: Module, device) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != device:
            raise RuntimeError(f"module must have its parameters and buffers on device {device} (device_ids[0]) "
                               f"but found one of them on device: {t.device}")


class DataParallel(Module):
    """torch.nn.DataParallel: `module` called on the batch (see the module docstring for devices)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        self.dim = dim
        self.module = module
        self.device_ids, self.output_device = _one_device(device_ids, output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))


def data_parallel(module: Module, inputs: Any, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs: Any | None = None):
    """torch.nn.parallel.data_parallel: `module(*inputs, **module_kwargs)` on device_ids[0]."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    ids, _ = _one_device(device_ids, output_device)
    src = _device("cuda", ids[0])
    _check_on(module, src)
    return module(*_to(inputs, src), **_to(module_kwargs or {}, src))
