"""`--save` and `--trace` (issues 7 and 8): checked before anything runs, written
atomically, through symlinks, with the umask's mode; a plugin's sys.exit() and a
non-finite `--eps` are bad usage (exit 2)."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from agrad import _atomic_write as atomic_write
from agrad.cli import files
from agrad.cli.main import cli

SEED = str(Path(__file__).parents[2] / "graphs" / "examples" / "seed.yaml")

# Fails while running (exit 3): an output path must be refused before this kernel runs.
FAILS_AT_RUN = """\
inputs:
  x: {value: [1.0, 2.0], requires_grad: true}
  i: {value: [5], dtype: int64}
nodes:
  a: sum(index_select(x, 0, i))
"""


@pytest.mark.parametrize("option", ["--save", "--trace"])
def test_an_output_in_a_missing_folder_is_refused_before_the_run(runner, tmp_path, option):
    graph = tmp_path / "g.yaml"
    graph.write_text(FAILS_AT_RUN)
    target = tmp_path / "no" / "such" / "dir" / "out.file"
    result = runner.invoke(cli, ["run", str(graph), option, str(target)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: {option} {target}: cannot write: no such folder {target.parent}"
    assert "internal error" not in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("make, words", [
    (lambda p: p.mkdir(), "folder"),
    (lambda p: p.symlink_to("/dev/null"), "not a regular file"),
])
def test_a_folder_or_a_device_is_refused(runner, tmp_path, make, words):
    target = tmp_path / "out.npz"
    make(target)
    result = runner.invoke(cli, ["run", SEED, "--save", str(target)])
    assert result.exit_code == 2 and words in result.stderr and str(target) in result.stderr


def test_no_permission_is_refused_naming_the_path(runner, tmp_path, monkeypatch):
    # the check asks os.access, which says yes to root whatever the mode; ask it as a user would
    monkeypatch.setattr(files.os, "access", lambda path, mode: not mode & os.W_OK)
    target = tmp_path / "out.json"
    result = runner.invoke(cli, ["run", SEED, "--trace", str(target)])
    assert result.exit_code == 2
    assert f"--trace {target}: cannot write: permission denied in {tmp_path}" in result.stderr


def test_a_symlink_is_written_through_and_modes_follow_the_umask(runner, tmp_path):
    real = tmp_path / "real.npz"
    real.write_bytes(b"old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.npz"
    link.symlink_to("real.npz")
    old_umask = os.umask(0o027)
    try:
        assert runner.invoke(cli, ["run", SEED, "--save", str(link)]).exit_code == 0
        assert runner.invoke(cli, ["run", SEED, "--save", str(tmp_path / "new.npz"),
                                   "--trace", str(tmp_path / "t.json")]).exit_code == 0
    finally:
        os.umask(old_umask)
    assert link.is_symlink() and os.readlink(link) == "real.npz"
    assert sorted(np.load(real)) == ["grads/a", "grads/b", "outputs/d"]
    assert (real.stat().st_mode & 0o777) == 0o640                   # a replaced file keeps its mode
    assert (tmp_path / "new.npz").stat().st_mode & 0o777 == 0o640   # 0o666 & ~0o027
    assert (tmp_path / "t.json").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npz", "new.npz", "real.npz", "t.json"]


def test_a_name_near_the_file_systems_limit_is_written(runner, tmp_path):
    # 250 bytes is a valid name; `.NAME.XXXXXXXX.tmp` beside it would be past the 255-byte limit,
    # so the temporary file takes the name's first 100 bytes (and the probe before the run too)
    target = tmp_path / ("L" * 246 + ".npz")
    result = runner.invoke(cli, ["run", SEED, "--save", str(target)])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
    multibyte = tmp_path / ("x" + "é" * 124 + ".npz")       # 253 bytes, cut inside a character
    assert runner.invoke(cli, ["run", SEED, "--save", str(multibyte)]).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, multibyte.name])


@pytest.mark.parametrize("argv, option", [(["run", "{g}", "--save", "{g}"], "--save"),
                                          (["run", "{g}", "--trace", "{link}"], "--trace"),
                                          (["train", "{g}", "--save", "{g}"], "--save"),
                                          (["export", "{g}", "-o", "{g}"], "--output"),
                                          (["import", "{m}", "-o", "{m}"], "--output")])
def test_the_file_the_command_reads_is_not_its_output(runner, tmp_path, argv, option):
    # `agrad export g.yaml -o g.yaml` replaced the graph with its ONNX model, as `cc x.c -o x.c` would
    graph, model = tmp_path / "g.yaml", tmp_path / "m.onnx"
    graph.write_text(Path(SEED).read_text())
    model.write_bytes(b"not read")
    (tmp_path / "link.yaml").symlink_to(graph)          # the same file by another name
    names = {"g": str(graph), "m": str(model), "link": str(tmp_path / "link.yaml")}
    result = runner.invoke(cli, [a.format(**names) for a in argv])
    assert result.exit_code == 2, result.output
    source = names["m" if argv[0] == "import" else "g"]
    assert f"cannot write: it is {source}, the file this command reads" in result.stderr
    assert option in result.stderr
    assert graph.read_text() == Path(SEED).read_text() and model.read_bytes() == b"not read"


def test_a_path_ending_with_a_slash_is_refused(runner, tmp_path):
    result = runner.invoke(cli, ["run", SEED, "--save", f"{tmp_path}/out.npz/"])
    assert result.exit_code == 2
    assert "cannot write: it names a folder (it ends with a slash), not a file" in result.stderr
    assert list(tmp_path.iterdir()) == []


TRAIN = str(Path(__file__).parents[2] / "graphs" / "examples" / "train_digits.yaml")


@pytest.mark.parametrize("argv, option", [
    (["run", SEED, "--save"], "--save"),
    (["run", SEED, "--trace"], "--trace"),
    (["train", TRAIN, "--steps", "1", "--save"], "--save"),
    (["train", TRAIN, "--steps", "1", "--plot"], "--plot"),
])
def test_a_write_that_fails_after_the_checks_is_a_runtime_failure(runner, tmp_path, monkeypatch, argv, option):
    # a disk that fills up during the run: the checks passed, the write does not
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic_write.os, "fsync", full)
    target = tmp_path / ("out.svg" if option == "--plot" else "out.npz")
    target.write_bytes(b"old")
    result = runner.invoke(cli, [*argv, str(target)])
    assert result.exit_code == 3, result.output
    assert f"error: {option} {target}: cannot write: No space left on device" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == [target.name]


# A writer that stops halfway through the file until it is killed.
_SLOW_WRITER = textwrap.dedent("""\
    import sys, time
    from agrad.graphs.saving import write_atomically

    def write(f):
        f.write(b"half a file")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)

    write_atomically(sys.argv[1], write)
    """)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_save_killed_midway_leaves_the_old_file_and_no_temporary(tmp_path, sig):
    target = tmp_path / "out.npz"
    target.write_bytes(b"old")
    child = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"writing\n"
        assert len(list(tmp_path.iterdir())) == 2                    # the temporary file exists now
        child.send_signal(sig)
        child.wait(timeout=30)
    finally:
        child.kill()
        child.wait()
    assert child.returncode != 0
    if sig != signal.SIGINT:
        assert child.returncode == -sig                              # it died of the signal, as uncaught
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.npz"]


@pytest.mark.parametrize("body", ["import sys\nsys.exit(0)\n", "raise SystemExit('bye')\n"])
def test_a_plugin_that_exits_is_a_plugin_failure(runner, tmp_path, body):
    plugin = tmp_path / "leaving.py"
    plugin.write_text(body)
    result = runner.invoke(cli, ["run", "--plugin", str(plugin), SEED])
    assert result.exit_code == 2
    assert f"{plugin}:" in result.stderr and "error[AG032]" in result.stderr and "SystemExit" in result.stderr


@pytest.mark.parametrize("option, value", [("--eps", "nan"), ("--atol", "inf"), ("--rtol", "nan")])
def test_non_finite_tolerances_are_bad_usage(runner, option, value):
    result = runner.invoke(cli, ["check", SEED, option, value])
    assert result.exit_code == 2 and "not a finite number" in result.stderr
