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
"""
from __future__ import annotations

import threading

from ..dispatch_keys import AUTOGRAD, FORWARD_AD, INFERENCE, PYTHON, DispatchKey
from ..dispatcher import register_fallback
from ..grad_mode import ExcludeDispatchKeyGuard, tls

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack", "_push_mode",
           "_pop_mode"]

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


def _split(op, args: list) -> tuple:
    """The call's arguments as PyTorch hands them to a mode: positional ones, then the keyword-only."""
    arguments = op.schema.arguments
    positional, kwargs = [], {}
    for a, value in zip(arguments, args):
        if a.kwarg_only:
            kwargs[a.name] = value
        else:
            positional.append(value)
    return tuple(positional), kwargs


def _python_fallback(op, keyset, args):
    mode = _pop_mode()
    try:
        with ExcludeDispatchKeyGuard(_ABOVE_PYTHON):
            positional, kwargs = _split(op, args)
            return mode.__torch_dispatch__(op.packet().dispatched, (), positional, kwargs)
    finally:
        _push_mode(mode)


register_fallback(DispatchKey.Python, _python_fallback)
