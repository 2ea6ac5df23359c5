"""`agrad run --device dask`: the same results as the CPU, computed by one `dask.compute` for
everything the run prints or saves; without dask, exit 3 naming the extra to install; a graph
calling an op dask cannot run is refused before it runs (AG071, at the op). `--cluster` is in
tests/distributed/test_distributed.py, on its cluster."""
from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from agrad import backends, graphs
from agrad.cli.main import cli

dask = pytest.importorskip("dask")

EXAMPLES = Path(graphs.__file__).parent / "examples"


def _cli(*args: str):
    return CliRunner(env={"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "120"}).invoke(cli, list(args))


def _saved(path: Path) -> dict:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


@pytest.mark.parametrize("example", ["seed", "mlp", "gpt_block", "resnet_block"])
def test_dask_run_equals_cpu(tmp_path, example):
    graph = str(EXAMPLES / f"{example}.yaml")
    on_cpu = _cli("run", graph, "--save", str(tmp_path / "cpu.npz"))
    on_dask = _cli("run", graph, "--device", "dask", "--save", str(tmp_path / "dask.npz"))
    assert on_cpu.exit_code == 0 and on_dask.exit_code == 0, on_dask.output
    assert "on dask" in on_dask.output
    cpu, lazy = _saved(tmp_path / "cpu.npz"), _saved(tmp_path / "dask.npz")
    assert sorted(cpu) == sorted(lazy) and any(k.startswith("grads/") for k in cpu)
    for key in cpu:
        assert lazy[key].dtype == cpu[key].dtype and lazy[key].shape == cpu[key].shape
        # dask sums a chunked batch dimension chunk by chunk: the same terms, another order
        np.testing.assert_allclose(lazy[key], cpu[key], rtol=1e-6 if cpu[key].dtype == np.float32 else 1e-12,
                                   atol=1e-7 if cpu[key].dtype == np.float32 else 1e-14, err_msg=key)


def test_dask_check_equals_cpu(tmp_path):
    """`check` of a graph on dask: its replays run on the CPU only, so every pass goes through the
    engine (a dask array has no strides for a replay's layout check, which once raised)."""
    text = ("inputs:\n  x: {value: [[1.0, 2.0], [3.0, 4.0]], requires_grad: true}\n"
            "nodes:\n  y: tanh(x) * x\n  loss: sum(y)\nbackward: loss\n")
    (tmp_path / "cpu.yaml").write_text(text)
    (tmp_path / "dask.yaml").write_text("device: dask\n" + text)
    on_cpu = _cli("check", str(tmp_path / "cpu.yaml"), "--format", "json")
    on_dask = _cli("check", str(tmp_path / "dask.yaml"), "--format", "json")
    assert on_cpu.exit_code == 0 and on_dask.exit_code == 0, on_dask.output
    cpu, lazy = json.loads(on_cpu.stdout), json.loads(on_dask.stdout)
    assert cpu["passed"] and lazy["passed"] and sorted(lazy["leaves"]) == ["x"]
    assert lazy["leaves"]["x"]["max_abs_err"] < 1e-8


class _Computes(dask.callbacks.Callback):
    """Counts dask's computes (each `dask.compute` / `.compute()` starts one)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def test_one_compute_per_run(tmp_path):
    with _Computes() as computes:
        result = _cli("run", str(EXAMPLES / "mlp.yaml"), "--device", "dask", "--save", str(tmp_path / "r.npz"),
                      "--format", "json")
    assert result.exit_code == 0, result.output
    assert computes.count == 1          # outputs, gradients and what `expect:` reads: together


REFUSED_GRAPH = """\
inputs:
  x: {value: [[1.0, -2.0], [0.5, 3.0]], requires_grad: true}
  i: {value: [[0, 0], [1, 0]], dtype: int64}
nodes:
  y: scatter_reduce(x, 1, i, x, "amax")
  loss: sum(y)
backward: loss
"""


def test_refused_op_is_located_before_running(tmp_path):
    path = tmp_path / "refused.yaml"
    path.write_text(REFUSED_GRAPH)
    assert _cli("run", str(path)).exit_code == 0           # the CPU runs it
    result = _cli("run", str(path), "--device", "dask")
    assert result.exit_code == 2
    assert f"{path}:5:6: error[AG071]" in result.output
    assert "scatter_reduce is not supported on device dask" in result.output


def test_without_dask_exit_3_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "dask" or name.startswith("dask."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    previous = backends.register_backend(backends.DaskBackend())     # one that has not imported dask yet
    monkeypatch.setattr(builtins, "__import__", no_dask)
    try:
        result = _cli("run", str(EXAMPLES / "seed.yaml"), "--device", "dask")
    finally:
        backends.register_backend(previous)
    assert result.exit_code == 3, result.output
    assert "pip install 'agrad[dask]'" in result.output and "error[AG043]" in result.output


def test_workers_without_device_dask_is_bad_usage():
    result = _cli("run", str(EXAMPLES / "seed.yaml"), "--workers", "2")
    assert result.exit_code == 2 and "--device dask" in result.output


TRAIN = """\
dtype: float64
{device}seed: 1
inputs:
  x: {{shape: [6, 3], init: normal}}
  W: {{shape: [3, 2], init: normal, requires_grad: true}}
  b: {{shape: [2], init: zeros, requires_grad: true}}
nodes:
  loss: mean(tanh(x @ W + b) ** 2)
backward: loss
train:
  loss: loss
  optimizer: {{type: adam, lr: 0.1}}
  steps: 4
"""


def test_train_on_dask_equals_cpu(tmp_path):
    """Each step's parameters and optimizer buffers are computed once (graphs/training.py), so
    step k does not recompute the k before it; the losses are the CPU's."""
    losses = []
    for device in ("", "device: dask\n"):
        path = tmp_path / f"train{len(losses)}.yaml"
        path.write_text(TRAIN.format(device=device))
        result = _cli("train", str(path), "--format", "json")
        assert result.exit_code == 0, result.output
        losses.append(json.loads(result.stdout)["losses"])
    assert len(losses[1]) == 4
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-12, atol=0)


def test_dask_first_imported_while_the_collector_is_paused_does_not_leave_it_off():
    # dask's slice_array notes at import whether the collector is on, and after each call turns it
    # back on only if it was: agrad imports dask with it on (its first use is often in a paused check)
    import subprocess
    import sys
    code = ("import gc; gc.disable(); from agrad.backends import get_backend; get_backend('dask').xp; "
            "assert not gc.isenabled(); gc.enable(); import dask.array as da; da.ones(4)[1:]; print(gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
