"""Graph.run(inputs=...) and Graph.train(...): new leaf values, shape re-checks, the loop,
checkpoints that resume bit for bit, NaN detection."""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import agrad.graphs as G
from agrad.graphs.training import Batches, TrainingDiverged, Trainer, schedule_factor
from small_classifier import SMALL_CLASSIFIER

MLP = SMALL_CLASSIFIER


def _data(n=96):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    Y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0)
    return X, Y


def test_run_with_new_inputs_matches_the_ops(graph_file):
    g = G.load(graph_file(MLP))
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    run = g.run(inputs={"x": x})
    W = run.values["W"].detach().numpy()
    want = agrad.cross_entropy(agrad.tensor(x @ W), run.values["y"])
    assert abs(run.outputs["loss"].item() - want.item()) < 1e-6
    assert run.values["x"].dtype == agrad.float32            # float64 data in the input's dtype
    # a Tensor works too, and the graph is unchanged for the next plain run
    again = g.run(inputs={"x": agrad.tensor(x)})
    assert again.outputs["loss"].item() == run.outputs["loss"].item()
    assert g.run().outputs["loss"].item() != run.outputs["loss"].item()


def test_run_with_new_shapes_is_rechecked(graph_file):
    g = G.load(graph_file(MLP))
    run = g.run(inputs={"x": np.ones((5, 4)), "y": np.zeros(5)})
    assert run.grads["W"].shape == (4, 3) and run.values["logits"].shape == (5, 3)
    with pytest.raises(G.GraphFileError) as info:
        g.run(inputs={"x": np.ones((5, 4))})
    (d,) = info.value.diagnostics
    assert d.code == "AG025" and (d.location.line, d.location.col) == (9, 9) and "x: [5, 4]" in d.message
    with pytest.raises(G.GraphFileError) as info:
        g.run(inputs={"W1": np.ones((4, 3))})
    (d,) = info.value.diagnostics
    assert d.code == "AG064" and d.hint == "'W'"


def _train(g, steps, **extra):
    X, Y = _data()
    options = dict(loss="loss", data={"x": X, "y": Y}, batch_size=8, shuffle=True,
                   optimizer={"type": "adam", "lr": 0.05}, schedule={"type": "cosine", "warmup": 5},
                   clip_grad_norm=1.0, metrics=["loss", ("accuracy", "logits", "y")],
                   eval_data={"x": X, "y": Y})
    options.update(extra)
    return g.train(steps=steps, **options)


def test_train_lowers_the_loss_and_reports(graph_file):
    g = G.load(graph_file(MLP))
    run = _train(g, 120, eval_every=40)
    assert len(run.losses) == 120 and run.steps == 120
    assert np.mean(run.losses[-10:]) < 0.6 * np.mean(run.losses[:10])
    assert [e["step"] for e in run.evals] == [40, 80, 120] and run.evals[-1]["accuracy"] > 0.7
    assert run.lrs[0] == pytest.approx(0.05 / 5) and run.lrs[4] == pytest.approx(0.05)
    assert run.params["W"].requires_grad and run.params["W"].is_leaf


def test_checkpoint_resumes_bit_for_bit(graph_file):
    g = G.load(graph_file(MLP))
    straight = _train(g, 30)
    half = _train(g, 30, stop_after=13)
    assert half.steps == 13 and half.losses == straight.losses[:13]
    state = half.trainer.state()
    agrad.manual_seed(99)                           # the checkpoint restores the generator
    resumed = _train(g, 30, resume=state)
    assert resumed.losses == straight.losses and resumed.lrs == straight.lrs
    for name in ("W", "b"):
        np.testing.assert_array_equal(resumed.params[name].detach().numpy(),
                                      straight.params[name].detach().numpy())


def test_checkpoint_of_another_graph_is_refused(graph_file):
    g = G.load(graph_file(MLP))
    state = _train(g, 2, params=["W"]).trainer.state()
    with pytest.raises(ValueError, match=r"key 'meta.params': holds parameters \['W'\], the graph trains \['W', 'b'\]"):
        _train(g, 4, resume=state)


def test_nan_loss_stops_naming_the_step(graph_file):
    g = G.load(graph_file(MLP.replace("loss: cross_entropy(logits, y)", "loss: sum(log(logits - 1.5))")))
    with pytest.raises(TrainingDiverged) as info:
        g.train(loss="loss", steps=5)
    assert info.value.step == 1 and "at step 1" in str(info.value) and info.value.location.line == 9


def test_anomaly_names_the_node_that_made_the_nan(graph_file):
    g = G.load(graph_file(MLP.replace("loss: cross_entropy(logits, y)",
                                      "h: log(logits - 1.5)\n  loss: sum(h * 2.0)")))
    with pytest.raises(TrainingDiverged) as plain:
        g.train(loss="loss", steps=5)
    assert plain.value.anomaly is None and plain.value.location.line == 10
    with pytest.raises(TrainingDiverged) as info:
        g.train(loss="loss", steps=5, anomaly=True)
    report = info.value.anomaly
    assert info.value.step == 1 and (report.phase, report.node) == ("forward", "h")
    assert report.location.line == 9 and report.message == "'h' produced nan values"


def test_anomaly_stops_at_a_nan_gradient_with_a_finite_loss(graph_file):
    g = G.load(graph_file("""\
        inputs:
          x: {shape: [8, 4], init: normal}
          W: {shape: [4, 3], init: zeros, requires_grad: true}
        nodes:
          h: x @ W
          r: sqrt(h * h)
          loss: sum(r)
        backward: loss
        """))
    with pytest.raises(TrainingDiverged) as plain:           # the inf gradient poisons W: NaN loss next step
        g.train(loss="loss", steps=5, optimizer={"type": "sgd", "lr": 0.1})
    assert plain.value.step == 2 and plain.value.anomaly is None
    with pytest.raises(TrainingDiverged) as info:
        g.train(loss="loss", steps=5, optimizer={"type": "sgd", "lr": 0.1}, anomaly=True)
    report = info.value.anomaly
    assert info.value.step == 1 and info.value.value == 0.0 and "a gradient is NaN/Inf at step 1" in str(info.value)
    assert (report.phase, report.node, report.location.line) == ("backward", "r", 6)
    assert "SqrtBackward0" in report.message


def test_batches_are_a_function_of_the_step():
    arrays = {"x": np.arange(10)}
    a, b = Batches(arrays, 3, True, seed=7), Batches(arrays, 3, True, seed=7)
    seq = [a.batch(k)["x"].tolist() for k in range(7)]
    assert b.batch(5)["x"].tolist() == seq[5]                      # no history needed
    assert sorted(sum(seq[:3], [])) == sorted(set(sum(seq[:3], [])))  # an epoch has no repeats
    assert len(seq[0]) == 3 and a.per_epoch == 3                     # the partial batch is dropped
    assert Batches(arrays, 3, False, seed=7).batch(1)["x"].tolist() == [3, 4, 5]


def test_schedule_factors_follow_the_closed_forms():
    cos = schedule_factor({"type": "cosine", "t_max": 10, "warmup": 4}, 14)
    assert [cos(t) for t in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert cos(9) == pytest.approx(0.5) and cos(14) == pytest.approx(0.0)
    step = schedule_factor({"type": "step", "step_size": 2, "gamma": 0.5}, 10)
    assert [step(t) for t in range(5)] == [1, 1, 0.5, 0.5, 0.25]
    assert schedule_factor({"type": "multistep", "milestones": [1, 3]}, 5)(3) == pytest.approx(0.01)
    assert schedule_factor({"type": "linear", "start_factor": 0.5, "total_iters": 2}, 5)(1) == 0.75


def test_trainer_reuses_leaves_and_optimizer(graph_file):
    g = G.load(graph_file(MLP))
    trainer = Trainer(g, loss="loss", optimizer={"type": "sgd", "lr": 0.1, "momentum": 0.9})
    W = trainer.leaves["W"]
    trainer.step()
    trainer.step()
    assert trainer.leaves["W"] is W and trainer.optimizer.state[W]["momentum_buffer"].shape == (4, 3)
    assert trainer.runner.forward_profile == []       # nothing kept per step (no profile records)


def test_train_takes_its_defaults_from_the_train_section(graph_file, tmp_path):
    X, Y = _data()
    np.savez(tmp_path / "d.npz", x=X, y=Y)
    g = G.load(graph_file(MLP + """\
train:
  loss: loss
  optimizer: {type: sgd, lr: 0.1, momentum: 0.9}
  steps: 24
  data: {source: {file: d.npz}, batch_size: 8}
"""))
    run = g.train()
    assert run.steps == 24 and run.trainer.optimizer.param_groups[0]["momentum"] == 0.9
    assert g.train(steps=5, optimizer={"type": "adagrad", "lr": 0.1}).steps == 5
    with pytest.raises(TypeError, match="needs loss= and steps="):
        G.load(graph_file(MLP)).train()


def test_the_train_section_does_not_import_the_training_loop():
    """Imports go one way: training -> train_section -> optimizers, shape_check (no cycle)."""
    import ast
    from pathlib import Path

    import agrad.graphs

    folder = Path(agrad.graphs.__file__).parent
    for name in ("train_section", "optimizers", "shape_check", "checkpoints"):
        tree = ast.parse((folder / f"{name}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}
        assert "training" not in imported, name
