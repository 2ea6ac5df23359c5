"""Ctrl-C and SIGTERM during `agrad train --save`: the run stops at the next step boundary,
writes that step's checkpoint atomically, says where it stopped and how to go on, and
exits 128 + the signal; a second signal stops it at once, leaving the old checkpoint.

Each test runs `agrad train` as a subprocess, waits (bounded) until the training loop
has installed its handlers, signals it, and kills it in `finally`.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from train_hardening_helpers import TRAIN, meta_of, read_arrays, write_trainable

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="waits on /proc/PID/status")

LONG = TRAIN.replace("steps: 20", "steps: 100000000")


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (Linux: SigCgt in /proc/PID/status)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(re.search(r"^SigCgt:\s*([0-9a-f]+)$", status, re.M).group(1), 16)
    return bool(mask >> (signum - 1) & 1)


def _start(tmp_path, *args) -> subprocess.Popen:
    graph = write_trainable(tmp_path, LONG)
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.Popen([sys.executable, "-m", "agrad.cli", "train", graph, *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_training(process: subprocess.Popen, timeout: float = 60) -> None:
    """Until the training loop runs: SIGTERM is caught only inside it (and while a file is written)."""
    deadline = time.monotonic() + timeout
    while not _catches(process.pid, signal.SIGTERM):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "training did not start"
        time.sleep(0.02)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_saves_the_last_step_and_says_how_to_resume(tmp_path, signum, status):
    ckpt = tmp_path / "ck.npz"
    process = _start(tmp_path, "--save", str(ckpt))
    try:
        _wait_training(process)
        time.sleep(0.3)                                   # a few steps in
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == status, err
    name = signal.Signals(signum).name
    found = re.search(rf"^{name}: training stopped after step (\d+) of 100000000; checkpoint of step \1 written "
                      rf"to {re.escape(str(ckpt))}; continue with: agrad train \S+g\.yaml --resume \S+ck\.npz "
                      r"--save \S+ck\.npz$", err, re.M)
    assert found, err
    step = int(found.group(1))
    arrays = read_arrays(ckpt)                            # NumPy reads it, allow_pickle=False
    assert step >= 1 and meta_of(arrays)["step"] == step and arrays["history/losses"].shape == (step,)
    assert not list(tmp_path.glob(".ck.npz.*")) and "Traceback" not in err


def test_a_signal_without_save_says_nothing_was_saved(tmp_path):
    process = _start(tmp_path)
    try:
        _wait_training(process)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130 and "nothing saved (--save CKPT.npz keeps the progress" in err


def test_a_second_signal_stops_at_once_and_keeps_the_old_checkpoint(tmp_path):
    ckpt = tmp_path / "ck.npz"
    np.savez(ckpt, old=np.arange(3))
    old = ckpt.read_bytes()
    process = _start(tmp_path, "--save", str(ckpt))
    try:
        _wait_training(process)
        process.send_signal(signal.SIGINT)
        process.send_signal(signal.SIGTERM)               # before the step it is in has ended
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 143, err
    assert "error: interrupted (SIGTERM)" in err and "Traceback" not in err
    assert ckpt.read_bytes() == old and not list(tmp_path.glob(".ck.npz.*"))
