"""agrad.profiler.itt: torch/profiler/itt.py as it is in a PyTorch built without ITT (Intel's
Instrumentation and Tracing Technology, for VTune): agrad has none, so `is_available()` is False
and pushing, popping or marking a range raises PyTorch's error."""
from __future__ import annotations

from contextlib import contextmanager
from typing import NoReturn

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _fail(*args, **kwargs) -> NoReturn:
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available() -> bool:
    """Whether ITT can be used: never, in agrad."""
    return False


def range_push(msg):
    """Push a range onto the stack of nested ranges (where ITT is available)."""
    return _fail(msg)


def range_pop():
    """Pop a range off the stack of nested ranges (where ITT is available)."""
    return _fail()


def mark(msg):
    """Mark an instantaneous event (where ITT is available)."""
    return _fail(msg)


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 — torch.profiler.itt.range
    """A context manager (and decorator) pushing a range on entering, popping it on leaving;
    extra arguments format `msg`."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
