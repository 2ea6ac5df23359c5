"""`agrad train`: the summary, JSON, checkpoints that resume bit for bit, NaN, the train
section's diagnostics, plots."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from agrad.cli.main import cli
from small_classifier import SMALL_CLASSIFIER

GRAPH = SMALL_CLASSIFIER
TRAIN = """\
train:
  loss: loss
  optimizer: {type: adam, lr: 0.05}
  schedule: {type: cosine, warmup: 5}
  steps: 90
  data: {source: {file: d.npz}, batch_size: 8, shuffle: true}
  clip_grad_norm: 1.0
  eval: {every: 30, data: {file: t.npz}, metrics: [loss, "accuracy(logits, y)"]}
expect:
  train: {final_loss: {max: MAXLOSS}, accuracy: {min: 0.6}}
"""


@pytest.fixture
def trainable(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(96, 4)).astype(np.float32)
    Y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0)
    np.savez(tmp_path / "d.npz", x=X, y=Y)
    np.savez(tmp_path / "t.npz", x=X[:40], y=Y[:40])

    def write(train: str = TRAIN, max_loss: float = 0.9, graph: str = GRAPH) -> str:
        path = tmp_path / "g.yaml"
        path.write_text(graph + train.replace("MAXLOSS", str(max_loss)))
        return str(path)
    return write


def _json(runner, *args):
    result = runner.invoke(cli, ["train", *args, "--format", "json"])
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def test_train_table_and_curve(runner, trainable):
    result = runner.invoke(cli, ["train", trainable()])
    assert result.exit_code == 0, result.output
    assert re.search(r"eval accuracy\s+│ 0\.\d{4}", result.stdout)
    assert "expect" in result.stdout and "passed" in result.stdout
    curve = next(line for line in result.stdout.splitlines() if line.startswith("loss  "))
    assert len(set(curve.split()[1]) - set("▁▂▃▄▅▆▇█")) == 0 and "->" in curve


def test_train_json_has_the_loss_series(runner, trainable):
    result, doc = _json(runner, trainable())
    assert result.exit_code == 0
    assert doc["schema_version"] == 1 and doc["steps"] == 90 and len(doc["losses"]) == 90
    assert [e["step"] for e in doc["evals"]] == [30, 60, 90] and doc["expect"]["passed"] is True
    assert np.mean(doc["losses"][-10:]) < np.mean(doc["losses"][:10])
    assert doc["lrs"][0] == pytest.approx(0.01)


def test_expect_train_failure_exits_1(runner, trainable):
    result, doc = _json(runner, trainable(max_loss=0.01))
    assert result.exit_code == 1
    assert doc["expect"]["passed"] is False
    assert "expect.train.final_loss" in doc["expect"]["failures"][0] and "above the maximum 0.01" in result.stderr


def test_resume_continues_bit_for_bit(runner, trainable, tmp_path):
    graph = trainable()
    ckpt = str(tmp_path / "ck.npz")
    first = runner.invoke(cli, ["train", graph, "--steps", "40", "--save", ckpt])
    assert first.exit_code == 0 and Path(ckpt).exists()
    assert not list(tmp_path.glob(".ck.npz.*"))              # written atomically: no temporary left
    _, resumed = _json(runner, graph, "--resume", ckpt)
    _, straight = _json(runner, graph)
    assert resumed["losses"] == straight["losses"] and resumed["evals"] == straight["evals"]
    final = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    runner.invoke(cli, ["train", graph, "--resume", ckpt, "--save", final[0]])
    runner.invoke(cli, ["train", graph, "--save", final[1]])
    with np.load(final[0]) as a, np.load(final[1]) as b:
        assert set(a.files) == set(b.files) and "optim/0/exp_avg" in a.files
        for key in a.files:
            if key != "meta":
                np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("optimizer", [
    "{type: adamax, lr: 0.02}", "{type: nadam, lr: 0.02, decoupled_weight_decay: true, weight_decay: 0.01}",
    "{type: radam, lr: 0.05}", "{type: adadelta, lr: 1.0}", "{type: rprop, lr: 0.01, etas: [0.4, 1.3]}",
    "{type: asgd, lr: 0.05, t0: 10}", "{type: adafactor, lr: 0.05, eps: [null, 0.001]}"])
def test_every_optimizer_resumes_bit_for_bit(runner, trainable, tmp_path, optimizer):
    graph = trainable(TRAIN.replace("{type: adam, lr: 0.05}", optimizer).replace("steps: 90", "steps: 30"))
    ckpt = str(tmp_path / "ck.npz")
    first = runner.invoke(cli, ["train", graph, "--steps", "17", "--save", ckpt])
    assert first.exit_code == 0, first.output
    _, resumed = _json(runner, graph, "--resume", ckpt)
    _, straight = _json(runner, graph)
    assert resumed["losses"] == straight["losses"] and resumed["evals"] == straight["evals"]
    assert straight["losses"][-1] != straight["losses"][0]          # the parameters moved


def test_muon_trains_the_matrices_and_resumes_bit_for_bit(runner, trainable, tmp_path):
    graph = trainable(TRAIN.replace("  optimizer: {type: adam, lr: 0.05}",
                                    "  params: [W]\n  optimizer: {type: muon, lr: 0.05, ns_coefficients: [3.4445, "
                                    "-4.775, 2.0315], adjust_lr_fn: original}").replace("steps: 90", "steps: 30"),
                      max_loss=5.0)
    ckpt = str(tmp_path / "ck.npz")
    first = runner.invoke(cli, ["train", graph, "--steps", "17", "--save", ckpt])
    assert first.exit_code == 0, first.output
    _, resumed = _json(runner, graph, "--resume", ckpt)
    _, straight = _json(runner, graph)
    assert resumed["losses"] == straight["losses"]
    assert straight["losses"][-1] < straight["losses"][0]


@pytest.mark.parametrize("optimizer,message", [
    ("{type: muon, lr: 0.05}", "g.yaml:13:21: error[AG061]: optimizer muon trains 2-D parameters only, and 'b' has "
                               "shape [3]: Muon orthogonalizes"),
    ("{type: muon, ns_coefficients: [1, 2]}", "error[AG061]: optimizer ns_coefficients must be a list of three "
                                              "finite numbers, not [1, 2]"),
    ("{type: muon, adjust_lr_fn: 3}", "error[AG061]: optimizer adjust_lr_fn must be a name or null, not 3"),
    ("{type: muon, adjust_lr_fn: spectral}", "error[AG061]: optimizer muon: Adjust learning rate function "
                                             "spectral is not supported"),
    ("{type: lbfgs, lr: 1}", "g.yaml:13:21: error[AG061]: optimizer lbfgs cannot be used in a train section: "
                             "LBFGS re-evaluates the loss"),
    ("{type: rprop, etas: [0.5]}", "g.yaml:13:34: error[AG061]: optimizer etas must be a list of two finite numbers"),
    ("{type: adafactor, eps: [0.1, null]}", "error[AG061]: optimizer eps must be a list of two finite numbers "
                                            "(the first may be null), not [0.1, None]"),
    ("{type: rprop, etas: [0.5, 0.9]}", "error[AG061]: optimizer rprop: Invalid eta values: 0.5, 0.9"),
    ("{type: nadam, momentum_decay: -1}", "error[AG061]: optimizer nadam: Invalid momentum_decay value: -1"),
])
def test_new_optimizers_are_checked_where_the_file_says_them(runner, trainable, optimizer, message):
    graph = trainable(TRAIN.replace("{type: adam, lr: 0.05}", optimizer))
    result = runner.invoke(cli, ["validate", graph])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


@pytest.mark.parametrize("schedule,message", [
    ("{type: cyclic, mode: triangle}", "g.yaml:14:34: error[AG061]: schedule mode must be one of triangular, "
                                       "triangular2, exp_range, not 'triangle'"),
    ("{type: cosine_restarts, t_mult: 2}", "g.yaml:14:3: error[AG061]: schedule cosine_restarts needs `t_0`"),
    ("{type: polynomial, power: -1}", "g.yaml:14:39: error[AG061]: schedule power must be a finite number >= 0"),
    ("{type: constant, factor: 2}", "g.yaml:14:38: error[AG061]: schedule factor must be a number in [0, 1]"),
    ("{type: cyclic, base_factor: 0.1, step_size_up: 0}", "error[AG061]: schedule step_size_up must be a positive"),
])
def test_new_schedules_are_checked_where_the_file_says_them(runner, trainable, schedule, message):
    graph = trainable(TRAIN.replace("{type: cosine, warmup: 5}", schedule))
    result = runner.invoke(cli, ["validate", graph])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_bad_checkpoints_exit_2(runner, trainable, tmp_path):
    graph = trainable()
    (tmp_path / "not.npz").write_text("hello")
    result = runner.invoke(cli, ["train", graph, "--resume", str(tmp_path / "not.npz")])
    assert result.exit_code == 2 and "error[AG069]: not a checkpoint" in result.stderr
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    result = runner.invoke(cli, ["train", graph, "--resume", str(tmp_path / "other.npz")])
    assert result.exit_code == 2 and "error[AG069]" in result.stderr and "Traceback" not in result.output


def test_nan_loss_stops_with_exit_1_naming_the_step(runner, trainable):
    graph = trainable(graph=GRAPH.replace("cross_entropy(logits, y)", "cross_entropy(logits * 1e38 * 1e38, y)"))
    result, doc = _json(runner, graph)
    assert result.exit_code == 1
    assert re.search(r"g\.yaml:9:9: error\[AG068\]: loss is nan at step 1; training stopped", result.stderr)
    assert doc["diverged"] == {"step": 1, "loss": "nan"}


def test_anomaly_names_the_node_and_its_line(runner, trainable):
    graph = trainable(graph=GRAPH.replace("cross_entropy(logits, y)", "cross_entropy(h, y)\n").replace(
        "  logits: x @ W + b\n", "  logits: x @ W + b\n  h: log(logits - 1.5)\n"))
    result, doc = _json(runner, graph)
    assert result.exit_code == 1 and "(--anomaly names the node" in result.stderr and "anomaly in" not in result.stderr
    result, doc = _json(runner, graph, "--anomaly")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert re.search(r"g\.yaml:10:9: error\[AG068\]: loss is nan at step 1; training stopped\n", result.stderr)
    assert re.search(r"g\.yaml:9:6: anomaly in forward of 'h': 'h' produced nan values", result.stderr)
    assert doc["diverged"]["step"] == 1 and doc["diverged"]["anomaly"] == {
        "phase": "forward", "node": "h", "message": "'h' produced nan values", "file": graph, "line": 9, "col": 6}


BAD = """\
train:
  loss: logits
  params: [W, x, Wb]
  optimizer: {type: adamm, lr: 0.1}
  schedule: {type: cosine, t_maxx: 3}
  steps: 0
  data: {source: {file: missing.npz}, batch_size: 8, shufle: true}
  eval: {every: 50, metrics: [loss, "accuracy(logit, y)", f1]}
expect:
  train: {final_loss: {maxx: 0.9}}
"""


def test_every_problem_of_the_section_before_any_step(runner, trainable):
    result = runner.invoke(cli, ["train", trainable(BAD)])
    assert result.exit_code == 2
    found = re.findall(r"g\.yaml:(\d+):(\d+): error\[(AG06\d)\]", result.stderr)
    assert [(int(a), int(b), c) for a, b, c in found] == [
        (12, 9, "AG062"), (13, 15, "AG063"), (13, 18, "AG063"), (14, 21, "AG061"), (15, 28, "AG061"),
        (16, 10, "AG060"), (17, 25, "AG065"), (17, 54, "AG060"), (18, 37, "AG066"), (18, 59, "AG066"),
        (20, 23, "AG067")]
    assert "did you mean 'adam'" in result.stderr and "did you mean 'logits'" in result.stderr
    # validate finds the same, without running
    assert runner.invoke(cli, ["validate", trainable(BAD)]).exit_code == 2


def test_optimizer_hyper_parameters_and_batch_shapes_are_checked(runner, trainable, tmp_path):
    bad_lr = TRAIN.replace("{type: adam, lr: 0.05}", "{type: sgd, lr: -1, nesterov: true}")
    result = runner.invoke(cli, ["train", trainable(bad_lr)])
    assert result.exit_code == 2 and "error[AG061]: optimizer sgd: Invalid learning rate: -1" in result.stderr
    np.savez(tmp_path / "d.npz", x=np.zeros((16, 5), np.float32), y=np.zeros(16, np.int64))
    result = runner.invoke(cli, ["train", trainable()])
    assert result.exit_code == 2
    assert re.search(r"g\.yaml:16:25: error\[AG065\]: a batch does not fit the graph: .*x: \[8, 5\]", result.stderr)
    np.savez(tmp_path / "d.npz", x=np.zeros((16, 4), np.float32), z=np.zeros(16))
    result = runner.invoke(cli, ["train", trainable()])
    assert "error[AG064]: d.npz: key 'z' names no input of the graph" in result.stderr


def test_accuracy_metric_shapes_are_checked_before_any_step(runner, trainable):
    for metric, shapes in (("accuracy(logits, W)", "[8, 3] and 'W' [4, 3]"), ("accuracy(loss, y)", "[] and 'y' [8]")):
        result = runner.invoke(cli, ["train", trainable(TRAIN.replace("accuracy(logits, y)", metric))])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f"error[AG066]: metric {metric}: " in result.stderr and shapes in result.stderr


def test_graph_without_train_section(runner, trainable):
    result = runner.invoke(cli, ["train", trainable(train="")])
    assert result.exit_code == 2 and "error[AG060]" in result.stderr and "no `train:` section" in result.stderr


def test_plot_svg_and_png(runner, trainable, tmp_path, monkeypatch):
    svg = tmp_path / "curve.svg"
    result = runner.invoke(cli, ["train", trainable(), "--steps", "20", "--plot", str(svg)])
    assert result.exit_code == 0 and "at step 20 of 90 (continue with --resume)" in result.stdout
    text = svg.read_text()
    assert "<svg" in text and "train loss" in text          # drawn by matplotlib (tests/cli/test_train_plots.py)
    result = runner.invoke(cli, ["train", trainable(), "--plot", str(tmp_path / "curve.gif")])
    assert result.exit_code == 2 and "expected a .svg or .png" in result.stderr
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # the extra not installed: exit 3, naming it
    result = runner.invoke(cli, ["train", trainable(), "--plot", str(tmp_path / "curve.png")])
    assert result.exit_code == 3 and "pip install 'agrad[plot]'" in result.stderr
