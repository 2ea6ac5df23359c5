"""Recording the backend kernel calls of one pass, to replay them as straight-line code.

A pass through the engine (forward, backward, gradient accumulation, un-broadcasting)
ends in backend kernels: array functions called on arrays. While a `Recorder` is
`ACTIVE`, every backend kernel call (engine/ops/registry.py), every cast that type
promotion made and every in-place gradient accumulation (AccumulateGrad) is appended
to its schedule, over slots: each array a step makes gets a slot; an array bound with
`bind` is an input of the replay; any other array a step reads is a constant of it.
`Schedule.compile` turns the steps into one Python function of the inputs, each slot
a local variable deleted after its last use — no Tensor, Node or dispatcher work.

What the steps cannot express makes the pass unreplayable (`unreplayable(reason)`):
writes into an array outside a kernel (in-place ops), a kernel call from another
thread, accumulation into a constant. Callers also refuse what they know of (hooks,
anomaly mode, random draws from the global generator). `ACTIVE` is None in the normal
path, so recording costs one check per kernel call.
"""
from __future__ import annotations

import threading
import time
import weakref

import numpy as np

__all__ = ["ACTIVE", "Recorder", "Schedule", "unreplayable"]

ACTIVE = None        # the Recorder of the pass being recorded, or None

_ndarray = np.ndarray


def unreplayable(reason: str) -> None:
    """Called where the engine computes something the schedule cannot express."""
    rec = ACTIVE
    if rec is not None and rec.reason is None:
        rec.reason = reason


class Recorder:
    """The steps of one pass. Use as a context manager around the pass."""

    def __init__(self):
        self.lines: list = []          # (output slots, source, slots read)
        self.slot_of: dict = {}        # id(array) -> slot
        self._alive: list = []         # weak references whose callbacks forget a dead array's id
        self.inputs: list = []         # slots bound as inputs, in order
        self.constants: list = []      # values read by the steps that no step made
        self._constant_of: dict = {}   # id(value) -> index in constants
        self._snapshots: list = []      # (constant array, its value when first read)
        self.reason: str | None = None
        self.marks: dict = {}          # name -> number of steps recorded when it was marked
        self._thread = threading.get_ident()
        self._previous = None

    def __enter__(self):
        global ACTIVE
        self._previous, ACTIVE = ACTIVE, self
        return self

    def __exit__(self, *exc):
        global ACTIVE
        ACTIVE = self._previous

    # -- building the schedule ------------------------------------------------------
    def bind(self, array) -> int:
        """`array` becomes an input of the replay (a leaf's data); returns its slot."""
        slot = self._new_slot(array)
        self.inputs.append(slot)
        return slot

    def mark(self, name: str) -> None:
        """Remember where the steps stand (the replay reports the time at each mark)."""
        self.marks[name] = len(self.lines)

    def ref(self, value):
        """('slot', n) for an array a step made or an input; ('constant', i) otherwise."""
        if value.__class__ is _ndarray or isinstance(value, _ndarray):
            slot = self.slot_of.get(id(value))
            if slot is not None:
                return "slot", slot
        return "constant", self._constant(value)

    def arguments(self, arrays: list) -> list:
        """A kernel's arguments before promotion and the call: a copy of the list, and of each array
        no step made, so that a kernel writing into one is found (see `schedule`)."""
        for a in arrays:
            for v in (a if a.__class__ is list else (a,)):
                if v.__class__ is _ndarray and id(v) not in self.slot_of:
                    self._constant(v)
        return arrays[:]

    def kernel(self, fn, head: tuple, before: list, after: list, out, result) -> None:
        """`out = fn(*head, *after)`, where promotion turned `before` into `after`; `result`
        is what the kernel returned (a Tensor, or a tuple of them), holding `out`'s arrays."""
        if threading.get_ident() != self._thread:
            self.unreplayable("a kernel ran on another thread")
            return
        reads = []
        args = [self._name("constant", self._constant(h)) for h in head]
        for b, a in zip(before, after):
            if a is not b and b.__class__ is _ndarray and getattr(a, "dtype", None) is not None:
                slot = self._cast(b, a)                    # promotion cast its argument: a step of its own
                reads.append(slot)
                args.append(f"v{slot}")
            else:
                args.append(self._arg(a, reads))           # (a Python number made a NumPy scalar: a constant)
        call = f"{self._name('constant', self._constant(fn))}({', '.join(args)})"
        if result.__class__ is tuple:
            outs = [self._new_slot(t._data) for t in result]
            names = [f"v{s}" for s in outs]
            source = f"{', '.join(names)}{',' if len(names) == 1 else ''} = {call}"
            source += "".join(f"; {n} = asarray({n})" for n, o in zip(names, out) if o.__class__ is not _ndarray)
            self.lines.append((tuple(outs), source, tuple(reads)))
            return
        slot = self._new_slot(result._data)
        call = call if out.__class__ is _ndarray else f"asarray({call})"
        self.lines.append(((slot,), f"v{slot} = {call}", tuple(reads)))

    def iadd(self, target, value) -> None:
        """`target += value` (AccumulateGrad adding into an existing `.grad`)."""
        self._mutate(target, value, "{} += {}")

    def write(self, target, value) -> None:
        """`target[...] = value` (an in-place op storing its result)."""
        self._mutate(target, value, "{}[...] = {}")

    def _mutate(self, target, value, template: str) -> None:
        if threading.get_ident() != self._thread:
            self.unreplayable("an array was written on another thread")
            return
        kind, n = self.ref(target)
        if kind != "slot":
            self.unreplayable("an array the replay does not make was written in place")
            return
        reads = [n]
        source = template.format(f"v{n}", self._arg(value, reads))
        self.lines.append(((), source, tuple(reads)))

    def unreplayable(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    # -- helpers ---------------------------------------------------------------------
    def _new_slot(self, array) -> int:
        # NOTE: weakly: holding every array of the pass would keep its whole memory until the end;
        # a dead array's id is forgotten before it can be reused (no later step can read it)
        slot = len(self._alive)
        key = id(array)
        slot_of = self.slot_of
        slot_of[key] = slot

        def forget(_, key=key, slot=slot):
            if slot_of.get(key) == slot:
                del slot_of[key]
        self._alive.append(weakref.ref(array, forget))
        return slot

    def _constant(self, value) -> int:
        i = self._constant_of.get(id(value))
        if i is None:
            i = self._constant_of[id(value)] = len(self.constants)
            self.constants.append(value)
            if value.__class__ is _ndarray:
                self._snapshots.append((value, value.copy()))
        return i

    @staticmethod
    def _name(kind, n) -> str:
        return f"v{n}" if kind == "slot" else f"c{n}"

    def _arg(self, value, reads: list) -> str:
        if value.__class__ is list and any(v.__class__ is _ndarray for v in value):
            return "[" + ", ".join(self._arg(v, reads) for v in value) + "]"
        kind, n = self.ref(value)
        if kind == "slot":
            reads.append(n)
        return self._name(kind, n)

    def _cast(self, before, after) -> int:
        reads = []
        source = self._arg(before, reads)
        slot = self._new_slot(after)
        dtype = self._name("constant", self._constant(after.dtype))
        self.lines.append(((slot,), f"v{slot} = {source}.astype({dtype})", tuple(reads)))
        return slot

    # -- the result --------------------------------------------------------------------
    def schedule(self, outputs: list) -> "Schedule":
        """The replay of what was recorded; `outputs` are the arrays it returns (each must be
        a slot: see `ref`)."""
        for array, value in self._snapshots:
            if not _same(array, value):
                # a kernel wrote into an array it was given that no step makes (batch_norm's running
                # stats as a constant): the replay would start the next pass from the written value
                raise ValueError("a constant of the pass was written in place")
        out_slots = []
        for a in outputs:
            kind, n = self.ref(a)
            if kind != "slot":
                raise ValueError("an output is not made by the schedule")
            out_slots.append(n)
        return Schedule(self.lines, self.inputs, out_slots, self.constants, self.marks)


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and \
        bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


class Schedule:
    """A recorded pass compiled to one function: `run(*input_arrays) -> (outputs, mark_times)`."""
    __slots__ = ("run", "steps")

    def __init__(self, lines, inputs, outputs, constants, marks):
        self.steps = len(lines)
        keep = set(outputs)
        last = {}
        for i, (outs, _, reads) in enumerate(lines):
            for s in reads:
                last[s] = i
            for s in outs:
                last.setdefault(s, i)
        dying: dict = {}
        for s, i in last.items():
            if s not in keep:
                dying.setdefault(i, []).append(s)
        at_mark = {}
        for name, i in marks.items():
            at_mark.setdefault(i, []).append(name)
        body = []
        mark_names = []
        for i, (outs, source, reads) in enumerate(lines):
            for name in at_mark.get(i, ()):
                body.append(f"t{len(mark_names)} = clock()")
                mark_names.append(name)
            body.append(source)
            gone = dying.get(i)
            if gone:
                body.append(f"del {', '.join(f'v{s}' for s in sorted(set(gone)))}")
        for name in at_mark.get(len(lines), ()):
            body.append(f"t{len(mark_names)} = clock()")
            mark_names.append(name)
        times = ", ".join(f"t{i}" for i in range(len(mark_names)))
        body.append(f"return ({''.join(f'v{s}, ' for s in outputs)}), ({times}{',' if mark_names else ''})")
        params = ", ".join(f"v{s}" for s in inputs)
        source = f"def replay({params}):\n    " + "\n    ".join(body) + "\n"
        namespace = {f"c{i}": c for i, c in enumerate(constants)}
        namespace.update(asarray=np.asarray, clock=time.perf_counter)
        exec(compile(source, "<agrad replay>", "exec"), namespace)   # noqa: S102 - source built above
        names = tuple(mark_names)
        fn = namespace["replay"]

        def run(*arrays):
            outs, times = fn(*arrays)
            return outs, dict(zip(names, times))
        self.run = run
