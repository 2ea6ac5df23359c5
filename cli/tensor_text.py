"""A tensor as one table cell, printed as NumPy and PyTorch print arrays.

Values go through `numpy.array2string` (aligned columns, rows wrapped at the
width the cell is given, never inside a number); a tensor of more than 64
elements (SPEC §2) prints its summary line and its first and last items, as
`threshold` and `edgeitems` abbreviate it. Both cells wrap only between whole
items, so a label is never parted from its value.
"""
from __future__ import annotations

import math

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

# SPEC §2: tensors of more than 64 elements print as a summary, not their values.
MAX_ELEMENTS_SHOWN = 64
EDGE_ITEMS = 3          # numpy's and PyTorch's default: items kept at each end of an abbreviated dimension


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


def shape_text(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def summary_items(tensor) -> list[str]:
    """`shape [..]`, `min ..`, `max ..`, `mean ..`, `norm ..`: each label with its value."""
    stats = tensor.summary or {}
    return [f"shape {shape_text(tensor.shape)}"] + [f"{name} {number_text(stats[name])}"
                                                    for name in ("min", "max", "mean", "norm") if name in stats]


def summary_text(tensor) -> str:
    return "  ".join(summary_items(tensor))


def _array(tensor):
    import numpy

    dtype = {"bool": numpy.bool_}.get(tensor.dtype, tensor.dtype)
    try:
        return numpy.array(tensor.value, dtype=dtype)
    except TypeError:                  # a dtype NumPy does not know by that name (a plugin's): as given
        return numpy.array(tensor.value)


def array_text(tensor, width: int = 80) -> str:
    """The values as NumPy prints them, each line at most `width` columns (a 0-d tensor as Python does)."""
    import numpy

    if not tensor.shape:
        return number_text(tensor.value)
    return numpy.array2string(_array(tensor), max_line_width=max(width, 1), separator=", ",
                              threshold=MAX_ELEMENTS_SHOWN, edgeitems=EDGE_ITEMS)


class Items:
    """Items joined by `sep`, wrapped only between items (a summary line, an execution order)."""

    def __init__(self, items: list[str], sep: str = "  "):
        self.items = items
        self.sep = sep

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines, line = [], ""
        for item in self.items:
            candidate = f"{line}{self.sep}{item}" if line else item
            if line and len(candidate) > options.max_width:
                lines.append(line)
                candidate = item
            line = candidate
        yield Text("\n".join([*lines, line]), overflow="fold")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(max(map(len, self.items)), len(self.sep.join(self.items))).clamp(max_width=options.max_width)


class ArrayValue:
    """A tensor's values: one line when there is room, NumPy's wrapped rows when not."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(array_text(self.tensor, options.max_width), overflow="fold")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        one_line = array_text(self.tensor, 1 << 16)
        widest = max(len(line) for line in array_text(self.tensor, 1).splitlines())
        return Measurement(min(widest, len(one_line)), max(len(line) for line in one_line.splitlines())
                           ).clamp(max_width=options.max_width)


class LargeValue:
    """A tensor of more than 64 elements: its summary line, then its abbreviated values."""

    def __init__(self, tensor):
        self.summary = Items(summary_items(tensor))
        self.values = ArrayValue(tensor) if tensor.value is not None else None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.summary
        if self.values is not None:
            yield self.values

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        parts = [Measurement.get(console, options, p) for p in (self.summary, self.values) if p is not None]
        return Measurement(max(p.minimum for p in parts), max(p.maximum for p in parts))


def is_large(tensor) -> bool:
    return (tensor.numel or math.prod(tensor.shape)) > MAX_ELEMENTS_SHOWN or tensor.value is None


def value_cell(tensor):
    """The `value` cell of the outputs and gradients tables."""
    return LargeValue(tensor) if is_large(tensor) else ArrayValue(tensor)


def value_text(tensor, width: int = 80) -> str:
    """The same as plain text, at `width` columns."""
    if not is_large(tensor):
        return array_text(tensor, width)
    text = summary_text(tensor)
    return text if tensor.value is None else text + "\n" + array_text(tensor, width)
