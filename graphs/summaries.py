"""Tensors as plain data for the CLI (SPEC §2.1): the full value up to 100,000
elements, and min/max/mean/norm for every float tensor."""
from __future__ import annotations

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
        wide = array.astype(np.float64)
        summary.summary = {"min": float(wide.min()), "max": float(wide.max()), "mean": float(wide.mean()),
                           "norm": float(np.linalg.norm(wide.ravel()))}
    return summary
