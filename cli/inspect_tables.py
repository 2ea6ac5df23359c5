"""`inspect` for people: the node table, the backward graph, its dependencies, its order.

These are the four things one reads in PyTorch's engine to know what a backward
pass will do: which grad_fn each tensor has, where its next_edges go (with
input_nr), how many gradients each node waits for, and the ready-queue order.
"""
from __future__ import annotations

from array import array
from itertools import islice

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


class Shown:
    """What the tables show of an inspect result, read once, a list at a time, in its order (the
    rows of a streamed result are made as they are read): each list's first MAX_ROWS rows and its
    length, and what a table needs of all of them, so a 1,000,000-node graph's rows are not held."""

    def __init__(self, result):
        self.graph, self.file = result.graph, result.file
        self.nodes, self.node_count, self.views = [], 0, False
        self.same: dict[str, set] = {"dtype": set(), "device": set(), "kernel": set()}   # up to 2 values each
        for n in result.nodes:
            if self.node_count < MAX_ROWS:
                self.nodes.append(n)
            self.node_count += 1
            self.views = self.views or bool(getattr(n, "view_of", None))
            for column, seen in self.same.items():
                if len(seen) < 2:
                    seen.add(getattr(n, column))
        self.backward, self.backward_count = [], 0
        self.saved: list[tuple] = []            # (backward row, saved entry), the first MAX_ROWS
        self.saved_count = 0
        # each backward Node's name by id, as an index into the few distinct names (an edge or a step
        # of the order may name any Node)
        self._kinds: dict[str, int] = {}
        self._names: list[str] = []
        self._codes = array("I")
        self._elsewhere: dict[int, str] = {}     # ids not in row order (a result made by hand)
        for b in result.backward:
            if self.backward_count < MAX_ROWS:
                self.backward.append(b)
            self.backward_count += 1
            code = self._kinds.get(b.name)
            if code is None:
                code = self._kinds[b.name] = len(self._names)
                self._names.append(b.name)
            if b.id == len(self._codes):
                self._codes.append(code)
            else:
                self._elsewhere[b.id] = b.name
            for entry in getattr(b, "saved", ()):
                if self.saved_count < MAX_ROWS:
                    self.saved.append((b, entry))
                self.saved_count += 1
        order = iter(result.order)
        self.order = list(islice(order, MAX_ROWS))
        self.order_count = len(self.order) + sum(1 for _ in order)

    def name(self, node_id: int) -> str:
        if 0 <= node_id < len(self._codes):
            return self._names[self._codes[node_id]]
        return self._elsewhere.get(node_id, "?")


def node_table(shown: Shown, compact: bool = False, kernels: bool = True) -> Table:
    """`compact`: a column whose every row says the same (dtype, device, kernel) moves into the title,
    and the args are shortened, so that a wide graph stays a table at 120 columns; without `kernels`,
    the kernel column is left to `--format json`."""
    columns = ["name", "op", "args", "shape", "dtype", "device", "kernel", "line"] + \
        (["view of"] if shown.views else [])         # the column only when a node is a view
    title = "Nodes"
    if compact:
        same = shown.same
        uniform = [c for c in same if len(same[c]) == 1]
        columns = [c for c in columns if c not in uniform and (kernels or c != "kernel")]
        notes = [f"{c} {next(iter(same[c]))}" for c in uniform] + ([] if kernels else ["kernels: --format json"])
        if notes:
            title += " (" + ", ".join(notes) + ")"
    table = _table(title, columns, shortened=("args",) if compact else ())
    for n in shown.nodes:
        cells = {"name": n.name, "op": n.op, "args": ", ".join(n.args), "shape": shape_text(n.shape),
                 "dtype": n.dtype, "device": n.device, "kernel": n.kernel, "line": _line(n.line),
                 "view of": getattr(n, "view_of", None) or ""}
        table.add_row(*(cells[c] for c in columns))
    return _left_out(table, shown.node_count - MAX_ROWS)


def saved_table(shown: Shown) -> Table:
    """Each Node's saved tensors with the version they were saved at (PyTorch's SavedVariable):
    a backward fails if a tensor's version has moved on since."""
    table = _table("Saved tensors", ["id", "grad_fn", "saved", "shape", "dtype", "version"])
    for b, entry in shown.saved:
        version = str(entry["version"])
        if entry.get("current_version", entry["version"]) != entry["version"]:
            version += f" (now {entry['current_version']})"
        table.add_row(str(b.id), b.name, entry["name"], shape_text(entry["shape"]), entry["dtype"], version)
    return _left_out(table, shown.saved_count - MAX_ROWS)


def _edge_text(edge, shown: Shown) -> str:
    if edge is None:
        return "None"     # PyTorch's invalid edge: an input that does not require grad
    target, input_nr = edge
    return f"({shown.name(target)} #{target}, {input_nr})"


def backward_table(shown: Shown, compact: bool = False) -> Table:
    columns = ["id", "grad_fn", "node", "next_edges", "sequence_nr", "topological_nr"]
    table = _table("Backward graph", [SHORT_HEADERS.get(c, c) for c in columns] if compact else columns)
    for b in shown.backward:
        table.add_row(str(b.id), b.name, b.node or "", "\n".join(_edge_text(e, shown) for e in b.next_edges) or "()",
                      _sequence_nr(b.sequence_nr), str(b.topological_nr))
    return _left_out(table, shown.backward_count - MAX_ROWS)


def dependency_table(shown: Shown) -> Table:
    table = _table("Dependencies", ["id", "grad_fn", "waits for"])
    for b in shown.backward:
        table.add_row(str(b.id), b.name, str(b.dependencies))
    return _left_out(table, shown.backward_count - MAX_ROWS)


def order_text(shown: Shown) -> RenderableType:
    """The ready-queue order, wrapped only between steps."""
    steps = [f"{shown.name(i)} #{i}" for i in shown.order]
    arrows = [f"{step} ->" for step in steps[:-1]] + steps[-1:]
    if shown.order_count > MAX_ROWS:
        arrows[-1] += " ->"
        arrows.append(f"... ({shown.order_count - MAX_ROWS} more steps left out: --format json or dot)")
    return Group(Text("Execution order", style="bold"), Items(arrows, sep=" ") if steps else Text("(no backward pass)"))


def inspect_view(result) -> RenderableType:
    """The tables of an inspect result: lists, or Rows read here once, a list at a time."""
    shown = Shown(result)
    parts: list[RenderableType] = [Text.assemble((shown.graph, "bold"), f"  {shown.file}"), Text(""),
                                   FirstFit(node_table(shown), node_table(shown, compact=True),
                                            node_table(shown, compact=True, kernels=False))]
    if shown.backward:
        parts += [Text(""), FirstFit(backward_table(shown), backward_table(shown, compact=True)),
                  Text(""),
                  Fitted(dependency_table(shown))]
        if shown.saved:
            parts += [Text(""), Fitted(saved_table(shown))]
    parts += [Text(""), order_text(shown)]
    return Group(*parts)
