"""torch.nn.utils.weight_norm and remove_weight_norm (torch/nn/utils/weight_norm.py), the hook
API that parametrizations.weight_norm replaces: the parameter <name> becomes <name>_g (its norm
over every dim but `dim`) and <name>_v (its direction), and a forward pre-hook recomputes the
plain attribute <name> = v · g / ‖v‖ before every call. Also ATen's norm_except_dim and
_weight_norm (aten/src/ATen/native/WeightNorm.cpp), which both weight_norm APIs compute with."""
from __future__ import annotations

import warnings

from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow: float = 2, dim: int = 0):
    """The `pow`-norm of v over every dim but `dim`, shaped to broadcast against v (dim=-1: the
    norm of all of v, a 0-d tensor)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        output_size = [v.size(0)] + [1] * (v.dim() - 1)
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(output_size)
    if dim == v.dim() - 1:
        output_size = [1] * (v.dim() - 1) + [v.size(v.dim() - 1)]
        return v.contiguous().view(-1, v.size(v.dim() - 1)).norm(pow, 0).view(output_size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim: int = 0):
    """torch._weight_norm: v scaled to norm g along `dim` (its fused kernel's value, written with
    differentiable ops, as ATen's own fallback is)."""
    if v.device != g.device:
        raise RuntimeError(f"weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
                           f"{v.device} and g_in is on {g.device}")
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of one weight-normalised parameter."""

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks:
            if isinstance(hook.fn, WeightNorm) and hook.fn.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying weight normalization")
        # remove w from the parameter list; add g and v as new parameters
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """module.<name> recomputed before every forward as <name>_v · <name>_g / ‖<name>_v‖, the norm
    taken over every dim but `dim` (dim=None: over all)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """The weight normalisation of module.<name> removed: <name> is a Parameter of its current value."""
    for k, hook in enumerate(module._forward_pre_hooks):
        if isinstance(hook.fn, WeightNorm) and hook.fn.name == name:
            hook.fn.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
