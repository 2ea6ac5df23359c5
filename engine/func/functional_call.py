"""torch.func.functional_call and stack_module_state (PyTorch 2.13's torch/_functorch/functional_call.py).

functional_call is nn.utils.stateless's, one mechanism: this one only also takes several dicts (keys
in more than one of them are an error) and does not warn, as torch.func's does not.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..dispatcher import ops as _ops
from ..nn.utils.stateless import _functional_call

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with the tensors of parameter_and_buffer_dicts (a dict, or a sequence of
    dicts, of dotted name -> tensor) in place of the module's own parameters and buffers for the call."""
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated_keys = [key for key, n in counts.items() if n > 1]
        if len(repeated_keys) > 0:
            raise ValueError(f"{repeated_keys} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """(params, buffers): each name's tensors of all the models stacked along a new first dimension, for
    vmap over an ensemble with functional_call; stacked parameters are new leaves."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    model0_typ = type(models[0])
    if not all(type(m) is model0_typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(model.named_parameters()) for model in models]
    params = {k: _construct_stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {k: _construct_stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def _construct_stacked_leaf(tensors, name: str):
    all_requires_grad = all(t.requires_grad for t in tensors)
    if not all_requires_grad and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = _ops.stack(list(tensors))
    if all_requires_grad:
        result = result.detach().requires_grad_()
    return result
