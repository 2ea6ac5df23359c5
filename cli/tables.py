"""Renderables for people: `run`, `check` and `ops` results as rich tables.

Renderers return renderables and never print (rich-cli's rule), so a test can
render one at a fixed width and compare it with a golden copy.
"""
from __future__ import annotations

import itertools

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agrad.cli.layout import Fitted
from agrad.cli.tensor_text import shape_text, value_cell

PASS = Text("pass", style="green")
FAIL = Text("FAIL", style="bold red")


def _table(title: str, *columns: str, numeric: tuple[str, ...] = ()) -> Table:
    """A titled table; the `numeric` columns are right-aligned so their digits line up."""
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold", justify="right" if column in numeric else "left")
    return table


def _ms(value: float) -> str:
    return f"{value:.3f}"


# What a person reads of a table; a 100,000-node graph would otherwise print a row per node.
MAX_ROWS = 40


def tensor_table(title: str, tensors: dict, max_rows: int = MAX_ROWS, values: str = "compact",
                 device: str | None = None) -> RenderableType:
    """Outputs or gradients: a None gradient is one nothing reached.

    Only the values wrap (NumPy's way, between items); when even they cannot make
    the table fit, each tensor is printed as a record. Beyond `max_rows` rows the
    rest are counted in a last row (`--format json` and `--save` keep every tensor).
    `values`: compact (a summary line above 8 elements) or full (every value). `device`: the run's
    device, named in the heading; the device column is left out when every tensor is there.
    """
    # every tensor on the run's device (the heading names it): the column would repeat it on each row
    devices = {t.device for t in tensors.values() if t is not None}
    columns = ("name", "shape", "dtype", "device") if len(devices) > 1 or device not in (devices | {None}) \
        else ("name", "shape", "dtype")
    table = _table(title, *columns, "value")
    for column in table.columns[:-1]:
        column.no_wrap = True
    total = len(tensors)
    shown = max_rows - 1 if total > max_rows else total      # the last row says what was left out
    blank = ("",) * (len(columns) - 1)
    for name, tensor in itertools.islice(tensors.items(), shown):
        if tensor is None:
            table.add_row(name, *blank, Text("None (no gradient reached it)", style="dim"))
        else:
            cells = (shape_text(tensor.shape), tensor.dtype, tensor.device)[:len(columns) - 1]
            table.add_row(name, *cells, value_cell(tensor, values))
    if total > shown:
        left = total - shown
        table.add_row("...", *blank, Text(f"{left} more left out (--format json, --save)", style="dim"))
    return Fitted(table, shrinkable=True)


NOT_RETAINED_NAMES = 12      # names listed on the folded line before "and N more"


def not_retained_line(names) -> Text:
    """The non-leaf nodes whose gradients are not kept, on one line instead of a row each."""
    shown = ", ".join(names[:NOT_RETAINED_NAMES])
    more = f" and {len(names) - NOT_RETAINED_NAMES} more" if len(names) > NOT_RETAINED_NAMES else ""
    return Text(f"not retained: {shown}{more} (non-leaf; `retain_grad:` keeps one)", style="dim")


def timings_table(timings_ms: dict, repeat: dict | None, passes: int = 1) -> Table:
    """Phase timings; with `--repeat`, the repeated phases show their fastest and median pass."""
    if repeat is None:
        table = _table("Timings", "phase", "ms", numeric=("ms",))
        for phase, ms in timings_ms.items():
            table.add_row(phase, _ms(ms))
        return table
    table = _table(f"Timings ({passes} passes)", "phase", "min ms", "median ms", numeric=("min ms", "median ms"))
    for phase, ms in timings_ms.items():
        stats = repeat.get(phase)
        if stats is None:       # parse and build happen once, whatever --repeat says
            table.add_row(phase, _ms(ms), "")
        else:
            table.add_row(phase, _ms(stats["min"]), _ms(stats["median"]))
    return table


def expect_line(expect) -> Text | None:
    """The closing verdict; an expectation `run` cannot check (`train:`) is never called passed."""
    later = (f"{' and '.join(expect.unchecked)} not checked (`agrad train` or `agrad test` checks it)"
             if expect.unchecked else "")
    if not expect.checked:
        return Text.assemble("expect: ", (later, "yellow")) if later else None
    if expect.passed:
        return Text.assemble("expect: ", ("passed", "green"), f"; {later}" if later else "")
    count = len(expect.failures)
    return Text.assemble("expect: ", ("FAILED", "bold red"), f" ({count} mismatch{'es' if count != 1 else ''})")


def anomaly_line(anomalies) -> Text | None:
    """Only present when `--anomaly` found something; the details are on stderr."""
    if not anomalies:
        return None
    count = len(anomalies)
    return Text.assemble("anomaly: ", ("NaN/Inf", "bold red"), f" in {count} place{'s' if count != 1 else ''}")


def run_view(result, passes: int = 1, values: str = "compact") -> RenderableType:
    parts: list[RenderableType] = [
        Text.assemble((result.graph, "bold"), f"  {result.file}  on {result.device}"),
        Text(""),
        tensor_table("Outputs", result.outputs, values=values, device=result.device),
        Text(""),
    ]
    if result.grads:
        parts.append(tensor_table("Gradients", result.grads, values=values, device=result.device))
    if result.not_retained:
        parts.append(not_retained_line(result.not_retained))
    if result.grads or result.not_retained:
        parts.append(Text(""))
    parts.append(timings_table(result.timings_ms, result.repeat, passes))
    closing = [line for line in (expect_line(result.expect), anomaly_line(result.anomalies)) if line is not None]
    if closing:
        parts += [Text(""), *closing]
    return Group(*parts)


def worst_element_text(name: str, leaf) -> str:
    """`a[1, 0]: analytic 4, numeric 4.5` -- where a failed leaf is most wrong (--fast: along a direction);
    for a leaf whose backward is not reentrant, by how much two passes differ."""
    if leaf.nondeterminism is not None:
        return f"{name}: backward is not reentrant: two passes differ by up to {leaf.nondeterminism:.3e}"
    if leaf.analytic is None:
        return f"{name}: no values to compare"
    where = name if not leaf.worst_index else f"{name}{shape_text(leaf.worst_index)}"
    if leaf.worst_index is None:
        where = f"{name} (along a random direction)"
    output = f" (output element {leaf.output_index})" if leaf.output_index else ""
    return f"{where}: analytic {leaf.analytic:.6g}, numeric {leaf.numeric:.6g}{output}"


def check_view(result, *, eps: float, atol: float, rtol: float) -> RenderableType:
    table = _table("Gradients", "leaf", "max abs err", "max rel err", "worst element", "result",
                   numeric=("max abs err", "max rel err"))
    for name, leaf in result.leaves.items():
        worst = shape_text(leaf.worst_index) if leaf.worst_index is not None else ""
        table.add_row(name, f"{leaf.max_abs_err:.3e}", f"{leaf.max_rel_err:.3e}", worst, PASS if leaf.passed else FAIL)
    failed = sum(1 for leaf in result.leaves.values() if not leaf.passed)
    verdict = (Text.assemble("check: ", ("passed", "green")) if result.passed else
               Text.assemble("check: ", ("FAILED", "bold red"), f" ({failed} of {len(result.leaves)} leaves)"))
    what = "second order" if result.order == 2 else "analytic"
    header = Text.assemble((result.graph, "bold"), f"  {result.file}\n",
                           f"{what} vs float64 central differences: eps={eps:g}, atol={atol:g}, rtol={rtol:g}")
    worst = [Text(f"  {worst_element_text(name, leaf)}") for name, leaf in result.leaves.items() if not leaf.passed]
    return Group(header, Text(""), table, Text(""), *worst, *([Text("")] if worst else []), verdict)


def ops_view(entries) -> RenderableType:
    """The registry as a table; where it does not fit, two lines per op, the schema on the second."""
    table = _table("Operators", "op", "schema", "kernels", "backward")
    for column in table.columns:
        column.no_wrap = True
    narrow: list[RenderableType] = [Text("Operators", style="bold")]
    for op in entries:
        keys, backward = ", ".join(op.keys()), "yes" if op.has_backward else "no"
        table.add_row(op.name, str(op.schema), keys, backward)
        narrow += [Text.assemble((op.name, "bold"), f"  {keys}  backward: {backward}"),
                   Padding(Text(str(op.schema)), (0, 0, 0, 4), expand=False)]
    return Fitted(table, Group(*narrow))


def op_detail_view(op, derivatives=None) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    table.add_row("op", op.name)
    table.add_row("schema", str(op.schema))
    table.add_row("kernels", ", ".join(op.keys()))
    table.add_row("backward", "yes" if op.has_backward else "no (not differentiable)")
    if derivatives is not None:
        for i, (argument, formula) in enumerate(derivatives.lines()):
            table.add_row("derivatives" if i == 0 else "", f"{argument}: {formula}" if argument else formula)
    if op.doc:
        table.add_row("doc", op.doc.strip())
    return table


def formulas_lines(derivatives) -> list[Text]:
    """`agrad ops --formulas`: one line per op input, `op  input: formula`, as derivatives.yaml
    lists them (an op without formulas: one line saying why); never wrapped."""
    width = max((len(f.op) for f in derivatives), default=0)
    return [Text.assemble((f.op.ljust(width), "bold"), "  ", (f"{argument}: " if argument else "", "cyan"), formula)
            for f in derivatives for argument, formula in f.lines()]


_LABELS = {"passed": ("PASS", "green"), "no expectations": ("SKIP", "yellow"), "not trained": ("SKIP", "yellow"),
           "not a graph": ("SKIP", "yellow")}


def outcome_line(outcome: str, file: str, detail: str) -> Text:
    """One line per file of `test` and `validate`: PASS, FAIL or SKIP (no `expect:`), the file, what it was.

    `outcome`: "passed", "no expectations", or anything else for a failure.
    """
    return Text.assemble(_LABELS.get(outcome, ("FAIL", "bold red")), f"  {file}", (f"  {detail}", "dim"))


def closing_line(passed: int, failed: int, *, no_expectations: int = 0, not_trained: int = 0, deselected: int = 0,
                 not_run: int = 0) -> str:
    # SPEC §2: "N passed, N failed" alone on its line, whatever the counts; the other counts follow
    # only when there are any, as pytest's "2 passed, 1 skipped".
    extra = [f"{n} {what}" for n, what in ((no_expectations, "without expectations"),
                                           (not_trained, "not trained (--no-train)"),
                                           (deselected, "deselected"), (not_run, "not run (-x)")) if n]
    return ", ".join([f"{passed} passed", f"{failed} failed", *extra])

