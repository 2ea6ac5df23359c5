"""The run order of a graph whose nodes are kept column-wise: BoundNodes made as they are read.

A checked graph's order is a list of BoundNodes, each holding its NodeSpec, arguments and
positions: about 2.5 KB a node of `tanh(nK) * 0.999 + x`, gigabytes at 1,000,000 nodes, for
objects a run reads once. Where the column-wise check applied (column_check), every node
of a signature binds as the signature's first node did, so the order keeps, per YAML node,
only how its signature binds (one shared list a signature): iterating makes each node's
NodeSpecs from its text and binds them with those layouts, and they are gone once the
reader lets go. Each pass that reads the order makes its nodes again; a repeated run
replays (graphs/replay.py) after its second pass, so they are made a few times at most.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate, islice

from .expressions import names_and_shifts


class ColumnOrder(Sequence):
    """A Sequence of BoundNodes in run order (the file's), made when read.

    `bindings[i]`: for YAML node number `i` of the columns, one `(layout, schema, entry)` per
    NodeSpec its text makes (binding._layout's function, or None where `bind` binds it: a
    written kind no layout covers)."""

    __slots__ = ("columns", "bindings", "bind", "_starts")

    def __init__(self, columns, bindings: list[list[tuple]], bind):
        self.columns = columns
        self.bindings = bindings
        self.bind = bind                # Binder.bind_arguments, for a binding without a layout
        self._starts: list[int] | None = None

    def __iter__(self):
        return self._made(0, len(self.bindings))

    def _made(self, start: int, stop: int):
        columns, bind = self.columns, self.bind
        make = columns.make
        nodes = islice(columns.block.nodes.items(), start, stop)
        for i, (name, text), shape, binding in zip(range(start, stop), nodes, islice(columns.entries, start, stop),
                                                   islice(self.bindings, start, stop)):
            names, shifts = names_and_shifts(text)
            for node, (layout, schema, entry) in zip(make(i, name, text, shape, names, shifts), binding):
                yield layout(node, schema, entry) if layout is not None else bind(node, schema, entry)

    def __len__(self) -> int:
        return self.starts()[-1]

    def starts(self) -> list[int]:
        """Where each YAML node's BoundNodes start in the order (and, last, its length)."""
        if self._starts is None:
            self._starts = list(accumulate((len(b) for b in self.bindings), initial=0))
        return self._starts

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(self)[index]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("order index out of range")
        line = bisect.bisect_right(self.starts(), index) - 1
        return list(self._made(line, line + 1))[index - self._starts[line]]

    def __reversed__(self):
        return reversed(list(self))

    def __eq__(self, other) -> bool:
        if isinstance(other, (ColumnOrder, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

