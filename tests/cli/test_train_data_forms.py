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
