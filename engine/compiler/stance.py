"""torch.compiler.set_stance (torch/_dynamo/decorators.py, eval_frame.py's _set_stance and _callback_from_stance)
and the one piece of state a compiled region has here: whether this thread is running inside one.

The stance is process-wide, as torch's `_stance`; the region is per thread, as torch's eval-frame callback. A stance
is accepted by any name and judged when a compiled function next runs, as torch's. Since agrad compiles nothing,
every stance runs the function as written; what a stance changes is whether the backend is consulted at all
(not under "force_eager" or "eager_on_recompile"), and "default" may force another backend on every compiled call.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading

from ..grad_mode import _DecoratorContextManager

__all__ = ["DynamoStance", "set_stance", "current", "in_region", "region"]

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
           "aot_eager_then_compile")


@dataclasses.dataclass
class DynamoStance:
    """torch's DynamoStance (its repr is part of the message an invalid stance gets)."""
    stance: str = "default"
    skip_guard_eval_unsafe: bool = False
    backend: object = None


_stance = DynamoStance()
_tls = threading.local()


def current() -> DynamoStance:
    return _stance


def in_region() -> bool:
    """Whether this thread runs inside a compiled function (and not inside a disabled one within it)."""
    return getattr(_tls, "compiling", False)


@contextlib.contextmanager
def region(compiling: bool):
    """Inside a compiled function's call (True) or a disabled one's (False), restoring the outer state after."""
    prior = in_region()
    _tls.compiling = compiling
    try:
        yield
    finally:
        _tls.compiling = prior


def _set_stance(stance: DynamoStance) -> DynamoStance:
    global _stance
    if in_region():
        raise RuntimeError("attempted to set_stance in an agrad.compile region")
    prior, _stance = _stance, stance
    return prior


class set_stance(_DecoratorContextManager):
    """torch.compiler.set_stance: sets the stance when made (so it works as a plain call), again on entering a block,
    and restores the one before on leaving it; as a decorator, for each call of the function."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend=None) -> None:
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)
        wrapper = super().__call__(fn)
        wrapper._dynamo_forbidden = True      # torch's mark: never traced into
        return wrapper

    def __enter__(self) -> None:
        _set_stance(self.stance)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _set_stance(self.prev)

    def clone(self) -> set_stance:
        return self.__class__(self.stance.stance, force_backend=self.stance.backend)


def backend_for_call(backend):
    """The backend a compiled call consults under the current stance, or None where the stance runs it eagerly
    without asking any backend; an unknown stance fails here, at the call, as torch's does."""
    if _stance.stance not in STANCES:
        raise RuntimeError(f"invalid agrad.compile stance '{_stance}'")
    if _stance.stance in ("force_eager", "eager_on_recompile"):
        return None
    if _stance.stance == "default" and _stance.backend is not None:
        return _stance.backend
    return backend
