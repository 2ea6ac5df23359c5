"""NumPy's floating-point warnings, off wherever agrad computes.

PyTorch's kernels never warn: `log(0)` is -inf, `0 / 0` is nan, an overflow is inf, quietly.
NumPy warns of each (RuntimeWarning: "divide by zero encountered in log") unless its error
state says "ignore" — and under `-W error`, or in a test counting its warnings, a warning is a
failure PyTorch would not have. So every backend kernel runs in the state `QUIET`, as do the
engine's passes, a graph's runs and training steps (`quiet()`), and the caller's own NumPy
code keeps the state it had.

NumPy 2 keeps the state in a context variable: a kernel switches it with one `set` and one
`reset` (≈ 0.25 µs; `np.errstate` costs ≈ 1.7 µs, a third of a small op), and inside an engine
pass, where it already is `QUIET`, one `get` and an identity test. NumPy 1 keeps it per
thread behind `np.seterr`, which `_SeterrState` wraps in the same three calls.
"""
from __future__ import annotations

import contextlib

import numpy as np

__all__ = ["QUIET", "state", "quiet"]

try:
    from numpy._core._ufunc_config import _extobj_contextvar as state, _make_extobj
    QUIET = _make_extobj(all="ignore")
except ImportError:             # NumPy 1.x
    class _SeterrState:
        """`np.seterr` as a context variable's get/set/reset: `get` is never QUIET, so each
        kernel sets and resets (slower, as NumPy 1's errstate always was)."""
        __slots__ = ()

        @staticmethod
        def get():
            return None

        @staticmethod
        def set(_value):
            return np.seterr(all="ignore")

        @staticmethod
        def reset(token):
            np.seterr(**token)

    state = _SeterrState()
    QUIET = object()


@contextlib.contextmanager
def quiet():
    """NumPy's floating-point warnings off for the block (a whole pass, a run, a training run):
    the kernels inside find the state already QUIET."""
    token = state.set(QUIET)
    try:
        yield
    finally:
        state.reset(token)
