"""What a graph's ops load and generate on first use, done before the clocks start.

An op's family is imported, and its function and kernels generated, on their first use
(engine/ops/contents.py, codegen.deferred): one-off costs of the library, not the time it
takes to build or run this graph. `load_ops` does it for the ops a graph names before it
is built on Meta, `preload_kernels` for the devices it runs on before the first pass.

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


def load_ops(names) -> None:
    """Register the ops `names` (their families imported) and generate each one's function and
    Meta kernel, which building the graph calls; an unknown name is the build's to report."""
    from agrad import codegen, dispatcher

    for name in set(names):
        try:
            entry = dispatcher.get_op(name)
        except dispatcher.UnknownOperatorError:
            continue
        codegen.resolve(entry.function)
        if entry.has_kernel("Meta"):
            entry.kernel("Meta")


def preload_kernels(ops, devices) -> None:
    """Generate and load what the kernels of `ops` on `devices` would while the passes are timed:
    each op's kernel for the devices' backends and its Autograd kernel; the special functions."""
    import agrad
    from agrad import dispatcher

    keys = {"Autograd"}
    for device in set(devices):
        try:
            keys.add(dispatcher.DispatchKey(agrad.device(device).backend.key).name)
        except Exception:      # noqa: BLE001 - a missing package or device: the backend reports it when it runs
            pass
    for name in set(ops):
        try:
            entry = dispatcher.get_op(name)
        except dispatcher.UnknownOperatorError:      # getitem: not an op
            continue
        for key in keys:
            if entry.has_kernel(key):
                entry.kernel(key)
    if not any(needs_special_functions(op) for op in set(ops)):
        return

    for device in set(devices):
        try:
            agrad.device(device).backend.special       # noqa: B018 - the backend imports it on first access
        except Exception:      # noqa: BLE001 - a missing package or device: the backend reports it when it runs
            pass
