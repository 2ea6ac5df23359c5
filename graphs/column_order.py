"""The run order of a graph whose nodes are kept column-wise: BoundNodes made as they are read.

A checked graph's order is a list of BoundNodes, each holding its NodeSpec, arguments and
positions: about 2.5 KB a node of `tanh(nK) * 0.999 + x`, gigabytes at 1,000,000 nodes, for
objects a run reads once. Where the column-wise check applied (column_check), every node
of a signature binds as the signature's first node did, so the order keeps, per YAML node,
only its signature's `Binding`: iterating makes each node's NodeSpecs from its text and binds
them with the first node's layouts, and they are gone once the reader lets go.

What a run reads of a node is less: its plan (executor.call_plan) and the names it reads
(release_plan). Both are the first node's with its names put in place, so a Binding also
keeps them as templates, functions of a node's name and the names its text writes
(`names_in`): `plans()` and `last_reads()` make them with no NodeSpec, position or BoundNode.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate, islice

from agrad import codegen

from .executor import call_plan
from .expressions import names_and_shifts, names_in
from .spec import refs_in


class Binding:
    """How every node of one signature binds: per NodeSpec its text makes, `(layout, schema, entry)`
    (binding._layout's function, or None where `bind` binds it: a written kind no layout
    covers); and the templates of its plans and reads, or None where a value of the first
    node's could not be told apart from its names (then they are read off its BoundNodes).

    What its nodes read is kept by position rather than as names (release_plan needs only
    each value's last reader): `outer`, per name from outside the YAML node (a placeholder
    number, or -1 for the node's own name), the last of its NodeSpecs that reads it; `dying`,
    the node's name -> per NodeSpec, the values made inside the node (`n.1`, `n.2`) that
    nothing after it reads, as ReleasePlan keeps an entry. Those values are the node's own:
    no other node's text can name them (a name has no dot), so where they die is the same in
    every node of the signature, and a run of a million nodes never looks them up by name."""
    __slots__ = ("layouts", "plans", "outer", "dying")

    def __init__(self, layouts: list[tuple], plans, outer, dying):
        self.layouts = layouts
        self.plans = plans          # (name, names) -> [plan, ...]
        self.outer = outer          # ((placeholder number or -1, NodeSpec number), ...)
        self.dying = dying          # name -> [(), "n.1", ("n.1", "n.2"), ...]


def templates(bound_nodes: list, parts: list[tuple], target: str, names: list[str]):
    """A Binding's `plans`, `outer` and `dying` for a signature from its first node (`target`,
    whose text writes `names`): `parts[k]` is `executor.plan_parts` of `bound_nodes[k]`. All
    None where a value cannot be placed: a list holding tensors, or a name neither written nor
    made here."""
    constants: list = []
    where = {n: f"N[{i}]" for i, n in enumerate(names)}

    def named(name) -> str | None:
        if name == target:
            return "T"
        if name.startswith(target + "."):
            return f"T + {name[len(target):]!r}"
        return where.get(name)

    def constant(value) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    plans = []
    last: dict[str, int] = {}           # placed name -> the last NodeSpec that makes or reads it
    for k, (bound, (call, function, operands, kinds)) in enumerate(zip(bound_nodes, parts)):
        items = [constant(call), named(bound.name), constant(function)]
        for operand, kind in zip(operands, kinds):
            if kind == "t":
                items.append(named(operand))
            elif kind == "c":
                items.append(constant(operand))
            elif isinstance(operand[1], str):   # a tensor by name, converted (executor._CONVERTED)
                items.append(f"({constant(operand[0])}, {named(operand[1])}, {constant(operand[2])})")
            elif not refs_in(operand[1]):       # a list of constants (`dim=[0, 1]`): every node's own
                items.append(constant(operand))
            else:
                return None, None, None
        refs = [named(r.name) for r in bound.refs()]
        if None in items or None in refs:
            return None, None, None
        plans.append(f"({', '.join(items)})")
        for placed in (*refs, items[1]):
            last[placed] = k
    scope = {"K": tuple(constants)}
    outer = tuple((-1 if placed == "T" else int(placed[2:-1]), k) for placed, k in last.items()
                  if not placed.startswith("T + "))
    dying: list[list[str]] = [[] for _ in bound_nodes]
    for placed, k in last.items():
        if placed.startswith("T + "):
            dying[k].append(placed)
    entries = ["()" if not made else made[0] if len(made) == 1 else f"({', '.join(made)})" for made in dying]
    return (codegen.define(f"def plans(T, N):\n    return [{', '.join(plans)}]\n", scope,
                           "<agrad node plans>", "plans"),
            outer,
            codegen.define(f"def dying(T):\n    return [{', '.join(entries)}]\n", {}, "<agrad node dying>",
                           "dying"))


class ColumnOrder(Sequence):
    """A Sequence of BoundNodes in run order (the file's), made when read; `bindings[i]`: the
    Binding of YAML node number `i` of the columns (one shared by its signature)."""

    __slots__ = ("columns", "bindings", "bind", "_starts")

    def __init__(self, columns, bindings: list[Binding], bind):
        self.columns = columns
        self.bindings = bindings
        self.bind = bind                # Binder.bind_arguments, for a NodeSpec without a layout
        self._starts: list[int] | None = None

    def __iter__(self):
        return self._made(0, len(self.bindings))

    def _rows(self, start: int, stop: int):
        """(number, name, text, shape, binding) of the YAML nodes start..stop."""
        columns = self.columns
        return zip(range(start, stop), islice(columns.block.nodes.items(), start, stop),
                   islice(columns.entries, start, stop), islice(self.bindings, start, stop))

    def _made(self, start: int, stop: int):
        """The BoundNodes of YAML nodes start..stop, each with its plan where its signature has a
        template (a Meta build or an observed run then makes none of its own)."""
        make, bind = self.columns.make, self.bind
        for i, (name, text), shape, binding in self._rows(start, stop):
            names, shifts = names_and_shifts(text)
            plans = binding.plans(name, names) if binding.plans is not None else ()
            for k, (node, (layout, schema, entry)) in enumerate(zip(make(i, name, text, shape, names, shifts),
                                                                   binding.layouts)):
                bound = layout(node, schema, entry) if layout is not None else bind(node, schema, entry)
                if plans:
                    bound.plan = plans[k]
                yield bound

    def plans(self):
        """Each node's plan (executor.call_plan), in order."""
        return self._templated("plans", call_plan)

    def last_reads(self) -> tuple[list, dict[str, int]]:
        """For release_plan: per node of the order, the values made inside its YAML node that die
        there (an entry as ReleasePlan keeps it), and, of every other name read or made, the
        position of the last node that reads or makes it. Only the YAML nodes' own names and the
        names they read are looked up, one dict entry each, not the values inside them."""
        release: list = []
        last: dict[str, int] = {}
        for i, ((name, text), binding, start) in enumerate(zip(self.columns.block.nodes.items(), self.bindings,
                                                               self.starts())):
            if binding.dying is not None:
                names = names_in(text)
                for placeholder, k in binding.outer:
                    last[name if placeholder < 0 else names[placeholder]] = start + k
                release += binding.dying(name)
                continue
            for k, bound in enumerate(self._made(i, i + 1)):
                for ref in bound.refs():
                    last[ref.name] = start + k
                last[bound.name] = start + k
                release.append(())
        return release, last

    def _templated(self, which: str, of_bound):
        """Per node, what a Binding's template `which` makes from its name and text, or, for a
        signature without templates, `of_bound` of its BoundNode."""
        for i, (name, text), _, binding in self._rows(0, len(self.bindings)):
            template = getattr(binding, which)
            if template is not None:
                yield from template(name, names_in(text))
            else:
                for bound in self._made(i, i + 1):
                    yield of_bound(bound)

    def __len__(self) -> int:
        return self.starts()[-1]

    def starts(self) -> list[int]:
        """Where each YAML node's BoundNodes start in the order (and, last, its length)."""
        if self._starts is None:
            self._starts = list(accumulate((len(b.layouts) for b in self.bindings), initial=0))
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
