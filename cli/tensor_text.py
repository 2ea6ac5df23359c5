"""A tensor as one table cell, printed as NumPy and PyTorch print arrays.

Two ways (`agrad run --values`): `compact`, the default, prints a tensor of at
most 8 elements as its values and a larger one as one summary line (shape, min,
max, mean, norm), every number to 4 significant digits, so a CNN's outputs and
gradients take a line each; `full` prints every value through `numpy.array2string`
(aligned columns, rows wrapped at the width the cell is given, never inside a
number), after the summary line for a tensor of more than 64 elements. Both wrap
only between whole items, so a label is never parted from its value.
"""
from __future__ import annotations

import math

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

# SPEC §2: tensors of more than 64 elements print as a summary (`full` adds every value after it).
MAX_ELEMENTS_SHOWN = 64
COMPACT_ELEMENTS = 8        # `compact`: up to this many values fit a table cell on one or two lines
COMPACT_DIGITS = 4          # significant digits in `compact`, as PyTorch's default print shows 4
VALUE_MODES = ("compact", "full")


def number_text(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value is None:                 # JSON-style null for a value the library could not give
        return "None"
    if isinstance(value, complex):    # as Python prints one: (1.5-2j)
        return f"({value.real:.6g}{value.imag:+.6g}j)"
    text = f"{value:.6g}"
    # NOTE: keep floats recognisable as floats ("4.0", not "4"), as Python prints them.
    return text if any(c in text for c in ".einf") else text + ".0"


def compact_number(value) -> str:
    """`value` to 4 significant digits, still recognisable as a float ("4.0", "0.1235", "1.5e-07")."""
    if isinstance(value, (bool, int)) or value is None:
        return number_text(value)
    if isinstance(value, complex):
        return f"({value.real:.{COMPACT_DIGITS}g}{value.imag:+.{COMPACT_DIGITS}g}j)"
    text = f"{value:.{COMPACT_DIGITS}g}"
    return text if any(c in text for c in ".einf") else text + ".0"


def shape_text(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def summary_items(tensor, compact: bool = False) -> list[str]:
    """`shape [..]`, `min ..`, `max ..`, `mean ..`, `norm ..`: each label with its value. `compact` leaves
    the shape to the table's shape column (a tensor without statistics keeps it: the cell is not empty)."""
    stats = tensor.summary or {}
    number = compact_number if compact else number_text
    items = [f"{name} {number(stats[name])}" for name in ("min", "max", "mean", "norm") if name in stats]
    return items if compact and items else [f"shape {shape_text(tensor.shape)}"] + items


def summary_text(tensor, compact: bool = False) -> str:
    return "  ".join(summary_items(tensor, compact))


def _array(tensor):
    import numpy

    dtype = {"bool": numpy.bool_}.get(tensor.dtype, tensor.dtype)
    try:
        return numpy.array(tensor.value, dtype=dtype)
    except TypeError:                  # a dtype NumPy does not know by that name (a plugin's): as given
        return numpy.array(tensor.value)


def array_text(tensor, width: int = 80, compact: bool = False) -> str:
    """The values as NumPy prints them, each line at most `width` columns (a 0-d tensor as Python does);
    `compact`: each float to 4 significant digits."""
    import sys

    import numpy

    if not tensor.shape:
        return (compact_number if compact else number_text)(tensor.value)
    formatter = {"float_kind": compact_number} if compact else None
    return numpy.array2string(_array(tensor), max_line_width=max(width, 1), separator=", ",
                              threshold=sys.maxsize, formatter=formatter)


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

    def __init__(self, tensor, compact: bool = False):
        self.tensor = tensor
        self.compact = compact

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(array_text(self.tensor, options.max_width, self.compact), overflow="fold")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        one_line = array_text(self.tensor, 1 << 16, self.compact)
        widest = max(len(line) for line in array_text(self.tensor, 1, self.compact).splitlines())
        return Measurement(min(widest, len(one_line)), max(len(line) for line in one_line.splitlines())
                           ).clamp(max_width=options.max_width)


class LargeValue:
    """A tensor of more than 64 elements: its summary line, then (`full`) every value."""

    def __init__(self, tensor, values: bool = True):
        self.summary = Items(summary_items(tensor, compact=not values))
        self.values = ArrayValue(tensor) if values and tensor.value is not None else None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.summary
        if self.values is not None:
            yield self.values

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        parts = [Measurement.get(console, options, p) for p in (self.summary, self.values) if p is not None]
        return Measurement(max(p.minimum for p in parts), max(p.maximum for p in parts))


def is_large(tensor, values: str = "full") -> bool:
    limit = COMPACT_ELEMENTS if values == "compact" else MAX_ELEMENTS_SHOWN
    return (tensor.numel or math.prod(tensor.shape)) > limit or tensor.value is None


def value_cell(tensor, values: str = "compact"):
    """The `value` cell of the outputs and gradients tables; `values`: compact or full."""
    if is_large(tensor, values):
        return LargeValue(tensor, values=values == "full")
    return ArrayValue(tensor, compact=values == "compact")


def value_text(tensor, width: int = 80, values: str = "compact") -> str:
    """The same as plain text, at `width` columns."""
    compact = values == "compact"
    if not is_large(tensor, values):
        return array_text(tensor, width, compact)
    text = summary_text(tensor, compact)
    return text if tensor.value is None or compact else text + "\n" + array_text(tensor, width)
