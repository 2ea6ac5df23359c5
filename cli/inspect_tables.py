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

from agrad.cli.layout import FirstFit, Fitted
from agrad.cli.tensor_text import Items, shape_text


NUMERIC = {"id", "line", "sequence_nr", "topological_nr", "seq_nr", "topo_nr", "waits for"}
ARGS_WIDTH = 28          # the args column shortened (with an ellipsis) when the whole table does not fit
# Shorter headers for the narrower forms of a table (the JSON keeps the full names)
SHORT_HEADERS = {"sequence_nr": "seq_nr", "topological_nr": "topo_nr"}


def _table(title: str, columns, shortened: tuple[str, ...] = ()) -> Table:
    # Two spaces between columns, not three: the backward graph of a small graph then fits 80 columns.
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for column in columns:
        # Nothing wraps: names, edge tuples and numbers stay whole so they can be searched for; a
        # `shortened` column ends in an ellipsis, and a table too wide even so is printed as records
        # (layout.FirstFit).
        if column in shortened:
            table.add_column(column, overflow="ellipsis", no_wrap=True, max_width=ARGS_WIDTH)
        else:
            table.add_column(column, justify="right" if column in NUMERIC else "left", overflow="fold",
                             no_wrap=True)
    return table


UINT64_MAX = 2**64 - 1


def _sequence_nr(value: int) -> str:
    # AccumulateGrad's sequence_nr is UINT64_MAX in PyTorch (it must run as soon as it is ready);
    # 20 digits would crowd the table, so it is shown by name. JSON keeps the number.
    return "UINT64_MAX" if value == UINT64_MAX else str(value)


# Rows a person reads of each table; a 100,000-node graph's full detail is in --format json or dot.
MAX_ROWS = 100


def _left_out(table: Table, left: int) -> Table:
    """The table, with a caption counting the rows it leaves out (if any): a caption, not a row, so
    the count does not widen the last column."""
    if left > 0:
        table.add_row(*(["..."] + [""] * (len(table.columns) - 1)))
        table.caption = f"... {left} more left out (--format json or dot)"
        table.caption_justify = "left"
    return table


def _line(line) -> str:
    return str(line) if line is not None else ""


def node_table(nodes, compact: bool = False, kernels: bool = True) -> Table:
    """`compact`: a column whose every row says the same (dtype, device, kernel) moves into the title,
    and the args are shortened, so that a wide graph stays a table at 120 columns; without `kernels`,
    the kernel column is left to `--format json`."""
    views = any(getattr(n, "view_of", None) for n in nodes)     # the column only when a node is a view
    columns = ["name", "op", "args", "shape", "dtype", "device", "kernel", "line"] + (["view of"] if views else [])
    title = "Nodes"
    if compact:
        same = {c: {getattr(n, c) for n in nodes} for c in ("dtype", "device", "kernel")}
        uniform = [c for c in same if len(same[c]) == 1]
        columns = [c for c in columns if c not in uniform and (kernels or c != "kernel")]
        notes = [f"{c} {next(iter(same[c]))}" for c in uniform] + ([] if kernels else ["kernels: --format json"])
        if notes:
            title += " (" + ", ".join(notes) + ")"
    table = _table(title, columns, shortened=("args",) if compact else ())
    for n in nodes[:MAX_ROWS]:
        cells = {"name": n.name, "op": n.op, "args": ", ".join(n.args), "shape": shape_text(n.shape),
                 "dtype": n.dtype, "device": n.device, "kernel": n.kernel, "line": _line(n.line),
                 "view of": getattr(n, "view_of", None) or ""}
        table.add_row(*(cells[c] for c in columns))
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


def backward_table(backward, compact: bool = False) -> Table:
    names = {b.id: b.name for b in backward}
    columns = ["id", "grad_fn", "node", "next_edges", "sequence_nr", "topological_nr"]
    table = _table("Backward graph", [SHORT_HEADERS.get(c, c) for c in columns] if compact else columns)
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
                                   FirstFit(node_table(result.nodes), node_table(result.nodes, compact=True),
                                            node_table(result.nodes, compact=True, kernels=False))]
    if result.backward:
        parts += [Text(""), FirstFit(backward_table(result.backward), backward_table(result.backward, compact=True)),
                  Text(""),
                  Fitted(dependency_table(result.backward))]
        if any(getattr(b, "saved", None) for b in result.backward):
            parts += [Text(""), Fitted(saved_table(result.backward))]
    parts += [Text(""), order_text(result.order, result.backward)]
    return Group(*parts)
