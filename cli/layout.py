"""Tables that lose nothing at any width: whole when they fit, one block per row when not.

rich shrinks a table that is too wide by wrapping and folding its cells, which
splits a grad_fn name, an edge tuple or a number in two, or drops a column. A
`Fitted` table is printed as it is when its natural width fits the console (80
columns in every pipe and CI log), and otherwise as records, the way `psql \\x`
does: the row's first cell as a heading, then one `column  value` line per cell.
"""
from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

_UNBOUNDED = 1 << 16


def natural_width(console: Console, options: ConsoleOptions, renderable) -> int:
    """The width `renderable` takes when nothing limits it."""
    return Measurement.get(console, options.update_width(_UNBOUNDED), renderable).maximum


def records(table: Table) -> RenderableType:
    """`table` as one block per row: the first cell as the heading, then `column  value` lines."""
    columns = table.columns
    rows = list(zip(*(list(column.cells) for column in columns)))
    parts: list[RenderableType] = []
    if table.title:
        parts.append(Text(str(table.title), style="bold"))
    for row in rows:
        heading = row[0]
        if isinstance(heading, str) and heading.isdigit():     # a bare number says nothing: "id 3"
            heading = f"{columns[0].header} {heading}"
        parts.append(Text.assemble(heading, style="bold") if isinstance(heading, (str, Text)) else heading)
        fields = Table.grid(padding=(0, 2))
        fields.add_column(style="dim", no_wrap=True)
        fields.add_column(overflow="fold")
        for column, cell in zip(columns[1:], row[1:]):
            if cell not in ("", None) and not (isinstance(cell, Text) and not cell.plain):
                fields.add_row(str(column.header), cell)
        parts.append(Padding(fields, (0, 0, 0, 2), expand=False))
    if table.caption:
        parts.append(Text(str(table.caption)))
    return Group(*parts)


class Fitted:
    """`table` when it fits the width it is given, else `narrow` (by default, `records(table)`).

    With `shrinkable`, the table fits as long as its cells can shrink to fit: for
    cells that wrap without loss (a tensor's values wrap NumPy's way, between items).
    """

    def __init__(self, table: Table, narrow: RenderableType | None = None, shrinkable: bool = False):
        self.table = table
        self.narrow = narrow
        self.shrinkable = shrinkable

    def _needs(self, console: Console, options: ConsoleOptions) -> int:
        if self.shrinkable:
            return Measurement.get(console, options.update_width(_UNBOUNDED), self.table).minimum
        return natural_width(console, options, self.table)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self._needs(console, options) <= options.max_width:
            yield self.table
        else:
            yield self.narrow if self.narrow is not None else records(self.table)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)


class FirstFit:
    """The first of `candidates` (tables, widest first) whose natural width fits, else records of the
    last: a table that drops or shortens columns reads better than one block per row."""

    def __init__(self, *candidates: Table):
        self.candidates = candidates

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for table in self.candidates:
            if natural_width(console, options, table) <= options.max_width:
                yield table
                return
        yield records(self.candidates[0])

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.candidates[-1])
