"""torch.compile (torch/__init__.py) and the wrappers torch._dynamo.eval_frame puts around what it compiles, run
eagerly.

agrad has no bytecode tracer and no graph compiler for the library API, so what agrad.compile returns runs the
function or module exactly as written: its numbers and gradients are the eager ones bit for bit, which is what
torch's own backend="eager" gives. Everything around the call is torch's: the argument checks in torch's order and
with its messages, the decorator forms, `disable=True` (the model itself comes back), a Module wrapped in an
OptimizedModule, a function in a functools.wraps wrapper carrying torch's attributes (`_torchdynamo_orig_callable`,
`_torchdynamo_wrapper_id`, `get_compiler_config`), nested compiles unwrapped to the innermost function, and
torch.compiler.disable's wrappers. A backend name is checked when compile is called; the backend itself is
consulted at each call, where torch would call it (backends.consult), unless the stance says otherwise.
(The graph files' compiled path is elsewhere: `agrad run --repeat` replays a recorded graph, agrad/replay.)
"""
from __future__ import annotations

import functools
import inspect

from ..nn.modules.module import Module
from . import backends, stance
from .optimized_module import OptimizedModule

__all__ = ["compile", "OptimizeContext", "DisableContext", "innermost_fn", "disable"]


def innermost_fn(fn):
    """eval_frame.innermost_fn: through nested compile/disable wrappers to the callable they wrap. A wrapper is
    followed only where it is itself the object the attribute was set on (not a bound method of one, nor a
    functools.wraps copy of one)."""
    while (hasattr(fn, "_torchdynamo_orig_callable")
           and getattr(fn, "_torchdynamo_wrapper_id", None) == id(fn)):
        fn = fn._torchdynamo_orig_callable
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
    return fn


class _Context:
    """eval_frame._TorchDynamoContext: what compile or disable applies to a callable. A Module becomes an
    OptimizedModule, a class has its __call__ (and a Module's _call_impl) wrapped, a callable is wrapped."""

    compiling: bool       # inside the wrapper: a compiled region (True) or a disabled one (False)

    def __enter__(self):
        # (torch's config.raise_on_ctx_manager_usage, on by default)
        raise RuntimeError(f"agrad.compiler's {type(self).__name__} is used with a context manager; use it as an "
                           "annotation/decorator.")

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def __call__(self, fn):
        fn = innermost_fn(fn)
        if isinstance(fn, Module):
            new_mod = OptimizedModule(fn, self)
            # the original callable, for innermost_fn when this one is compiled again
            new_mod._torchdynamo_orig_callable = fn.forward
            new_mod._torchdynamo_wrapper_id = id(new_mod)
            return new_mod
        if inspect.isclass(fn):
            self._wrap_class(fn)
            return fn
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
        return self._wrap(fn)

    def _wrap_class(self, cls) -> None:
        cls.__call__ = self(cls.__call__)
        if issubclass(cls, Module):
            cls._call_impl = self(cls._call_impl)

    def _enter_call(self) -> None:
        """What happens before each call of the wrapped function."""

    def _wrap(self, fn, wraps: bool = True):
        def wrapper(*args, **kwargs):
            self._enter_call()
            with stance.region(self.compiling):
                return fn(*args, **kwargs)
        if wraps:
            wrapper = functools.wraps(fn)(wrapper)
        wrapper._torchdynamo_orig_callable = fn
        wrapper._torchdynamo_wrapper_id = id(wrapper)
        return wrapper


class OptimizeContext(_Context):
    """What torch.compile applies (eval_frame.OptimizeContext): its wrapper consults the backend at each call."""

    compiling = True

    def __init__(self, backend, *, fullgraph: bool = False, dynamic=None, extra_kwargs=None) -> None:
        if dynamic is not None and not isinstance(dynamic, bool):
            raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.extra_kwargs = extra_kwargs or {}
        self.compiler_config = None      # torch's is the inductor config it patched; agrad has no inductor

    def __call__(self, fn):
        result = super().__call__(fn)
        if isinstance(result, OptimizedModule):
            result.get_compiler_config = self.get_compiler_config
        result._is_torch_compile = True
        return result

    def get_compiler_config(self):
        return self.compiler_config

    def _wrap(self, fn):
        wrapper = super()._wrap(fn)
        wrapper._torchdynamo_inline = fn
        wrapper.get_compiler_config = self.get_compiler_config
        return wrapper

    def _enter_call(self) -> None:
        backend = stance.backend_for_call(self.backend)
        if backend is not None:
            backends.consult(backends.lookup_backend(backend), self.extra_kwargs)

    def __reduce__(self):
        return (_rebuild_optimize_context, (self.backend, self.fullgraph, self.dynamic, self.extra_kwargs))


def _rebuild_optimize_context(backend, fullgraph, dynamic, extra_kwargs) -> OptimizeContext:
    return OptimizeContext(backend, fullgraph=fullgraph, dynamic=dynamic, extra_kwargs=extra_kwargs)


class DisableContext(_Context):
    """What torch.compiler.disable applies (eval_frame.DisableContext): its wrapper runs the function outside any
    compiled region, and marks it as disabled."""

    compiling = False

    def __init__(self, msg: str | None = None, wrapping: bool = True) -> None:
        self.msg = msg
        self.wrapping = wrapping

    def _wrap_class(self, cls) -> None:
        cls.__init__ = self(cls.__init__)
        super()._wrap_class(cls)

    def _wrap(self, fn):
        wrapper = super()._wrap(fn, wraps=self.wrapping)
        wrapper._torchdynamo_disable = True
        wrapper._torchdynamo_disable_msg = self.msg
        wrapper._torchdynamo_disable_recursive = True
        return wrapper

    def __reduce__(self):
        return (self.__class__, ())


def _null_decorator(fn):
    """compile(disable=True): the model itself (eval_frame._NullDecorator)."""
    if not callable(fn):
        raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
    return fn


def disable(fn=None, recursive: bool = True, *, reason: str | None = None, wrapping: bool = True):
    """torch.compiler.disable (torch._dynamo.disable): `fn` runs outside any compiled region. recursive=False
    disables fn's own frame only — here, where nothing is traced, both run fn as it is."""
    if recursive:
        if fn is not None:
            fn = innermost_fn(fn)
            if not callable(fn):
                raise AssertionError("fn must be callable")
            return DisableContext(msg=reason, wrapping=wrapping)(fn)
        return DisableContext(msg=reason, wrapping=wrapping)

    def wrap(fn):
        fn = innermost_fn(fn)
        if not callable(fn):
            raise AssertionError("fn must be callable")

        @functools.wraps(fn)
        def nonrecursive_disable_wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        nonrecursive_disable_wrapper._torchdynamo_disable = True
        nonrecursive_disable_wrapper._torchdynamo_disable_msg = reason
        nonrecursive_disable_wrapper._torchdynamo_orig_callable = fn
        nonrecursive_disable_wrapper._torchdynamo_wrapper_id = id(nonrecursive_disable_wrapper)
        nonrecursive_disable_wrapper._torchdynamo_disable_recursive = False
        return nonrecursive_disable_wrapper

    return wrap if fn is None else wrap(fn)


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend=None, mode: str | None = None,
            options: dict | None = None, name: str | None = None, disable: bool = False,
            recompile_limit: int | None = None, isolate_recompiles: bool = False, shapes_spec=None):
    """torch.compile, run eagerly (see the module's docstring): a Module gives an OptimizedModule, a function a
    wrapper of it, `model=None` a decorator; `disable=True` gives the model back. `name`, `recompile_limit`,
    `isolate_recompiles` and `shapes_spec` are accepted and change nothing: there is no compiled region to name
    and nothing is ever recompiled."""
    if backend is None:
        backend = backends.get_default_backend()
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return fn
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is None and options is None:
        mode = "default"
    if options and isinstance(options, dict):
        # torch takes these two out of the caller's dict (they are compile's, not the backend's)
        options.pop("guard_filter_fn", None)
        options.pop("use_aoti", False)
    if backend == "inductor":
        if mode and mode not in backends.INDUCTOR_MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(backends.INDUCTOR_MODES)}")
    else:
        backends.lookup_backend(backend)
    extra = {**({"mode": mode} if mode and mode != "default" else {}), **({"options": options} if options else {})}
    if disable:
        return _null_decorator(model)
    if dynamic is not None and shapes_spec is not None:
        raise ValueError("`dynamic` and `shapes_spec` cannot both be set. `shapes_spec` controls dynamic behavior.")
    return OptimizeContext(backend, fullgraph=fullgraph, dynamic=dynamic, extra_kwargs=extra)(model)
