"""Training a checked graph: new input values per step (`Graph.run(inputs=...)`), an
optimizer and a schedule from agrad.optim, batches from arrays, evaluation, checkpoints.

Everything that does not change between steps is made once: the checked graph, its
bound nodes (kernel lookups), the leaves, the optimizer's buffers, and the Meta
re-check of each new batch shape (cached by shape).
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import agrad
import agrad.nn.utils
import agrad.optim
from agrad.fp_warnings import quiet

from . import checkpoints
from .optimizers import METRICS, OPTIMIZERS, SCHEDULES, make_optimizer, schedule_factor  # noqa: F401 - re-exported
from .results import AnomalyReport, GraphFileError, SourceLocation
from .runner import Runner, _cyclic_gc_paused, run_graph
from .saving import write_atomically
from .shape_check import ShapeCheck, unknown_inputs
from .train_replay import Recording, StepReplays, build, eligible
from .train_section import has_train_section, train_spec


class TrainingDiverged(Exception):
    """The loss became NaN or Inf (or, in anomaly mode, a gradient did): training stops
    (exit status 1) naming the step; in anomaly mode `anomaly` names the node that made
    the first NaN/Inf and its line (the Runner's report, as `agrad run --anomaly`'s)."""

    def __init__(self, step: int, value: float, location: SourceLocation | None = None,
                 anomaly: AnomalyReport | None = None):
        self.step, self.value, self.location, self.anomaly = step, value, location, anomaly
        what = f"loss is {value}" if not math.isfinite(value) else "a gradient is NaN/Inf"
        super().__init__(f"{what} at step {step}; training stopped")


# ---- new input values ------------------------------------------------------------------

def as_input_tensor(checked, name: str, value) -> Any:
    """`value` (an array, a nested list, or a Tensor) as the leaf `name`: in its planned
    dtype and device, with its requires_grad."""
    plan = checked.leaves[name]
    dtype = agrad.dtypes.from_name(plan.dtype)
    if isinstance(value, agrad.Tensor):
        t = value.detach().to(device=plan.device, dtype=dtype)
    else:
        t = agrad.tensor(np.asarray(value), dtype=dtype, device=plan.device)
    if plan.requires_grad:
        t.requires_grad_(True)
    return t


def run_with_inputs(graph, inputs: dict, **run_options):
    """`Graph.run(inputs=...)`: the file's leaves with some replaced by new values."""
    checked, file = graph._checked, graph.file
    problems = unknown_inputs(checked, inputs, "inputs=", file)
    if problems:
        raise GraphFileError(problems)
    tensors = {name: as_input_tensor(checked, name, value) for name, value in inputs.items()}
    problems = ShapeCheck(checked, file).problems({n: t.shape for n, t in tensors.items()})
    if problems:
        raise GraphFileError(problems)
    return run_graph(checked, file, timings=dict(graph.timings_ms), leaf_values=tensors, **run_options)


# ---- batches ----------------------------------------------------------------------------

@dataclass
class Batches:
    """Batches along dim 0 of equally long arrays. Each epoch's order is a permutation
    drawn from (seed, epoch) alone, so step k's batch never depends on how the run got
    there: a resumed run sees exactly the batches an uninterrupted one would. A last
    partial batch is dropped (every step has the same shapes)."""
    arrays: dict[str, np.ndarray]
    batch_size: int
    shuffle: bool
    seed: int

    def __post_init__(self):
        self.length = len(next(iter(self.arrays.values())))
        self.per_epoch = max(1, self.length // self.batch_size)
        self._epoch, self._order = -1, None

    def batch(self, step: int) -> dict[str, np.ndarray]:
        epoch, i = divmod(step, self.per_epoch)
        if epoch != self._epoch:
            self._epoch = epoch
            self._order = (np.random.default_rng([self.seed, epoch]).permutation(self.length) if self.shuffle
                           else None)
        lo, hi = i * self.batch_size, min(self.length, (i + 1) * self.batch_size)
        if self._order is None:
            return {n: a[lo:hi] for n, a in self.arrays.items()}
        index = self._order[lo:hi]
        return {n: a[index] for n, a in self.arrays.items()}


# ---- the loop ------------------------------------------------------------------------------

@dataclass
class TrainRun:
    """What `Graph.train` returns: the loss of every step, the lr, eval records, and the
    trained parameters (the leaves themselves)."""
    losses: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)     # {"step": k, "loss": .., "accuracy": ..}
    params: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    seconds: float = 0.0            # of this session (a resumed run counts from its resume)
    session_steps: int = 0
    trainer: Any = None

    @property
    def final_loss(self) -> float | None:
        """The mean training loss of the last 10 steps (one batch's loss alone is noise)."""
        tail = self.losses[-10:]
        return sum(tail) / len(tail) if tail else None


class Trainer:
    """One training run of a checked graph; `step()` does one optimizer step. With `replay`
    (the default), the second step of each batch shape is recorded and later ones replay it
    (graphs/train_replay.py), with the engine's losses and parameters bit for bit."""

    def __init__(self, graph, *, loss: str, params=None, optimizer=None, schedule=None, steps: int = 100,
                 data: dict | None = None, batch_size: int | None = None, shuffle: bool = False,
                 clip_grad_norm: float | None = None, eval_data: dict | None = None,
                 metrics=("loss",), seed: int | None = None, anomaly: bool = False, replay: bool = True):
        checked, file = graph._checked, graph.file
        self.checked, self.file = checked, file
        self.loss_name = loss
        self.total_steps = int(steps)
        self.clip = clip_grad_norm
        self.metrics = [tuple(m) if not isinstance(m, str) else (m,) for m in metrics]
        # anomaly: every forward value and (engine's anomaly mode) every gradient checked each step
        self.runner = Runner(checked, file, anomaly=anomaly)
        self.runner.timed = False            # no per-node profile records: they would pile up per step
        self.leaves = self.runner.make_leaves()
        names = params if params is not None else [n for n, p in checked.leaves.items() if p.requires_grad]
        self.param_names = list(names)
        self.params = [self.leaves[n] for n in self.param_names]
        self.grad_leaves = [t for t in self.leaves.values() if t.requires_grad]
        self.optimizer = (make_optimizer(optimizer or {"type": "sgd", "lr": 0.01}, self.params)
                          if not isinstance(optimizer, agrad.optim.Optimizer) else optimizer)
        factor = schedule_factor(schedule, self.total_steps) if isinstance(schedule, (dict, type(None))) else None
        self.scheduler = (agrad.optim.lr_scheduler.LambdaLR(self.optimizer, factor) if factor is not None
                          else schedule(self.optimizer) if callable(schedule) else None)
        seed = checked.seed if seed is None else seed
        self.shapes = ShapeCheck(checked, file)
        self.batches = None
        if data:
            problems = unknown_inputs(checked, data, "data", file)
            if problems:
                raise GraphFileError(problems)
            arrays = {n: np.asarray(a) for n, a in data.items()}
            self.batches = Batches(arrays, batch_size or len(next(iter(arrays.values()))), shuffle, seed)
            self._require_shapes({n: (self.batches.batch_size,) + a.shape[1:] for n, a in arrays.items()})
        self.eval_data = None
        if eval_data:
            problems = unknown_inputs(checked, eval_data, "eval data", file)
            if problems:
                raise GraphFileError(problems)
            self.eval_data = {n: as_input_tensor(checked, n, a) for n, a in eval_data.items()}
            self._require_shapes({n: t.shape for n, t in self.eval_data.items()})
        self.run = TrainRun(params={n: self.leaves[n] for n in self.param_names})
        self.graph_sha256 = checkpoints.graph_hash(checked)
        self.replay_reason = None if replay else "replay=False"      # why the last recording is not replayed
        self.replayed_steps = 0
        self.replays = StepReplays() if replay else None
        if replay and (reason := eligible(self)) is not None:
            self.replays, self.replay_reason = None, reason

    def _require_shapes(self, shapes) -> None:
        problems = self.shapes.problems(shapes)
        if problems:
            raise GraphFileError(problems)

    @property
    def step_count(self) -> int:
        return self.run.steps

    def _forward(self, values: dict) -> dict:
        leaves = dict(self.leaves)
        leaves.update(values)
        return self.runner.forward(leaves)

    def step(self) -> float:
        k = self.run.steps
        if self.batches is not None:
            batch = self.batches.batch(k)
            values = {n: as_input_tensor(self.checked, n, a) for n, a in batch.items()}
        else:
            values = {}
        entry = self.replays.entry(values) if self.replays is not None else None
        if entry is None:
            return self._engine_step(k, values)
        if entry.replay is not None:
            if entry.replay.fits(self.optimizer):
                value = entry.replay.step(self, k, values)
                if not math.isfinite(value):
                    raise TrainingDiverged(k + 1, value, self.runner.location(self.loss_name))
                return value
            entry.replay = None             # the optimizer changed under it: record again
            entry.engine_steps = 0
        if entry.reason is not None or not entry.engine_steps:
            entry.engine_steps += 1         # the first step of a shape makes the optimizer's buffers
            return self._engine_step(k, values)
        recording = Recording(self, values)
        value = self._engine_step(k, values, recording.recorder)
        entry.replay, entry.reason = build(self, recording)
        self.replay_reason = entry.reason
        return value

    def _engine_step(self, k: int, values: dict, recorder=None) -> float:
        """One step through the engine; `recorder` records it (the loss read between its parts)."""
        recording = recorder if recorder is not None else contextlib.nullcontext()
        for t in self.grad_leaves:
            t.grad = None                                    # zero_grad(set_to_none=True)
        runner = self.runner
        runner.anomalies.clear()                             # the Runner reports the first per step
        with recording:
            env = self._forward(values)
            loss = env[self.loss_name]
            if recorder is not None:
                recorder.pause([loss._data])
        value = float(loss.item())
        if not math.isfinite(value):
            origin = next((a for a in runner.anomalies if a.phase == "forward"), None)
            raise TrainingDiverged(k + 1, value, runner.location(self.loss_name), origin)
        with recording:
            try:
                with runner.backward_mode():
                    agrad.autograd.backward([loss])
            except Exception as exc:     # noqa: BLE001 - located in the file as `agrad run` does
                found = runner.backward_error(exc, runner.location(self.loss_name))
                if isinstance(found, AnomalyReport):
                    raise TrainingDiverged(k + 1, value, found.location, found) from exc
                raise found from exc
            if self.clip is not None:
                agrad.nn.utils.clip_grad_norm_(self.params, self.clip)
            self.run.lrs.append(float(self.optimizer.param_groups[0]["lr"]))
            self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        if self.params and self.params[0].device.backend.lazy:
            self._computed_state()
        self.run.losses.append(value)
        self.run.steps = k + 1
        return value

    def _computed_state(self) -> None:
        """On a lazy device (dask): the parameters and the optimizer's buffers computed after each
        step, in one compute, and held as computed arrays; else each step's arrays would be task
        graphs of every step before it, and step k would recompute all k."""
        tensors = list(self.params) + [v for state in self.optimizer.state.values() for v in state.values()
                                       if isinstance(v, agrad.Tensor) and v.device == self.params[0].device]
        dev = self.params[0].device
        for t, host in zip(tensors, dev.backend.to_numpy_all([t._data for t in tensors])):
            t.data = agrad.tensor(host, dtype=t.dtype, device=dev)

    def evaluate(self) -> dict[str, float]:
        """The metrics on the eval data (or the file's own inputs), without gradients."""
        with agrad.no_grad():
            env = self._forward(self.eval_data or {})
        record: dict[str, float] = {"step": self.run.steps}
        for metric in self.metrics:
            if metric[0] == "loss":
                record["loss"] = float(env[self.loss_name].item())
            else:
                logits, target = env[metric[1]], env[metric[2]]
                predicted = np.argmax(logits.detach().cpu().numpy(), axis=-1)
                record["accuracy"] = float(np.mean(predicted == target.detach().cpu().numpy()))
        self.run.evals.append(record)
        return record

    # ---- checkpoints ---------------------------------------------------------------------

    def state(self) -> dict[str, np.ndarray]:
        """Parameters, optimizer buffers, step, loss history and RNG state, as the named
        arrays of a checkpoint (`agrad.graphs.checkpoints`)."""
        return checkpoints.checkpoint_arrays(self, self.graph_sha256)

    def load_state(self, arrays, *, force: bool = False) -> None:
        """Continue from `state()` (or a checkpoint's arrays): every key, shape, dtype and
        value is checked first; CheckpointError names the key that does not fit this run,
        and then nothing has changed. `force` accepts another graph's (hash) checkpoint."""
        state = checkpoints.check_checkpoint(arrays, self, self.graph_sha256, horizon=self.total_steps,
                                             force=force)
        checkpoints.restore(self, state)
        if self.replays is not None:
            self.replays = StepReplays()        # new buffers: recorded again


def run_trainer(trainer: Trainer, *, steps: int, eval_every: int | None = None, on_step=None,
                stop_after: int | None = None, should_stop: Callable[[], bool] | None = None) -> TrainRun:
    """Step `trainer` to `steps` in total (or to `stop_after`), evaluating every `eval_every`
    steps and after the last; `on_step(trainer)` after each step. `should_stop()` is asked
    before each step (a step boundary, where a checkpoint is whole): True ends the run there."""
    run = trainer.run
    first = run.steps
    start = time.perf_counter()
    try:
        with _cyclic_gc_paused(), quiet():
            end = steps if stop_after is None else min(steps, stop_after)
            while run.steps < end and not (should_stop is not None and should_stop()):
                trainer.step()
                if eval_every and run.steps % eval_every == 0 and run.steps < steps:
                    trainer.evaluate()
                if on_step is not None:
                    on_step(trainer)
            if run.steps == steps and (not run.evals or run.evals[-1]["step"] != steps):
                trainer.evaluate()
    finally:
        run.seconds = time.perf_counter() - start
        run.session_steps = run.steps - first
    return run


def train(graph, *, on_step=None, resume=None, stop_after: int | None = None, **options) -> TrainRun:
    """`Graph.train(...)`: `steps` optimizer steps in total (`resume`, a `Trainer.state()`,
    continues a run to it; `stop_after=k` stops the same run after step k, to checkpoint
    it); `on_step(trainer)` after each step. `run.trainer` holds the optimizer and state.
    A file with a `train:` section gives the defaults of every option."""
    if has_train_section(graph._checked):
        spec = train_spec(graph)
        options = {**spec.options(), "steps": spec.steps, **options}
    if "loss" not in options or "steps" not in options:
        raise TypeError("Graph.train() needs loss= and steps= when the file has no `train:` section")
    steps, eval_every = options.pop("steps"), options.pop("eval_every", None)
    trainer = Trainer(graph, steps=steps, **options)
    if resume is not None:
        trainer.load_state(resume)
    run = run_trainer(trainer, steps=steps, eval_every=eval_every, on_step=on_step, stop_after=stop_after)
    run.trainer = trainer
    return run


def save_checkpoint(trainer: Trainer, path) -> None:
    """`trainer.state()` as an .npz, written atomically (complete or absent)."""
    arrays = trainer.state()
    write_atomically(path, lambda f: np.savez(f, **arrays))


def load_checkpoint(trainer: Trainer, path, *, force: bool = False) -> None:
    """Continue `trainer` from the checkpoint at `path` (CheckpointError: nothing changed)."""
    trainer.load_state(checkpoints.read_checkpoint(path), force=force)
