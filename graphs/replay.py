"""Graph files replayed: one pass through the engine, recorded; later passes replay it.

A graph file is static: after one pass every kernel, dispatch decision, shape,
broadcast reduction and buffer of its forward and backward passes is known. The
recorded pass runs through the engine as usual, with a `Recorder` (engine/autograd/
recorder.py) noting each backend kernel call; the replay runs those calls again, in
the same order on the same kinds of arrays, as one compiled function of the leaves'
arrays — no Tensor, Node or dispatcher work — and so gives the engine's results bit
for bit. The engine stays the source of truth: a replay is only used for a pass of
the same graph with the same leaf values (`--repeat`, `Graph.run` again), and a pass
the schedule cannot express is never replayed:
- anything the recorder refuses (in-place writes to arrays it does not make, kernels
  registered through `agrad.library`, `autograd.Function`, another thread),
- random values drawn from agrad's global generator (a seeded op draws the same values
  every pass; the global generator would not),
- anomaly mode and profiling (they look at every Node), leaves off the CPU,
- a constant of the pass written in place (it would not start the next pass as it did).

A replayed run makes no leaf tensors: a pass reads the arrays of the leaves' plans — a
memory-mapped `.npy` file's own array where the pass neither writes into it nor returns a
view of it, else a fresh array as the engine's leaf would hold — and a leaf becomes a
tensor (a copy, as `agrad.tensor` makes) only when someone looks at it (`_Leaves`).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from agrad import Tensor
from agrad.replay import Recorder

from .inputs import equals_its_file, pass_array

# Past this many recorded steps the compiled function would cost more to build than it saves.
MAX_STEPS = 400_000


class ReplayCache:
    """What a Graph knows of replaying its plain run: nothing yet, a Replay, or why not."""
    __slots__ = ("replay", "reason", "runs")

    def __init__(self):
        self.replay: Replay | None = None
        self.reason: str | None = None
        self.runs = 0                   # engine passes so far: the second one is recorded


def _generator_state():
    from agrad.generator import numpy_rng
    generator = numpy_rng(None)
    return generator, generator.bit_generator.state


class Replay:
    """The replay of one recorded pass; `run(leaves)` is a pass."""
    __slots__ = ("schedule", "leaf_names", "values", "grads", "retained", "not_retained", "leaf_kinds", "shared")

    def __init__(self, schedule, leaf_names, values, grads, retained, not_retained, leaf_kinds, shared):
        self.schedule = schedule
        self.leaf_names = leaf_names
        self.values = values            # name -> ref, or tuple of refs
        self.grads = grads              # leaf name -> ref or None
        self.retained = retained        # node name -> ref or None
        self.not_retained = not_retained
        self.leaf_kinds = leaf_kinds    # leaf name -> (device, dispatch keys, requires_grad)
        self.shared = shared            # names of the leaves a pass reads from their plan's array

    def leaves(self, runner) -> "_Leaves":
        """The leaves of a replayed run (`runner`'s graph): arrays, tensors when looked at."""
        graph = runner.graph
        arrays = {}
        for name in self.leaf_names:
            plan = graph.leaves[name]
            try:
                arrays[name] = np.asarray(plan.array) if name in self.shared else pass_array(plan, graph.seed)
            except (RuntimeError, MemoryError, ValueError, TypeError) as exc:     # as Runner.make_leaves
                raise runner.failures.leaf(name, exc) from exc
        return _Leaves(arrays, self.shared, self.leaf_kinds)

    def run(self, leaves: Mapping[str, Any]) -> tuple[Mapping, dict[str, Any], float, float]:
        """One pass: sets each leaf's `.grad`; returns the values, the gradients (the leaves'
        then the retained ones) and the forward and backward times in ms."""
        lazy = leaves.__class__ is _Leaves
        outs, times = self.schedule.run(*[leaves.arrays[n] if lazy else leaves[n]._data for n in self.leaf_names])
        grads = {name: _tensor(ref, outs, leaves) for name, ref in self.grads.items()}
        if lazy:
            leaves.set_grads(grads)
        else:
            for name, grad in grads.items():
                leaves[name].grad = grad
        grads.update((name, _tensor(ref, outs, leaves)) for name, ref in self.retained.items())
        forward_ms = (times["backward"] - times["forward"]) * 1e3
        backward_ms = (times["end"] - times["backward"]) * 1e3
        return _Values(self.values, outs, leaves), grads, forward_ms, backward_ms


class _Leaves(Mapping):
    """A replayed run's leaves: the arrays its passes read, made into tensors when looked at —
    a copy of an array shared with the plan, the array itself otherwise (as `make_leaves`)."""
    __slots__ = ("arrays", "_shared", "_kinds", "_made", "_grads")

    def __init__(self, arrays: dict, shared: frozenset, kinds: dict):
        self.arrays, self._shared, self._kinds, self._made, self._grads = arrays, shared, kinds, {}, {}

    def set_grads(self, grads: dict) -> None:
        self._grads = grads
        for name, t in self._made.items():
            if name in grads:
                t.grad = grads[name]

    def __getitem__(self, name):
        made = self._made.get(name)
        if made is None:
            array = self.arrays[name]
            device, keys, requires_grad = self._kinds[name]
            made = self._made[name] = Tensor._make(np.array(array) if name in self._shared else array, device, keys)
            if requires_grad:
                made.requires_grad_(True)
                made.grad = self._grads.get(name)
        return made

    def __iter__(self):
        return iter(self.arrays)

    def __len__(self):
        return len(self.arrays)


def _tensor(ref, outs, leaves):
    """A ref as a tensor: ('slot', i, device, key), ('leaf', name), ('constant', array, device, key), None."""
    if ref is None:
        return None
    kind = ref[0]
    if kind == "slot":
        return Tensor._make(outs[ref[1]], ref[2], ref[3])
    if kind == "leaf":
        return leaves[ref[1]]
    if kind == "constant":
        return Tensor._make(ref[1].copy(), ref[2], ref[3])     # each pass gets its own, as from the engine
    return ref[1]                                               # ('value', anything else)


class _Values(Mapping):
    """A replayed pass's node values, made into tensors when looked at."""
    __slots__ = ("_refs", "_outs", "_leaves", "_made")

    def __init__(self, refs, outs, leaves):
        self._refs, self._outs, self._leaves, self._made = refs, outs, leaves, {}

    def __getitem__(self, name):
        made = self._made
        if name in made:
            return made[name]
        ref = self._refs[name]
        value = made[name] = (tuple(_tensor(r, self._outs, self._leaves) for r in ref)
                              if ref.__class__ is tuple and ref and ref[0].__class__ is tuple
                              else _tensor(ref, self._outs, self._leaves))
        return value

    def __iter__(self):
        return iter(self._refs)

    def __len__(self):
        return len(self._refs)


def eligible(graph, leaves: Mapping[str, Any], *, profile: bool, anomaly: bool) -> str | None:
    """Why this run cannot be replayed, or None."""
    if profile:
        return "profiling looks at every Node"
    if anomaly:
        return "anomaly mode looks at every Node"
    if leaves.__class__ is not _Leaves and any(t._device.type != "cpu" for t in leaves.values()):
        return "replay runs on the CPU only"        # (_Leaves: a replay was recorded, so on the CPU)
    return None


def record_pass(runner, leaves: dict[str, Any]):
    """Run one pass through the engine, recorded. Returns (env, forward ms, backward ms,
    Replay or None, why not)."""
    recorder = Recorder()
    names = list(leaves)
    for name in names:
        recorder.bind(leaves[name]._data)
    generator, state = _generator_state()
    with recorder:
        recorder.mark("forward")
        t0 = time.perf_counter()
        env = runner.forward(leaves)
        t1 = time.perf_counter()
        recorder.mark("backward")
        runner.retain(env)
        runner.backward(env)
        recorder.mark("end")
        t2 = time.perf_counter()
    forward_ms, backward_ms = (t1 - t0) * 1e3, (t2 - t1) * 1e3
    replay, reason = None, recorder.reason
    if reason is None:
        now, now_state = _generator_state()
        if now is not generator or now_state != state:
            reason = "random values were drawn from agrad's global generator"
        elif len(recorder.lines) > MAX_STEPS:
            reason = f"more than {MAX_STEPS:,} kernel calls"
    if reason is None:
        try:
            replay = _build(recorder, runner, names, leaves, env)
        except ValueError as exc:
            reason = str(exc)
    return env, forward_ms, backward_ms, replay, reason


def _build(recorder: Recorder, runner, names, leaves, env) -> Replay:
    leaf_of = {id(t): name for name, t in leaves.items()}
    outputs: list = []
    position: dict = {}

    def ref(value):
        if value is None:
            return None
        if not isinstance(value, Tensor):
            return ("value", value)
        name = leaf_of.get(id(value))
        if name is not None:
            return ("leaf", name)
        data = value._data
        if data.__class__ is not np.ndarray:
            raise ValueError("a value is not a NumPy array")
        n = recorder.slot_of.get(id(data))
        if n is None:
            return ("constant", data.copy(), value._device, value._keys)
        i = position.get(n)
        if i is None:
            i = position[n] = len(outputs)
            outputs.append(data)
        return ("slot", i, value._device, value._keys)

    values = {name: tuple(ref(v) for v in value) if value.__class__ is tuple else ref(value)
              for name, value in env.items()}
    spec = runner.spec
    grads = {name: ref(leaves[name].grad) for name in spec.inputs if name in leaves and leaves[name].requires_grad}
    retained = {name: ref(env[name].grad) for name in runner.graph.retained()}
    not_retained = [owner for owner in spec.owners()
                    if owner not in grads and owner not in retained and not isinstance(env.get(owner), tuple)
                    and getattr(env.get(owner), "requires_grad", False)]
    schedule = recorder.schedule(outputs)
    kinds = {name: (leaves[name]._device, leaves[name]._keys, leaves[name].requires_grad) for name in names}
    return Replay(schedule, names, values, grads, retained, not_retained, kinds,
                  _shared(runner.graph, leaves, [n for i, n in enumerate(names) if i not in schedule.private_inputs]))


def _shared(graph, leaves, candidates) -> frozenset:
    """The leaves a replay may read from their plan's memory-mapped array itself: the array the
    engine's leaf mapped again (or copied), unchanged by the pass."""
    shared = []
    for name in candidates:
        plan, data = graph.leaves.get(name), leaves[name]._data
        source = getattr(plan, "array", None)
        if source is None or data.__class__ is not np.ndarray:
            continue
        # NOTE: a kernel may write into an argument in place (batch_norm's running stats), so
        # the values are compared; a private map of the plan's file is compared with the file.
        unchanged = equals_its_file(source, data)
        if unchanged is None:
            unchanged = source.dtype == data.dtype and source.shape == data.shape and \
                source.strides == data.strides and np.array_equal(source, data)
        if unchanged:
            shared.append(name)
    return frozenset(shared)
