"""`run(keep_values=False)` (what `agrad run` does): each value leaves the pass's env once its
last reader has run, and nothing the run reports changes; the node plans are one tuple a node."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agrad import graphs
from agrad.graphs.executor import label_all
from agrad.graphs.runner import Runner, output_names, release_plan

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "graphs" / "examples").glob("*.yaml"))

CHAIN = """\
inputs:
  x: {value: [0.5, -0.25, 1.0], requires_grad: true}
nodes:
  n0: x * 1.0
  n1: tanh(n0) * 0.999 + x
  n2: tanh(n1) * 0.999 + x
  kept: exp(n1)
  n3: tanh(n2) * 0.999 + x
  loss: sum(n3) + sum(kept)
backward: loss
retain_grad: [n2]
expect:
  outputs:
    kept: [2.0, 1.0, 3.0]
  rtol: 10
  atol: 10
"""


def _array(t):
    return None if t is None else t.detach().numpy()


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b, equal_nan=True))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_letting_values_go_changes_no_output_gradient_or_expectation(path):
    kept = graphs.load(path).run(replay=False)
    released = graphs.load(path).run(replay=False, keep_values=False)
    assert list(released.outputs) == list(kept.outputs)
    assert all(_same(_array(released.outputs[n]), _array(kept.outputs[n])) for n in kept.outputs)
    assert list(released.grads) == list(kept.grads)
    assert all(_same(_array(released.grads[n]), _array(kept.grads[n])) for n in kept.grads)
    assert released.not_retained == kept.not_retained
    a, b = released.result(), kept.result()
    assert (a.expect.passed, a.expect.checked, len(a.expect.failures)) == \
        (b.expect.passed, b.expect.checked, len(b.expect.failures))


def test_only_what_is_read_after_the_forward_stays(graph_file):
    graph = graphs.load(graph_file(CHAIN))
    run = graph.run(replay=False, keep_values=False)
    # the leaf, the output, the root, the retained tensor and the expectation's value stay
    assert {"x", "loss", "n2", "kept"} <= set(run.values)
    assert not {"n0", "n1", "n3"} & set(run.values)
    assert run.grads["n2"] is not None and "n3" in run.not_retained and "n1" in run.not_retained
    everything = graph.run(replay=False)
    assert {"n0", "n1", "n3"} <= set(everything.values)
    assert run.not_retained == everything.not_retained
    assert np.array_equal(_array(run.grads["x"]), _array(everything.grads["x"]))


def test_each_value_goes_after_its_last_reader(graph_file):
    checked = graphs.load(graph_file(CHAIN))._checked
    plan = release_plan(checked)
    # read by position (nodes_made) or in order (the plain run): the same tuples either way
    assert len(plan) == len(checked.order) and list(plan) == [plan[i] for i in range(len(plan))]
    assert all(names.__class__ is tuple for names in plan) and any(len(names) == 1 for names in plan)
    position = {bound.name: i for i, bound in enumerate(checked.order)}
    gone = {name: i for i, names in enumerate(plan) for name in names}
    kept = set(output_names(checked)) | {"n2", "kept"}
    for i, bound in enumerate(checked.order):
        for ref in bound.refs():
            if ref.name in gone:
                assert gone[ref.name] >= i          # never before a node that reads it
    assert not kept & set(gone) and "x" not in gone
    assert gone["n1"] == position["kept"]          # n1's last reader is `kept`, after n2's tanh


def test_the_nodes_of_let_go_values_are_labelled_as_before(graph_file):
    """Errors and anomaly reports name the YAML node from the Nodes' labels, made after the pass
    (label_all): a value let go of leaves its grad_fn for that."""
    checked = graphs.load(graph_file(CHAIN))._checked
    runner = Runner(checked, "g.yaml")
    runner.lazy_labels = True
    runner.release = release_plan(checked)
    env = runner.forward(runner.make_leaves())
    assert runner.released and all(name not in env for name in runner.released)
    label_all(checked.order, env, runner.released)
    for name, fn in runner.released.items():
        assert fn.metadata["yaml_node"] == name


def test_a_node_plan_is_one_tuple_its_call_shared_by_nodes_written_alike(graph_file):
    graph = graphs.load(graph_file(CHAIN))
    graph.run(replay=False)
    plans = {bound.name: bound.plan for bound in graph._checked.order}
    assert all(type(p) is tuple and p[1] == name for name, p in plans.items())
    assert plans["n1"][0] is plans["n2"][0]         # add(Tensor, Tensor): one generated call


PRODUCT = """\
inputs:
  x: {value: [0.5, -0.25, 1.0], requires_grad: true}
nodes:
  a: x * 2.0
  b: x * 3.0
  c: x * 4.0
  s: a * b * c
  loss: sum(s)
backward: loss
"""


def test_a_node_that_last_reads_several_values_lets_go_of_all_of_them(graph_file):
    checked = graphs.load(graph_file(PRODUCT))._checked
    plan = release_plan(checked)
    gone = {bound.name: set(names) for bound, names in zip(checked.order, plan)}
    assert gone["s.1"] == {"a", "b"} and gone["s"] == {"c", "s.1"}
    run = graphs.load(graph_file(PRODUCT)).run(replay=False, keep_values=False)
    assert set(run.values) == {"x", "loss"}
    assert np.allclose(_array(run.grads["x"]), 3 * 24.0 * np.array([0.5, -0.25, 1.0]) ** 2)
