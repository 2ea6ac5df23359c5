"""What a graph's kernels import on first use, imported before the clocks start.

The special functions (`erf`, `lgamma`, `gelu`, ...) come from SciPy on the CPU and from
cupyx on CUDA, imported by the backend the first time one runs: a few hundred ms that
would otherwise be counted as the first forward pass of a 2-element graph. The engine
declares such a kernel as `kernel(xp, special, *args)`; an op whose kernel takes
`special` makes its device's special-function module load here, once per process.
"""
from __future__ import annotations

import functools
import importlib
import inspect

SPECIAL_MODULES = {"cpu": "scipy.special", "cuda": "cupyx.scipy.special"}


@functools.lru_cache(maxsize=None)
def needs_special_functions(op_name: str) -> bool:
    from agrad import dispatcher

    try:
        kernel = dispatcher.get_op(op_name).info.kernel
        return "special" in inspect.signature(kernel).parameters
    except Exception:        # noqa: BLE001 - a plugin op, or no declaration to read: nothing to load early
        return False


def preload_kernels(ops, devices) -> None:
    """Import what the kernels of `ops` on `devices` would import while the forward pass is timed."""
    if not any(needs_special_functions(op) for op in set(ops)):
        return
    for device in {str(d).split(":")[0] for d in devices}:
        module = SPECIAL_MODULES.get(device)
        if module is not None:
            try:
                importlib.import_module(module)
            except ImportError:      # the backend reports a missing package itself, with its install line
                pass
