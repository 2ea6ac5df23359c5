"""Diagnostics show the line they point at with a caret under the column, as rustc and ruff print
them (issue 19 §14); `--device gpu` suggests cuda; a runtime failure inside an expression names
the node, not an internal sub-node."""
from __future__ import annotations

from pathlib import Path

from agrad.cli.main import cli

GRAPH = """\
inputs:
  x: {shape: [4, 3], init: normal}
  W: {shape: [2, 3], init: normal, requires_grad: true}
nodes:
  h: x @ W.T
"""


def test_the_line_and_a_caret_under_the_column(runner, write):
    path = write("g.yaml", GRAPH)
    lines = runner.invoke(cli, ["validate", path]).stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "error[AG015]" in line)
    assert lines[start].startswith(f"{path}:5:10: error[AG015]: '.T' is not supported") and "'t(W)'" in lines[start]
    assert lines[start + 1:start + 4] == ["  |", "5 |   h: x @ W.T", "  |          ^"]


def test_stdin_graphs_get_excerpts_too(runner):
    lines = runner.invoke(cli, ["run", "-"], input=GRAPH).stderr.splitlines()
    assert lines[0].startswith("<stdin>:5:10: error[AG015]") and lines[2] == "5 |   h: x @ W.T"


def test_the_github_and_json_formats_stay_one_message(runner, write):
    path = write("g.yaml", GRAPH)
    github = runner.invoke(cli, ["validate", path, "--format", "github"]).stdout.splitlines()
    assert github[0].startswith(f"::error file={path},line=5,col=10,title=AG015::") and "^" not in github[0]


def test_device_gpu_suggests_cuda(runner):
    seed = str(Path(__file__).parents[2] / "graphs" / "examples" / "seed.yaml")
    result = runner.invoke(cli, ["run", seed, "--device", "gpu"])
    assert result.exit_code == 2 and "did you mean 'cuda'?" in result.stderr


def test_a_runtime_failure_inside_an_expression_names_the_node(runner, write):
    # the index is out of range only in the data, so the kernel fails at run time, in `loss`'s subscript
    path = write("r.yaml", "inputs:\n  x: {value: [1.0, 2.0]}\n  idx: {value: [5], dtype: int64}\n"
                           "nodes:\n  loss: sum(x[idx] * 2)\n")
    result = runner.invoke(cli, ["run", path])
    assert result.exit_code == 3
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{path}:5:14: error[AG041]: getitem(...) in 'loss': ") and "loss." not in result.stderr
