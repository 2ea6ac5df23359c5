"""Training data without writing a program (issue 19 §12): `--input x=FILE.npz:KEY` reads what
`--save` wrote, an error in `train.data` is reported once (no "train.epochs needs data" after it),
and `--resume` past `--steps` says so."""
from __future__ import annotations

import json

import numpy as np
from small_classifier import SMALL_CLASSIFIER

from agrad.cli.main import cli

TRAIN = SMALL_CLASSIFIER + """\
train:
  loss: loss
  optimizer: {type: sgd, lr: 0.1}
  STEPS
"""


def test_save_keys_round_trip_into_input(runner, write, tmp_path):
    seed = write("s.yaml", "inputs:\n  a: {value: 1.0, requires_grad: true}\n  b: {value: 2.0, requires_grad: true}\n"
                           "nodes:\n  c: a * (a + b)\nbackward: c\n")
    saved = tmp_path / "run.npz"
    assert runner.invoke(cli, ["run", seed, "--save", str(saved)]).exit_code == 0
    assert set(np.load(saved).files) == {"outputs/c", "grads/a", "grads/b"}
    again = runner.invoke(cli, ["run", seed, "--input", f"a={saved}:grads/a", "--format", "json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["outputs"]["c"]["value"] == 4.0 * (4.0 + 2.0)      # a = dc/da = 4
    missing = runner.invoke(cli, ["run", seed, "--input", f"a={saved}:grads/z"])
    assert missing.exit_code == 2 and "has no array 'grads/z'" in missing.stderr and "grads/a" in missing.stderr


def test_an_error_in_data_is_not_followed_by_epochs_needs_data(runner, write):
    path = write("t.yaml", TRAIN.replace("STEPS", "epochs: 2\n  data: {source: {file: missing.npz}, batch_size: 4}"))
    result = runner.invoke(cli, ["validate", path])
    assert result.exit_code == 2 and "AG065" in result.stderr
    assert "needs `data`" not in result.stderr


def test_resume_with_steps_already_passed_warns(runner, write, tmp_path):
    path = write("t.yaml", TRAIN.replace("STEPS", "steps: 20"))
    ckpt = tmp_path / "c.npz"
    assert runner.invoke(cli, ["train", path, "--steps", "10", "--save", str(ckpt)]).exit_code == 0
    result = runner.invoke(cli, ["train", path, "--resume", str(ckpt), "--steps", "5"])
    assert "warning:" in result.stderr and "is at step 10, already at or past --steps 5" in result.stderr
    fine = runner.invoke(cli, ["train", path, "--resume", str(ckpt)])
    assert "already at or past" not in fine.stderr


def _classifier_data(folder):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = np.arange(16) % 3
    np.savez(folder / "d.npz", x=x, y=y)
    np.save(folder / "x.npy", x)
    (folder / "y.csv").write_text("label\n" + "\n".join(str(v) for v in y) + "\n")
    return x, y


def _losses(runner, path) -> list:
    result = runner.invoke(cli, ["train", path, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["losses"]


def test_train_and_eval_data_take_the_same_forms_from_npz_npy_and_csv(runner, write, tmp_path):
    _classifier_data(tmp_path)
    steps = "steps: 6\n  eval: {every: 3, data: DATA}\n  data: {DATA_INLINE batch_size: 8}"

    def graph(data: str, inline: str) -> str:
        return write("t.yaml", TRAIN.replace("STEPS", steps.replace("DATA_INLINE", inline).replace("DATA", data)))

    npz = _losses(runner, graph("{source: {file: d.npz}}", "file: d.npz,"))            # the old form in eval
    per_input = _losses(runner, graph("{inputs: {x: x.npy, y: y.csv}}", "inputs: {x: x.npy, y: 'd.npz:y'},"))
    wrapped = _losses(runner, graph("{file: d.npz}", "source: {file: d.npz},"))
    assert npz == per_input == wrapped and len(npz) == 6
    one_array = runner.invoke(cli, ["validate", graph("{file: x.npy}", "file: d.npz,")])
    assert one_array.exit_code == 2 and "name its input: `inputs: {NAME: x.npy}`" in one_array.stderr
