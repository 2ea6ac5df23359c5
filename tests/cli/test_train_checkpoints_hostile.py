"""`agrad train --resume` reads checkpoints as untrusted input: each hostile, truncated or
mismatched one is AG069 naming the key and what was expected, exit 2, before any step,
and the `--save` target is left as it was. A `--save` checkpoint is a plain .npz."""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

from agrad.cli.main import cli
from agrad import _npy_headers as npy_headers
from train_hardening_helpers import bounded, meta_of, read_arrays, with_meta, write_trainable


@pytest.fixture
def trained(runner, tmp_path):
    """(graph, a checkpoint of step 6, its arrays, an existing file to pass as --save)."""
    graph = write_trainable(tmp_path)
    ckpt = tmp_path / "ck.npz"
    result = runner.invoke(cli, ["train", graph, "--steps", "6", "--save", str(ckpt)])
    assert result.exit_code == 0, result.output
    keep = tmp_path / "keep.npz"
    keep.write_bytes(b"the old checkpoint")
    return graph, ckpt, read_arrays(ckpt), keep


def _resume(runner, graph, ckpt, keep, *extra):
    with bounded(30):
        result = runner.invoke(cli, ["train", graph, "--resume", str(ckpt), "--save", str(keep), *extra])
    assert keep.read_bytes() == b"the old checkpoint"
    assert "Traceback" not in result.output and "internal error" not in result.output
    return result


def _hostile(tmp_path, arrays, name="bad.npz"):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_a_saved_checkpoint_is_a_plain_npz_that_numpy_reads(trained):
    _, ckpt, arrays, _ = trained
    meta = meta_of(arrays)
    assert meta["format"] == "agrad-train-checkpoint" and meta["version"] == 2 and meta["step"] == 6
    assert meta["optimizer"] == {"type": "Adam"} and len(meta["graph_sha256"]) == 64
    assert {"params/W", "params/b", "optim/0/exp_avg", "history/losses", "history/lrs"} <= set(arrays)
    assert arrays["history/losses"].shape == (6,) and arrays["params/W"].dtype == np.float32
    with zipfile.ZipFile(ckpt) as archive:        # every member an .npy: nothing needs unpickling
        assert all(n.endswith(".npy") for n in archive.namelist())


def _drop(arrays, key):
    return {k: v for k, v in arrays.items() if k != key}


def _set_meta(arrays, **changes):
    meta = meta_of(arrays)
    for dotted, value in changes.items():
        target = meta
        *path, last = dotted.split("__")
        for part in path:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[last] = value
    return with_meta(arrays, meta)


CASES = {
    "missing parameter": (lambda a: _drop(a, "params/W"), "key 'params/W': missing; expected float32 [4, 3]"),
    "wrong shape": (lambda a: {**a, "params/W": np.zeros((3, 4), np.float32)},
                    "key 'params/W': expected float32 [4, 3], got float32 [3, 4]"),
    "complex": (lambda a: {**a, "params/b": np.zeros(3, np.complex64)},
                "key 'params/b': expected float32 [3], got complex64 [3]"),
    "strings": (lambda a: {**a, "params/b": np.array(["a", "b", "c"])},
                "key 'params/b': expected float32 [3], got <U1"),
    "nan parameter": (lambda a: {**a, "params/b": np.full(3, np.nan, np.float32)}, "key 'params/b': holds NaN or Inf"),
    "unknown key": (lambda a: {**a, "evil": np.zeros(1)}, "key 'evil': unexpected"),
    "missing buffer": (lambda a: _drop(a, "optim/0/exp_avg"),
                       "key 'optim/0/exp_avg': missing; Adam keeps float32 [4, 3]"),
    "another optimizer's buffer": (lambda a: {**a, "optim/0/momentum_buffer": np.zeros((4, 3), np.float32)},
                                   "key 'optim/0/momentum_buffer': Adam keeps no buffer 'momentum_buffer'"),
    "buffer of a parameter it has not": (lambda a: {**a, "optim/7/exp_avg": np.zeros(3, np.float32)},
                                         "key 'optim/7/exp_avg': expected optim/I/BUFFER with I below 2"),
    "buffer shape": (lambda a: {**a, "optim/1/exp_avg_sq": np.zeros(4, np.float32)},
                     "key 'optim/1/exp_avg_sq': expected float32 [3], got float32 [4]"),
    "negative step": (lambda a: _set_meta(a, step=-1),
                      "key 'meta.step': expected an integer step from 0 to the run's 20"),
    "huge step": (lambda a: _set_meta(a, step=10 ** 30), "key 'meta.step': expected an integer step"),
    "fractional step": (lambda a: _set_meta(a, step=2.5), "key 'meta.step': expected an integer step"),
    "nan step": (lambda a: _set_meta(a, step=float("nan")), "key 'meta.step': expected an integer step from 0 to "
                                                              "the run's 20, got nan"),
    "huge step, 4000 digits": (lambda a: _set_meta(a, step=10 ** 4000),
                               "key 'meta.step': expected an integer step from 0 to the run's 20, got 1000000"),
    # a parameter's own count (a float32 tensor): a whole number up to the checkpoint's step
    "fractional step count": (lambda a: {**a, "optim/0/step": np.array(3.5, np.float32)},
                              "key 'optim/0/step': expected a whole step count from 0 to the checkpoint's 6, got 3.5"),
    "step count past the checkpoint's": (lambda a: {**a, "optim/1/step": np.array(7, np.float32)},
                                         "key 'optim/1/step': expected a whole step count from 0 to the "
                                         "checkpoint's 6, got 7.0"),
    "huge step count": (lambda a: {**a, "optim/0/step": np.array(3e38, np.float32)},
                        "key 'optim/0/step': expected a whole step count"),
    "negative step count": (lambda a: {**a, "optim/0/step": np.array(-1, np.float32)},
                            "key 'optim/0/step': expected a whole step count"),
    "optimizer not a mapping": (lambda a: _set_meta(a, optimizer="SGD"),
                                "key 'meta.optimizer': expected {\"type\": NAME}, got 'SGD'"),
    "optimizer with more keys": (lambda a: _set_meta(a, optimizer={"type": "Adam", "lr": 1}),
                                 "key 'meta.optimizer.lr': unexpected (expected type)"),
    "negative lr": (lambda a: _set_meta(a, param_groups__0__lr=-0.1),
                    "key 'meta.param_groups.0.lr': expected a finite number >= 0, got -0.1"),
    "nan lr": (lambda a: _set_meta(a, param_groups__0__lr=float("nan")),
               "key 'meta.param_groups.0.lr': expected a finite number >= 0, got nan"),
    "inf in the history": (lambda a: {**a, "history/lrs": np.full(6, np.inf)}, "key 'history/lrs': holds NaN or Inf"),
    "string lr": (lambda a: _set_meta(a, param_groups__0__lr="fast"),
                  "key 'meta.param_groups.0.lr': expected a finite number >= 0, got 'fast'"),
    "betas": (lambda a: _set_meta(a, param_groups__0__betas=[0.9]),
              "key 'meta.param_groups.0.betas': expected a list of 2"),
    "beta of 1": (lambda a: _set_meta(a, param_groups__0__betas=[1, 0.999]),
                  "key 'meta.param_groups.0': Adam refuses these values: Invalid beta parameter at index 0: 1"),
    "another optimizer": (lambda a: _set_meta(a, optimizer={"type": "SGD"}),
                          "key 'meta.optimizer.type': was written with optimizer 'SGD'; the graph trains with Adam"),
    "another schedule's state": (lambda a: _set_meta(a, scheduler={"milestones": [3], "gamma": 0.1}),
                                 "key 'meta.scheduler._last_lr': missing"),
    "schedule out of step": (lambda a: _set_meta(a, scheduler__last_epoch=99),
                             "key 'meta.scheduler.last_epoch': expected 6 (the step is 6), got 99"),
    "no schedule state": (lambda a: _set_meta(a, scheduler=None),
                          "key 'meta.scheduler': expected the schedule's state"),
    "history length": (lambda a: {**a, "history/losses": np.zeros(5)},
                       "key 'history/losses': expected float64 [6], got float64 [5]"),
    "rng": (lambda a: _set_meta(a, rng={"bit_generator": "MT19937"}), "key 'meta.rng': expected NumPy PCG64"),
    "parameters of another graph": (lambda a: _set_meta(a, params=["W"]),
                                    "key 'meta.params': holds parameters ['W'], the graph trains ['W', 'b']"),
    "meta not json": (lambda a: with_meta(a, "{not json"), "key 'meta': expected a JSON object"),
    "meta a list": (lambda a: with_meta(a, "[1, 2]"), "key 'meta': expected a JSON object, got list"),
    "meta numbers": (lambda a: {**a, "meta": np.arange(3)}, "key 'meta': expected a JSON text (a 0-d string array)"),
    "meta missing": (lambda a: _drop(a, "meta"), "key 'meta': missing; not an agrad train checkpoint"),
    "version": (lambda a: _set_meta(a, version=3), "key 'meta.version': expected 2, got 3"),
    "evals": (lambda a: _set_meta(a, evals=[{"step": 1, "loss": "low"}]), "key 'meta.evals.0': expected"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_checkpoint_is_refused_naming_the_key(runner, trained, tmp_path, case):
    graph, _, arrays, keep = trained
    mutate, expected = CASES[case]
    bad = _hostile(tmp_path, mutate(arrays))
    result = _resume(runner, graph, bad, keep)
    assert result.exit_code == 2, result.output
    assert f"bad.npz: error[AG069]: {expected}" in result.stderr


def test_an_object_array_is_refused_unpickled(runner, trained, tmp_path, monkeypatch):
    graph, _, arrays, keep = trained
    path = tmp_path / "bad.npz"
    np.savez(path, **{**arrays, "params/W": np.array([{"a": 1}], dtype=object)})     # pickled by savez
    import pickle
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled"))
    result = _resume(runner, graph, path, keep)
    assert result.exit_code == 2 and "bad.npz: error[AG069]: " in result.stderr
    assert "holds Python objects, which would need unpickling" in result.stderr


def test_a_truncated_checkpoint_is_refused(runner, trained, tmp_path):
    graph, ckpt, _, keep = trained
    data = ckpt.read_bytes()
    for size in (0, 10, len(data) // 2, len(data) - 30):
        (tmp_path / "cut.npz").write_bytes(data[:size])
        result = _resume(runner, graph, tmp_path / "cut.npz", keep)
        assert result.exit_code == 2 and "cut.npz: error[AG069]: " in result.stderr, (size, result.output)


def test_a_zip_bomb_checkpoint_is_refused_before_inflating(runner, trained, tmp_path, monkeypatch):
    graph, _, arrays, keep = trained
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, **{**arrays, "params/W": np.zeros(2 ** 18)})          # 2 MiB in ~2 KiB
    monkeypatch.setattr(npy_headers, "BOMB_BYTES", 2 ** 20)            # the 1 GiB rule, scaled down
    load = np.load
    monkeypatch.setattr(np, "load", lambda f, **k: pytest.fail("inflated") if os.path.basename(f) == "bomb.npz"
                        else load(f, **k))
    result = _resume(runner, graph, path, keep)
    assert result.exit_code == 2 and "bomb.npz: error[AG069]: bomb.npz: array 'params/W' would inflate" in result.stderr
    assert "zip bomb" in result.stderr


def test_a_checkpoint_of_the_graph_before_an_edit_needs_force_resume(runner, trained, tmp_path):
    graph, ckpt, _, keep = trained
    with open(graph, "a") as f:
        f.write("# an edit\n")
    result = _resume(runner, graph, ckpt, keep)
    assert result.exit_code == 2
    assert "key 'meta.graph_sha256': the checkpoint was written for another graph" in result.stderr
    assert "--force-resume" in result.stderr
    result = runner.invoke(cli, ["train", graph, "--resume", str(ckpt), "--force-resume", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["steps"] == 20


def test_a_renamed_data_file_changes_the_graph_hash(runner, trained, tmp_path):
    graph, ckpt, _, keep = trained
    os.rename(tmp_path / "t.npz", tmp_path / "t2.npz")
    with open(graph) as f:
        text = f.read()
    with open(graph, "w") as f:
        f.write(text.replace("t.npz", "t2.npz"))
    assert "meta.graph_sha256" in _resume(runner, graph, ckpt, keep).stderr


def test_a_changed_optimizer_is_refused_even_when_forced(runner, trained, tmp_path):
    graph, ckpt, _, keep = trained
    with open(graph) as f:
        text = f.read()
    with open(graph, "w") as f:
        f.write(text.replace("{type: adam, lr: 0.05}", "{type: sgd, lr: 0.05, momentum: 0.9}"))
    result = _resume(runner, graph, ckpt, keep, "--force-resume")
    assert result.exit_code == 2
    assert "key 'meta.optimizer.type': was written with optimizer 'Adam'; the graph trains with SGD" in result.stderr
