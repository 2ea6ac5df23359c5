"""torch._dynamo's backend registry (torch/_dynamo/backends/registry.py) as names: the backends torch 2.13 registers,
with their tags, so that `list_backends` answers as torch's and an unknown name fails where and as torch's does.

agrad runs every named backend the same way, eagerly (agrad/compiler/eager.py): none of them has a graph to work
on here. A callable backend is a function of a torch.fx.GraphModule; agrad has no FX graphs to give it, so it is
refused — at the first call, where torch would call it — never called.
"""
from __future__ import annotations

import logging

__all__ = ["BACKENDS", "InvalidBackend", "BackendCompilerFailed", "lookup_backend", "list_backends",
           "set_default_backend", "get_default_backend", "backend_name", "consult"]

_log = logging.getLogger(__name__)

# name -> tags, as torch 2.13's registry holds them (tests/engine/test_compile.py holds this to torch's answers)
BACKENDS: dict[str, tuple[str, ...]] = {
    **{name: ("debug",) for name in (
        "eager", "eager_noexcept", "pre_dispatch_eager", "eager_debug", "ts", "invoke_subgraph", "aot_eager",
        "aot_eager_default_partitioner", "aot_eager_decomp_partition", "aot_eager_decomp_partition_with_mode",
        "aot_eager_decomp_partition_crossref", "aot_ts", "relu_compile_error_TESTING_ONLY",
        "relu_runtime_error_TESTING_ONLY", "relu_accuracy_error_TESTING_ONLY", "non_leaf_compile_error_TESTING_ONLY",
        "dynamo_minifier_backend", "dynamo_accuracy_minifier_backend")},
    "cudagraphs": (), "inductor": (), "openxla": (), "tvm": (), "openxla_eval": ("experimental",),
}

# torch._inductor.list_mode_options' modes: what mode= may be with the inductor backend
INDUCTOR_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

_default_backend = "inductor"


class InvalidBackend(RuntimeError):
    """torch._dynamo.exc.InvalidBackend (a RuntimeError): a backend name no registry entry has."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `agrad.compiler.list_backends()` for available backends.")


class BackendCompilerFailed(RuntimeError):
    """torch._dynamo.exc.BackendCompilerFailed (a RuntimeError): the backend raised when it was asked to compile."""

    def __init__(self, backend, inner: Exception) -> None:
        super().__init__(f"backend={backend_name(backend)!r} raised:\n{type(inner).__name__}: {inner}")


def backend_name(backend) -> str:
    """The name torch's _TorchCompileWrapper gives a backend: the string, a callable's __name__, else str()."""
    if isinstance(backend, str):
        return backend
    return backend.__name__ if hasattr(backend, "__name__") else str(backend)


def lookup_backend(backend):
    """registry.lookup_backend: a name must be registered (InvalidBackend); anything else is kept as it is, and
    judged when consulted."""
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(name=backend)
    return backend


def consult(backend, extra_kwargs: dict) -> None:
    """What becomes of the backend where torch would call it with the captured graph. A name runs the function
    eagerly (the eager backend's warning about the mode or options it ignores is logged, as torch's); an object
    that is no callable fails as torch's call of it does; a callable is refused, uncalled."""
    if isinstance(backend, str):
        if extra_kwargs and backend != "inductor":
            _log.warning("%s backend ignoring extra kwargs %s", backend, extra_kwargs)
        return
    if not callable(backend):
        raise BackendCompilerFailed(backend, TypeError(f"'{type(backend).__name__}' object is not callable"))
    raise NotImplementedError(
        f"agrad.compile cannot use the backend {backend_name(backend)!r}: a callable backend is called with a "
        "torch.fx.GraphModule of the traced function, and agrad has no FX graphs (agrad.compile runs the function "
        "eagerly, as it is written). Pass a backend name instead, such as backend=\"eager\" or \"inductor\".")


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """torch.compiler.list_backends: the names compile's backend= takes, less those with an excluded tag."""
    excluded = set(exclude_tags or ())
    return sorted(name for name, tags in BACKENDS.items() if not excluded.intersection(tags))


def set_default_backend(backend) -> None:
    """torch.compiler.set_default_backend: the backend compile uses when given none; None restores "inductor"."""
    global _default_backend
    if backend is None:
        _default_backend = "inductor"
        return
    if not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"backend must be a string or callable, got {type(backend)}")
    _default_backend = backend


def get_default_backend():
    """torch.compiler.get_default_backend."""
    return _default_backend
