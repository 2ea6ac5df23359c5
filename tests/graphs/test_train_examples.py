"""The shipped training examples: digits reach its `expect: {train: ...}` (>= 95% held-out
accuracy), the character-level GPT lowers its loss to its own, and training does not
leak: memory stays flat over thousands of steps."""
from __future__ import annotations

import gc
import resource
import sys

import numpy as np
import pytest

import agrad.graphs as G
from agrad.graphs.train_section import expectation_failures, train_spec
from agrad.graphs.training import Trainer, run_trainer

from graph_helpers import EXAMPLES


def test_digits_example_reaches_its_expectations():
    graph = G.load(EXAMPLES / "train_digits.yaml")
    spec = train_spec(graph)
    assert spec.steps == 30 * (1437 // 64) and spec.data["x"].dtype == np.uint8
    run = graph.train(steps=spec.steps, **spec.options())
    assert run.evals[-1]["accuracy"] >= 0.95
    assert expectation_failures(spec, run) == []


def test_gpt_chars_example_lowers_the_loss_to_its_expectations():
    graph = G.load(EXAMPLES / "train_gpt_chars.yaml")
    spec = train_spec(graph)
    assert spec.data["tokens"].shape == (288, 16) and spec.batch_size == 16
    run = graph.train(steps=spec.steps, **spec.options())
    assert run.losses[0] > 3.5 and run.final_loss < run.losses[0] - 1.5     # from about ln 31
    assert expectation_failures(spec, run) == []


def _rss_kib() -> int:
    """The resident set now (Linux), else the peak so far, in KiB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() // 1024
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak // 1024 if sys.platform == "darwin" else peak


def test_memory_stays_flat_over_many_steps(graph_file):
    graph = G.load(graph_file("""\
        seed: 1
        inputs:
          x: {shape: [16, 8], init: normal}
          y: {shape: [16, 2], init: normal}
          W: {shape: [8, 2], init: normal, requires_grad: true}
          b: {shape: [2], init: zeros, requires_grad: true}
        nodes:
          loss: mse_loss(tanh(x @ W + b), y)
        backward: loss
        """))
    rng = np.random.default_rng(0)
    data = {"x": rng.normal(size=(64, 8)).astype(np.float32), "y": rng.normal(size=(64, 2)).astype(np.float32)}
    trainer = Trainer(graph, loss="loss", steps=2500, data=data, batch_size=16, shuffle=True,
                      optimizer={"type": "adamw", "lr": 1e-3}, schedule={"type": "cosine"}, clip_grad_norm=1.0)
    run_trainer(trainer, steps=500)                   # warm: caches, allocator pools
    gc.collect()
    before = _rss_kib()
    run_trainer(trainer, steps=2500)
    gc.collect()
    grown = _rss_kib() - before
    # NOTE: a leak of one step's graph (a few KiB) would add several MiB over 2,000 steps
    assert grown < 4 * 1024, f"RSS grew by {grown} KiB over 2,000 steps"
    assert len(trainer.run.losses) == 2500


@pytest.mark.parametrize("steps", [1])
def test_example_runs_as_a_plain_graph(steps):
    run = G.load(EXAMPLES / "train_digits.yaml").run()
    assert run.values["logits"].shape == (360, 10) and run.grads["W1"].shape == (64, 64)
    run = G.load(EXAMPLES / "train_gpt_chars.yaml").run()      # the untrained model on its 8 windows
    assert run.values["logits"].shape == (8, 16, 31) and run.grads["wte"].shape == (31, 8)
