"""What a graph's kernels import on first use, imported before the clocks start.

The special functions (`erf`, `lgamma`, `gelu`, ...) come from SciPy on the CPU and from
cupyx on CUDA, imported by the backend the first time one runs: a few hundred ms that
would otherwise be counted as the first forward pass of a 2-element graph. An op declared
with `special=True` (its OpInfo says so) makes each device's backend load its
special-function module here, once per process.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def needs_special_functions(op_name: str) -> bool:
    from agrad import dispatcher

    try:
        info = dispatcher.get_op(op_name).info
    except dispatcher.UnknownOperatorError:
        return False
    return bool(getattr(info, "special", False))      # None for a plugin op: nothing to load early


def preload_kernels(ops, devices) -> None:
    """Load what the kernels of `ops` on `devices` would load while the forward pass is timed."""
    if not any(needs_special_functions(op) for op in set(ops)):
        return
    import agrad

    for device in set(devices):
        try:
            agrad.device(device).backend.special       # noqa: B018 - the backend imports it on first access
        except Exception:      # noqa: BLE001 - a missing package or device: the backend reports it when it runs
            pass
