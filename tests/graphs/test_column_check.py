"""The `nodes:` block kept column-wise (spec.NodeColumns) and checked shape by shape
(column_check.py): the same NodeSpecs, positions and diagnostics as reading and checking
node by node, on clean, broken and mixed files."""
from __future__ import annotations

import dataclasses

import pytest

from agrad import graphs
from agrad.graphs import build, column_check, executor, yaml_loader
from agrad.graphs.column_order import ColumnOrder
from agrad.graphs.diagnostics import Collector
from agrad.graphs.document import read_document
from agrad.graphs.runner import release_plan
from agrad.graphs.spec import NodeColumns
from agrad.graphs.yaml_loader import load_yaml
from graph_helpers import EXAMPLES, suite_graphs

_HEAD = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "  m: {shape: [2, 3], init: ones}",
         "  k: {value: 1, dtype: int64}", "nodes:", "  n0: x * 1.0"]


def _chain(links: int, middle: list[str] = (), tail: list[str] = (), after: list[str] = ("backward: loss",)) -> str:
    lines = _HEAD + [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, links)] + list(middle)
    lines += [f"  n{i}: sin(n{i - 1}) + x" for i in range(links, 2 * links)]
    lines += [f"  loss: sum(n{2 * links - 1})"] + list(tail)
    return "\n".join(lines + list(after)) + "\n"


# (lines in the middle of the chain, lines at its end, lines after `nodes:`)
_CASES = {
    "clean": ([], [], ["backward: loss"]),
    "ops and keywords vary": (["  s1: sum(n5, dim=0)", "  s2: mean(n6, dim=0, keepdim=True)", "  s3: exp(n7) * n7",
                               "  s4: clamp(n8, min=-1.0, max=None)"], [], ["backward: loss", "outputs: [s1, s2, s3]"]),
    "a name used before its node": (["  early: n35 + x"], [], ["backward: loss"]),
    "a cycle": (["  c1: c2 + x", "  c2: c1 * 2.0"], [], ["backward: loss"]),
    "an undefined name": (["  u: tanh(nope) + x"], [], ["backward: loss"]),
    "an unknown op": (["  u: tahn(n3) + x"], [], ["backward: loss"]),
    "a bad keyword": (["  u: sum(n3, axis=0)"], [], ["backward: loss"]),
    "a keyword as a name": (["  if: n3 + x"], [], ["backward: loss"]),
    "a node named as an input": (["  m: n3 + x"], [], ["backward: loss"]),
    "getitem by name": (["  g: getitem(n3, 0)"], [], ["backward: loss"]),
    "subscripts among the shapes": (["  g: n3[0] + n4[1]", "  h: x[k]"], [], ["backward: loss"]),
    "a shape error": (["  bad: matmul(n5, m)"], [], ["backward: loss"]),
    "not read in bulk": (["  bad: n5 @ m", "  s: n3[1:2]"], [], ["backward: loss"]),
    "an error after it": (["  bad: n5 + m", "  worse: bad * 2.0"], [], ["backward: loss"]),
    "a dtype name as a tensor": (["  t: to(n3, dtype=int64) * 0.5"], [], ["backward: loss"]),
    "a multi-output op": (["  split: chunk(n4, 3)", "  part: split[1] * 2.0"], [], ["backward: loss"]),
    "a multi-output op last": ([], ["  parts: chunk(loss, 1)"], []),
    "the last node is the output": ([], [], []),
    "a constant to report": (["  big: mul(n3, 1e400)"], [], ["backward: loss"]),
    "outputs and expectations": ([], [], ["backward: loss", "retain_grad: [n3]", "outputs: [loss, n3, n0]",
                                          "expect:", "  outputs: {loss: 1.0, n3: [1, 2]}", "  grads: {x: [1, 2, 3]}"]),
    "an undefined output": ([], [], ["backward: loss", "outputs: [loss, nope]", "retain_grad: [n1]"]),
    "an op inside a node named": ([], [], ["backward: loss", "outputs: [n3.1]"]),
    "a root that is not scalar": ([], [], ["backward: n7"]),
    "a grad op": (["  gr: grad(n4, x)"], [], ["backward: loss"]),
    "a bad input": ([], [], ["backward: loss"]),
}


@pytest.fixture
def columns_checked(monkeypatch):
    """Every graph of at least one node is a large one; the checks column_check answered."""
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 0)
    answers = []
    real = column_check.check_columns

    def checked(*a, **k):
        result = real(*a, **k)
        answers.append(result is not None)
        return result
    monkeypatch.setattr(build, "check_columns", checked)
    return answers


@pytest.mark.parametrize("how", ["validate", "load"])
@pytest.mark.parametrize("case", list(_CASES))
def test_a_column_wise_check_reports_what_the_node_by_node_check_reports(case, how, graph_file, columns_checked,
                                                                         monkeypatch):
    """validate: the diagnostics; load: those, or the BoundNodes, largest result, leaves, NodeSpecs,
    the Meta build `inspect` asks for, and the run's outputs and gradients."""
    middle, tail, after = _CASES[case]
    text = _chain(20, middle, tail, after)
    if case == "a bad input":
        text = text.replace("init: ones", "init: onez")
    path = graph_file(text)
    look = graphs.validate if how == "validate" else _loaded
    fast = look(path)
    answered = list(columns_checked)
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 10 ** 9)     # node by node, nothing shared
    assert fast == look(path)
    if case in ("clean", "ops and keywords vary", "outputs and expectations"):
        assert answered == [True]               # checked shape by shape, whatever it then reported
    elif case in ("a name used before its node", "a cycle", "an undefined name", "a shape error",
                  "a dtype name as a tensor", "a multi-output op", "a grad op", "an op inside a node named",
                  "an unknown op", "a bad keyword"):
        assert answered in ([False], [])


def _read(text: str):
    collector = Collector("g.yaml")
    spec = read_document(load_yaml(text, collector), "g.yaml", "g", collector)
    return spec, collector.sorted()


def _fields(n):
    return (n.name, n.owner, n.op, n.args, n.kwargs, n.pos, n.arg_pos, n.kwarg_pos, n.path, n.text)


def _bound(b):
    return (_fields(b.spec), b.schema, b.entry, b.args, b.kwargs, b.selects_output, b.given)   # (plan: a cache)


def _loaded(path, run: bool = True):
    """What `load` gives (the checked graph and, with `run`, its run's values) or what it reports."""
    try:
        graph = graphs.load(path)
    except graphs.GraphFileError as exc:
        return exc.diagnostics
    checked = graph._checked
    kept = ([_bound(b) for b in checked.order], checked.largest, list(checked.leaves),
            [_fields(n) for n in checked.spec.nodes],
            {k: (tuple(v.shape), v.dtype, v.requires_grad) for k, v in checked.meta.items() if not isinstance(v, tuple)})
    if not run:
        return kept, None
    try:
        done = graph.run()
    except graphs.GraphRuntimeError as exc:
        return kept, str(exc)
    values = [{k: None if v is None else v.detach().numpy().tolist() for k, v in found.items()}
              for found in (done.outputs, done.grads)]
    return kept, values


@pytest.mark.parametrize("case", list(_CASES))
def test_nodes_kept_column_wise_are_the_nodespecs_read_one_by_one(case, monkeypatch):
    middle, tail, after = _CASES[case]
    text = _chain(6, middle, tail, after)
    spec, problems = _read(text)
    assert isinstance(spec.columns, NodeColumns) or case == "not read in bulk"
    last = spec.last_node()
    ops = spec.op_names()
    fast = [_fields(n) for n in spec.nodes]
    monkeypatch.setattr(yaml_loader, "_bulk_nodes", lambda source: None)       # PyYAML reads it all
    slow_spec, slow_problems = _read(text)
    assert slow_spec.columns is None
    assert fast == [_fields(n) for n in slow_spec.nodes]
    assert problems == slow_problems
    assert _fields(last) == _fields(slow_spec.nodes[-1])
    assert ops >= {n.op for n in slow_spec.nodes}


def test_positions_of_a_block_read_in_bulk_are_pyyamls(monkeypatch):
    text = _chain(30, ["  s1: sum(n5, dim=0)", "  __x9: n3 * n3"])
    doc = load_yaml(text, Collector("g.yaml"))
    assert doc.block is not None
    slow = yaml_loader._load_whole(text, Collector("g.yaml"), yaml_loader.Document(data=None, source=text))
    for path in slow.values:
        assert doc.pos(path) == slow.values[path], path
    for path in slow.keys:
        assert doc.key_pos(path) == slow.keys[path], path
    for path, src in slow.scalars.items():
        got = doc.scalar(path)
        assert (got.start, got.end, got.style) == (src.start, src.end, src.style), path
    assert doc.block._index is not None          # made when the first position inside the block was asked


def test_a_clean_check_makes_no_nodespec_and_no_position(graph_file, columns_checked, monkeypatch):
    made = []
    real = NodeColumns.node_specs
    monkeypatch.setattr(NodeColumns, "node_specs", lambda self: made.append(1) or real(self))
    positions = []
    real_pos = yaml_loader.NodesBlock.pos
    monkeypatch.setattr(yaml_loader.NodesBlock, "pos", lambda *a, **k: positions.append(1) or real_pos(*a, **k))
    assert graphs.validate(graph_file(_chain(300))) == []
    assert columns_checked == [True] and made == [] and positions == []
    graph = graphs.load(graph_file(_chain(30)))     # a load keeps none: its order makes them as a run reads it
    assert columns_checked == [True, True] and made == []
    assert type(graph._checked.order) is ColumnOrder
    assert graph.run().outputs["loss"].shape == () and made == []
    assert [_fields(b.spec) for b in graph._checked.order] == [_fields(n) for n in graph.spec.nodes]
    assert made == [1]


def test_a_column_order_is_the_sequence_of_its_bound_nodes(graph_file, columns_checked):
    order = graphs.load(graph_file(_chain(30)))._checked.order
    assert type(order) is ColumnOrder
    nodes = list(order)
    assert len(order) == len(nodes) == 1 + 3 * 29 + 2 * 30 + 1
    assert (nodes[0].name, nodes[3].name, nodes[-1].name) == ("n0", "n1", "loss")
    for i in (0, 1, 4, len(nodes) - 1, -1, -len(nodes)):
        assert _bound(order[i]) == _bound(nodes[i])
    assert [_bound(b) for b in order[3:9]] == [_bound(b) for b in nodes[3:9]]
    assert [b.name for b in reversed(order)] == [b.name for b in reversed(nodes)]
    with pytest.raises(IndexError):
        order[len(nodes)]


@pytest.mark.parametrize("how", ["validate", "load"])
def test_every_graph_of_the_suite_and_every_example_checks_alike_column_wise(how, tmp_path, columns_checked,
                                                                             monkeypatch):
    texts = suite_graphs() + [p.read_text() for p in sorted(EXAMPLES.glob("*.yaml"))]
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"g{i}.yaml")
        paths[-1].write_text(text)
    # (a load's run: the test above; the suite's graphs include some too large to run)
    look = graphs.validate if how == "validate" else lambda path: _loaded(path, run=False)
    column_wise = [look(p) for p in paths]
    assert columns_checked.count(True) > 20         # many were checked shape by shape
    monkeypatch.setattr(executor.SharedResults, "MIN_NODES", 10 ** 9)
    for path, text, found in zip(paths, texts, column_wise):
        assert found == look(path), text


def test_a_load_checked_column_wise_binds_and_runs_each_signature_once(graph_file, columns_checked, monkeypatch):
    from agrad.graphs import binding

    calls = {"bound": 0, "run": 0, "ordered": 0}

    def counted(what, real):
        def call(*a, **k):
            calls[what] += 1
            return real(*a, **k)
        return call

    monkeypatch.setattr(binding.Binder, "bind_written", counted("bound", binding.Binder.bind_written))
    monkeypatch.setattr(executor.SharedResults, "apply", counted("run", executor.SharedResults.apply))
    monkeypatch.setattr(build, "run_order", counted("ordered", build.run_order))
    graph = graphs.load(graph_file(_chain(300)))
    # 600 nodes of two shapes: n0, the first of each shape and its second (whose input is no longer x * 1.0
    # but a node of the shape itself), loss; each of their ops matched and run once
    assert columns_checked == [True] and calls["ordered"] == 0, calls
    assert calls["bound"] <= 12 and calls["run"] <= 12, calls
    assert len(graph._checked.order) == 1 + 3 * 299 + 2 * 300 + 1
    assert all(b.given for b in graph._checked.order)


@pytest.mark.parametrize("templated", [True, False])
def test_a_column_order_plans_its_nodes_as_their_bound_nodes_do(templated, graph_file, columns_checked, monkeypatch):
    """The plans and reads a signature's templates make are those of each node's BoundNodes; without
    templates (a value they could not place) the order reads them off its BoundNodes."""
    if not templated:
        monkeypatch.setattr(column_check, "templates", lambda *a: (None, None, None))
    text = _chain(40, middle=["  s1: sum(n5, dim=[0])", "  s2: sum(n6, dim=[0])", "  c1: clamp(n7, min=-1.0, max=None)"])
    graph = graphs.load(graph_file(text))
    order = graph._checked.order
    assert type(order) is ColumnOrder
    assert all((b.plans is not None) is templated for b in order.bindings)
    fresh = list(order)
    assert list(order.plans()) == [executor.call_plan(b) for b in fresh]
    # where each value dies: placed by the signatures, as found name by name over the BoundNodes
    by_name = dataclasses.replace(graph._checked, order=fresh)
    assert [set(e) for e in release_plan(graph._checked)] == [set(e) for e in release_plan(by_name)]
    assert graph.run().outputs["loss"].item() == graph.run(replay=False).outputs["loss"].item()
