"""torch.nn.Module (torch/nn/modules/module.py), with forward and backward hooks and, of the
state_dict hooks, the load_state_dict pre-hooks (the lazy modules' `_lazy_load_hook`).

A Module keeps three ordered dicts, filled by `__setattr__`: `_parameters` (a `Parameter`
assigned as an attribute), `_buffers` (`register_buffer`, e.g. BatchNorm's running
statistics) and `_modules` (a Module assigned as an attribute). Everything else walks
them: `named_parameters()` and `state_dict()` visit a module's own entries and then its
children's in registration order, joining names with "." — so the keys of a state dict
are PyTorch's keys (`0.weight`, `encoder.layers.1.bias`, `bn.num_batches_tracked`), and
`load_state_dict` reports missing, unexpected and mis-sized keys with PyTorch's messages.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import dtypes
from ..._device import device as Device
from ..._tensor import RemovableHandle, Tensor
from ...grad_mode import no_grad
from ...messages import size_repr as _size   # (other modules import it from here)
from ...optim.optimizer import zero_grads
from ..parameter import Buffer, Parameter, is_lazy
from .backward_hook import BackwardHook

__all__ = ["Module"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj) -> str:
    """torch.typename: a tensor's type name, else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return f"agrad.{type(obj).__name__}"
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:        # don't do anything for single-line stuff
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


class _Hook:
    """One registered forward (pre-)hook; a RemovableHandle removes this very entry."""
    __slots__ = ("fn", "with_kwargs")

    def __init__(self, fn, with_kwargs: bool):
        self.fn, self.with_kwargs = fn, with_kwargs


class Module:
    """Base class of every layer; subclasses set their parameters and children in
    `__init__` (after `super().__init__()`) and define `forward`."""

    _version: int = 1       # saved in state_dict()._metadata; BatchNorm uses it when loading
    training: bool
    call_super_init: bool = False
    _compiled_call_impl = None  # what compile() made of _call_impl; __call__ calls it instead

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        # NOTE: object.__setattr__, not self.x = …: Module.__setattr__ reads these dicts
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_backward_pre_hooks", [])
        object.__setattr__(self, "_backward_hooks", [])
        object.__setattr__(self, "_load_state_dict_pre_hooks", [])
        object.__setattr__(self, "_state_dict_hooks", [])
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        # NOTE: _call_impl's hook-free path, here too: a module without hooks costs one call, not two
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks):
            if hook.with_kwargs:
                args_kwargs_result = hook.fn(self, args, kwargs)
                if args_kwargs_result is not None:
                    if isinstance(args_kwargs_result, tuple) and len(args_kwargs_result) == 2:
                        args, kwargs = args_kwargs_result
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {args_kwargs_result}.")
            else:
                args_result = hook.fn(self, args)
                if args_result is not None:
                    args = args_result if isinstance(args_result, tuple) else (args_result,)
        backward_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward_hook = BackwardHook(self, list(self._backward_hooks), list(self._backward_pre_hooks))
            args = backward_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks):
            hook_result = hook.fn(self, args, kwargs, result) if hook.with_kwargs else hook.fn(self, args, result)
            if hook_result is not None:
                result = hook_result
        if backward_hook is not None:
            result = backward_hook.setup_output_hook(result)
        return result

    __call__ = _wrapped_call_impl

    def compile(self, *args, **kwargs) -> None:
        """Compile this Module's __call__ in place with agrad.compile, which takes the same arguments (and runs
        it eagerly): unlike agrad.compile(module), the module stays itself, state_dict keys and all."""
        import agrad
        self._compiled_call_impl = agrad.compile(self._call_impl, *args, **kwargs)

    def __getstate__(self) -> dict:
        # the compiled call is a closure over this module: a copy or an unpickled module is uncompiled, as torch's
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` once the gradients with respect to the module's inputs
        are computed (None for an input that is no tensor or requires none); what it returns, if not
        None, replaces grad_input. Returns a handle whose remove() unregisters it."""
        return self._register_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` when the gradients with respect to the module's outputs arrive;
        what it returns, if not None, replaces them."""
        return self._register_hook(self._backward_pre_hooks, hook, prepend)

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """`hook(module, args)` (or `(module, args, kwargs)`) before forward; what it returns,
        if not None, replaces the arguments. Returns a handle whose remove() unregisters it."""
        return self._register_hook(self._forward_pre_hooks, _Hook(hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """`hook(module, args, output)` (or `(module, args, kwargs, output)`) after forward;
        what it returns, if not None, replaces the output."""
        return self._register_hook(self._forward_hooks, _Hook(hook, with_kwargs), prepend)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False) -> RemovableHandle:
        """`hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`
        (the module first, `with_module`) before this module loads its own entries of a state dict."""
        return self._register_hook(self._load_state_dict_pre_hooks,
                                   functools.partial(hook, self) if with_module else hook, False)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after this module and its children have
        written their entries; a result that is not None replaces the state dict (PyTorch's private hook)."""
        return self._register_hook(self._state_dict_hooks, hook, False)

    @staticmethod
    def _register_hook(hooks: list, entry: _Hook, prepend: bool) -> RemovableHandle:
        if prepend:
            hooks.insert(0, entry)
        else:
            hooks.append(entry)
        return RemovableHandle(hooks, entry)

    # -- registration ------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        elif not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        elif "." in name:
            raise KeyError('buffer name can\'t contain "."')
        elif name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        elif hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        elif tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        elif not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        elif "." in name:
            raise KeyError('parameter name can\'t contain "."')
        elif name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        elif hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        elif not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        elif hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        elif "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        elif name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    # -- attribute access --------------------------------------------------------------
    def __getattr__(self, name: str):
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        def remove_from(*dicts_or_sets) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    # a Buffer brings its own persistence; a plain Tensor keeps the registered one's
                    persistent = (value.persistent if isinstance(value, Buffer)
                                  else name not in self._non_persistent_buffers_set)
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    # -- walking the tree --------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True):
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda module: module._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _name, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda module: module._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        for _name, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True):
        for _name, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients -----------------------------------------------------------
    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    # -- devices and dtypes --------------------------------------------------------------
    def _apply(self, fn, recurse: bool = True):
        """Convert every parameter, gradient and buffer with `fn`. As PyTorch does by default,
        a parameter keeps its identity (its `.data` is replaced), so an optimizer built
        before `model.to(...)` still holds the model's parameters."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """`to(device)`, `to(dtype)`, `to(tensor)`, `to(device, dtype)`: floating-point
        parameters and buffers take the dtype; every one takes the device."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = Device(a)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True):
        """Every parameter and buffer replaced by uninitialised storage of its shape on `device`
        (how a module built on the meta device gets real tensors)."""
        from ...creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(0 if device is None else device))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    # -- state_dict ----------------------------------------------------------------------
    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if getattr(self.__class__, "get_extra_state", Module.get_extra_state) is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by their dotted names; tensors are detached
        aliases of the module's own (not copies) unless `keep_vars`."""
        if len(args) > 0:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self.__dict__.get("_state_dict_hooks", ()):
            hook_result = hook(self, destination, prefix, local_metadata)
            if hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        for hook in list(self._load_state_dict_pre_hooks):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in [*self._parameters.items(), *persistent_buffers.items()] if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, Tensor):
                    error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                      f"Tensor-like object from checkpoint but received {type(input_param)}")
                    continue
                # NOTE: an uninitialized parameter (a lazy module's) takes whatever it is given; an
                # uninitialized one given to an initialized parameter raises at `.shape`, as in PyTorch
                is_param_lazy = is_lazy(param)
                if (not is_param_lazy and len(param.shape) == 0 and len(input_param.shape) == 1
                        and input_param.shape[0] == 1):
                    input_param = input_param[0]      # a 0-d parameter saved as a 1-element vector
                if not is_param_lazy and input_param.shape != param.shape:
                    error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                      f"{_size(input_param.shape)} from checkpoint, the shape in current model is "
                                      f"{_size(param.shape)}.")
                    continue
                try:
                    with no_grad():
                        if assign:
                            if isinstance(param, Parameter) and not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            elif isinstance(param, Parameter):
                                input_param.requires_grad_(param.requires_grad)
                            setattr(self, name, input_param)
                        else:
                            param.copy_(input_param)
                except Exception as ex:
                    error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                      f"are {_size(param.shape)} and whose dimensions in the checkpoint are "
                                      f"{_size(input_param.shape)}, an exception occurred : {ex.args}.")
            elif strict:
                missing_keys.append(key)

        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and (extra_state_key in state_dict):
            unexpected_keys.append(extra_state_key)

        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy `state_dict`'s tensors into this module's parameters and buffers, in place
        (or make them the module's, with `assign=True`); returns the missing and unexpected
        keys, and raises PyTorch's RuntimeError listing them when `strict`."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix="") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            # NOTE: as PyTorch: each module checks strictly; `strict` only decides whether that raises
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)

        load(self, state_dict)
        if strict:
            if len(unexpected_keys) > 0:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if len(missing_keys) > 0:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if len(error_msgs) > 0:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- printing ------------------------------------------------------------------------
    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


Module.__module__ = "agrad.nn"
