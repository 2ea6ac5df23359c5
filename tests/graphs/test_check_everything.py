"""`agrad check` never crashes: every graph that `run` accepts checks, fails the
comparison, or is refused with a located reason (AG035) or a located runtime error.

The corpus is every example and every graph file written in the test suite (the
YAML string constants of tests/**/test_*.py).
"""
from __future__ import annotations

import pytest

from agrad import graphs
from graph_helpers import EXAMPLES, suite_graphs


def _check_or_refuse(path) -> str:
    if graphs.validate(path):
        return "invalid"
    graph = graphs.load(path)
    checked = graph._checked
    if max(checked.held_by_leaves()[0], checked.largest.nbytes if checked.largest else 0) > 2**30:
        # inspect's graphs of [100000, 100000] matmuls: a machine with the memory would run them for hours
        return "too large to run here"
    try:
        graph.run()
    except graphs.GraphRuntimeError:
        return "runtime error"
    try:
        result = graph.check()
    except graphs.GraphFileError as exc:
        assert [d.code for d in exc.diagnostics] == ["AG035"]
        assert exc.diagnostics[0].location is not None
        return "refused"
    except graphs.GraphRuntimeError as exc:
        assert exc.location is not None, exc
        return "runtime error in check"
    assert isinstance(result, graphs.CheckResult)
    return "checked"


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_checks(example):
    # --fast: the full check of the transformer block takes most of a minute
    assert graphs.load(example).check(fast=True).passed


def test_every_graph_in_the_test_suite_checks_or_is_refused_with_a_location(tmp_path):
    texts = suite_graphs()
    assert len(texts) > 50
    outcomes = []
    for text in texts:
        path = tmp_path / "g.yaml"
        path.write_text(text)
        outcomes.append(_check_or_refuse(path))
    assert outcomes.count("checked") > 10


def test_grad_without_create_graph_is_refused_at_the_grad_node(graph_file):
    path = graph_file("""\
        inputs: {x: {value: [1.0, 2.0], requires_grad: true}}
        nodes:
          y: sum(x * x)
          g: grad(y, x)
          s: sum(g[0] * x)
        backward: s
        """)
    with pytest.raises(graphs.GraphFileError) as caught:
        graphs.load(path).check()
    (d,) = caught.value.diagnostics
    assert (d.code, d.location.line, d.location.col) == ("AG035", 4, 6)
    assert "create_graph=True" in d.message
    path.write_text(path.read_text().replace("grad(y, x)", "grad(y, x, create_graph=True)"))
    assert graphs.load(path).check().passed


def test_no_input_requiring_grad_is_a_warning_not_a_crash(graph_file):
    result = graphs.load(graph_file("inputs: {x: [1.0, 2.0]}\nnodes: {a: sum(x * x)}\n")).check()
    assert result.passed and result.leaves == {} and "nothing to check" in result.warnings[0]


def test_a_failing_kernel_is_located_in_check_as_in_run(graph_file):
    path = graph_file("inputs:\n  x: {value: [1.0, 2.0], requires_grad: true}\n  i: {value: [5], dtype: int64}\n"
                      "nodes:\n  a: sum(index_select(x, 0, i))\n")
    with pytest.raises(graphs.GraphRuntimeError) as in_run:
        graphs.load(path).run()
    with pytest.raises(graphs.GraphRuntimeError) as in_check:
        graphs.load(path).check()
    assert str(in_check.value) == str(in_run.value)
    assert (in_check.value.location, in_check.value.code) == (in_run.value.location, in_run.value.code)
    assert in_check.value.location.line == 5


def test_high_dimensional_literals_check(graph_file):
    value = [0.5, -0.25]
    for _ in range(40):
        value = [value]
    result = graphs.load(graph_file(f"inputs: {{x: {{value: {value}, requires_grad: true}}}}\n"
                                    "nodes: {a: x * x}\n")).check()
    assert result.passed and result.leaves["x"].worst_index is not None


def test_a_full_check_too_big_to_finish_is_refused_with_a_pointer_to_fast(graph_file):
    path = graph_file("inputs:\n  x: {shape: [1000, 1000], init: ones, requires_grad: true}\n"
                      "nodes: {a: sum(x * x)}\n")
    with pytest.raises(graphs.GraphFileError) as caught:
        graphs.load(path).check()
    (d,) = caught.value.diagnostics
    assert (d.code, d.location.line) == ("AG035", 2) and "--fast" in d.message
    assert graphs.load(path).check(fast=True).passed
