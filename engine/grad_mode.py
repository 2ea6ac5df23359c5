"""Thread-local dispatch state: grad mode and the included/excluded key sets.

Both are folded into two masks read once per op call, so `no_grad` costs the hot
path nothing: an op's key set is `(keys_of_args | included) & ~excluded`.

The grad-mode helpers are PyTorch's (torch/autograd/grad_mode.py): each is a context
manager and a decorator; `no_grad`/`enable_grad` also decorate bare (`@agrad.no_grad`);
a decorated generator runs under the mode each time it resumes, not only at its call.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
import warnings

from .dispatch_keys import AUTOGRAD, INFERENCE

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled",
           "is_view_replay_enabled", "_force_original_view_tracking", "enforce_grad_layout_policy",
           "ExcludeDispatchKeyGuard", "IncludeDispatchKeyGuard"]


class _DispatchTLS(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference_mode = False
        self.included = 0
        self.excluded = 0
        self.keep = ~0          # ~(excluded | (AUTOGRAD if grad disabled))
        # torch.autograd.graph.saved_tensors_hooks' stack of (pack_hook, unpack_hook), innermost last:
        # while it is not empty every tensor saved for backward is packed (autograd/saved_variable.py)
        self.saved_hooks = ()
        # set_multithreading_enabled: whether a backward started on this thread may hand Nodes to the
        # device worker threads (autograd/engine.py, Engine._ready_queue)
        self.multithreading_enabled = True
        # _force_original_view_tracking: whether a view made now is regenerated, after an in-place
        # change, by replaying its view ops rather than by one as_strided (_tensor.DifferentiableViewMeta)
        self.view_replay = False
        # enforce_grad_layout_policy: whether AccumulateGrad copies a stealable first gradient whose
        # strides break the gradient layout contract (autograd/node.py's accumulate_grad)
        self.grad_layout_enforced = True
        # torch._C's TorchFunctionDisabledState: 0 enabled, 1 subclasses' __torch_function__ disabled
        # (DisableTorchFunctionSubclass), 2 modes' too (DisableTorchFunction); see overrides.py
        self.torch_function = 0

    def refresh(self):
        drop = self.excluded | (0 if self.grad_enabled else AUTOGRAD)
        self.keep = ~drop


tls = _DispatchTLS()


class _SavedHooksInUse:
    """How many saved_tensors_hooks blocks are open, in any thread. The op library's savers read this
    (one attribute) before this thread's own stack (a thread-local read, several times dearer): while it
    is 0 no tensor needs packing. A count left high only sends saves down the general path."""
    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


saved_hooks_in_use = _SavedHooksInUse()


def is_grad_enabled() -> bool:
    return tls.grad_enabled


def is_inference_mode_enabled() -> bool:
    return tls.inference_mode


def _set_grad_enabled(mode: bool) -> None:
    tls.grad_enabled = mode
    tls.refresh()


# -- decorators (torch/utils/_contextlib.py) -----------------------------------------
def _wrap_generator(ctx_factory, func):
    """Each resumption of the generator runs inside a fresh context from `ctx_factory`;
    its caller's code between two `next()` calls runs outside it."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:      # noqa: B902 — thrown in by our caller: hand it to the generator
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


def _context_decorator(ctx_factory, func):
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(ctx_factory, func)

    @functools.wraps(func)
    def decorate_context(*args, **kwargs):
        with ctx_factory():
            return func(*args, **kwargs)

    return decorate_context


class _DecoratorContextManager:
    """A context manager that also decorates functions and generators; each call of the
    decorated function enters a fresh copy (`clone`), so one object serves every call."""

    def __call__(self, orig_func):
        if inspect.isclass(orig_func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class "
                          "decoration, you can directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            func = lambda *args, **kwargs: orig_func(*args, **kwargs)  # noqa: E731
        else:
            func = orig_func
        return _context_decorator(self.clone, func)

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also decorates without parentheses: `@no_grad` is `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class _GradModeSwitch(_NoParamDecoratorContextManager):
    _mode: bool

    def __enter__(self):
        self.prev = tls.grad_enabled
        _set_grad_enabled(self._mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _set_grad_enabled(self.prev)


class no_grad(_GradModeSwitch):
    """Ops record no graph inside; results do not require grad."""
    _mode = False


class enable_grad(_GradModeSwitch):
    """Grad mode on inside, even within `no_grad`."""
    _mode = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (so it also works as a plain call), restores it on exit."""

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = tls.grad_enabled
        self.mode = mode
        _set_grad_enabled(mode)

    def __call__(self, orig_func):
        _set_grad_enabled(self.prev)      # as a decorator it applies per call, not from now on
        return super().__call__(orig_func)

    def __enter__(self):
        _set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _set_grad_enabled(self.prev)

    def __repr__(self):
        return f"agrad.autograd.grad_mode.set_grad_enabled(mode={self.mode})"     # PyTorch's module path

    __str__ = __repr__

    def clone(self):
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    return tls.multithreading_enabled


class set_multithreading_enabled(_DecoratorContextManager):
    """`set_multithreading_enabled(False)`: a backward started on this thread runs every Node on it,
    none on a device's worker thread (those a backend with `uses_worker_thread`, CUDA's, has); True
    restores that. Thread-local; set when constructed, so it works as a function too, and restored on
    leaving the block (PyTorch's torch.autograd.set_multithreading_enabled)."""

    def __init__(self, mode: bool) -> None:
        self.prev = tls.multithreading_enabled
        tls.multithreading_enabled = mode
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        tls.multithreading_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_view_replay_enabled() -> bool:
    return tls.view_replay


class _ThreadFlag(_DecoratorContextManager):
    """A switch of one thread-local flag (`tls.<_flag>`): set when constructed, so it works as a function
    too; set again on entering a block and restored on leaving it; as a decorator it applies per call,
    not from the decoration on (PyTorch's enforce_grad_layout_policy and _force_original_view_tracking)."""

    _flag: str

    def __init__(self, mode: bool) -> None:
        self.prev = getattr(tls, self._flag)
        self.mode = mode
        setattr(tls, self._flag, mode)

    def __call__(self, orig_func):
        setattr(tls, self._flag, self.prev)
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        setattr(tls, self._flag, self.mode)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        setattr(tls, self._flag, self.prev)

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_ThreadFlag):
    """`enforce_grad_layout_policy(False)`: a first gradient that `.grad` may take over (nothing else
    holds it) is taken as it is even where its strides are not its leaf's (the gradient layout
    contract); a gradient that must be copied is still copied into the leaf's layout. Thread-local
    (PyTorch's torch.autograd.enforce_grad_layout_policy)."""

    _flag = "grad_layout_enforced"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)


class _force_original_view_tracking(_ThreadFlag):
    """Whether the views made while it is on are regenerated, once they or their base change in
    place, by replaying their view ops (ViewBackward0, SelectBackward0, ...) instead of PyTorch's
    default single as_strided of the base (AsStridedBackward0). Thread-local (PyTorch's
    torch.autograd.grad_mode._force_original_view_tracking)."""

    _flag = "view_replay"


class inference_mode(_DecoratorContextManager):
    """`inference_mode(True)` turns grad mode off; `inference_mode(False)` turns it on (PyTorch's
    InferenceMode guard sets grad mode to `not mode`). Used bare, it decorates.

    Tensors made inside (by factories and ops; views of them too) are inference tensors, as in
    PyTorch: `is_inference()` is True, they have no version counter, and outside inference mode
    they cannot be modified in place, require grad or be saved for backward (a clone is a normal
    tensor). Views of normal tensors made inside stay normal. The InferenceMode dispatch key,
    included in every call while the mode is on, does it (engine/autograd/inference_tensors.py)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __enter__(self):
        self._prev = (tls.grad_enabled, tls.inference_mode, tls.included & INFERENCE)
        tls.inference_mode = self.mode
        tls.included = (tls.included | INFERENCE) if self.mode else (tls.included & ~INFERENCE)
        _set_grad_enabled(not self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        grad_enabled, tls.inference_mode, included = self._prev
        tls.included = (tls.included & ~INFERENCE) | included
        _set_grad_enabled(grad_enabled)

    def clone(self):
        return self.__class__(self.mode)


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
