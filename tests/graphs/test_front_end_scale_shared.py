"""The front end at scale, part two: NodeSpecs made per expression shape, Meta results shared
by signature, and an ordering walk without recursion. Each is checked against the slow path
it replaces, on the same input."""
from __future__ import annotations

from pathlib import Path

import pytest

from agrad import graphs
from agrad.graphs import document, executor, expressions
from agrad.graphs.diagnostics import Collector
from agrad.graphs.document import read_document
from agrad.graphs.yaml_loader import load_yaml

EXAMPLES = sorted((Path(graphs.__file__).parent / "examples").glob("*.yaml"))

# (written in the file, as YAML) for one node `y`; inputs x, w, idx exist
_WRITTEN = [
    "tanh(n41) * 0.999 + x", "  tanh(x) * 0.5 + w", "'tanh(x) *  0.5 + w'", '"relu(x @ w + x)"',
    "sum(x, dim=1, keepdim=True)", "sum(x, dim=[0, 1])", "cat([x, w], 0)", "-x + (-2) * w",
    "clamp(x, min=None, max=1.5)", "x[0] + x[1:2]", "x[idx] * 2", "mul(x, 1e400)", "mul(x, 99999999999999999999)",
    "pow(x, -0.0) + pow(w, 0.0)", "where(x > 0, x, w)", "f(a=1, a=2)", "getitem(x, 0)", "x.T", "'lambda: x'",
    "matmul(matmul(x, w), matmul(w, x))", "to(x, dtype=float64)", "'it''s(x)'", '"a\\tb(x)"',
]


def _fields(spec):
    return (spec.name, spec.owner, spec.op, spec.args, spec.kwargs, spec.pos, spec.arg_pos, spec.kwarg_pos,
            spec.path, spec.text)


def _read(source: str):
    collector = Collector("g.yaml")
    spec = read_document(load_yaml(source, collector), "g.yaml", "g", collector)
    return [_fields(n) for n in spec.nodes], collector.sorted()


@pytest.mark.parametrize("written", _WRITTEN)
def test_the_nodespecs_made_for_a_shape_are_those_read_call_by_call(written, monkeypatch):
    source = f"inputs:\n  x: 1.0\n  w: 2.0\n  idx: 1\nnodes:\n  n41: x * 1.0\n  y:  {written}   # note\n"
    expressions._templates.clear()
    fast = _read(source)
    fast_again = _read(source)                  # the shape's builder, made by the first read, used
    monkeypatch.setattr(document, "_builder", lambda shape: document._NO_BUILDER)
    expressions._templates.clear()
    slow = _read(source)
    assert fast == slow and fast_again == slow


def test_a_shape_gets_a_builder_once_and_a_shape_with_a_constant_to_report_gets_none():
    expressions._templates.clear()
    _read("inputs:\n  x: 1.0\n  w: 2.0\nnodes:\n  a: tanh(x) * 0.5 + w\n  c: mul(x, 1e400)\n")
    shape = expressions._templates["Z0(Z1) * 0.5 + Z2"]
    made = shape.builder
    assert made is not None and made is not document._NO_BUILDER
    _read("inputs:\n  x: 1.0\n  w: 2.0\nnodes:\n  b: exp(w) * 0.5 + x\n")
    assert expressions._templates["Z0(Z1) * 0.5 + Z2"].builder is made
    assert expressions._templates["Z0(Z1, 1e400)"].builder is document._NO_BUILDER


def _chain(nodes: int, tail: str = "") -> str:
    lines = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "  m: {shape: [2, 3], init: ones}",
             "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, nodes)]
    return "\n".join(lines + [f"  loss: sum(n{nodes - 1})", tail, "backward: loss", ""])


@pytest.fixture
def shared_from_the_first_node(monkeypatch):
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 0)


def test_a_small_graph_is_built_node_by_node_and_inspect_reuses_that_build(graph_file):
    checked = graphs.load(graph_file(_chain(20)))._checked
    assert len(checked.order) < executor.SharedResults.MIN_NODES
    built = checked._meta
    assert built is not None and checked.meta is built
    assert built["n5"].grad_fn.metadata["yaml_node"] == "n5"


@pytest.mark.usefixtures("shared_from_the_first_node")
def test_a_chain_runs_each_of_its_ops_once_on_meta_and_checks_as_node_by_node(graph_file, monkeypatch):
    calls = []
    real = executor.apply
    monkeypatch.setattr(executor, "apply", lambda bound, env: calls.append(bound.op) or real(bound, env))
    path = graph_file(_chain(200))
    graph = graphs.load(path)
    assert len(calls) <= 12                       # n0, the first few links until the shapes settle, loss
    assert graph._checked._meta is None           # shared results are not the graph's Meta build
    calls.clear()
    inspected = graph.inspect()                   # which builds it node by node
    assert len(calls) == 3 * 199 + 2
    assert [n.shape for n in inspected.nodes][-1] == [] and inspected.nodes[-2].shape == [3]


@pytest.mark.parametrize("tail", [
    "  bad: n5 @ m", "  bad: n5 + m", "  bad: sum(n7, dim=3)", "  bad: cat([n3, m], 0)",
    "  bad: to(n3, dtype=int64) * 0.5",
    "  bad: n9[5]", "  split: chunk(n4, 3)\n  parts: split[1] * 2.0", "  bad: n2 * 1\n  worse: bad @ m",
])
@pytest.mark.usefixtures("shared_from_the_first_node")
def test_a_check_with_shared_results_finds_what_the_node_by_node_build_finds(graph_file, tail, monkeypatch):
    path = graph_file(_chain(12, tail))
    shared = graphs.validate(path)
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 10 ** 9)
    assert shared == graphs.validate(path)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.usefixtures("shared_from_the_first_node")
def test_every_example_checks_alike_with_shared_results_and_without(path, monkeypatch):
    shared = graphs.validate(path)
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 10 ** 9)
    assert shared == graphs.validate(path)


def test_constants_that_python_calls_equal_are_told_apart_in_a_signature():
    keys = {executor._constant(v) for v in (1, 1.0, True, 0.0, -0.0, [1], (1,), None)}
    assert len(keys) == 8


def test_a_long_cycle_is_reported_without_recursion(graph_file):
    nodes = 5000
    lines = ["inputs:", "  x: 1.0", "nodes:", f"  n0: n{nodes - 1} + x"]
    lines += [f"  n{i}: n{i - 1} + x" for i in range(1, nodes)]
    problems = graphs.validate(graph_file("\n".join(lines) + "\n"))
    assert [p.code for p in problems] == ["AG021"]
    assert problems[0].message == ("cycle: " + " -> ".join(
        ["n0 (line 4)"] + [f"n{i} (line {i + 4})" for i in range(4999, 4985, -1)] + ["... (4981 more)"]
        + [f"n{i} (line {i + 4})" for i in range(4, 0, -1)] + ["n0 (line 4)"]) + "; each node uses the next")
    assert (problems[0].location.line, problems[0].location.col) == (4, 3)


def test_a_short_cycle_is_written_out_whole(graph_file):
    problems = graphs.validate(graph_file("inputs:\n  x: 1.0\nnodes:\n  a: c + x\n  b: a * 2.0\n  c: neg(b)\n"))
    assert [p.message for p in problems] == [
        "cycle: a (line 4) -> c (line 6) -> b (line 5) -> a (line 4); each node uses the next"]


def test_a_run_labels_its_backward_nodes_only_when_a_label_is_read(graph_file):
    from agrad.graphs.runner import Runner

    path = graph_file(_chain(6))
    checked = graphs.load(path)._checked
    lazy = Runner(checked, str(path))
    lazy.lazy_labels = True
    env = lazy.forward(lazy.make_leaves())
    assert "yaml_node" not in env["n3"].grad_fn.metadata
    assert lazy.yaml_node_of(env["n3"].grad_fn) == "n3" and lazy.yaml_node_of(env["n3.1"].grad_fn) == "n3.1"
    eager = Runner(checked, str(path))
    labels = eager.forward(eager.make_leaves())["n3.2"].grad_fn.metadata
    assert (labels["yaml_node"], labels["line"]) == ("n3.2", 8)


def test_a_backward_error_in_a_run_is_located_at_the_node_whose_gradient_failed(graph_file):
    path = graph_file("""
        inputs:
          x: {value: [0.5, -0.25], requires_grad: true}
        nodes:
          a: x * 2.0
          b: tanh(a) * 3.0
          loss: sum(b)
        backward: [{of: loss}, {of: loss}]
    """)
    with pytest.raises(graphs.GraphRuntimeError) as caught:
        graphs.load(path).run(replay=False)
    error = caught.value
    assert error.code == "AG040" and error.node in ("loss", "b", "b.1")
    assert error.location.line == {"loss": 7, "b": 6, "b.1": 6}[error.node]


_BOUND_TWICE = ["sum(x, dim=1)", "sum(x, 1)", "sum(x, dim=1, keepdim=True)", "sum(x, 1, True)", "clamp(x, min=0.0)",
                "clamp(x, max=1.0)", "clamp(x, 0.0, 1.0)", "add(x, w, alpha=2)", "x + w", "mul(w, 2)", "x @ w",
                "cat([x, w], dim=0)", "to(x, dtype=float64)", "transpose(x, 0, 1)", "softmax(x, dim=-1)"]


@pytest.mark.parametrize("path", EXAMPLES[:12] + ["written twice"], ids=lambda p: getattr(p, "stem", p))
def test_a_node_bound_by_a_layout_is_bound_as_written(graph_file, path, monkeypatch):
    from agrad.graphs import binding

    if path == "written twice":
        lines = ["inputs:", "  x: {shape: [2, 2], init: ones}", "  w: {shape: [2, 2], init: ones}", "nodes:"]
        lines += [f"  n{i}: {text}" for i, text in enumerate(_BOUND_TWICE * 2)]
        path = graph_file("\n".join(lines) + "\n")

    def bound():
        collector = Collector(str(path))
        doc = load_yaml(Path(path).read_text(), collector)
        found = binding.bind(read_document(doc, str(path), "g", collector), collector)
        return found, collector.sorted()

    laid_out = bound()
    monkeypatch.setattr(binding, "_BY_KIND", frozenset())        # no layout: every node bound as written
    assert laid_out == bound()
