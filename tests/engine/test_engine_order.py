"""The order the engine runs Nodes in, and agreement with an independent oracle."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import agrad
from agrad.autograd.graph import execution_plan, walk

from oracle import Value
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops


def _record_order(root):
    order = []
    for node in walk([root])[0]:
        node.register_prehook(lambda grads, n=node: order.append(n))
    return order


def test_ready_queue_runs_later_nodes_first_and_accumulators_before_all():
    a = agrad.tensor(1.0, requires_grad=True)
    b = agrad.tensor(2.0, requires_grad=True)
    c = a * 2          # created first
    d = b * 3          # created second: higher sequence_nr
    e = c + d
    order = _record_order(e.grad_fn)
    e.backward()
    names = [(n.name(), getattr(n, "variable", None)) for n in order]
    accumulate = "torch::autograd::AccumulateGrad"     # PyTorch's name() of its C++ Node
    assert [n for n, _ in names] == ["AddBackward0", "MulBackward0", accumulate, "MulBackward0", accumulate]
    assert order[1] is d.grad_fn and names[2][1] is b and order[3] is c.grad_fn and names[4][1] is a


def test_execution_plan_is_the_order_the_engine_runs():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    w = agrad.tensor([0.5, -1.0], requires_grad=True)
    h = agrad.tanh(x * w)
    y = (h * x + agrad.exp(w)).sum()
    plan = execution_plan(y)
    assert plan.dependencies[y.grad_fn] == 0
    assert set(plan.order) == set(plan.nodes)
    order = _record_order(y.grad_fn)
    y.backward()
    assert order == plan.order
    assert x.grad is not None      # the plan ran no kernel, the real pass still works


_OPS = ["add", "mul", "sub", "tanh", "exp"]


@st.composite
def dags(draw):
    n_leaves = draw(st.integers(1, 4))
    leaves = [draw(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3)) for _ in range(n_leaves)]
    steps = []
    for i in range(draw(st.integers(1, 14))):
        op = draw(st.sampled_from(_OPS))
        avail = n_leaves + i
        a = draw(st.integers(0, avail - 1))
        b = draw(st.integers(0, avail - 1))
        steps.append((op, a, b))
    return leaves, steps


def _build(values, steps, binary, unary):
    nodes = list(values)
    for op, a, b in steps:
        if op in ("add", "mul", "sub"):
            nodes.append(binary(op, nodes[a], nodes[b]))
        else:
            nodes.append(unary(op, nodes[a]))
    return nodes


def _loss_of(leaves, steps, device):
    """The leaves and the loss of a random DAG (`dags`) on the CPU or on Meta: every node feeds the
    loss, so fan-out and fan-in are both exercised."""
    xs = [agrad.tensor(v, dtype=agrad.float64, requires_grad=True) if device == "cpu" else
          agrad.empty((3,), dtype=agrad.float64, device="meta").requires_grad_(True) for v in leaves]
    ours = _build(xs, steps,
                  lambda op, p, q: {"add": agrad.add, "mul": agrad.mul, "sub": agrad.sub}[op](p, q),
                  lambda op, p: getattr(agrad, op)(p))
    loss = ours[len(xs)].sum()
    for node in ours[len(xs) + 1:]:
        loss = loss + node.sum()
    return xs, loss


@settings(max_examples=60, deadline=None)
@given(dags())
def test_engine_matches_topological_sort_oracle_on_random_dags(dag):
    leaves, steps = dag
    xs, loss = _loss_of(leaves, steps, "cpu")
    loss.backward()

    vs = [Value(v) for v in leaves]
    theirs = _build(vs, steps, lambda op, p, q: {"add": p + q, "mul": p * q, "sub": p - q}[op],
                    lambda op, p: getattr(p, op)())
    oracle_loss = theirs[len(vs)].sum()
    for node in theirs[len(vs) + 1:]:
        oracle_loss = oracle_loss + node.sum()
    oracle_loss.backward()

    np.testing.assert_allclose(loss.item(), float(oracle_loss.data), rtol=1e-12)
    for x, v in zip(xs, vs):
        expected = v.grad
        got = x.grad.numpy() if x.grad is not None else np.zeros(3)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _described(order, xs):
    """Nodes as a second build of the same graph has them too: their names, a leaf's by its place."""
    return [(n.name(), next((i for i, x in enumerate(xs) if x is getattr(n, "variable", None)), None))
            for n in order]


@settings(max_examples=60, deadline=None)
@given(dags())
def test_the_dry_run_on_meta_tensors_is_the_order_a_real_run_takes(dag):
    """`inspect`'s order (execution_plan, a dry run on Meta tensors) is the order the engine runs the
    same graph on the CPU in, ties between AccumulateGrads (one sequence_nr) included."""
    leaves, steps = dag
    xs, loss = _loss_of(leaves, steps, "cpu")
    planned = execution_plan(loss).order
    order = _record_order(loss.grad_fn)
    loss.backward()
    assert order == planned
    meta_xs, meta_loss = _loss_of(leaves, steps, "meta")
    assert _described(execution_plan(meta_loss).order, meta_xs) == _described(order, xs)


def test_set_sequence_nr_reorders_the_nodes_ready_at_once():
    # PyTorch's test_set_sequence_nr: c = a + b with a's Node given the highest number runs it first
    x, y, z = (agrad.randn(10, requires_grad=True) for _ in range(3))
    a, b = x + y, y + z
    c = a + b
    a.grad_fn._set_sequence_nr(100)
    b.grad_fn._set_sequence_nr(99)
    c.grad_fn._set_sequence_nr(98)
    assert (a.grad_fn._sequence_nr(), b.grad_fn._sequence_nr(), c.grad_fn._sequence_nr()) == (100, 99, 98)
    order = []
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    c.sum().backward()
    assert order == ["a", "b"]
    a, b = x + y, y + z
    c = a + b
    a.grad_fn._set_sequence_nr(1)           # now lower than b's
    b.grad_fn._set_sequence_nr(2)
    order.clear()
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    c.sum().backward()
    assert order == ["b", "a"]
