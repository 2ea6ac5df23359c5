"""A tensor as one table cell: its values, or a summary line when it is large."""
from __future__ import annotations

import math

# SPEC §2: tensors of more than 64 elements print as a summary, not their values.
MAX_ELEMENTS_SHOWN = 64


def number_text(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value is None:                 # JSON-style null for a value the library could not give
        return "None"
    text = f"{value:.6g}"
    # NOTE: keep floats recognisable as floats ("4.0", not "4"), as Python prints them.
    return text if any(c in text for c in ".einf") else text + ".0"


def nested_text(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(nested_text(v) for v in value) + "]"
    return number_text(value)


def shape_text(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def summary_text(tensor) -> str:
    stats = tensor.summary or {}
    parts = [f"shape {shape_text(tensor.shape)}"]
    parts += [f"{name} {number_text(stats[name])}" for name in ("min", "max", "mean", "norm") if name in stats]
    return "  ".join(parts)


def value_text(tensor) -> str:
    numel = tensor.numel or math.prod(tensor.shape)
    if numel > MAX_ELEMENTS_SHOWN or tensor.value is None:
        return summary_text(tensor)
    return nested_text(tensor.value)
