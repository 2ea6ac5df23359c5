"""`agrad check --input NAME=FILE`: gradients checked at real data (.npy, or FILE.npz:KEY)."""
from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from agrad.cli.main import cli

GRAPH = """\
dtype: float64
inputs:
  x: {shape: [3], init: uniform, low: 0.5, high: 1.0, requires_grad: true}
nodes:
  y: sum(relu(x))
backward: y
"""


def _check(*args):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(cli, ["check", *[str(a) for a in args]])


def test_check_uses_the_given_data(tmp_path):
    graph = tmp_path / "g.yaml"
    graph.write_text(GRAPH)
    assert _check(graph).exit_code == 0                    # away from relu's kink
    np.savez(tmp_path / "data.npz", at_kink=np.zeros(3), away=np.full(3, 2.0))
    np.save(tmp_path / "zeros.npy", np.zeros(3))
    assert _check(graph, "--input", f"x={tmp_path / 'zeros.npy'}").exit_code == 1
    assert _check(graph, "--input", f"x={tmp_path / 'data.npz'}:at_kink").exit_code == 1
    assert _check(graph, "--input", f"x={tmp_path / 'data.npz'}:away").exit_code == 0


def test_check_input_problems_are_usage_errors(tmp_path):
    graph = tmp_path / "g.yaml"
    graph.write_text(GRAPH)
    np.savez(tmp_path / "data.npz", a=np.zeros(3))
    missing = _check(graph, "--input", f"x={tmp_path / 'data.npz'}:nope")
    assert missing.exit_code == 2 and "no array 'nope'" in missing.output
    assert _check(graph, "--input", "x").exit_code == 2
