"""Helpers that several op families share: `checked` (a kernel that runs its Meta rule
first), `_float_only` (PyTorch's "not implemented for" dtype error on every array),
`_data_dependent` (the Meta rule of an op whose result shape depends on values) and
`weighted_bincount` (every scatter-add of floats: the same sums on every backend), `host` (a
NumPy copy of a backend's array, for kernels that run host code: LAPACK through SciPy, loops),
`_named_results` (an op whose results the user gets as a torch.return_types named tuple),
`conj_of` (derivatives.yaml's `.conj()` in a formula).
Not an op family: it declares no op."""
from __future__ import annotations

from numpy import ndarray as _ndarray

from .. import return_types
from .._tensor import Tensor
from ..messages import require_floating


def host(a):
    """A NumPy array of a number or of a backend's array (CuPy's `get` copies it to the host)."""
    import numpy as np
    return a.get() if hasattr(a, "get") else np.asarray(a)


def conj_of(x):
    """x.conj() as derivatives.yaml's complex formulas write it (`grad * other.conj()`), for a Tensor, an
    array or a number: a real one is its own conjugate and comes back as it is, without an op call, so a
    real formula computes exactly what it did before complex numbers. (An array first: the backward's
    array path calls this once per formula.)"""
    if x.__class__ is _ndarray:
        return x.conj() if x.dtype.kind == "c" else x
    kind = getattr(getattr(getattr(x, "_data", x), "dtype", None), "kind", None)
    if kind == "c":
        return x.conj()
    return x.conjugate() if x.__class__ is complex else x


def _float_only(kernel_name, *arrays, complex_too=False):
    """PyTorch's AT_DISPATCH_FLOATING_TYPES refusal; `complex_too` for a kernel that dispatches
    FLOATING_AND_COMPLEX_TYPES (lerp's)."""
    for a in arrays:
        if not (complex_too and a.dtype.kind == "c"):
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
    atomics, in an order that varies: backends/cuda.py); dask's array sums blocks its own way.
    Complex weights: their real and imaginary parts summed apart (complex128), as bincount takes
    real weights only; the parts are put together as memory, not as re + 1j * im (an infinite
    imaginary sum would make that NaN)."""
    if weights is not None and weights.dtype.kind == "c":
        import numpy as np
        parts = (weighted_bincount(xp, positions, weights.real, minlength),
                 weighted_bincount(xp, positions, weights.imag, minlength))
        return xp.stack(parts, axis=-1).view(np.complex128)[..., 0]
    if getattr(xp, "__name__", None) == "cupy":
        from ..backends.cuda import bincount_in_order
        return bincount_in_order(xp, positions, weights, minlength)
    return xp.bincount(positions, weights=weights, minlength=minlength)


def _named_results(fn, name, binary=None):
    """`fn` returning return_types.<name> (values=..., indices=...; linalg_eigh's eigenvalues,
    eigenvectors, ...) where it returns a tuple (the registry's kernels return plain tuples; the name is
    given where the user gets them). `binary`: what a tensor second argument means (torch.max(a, b) is
    maximum), as PyTorch's argument parser picks the overload."""
    cls = getattr(return_types, name)

    def named(*args, **kwargs):
        if binary is not None and ("other" in kwargs or (len(args) > 1 and isinstance(args[1], Tensor))):
            return binary(*args, **kwargs)
        out = fn(*args, **kwargs)
        return cls(*out) if out.__class__ is tuple else out
    named.__name__ = named.__qualname__ = fn.__name__
    named.__doc__ = fn.__doc__
    named.__module__ = fn.__module__
    named.op = fn.op
    fn.op.function = named
    return named
