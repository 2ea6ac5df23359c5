"""The loss curve of `agrad train`: a one-line sparkline for the terminal, and `--plot`
files, drawn by matplotlib as PNG or SVG (the extra `pip install 'agrad[plot]'`,
imported only when a plot is asked for)."""
from __future__ import annotations

import math

BLOCKS = "▁▂▃▄▅▆▇█"


def _buckets(values: list[float], width: int) -> list[float]:
    """`values` averaged into at most `width` equal buckets, keeping the curve's shape."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) <= width:
        return finite
    step = len(finite) / width
    return [sum(chunk) / len(chunk) for chunk in
            (finite[int(i * step):max(int(i * step) + 1, int((i + 1) * step))] for i in range(width))]


def sparkline(values: list[float], width: int = 60) -> str:
    points = _buckets(values, width)
    if not points:
        return ""
    lo, hi = min(points), max(points)
    span = hi - lo or 1.0
    return "".join(BLOCKS[min(len(BLOCKS) - 1, int((v - lo) / span * len(BLOCKS)))] for v in points)


def loss_line(losses: list[float], width: int = 80) -> str:
    """`loss  ▇▅▃▂▁  3.689 -> 1.575`, at most `width` columns (a CI log, an 80-column terminal)."""
    prefix, suffix = "loss  ", f"  {losses[0]:.4g} -> {losses[-1]:.4g}"
    return prefix + sparkline(losses, max(8, width - len(prefix) - len(suffix))) + suffix


# Colours of matplotlib's default cycle, named so the legend and the axes agree.
TRAIN_COLOUR, EVAL_COLOUR, METRIC_COLOUR = "tab:blue", "tab:red", "tab:green"


def loss_figure(title: str, losses: list[float], evals: list[dict]):
    """The loss per step, the eval loss at its steps, and the eval metrics (accuracy) on a second
    axis; a series appears in the legend only when it is drawn. Built on a bare `Figure`, not pyplot:
    no global state, no GUI backend."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 4.0), dpi=100)
    ax = fig.subplots()
    steps = [i + 1 for i, v in enumerate(losses) if math.isfinite(v)]
    drawn = ax.plot(steps, [v for v in losses if math.isfinite(v)], color=TRAIN_COLOUR, linewidth=1,
                    label="train loss")
    eval_loss = [(e["step"], e["loss"]) for e in evals if math.isfinite(e.get("loss", math.nan))]
    if eval_loss:
        drawn += ax.plot(*zip(*eval_loss), "o-", color=EVAL_COLOUR, markersize=3, label="eval loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    metrics = sorted({k for e in evals for k in e if k not in ("step", "loss")})
    if metrics:
        other = ax.twinx()
        for name in metrics:
            points = [(e["step"], e[name]) for e in evals if math.isfinite(e.get(name, math.nan))]
            if points:
                drawn += other.plot(*zip(*points), "s--", color=METRIC_COLOUR, markersize=3, label=f"eval {name}")
        other.set_ylabel(", ".join(metrics))
    ax.legend(drawn, [line.get_label() for line in drawn], loc="upper center", fontsize="small")
    fig.tight_layout()
    return fig


def plot_bytes(title: str, losses: list[float], evals: list[dict], fmt: str) -> bytes:
    """The figure as PNG or SVG (`fmt`); ImportError when matplotlib is not installed. SVG keeps its
    text as text (searchable) and its ids fixed, so the same run writes the same file."""
    import io

    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "agrad"}):
        fig = loss_figure(title, losses, evals)
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()
