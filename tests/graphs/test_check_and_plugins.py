"""`check` (finite differences per leaf) and `--plugin` ops, which is how a wrong gradient gets in."""
import textwrap

import pytest

from agrad import graphs
from graph_helpers import EXAMPLES

PLUGIN = '''
import agrad
from agrad import library

library.define("gtest_{tag}::triple(Tensor x) -> Tensor")
library.impl("gtest_{tag}::triple", "CPU", lambda x: agrad.tensor(x.detach().numpy() * 3))
library.impl("gtest_{tag}::triple", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
# NOTE: deliberately wrong: the derivative of 3x is 3, not 2.
library.register_autograd("gtest_{tag}::triple", lambda ctx, grad: grad * 2)
'''


def write_plugin(tmp_path, tag):
    path = tmp_path / f"plugin_{tag}.py"
    path.write_text(PLUGIN.format(tag=tag))
    return path


def graph_using(graph_file, tag, dtype="float64"):
    return graph_file(f"""\
        dtype: {dtype}
        inputs:
          x: {{value: [1.0, 2.0], requires_grad: true}}
          w: {{value: [0.5, -1.0], requires_grad: true}}
        nodes:
          t: {{op: "gtest_{tag}::triple", args: [x]}}
          s: sum(t * w)
        backward: s
        """)


def test_check_passes_on_a_correct_graph():
    result = graphs.load(EXAMPLES / "mlp.yaml").check()
    assert result.passed and set(result.leaves) == {"W1", "b1", "W2"}
    assert all(leaf.max_abs_err < 1e-6 for leaf in result.leaves.values())
    assert any("not float64" in w for w in result.warnings)


def test_plugin_op_runs_and_a_wrong_backward_fails_check_for_that_leaf_only(tmp_path, graph_file):
    plugin = write_plugin(tmp_path, "a")
    path = graph_using(graph_file, "a")
    graph = graphs.load(path, plugins=[plugin])
    run = graph.run()
    assert run.outputs["s"].item() == pytest.approx(3 * (0.5 - 2.0))
    result = graph.check()
    assert not result.passed
    assert result.leaves["w"].passed and not result.leaves["x"].passed
    # analytic ds/dx = 2w, numerical 3w: the worst error is |w| = 1 at x[1].
    assert result.leaves["x"].max_abs_err == pytest.approx(1.0, rel=1e-4)
    assert result.leaves["x"].worst_index == [1]
    assert result.warnings == []


def test_without_the_plugin_its_op_is_unknown(tmp_path, graph_file):
    found = graphs.validate(graph_using(graph_file, "never_loaded"))
    assert [d.code for d in found] == ["AG016"]


def test_a_plugin_that_raises_is_a_diagnostic_at_its_line(tmp_path, graph_file):
    plugin = tmp_path / "broken.py"
    plugin.write_text("import agrad\n\nraise ValueError('nope')\n")
    found = graphs.validate(graph_using(graph_file, "b"), plugins=[plugin])
    assert [(d.code, d.location.line) for d in found] == [("AG032", 3)]
    assert "ValueError: nope" in found[0].message


def test_a_plugin_with_a_syntax_error(tmp_path, graph_file):
    plugin = tmp_path / "syntax.py"
    plugin.write_text(textwrap.dedent("x = 1\ndef f(:\n"))
    found = graphs.validate(graph_using(graph_file, "c"), plugins=[plugin])
    assert [(d.code, d.location.line) for d in found] == [("AG032", 2)]
