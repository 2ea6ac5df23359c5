"""`agrad train` under careless and hostile input: special files, zip bombs, every `train:`
value out of its type or range, unwritable outputs -- each a located error with the
documented status before the first step, never a traceback or a hang."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from agrad.cli.main import cli
from agrad import _npy_headers as npy_headers
from train_hardening_helpers import TRAIN, bounded, write_trainable


def _train(runner, *args, seconds: float = 30):
    with bounded(seconds):
        result = runner.invoke(cli, ["train", *map(str, args)])
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.npz"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("where", ["data", "eval"])
@pytest.mark.parametrize("special", ["fifo", "/dev/stdin", "/dev/zero"])
def test_a_special_file_as_data_is_refused_without_opening(runner, tmp_path, fifo, where, special):
    name = str(fifo) if special == "fifo" else special
    old = "{file: d.npz}" if where == "data" else "{file: t.npz}"
    graph = write_trainable(tmp_path, TRAIN.replace(old, "{file: %s}" % name))
    result = _train(runner, graph, seconds=10)
    assert result.exit_code == 2
    assert re.search(rf"g\.yaml:\d+:\d+: error\[AG065\]: train\.{'data' if where == 'data' else 'eval.data'}"
                     rf"\.source file {re.escape(name)} is not a regular file \(a pipe or a device\?\)", result.stderr)


@pytest.mark.parametrize("special", ["fifo", "/dev/stdin", "/dev/zero", "/dev/null"])
def test_a_special_file_as_resume_is_refused_without_opening(runner, tmp_path, fifo, special):
    graph = write_trainable(tmp_path)
    name = str(fifo) if special == "fifo" else special
    result = _train(runner, graph, "--resume", name, seconds=10)
    assert result.exit_code == 2
    assert f"{name}: error[AG069]: checkpoint {name} is not a regular file (a pipe or a device?)" in result.stderr


def test_a_zip_bomb_as_training_data_is_refused_before_inflating(runner, tmp_path, monkeypatch):
    graph = write_trainable(tmp_path)
    np.savez_compressed(tmp_path / "d.npz", x=np.zeros((2 ** 16, 4), np.float32), y=np.zeros(2 ** 16, np.int64))
    monkeypatch.setattr(npy_headers, "BOMB_BYTES", 2 ** 20)            # the 1 GiB rule, scaled down
    load = np.load
    monkeypatch.setattr(np, "load", lambda f, **k: pytest.fail("inflated") if os.path.basename(f) == "d.npz"
                        else load(f, **k))
    result = _train(runner, graph)
    assert result.exit_code == 2
    assert re.search(r"g\.yaml:16:25: error\[AG065\]: d\.npz: (array '[xy]'|the archive) would inflate to .* "
                     r"\(a zip bomb\?\)", result.stderr), result.stderr


def test_an_npz_member_that_is_not_an_array_is_refused(runner, tmp_path):
    import zipfile

    graph = write_trainable(tmp_path)
    with zipfile.ZipFile(tmp_path / "d.npz", "a") as archive:
        archive.writestr("notes.txt", "hello")
    result = _train(runner, graph)
    assert result.exit_code == 2 and "error[AG065]: d.npz: member 'notes.txt' is not an .npy array" in result.stderr


SECTION = [
    # (what is replaced, by what, the error)
    ("lr: 0.05", "lr: 1" + "0" * 400, r"13:31: error\[AG061\]: optimizer lr must be a finite number"),
    ("lr: 0.05", "lr: .nan", r"13:31: error\[AG061\]: optimizer lr must be a finite number, not nan"),
    ("lr: 0.05", "lr: true", r"13:31: error\[AG061\]: optimizer lr must be a finite number, not True"),
    ("lr: 0.05", "lr: 0.05, amsgrad: 1", r"13:46: error\[AG061\]: optimizer amsgrad must be true or false, not 1"),
    ("lr: 0.05", "lr: 0.05, betas: [.nan, 0.9]",
     r"13:44: error\[AG061\]: optimizer betas must be a list of two finite"),
    ("warmup: 2", "warmup: 2, eta_min: .nan", r"14:48: error\[AG061\]: schedule eta_min must be a number in \[0, 1\]"),
    ("loss: loss\n", "loss: loss\n  params: []\n", r"13:11: error\[AG063\]: train.params is empty"),
    ("loss: loss\n", "loss: loss\n  clip_grad_norm: .inf\n",
     r"13:19: error\[AG060\]: `clip_grad_norm` must be a positive finite number, not inf"),
    ('y)"]}\n', 'y)"]}\nexpect:\n  train: {final_loss: {max: .nan}}\n',
     r"19:29: error\[AG067\]: expect.train.final_loss.max must be a finite number, not nan"),
    ("batch_size: 8", "batch_size: 100", r"16:45: error\[AG065\]: train.data.batch_size 100 is larger than the data"),
]


@pytest.mark.parametrize("old, new, error", SECTION, ids=[s[1][:30] for s in SECTION])
def test_every_train_value_is_checked_before_the_first_step(runner, tmp_path, old, new, error):
    graph = write_trainable(tmp_path, TRAIN.replace(old, new, 1))
    keep = tmp_path / "keep.npz"
    keep.write_bytes(b"old")
    result = _train(runner, graph, "--save", keep)
    assert result.exit_code == 2 and re.search(r"g\.yaml:" + error, result.stderr), result.stderr
    assert keep.read_bytes() == b"old"


@pytest.mark.parametrize("arrays, error", [
    ({"x": np.zeros((0, 4), np.float32), "y": np.zeros(0, np.int64)}, "d.npz: the arrays have no rows"),
    ({"x": np.array([["a"] * 4] * 8), "y": np.zeros(8, np.int64)},
     "d.npz: array 'x' holds <U1 values; training data must be numbers"),
    ({"x": np.zeros((8, 4), np.complex64), "y": np.zeros(8, np.int64)},
     "d.npz: array 'x' holds complex64 values; training data must be numbers"),
    ({"x": np.zeros((8, 4), np.float32), "y": np.zeros(7, np.int64)},
     r"d.npz: the arrays must have one common length along dim 0 \(got x: 8, y: 7\)"),
])
def test_bad_training_data_is_refused_at_its_file_entry(runner, tmp_path, arrays, error):
    graph = write_trainable(tmp_path)
    np.savez(tmp_path / "d.npz", **arrays)
    result = _train(runner, graph)
    assert result.exit_code == 2 and re.search(r"g\.yaml:16:25: error\[AG065\]: " + error, result.stderr), \
        result.stderr


def test_a_negative_seed_is_bad_usage(runner, tmp_path):
    result = _train(runner, write_trainable(tmp_path), "--seed", "-1")
    assert result.exit_code == 2 and "-1 is not in the range x>=0" in result.stderr


@pytest.mark.parametrize("option", ["--save", "--plot"])
def test_an_output_that_cannot_be_created_is_refused_before_training(runner, tmp_path, option):
    graph = write_trainable(tmp_path)
    target = "/proc/agrad-test.svg" if option == "--plot" else "/proc/agrad-test.npz"
    result = _train(runner, graph, option, target, "--format", "json")
    assert result.exit_code == 2 and f"{option} {target}: cannot write: cannot create a file in /proc" in result.stderr
    assert result.stdout == ""                                         # no training ran


def test_anomaly_names_the_yaml_node_not_an_intermediate(runner, tmp_path):
    graph = write_trainable(tmp_path, TRAIN, graph=_NESTED)
    result = _train(runner, graph, "--anomaly")
    assert result.exit_code == 1
    assert re.search(r"g\.yaml:9:23: anomaly in forward of 'loss': 'loss' produced nan values in its log\(\.\.\.\)",
                     result.stderr), result.stderr
    assert "loss." not in result.stderr


_NESTED = """\
seed: 3
inputs:
  x: {shape: [8, 4], init: normal}
  y: {value: [0, 1, 2, 0, 1, 2, 0, 1], dtype: int64}
  W: {shape: [4, 3], init: normal, std: 0.5, requires_grad: true}
  b: {shape: [3], init: zeros, requires_grad: true}
nodes:
  logits: x @ W + b
  loss: cross_entropy(log(logits - 100.0) * 2.0, y)
backward: loss
"""
