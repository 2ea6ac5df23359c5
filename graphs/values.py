"""Numbers written in a graph file, checked against the dtype they will become.

YAML and Python read integers of any size and floats up to about 1.8e308; a
value is only wrong once it meets its dtype (`2**32` fits int64, not int32).
These checks run where the dtype is known, and name the offending element.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

# NumPy's limit on dimensions (NPY_MAXDIMS), as the Meta backend has it (agrad.backends.meta,
# not imported here: this module serves the file format, before the engine loads).
MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32
INT64_MAX = 2**63 - 1

_NP_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "uint8": np.uint8,
              "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def dtype_range(dtype: str) -> tuple[float | int, float | int] | None:
    """The smallest and largest finite values of `dtype`; None for bool (any number converts)."""
    np_dtype = _NP_DTYPES.get(dtype)
    if np_dtype is None:
        return None
    info = np.finfo(np_dtype) if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype)
    return (float(info.min), float(info.max)) if isinstance(info, np.finfo) else (int(info.min), int(info.max))


def range_text(dtype: str) -> str:
    lo, hi = dtype_range(dtype)
    return f"{lo:.4g} to {hi:.4g}" if isinstance(lo, float) else f"{lo} to {hi}"


def fits(number: Any, dtype: str) -> bool:
    """Whether one number converts to `dtype` without overflow (NaN and ±inf fit only floats)."""
    bounds = dtype_range(dtype)
    if bounds is None or isinstance(number, bool):
        return True
    if isinstance(number, float) and not math.isfinite(number):
        return dtype.startswith("float")
    lo, hi = bounds
    return lo <= number <= hi


def first_misfit(value: Any, dtype: str) -> tuple[tuple[int, ...], Any] | None:
    """The index and value of the first number in a (nested-list) literal that `dtype`
    cannot hold, or None. Iterative: literals are as deep as the YAML allows."""
    bounds = dtype_range(dtype)
    if bounds is None or _surely_fits(value, dtype, bounds):
        return None
    todo: list[tuple[tuple[int, ...], Any]] = [((), value)]
    while todo:
        index, item = todo.pop()
        if isinstance(item, list):
            todo.extend(((*index, i), v) for i, v in reversed(list(enumerate(item))))
        elif not fits(item, dtype):
            return index, item
    return None


def _surely_fits(value: Any, dtype: str, bounds) -> bool:
    """A vectorised pass for the common case; strict bounds leave the edges to the exact walk."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (OverflowError, ValueError, TypeError):
        return False
    if array.size == 0:
        return True
    finite = np.isfinite(array)
    if not finite.all() and not dtype.startswith("float"):
        return False
    lo, hi = bounds
    inside = array[finite]
    return inside.size == 0 or bool(lo < inside.min() and inside.max() < hi)


def misfit_message(number: Any, dtype: str, what: str) -> str:
    shown = f"{number:.6g}" if isinstance(number, float) else (str(number) if len(str(number)) <= 24 else
                                                               f"an integer of {len(str(number))} digits")
    return f"{what} {shown} does not fit {dtype} (its range is {range_text(dtype)})"


def misfit_in(value: Any, dtype: str, what: str) -> str | None:
    """The message for the first number of `value` that `dtype` cannot hold, or None."""
    misfit = first_misfit(value, dtype)
    return None if misfit is None else misfit_message(misfit[1], dtype, what)
