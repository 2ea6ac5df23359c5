"""A check's passes replayed: the perturbed forward passes, and the analytic Jacobian's backward passes.

`check` compares each analytic gradient with central differences: two forward passes per
element of every input that requires grad, each the same graph with one element changed.
The first of them runs through the engine with a `Recorder` (engine/replay/); the rest run
its recorded kernel calls as one compiled function of the leaves' arrays, with the
engine's results bit for bit (values change between passes, never shapes). Every leaf is
an input of the replay, read from the pass's tensors, so a kernel that updates a leaf in
place (batch_norm's running statistics) does so in every pass, as in the engine.

A pass runs through the engine instead when the recording could not express it (the
Recorder's reasons, among them a tensor's value read while recording: a decision the
replay would freeze), when grad mode is on (the analytic Jacobian's passes build graphs to
differentiate), when a leaf's array is not of the recorded shape, dtype and layout, or when
the replay raises (the engine then raises the error located at its node).

The analytic side is one backward pass per output element, each the same backward graph
with another vector fed in: `BackwardReplay` records the first one per output, with that
vector as the replay's input, and replays it for the others (the forward is not run again:
the saved values are the recording's constants). It refuses as the forward replay does,
and where an input's gradient is not made by a kernel of the pass (the vector itself); a
replay that raises runs through the engine, which locates the error.
"""
from __future__ import annotations

import numpy as np

from agrad import Tensor
from agrad.autograd.gradcheck import vjp
from agrad.replay import Recorder


class ForwardReplay:
    """The recorded forward of a check's `fn`; `outputs(leaves)` replays it, or None."""
    __slots__ = ("names", "schedule", "meta", "kinds", "reason", "recorded")

    def __init__(self):
        self.schedule = None
        self.reason: str | None = None
        self.recorded = False

    def fits(self, env: dict) -> bool:
        """Whether the pass over `env` (name -> tensor) can be replayed."""
        return self.schedule is not None and all(_meta(env[n]) == m for n, m in zip(self.names, self.meta))

    def outputs(self, env: dict):
        """The replayed values of the recorded outputs, as tensors (no autograd history), or
        None when the replay raised."""
        try:
            outs, _ = self.schedule.run(*[env[n]._data for n in self.names])
        except Exception:       # noqa: BLE001 - the engine runs the pass again and locates the error
            return None
        return tuple(Tensor._make(a, device, keys) for a, (device, keys) in zip(outs, self.kinds))

    def record(self, env: dict, forward, outputs):
        """Run `forward(env)` (the engine's pass) recorded; `outputs(values)` picks the values
        the replay returns. Returns what `outputs` returned."""
        self.recorded = True
        names = [n for n, t in env.items() if isinstance(t, Tensor)]
        values, self.schedule, self.reason = _recorded([env[n] for n in names], lambda: outputs(forward(env)),
                                                       lambda values: values)
        if self.schedule is not None:
            self.names, self.meta = names, [_meta(env[n]) for n in names]
            self.kinds = [(v._device, v._keys) for v in values]
        return values


def _recorded(inputs: list, run, made):
    """`run()` (an engine pass) with a Recorder binding the arrays of `inputs` as the replay's:
    (what it returned, the schedule of the tensors `made(that)` lists or None, and why none)."""
    if any(t._device.type != "cpu" or t._data.__class__ is not np.ndarray for t in inputs):
        return run(), None, "replay runs on the CPU only"
    recorder = Recorder()
    for t in inputs:
        recorder.bind(t._data)
    with recorder:
        result = run()
    if recorder.reason is not None:
        return result, None, recorder.reason
    try:
        return result, recorder.schedule([t._data for t in made(result)]), None
    except ValueError as exc:            # an output no kernel of the pass made
        return result, None, str(exc)


def _meta(t) -> tuple:
    data = t._data
    return data.shape, data.dtype, data.strides


class BackwardReplay:
    """`vjp` (agrad.autograd.gradcheck's contract) with each output's first call recorded and
    the later ones replayed: pass it to gradcheck_report as its `vjp`. `reasons`: why an
    output's calls went through the engine."""
    __slots__ = ("recorded", "reasons")

    def __init__(self):
        self.recorded: dict[int, tuple] = {}    # id(output) -> (output, schedule or None, shape, kinds)
        self.reasons: list[str] = []

    def __call__(self, output: Tensor, inputs: list, grad_output: Tensor) -> tuple:
        found = self.recorded.get(id(output))
        if found is None or found[0] is not output:
            return self._record(output, inputs, grad_output)
        _, schedule, meta, kinds = found
        if schedule is None or _meta(grad_output) != meta:
            return vjp(output, inputs, grad_output)
        try:
            outs, _ = schedule.run(grad_output._data)
        except Exception:       # noqa: BLE001 - the engine runs the pass again and locates the error
            return vjp(output, inputs, grad_output)
        made = iter(outs)
        return tuple(None if kind is None else Tensor._make(next(made), *kind) for kind in kinds)

    def _record(self, output: Tensor, inputs: list, grad_output: Tensor) -> tuple:
        grads, schedule, reason = _recorded([grad_output], lambda: vjp(output, inputs, grad_output),
                                            lambda grads: [g for g in grads if g is not None])
        if reason is not None:
            self.reasons.append(reason)
        kinds = [None if g is None else (g._device, g._keys) for g in grads]
        # (a layout only where there is a replay to fit: a dask or CuPy array has no strides)
        self.recorded[id(output)] = (output, schedule, _meta(grad_output) if schedule is not None else None, kinds)
        return grads
