"""`run --profile`: per-node time, laid out as Caffe's `caffe time` prints it.

Caffe lists each layer's forward and then its backward time, layer by layer, and
closes with the forward pass, the backward pass and their sum. Here a "layer" is
a YAML node; its backward row is the grad_fn that node created.
"""
from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agrad.cli.layout import Fitted

_PHASE_ORDER = {"forward": 0, "backward": 1}


def _layer_order(records) -> list:
    """Node by node in the order their forward ran; within a node, forward before backward.

    Nodes with no forward row (the AccumulateGrad of a leaf) follow, in the order
    their backward ran.
    """
    def first_start(record) -> float:
        return min(record.start_ms, default=float("inf"))

    node_key: dict[str, tuple] = {}
    for record in records:
        key = (0, first_start(record)) if record.phase == "forward" else (1, first_start(record))
        node_key[record.node] = min(node_key.get(record.node, key), key)
    return sorted(records, key=lambda r: (node_key[r.node], _PHASE_ORDER.get(r.phase, 2)))


def passes_text(repeat: int, warmup: int) -> str:
    """How many passes the figures are over, as `caffe time` says it."""
    timed = f"{repeat} pass{'es' if repeat != 1 else ''}"
    return f"average of {timed}, after {warmup} warm-up pass{'es' if warmup != 1 else ''} not counted" if warmup \
        else f"average of {timed}"


def profile_view(records, repeat: int = 1, warmup: int = 0) -> RenderableType:
    """The rows hold totals over the `repeat` timed passes; `warmup` passes ran before, uncounted."""
    total_ms = sum(r.self_ms for r in records) or 1.0   # NOTE: an all-zero profile shows 0% shares, not a crash
    table = Table(title=f"Time per node ({passes_text(repeat, warmup)})", title_justify="left", title_style="bold",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column, justify in [("node", "left"), ("op", "left"), ("phase", "left"), ("calls", "right"),
                            ("self ms", "right"), ("ms/call", "right"), ("share", "right"), ("line", "right")]:
        table.add_column(column, justify=justify, no_wrap=True)
    for r in _layer_order(records):
        per_call = r.self_ms / r.calls if r.calls else 0.0
        table.add_row(r.node, r.op, r.phase, str(r.calls), f"{r.self_ms:.3f}", f"{per_call:.3f}",
                      f"{100 * r.self_ms / total_ms:.1f}%", str(r.line) if r.line is not None else "")
    # The rows hold totals over all passes; the closing lines are per pass, as Caffe's "Average ..." are.
    forward = sum(r.self_ms for r in records if r.phase == "forward") / repeat
    backward = sum(r.self_ms for r in records if r.phase == "backward") / repeat
    totals = Table.grid(padding=(0, 2))
    totals.add_column()
    totals.add_column(justify="right")
    totals.add_row("Average Forward pass:", f"{forward:.3f} ms")
    totals.add_row("Average Backward pass:", f"{backward:.3f} ms")
    totals.add_row("Average Forward-Backward:", f"{forward + backward:.3f} ms")
    return Group(Fitted(table), Text(""), totals)
