"""Graph files replayed (graphs/replay.py, engine/autograd/recorder.py): the same results as
the engine, bit for bit, and the engine whenever a pass cannot be replayed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import agrad
from agrad import graphs
from agrad.autograd.recorder import Recorder
from agrad.cli.main import cli

EXAMPLES = sorted((Path(graphs.__file__).parent / "examples").glob("*.yaml"))


def _arrays(tensors: dict) -> dict:
    return {k: None if t is None else (tuple(x.detach().numpy() for x in t) if isinstance(t, tuple)
                                       else t.detach().numpy())
            for k, t in tensors.items()}


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        assert (x is None) == (y is None), k
        for p, q in zip(*(v if isinstance(v, tuple) else (v,) for v in (x, y))) if x is not None else ():
            assert p.dtype == q.dtype and p.shape == q.shape, k
            assert np.array_equal(p, q, equal_nan=p.dtype.kind in "fc"), k


@pytest.mark.parametrize("dtype", [None, "float64"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_replays_with_the_engines_results(path, dtype):
    try:
        graph = graphs.load(path, dtype=dtype)
    except graphs.GraphFileError:
        assert dtype is not None      # every example loads as written
        pytest.skip(f"{path.stem} mixes in data of its own dtype")
    replayed = graph.run(repeat=3)          # engine, recorded, replayed
    assert graph._replay.reason is None and graph._replay.replay is not None
    engine = graphs.load(path, dtype=dtype).run(repeat=3, replay=False)
    _assert_same(_arrays(replayed.outputs), _arrays(engine.outputs))
    _assert_same(_arrays(replayed.grads), _arrays(engine.grads))
    _assert_same(_arrays({k: replayed.values[k] for k in engine.values}), _arrays(engine.values))
    a, b = replayed.result(), engine.result()
    assert a.expect == b.expect and a.not_retained == b.not_retained


def test_runs_of_one_graph_replay_after_the_second(graph_file):
    path = graph_file("""
        inputs:
          x: {value: [1.0, 2.0, 3.0], requires_grad: true}
          b: {value: 0.5, requires_grad: true}
        nodes:
          y: sum(tanh(x * b + b))
          z: sum(x * x) + sum(h)
          h: x * b
        retain_grad: [h]
        backward:
          - {of: [y, z], retain_graph: true}
          - {of: z}
    """)
    graph = graphs.load(path)
    runs = [graph.run() for _ in range(4)]
    assert graph._replay.replay is not None
    engine = graphs.load(path).run(replay=False)
    for run in runs:        # every run starts from fresh leaves: gradients of two passes, not of eight
        _assert_same(_arrays(run.grads), _arrays(engine.grads))
        _assert_same(_arrays(run.outputs), _arrays(engine.outputs))
    assert runs[3].grads["x"] is not runs[2].grads["x"]
    assert not np.shares_memory(runs[3].grads["x"].numpy(), runs[2].grads["x"].numpy())


def test_repeat_of_a_graph_that_changes_its_inputs_matches_the_engine():
    path = next(p for p in EXAMPLES if p.stem == "resnet_block")    # batch_norm updates running stats
    replayed = graphs.load(path).run(repeat=5)
    engine = graphs.load(path).run(repeat=5, replay=False)
    _assert_same(_arrays(replayed.grads), _arrays(engine.grads))
    _assert_same(_arrays({k: replayed.values[k] for k in engine.values}), _arrays(engine.values))


@pytest.mark.parametrize("options", [{"profile": True}, {"anomaly": True}])
def test_profile_and_anomaly_run_through_the_engine(options):
    graph = graphs.load(EXAMPLES[0])
    graph.run(repeat=3, **options)
    assert graph._replay.replay is None


def test_random_values_from_the_global_generator_are_not_replayed(graph_file):
    path = graph_file("""
        inputs:
          x: {value: [1.0, 2.0, 3.0], requires_grad: true}
        nodes:
          y: sum(x * randn_like(x))
        backward: y
    """)
    graph = graphs.load(path)
    agrad.manual_seed(3)
    run = graph.run(repeat=3)
    assert graph._replay.replay is None and "generator" in graph._replay.reason
    agrad.manual_seed(3)
    engine = graphs.load(path).run(repeat=3, replay=False)
    _assert_same(_arrays(run.grads), _arrays(engine.grads))


def test_seeded_random_values_are_replayed(graph_file):
    path = graph_file("""
        inputs:
          x: {value: [1.0, 2.0, 3.0], requires_grad: true}
        nodes:
          y: sum(x * randn_like(x, seed=4))
        backward: y
    """)
    graph = graphs.load(path)
    run = graph.run(repeat=3)
    assert graph._replay.replay is not None
    _assert_same(_arrays(run.grads), _arrays(graphs.load(path).run(replay=False).grads))


def test_cli_no_replay_gives_the_same_results(tmp_path):
    runner = CliRunner()
    path = str(next(p for p in EXAMPLES if p.stem == "mlp"))
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert runner.invoke(cli, ["run", path, "--repeat", "3", "--save", str(a)]).exit_code == 0
    assert runner.invoke(cli, ["run", path, "--repeat", "3", "--no-replay", "--save", str(b)]).exit_code == 0
    with np.load(a) as x, np.load(b) as y:
        assert sorted(x.files) == sorted(y.files)
        for k in x.files:
            assert np.array_equal(x[k], y[k]), k


# ---- the recorder, on the library ------------------------------------------------------------

def _recorded(fn, *values):
    """Record `fn(*leaves)` and return (recorder, leaves, result)."""
    leaves = [agrad.tensor(v, dtype=agrad.float64, requires_grad=True) for v in values]
    recorder = Recorder()
    for t in leaves:
        recorder.bind(t._data)
    with recorder:
        out = fn(*leaves)
    return recorder, leaves, out


def test_a_schedule_replays_on_new_values_of_its_inputs():
    def fn(x, b):        # broadcasting: the engine sums b's gradient back to its shape
        y = (agrad.tanh(x * b) + b).sum()
        y.backward()
        return y
    recorder, (x, b), y = _recorded(fn, [[1.0, -2.0], [0.5, 3.0]], [0.25, -1.5])
    schedule = recorder.schedule([y._data, x.grad._data, b.grad._data])
    x2, b2 = np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([2.0, -0.5])
    (y_r, gx_r, gb_r), times = schedule.run(x2, b2)
    assert not times
    _, (xe, be), ye = _recorded(fn, x2, b2)
    for got, want in ((y_r, ye), (gx_r, xe.grad), (gb_r, be.grad)):
        assert got.shape == want.shape and np.array_equal(got, want.detach().numpy())


def test_in_place_ops_on_arrays_the_schedule_makes_are_replayed():
    def fn(x):
        c = x.detach().clone()
        c.mul_(3.0)
        return c
    recorder, (x,), c = _recorded(fn, [1.0, 2.0])
    assert recorder.reason is None
    (out,), _ = recorder.schedule([c._data]).run(np.array([5.0, -1.0]))
    assert out.tolist() == [15.0, -3.0]


def test_a_write_into_a_constant_is_not_replayable():
    z = agrad.zeros(2, dtype=agrad.float64)
    recorder, _, _ = _recorded(lambda x: z.add_(x.detach()), [1.0, 2.0])
    assert recorder.reason is not None and "in place" in recorder.reason


def test_a_kernel_that_writes_into_a_constant_it_reads_is_not_replayable():
    running_mean, running_var = agrad.zeros(2, dtype=agrad.float64), agrad.ones(2, dtype=agrad.float64)
    recorder, _, out = _recorded(
        lambda x: agrad.batch_norm(x, running_mean, running_var, training=True),
        [[1.0, 2.0], [3.0, 5.0]])
    with pytest.raises(ValueError, match="written in place"):
        recorder.schedule([out._data])


def test_an_autograd_function_and_a_library_kernel_are_not_replayable():
    class Double(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    recorder, _, _ = _recorded(lambda x: Double.apply(x), [1.0])
    assert "autograd.Function" in recorder.reason

    from agrad import library
    library.define("replaytest::twice(Tensor x) -> Tensor")
    library.impl("replaytest::twice", "CPU", lambda x: agrad.tensor(x.detach().numpy() * 2))
    recorder, _, _ = _recorded(lambda x: agrad.ops.replaytest.twice(x.detach()), [1.0])
    assert "agrad.library" in recorder.reason
