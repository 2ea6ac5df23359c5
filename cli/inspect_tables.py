"""`inspect` for people: the node table, the backward graph, its dependencies, its order.

These are the four things one reads in PyTorch's engine to know what a backward
pass will do: which grad_fn each tensor has, where its next_edges go (with
input_nr), how many gradients each node waits for, and the ready-queue order.
"""
from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agrad.cli.layout import Fitted
from agrad.cli.tensor_text import Items, shape_text


def _table(title: str, columns) -> Table:
    # Two spaces between columns, not three: the backward graph of a small graph then fits 80 columns.
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for column in columns:
        numeric = column in {"id", "line", "sequence_nr", "topological_nr", "waits for"}
        # Nothing wraps: names, edge tuples and numbers stay whole so they can be searched for;
        # a table too wide for the terminal is printed as records instead (layout.Fitted).
        table.add_column(column, justify="right" if numeric else "left", overflow="fold", no_wrap=True)
    return table


UINT64_MAX = 2**64 - 1


def _sequence_nr(value: int) -> str:
    # AccumulateGrad's sequence_nr is UINT64_MAX in PyTorch (it must run as soon as it is ready);
    # 20 digits would crowd the table, so it is shown by name. JSON keeps the number.
    return "UINT64_MAX" if value == UINT64_MAX else str(value)


# Rows a person reads of each table; a 100,000-node graph's full detail is in --format json or dot.
MAX_ROWS = 100


def _left_out(table: Table, left: int) -> Table:
    """The table, with a last row counting the rows it leaves out (if any)."""
    if left > 0:
        table.add_row(*(["..."] + [""] * (len(table.columns) - 2)
                        + [f"{left} more left out (--format json or dot)"]))
    return table


def _line(line) -> str:
    return str(line) if line is not None else ""


def node_table(nodes) -> Table:
    views = any(getattr(n, "view_of", None) for n in nodes)     # the column only when a node is a view
    table = _table("Nodes", ["name", "op", "args", "shape", "dtype", "device", "kernel", "line"]
                   + (["view of"] if views else []))
    for n in nodes[:MAX_ROWS]:
        table.add_row(n.name, n.op, ", ".join(n.args), shape_text(n.shape), n.dtype, n.device, n.kernel,
                      _line(n.line), *([n.view_of or ""] if views else []))
    return _left_out(table, len(nodes) - MAX_ROWS)


def saved_table(backward) -> Table:
    """Each Node's saved tensors with the version they were saved at (PyTorch's SavedVariable):
    a backward fails if a tensor's version has moved on since."""
    table = _table("Saved tensors", ["id", "grad_fn", "saved", "shape", "dtype", "version"])
    entries = [(b, entry) for b in backward for entry in getattr(b, "saved", ())]
    for b, entry in entries[:MAX_ROWS]:
        version = str(entry["version"])
        if entry.get("current_version", entry["version"]) != entry["version"]:
            version += f" (now {entry['current_version']})"
        table.add_row(str(b.id), b.name, entry["name"], shape_text(entry["shape"]), entry["dtype"], version)
    return _left_out(table, len(entries) - MAX_ROWS)


def _edge_text(edge, names: dict[int, str]) -> str:
    if edge is None:
        return "None"     # PyTorch's invalid edge: an input that does not require grad
    target, input_nr = edge
    return f"({names.get(target, '?')} #{target}, {input_nr})"


def backward_table(backward) -> Table:
    names = {b.id: b.name for b in backward}
    table = _table("Backward graph", ["id", "grad_fn", "node", "next_edges", "sequence_nr", "topological_nr"])
    for b in backward[:MAX_ROWS]:
        table.add_row(str(b.id), b.name, b.node or "", "\n".join(_edge_text(e, names) for e in b.next_edges) or "()",
                      _sequence_nr(b.sequence_nr), str(b.topological_nr))
    return _left_out(table, len(backward) - MAX_ROWS)


def dependency_table(backward) -> Table:
    table = _table("Dependencies", ["id", "grad_fn", "waits for"])
    for b in backward[:MAX_ROWS]:
        table.add_row(str(b.id), b.name, str(b.dependencies))
    return _left_out(table, len(backward) - MAX_ROWS)


def order_text(order, backward) -> RenderableType:
    """The ready-queue order, wrapped only between steps."""
    names = {b.id: b.name for b in backward}
    steps = [f"{names.get(i, '?')} #{i}" for i in order[:MAX_ROWS]]
    arrows = [f"{step} ->" for step in steps[:-1]] + steps[-1:]
    if len(order) > MAX_ROWS:
        arrows[-1] += " ->"
        arrows.append(f"... ({len(order) - MAX_ROWS} more steps left out: --format json or dot)")
    return Group(Text("Execution order", style="bold"), Items(arrows, sep=" ") if steps else Text("(no backward pass)"))


def inspect_view(result) -> RenderableType:
    parts: list[RenderableType] = [Text.assemble((result.graph, "bold"), f"  {result.file}"), Text(""),
                                   Fitted(node_table(result.nodes))]
    if result.backward:
        parts += [Text(""), Fitted(backward_table(result.backward)), Text(""),
                  Fitted(dependency_table(result.backward))]
        if any(getattr(b, "saved", None) for b in result.backward):
            parts += [Text(""), Fitted(saved_table(result.backward))]
    parts += [Text(""), order_text(result.order, result.backward)]
    return Group(*parts)
