"""torch.optim.Optimizer: parameter groups, per-parameter state, zero_grad, state_dict.

Every algorithm is the single-tensor ("foreach=False") path of its PyTorch file, the path
PyTorch itself takes for CPU tensors: the same in-place ops in the same order, under
no_grad, so parameters after N steps match torch.optim to float32 rounding.
"""
from __future__ import annotations

import copy
import functools
from collections import defaultdict
from itertools import chain

from .. import dtypes
from .._tensor import Tensor
from ..creation import tensor
from ..grad_mode import enable_grad, no_grad

__all__ = ["Optimizer", "required", "check_betas", "single_tensor_only"]


class _RequiredParameter:
    """Singleton for a hyper-parameter a group must give (SGD's `lr` in old PyTorch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _use_no_grad(step):
    """Run `step` under no_grad, as PyTorch's `_use_grad_for_differentiable` does when
    differentiable=False."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with no_grad():
            return step(self, *args, **kwargs)
    return wrapper


class Optimizer:
    """Base class: holds `param_groups` (a list of dicts, `params` plus hyper-parameters)
    and `state` (a dict from parameter to its buffers)."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    def __setstate__(self, state):
        self.__dict__.update(state)

    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter "
                                 + name)
            param_group.setdefault(name, default)
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in existing for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state_dict ------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}: parameters
        are replaced by their position across all groups, as PyTorch's are."""
        mapping: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                # NOTE: as PyTorch: `step` keeps its own dtype; other buffers follow the parameter's
                if key == "step":
                    return value.clone()
                dtype = param.dtype if param.is_floating_point() else value.dtype
                return value.to(device=param.device, dtype=dtype, copy=True)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):        # LBFGS's history: lists of tensors
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
        self.__setstate__({"state": state, "param_groups": saved_groups})


def single_tensor_only(name: str, differentiable=False, capturable=False, fused=None) -> None:
    """torch.optim's switches for other implementations of the same step. `foreach` is taken
    and ignored (the multi-tensor path computes the same step); these are refused."""
    for flag, value in (("differentiable", differentiable), ("capturable", capturable), ("fused", fused)):
        if value:
            raise ValueError(f"{name}: {flag}=True is not supported; agrad runs torch's single-tensor step "
                             "(no autograd through the update, no CUDA graphs, no fused kernels)")


def check_betas(lr, eps, betas, weight_decay) -> None:
    """The checks, in order and in words, of every Adam-family constructor in torch.optim."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _scalar_dtype():
    """PyTorch's _get_scalar_dtype: the dtype of an optimizer's scalar state (steps, asgd's eta and mu,
    nadam's mu_product): float64 where the default dtype is, else float32."""
    return dtypes.float64 if dtypes.get_default_dtype() == dtypes.float64 else dtypes.float32


def _float_state(param) -> Tensor:
    """PyTorch's `state['step']`: a 0-d tensor of _scalar_dtype on the CPU, whatever the parameter."""
    return tensor(0.0, dtype=_scalar_dtype())


def zero_grads(params, set_to_none: bool = True) -> None:
    """Optimizer.zero_grad and Module.zero_grad: each `.grad` dropped, or zeroed in place outside
    the graph (torch's zero_grad)."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()
