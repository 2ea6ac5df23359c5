"""torch.nn.utils.convert_parameters (torch/nn/utils/convert_parameters.py): parameters flattened
into one vector and a vector's slices made the parameters' data again, in the parameters' order;
both refuse parameters on different devices."""
from __future__ import annotations

from ..._tensor import Tensor
from ...ops import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """One vector: each parameter viewed flat, concatenated."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Give each parameter, in order, the next numel() values of `vec` as its data (views of vec)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _typename(obj) -> str:
    from ..modules.module import _typename as typename
    return typename(obj)


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The CUDA index of the parameters so far (-1: the CPU); a parameter elsewhere raises."""
    support_device_types = ["cuda"]
    if old_param_device is None:
        old_param_device = param.get_device() if param.device.type in support_device_types else -1
    else:
        if param.device.type in support_device_types:
            warn = param.get_device() != old_param_device
        else:
            warn = old_param_device != -1
        if warn:
            raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
