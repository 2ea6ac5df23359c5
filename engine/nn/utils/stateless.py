"""torch.nn.utils.stateless.functional_call (torch/nn/utils/stateless.py with the
NamedMemberAccessor of _named_member_accessor.py): a module called with some of its parameters and
buffers replaced, by dotted name, for the call only. Each name is swapped in its submodule's
_parameters or _buffers (any other attribute by setattr) and swapped back afterwards, also when
the call raises; with tie_weights, a value given for one name of tied tensors (one tensor under
several names) is used for all of them."""
from __future__ import annotations

import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _get_submodule(module, memo: dict, name: str):
    from ..modules.module import Module
    if not name:
        return module
    if name in memo:
        return memo[name]
    prefix, dot, attr = name.rpartition(".")
    parent = _get_submodule(module, memo, prefix) if dot else module
    try:
        submodule = getattr(parent, attr)
    except AttributeError as ex:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
    if not isinstance(submodule, Module):
        raise TypeError(f"submodule `{name}`: {submodule} is not an instance of torch.nn.Module")
    memo[name] = submodule
    return submodule


def _swap_tensor(module, name: str, tensor):
    """Put `tensor` (or _MISSING: nothing) under `name` in `module`; return what was there."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for table in (module._parameters, module._buffers):
        if name in table:
            orig_tensor = table[name]
            if tensor is not _MISSING:
                table[name] = tensor
            else:
                del table[name]
            return orig_tensor
    orig_tensor = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig_tensor is not _MISSING and not isinstance(orig_tensor, Tensor) and orig_tensor is not None:
        raise TypeError(f"attribute `{name}`: {orig_tensor} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig_tensor


def _swap_tensors_dict(module, memo: dict, named_tensors: dict) -> dict:
    """Swap every entry in; on an error, swap back what was swapped and re-raise."""
    orig_named_tensors = {}
    try:
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            orig_named_tensors[name] = _swap_tensor(_get_submodule(module, memo, prefix), attr, tensor)
    except Exception:
        for name, orig_tensor in orig_named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            _swap_tensor(_get_submodule(module, memo, prefix), attr, orig_tensor)
        raise
    return orig_named_tensors


def _untie_named_tensors_map(module, parameters_and_buffers: dict) -> dict:
    """parameters_and_buffers with each given tied name's value under all its tied names."""
    all_named_tensors = {}
    all_named_tensors.update(module.named_parameters(remove_duplicate=False))
    all_named_tensors.update(module.named_buffers(remove_duplicate=False))
    tensor_to_tied_names_map: dict = {}
    for name, tensor in all_named_tensors.items():
        tensor_to_tied_names_map.setdefault(id(tensor), set()).add(name)
    tied_names_map = {}
    for tied_names in tensor_to_tied_names_map.values():
        if len(tied_names) > 1:
            for tied_name in tied_names:
                tied_names_map[tied_name] = tied_names
    given_names = set(parameters_and_buffers.keys())
    given_names_for_tied_tensors = {name for name in given_names if name in tied_names_map}
    for given_name in given_names_for_tied_tensors:
        tied_names = tied_names_map[given_name]
        if (len(tied_names.intersection(given_names_for_tied_tensors)) > 1
                and len({id(parameters_and_buffers[n]) for n in tied_names if n in parameters_and_buffers}) != 1):
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied_parameters_and_buffers = parameters_and_buffers.copy()
    for given_name in given_names_for_tied_tensors:
        for tied_name in tied_names_map[given_name]:
            untied_parameters_and_buffers[tied_name] = parameters_and_buffers[given_name]
    return untied_parameters_and_buffers


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers: dict, tie_weights: bool = False, strict: bool = False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        keys = set(untied)
        valid_keys = {name for name, _ in module.named_parameters(remove_duplicate=False)}
        valid_keys |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
        missing_keys, unexpected_keys = sorted(valid_keys - keys), sorted(keys - valid_keys)
        error_msgs = []
        if len(unexpected_keys) > 0:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if len(missing_keys) > 0:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if len(error_msgs) > 0:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(error_msgs)))
    memo: dict = {}
    orig_parameters_and_buffers: dict = {}
    try:
        orig_parameters_and_buffers = _swap_tensors_dict(module, memo, untied)
        yield
    finally:
        new_parameters_and_buffers = _swap_tensors_dict(module, memo, orig_parameters_and_buffers)
        # NOTE: as torch: a tensor the call replaced in the module (a buffer assigned in forward) is
        # given back to the caller's dict
        parameters_and_buffers.update({k: new_parameters_and_buffers[k] for k in parameters_and_buffers
                                       if k in new_parameters_and_buffers})


def functional_call(module, parameters_and_buffers: dict, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with `parameters_and_buffers` (dotted name -> tensor) in place of the
    module's own for the call; gradients flow to the given tensors."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers: dict, args=None, kwargs=None, *, tie_weights: bool = True,
                     strict: bool = False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
