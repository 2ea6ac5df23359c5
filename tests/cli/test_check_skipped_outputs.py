"""`agrad check` compares only the outputs that require grad, as torch.autograd.gradcheck (issue 20
§13): an output kept for logging (`detach(h)`) is named as not compared, in the text and the JSON,
and the verdict is PyTorch's on the same function (tests/reference/engine/gradcheck.json,
scenario graph_with_a_logged_output)."""
from __future__ import annotations

import json
import pathlib

from agrad.cli.main import cli

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine" / "gradcheck.json"
TORCH = json.loads(FIXTURE.read_text())["scenarios"]["graph_with_a_logged_output"]

GRAPH = """\
dtype: float64
inputs:
  x: {value: [0.5, -1.25, 2.0], requires_grad: true}
nodes:
  h: tanh(x) * x
  loss: sum(h)
  shown: detach(h)
  steps: argmax(h)
outputs: [loss, shown, steps]
backward: loss
"""


def test_outputs_that_do_not_require_grad_are_skipped_and_named(runner, write):
    graph = write("logged.yaml", GRAPH)
    table = runner.invoke(cli, ["check", graph])
    assert TORCH == {"returned": True, "warnings": []}
    assert table.exit_code == 0, table.output
    assert "check: passed" in table.stdout
    assert ("outputs 'shown', 'steps' are not compared: they do not require grad (as in torch.autograd.gradcheck, "
            "only outputs that require grad are checked)") in table.stderr
    doc = json.loads(runner.invoke(cli, ["check", graph, "--format", "json"]).stdout)
    assert doc["passed"] is TORCH["returned"]
    assert doc["skipped_outputs"] == ["shown", "steps"]
    fast = json.loads(runner.invoke(cli, ["check", graph, "--format", "json", "--fast"]).stdout)
    assert (fast["passed"], fast["skipped_outputs"]) == (True, ["shown", "steps"])


def test_nothing_skipped_is_an_empty_list(runner, write):
    graph = write("plain.yaml", GRAPH.replace("outputs: [loss, shown, steps]", "outputs: [loss]"))
    doc = json.loads(runner.invoke(cli, ["check", graph, "--format", "json"]).stdout)
    assert (doc["passed"], doc["skipped_outputs"]) == (True, [])
