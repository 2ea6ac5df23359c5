"""torch.compiler (torch/compiler/__init__.py), for a library that compiles nothing: agrad.compile runs the function
or module as written (agrad/compiler/eager.py), so these say and do what they mean when nothing is ever traced —
is_compiling() is False, there are no caches to reset, no graphs to allow a function into, no CUDA graphs to step —
while taking torch's arguments and making torch's checks.
"""
from __future__ import annotations

from .backends import get_default_backend, list_backends, set_default_backend
from .eager import compile, disable as _dynamo_disable
from .stance import set_stance

__all__ = ["compile", "assume_constant_result", "reset", "allow_in_graph", "list_backends", "disable",
           "set_default_backend", "get_default_backend", "set_stance", "cudagraph_mark_step_begin", "is_compiling",
           "is_dynamo_compiling", "is_exporting"]


def reset() -> None:
    """torch.compiler.reset: clears the compile caches — agrad keeps none."""


def allow_in_graph(fn):
    """torch.compiler.allow_in_graph: lets the tracer put `fn` into the graph unexamined. Nothing is traced here;
    the function (or a list of a list's or tuple's functions) comes back as torch's does, after its checks."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """torch.compiler.assume_constant_result: marks `fn` (`_dynamo_marked_constant`) and returns it."""
    fn._dynamo_marked_constant = True
    return fn


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """torch.compiler.disable: a decorator (with or without arguments) that keeps `fn` out of compiled regions; a
    Module gives an OptimizedModule. See eager.disable."""
    return _dynamo_disable(fn, recursive, reason=reason)


def cudagraph_mark_step_begin() -> None:
    """torch.compiler.cudagraph_mark_step_begin: marks a new iteration for CUDA graph trees; torch's only moves a
    counter that CUDA graphs read, so with none (agrad records none) it does nothing."""


def is_compiling() -> bool:
    """torch.compiler.is_compiling: whether a graph is being traced by compile or export. agrad traces none, so
    False, in a compiled function too (torch's is True while it traces one)."""
    return False


def is_dynamo_compiling() -> bool:
    """torch.compiler.is_dynamo_compiling: whether Dynamo is tracing — never, here."""
    return False


def is_exporting() -> bool:
    """torch.compiler.is_exporting: whether torch.export is tracing — agrad has no export."""
    return False
