"""`--workers N` / `--cluster ADDRESS` on check, test and train, on a real dask cluster of
two worker processes on 127.0.0.1 (one per module, closed in `finally` even when a test
fails; every wait on it is bounded by agrad.graphs.distributed.cluster's timeouts).

Each claim is held against the single-process command: the check's numbers are equal,
the test reports are the same, a data-parallel training equals one process within
1e-12 in float64. A worker killed mid-job is rescheduled (check) or a located runtime
error (train), never a hang.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")

from agrad import graphs  # noqa: E402
from agrad.cli.main import cli  # noqa: E402
from agrad.graphs.distributed.check import check_on_cluster  # noqa: E402
from agrad.graphs.distributed.cluster import ClusterOptions, open_cluster  # noqa: E402
from agrad.graphs.distributed.graph_source import GraphSource  # noqa: E402
from agrad.graphs.distributed.training import train_on_cluster  # noqa: E402
from agrad.graphs.results import GraphRuntimeError  # noqa: E402
from gpu import requires_gpu  # noqa: E402

EXAMPLES = Path(graphs.__file__).parent / "examples"

TRAIN_GRAPH = """\
dtype: float64
seed: 3
inputs:
  x: {{shape: [7, 4], init: normal}}
  y: {{value: [0, 1, 2, 0, 1, 2, 0], dtype: int64}}
  W: {{shape: [4, 3], init: normal, std: 0.5, requires_grad: true}}
  b: {{shape: [3], init: zeros, requires_grad: true}}
nodes:
  h: tanh(x @ W + b)
  logits: h * 2.0
  loss: {loss}
backward: loss
train:
  loss: loss
  optimizer: {{type: adam, lr: 0.05}}
  schedule: {{type: cosine, warmup: 2}}
  clip_grad_norm: 1.0
  steps: 8
  data: {{source: {{file: data.npz}}, batch_size: 7, shuffle: true}}
  eval: {{every: 3, metrics: [loss, "accuracy(logits, y)"]}}
"""


@pytest.fixture(scope="module")
def session():
    with open_cluster(ClusterOptions(workers=2)) as s:      # closes the cluster however the module ends
        yield s


@pytest.fixture(scope="module")
def address(session) -> str:
    return session.client.scheduler.address


def _cli(*args: str):
    return CliRunner(env={"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "120"}).invoke(cli, list(args))


def _train_file(tmp_path: Path, loss: str = "cross_entropy(logits, y)") -> str:
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "data.npz", x=rng.standard_normal((40, 4)), y=rng.integers(0, 3, 40))
    path = tmp_path / "train.yaml"
    path.write_text(TRAIN_GRAPH.format(loss=loss))
    return str(path)


def _kill_worker(session, address: str) -> None:
    pid = session.client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)


def _wait_for_two_workers(session) -> None:
    session.client.wait_for_workers(2, timeout=60)     # the nanny restarts a killed worker


# ---- dask stays out of commands that do not ask for it --------------------------------

def test_help_and_a_plain_run_import_nothing_of_dask():
    probe = textwrap.dedent(f"""
        import sys
        from agrad.cli.main import cli
        for args in (["--help"], ["check", "--help"], ["run", {str(EXAMPLES / "seed.yaml")!r}]):
            try:
                cli(args, prog_name="agrad")
            except SystemExit:
                pass
        print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"dask", "distributed"}}))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_without_dask_the_options_exit_3_naming_the_extra():
    probe = textwrap.dedent(f"""
        import sys
        sys.modules["distributed"] = None          # as if agrad[dask] were not installed
        from agrad.cli.main import cli
        cli(["check", "--workers", "2", {str(EXAMPLES / "mlp.yaml")!r}], prog_name="agrad")
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    assert "error[AG047]" in out.stderr and "pip install 'agrad[dask]'" in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_usage_of_the_options_is_exit_2():
    mlp = str(EXAMPLES / "mlp.yaml")
    assert _cli("check", mlp, "--workers", "2", "--cluster", "tcp://127.0.0.1:1").exit_code == 2
    assert _cli("check", mlp, "--cluster", "udp://127.0.0.1:1").exit_code == 2
    assert _cli("check", mlp, "--workers", "0").exit_code == 2
    assert _cli("train", mlp, "--cluster", "tcp://127.0.0.1:1", "--tls-key", mlp).exit_code == 2


# ---- check ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mlp.yaml", "two_pass.yaml", "classifier.yaml"])
def test_check_on_workers_equals_one_process_number_for_number(session, name):
    source = GraphSource.read(str(EXAMPLES / name))
    alone = source.load().check()
    assert check_on_cluster(session, source) == alone     # every max error, worst element and verdict


def test_check_finds_a_wrong_gradient_on_workers_too(session, tmp_path):
    plugin = tmp_path / "wrong.py"
    plugin.write_text(textwrap.dedent("""
        import agrad
        from agrad import library

        library.define("dtest::triple(Tensor x) -> Tensor")
        library.impl("dtest::triple", "CPU", lambda x: agrad.tensor(x.detach().numpy() * 3))
        library.impl("dtest::triple", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
        # NOTE: deliberately wrong: the derivative of 3x is 3, not 2.
        library.register_autograd("dtest::triple", lambda ctx, grad: grad * 2)
    """))
    graph = tmp_path / "g.yaml"
    graph.write_text("dtype: float64\ninputs:\n  a: {value: [1.0, 2.0, 3.0], requires_grad: true}\n"
                     "nodes:\n  t: {op: \"dtest::triple\", args: [a]}\n  s: sum(t)\nbackward: s\n")
    source = GraphSource.read(str(graph), plugins=[str(plugin)])
    alone = source.load().check()
    result = check_on_cluster(session, source)
    assert result == alone and not result.passed


def test_cli_check_on_a_cluster_prints_what_one_process_prints(address):
    mlp = str(EXAMPLES / "mlp.yaml")
    alone, spread = _cli("check", mlp, "--format", "json"), _cli("check", mlp, "--format", "json", "--cluster", address)
    assert spread.exit_code == alone.exit_code == 0
    assert json.loads(spread.stdout) == json.loads(alone.stdout)


# ---- test -------------------------------------------------------------------------------

def _without_durations(document: dict) -> dict:
    for entry in document["files"]:
        entry.pop("duration_ms", None)
    return document


def test_cli_test_on_a_cluster_reports_in_file_order(address, tmp_path):
    (tmp_path / "a_fails.yaml").write_text("inputs:\n  a: 1.0\nnodes:\n  b: a * 2\nexpect:\n  outputs: {b: 3.0}\n")
    (tmp_path / "b_passes.yaml").write_text("inputs:\n  a: 1.0\nnodes:\n  b: a * 2\nexpect:\n  outputs: {b: 2.0}\n")
    (tmp_path / "c_invalid.yaml").write_text("inputs:\n  a: 1.0\nnodes:\n  b: nosuchop(a)\n")
    for args in (["--format", "json"], ["--format", "github"], ["-x"]):
        alone = _cli("test", str(tmp_path), *args)
        spread = _cli("test", str(tmp_path), *args, "--cluster", address)
        assert spread.exit_code == alone.exit_code != 0
        if args[-1] == "json":
            assert _without_durations(json.loads(spread.stdout)) == _without_durations(json.loads(alone.stdout))
        else:
            strip = [line.split(",")[0] for line in alone.stdout.splitlines()]
            assert [line.split(",")[0] for line in spread.stdout.splitlines()] == strip


# ---- train ------------------------------------------------------------------------------

def _train_alone(path: str, steps: int, resume=None):
    return graphs.load(path).train(stop_after=steps, resume=resume)


def _trainer(path: str):
    from agrad.graphs.train_section import train_spec
    from agrad.graphs.training import Trainer

    graph = graphs.load(path)
    spec = train_spec(graph)
    options = dict(steps=spec.steps, **{k: v for k, v in spec.options().items() if k != "eval_every"})
    return Trainer(graph, **options), options, spec


def _train_spread(session, path: str, steps: int, resume=None, on_step=None):
    trainer, options, spec = _trainer(path)
    if resume is not None:
        trainer.load_state(resume)
    train_on_cluster(session, GraphSource.read(path), trainer, options, steps=spec.steps, stop_after=steps,
                     eval_every=spec.eval_every, on_step=on_step)
    return trainer


@pytest.mark.parametrize("loss", ["cross_entropy(logits, y)", "cross_entropy(logits, y, reduction=\"sum\")",
                                  "mean((logits - 1.0) ** 2)"])
def test_data_parallel_training_equals_one_process(session, tmp_path, loss):
    path = _train_file(tmp_path, loss)
    alone = _train_alone(path, 8)
    spread = _train_spread(session, path, 8)          # 7 rows: 3 on one worker, 4 on the other
    np.testing.assert_allclose(spread.run.losses, alone.losses, rtol=0, atol=1e-12)
    for name in ("W", "b"):
        np.testing.assert_allclose(spread.run.params[name].detach().numpy(), alone.params[name].detach().numpy(), rtol=0, atol=1e-12)
    mine, theirs = spread.state(), alone.trainer.state()
    for key in theirs:
        if key.startswith("optim/"):
            np.testing.assert_allclose(mine[key], theirs[key], rtol=0, atol=1e-12)
    assert [e["step"] for e in spread.run.evals] == [e["step"] for e in alone.evals] == [3, 6, 8]
    np.testing.assert_allclose([e["loss"] for e in spread.run.evals], [e["loss"] for e in alone.evals], atol=1e-12)
    assert spread.run.lrs == alone.lrs


def test_resume_on_another_number_of_workers(session, tmp_path):
    path = _train_file(tmp_path)
    first = _train_spread(session, path, 4)            # 2 workers, then 1 process: as if never stopped
    finished = _train_alone(path, 8, resume=first.state())
    alone = _train_alone(path, 8)
    np.testing.assert_allclose(finished.losses, alone.losses, rtol=0, atol=1e-12)
    np.testing.assert_allclose(finished.params["W"].detach().numpy(), alone.params["W"].detach().numpy(), rtol=0, atol=1e-12)


def test_cli_train_on_a_cluster_saves_one_checkpoint_that_resumes_anywhere(address, tmp_path):
    path = _train_file(tmp_path)
    ckpt = tmp_path / "half.npz"
    half = _cli("train", path, "--steps", "4", "--save", str(ckpt), "--cluster", address, "--format", "json")
    assert half.exit_code == 0, half.output
    rest = _cli("train", path, "--resume", str(ckpt), "--format", "json")
    alone = _cli("train", path, "--format", "json")
    assert rest.exit_code == alone.exit_code == 0
    np.testing.assert_allclose(json.loads(rest.stdout)["losses"], json.loads(alone.stdout)["losses"], atol=1e-12)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz", "half.npz", "train.yaml"]


def test_batch_norm_in_training_mode_is_refused_before_the_first_step(address, tmp_path):
    path = _train_file(tmp_path)
    text = Path(path).read_text().replace("  h: tanh(x @ W + b)",
                                          "  z: x @ W + b\n  h: tanh(batch_norm(z, None, None, training=True))")
    Path(path).write_text(text)
    result = _cli("train", path, "--cluster", address)
    assert result.exit_code == 2
    assert f"{path}:10:" in result.stderr and "error[AG070]" in result.stderr and "batch_norm" in result.stderr


def test_a_loss_that_is_no_mean_or_sum_over_the_batch_is_refused(address, tmp_path):
    path = _train_file(tmp_path, "amax(logits)")
    result = _cli("train", path, "--cluster", address)
    assert result.exit_code == 2 and "error[AG070]" in result.stderr and f"{path}:11:9:" in result.stderr


# ---- on a GPU: each worker computes with CuPy (both share the one GPU) -----------------------

@requires_gpu
def test_check_on_gpu_workers_equals_one_gpu_process_number_for_number(session):
    source = GraphSource.read(str(EXAMPLES / "mlp.yaml"), device="cuda")
    alone = source.load().check()
    assert check_on_cluster(session, source) == alone


@requires_gpu
def test_data_parallel_training_on_gpu_workers_equals_one_gpu_process(session, tmp_path):
    path = _train_file(tmp_path)
    Path(path).write_text("device: cuda\n" + Path(path).read_text())
    alone = _train_alone(path, 8)
    assert alone.params["W"].device.type == "cuda"
    spread = _train_spread(session, path, 8)
    assert spread.run.params["W"].device.type == "cuda"
    np.testing.assert_allclose(spread.run.losses, alone.losses, rtol=0, atol=1e-12)
    for name in ("W", "b"):
        np.testing.assert_allclose(spread.run.params[name].detach().cpu().numpy(),
                                   alone.params[name].detach().cpu().numpy(), rtol=0, atol=1e-12)


# ---- --workers N starts and stops its own cluster ------------------------------------------

def test_workers_option_starts_a_cluster_and_stops_it(tmp_path):
    import multiprocessing

    def started():         # worker processes besides the module's clusters'
        return {p.pid for p in multiprocessing.active_children()} - before

    before = {p.pid for p in multiprocessing.active_children()}
    mlp = str(EXAMPLES / "mlp.yaml")
    result = _cli("check", mlp, "--workers", "2", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["passed"]
    deadline = time.monotonic() + 30
    while started() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not started()


# ---- a worker killed mid-job (its own cluster: the killing leaves it restarting) -----------

@pytest.fixture(scope="module")
def doomed():
    with open_cluster(ClusterOptions(workers=2)) as s:
        yield s


def test_a_worker_killed_mid_check_moves_its_share_to_the_other(doomed):
    source = GraphSource.read(str(EXAMPLES / "mlp.yaml"))
    alone = source.load().check()
    _wait_for_two_workers(doomed)
    victim = doomed.workers()[1]
    killed = []

    def kill_once(done, total):
        if not killed:
            killed.append(done)
            _kill_worker(doomed, victim)

    assert check_on_cluster(doomed, source, on_progress=kill_once) == alone
    assert killed and killed[0] < 20           # the kill came before the last share


def test_a_worker_killed_mid_training_is_a_located_error_not_a_hang(doomed, tmp_path):
    path = _train_file(tmp_path)
    _wait_for_two_workers(doomed)
    victim = doomed.workers()[1]

    def kill_at_step_2(trainer):
        if trainer.run.steps == 2:
            _kill_worker(doomed, victim)

    start = time.monotonic()
    with pytest.raises(GraphRuntimeError) as caught:
        _train_spread(doomed, path, 8, on_step=kill_at_step_2)
    assert caught.value.code == "AG047" and victim in str(caught.value) and "at step 3" in str(caught.value)
    assert caught.value.location.file == path and caught.value.location.line == 11
    assert time.monotonic() - start < 60


# ---- Ctrl-C stops the cluster ------------------------------------------------------------

def _processes_marked(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (the command and every worker it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the workers through /proc")
def test_ctrl_c_stops_the_local_cluster_and_its_workers(tmp_path):
    graph = tmp_path / "slow.yaml"       # ~8,000 passes: long enough to be interrupted
    graph.write_text("dtype: float64\ninputs:\n  x: {shape: [40, 100], init: normal, requires_grad: true}\n"
                     "  W: {shape: [100, 100], init: normal}\nnodes:\n  loss: sum(tanh(tanh(x @ W) @ W))\n"
                     "backward: loss\n")
    marker = f"AGRAD_TEST_MARKER={os.getpid()}_{time.monotonic_ns()}"
    env = dict(os.environ, **dict([marker.split("=")]))
    command = subprocess.Popen([sys.executable, "-m", "agrad.cli", "check", str(graph), "--workers", "2"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(_processes_marked(marker)) < 3 and time.monotonic() < deadline and command.poll() is None:
            time.sleep(0.2)
        assert len(_processes_marked(marker)) >= 3, "the command and its two workers were never all running"
        time.sleep(1.0)                                      # into the job
        command.send_signal(signal.SIGINT)
        _, err = command.communicate(timeout=60)
        assert command.returncode not in (0, None) and "Traceback" not in err
        deadline = time.monotonic() + 30
        while _processes_marked(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_marked(marker) == []
    finally:
        for pid in _processes_marked(marker):              # only what this test started
            os.kill(pid, signal.SIGKILL)
        if command.poll() is None:
            command.kill()


# ---- run --device dask --cluster: dask.array's compute on the cluster's workers ----

def test_run_device_dask_on_cluster_equals_cpu(tmp_path, address):
    graph = str(EXAMPLES / "mlp.yaml")
    on_cpu = _cli("run", graph, "--save", str(tmp_path / "cpu.npz"))
    on_cluster = _cli("run", graph, "--device", "dask", "--cluster", address, "--save", str(tmp_path / "dask.npz"))
    assert on_cpu.exit_code == 0 and on_cluster.exit_code == 0, on_cluster.output
    with np.load(tmp_path / "cpu.npz") as cpu, np.load(tmp_path / "dask.npz") as lazy:
        assert sorted(cpu.files) == sorted(lazy.files)
        for key in cpu.files:
            np.testing.assert_allclose(lazy[key], cpu[key], rtol=1e-6, atol=1e-7, err_msg=key)
