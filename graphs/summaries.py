"""Tensors as plain data for the CLI (SPEC §2.1): the full value up to 100,000
elements, and min/max/mean/norm for every float tensor."""
from __future__ import annotations

import math

import numpy as np

from .results import TensorSummary

MAX_VALUE_ELEMENTS = 100_000


def _nested_lists(shape) -> int:
    """How many lists `tolist()` builds: a (10**12, 0) array has no elements but 10**12 lists."""
    total, count = 0, 1
    for size in shape[:-1]:
        count *= size
        total += count
        if count == 0 or total > MAX_VALUE_ELEMENTS:
            break
    return total


def summarize(tensor) -> TensorSummary:
    array = tensor.detach().cpu().numpy()
    summary = TensorSummary(shape=list(array.shape), dtype=tensor.dtype.name, device=str(tensor.device),
                            numel=int(array.size))
    if array.size <= MAX_VALUE_ELEMENTS and _nested_lists(array.shape) <= MAX_VALUE_ELEMENTS:
        summary.value = array.tolist()
    if np.issubdtype(array.dtype, np.floating) and array.size:
        summary.summary = _float_summary(array)
    return summary


# A float64 copy of a tensor this large would need more memory than the tensor itself:
# larger tensors are summed in float64 pieces instead (the last bits may differ).
_WHOLE_COPY_ELEMENTS = 2 ** 24
_PIECE = 2 ** 20


def _float_summary(array: np.ndarray) -> dict[str, float]:
    if array.size <= _WHOLE_COPY_ELEMENTS:
        wide = array.astype(np.float64)
        return {"min": float(wide.min()), "max": float(wide.max()), "mean": float(wide.mean()),
                "norm": float(np.linalg.norm(wide.ravel()))}
    flat = array.reshape(-1)
    total = squares = 0.0
    for start in range(0, flat.size, _PIECE):
        piece = flat[start:start + _PIECE].astype(np.float64)
        total += float(piece.sum())
        squares += float(np.dot(piece, piece))
    return {"min": float(flat.min()), "max": float(flat.max()), "mean": total / flat.size,
            "norm": math.sqrt(squares)}
