"""The front end at scale: what keeps reading, checking and running a large graph file proportional."""
from __future__ import annotations

import gc

import pytest

import agrad.graphs.graph as graph_module
import agrad.graphs.inspection as inspection
from agrad import graphs
from agrad.graphs.diagnostics import Collector
from agrad.graphs.yaml_loader import _scalar_map, load_yaml, position_in_scalar


def _chain(nodes: int) -> str:
    lines = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, nodes)]
    return "\n".join(lines + [f"  loss: sum(n{nodes - 1})", "backward: loss", ""])


def test_the_cyclic_gc_is_paused_while_a_file_is_checked_and_inspected(graph_file, monkeypatch):
    seen = []
    # inspect_graph is looked up in its own module when Graph.inspect runs (imported on first use)
    for module, name in ((graph_module, "validate_graph"), (graph_module, "check_graph"),
                         (inspection, "inspect_graph")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, _real=real, **k: seen.append(gc.isenabled()) or _real(*a, **k))
    path = graph_file(_chain(5))
    assert gc.isenabled()
    assert graphs.validate(path) == []
    graphs.load(path).inspect()
    assert seen == [False, False, False] and gc.isenabled()


@pytest.mark.parametrize("written", ["tanh(n1) * 0.999 + x", "'tanh(n1) *  0.5 + x'", '"tanh(n1) + x"',
                                     "'it''s(a)'", '"a\\tb(c)"', '"\\\\\\\\(a)"'])
def test_a_column_inside_a_one_line_scalar_is_the_one_the_character_map_gives(written):
    doc = load_yaml(f"nodes:\n  y:   {written}   # note\n", Collector("g.yaml"))
    value = doc.data["nodes"]["y"]
    mapped = _scalar_map(doc.lines, doc.scalars[("nodes", "y")], value)
    for offset in range(len(value) + 2):
        want = (mapped[1][offset] if offset < len(value) else
                type(mapped[1][0])(mapped[1][-1].line, mapped[1][-1].col + 1)) if mapped else None
        got = position_in_scalar(doc, ("nodes", "y"), offset)
        assert want is None or got == want, (offset, got, want)


def test_a_node_works_out_how_to_find_its_arguments_once(graph_file):
    graph = graphs.load(graph_file(_chain(4)))
    first = graph.run().outputs["loss"].item()
    plans = [b.plan for b in graph._checked.order]
    assert all(p is not None for p in plans)
    assert graph.run().outputs["loss"].item() == first
    assert all(a is b.plan for a, b in zip(plans, graph._checked.order))


_SHAPES = [
    "tanh(n41) * 0.999 + x", "tanh(n4) * 0.999 + xyz", "  relu(x @ W1 + b1)", "sum(x, dim=1, keepdim=True)",
    "sum(x, dim=[0, 1])", "x[0]", "x[:, idx]", "x[1:-1:2, None, ...]", "x[[True, False]]", "cat([a, b], 0)",
    "-x + (-2) * y", "a < b", "a if b else c", "f(a=1, a=2)", "f(a, b) ** 2 - g(h(a), k=b)", "x.T", "1e5 * x",
    "0x1F * x", "2x", "lambda: x", "matmul(matmul(a, b), matmul(b, a))", "x[", "clamp(x, min=None, max=1.5)",
    "not x", "x[i, j]", "to(x, dtype=float64)", "where(c > 0, a, b)", "f(*a)", "a == b != c",
]


def _parsed(parse, target: str, text: str):
    """The Calls, or the error's (code, message, offset)."""
    from agrad.graphs import expressions

    try:
        return parse(target, text)
    except expressions.ExpressionError as exc:
        return (exc.code, exc.message, exc.offset)


def _parsed_itself(target: str, text: str):
    from agrad.graphs import expressions

    stripped = text.lstrip()
    return expressions._parse_text(target, stripped, len(text) - len(stripped))


@pytest.mark.parametrize("text", _SHAPES)
def test_an_expression_read_from_its_shape_is_the_expression_parsed_itself(text):
    from agrad.graphs import expressions

    expressions._templates.clear()
    renamed = text.replace("x", "a_long_tensor_name")          # the same shape: other names, other offsets
    for target, written in (("h", text), ("a_much_longer_name", text), ("h", renamed)):
        assert _parsed(expressions.parse_expression, target, written) == _parsed(_parsed_itself, target, written)
    if text == "tanh(n41) * 0.999 + x":
        assert list(expressions._templates.values())[0] is not None      # one shape, parsed once


def test_a_run_lets_the_meta_build_go_and_inspect_builds_it_again(graph_file):
    graph = graphs.load(graph_file(_chain(4)))
    before = graph.inspect()
    graph.run()
    assert graph._checked._meta is None           # the run's tensors are not kept beside a Meta copy
    after = graph.inspect()
    assert after.nodes == before.nodes and [b.name for b in after.backward] == [b.name for b in before.backward]


def test_objects_made_while_the_gc_is_paused_are_not_left_for_its_next_young_collection():
    from agrad.graphs.runner import _cyclic_gc_paused

    # NOTE: from a running collector (what this is about), whatever state the tests before left it in
    was = gc.isenabled()
    gc.enable()
    try:
        with _cyclic_gc_paused():
            made = [[] for _ in range(3)]
        assert all(any(o is m for o in gc.get_objects(generation=2)) for m in made)
    finally:
        if not was:
            gc.disable()
