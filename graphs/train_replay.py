"""Training steps replayed: a whole step (forward, backward, gradient clipping, the
optimizer's update) recorded once per batch shape and run again as one compiled function
of the step's arrays (engine/replay/), with the engine's results bit for bit.

A training step repeats one graph: after the first step of a batch shape (the one that
makes the optimizer's buffers), the second is recorded as the engine runs it, and later
steps of that shape replay it — no Tensor, Node or dispatcher work. What changes from
step to step is given to the replay, never frozen in it:
- the batch and every leaf and optimizer buffer: inputs of the replay, read from the
  tensors each step (parameters and buffers are written in place, as the engine does);
- the optimizer's numbers that follow its lr schedule and step count: host steps
  (`watchers.host_numbers`), computed again by the optimizer's own function each step;
- random draws (dropout without a seed): their kernels are called again, drawing from
  agrad's global generator in the engine's order, so each step gets new values.
The loss is looked at before the backward pass (the replay pauses there): a NaN/Inf
stops training with the parameters as the engine would leave them.

The engine stays the source of truth; a step runs through it when:
- the recording could not express the step (`Recorder`'s reasons, among them a tensor's
  value read while recording — a decision the replay would freeze),
- the batch's shapes, dtypes or layout are not those of a recording (one recording per
  batch shape, up to `MAX_SHAPES`),
- the optimizer's hyper-parameters other than lr, its parameter groups or its buffers are
  not those of the recording (a checkpoint loaded, a scheduler that changes momentum),
- anomaly mode (it looks at every value), leaves off the CPU.
"""
from __future__ import annotations

import math
from operator import itemgetter

from agrad import Tensor
from agrad.replay import Recorder

# Shapes past this many each record a step that is never replayed again often enough to pay.
MAX_SHAPES = 8


class StepReplays:
    """A Trainer's recordings, one per batch signature (names, shapes, dtypes, strides)."""
    __slots__ = ("entries",)

    def __init__(self):
        self.entries: dict = {}

    def entry(self, values: dict) -> "_Entry | None":
        key = tuple((name, t._data.shape, t._data.dtype, t._data.strides) for name, t in values.items())
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= MAX_SHAPES:
                return None
            entry = self.entries[key] = _Entry()
        return entry


class _Entry:
    __slots__ = ("engine_steps", "replay", "reason")

    def __init__(self):
        self.engine_steps = 0           # steps of this signature run through the engine
        self.replay: StepReplay | None = None
        self.reason: str | None = None  # why this signature's steps are not replayed


def eligible(trainer) -> str | None:
    """Why this Trainer's steps cannot be replayed at all, or None."""
    if trainer.runner.anomaly:
        return "anomaly mode looks at every value"
    if any(t._device.type != "cpu" for t in trainer.leaves.values()):
        return "replay runs on the CPU only"
    return None


def _state_tensors(optimizer) -> list:
    """(param's state dict, key, tensor) of every buffer, in the order of the groups."""
    found = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            for key, value in (state or {}).items():
                if value.__class__ is Tensor or isinstance(value, Tensor):
                    found.append((state, key, value))
    return found


def _hyper(group) -> tuple:
    """(the group's size, what reads its hyper-parameters but lr, their values)."""
    keys = [k for k in group if k != "params" and k != "lr"]
    read = itemgetter(*keys) if keys else (lambda group: ())
    return len(group), read, read(group)


class StepReplay:
    """The replay of one recorded step; `step(trainer, k, values)` is a training step."""
    __slots__ = ("schedule", "leaf_names", "buffers", "grads", "groups")

    def __init__(self, schedule, leaf_names, buffers, grads, groups):
        self.schedule = schedule
        self.leaf_names = leaf_names    # the leaves, in the order of the replay's inputs
        self.buffers = buffers          # (state dict, key, tensor) of the optimizer's buffers, inputs after them
        self.grads = grads              # (leaf tensor, output position or None) per leaf that requires grad
        self.groups = groups            # (group, its params list, its hyper-parameters but lr)

    def fits(self, optimizer) -> bool:
        """Whether the optimizer is still the one recorded: its groups, their hyper-parameters
        (lr aside: a host number) and its buffers."""
        groups = optimizer.param_groups
        if len(groups) != len(self.groups):
            return False
        for group, (recorded, params, (size, read, values)) in zip(groups, self.groups):
            if group is not recorded or group["params"] is not params or len(group) != size or read(group) != values:
                return False
        for state, key, t in self.buffers:
            if state.get(key) is not t:
                return False
        return True

    def step(self, trainer, k: int, values: dict) -> float:
        """Step k + 1; returns its loss. A NaN/Inf loss ends it before the backward pass (the
        caller raises TrainingDiverged), as the engine's step ends."""
        for t, _ in self.grads:
            t.grad = None                                    # as the engine's zero_grad(set_to_none=True)
        leaves = trainer.leaves
        arrays = [values[n]._data if n in values else leaves[n]._data for n in self.leaf_names]
        arrays += [t._data for _, _, t in self.buffers]
        run = self.schedule.run(*arrays)
        (loss,) = next(run)
        value = float(loss.item())
        if not math.isfinite(value):                # nothing after the forward pass runs
            run.close()
            return value
        trainer.run.lrs.append(float(trainer.optimizer.param_groups[0]["lr"]))
        outs, _ = next(run)
        for t, position in self.grads:
            if position is not None:
                t.grad = Tensor._make(outs[position], t._device, t._keys)
        if trainer.scheduler is not None:
            trainer.scheduler.step()
        trainer.run.losses.append(value)
        trainer.run.steps = k + 1
        trainer.replayed_steps += 1
        return value


class Recording:
    """A step about to be recorded: a Recorder with the step's inputs bound — every leaf (the
    batch's new values in place of the file's), then every optimizer buffer — and the
    optimizer's groups as the step finds them (its scheduler changes them after it)."""

    def __init__(self, trainer, values: dict):
        self.recorder = recorder = Recorder()
        self.names = list(trainer.leaves)
        for name in self.names:
            recorder.bind((values[name] if name in values else trainer.leaves[name])._data)
        self.buffers = _state_tensors(trainer.optimizer)
        for _, _, t in self.buffers:
            recorder.bind(t._data)
        self.groups = [(g, g["params"], _hyper(g)) for g in trainer.optimizer.param_groups]


def build(trainer, recording: Recording) -> tuple[StepReplay | None, str | None]:
    """The replay of the step just recorded, or (None, why not)."""
    recorder = recording.recorder
    if recorder.reason is not None:
        return None, recorder.reason
    if len(recorder.paused) != 1:
        return None, "the step did not pause once, at its loss"
    outputs, grads = [], []
    for t in trainer.grad_leaves:
        g = t.grad
        if g is None:
            grads.append((t, None))
            continue
        if g.__class__ is not Tensor or g._device.type != "cpu" or id(g._data) not in recorder.slot_of:
            return None, "a gradient is not made by the recorded step"
        grads.append((t, len(outputs)))
        outputs.append(g._data)
    try:
        schedule = recorder.schedule(outputs)
    except ValueError as exc:
        return None, str(exc)
    return StepReplay(schedule, recording.names, recording.buffers, grads, recording.groups), None
