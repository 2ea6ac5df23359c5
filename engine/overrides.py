"""agrad.overrides: the `__torch_function__` protocol, as torch/overrides.py and the Python argument
parser's handle_torch_function (torch/csrc/utils/python_arg_parser.cpp) keep it.

A call to an op (`agrad.add`, `x + y`, `x.sum()`, `F.linear` …) is handed, before it runs, to the
innermost TorchFunctionMode pushed (popped for the time of the handler), then to each overloaded
argument's `__torch_function__(func, types, args, kwargs)` — an argument of a Tensor subclass whose
handler is not `_disabled_torch_function_impl`, or any object with one — subclasses before their
bases, otherwise left to right; the first answer that is not NotImplemented is the call's result,
and if all are, a TypeError names them. The dispatcher does it for every op in one place: its
TorchFunction key (dispatch_keys.py) is in a call's key set while a mode is pushed, and an
overloaded argument adds it (dispatcher._unusual_tensor_argument); the key's fallback,
`_dispatch_op`, is the handle_torch_function of an op call. A plain Tensor call never pays for it.

What agrad hands a handler: `func` is the op's function (`agrad.add`, which is also `Tensor.add`,
`Tensor.__add__` and `F.<name>` where torch has distinct objects); `args` the arguments that are not
keyword-only, up to the last one given a value other than its default, `kwargs` the keyword-only ones
given a value other than their default (None when there are none, as torch's C functions pass).
`DisableTorchFunctionSubclass` and `DisableTorchFunction` are torch._C's, here (agrad has no _C).
The autograd engine runs a backward with both disabled: torch's formulas are C++ that no handler sees.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import warnings

from ._tensor import Tensor
from .dispatch_keys import AUTOGRAD, FORWARD_AD, INFERENCE, TORCH_FUNCTION
from .grad_mode import tls

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "TorchFunctionMode", "BaseTorchFunctionMode", "enable_reentrant_dispatch",
           "is_tensor_like", "is_tensor_method_or_property", "get_default_nowrap_functions",
           "DisableTorchFunction", "DisableTorchFunctionSubclass"]

_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2      # torch._C's TorchFunctionDisabledState


# ---- the thread's state: the mode stack and what is disabled ---------------------------------------

class _ModeStack(threading.local):
    def __init__(self):
        self.modes: list = []


_stack = _ModeStack()


class _ModesPushed:
    """How many modes are pushed, in any thread: a Python function's check (nn.functional's) reads this one
    attribute before the thread's key set (a thread-local read, several times dearer), as grad_mode's
    saved_hooks_in_use. A count left high only sends calls to the thread's own check."""
    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


modes_pushed = _ModesPushed()


def _sync_key() -> None:
    """The TorchFunction key is in every call's key set exactly while a mode would see the call."""
    on = _stack.modes and tls.torch_function != _ALL_DISABLED
    tls.included = (tls.included | TORCH_FUNCTION) if on else (tls.included & ~TORCH_FUNCTION)


def _push_mode(mode) -> None:
    _stack.modes.append(mode)
    modes_pushed.count += 1
    _sync_key()


def _pop_mode():
    if not _stack.modes:
        raise AssertionError("Trying to pop from an empty mode stack")
    mode = _stack.modes.pop()
    modes_pushed.count = max(0, modes_pushed.count - 1)
    _sync_key()
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode():
    return _stack.modes[-1] if _stack.modes else None


def _get_current_function_mode_stack() -> list:
    return list(_stack.modes)


def _len_torch_function_stack() -> int:
    return len(_stack.modes)


def _is_torch_function_enabled() -> bool:
    """torch._C._is_torch_function_enabled: subclasses' handlers are called."""
    return tls.torch_function == _ENABLED


def _is_torch_function_mode_enabled() -> bool:
    return tls.torch_function != _ALL_DISABLED and bool(_stack.modes)


class _DisabledState:
    """Raises the thread's disabled state to `_state` for a block, and puts it back after."""
    _state = _ENABLED

    def __enter__(self):
        self._prev = tls.torch_function
        tls.torch_function = max(self._prev, self._state)
        _sync_key()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        tls.torch_function = self._prev
        _sync_key()
        return False


class DisableTorchFunctionSubclass(_DisabledState):
    """torch._C.DisableTorchFunctionSubclass: no subclass's `__torch_function__` is called in the block;
    modes still are. Tensor.__torch_function__ runs its func so."""
    _state = _SUBCLASSES_DISABLED


class DisableTorchFunction(_DisabledState):
    """torch._C.DisableTorchFunction: neither modes nor subclasses see a call in the block."""
    _state = _ALL_DISABLED


class _Builtin:
    """A function that stays itself when set as a class attribute, as torch._C's builtins do (it is no
    descriptor): `p.__torch_function__ is _disabled_torch_function_impl` holds for a Parameter `p`."""
    def __init__(self, fn):
        self._fn, self.__name__, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<built-in function {self.__name__}>"


@_Builtin
def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_function_impl: a class whose `__torch_function__` is this function
    (nn.Parameter's) is not overloaded: its instances take the call as plain Tensors do."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


# ---- which arguments are overloaded ---------------------------------------------------------------

def _overrides(cls) -> bool:
    handler = getattr(cls, "__torch_function__", None)
    return handler is not None and handler is not _disabled_torch_function_impl


def _get_overloaded_args(relevant_args, get_type_fn=None) -> list:
    """The arguments whose type overrides `__torch_function__`, one per type, in the order their
    handlers are tried: a subclass before its base class, otherwise left to right (NumPy's
    __array_function__ order, torch's _get_overloaded_args)."""
    if get_type_fn is None:
        get_type_fn = type
    if tls.torch_function != _ENABLED:
        return []
    overloaded_types: set = set()
    overloaded_args: list = []
    for arg in relevant_args:
        arg_type = get_type_fn(arg)
        if arg_type in overloaded_types or not _overrides(arg_type):
            continue
        index = len(overloaded_args)
        for i, old_arg in enumerate(overloaded_args):
            if issubclass(arg_type, get_type_fn(old_arg)):
                index = i
                break
        overloaded_types.add(arg_type)
        overloaded_args.insert(index, arg)
    return overloaded_args


def has_torch_function(relevant_args) -> bool:
    """Whether a call with these arguments goes to a handler: a mode is pushed, or one is overloaded (a plain
    Tensor is not: torch's check_has_torch_function; _get_overloaded_args counts it, as torch's does)."""
    return _is_torch_function_mode_enabled() or bool(_get_overloaded_args(a for a in relevant_args
                                                                          if a.__class__ is not Tensor))


def has_torch_function_unary(obj) -> bool:
    return has_torch_function((obj,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


# ---- handing a call to the handlers ---------------------------------------------------------------

def _run_handlers(public_api, overloaded_args: list, args: tuple, kwargs, not_implemented):
    """The innermost mode (popped while it runs), then each overloaded argument's handler; the first
    answer that is not NotImplemented, else `not_implemented(mode, overloaded_args)` is raised."""
    types = tuple(type(arg) for arg in overloaded_args)
    mode = None
    if _is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for overloaded_arg in overloaded_args:
        handler = overloaded_arg.__torch_function__
        if getattr(handler, "__self__", None) is overloaded_arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=3)
        result = handler(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise not_implemented(mode, overloaded_args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """torch.overrides.handle_torch_function: how a Python function that checked `has_torch_function`
    hands its call (`public_api(*args, **kwargs)`) to the modes and the overloaded `relevant_args`."""
    def not_implemented(mode, overloaded_args):
        msg = (f"no implementation found for '{public_api.__module__}.{public_api.__name__}' on types that "
               f"implement __torch_function__: {[type(arg) for arg in overloaded_args]}")
        if _is_torch_function_mode_enabled():
            msg += f" nor in mode {_get_current_function_mode()}"
        return TypeError(msg)
    return _run_handlers(public_api, _get_overloaded_args(relevant_args), args, kwargs, not_implemented)


def _dispatch_op(op, keyset, args):
    """The TorchFunction key's fallback: an op call (`args` in schema order) handed to the handlers,
    as torch's Python bindings do (their message when every handler declines)."""
    relevant = []           # (not the plain Tensors, as torch's C++ bindings leave them out)
    for i in op.tensor_positions:
        a = args[i]
        if i in op.list_positions and isinstance(a, (list, tuple)):
            relevant.extend(t for t in a if t.__class__ is not Tensor)
        elif a.__class__ is not Tensor:
            relevant.append(a)
    positional, kwargs = _call_form(op, args)

    def not_implemented(mode, overloaded_args):
        handlers = ([f"  - mode object {mode!r}"] if mode is not None else []) + \
            [f"  - tensor subclass {type(arg)!r}" for arg in overloaded_args]
        return TypeError(f"Multiple dispatch failed for 'agrad.{op.name.split('::')[-1]}'; all __torch_function__ "
                         "handlers returned NotImplemented:\n\n" + "\n".join(handlers) +
                         "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")
    return _run_handlers(op.function, _get_overloaded_args(relevant), positional, kwargs, not_implemented)


def _is_default(value, argument) -> bool:
    if not argument.has_default:
        return False
    default = argument.default
    if value is default:
        return True
    if isinstance(value, Tensor) or isinstance(default, Tensor):
        return False
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return tuple(value) == tuple(default)
    return type(value) is type(default) and value == default


def _call_form(op, args: list) -> tuple:
    """(args, kwargs) of the call as a handler gets it: see the module's docstring."""
    arguments = op.schema.arguments
    positional, kwargs = [], {}
    for a, value in zip(arguments, args):
        if a.kwarg_only:
            if not _is_default(value, a):
                kwargs[a.name] = value
        else:
            positional.append((value, a))
    while positional and _is_default(*positional[-1]):
        positional.pop()
    return tuple(value for value, _ in positional), (kwargs or None)


# ---- the modes -------------------------------------------------------------------------------------

class TorchFunctionMode:
    """Subclass and define `__torch_function__(self, func, types, args=(), kwargs=None)`; `with mode:`
    pushes it for the block: every op call in it is handed to the mode first, the mode popped while
    its handler runs (torch.overrides.TorchFunctionMode)."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call as it is (torch.overrides.BaseTorchFunctionMode)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch.overrides.enable_reentrant_dispatch: inside a dispatch mode's handler (utils/_python_dispatch.py),
    calls go through the keys above it again (autograd, forward AD, inference mode), as torch's
    _RestorePythonTLSSnapshot restores the dispatch state of the call the mode was handed."""
    prev = tls.excluded
    tls.excluded = prev & ~(AUTOGRAD | FORWARD_AD | INFERENCE)       # (those the Python key's fallback excludes)
    tls.refresh()
    try:
        yield
    finally:
        tls.excluded = prev
        tls.refresh()


# ---- what is a tensor, what is a method -----------------------------------------------------------

def is_tensor_like(inp) -> bool:
    """A Tensor (a subclass's instance too) or an object with a `__torch_function__` of its own."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


@functools.lru_cache(None)
def _get_tensor_methods() -> set:
    import inspect
    methods = set()
    for name, value in inspect.getmembers(Tensor):
        if callable(value):
            try:
                methods.add(value)
            except TypeError:       # (an unhashable attribute is no method)
                pass
    return methods


def is_tensor_method_or_property(func) -> bool:
    """Whether `func` is a method or property of Tensor (torch's test: one of Tensor's callables, or a
    property's `__get__`); agrad's ops are Tensor's methods too (`agrad.add is Tensor.add`)."""
    return func in _get_tensor_methods() or getattr(func, "__name__", None) == "__get__"


def get_default_nowrap_functions() -> set:
    """The functions whose results Tensor.__torch_function__ leaves as they are (torch's: the getters of
    `_base` and `grad`; agrad's properties are not handed to handlers, so none is called so)."""
    return {Tensor._base.__get__, Tensor.grad.__get__} if isinstance(getattr(Tensor, "_base", None), property) \
        and isinstance(getattr(Tensor, "grad", None), property) else set()


def _convert(ret, cls):
    """torch._tensor._convert: a Tensor result (or one in a tuple or list) as an instance of `cls`."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        # (agrad.return_types are named tuples, made from fields where torch's structseqs take an iterable)
        make = getattr(type(ret), "_make", type(ret))
        ret = make(_convert(r, cls) for r in ret)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__ (torch/_tensor.py): run `func` with subclasses' handlers disabled and
    give its Tensor results as `cls`; NotImplemented if some type in `types` is not a base of `cls`."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return ret
        return _convert(ret, cls)
