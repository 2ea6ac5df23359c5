"""What the `agrad train` hardening tests share: a small trainable graph in a folder, a
bound on how long a command may block, and checkpoints to tamper with."""
from __future__ import annotations

import contextlib
import json
import signal
from pathlib import Path

import numpy as np

from small_classifier import SMALL_CLASSIFIER

TRAIN = """\
train:
  loss: loss
  optimizer: {type: adam, lr: 0.05}
  schedule: {type: cosine, warmup: 2}
  steps: 20
  data: {source: {file: d.npz}, batch_size: 8, shuffle: true}
  eval: {every: 10, data: {file: t.npz}, metrics: [loss, "accuracy(logits, y)"]}
"""


def write_trainable(folder: Path, train: str = TRAIN, graph: str = SMALL_CLASSIFIER) -> str:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    if not (folder / "d.npz").exists():
        np.savez(folder / "d.npz", x=x, y=y)
        np.savez(folder / "t.npz", x=x[:16], y=y[:16])
    path = folder / "g.yaml"
    path.write_text(graph + train)
    return str(path)


class Hung(BaseException):
    """A command blocked past its bound (a BaseException: click and CliRunner let it through)."""


@contextlib.contextmanager
def bounded(seconds: float):
    """Fail, instead of hanging the suite, when the block takes longer than `seconds`
    (SIGALRM interrupts a blocking open() of a FIFO too)."""
    def expire(_signum, _frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def read_arrays(path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def meta_of(arrays) -> dict:
    return json.loads(str(arrays["meta"]))


def with_meta(arrays, meta: dict | str) -> dict[str, np.ndarray]:
    text = meta if isinstance(meta, str) else json.dumps(meta)
    return {**arrays, "meta": np.array(text)}
