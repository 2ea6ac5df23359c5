"""Training steps replayed (graphs/train_replay.py): losses, parameters and optimizer
buffers equal the engine's bit for bit — every example with a `train:` section, every
optimizer `train:` offers (and their options), every schedule, gradient clipping, dropout
drawing from the global generator — and every step the replay cannot express runs
through the engine: a value read while recording, a batch of another shape, changed
hyper-parameters, a checkpoint loaded, a loss that diverges."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.graphs as G
from agrad.graphs.train_section import train_spec
from agrad.graphs.training import Trainer, TrainingDiverged
from small_classifier import SMALL_CLASSIFIER

EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"
TRAIN_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.yaml") if "\ntrain:" in p.read_text())

OPTIMIZERS = {
    "sgd": {"type": "sgd", "lr": 0.05},
    "sgd-momentum-decay": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 1e-3},
    "sgd-nesterov": {"type": "sgd", "lr": 0.05, "momentum": 0.8, "nesterov": True},
    "adam": {"type": "adam", "lr": 0.01},
    "adam-amsgrad-decay": {"type": "adam", "lr": 0.01, "amsgrad": True, "weight_decay": 1e-3, "betas": [0.8, 0.99]},
    "adamw": {"type": "adamw", "lr": 0.01, "weight_decay": 0.05},
    "rmsprop": {"type": "rmsprop", "lr": 0.01},
    "rmsprop-centered-momentum": {"type": "rmsprop", "lr": 0.01, "centered": True, "momentum": 0.5,
                                  "weight_decay": 1e-3},
    "adagrad": {"type": "adagrad", "lr": 0.05, "lr_decay": 0.01, "weight_decay": 1e-3},
    "adamax": {"type": "adamax", "lr": 0.01, "weight_decay": 1e-3, "betas": [0.8, 0.99]},
    "nadam": {"type": "nadam", "lr": 0.01, "momentum_decay": 0.01},
    "nadam-decoupled": {"type": "nadam", "lr": 0.01, "weight_decay": 1e-2, "decoupled_weight_decay": True},
    "adadelta": {"type": "adadelta", "lr": 1.0, "rho": 0.8, "weight_decay": 1e-3},
    "rprop": {"type": "rprop", "lr": 0.01, "etas": [0.4, 1.3], "step_sizes": [1e-4, 1.0]},
    "radam": {"type": "radam", "lr": 0.01, "weight_decay": 1e-3, "decoupled_weight_decay": True},
    "asgd": {"type": "asgd", "lr": 0.01, "t0": 2, "weight_decay": 1e-3},
    "adafactor": {"type": "adafactor", "lr": 0.01, "eps": [None, 1e-3], "weight_decay": 1e-3},
}
# optimizers whose steps decide from values a replay would freeze: every step runs through the engine
ENGINE_ONLY = {"radam": "RAdam decides from the step count whether a step is rectified",
               "asgd": "ASGD decides its averaging from the value of its mu",
               "adafactor": "Adafactor's step size is read from the parameter's and the update's norms"}
SCHEDULES = [None, {"type": "cosine", "warmup": 2}, {"type": "step", "step_size": 2, "gamma": 0.5},
             {"type": "multistep", "milestones": [2, 4]}, {"type": "exponential", "gamma": 0.9},
             {"type": "linear", "start_factor": 0.5, "total_iters": 3},
             {"type": "constant", "factor": 0.5, "total_iters": 3}, {"type": "polynomial", "power": 2.0},
             {"type": "cosine_restarts", "t_0": 2, "t_mult": 2},
             {"type": "cyclic", "base_factor": 0.2, "step_size_up": 2, "mode": "triangular2"}]


def _bits(t) -> bytes:
    return np.ascontiguousarray(t.detach().numpy()).tobytes()


def _state(trainer):
    params = {n: _bits(t) for n, t in zip(trainer.param_names, trainer.params)}
    buffers = [(k, _bits(v)) for p in trainer.params for k, v in trainer.optimizer.state[p].items()]
    grads = {n: None if t.grad is None else _bits(t.grad) for n, t in zip(trainer.param_names, trainer.params)}
    return params, buffers, grads


def _trainers(graph, steps, **options):
    """The same run twice from the same generator state: replayed, then through the engine."""
    done = []
    for replay in (True, False):
        agrad.manual_seed(1234)
        trainer = Trainer(graph, steps=steps, replay=replay, **options)
        for _ in range(steps):
            trainer.step()
        done.append(trainer)
    return done


def _assert_same(replayed, engine):
    assert replayed.run.losses == engine.run.losses
    assert replayed.run.lrs == engine.run.lrs
    assert _state(replayed) == _state(engine)


@pytest.mark.parametrize("example", TRAIN_EXAMPLES)
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_every_example_and_optimizer_replays_the_engines_bits(example, optimizer):
    graph = G.load(EXAMPLES / example)
    options = {k: v for k, v in train_spec(graph).options().items() if k != "eval_every"}
    options.update(optimizer=OPTIMIZERS[optimizer], clip_grad_norm=0.5 if "adam" in optimizer else None)
    replayed, engine = _trainers(graph, 6, **options)
    if optimizer in ENGINE_ONLY:
        assert replayed.replayed_steps == 0 and replayed.replay_reason == ENGINE_ONLY[optimizer]
    else:
        assert replayed.replayed_steps == 4 and replayed.replay_reason is None    # steps 1-2: engine, recorded
    assert engine.replayed_steps == 0
    _assert_same(replayed, engine)


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: (s or {}).get("type", "none"))
def test_every_schedule_replays_the_engines_bits(graph_file, schedule):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    replayed, engine = _trainers(graph, 7, loss="loss", optimizer={"type": "adam", "lr": 0.1}, schedule=schedule,
                                 clip_grad_norm=0.3)
    assert replayed.replayed_steps == 5
    _assert_same(replayed, engine)


def test_muon_replays_the_engines_bits(graph_file):
    # Muon takes the 2-D W only; its bfloat16 rounding (int32 views and masks) is replayed like any op
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    replayed, engine = _trainers(graph, 6, loss="loss", params=["W"],
                                 optimizer={"type": "muon", "lr": 0.05, "adjust_lr_fn": "match_rms_adamw"},
                                 schedule={"type": "cosine", "warmup": 2})
    assert replayed.replayed_steps == 4 and replayed.replay_reason is None
    _assert_same(replayed, engine)
    assert engine.run.losses[-1] < engine.run.losses[0]


DROPOUT = SMALL_CLASSIFIER.replace("  logits: x @ W + b", "  logits: dropout(x, 0.5) @ W + b")


def test_dropout_draws_new_values_each_replayed_step_as_the_engine_does(graph_file):
    graph = G.load(graph_file(DROPOUT))
    replayed, engine = _trainers(graph, 8, loss="loss", optimizer={"type": "sgd", "lr": 0.5})
    assert replayed.replayed_steps == 6
    _assert_same(replayed, engine)
    assert len(set(replayed.run.losses)) == len(replayed.run.losses)     # a new mask every step


class _Deciding(agrad.optim.SGD):
    """An optimizer that decides from a value (a frozen decision, were it replayed)."""

    def step(self, closure=None):
        grad = self.param_groups[0]["params"][0].grad
        if grad.abs().sum() > 1.0:                      # __bool__ reads the value
            for group in self.param_groups:
                group["lr"] = group["lr"] * 0.5
        return super().step(closure)


def test_a_value_read_while_recording_falls_back_to_the_engine(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    runs = []
    for replay in (True, False):
        trainer = Trainer(graph, loss="loss", steps=5, replay=replay, optimizer=None)
        trainer.optimizer = _Deciding(trainer.params, lr=1.0)
        for _ in range(5):
            trainer.step()
        runs.append(trainer)
    replayed, engine = runs
    assert replayed.replayed_steps == 0 and "item()" in replayed.replay_reason
    _assert_same(replayed, engine)


def test_a_batch_of_another_shape_runs_through_the_engine_and_gets_its_own_recording(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4)).astype(np.float32)
    Y = rng.integers(0, 3, 20)
    sizes = [8, 8, 8, 4, 8, 4, 8, 4, 8, 4, 4]             # a last partial batch each "epoch"
    runs = []
    for replay in (True, False):
        trainer = Trainer(graph, loss="loss", steps=len(sizes), replay=replay, data={"x": X, "y": Y}, batch_size=8,
                          optimizer={"type": "adam", "lr": 0.1})
        trainer.batches.batch = lambda k: {"x": X[k:k + sizes[k]], "y": Y[k:k + sizes[k]]}
        for _ in sizes:
            trainer.step()
        runs.append(trainer)
    replayed, engine = runs
    assert len(replayed.replays.entries) == 2
    assert replayed.replayed_steps == 4 + 3            # batch 8: steps 3, 5, 7, 9; batch 4: steps 8, 10, 11
    _assert_same(replayed, engine)


def test_hyper_parameters_changed_between_steps_are_not_frozen(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))

    def cycling(optimizer):           # a scheduler that changes momentum too (as OneCycleLR does)
        class Cycle:
            t = 0

            def step(self):
                Cycle.t += 1
                for group in optimizer.param_groups:
                    group["momentum"] = 0.9 if Cycle.t % 8 < 4 else 0.5
        return Cycle()
    replayed, engine = _trainers(graph, 16, loss="loss", optimizer={"type": "sgd", "lr": 0.1, "momentum": 0.9},
                                 schedule=cycling)
    assert replayed.replayed_steps > 0
    _assert_same(replayed, engine)


def test_an_int_lr_is_not_frozen(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    replayed, engine = _trainers(graph, 5, loss="loss", optimizer={"type": "sgd", "lr": 1})
    assert replayed.replayed_steps == 0 and "float" in replayed.replay_reason
    _assert_same(replayed, engine)


def test_resuming_from_a_checkpoint_records_again_and_matches(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    options = dict(loss="loss", optimizer={"type": "adam", "lr": 0.1}, schedule={"type": "cosine"})
    whole = G.load(graph_file(SMALL_CLASSIFIER)).train(steps=10, replay=False, **options)
    first = graph.train(steps=10, stop_after=5, **options)
    rest = graph.train(steps=10, resume=first.trainer.state(), **options)
    assert rest.trainer.replayed_steps == 3
    assert rest.losses == whole.losses
    for name in whole.params:
        assert _bits(rest.params[name]) == _bits(whole.params[name])


GROWING = SMALL_CLASSIFIER.replace("  loss: cross_entropy(logits, y)", "  loss: sum(exp(logits))")


def test_a_diverging_replayed_step_stops_where_the_engine_stops(graph_file):
    graph = G.load(graph_file(GROWING))
    stopped = []
    for replay in (True, False):
        trainer = Trainer(graph, loss="loss", steps=50, replay=replay, optimizer={"type": "sgd", "lr": 0.05,
                                                                                "maximize": True})
        with np.errstate(all="ignore"), pytest.raises(TrainingDiverged) as info:
            for _ in range(50):
                trainer.step()
        stopped.append((info.value.step, trainer))
    (step, replayed), (engine_step, engine) = stopped
    assert step == engine_step and step > 3 and replayed.replayed_steps > 0
    _assert_same(replayed, engine)


def test_graph_train_replays_and_agrees_with_replay_false(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    options = dict(loss="loss", optimizer={"type": "adamw", "lr": 0.05}, schedule={"type": "linear"})
    fast = graph.train(steps=8, **options)
    slow = graph.train(steps=8, replay=False, **options)
    assert fast.trainer.replayed_steps == 6 and slow.trainer.replayed_steps == 0
    assert fast.losses == slow.losses and fast.evals == slow.evals
    assert all(_bits(fast.params[n]) == _bits(slow.params[n]) for n in fast.params)


def test_anomaly_mode_runs_every_step_through_the_engine(graph_file):
    graph = G.load(graph_file(SMALL_CLASSIFIER))
    trainer = Trainer(graph, loss="loss", steps=4, anomaly=True)
    for _ in range(4):
        trainer.step()
    assert trainer.replayed_steps == 0 and trainer.replay_reason == "anomaly mode looks at every value"
