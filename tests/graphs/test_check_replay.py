"""`check`'s finite-difference passes replayed (graphs/check_replay.py): the numerical
Jacobians equal the engine's bit for bit on every example (whole leaves where small, a
range of columns as `check --workers` shares them out where large; fast mode too), and a
pass the replay cannot express runs through the engine."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.graphs as G
from agrad.autograd.gradcheck import analytical_jacobian, gradcheck_report, numerical_jacobian
from agrad.graphs.check_replay import BackwardReplay, ForwardReplay
from agrad.graphs.gradcheck import check_setup

EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"
COLUMNS = 24            # per leaf: enough to cross every kind of element, few enough for the engine's passes


def _replay_of(setup) -> ForwardReplay:
    (found,) = [c.cell_contents for c in setup.fn.__closure__ if isinstance(c.cell_contents, ForwardReplay)]
    return found


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_numerical_jacobians_are_the_engines_bit_for_bit(example):
    graph = G.load(EXAMPLES / example)
    setups = [check_setup(graph._checked, str(EXAMPLES / example), replay=replay) for replay in (True, False)]
    if setups[0] is None:
        pytest.skip("no input requires grad")
    jacobians = []
    for setup in setups:
        with agrad.no_grad():       # values only, as gradcheck_report and check --workers compute them
            per_leaf = [numerical_jacobian(setup.fn, setup.inputs, k, 1e-6, range(min(COLUMNS, t.numel())),
                                           keep=setup.compared) for k, t in enumerate(setup.inputs)]
        jacobians.append([[m.tobytes() for m in leaf] for leaf in per_leaf])
    assert jacobians[0] == jacobians[1]
    replay = _replay_of(setups[0])
    assert replay.recorded and (replay.schedule is not None or replay.reason)
    if example in ("gpt_block.yaml", "lstm.yaml", "resnet_block.yaml", "train_digits.yaml"):
        assert replay.schedule is not None, replay.reason


@pytest.mark.parametrize("example", ["mlp.yaml", "resnet_block.yaml", "gnn_layer.yaml"])
def test_whole_check_reports_are_the_engines(example):
    graph = G.load(EXAMPLES / example)
    for fast in (False, True):
        reports = []
        for replay in (True, False):
            setup = check_setup(graph._checked, str(EXAMPLES / example), fast=fast, replay=replay)
            reports.append(gradcheck_report(setup.fn, setup.inputs, fast_mode=fast, seed=0))
        for a, b in zip(*reports):
            assert a.numerical.tobytes() == b.numerical.tobytes()
            assert a.analytical.tobytes() == b.analytical.tobytes()
            assert (a.max_abs_err, a.max_rel_err, a.worst_index, a.passed) == \
                (b.max_abs_err, b.max_rel_err, b.worst_index, b.passed)
        assert graph.check(fast=fast) == graph.check(fast=fast, replay=False)


def test_a_value_read_while_recording_is_not_replayed():
    x = agrad.tensor(np.arange(4.0), requires_grad=True)
    replay = ForwardReplay()

    def forward(env):
        t = env["x"]
        return {"y": t * float(t.sum())}            # float() reads the value: a frozen decision

    (y,) = replay.record({"x": x}, forward, lambda env: (env["y"],))
    assert "item()" in replay.reason and not replay.fits({"x": x})
    assert y.tolist() == [0.0, 6.0, 12.0, 18.0]


def test_another_shape_is_not_replayed():
    x = agrad.tensor(np.arange(4.0), requires_grad=True)
    replay = ForwardReplay()
    replay.record({"x": x}, lambda env: {"y": env["x"] * 2.0}, lambda env: (env["y"],))
    assert replay.fits({"x": agrad.tensor(np.ones(4))})
    (y,) = replay.outputs({"x": agrad.tensor(np.ones(4))})
    assert y.tolist() == [2.0] * 4
    assert not replay.fits({"x": agrad.tensor(np.ones(5))})
    assert not replay.fits({"x": agrad.tensor(np.ones(4, np.float32))})


@pytest.mark.parametrize("example", ["resnet_block.yaml", "gpt_block.yaml", "lstm.yaml"])
def test_analytic_jacobians_replayed_are_the_engines_bit_for_bit(example):
    setup = check_setup(G.load(EXAMPLES / example)._checked, str(EXAMPLES / example))
    rows = BackwardReplay()
    replayed = analytical_jacobian(setup.fn, setup.inputs, range(len(setup.inputs)), keep=setup.compared, vjp=rows)
    engine = analytical_jacobian(setup.fn, setup.inputs, range(len(setup.inputs)), keep=setup.compared)
    assert [[m.tobytes() for m in out] for out in replayed] == [[m.tobytes() for m in out] for out in engine]
    assert rows.recorded and not rows.reasons
    assert all(schedule is not None for _, schedule, _, _ in rows.recorded.values())


class _ReadsItsGradient(agrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, grad):
        return grad * (2.0 if float(grad.sum()) >= 0 else -2.0)   # a decision on a value: never replayed


def test_a_backward_that_reads_a_value_is_not_replayed():
    x = agrad.tensor(np.arange(3.0), requires_grad=True)
    y = _ReadsItsGradient.apply(x)
    rows = BackwardReplay()
    seeds = [agrad.tensor(v) for v in ([1.0, 0.0, 0.0], [-1.0, 0.0, 0.0])]
    assert [rows(y, [x], s)[0].tolist() for s in seeds] == [[2.0, 0.0, 0.0], [2.0, -0.0, -0.0]]
    assert len(rows.reasons) == 1 and "item()" in rows.reasons[0]
