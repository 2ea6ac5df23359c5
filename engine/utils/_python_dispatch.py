"""Dispatch modes, as torch.utils._python_dispatch: an object whose `__torch_dispatch__(func, types,
args, kwargs)` is handed every op call made while it is pushed, below Autograd, and returns the call's
result in its place (it may run `func(*args, **kwargs)` itself, or not).

The dispatcher's Python key does it (dispatch_keys.py): while the thread's mode stack is not empty the
key is in every call's key set, and its fallback here hands the call to the innermost mode, popped for
the time of the call, as PyTorch's: ops the mode runs go to the modes below it, then to the kernels.
Autograd has recorded its Node by then, so the mode sees the ops of the recorded graph (a composite
op's parts, not the composite) and what it returns is what autograd wraps; the keys above Python
(autograd, forward AD, inference mode) stay excluded while it runs, as beneath PyTorch's VariableType.
`func` is the op's OpOverload (dispatcher/overloads.py), `args` its positional arguments and `kwargs`
its keyword-only ones. Off, the stack costs a call nothing: the key is not in its key set.

A Tensor subclass whose `__torch_dispatch__` is its own (a classmethod, not Tensor's disabled one) gets the
same key on each of its instances (_tensor.Tensor._make), so every op on one reaches this fallback too: the
innermost mode first, as PyTorch's pythonFallback, then each such argument's class, a subclass before its
base, with `types` the classes of those arguments; NotImplemented from one tries the next, and if all
decline, PyTorch's TypeError names them. A wrapper subclass (`Tensor._make_wrapper_subclass`) holds no data:
its handler runs each op on the tensors it wraps. `no_dispatch()` (_mode_utils) skips the key for a block.
"""
from __future__ import annotations

import threading

from ..dispatch_keys import AUTOGRAD, FORWARD_AD, INFERENCE, PYTHON, DispatchKey
from ..dispatcher import register_fallback
from ..dispatcher.overloads import OpOverload
from ..overrides import _call_form
from ..grad_mode import ExcludeDispatchKeyGuard, tls
from .._tensor import Tensor

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack", "_push_mode",
           "_pop_mode", "_DisableTorchDispatch", "is_traceable_wrapper_subclass", "transform_subclass",
           "return_and_correct_aliasing"]

_ABOVE_PYTHON = AUTOGRAD | FORWARD_AD | INFERENCE


class _ModeStack(threading.local):
    def __init__(self):
        self.modes: list = []


_stack = _ModeStack()


def _sync_key() -> None:
    tls.included = (tls.included | PYTHON) if _stack.modes else (tls.included & ~PYTHON)


def _push_mode(mode) -> None:
    _stack.modes.append(mode)
    _sync_key()


def _pop_mode():
    if not _stack.modes:
        raise AssertionError("Trying to pop from an empty mode stack")
    mode = _stack.modes.pop()
    _sync_key()
    return mode


def _get_current_dispatch_mode():
    """The innermost mode pushed, or None."""
    return _stack.modes[-1] if _stack.modes else None


def _get_current_dispatch_mode_stack() -> list:
    return list(_stack.modes)


class _DisableTorchDispatch(ExcludeDispatchKeyGuard):
    """torch._C._DisableTorchDispatch (torch.utils._mode_utils.no_dispatch): for the block, calls skip the
    Python key: neither a mode nor a subclass's handler sees them (a handler runs its op so on what it holds)."""

    def __init__(self):
        super().__init__(PYTHON)


class TorchDispatchMode:
    """Subclass and define `__torch_dispatch__(self, func, types, args=(), kwargs=None)`; `with mode:`
    pushes it for the block (torch.utils._python_dispatch.TorchDispatchMode)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        mode = _pop_mode()
        if mode is not self:
            raise AssertionError("a dispatch mode must be exited in the order it was entered")
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def is_traceable_wrapper_subclass(t) -> bool:
    """Whether `t` is an instance of a Tensor subclass that says what it wraps: `__tensor_flatten__()` gives
    (the names of its inner tensors, a context), `__tensor_unflatten__(inner, context, outer_size,
    outer_stride)` makes one again from them (torch.utils._python_dispatch's)."""
    return isinstance(t, Tensor) and type(t) is not Tensor and hasattr(t, "__tensor_flatten__") and \
        hasattr(t, "__tensor_unflatten__")


def transform_subclass(t, callback, outer_size=None, outer_stride=None):
    """A new instance of t's class whose inner tensors are `callback(name, inner)` of t's (torch's)."""
    outer_size = outer_size if outer_size is not None else t.size()
    outer_stride = outer_stride if outer_stride is not None else t.stride()
    names, ctx = t.__tensor_flatten__()
    transformed = {name: callback(name, getattr(t, name)) for name in names}
    return type(t).__tensor_unflatten__(transformed, ctx, outer_size, outer_stride)


def return_and_correct_aliasing(func, args, kwargs, out):
    """What a wrapper subclass's handler returns for `func`: torch's makes an in-place or out= op return the
    tensor it wrote (not the new wrapper the handler made) and a view's result share its base's storage.
    Here neither arises: every op agrad dispatches is functional (an in-place method or an out= call runs its
    out-of-place op and writes the result above the dispatcher: autograd/inplace.py, dispatcher.call_with_out)
    and a wrapper has no storage to share, so the handler's result is the op's, as it is."""
    if not isinstance(func, OpOverload):
        raise TypeError(f"return_and_correct_aliasing expects an OpOverload, got {type(func).__name__}")
    return out


def _split(op, args: list) -> tuple:
    """The call's arguments as PyTorch hands them to a handler (torch::jit's parseIValuesToPyArgsKwargs): the
    positional ones up to the last given a value other than its default, the keyword-only ones given such a
    value (overrides._call_form: what a __torch_function__ handler gets), int lists as lists."""
    lists = op.intlist_positions
    if lists:
        args = [list(a) if i in lists and a.__class__ is tuple else a for i, a in enumerate(args)]
    positional, kwargs = _call_form(op, args)
    return positional, kwargs or {}


def _overloaded_args(op, args: list) -> list:
    """The arguments whose class has a `__torch_dispatch__` (those carrying the Python key), one per class, in
    the order their handlers are tried: a subclass before its base, otherwise left to right (torch's
    append_overloaded_tensor, as overrides._get_overloaded_args orders __torch_function__'s)."""
    found: list = []
    for i in op.tensor_positions:
        a = args[i]
        items = a if i in op.list_positions and isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if t.__class__ is Tensor or not isinstance(t, Tensor) or not t._keys & PYTHON:
                continue
            cls = type(t)
            if any(type(o) is cls for o in found):
                continue
            index = next((k for k, o in enumerate(found) if issubclass(cls, type(o))), len(found))
            found.insert(index, t)
    return found


def _python_fallback(op, keyset, args):
    """The Python key's kernel, torch's pythonFallback: the innermost mode first (popped while it runs), then
    each argument's class's `__torch_dispatch__`; the first answer other than NotImplemented is the result.
    Inside, the keys above Python stay excluded, as below torch's VariableType."""
    overloaded = _overloaded_args(op, args)
    if not _stack.modes and not overloaded:
        # (a tensor that lost its subclass but kept the key, or none at all: nothing wants the call)
        return op.redispatch(keyset & ~PYTHON, args)
    func = op.packet().dispatched
    types = tuple(type(a) for a in overloaded)
    positional, kwargs = _split(op, args)
    mode = None
    with ExcludeDispatchKeyGuard(_ABOVE_PYTHON):
        if _stack.modes:
            mode = _pop_mode()
            try:
                result = mode.__torch_dispatch__(func, types, positional, kwargs)
            finally:
                _push_mode(mode)
            if result is not NotImplemented:
                return result
        for arg in overloaded:
            result = arg.__torch_dispatch__(func, types, positional, kwargs)
            if result is not NotImplemented:
                return result
    handlers = ([f"  - mode object {mode!r}"] if mode is not None else []) + \
        [f"  - tensor subclass {type(arg)!r}" for arg in overloaded]
    raise TypeError(f"Multiple dispatch failed for '{func.__module__}.{func.__name__}'; all __torch_dispatch__ "
                    "handlers returned NotImplemented:\n\n" + "\n".join(handlers) +
                    "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


register_fallback(DispatchKey.Python, _python_fallback)
