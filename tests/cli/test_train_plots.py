"""`agrad train --plot` (issue 19 §10): matplotlib draws PNG and SVG alike, with both axes labelled,
eval metrics on a second axis, a legend naming only what is drawn, and nothing clipped."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")        # the `plot` extra; `test` installs it

from agrad.cli.train_plot import loss_figure, plot_bytes  # noqa: E402

LOSSES = [2.0 / (1 + 0.1 * i) for i in range(100)]
EVALS = [{"step": 50, "loss": 0.5, "accuracy": 0.8}, {"step": 100, "loss": 0.3, "accuracy": 0.9}]


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_labels_second_axis_and_legend():
    fig = loss_figure("digits", LOSSES, EVALS)
    ax, metrics = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel(), metrics.get_ylabel()) == ("step", "loss", "accuracy")
    assert _legend(fig) == ["train loss", "eval loss", "eval accuracy"]


def test_no_eval_means_no_eval_in_the_legend_and_no_second_axis():
    fig = loss_figure("digits", LOSSES, [])
    assert _legend(fig) == ["train loss"] and len(fig.axes) == 1


def test_nothing_is_clipped():
    fig = loss_figure("digits", LOSSES, EVALS)
    fig.canvas.draw()
    box = fig.bbox
    for ax in fig.axes:
        for label in (ax.xaxis.label, ax.yaxis.label):
            extent = label.get_window_extent()
            assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0 and extent.y1 <= box.y1


def test_png_and_svg_files():
    assert plot_bytes("digits", LOSSES, EVALS, "png").startswith(b"\x89PNG")
    svg = plot_bytes("digits", LOSSES, EVALS, "svg").decode()
    assert "<svg" in svg and ">step<" in svg and ">eval accuracy<" in svg     # text stays text
    assert svg == plot_bytes("digits", LOSSES, EVALS, "svg").decode()           # the same run, the same file
