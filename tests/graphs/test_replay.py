"""Graph files replayed (graphs/replay.py, engine/replay/recorder.py): the same results as
the engine, bit for bit, and the engine whenever a pass cannot be replayed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import agrad
from agrad import graphs
from agrad.replay import bytecode
from agrad.replay import Recorder
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

def _recorded(fn, *values, dtype=agrad.float64):
    """Record `fn(*leaves)` and return (recorder, leaves, result)."""
    leaves = [agrad.tensor(v, dtype=dtype, requires_grad=True) for v in values]
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


def test_a_cast_is_a_step_of_the_schedule_and_a_device_move_is_unreplayable():
    # `to` runs boxed (it may move between backends): a cast recorded as a constant would replay the value
    # cast when recorded, a training step's first batch for every later one
    def fn(x):
        y = (x.to(agrad.float32) * 2).to(agrad.float64).sum()
        y.backward()
        return y
    recorder, (x,), y = _recorded(fn, [1.0, 2.0])
    assert recorder.reason is None
    (y_r, gx_r), _ = recorder.schedule([y._data, x.grad._data]).run(np.array([3.0, 4.0]))
    assert y_r.tolist() == 14.0 and gx_r.tolist() == [2.0, 2.0]
    moved, _, _ = _recorded(lambda x: x.to("meta"), [1.0])
    assert "moved between devices" in moved.reason


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


# ---- the compiled schedule: inlined kernels, stolen copies, reused operands, shared leaves --------

def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides and \
        np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


# ---- kernels read as expressions ----------------------------------------------------------------

def _two_statements(xp, a):
    b = a * 2
    return b


def test_a_kernel_of_one_expression_is_read_as_a_tree():
    tree = bytecode._expression(lambda xp, a, b: xp.multiply(a, -b) * 2, {})
    assert tree == ("op", "*", ("call", ("attr", ("arg", 0), "multiply"), (("arg", 1), ("neg", ("arg", 2))), ()),
                    ("const", 2))
    tree = bytecode._expression(lambda xp, a: xp.maximum(a, 0).astype(a.dtype, copy=False), {})
    assert tree[0] == "call" and tree[3] == (("copy", ("const", False)),)


def test_a_conditional_is_decided_by_constant_arguments_only():
    add = lambda xp, a, b, alpha: xp.add(a, b if alpha == 1 else xp.multiply(b, alpha))  # noqa: E731
    assert bytecode._expression(add, {3: 1}) == ("call", ("attr", ("arg", 0), "add"), (("arg", 1), ("arg", 2)), ())
    assert bytecode._expression(add, {3: 2.5})[2][1][0] == "call"          # the multiply branch
    assert bytecode._expression(add, {}) is None                          # alpha is an array: called


def test_kernels_that_are_not_one_expression_are_called():
    y = 3.0
    for fn in (lambda xp, a: xp.sin(a) * y,          # a closure
               lambda xp, a, k=2: a * k,             # a default
               lambda xp, a: np.sin(a),              # a global
               lambda xp, *a: a[0],                  # *args
               _two_statements):
        assert bytecode._expression(fn, {}) is None


def test_constants_that_compare_equal_keep_their_own_names():
    inliner = bytecode._Inliner([])
    names = [inliner.name(v) for v in (0.0, -0.0, 1, 1.0, True)]
    assert len(set(names)) == 5 and inliner.name(-0.0) == names[1]


# ---- the compiled schedule ----------------------------------------------------------------------

def test_inlined_kernels_with_numbers_give_the_engines_results():
    def fn(x):
        return agrad.sin(x * 0.1) * -0.0 + x * 1e39 + (x - 3) * 2.5      # 1e39: no float32
    with np.errstate(over="ignore"):
        rec, _, out = _recorded(fn, [1.0, -2.0, 0.3], dtype=agrad.float32)
        schedule = rec.schedule([out._data])
        x = np.array([0.7, -1e-3, 4.0], np.float32)
        (got,), _ = schedule.run(x)
        want = fn(agrad.tensor(x)).detach()
    assert schedule.inlined >= 6
    assert _same(got, want.numpy())


def test_a_copy_of_a_dead_array_is_the_array():
    def fn(x):
        a = x * 2.0
        return a, agrad.transpose(a, 0, 1).clone()       # the copy keeps the transposed layout
    rec, _, (a, c) = _recorded(fn, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    stolen = rec.schedule([c._data])
    kept = rec.schedule([a._data, c._data])              # `a` is returned: the copy must be one
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]])
    (c1,), _ = stolen.run(x)
    (a2, c2), _ = kept.run(x)
    assert (stolen.stolen, kept.stolen) == (1, 0)
    want = fn(agrad.tensor(x))[1].detach().numpy()
    assert _same(c1, want) and _same(c2, want) and not np.shares_memory(a2, c2)


def test_a_result_is_written_into_an_operand_only_when_nothing_reads_it_after():
    def fn(x):
        s = agrad.sin(x)
        return s, s * x                      # s * x: s dies there unless s is returned
    rec, _, (s, p) = _recorded(fn, [1.0, 2.0])
    reusing = rec.schedule([p._data])
    keeping = rec.schedule([s._data, p._data])
    x = np.array([0.3, -2.0])
    before = x.copy()
    (p1,), _ = reusing.run(x)
    (s2, p2), _ = keeping.run(x)
    assert (reusing.reused, keeping.reused) == (1, 0)
    assert _same(p1, np.sin(before) * before) and _same(p2, p1) and _same(s2, np.sin(before))
    assert np.array_equal(x, before)         # an input is never written into


@pytest.mark.parametrize("dtype", [agrad.float32, agrad.float64], ids=lambda d: d.name)
def test_a_relu_mask_keeps_the_bits_of_nan_and_minus_zero(dtype):
    def fn(g, y):
        return agrad.ops.threshold_backward(g, y, 0)
    rec, _, out = _recorded(fn, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, -1.0, 1.0, -1.0, 0.0, 1.0], dtype=dtype)
    schedule = rec.schedule([out._data])
    g = np.array([np.nan, np.nan, -0.0, -0.0, -3.0, np.inf], dtype.np)
    y = np.array([1.0, -1.0, 2.0, -2.0, 0.0, np.nan], dtype.np)
    (got,), _ = schedule.run(g, y)
    want = fn(agrad.tensor(g), agrad.tensor(y)).numpy()
    bits = f"u{want.itemsize}"
    assert _same(got, want) and np.array_equal(got.view(bits), want.view(bits))
    # the kernel's mask word gives where()'s bits: +0.0 where dropped, NaN and -0.0 kept
    assert np.array_equal(got.view(bits), np.where(y <= 0, 0, g).astype(dtype.np).view(bits))


def test_an_input_that_an_output_views_is_private():
    rec, _, out = _recorded(lambda x: agrad.transpose(x, 0, 1), [[1.0, 2.0]])
    assert rec.schedule([out._data]).private_inputs == {0}
    rec, _, out = _recorded(lambda x: x * 2.0, [[1.0, 2.0]])
    assert rec.schedule([out._data]).private_inputs == frozenset()


# ---- leaves read from their files -------------------------------------------------------------

def test_a_file_leaf_is_read_in_place_and_a_tensor_only_when_looked_at(tmp_path, graph_file):
    np.save(tmp_path / "w.npy", np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    path = graph_file("""
        inputs:
          w: {file: w.npy, requires_grad: true}
          x: {value: [1.0, 2.0, 3.0]}
        nodes:
          y: sum(tanh(w) * x)
        backward: y
    """)
    graph = graphs.load(path)
    runs = [graph.run() for _ in range(4)]
    replay = graph._replay.replay
    assert replay.shared == {"w"}
    engine = graphs.load(path).run(replay=False)
    for run in runs:
        _assert_same(_arrays(run.grads), _arrays(engine.grads))
    w = runs[3].values["w"]
    assert w.grad is runs[3].grads["w"] and w.requires_grad and w.is_leaf
    assert not np.shares_memory(w.detach().numpy(), graph._checked.leaves["w"].array)
    with agrad.no_grad():
        w.add_(1.0)                          # the user's leaf is theirs: the next run starts from the file
    assert _same(graph.run().values["w"].detach().numpy(), engine.values["w"].detach().numpy())


def test_a_file_leaf_a_kernel_writes_into_is_made_afresh_for_each_run(tmp_path, graph_file):
    np.save(tmp_path / "mean.npy", np.zeros(2))
    path = graph_file("""
        inputs:
          x: {value: [[1.0, 2.0], [3.0, 5.0]], requires_grad: true}
          mean: {file: mean.npy}
          var: {value: [1.0, 1.0]}
        nodes:
          y: sum(batch_norm(x, mean, var, training=True) * x)
        backward: y
        outputs: [y]
    """)
    graph = graphs.load(path)
    runs = [graph.run(repeat=2) for _ in range(3)]
    assert graph._replay.replay is not None and "mean" not in graph._replay.replay.shared
    engine = graphs.load(path).run(repeat=2, replay=False)
    for run in runs:                         # each run: running stats updated twice from the file's zeros
        _assert_same(_arrays({"mean": run.values["mean"]}), _arrays({"mean": engine.values["mean"]}))
        _assert_same(_arrays(run.grads), _arrays(engine.grads))


def test_an_engine_pass_maps_a_file_leaf_privately_and_leaves_the_file_alone(tmp_path, graph_file):
    from agrad.graphs.inputs import _file_bytes
    np.save(tmp_path / "mean.npy", np.zeros(2))
    before = (tmp_path / "mean.npy").read_bytes()
    path = graph_file("""
        inputs:
          x: {value: [[1.0, 2.0], [3.0, 5.0]], requires_grad: true}
          mean: {file: mean.npy}
          var: {value: [1.0, 1.0]}
        nodes:
          y: sum(batch_norm(x, mean, var, training=True) * x)
        backward: y
    """)
    graph = graphs.load(path)
    plan = graph._checked.leaves["mean"].array
    runs = [graph.run(replay=False) for _ in range(2)]
    for run in runs:        # no copy of the file's data: the same file region, mapped privately and written
        mean = run.values["mean"].numpy()
        assert _file_bytes(mean) == _file_bytes(plan) and not np.shares_memory(mean, plan)
        np.testing.assert_allclose(mean, [0.2, 0.35])       # momentum 0.1 of the batch means, from zeros
    assert (tmp_path / "mean.npy").read_bytes() == before and np.array_equal(plan, [0.0, 0.0])
