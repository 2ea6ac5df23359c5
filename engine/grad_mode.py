"""Thread-local dispatch state: grad mode and the included/excluded key sets.

Both are folded into two masks read once per op call, so `no_grad` costs the hot
path nothing: an op's key set is `(keys_of_args | included) & ~excluded`.
"""
from __future__ import annotations

import functools
import threading

from .dispatch_keys import AUTOGRAD

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "ExcludeDispatchKeyGuard", "IncludeDispatchKeyGuard"]


class _DispatchTLS(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.included = 0
        self.excluded = 0
        self.keep = ~0          # ~(excluded | (AUTOGRAD if grad disabled))

    def refresh(self):
        drop = self.excluded | (0 if self.grad_enabled else AUTOGRAD)
        self.keep = ~drop


tls = _DispatchTLS()


def is_grad_enabled() -> bool:
    return tls.grad_enabled


class _GradModeContext:
    """Context manager and decorator, as torch.no_grad/enable_grad."""
    _mode: bool

    def __enter__(self):
        self._prev = tls.grad_enabled
        tls.grad_enabled = self._mode
        tls.refresh()
        return self

    def __exit__(self, *exc):
        tls.grad_enabled = self._prev
        tls.refresh()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    _mode = False


class enable_grad(_GradModeContext):
    _mode = True


class set_grad_enabled(_GradModeContext):
    def __init__(self, mode: bool):
        self._mode = bool(mode)
        # torch.set_grad_enabled(False) also works as a plain call.
        self._prev = tls.grad_enabled
        tls.grad_enabled = self._mode
        tls.refresh()

    def __enter__(self):
        return self


class _KeyGuard:
    _field: str

    def __init__(self, keys: int):
        self.keys = int(keys)

    def __enter__(self):
        self._prev = getattr(tls, self._field)
        setattr(tls, self._field, self._prev | self.keys)
        tls.refresh()
        return self

    def __exit__(self, *exc):
        setattr(tls, self._field, self._prev)
        tls.refresh()
        return False


class ExcludeDispatchKeyGuard(_KeyGuard):
    _field = "excluded"


class IncludeDispatchKeyGuard(_KeyGuard):
    _field = "included"
