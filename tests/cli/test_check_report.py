"""`agrad check` says where a gradient is wrong (issue 19 §4): analytic and numeric values at the
worst element and its index, in the table, JSON and GitHub annotations (with the leaf's line), and
`--second-order` checks the gradients' own derivatives."""
from __future__ import annotations

import json

import pytest

from agrad.cli.main import cli

# `twice` computes x**2; its backward is right to first order (2x), but it is made from a constant
# copy of x, so its own derivative is 0 where 2 is right: only a second-order check can tell.
# `off` has a wrong first derivative (2.5x).
PLUGIN = """\
import agrad
from agrad import library

for name, factor, constant in (("twice", 2.0, True), ("off", 2.5, False)):
    library.define(f"NS::{name}(Tensor x) -> Tensor")
    library.impl(f"NS::{name}", "CPU", lambda x: agrad.tensor(x.detach().numpy() ** 2, dtype=x.dtype))
    library.impl(f"NS::{name}", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))

    def backward(ctx, grad, factor=factor, constant=constant):
        x = agrad.tensor(ctx.x.detach().numpy(), dtype=ctx.x.dtype) if constant else ctx.x
        return (grad * x * factor,)

    library.register_autograd(f"NS::{name}", backward,
                              setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
"""
GRAPH = """\
dtype: float64
inputs:
  x: {value: [1.0, 2.0, 3.0], requires_grad: true}
nodes:
  y: {op: "NS::OP", args: [x]}
  s: sum(y * y)
backward: s
"""


@pytest.fixture
def files(write, request):
    # ops are registered once per process: each test its own namespace
    ns = request.node.name.removeprefix("test_")[:20]
    return lambda op: (write(f"{op}.yaml", GRAPH.replace("OP", op).replace("NS", ns)),
                       write("mine.py", PLUGIN.replace("NS", ns)))


def test_a_failed_leaf_shows_analytic_and_numeric_at_its_worst_element(runner, files):
    graph, plugin = files("off")
    table = runner.invoke(cli, ["check", graph, "--plugin", plugin])
    assert table.exit_code == 1
    assert "  x[2]: analytic 135, numeric 108" in table.stdout        # d/dx x^4 = 4x^3 = 108 at x = 3
    doc = json.loads(runner.invoke(cli, ["check", graph, "--plugin", plugin, "--format", "json"]).stdout)
    leaf = doc["leaves"]["x"]
    assert leaf["worst_index"] == [2] and leaf["analytic"] == pytest.approx(135) and leaf["numeric"] == pytest.approx(108)
    assert (leaf["line"], leaf["col"]) == (3, 3)
    github = runner.invoke(cli, ["check", graph, "--plugin", plugin, "--format", "github"]).stdout
    assert github.startswith(f"::error file={graph},line=3,col=3,title=gradcheck::gradient of 'x' disagrees")
    assert "x[2]: analytic 135, numeric 108" in github


def test_second_order_finds_a_backward_that_is_not_differentiable(runner, files):
    graph, plugin = files("twice")
    assert runner.invoke(cli, ["check", graph, "--plugin", plugin]).exit_code == 0
    second = runner.invoke(cli, ["check", graph, "--plugin", plugin, "--second-order"])
    assert second.exit_code == 1, second.output
    assert "second order vs float64 central differences" in second.stdout
    doc = json.loads(runner.invoke(cli, ["check", graph, "--plugin", plugin, "--second-order", "--format",
                                         "json"]).stdout)
    assert doc["order"] == 2 and doc["passed"] is False


def test_second_order_passes_a_graph_that_is_right(runner):
    from pathlib import Path

    example = Path(__file__).parents[2] / "graphs" / "examples" / "hessian_vector.yaml"
    result = runner.invoke(cli, ["check", str(example), "--second-order"])
    assert result.exit_code == 0 and "check: passed" in result.stdout


# `jitter` is x**2 with a backward whose kernel adds a little more each time it runs: right to
# 1e-12, but two backward passes never agree, as with a GPU's atomic adds (PyTorch's gradcheck
# raises "Backward is not reentrant").
JITTER = """\
import agrad
from agrad import library

runs = [0]

def jitter_grad(grad, x):
    runs[0] += 1
    return agrad.tensor(grad.detach().numpy() * 2 * x.detach().numpy() * (1 + 1e-12 * runs[0]), dtype=x.dtype)

library.define("NS::jitter(Tensor x) -> Tensor")
library.impl("NS::jitter", "CPU", lambda x: agrad.tensor(x.detach().numpy() ** 2, dtype=x.dtype))
library.impl("NS::jitter", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
library.define("NS::jitter_grad(Tensor grad, Tensor x) -> Tensor")
library.impl("NS::jitter_grad", "CPU", jitter_grad)
library.impl("NS::jitter_grad", "Meta", lambda grad, x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
library.register_autograd("NS::jitter", lambda ctx, grad: (agrad.ops.NS.jitter_grad(grad, ctx.x),),
                          setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
"""


def test_a_backward_that_is_not_reentrant_fails_its_leaf_with_exit_1(runner, write, request):
    ns = request.node.name.removeprefix("test_")[:20]
    graph = write("jitter.yaml", GRAPH.replace("NS::OP", f"{ns}::jitter"))
    plugin = write("jitter.py", JITTER.replace("NS", ns))
    table = runner.invoke(cli, ["check", graph, "--plugin", plugin])
    assert table.exit_code == 1, table.output
    assert "x: backward is not reentrant: two passes differ by up to 1.08" in table.stdout
    doc = json.loads(runner.invoke(cli, ["check", graph, "--plugin", plugin, "--format", "json"]).stdout)
    leaf = doc["leaves"]["x"]
    assert doc["passed"] is False and leaf["passed"] is False
    assert 0 < leaf["nondeterminism"] < 1e-9 and leaf["max_rel_err"] < 1e-6      # the values themselves agree
    github = runner.invoke(cli, ["check", graph, "--plugin", plugin, "--format", "github"])
    assert github.exit_code == 1
    assert github.stdout.startswith(f"::error file={graph},line=3,col=3,title=gradcheck::gradient of x: backward "
                                    "is not reentrant")
