"""Runtime failures (exit 3) read as every other problem, `FILE:LINE:COL: error[AGnnn]: MESSAGE`,
with a code of their own (AG040-AG046), and `run`, `check` and `test` report the same failure
the same way (issue 7 §3)."""
from __future__ import annotations

import pytest

from agrad.cli.main import cli
from agrad.graphs.diagnostics import CODES
from agrad.graphs.failures import Failures
from agrad.graphs.results import GraphRuntimeError

# A plugin op whose CPU kernel fails (its Meta kernel is fine, so the file checks out).
PLUGIN = """\
import agrad
from agrad import library

library.define("rterr_{tag}::boom(Tensor x) -> Tensor")
library.impl("rterr_{tag}::boom", "CPU", lambda x: x.detach() / {divisor})
library.impl("rterr_{tag}::boom", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
library.register_autograd("rterr_{tag}::boom", lambda ctx, grad: 1 / 0)
"""

GRAPH = """\
dtype: float64
inputs:
  x: {{value: [1.0, 2.0], requires_grad: true}}
nodes:
  t: {{op: "rterr_{tag}::boom", args: [x]}}
  s: sum(t)
backward: s
expect:
  outputs: {{s: 1.5}}
"""

# the second pass needs the tensors h's MulBackward0 saved, which the first pass freed
FREED = """\
inputs: {x: {value: 3.0, requires_grad: true}}
nodes:
  h: x * x
  y: h + 1
backward:
  - {of: y}
  - {of: y}
"""


@pytest.fixture
def files(tmp_path):
    def make(tag: str, divisor: str):
        plugin = tmp_path / f"plugin_{tag}.py"
        plugin.write_text(PLUGIN.format(tag=tag, divisor=divisor))
        graph = tmp_path / f"g_{tag}.yaml"
        graph.write_text(GRAPH.format(tag=tag))
        return str(graph), str(plugin)
    return make


def _runtime_line(result) -> str:
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    # the diagnostic's own line, not the source excerpt under it
    return [line for line in result.stderr.strip().splitlines() if "error[" in line][-1]


def test_a_plugin_kernel_failure_reads_the_same_from_run_check_and_test(runner, files):
    graph, plugin = files("fwd", "'not a number'")
    lines = [_runtime_line(runner.invoke(cli, [command, graph, "--plugin", plugin]))
             for command in ("run", "check", "test")]
    assert lines[0].startswith(f"{graph}:5:11: error[AG045]: t = rterr_fwd::boom(...): TypeError: ")
    assert lines[1] == lines[0] and lines[2] == lines[0]


def test_a_plugin_backward_failure_is_located_at_its_node(runner, files):
    graph, plugin = files("bwd", "2")
    run = _runtime_line(runner.invoke(cli, ["run", graph, "--plugin", plugin]))
    assert run == f"{graph}:5:11: error[AG045]: backward of t (BoomBackward): ZeroDivisionError: division by zero"
    assert _runtime_line(runner.invoke(cli, ["check", graph, "--plugin", plugin])) == run


def test_github_format_carries_the_code_line_and_col(runner, files, tmp_path):
    graph, plugin = files("gh", "'x'")
    for command in ("run", "check", "test"):
        result = runner.invoke(cli, [command, graph, "--plugin", plugin, "--format", "github"])
        assert result.exit_code == 3
        annotation = [ln for ln in result.stdout.splitlines() if ln.startswith("::error")][-1]
        assert annotation.startswith(f"::error file={graph},line=5,col=11,title=AG045::t = rterr_gh::boom(...)"), \
            command
    freed = tmp_path / "freed.yaml"
    freed.write_text(FREED)
    result = runner.invoke(cli, ["run", str(freed), "--format", "github"])
    assert result.exit_code == 3
    assert result.stdout.startswith(f"::error file={freed},line=3,col=8,title=AG040::backward of h (MulBackward0): "
                                    "Trying to backward through the graph a second time")


def test_freed_graph_has_its_own_code(runner, tmp_path):
    freed = tmp_path / "freed.yaml"
    freed.write_text(FREED)
    line = _runtime_line(runner.invoke(cli, ["test", str(freed)]))
    assert line.startswith(f"{freed}:3:8: error[AG040]: backward of h (MulBackward0): Trying to backward")


def test_codes_by_exception_type(tmp_path):
    from agrad import DeviceUnavailableError, graphs
    from agrad.errors import FreedGraphError

    path = tmp_path / "g.yaml"
    path.write_text("inputs: {x: {value: [1.0], requires_grad: true}}\nnodes:\n  y: exp(x)\n")
    spec = graphs.load(path).spec
    failures = Failures(spec, "g.yaml")
    cases = [(failures.forward("y", RuntimeError("bad")), "AG041", "y = exp(...): bad"),
             (failures.forward("y", MemoryError()), "AG044", "y = exp(...): out of memory"),
             (failures.forward("y", DeviceUnavailableError("CUDA is not available")), "AG043",
              "y = exp(...): CUDA is not available"),
             (failures.backward(RuntimeError("bad grad"), "y", "ExpBackward0", None), "AG042",
              "backward of y (ExpBackward0): bad grad"),
             (failures.backward(FreedGraphError("freed"), "y", "ExpBackward0", None), "AG040",
              "backward of y (ExpBackward0): freed"),
             (failures.leaf("x", ValueError("no")), "AG046", "input 'x': ValueError: no")]
    for error, code, message in cases:
        assert isinstance(error, GraphRuntimeError)
        assert (error.code, str(error)) == (code, message)
        assert error.code in CODES
    assert str(cases[0][0].diagnostic) == "g.yaml:3:6: error[AG041]: y = exp(...): bad"
    assert str(cases[-1][0].diagnostic) == "g.yaml:1:10: error[AG046]: input 'x': ValueError: no"
