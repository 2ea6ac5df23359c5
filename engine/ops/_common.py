"""Helpers that several op families share: `checked` (a kernel that runs its Meta rule
first), `_float_only` (PyTorch's "not implemented for" dtype error on every array),
`_data_dependent` (the Meta rule of an op whose result shape depends on values) and
`weighted_bincount` (every scatter-add of floats: the same sums on every backend), `host` (a
NumPy copy of a backend's array, for kernels that run host code: LAPACK through SciPy, loops).
Not an op family: it declares no op."""
from __future__ import annotations

from ..messages import require_floating


def host(a):
    """A NumPy array of a number or of a backend's array (CuPy's `get` copies it to the host)."""
    import numpy as np
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _float_only(kernel_name, *arrays):
    for a in arrays:
        require_floating(kernel_name, a.dtype)


def _data_dependent(name):
    def rule(*args):
        raise NotImplementedError(f"{name}: the shape of its result depends on the input's values, which a Meta "
                                  f"tensor does not have")
    return rule


def checked(meta_rule, kernel):
    """A kernel that runs the Meta rule first: the same checks and messages on every backend."""
    def run(xp, *arrays):
        meta_rule(*arrays)
        return kernel(xp, *arrays)
    return run


def weighted_bincount(xp, positions, weights, minlength: int):
    """`bincount(positions, weights=weights, minlength=minlength)`: float64 sums of the weights at
    each position, added in the order given, on NumPy and on CuPy (whose own bincount adds with
    atomics, in an order that varies: backends/cuda.py); dask's array sums blocks its own way."""
    if getattr(xp, "__name__", None) == "cupy":
        from ..backends.cuda import bincount_in_order
        return bincount_in_order(xp, positions, weights, minlength)
    return xp.bincount(positions, weights=weights, minlength=minlength)
