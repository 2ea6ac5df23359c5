"""The loss curve of `agrad train`: a one-line sparkline for the terminal, and `--plot`
files. SVG is written by hand (a polyline needs no library, so `--plot curve.svg`
works on every install); PNG needs matplotlib (`pip install agrad[plot]`)."""
from __future__ import annotations

import math
from html import escape

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


def svg(title: str, losses: list[float], evals: list[dict], width: int = 640, height: int = 360) -> str:
    """The training loss per step (and the eval loss at its steps) as an SVG document."""
    pad_l, pad_r, pad_t, pad_b = 60, 20, 30, 40
    series = [("train loss", "#1f77b4", [(i + 1, v) for i, v in enumerate(losses) if math.isfinite(v)])]
    eval_points = [(e["step"], e["loss"]) for e in evals if "loss" in e and math.isfinite(e["loss"])]
    if eval_points:
        series.append(("eval loss", "#d62728", eval_points))
    xs = [x for _, _, pts in series for x, _ in pts] or [1]
    ys = [y for _, _, pts in series for _, y in pts] or [0.0]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = min(ys), max(ys)
    if y1 == y0:
        y1 = y0 + 1.0
    inner_w, inner_h = width - pad_l - pad_r, height - pad_t - pad_b

    def px(x, y):
        return (pad_l + (x - x0) / (x1 - x0) * inner_w, pad_t + (1 - (y - y0) / (y1 - y0)) * inner_h)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="18" text-anchor="middle">{escape(title)}</text>',
             f'<line x1="{pad_l}" y1="{pad_t + inner_h}" x2="{pad_l + inner_w}" y2="{pad_t + inner_h}" '
             'stroke="black"/>',
             f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + inner_h}" stroke="black"/>',
             f'<text x="{pad_l + inner_w / 2}" y="{height - 8}" text-anchor="middle">step</text>']
    for frac in (0.0, 0.5, 1.0):
        y = y0 + frac * (y1 - y0)
        _, py = px(x0, y)
        parts.append(f'<text x="{pad_l - 6}" y="{py + 4:.1f}" text-anchor="end">{y:.4g}</text>')
    for frac in (0.0, 0.5, 1.0):
        x = x0 + frac * (x1 - x0)
        qx, _ = px(x, y0)
        parts.append(f'<text x="{qx:.1f}" y="{pad_t + inner_h + 16}" text-anchor="middle">{x:.0f}</text>')
    for i, (name, colour, pts) in enumerate(series):
        coords = " ".join(f"{a:.1f},{b:.1f}" for a, b in (px(x, y) for x, y in pts))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{coords}"/>')
        parts.append(f'<text x="{pad_l + inner_w - 4}" y="{pad_t + 14 + 14 * i}" text-anchor="end" '
                     f'fill="{colour}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def png_bytes(title: str, losses: list[float], evals: list[dict]) -> bytes:
    """The same plot as a PNG, by matplotlib; ImportError when it is not installed."""
    import io

    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    ax.plot(range(1, len(losses) + 1), losses, label="train loss", linewidth=1)
    points = [(e["step"], e["loss"]) for e in evals if "loss" in e]
    if points:
        ax.plot(*zip(*points), "o-", label="eval loss")
    ax.set_xlabel("step")
    ax.set_title(title)
    ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()
