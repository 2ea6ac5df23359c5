"""Recording the backend kernel calls of one pass, to replay them as straight-line code.

A pass through the engine (forward, backward, gradient accumulation, un-broadcasting)
ends in backend kernels: array functions called on arrays. While a `Recorder` is
`watchers.recorder`, every backend kernel call (engine/ops/registry.py), every cast that type
promotion made and every in-place gradient accumulation (AccumulateGrad) is appended
to its schedule, over slots: each array a step makes gets a slot; an array bound with
`bind` is an input of the replay; any other array a step reads is a constant of it.
`Schedule` turns the steps into one Python function of the inputs, each slot a local
variable deleted after its last use — no Tensor, Node or dispatcher work — and on the
way does what the engine, one op at a time, cannot (each exact: the replay's results
stay the engine's, bit for bit):
- a kernel that is one expression over its arguments (`lambda xp, a, b: xp.multiply(a, b)`)
  is written inline, its NumPy functions bound once (`_inline`);
- a copy whose source is dead after it (AccumulateGrad's clone of a transposed `mm`
  result that the engine still held) becomes the source itself;
- a single ufunc writes into an operand that dies there, or into the array an in-place
  op would copy its result into (`out=`), and takes a Python number as a NumPy scalar of
  the result's dtype (the cast NumPy would make);
- a kernel whose checks look at shapes and dtypes only runs without them (`fn.replay_kernel`):
  the replay's shapes and dtypes are the recorded ones, which passed them.

What the steps cannot express makes the pass unreplayable (`unreplayable(reason)`):
writes into an array outside a kernel (in-place ops), a kernel call from another
thread, accumulation into a constant, a tensor's values read on the host (`read`:
`item()`, `bool()`, `tolist()`, ... — whatever was decided from them would be frozen).
Numbers the engine computes on the host from live state (`watchers.host_numbers`: an
optimizer's step size from its lr and step count) are steps of their own: the replay
calls their function again at the same point, and the kernels take its new numbers.
A caller may stop the replay where it must look at a value (`pause`: the replay yields
those arrays there, a training step's loss before its backward pass). Callers also refuse what they know of (hooks,
anomaly mode, random draws from the global generator). `ACTIVE` is None in the normal
path, so recording costs one check per kernel call.
"""
from __future__ import annotations

import threading
import time
import types
import weakref

import numpy as np

from .. import codegen, watchers
from ..ops.conversion import _clone_kernel
from .bytecode import _NO_EXPRESSION, _expression, _Inliner

__all__ = ["Recorder", "Schedule"]

_ndarray = np.ndarray



class _Step:
    """One line of the schedule: `source`, or for a kernel with one array result, the call
    `fn(*args)` (argument names `vN`/`cN`) that `Schedule` writes out or inlines."""
    __slots__ = ("outs", "reads", "source", "fn", "args", "wrap", "copy_of", "writes", "stored")

    def __init__(self, outs, reads, source=None, fn=None, args=None, wrap=False, copy_of=None, writes=False,
                 stored=None):
        self.outs, self.reads, self.source = outs, reads, source
        self.fn, self.args, self.wrap = fn, args, wrap      # wrap: the result goes through asarray
        self.copy_of = copy_of          # the slot this step copies, layout and all (a clone), or None
        self.writes = writes            # the step writes into the memory of reads[0]
        self.stored = stored            # for `reads[0][...] = reads[1]`: the slot stored


class Recorder:
    """The steps of one pass. Use as a context manager around the pass."""

    def __init__(self):
        self.lines: list = []          # _Step, in order
        self.slot_of: dict = {}        # id(array) -> slot
        self.owner: list = []          # slot -> the slot (or ('memory', id)) whose memory it uses
        self.meta: list = []           # slot -> (shape, dtype, strides)
        self._alive: list = []         # weak references whose callbacks forget a dead array's id
        self.inputs: list = []         # slots bound as inputs, in order
        self.constants: list = []      # values read by the steps that no step made
        self._constant_of: dict = {}   # id(value) -> index in constants
        self._snapshots: list = []      # (constant array, its value when first read)
        self.reason: str | None = None
        self.marks: dict = {}          # name -> number of steps recorded when it was marked
        self.scalar_of: dict = {}      # id(float) -> n: a number of a host step, `sN` in the schedule
        self._numbers: list = []       # those floats, kept alive so that their ids stay theirs
        self.paused: list = []         # the slots each pause yields, in order
        self._in_host = False          # a host step's function is running
        self._thread = threading.get_ident()
        self._previous = None

    def __enter__(self):
        self._previous, watchers.recorder = watchers.recorder, self
        return self

    def __exit__(self, *exc):
        watchers.recorder = self._previous

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
        """('slot', n) for an array a step made or an input; ('scalar', n) for a number a host
        step made; ('constant', i) otherwise."""
        if value.__class__ is _ndarray or isinstance(value, _ndarray):
            slot = self.slot_of.get(id(value))
            if slot is not None:
                return "slot", slot
        elif value.__class__ is float:
            n = self.scalar_of.get(id(value))
            if n is not None:
                return "scalar", n
        elif value.__class__ in (list, tuple) and any(id(v) in self.scalar_of for v in value if v.__class__ is float):
            self.unreplayable("a host number was given to a kernel inside a list")
        return "constant", self._constant(value)

    def read(self, what: str) -> None:
        """A tensor's values were read on the host: outside a host step, whatever the engine
        decides from them would be frozen in the replay."""
        if not self._in_host:
            self.unreplayable(f"{what} read a tensor's values while the pass was recorded (the replay "
                              "would freeze what was decided from them)")

    def host(self, fn, args: tuple) -> tuple:
        """`fn(*args)`, a tuple of numbers computed on the host from live state (the arguments
        are kept and are live objects: an optimizer's param group, its step-count tensor); the
        replay calls `fn(*args)` again here, and the kernels that take one of these floats
        take the new one. A number that is not a float cannot be told apart from a constant."""
        if threading.get_ident() != self._thread:
            self.unreplayable("a host number was computed on another thread")
            return fn(*args)
        self._in_host = True
        try:
            values = fn(*args)
        finally:
            self._in_host = False
        if values.__class__ is not tuple or any(v.__class__ is not float for v in values):
            self.unreplayable("a host computation gave something other than a tuple of floats")
            return values
        names = []
        for v in values:
            n = self.scalar_of[id(v)] = len(self._numbers)
            self._numbers.append(v)
            names.append(f"s{n}")
        call = f"{self._name('constant', self._constant(fn))}(*{self._name('constant', self._constant(args))})"
        self.lines.append(_Step((), (), f"{', '.join(names)}{',' if len(names) == 1 else ''} = {call}"))
        return values

    def pause(self, arrays: list) -> None:
        """The replay stops here and yields `arrays` (each made by a step); it goes on when the
        caller asks for the next item, and a caller that does not ask leaves the rest undone."""
        reads = []
        for a in arrays:
            kind, n = self.ref(a)
            if kind != "slot":
                self.unreplayable("a value the replay pauses at is not made by it")
                return
            reads.append(n)
        self.paused.append(tuple(reads))
        self.lines.append(_Step((), tuple(reads), f"yield ({''.join(f'v{n}, ' for n in reads)})"))

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
        # a kernel whose checks look at shapes and dtypes only names what a replay calls in its place
        fn = getattr(fn, "replay_kernel", fn)
        reads = []
        args = [self._name("constant", self._constant(h)) for h in head]
        if self._in_host:
            self.unreplayable("a kernel ran inside a host computation")
            return
        for b, a in zip(before, after):
            if a is not b and b.__class__ is float and id(b) in self.scalar_of:
                self.unreplayable("type promotion converted a host number")
            if a is not b and b.__class__ is _ndarray and getattr(a, "dtype", None) is not None:
                slot = self._cast(b, a)                    # promotion cast its argument: a step of its own
                reads.append(slot)
                args.append(f"v{slot}")
            else:
                args.append(self._arg(a, reads))           # (a Python number made a NumPy scalar: a constant)
        if result.__class__ is tuple:
            call = f"{self._name('constant', self._constant(fn))}({', '.join(args)})"
            outs = [self._new_slot(t._data) for t in result]
            names = [f"v{s}" for s in outs]
            source = f"{', '.join(names)}{',' if len(names) == 1 else ''} = {call}"
            source += "".join(f"; {n} = asarray({n})" for n, o in zip(names, out) if o.__class__ is not _ndarray)
            self.lines.append(_Step(tuple(outs), tuple(reads), source))
            return
        data = result._data
        slot = self._new_slot(data)
        copy_of = None
        if fn is _clone_kernel and len(after) >= 1 and after[0].__class__ is _ndarray:
            source = after[0]
            if out is data and data.base is None and source.shape == data.shape and \
                    source.strides == data.strides and source.dtype == data.dtype and id(source) in self.slot_of:
                copy_of = self.slot_of[id(source)]      # the copy is the source, layout and all
        self.lines.append(_Step((slot,), tuple(reads), fn=fn, args=args, wrap=out.__class__ is not _ndarray,
                                copy_of=copy_of))

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
        # a whole array stored (an in-place op's result): the step that made it may write it here itself
        stored = reads[1] if template.startswith("{}[...]") and len(reads) == 2 else None
        self.lines.append(_Step((), tuple(reads), source, writes=True, stored=stored))

    def unreplayable(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    # -- helpers ---------------------------------------------------------------------
    def _new_slot(self, array) -> int:
        # NOTE: weakly: holding every array of the pass would keep its whole memory until the end;
        # a dead array's id is forgotten before it can be reused (no later step can read it)
        slot = len(self._alive)
        slot_of = self.slot_of
        self.owner.append(self._owner(array, slot))
        self.meta.append((array.shape, array.dtype, array.strides))
        key = id(array)
        slot_of[key] = slot

        def forget(_, key=key, slot=slot):
            if slot_of.get(key) == slot:
                del slot_of[key]
        self._alive.append(weakref.ref(array, forget))
        return slot

    def _owner(self, array, slot):
        """What holds `array`'s memory: the slot of the array it views (or is), itself, or
        ('memory', id) for memory no slot holds. Two slots with one owner may share memory."""
        known = self.slot_of.get(id(array))
        if known is not None:               # a kernel returned an array a step made (a no-op reshape)
            return self.owner[known]
        base = array
        while isinstance(base.base, _ndarray):
            base = base.base
        if base is array:
            return slot
        known = self.slot_of.get(id(base))
        return self.owner[known] if known is not None else ("memory", id(base))

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
        return f"v{n}" if kind == "slot" else f"s{n}" if kind == "scalar" else f"c{n}"

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
        self.lines.append(_Step((slot,), tuple(reads), f"v{slot} = {source}.astype({dtype})"))
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
        return Schedule(self.lines, self.inputs, out_slots, self.constants, self.marks, self.owner, self.meta,
                        [s for reads in self.paused for s in reads])


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and \
        bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))




class _Memory:
    """Which slots share memory (their owners, joined as copies are stolen and results written
    into dead operands) and the last step that reads each memory (outputs: never dead)."""

    def __init__(self, lines, inputs, outputs, owner):
        self.owner, self._parent = owner, {}
        self._whole: set = set()        # slots that came to hold all of another slot's memory
        self.inputs = {owner[s] for s in inputs}
        last: dict = {}
        for i, step in enumerate(lines):
            for s in step.reads:
                last[owner[s]] = i
        for s in outputs:
            last[owner[s]] = len(lines)
        self.last = last

    def find(self, slot):
        root = self.owner[slot]
        while root in self._parent:
            root = self._parent[root]
        return root

    def dead_after(self, slot, i: int) -> bool:
        """Whether `slot` is all of a memory that a step made and no step reads after step i."""
        root = self.find(slot)
        return (root == slot or slot in self._whole) and root not in self.inputs and self.last.get(root) == i

    def dies_with(self, slot, i: int) -> bool:
        """Whether `slot` views memory that a step made and no step reads after step i."""
        root = self.find(slot)
        return isinstance(root, int) and root not in self.inputs and self.last.get(root) == i

    def join(self, slot, into, i: int) -> None:
        """From step i on, `slot` holds the memory of `into` (all of it if `into` did)."""
        mine, theirs = self.find(slot), self.find(into)
        if theirs == into or into in self._whole:
            self._whole.add(slot)
        if mine != theirs:
            self._parent[mine] = theirs
            self.last[theirs] = max(i, self.last.get(mine, i))


def _ufunc_call(tree, args: list, values: dict):
    """(ufunc, argument trees) when `tree` is one call of a NumPy ufunc of one output bound on a
    module argument (`xp.multiply(a, b)`), with positional arguments only; else None."""
    if tree[0] != "call" or tree[3] or tree[1][0] != "attr" or tree[1][1][0] != "arg":
        return None
    module = values.get(args[tree[1][1][1]])
    ufunc = getattr(module, tree[1][2], None) if isinstance(module, types.ModuleType) else None
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or len(tree[2]) != ufunc.nin:
        return None
    return ufunc, tree[2]


class Schedule:
    """A recorded pass compiled to one function: `run(*input_arrays) -> (outputs, mark_times)`;
    with pauses (`Recorder.pause`), `run(*input_arrays)` is a generator that yields each
    pause's arrays and then (outputs, mark_times).
    `private_inputs`: the positions of the inputs whose memory a step writes into or an output
    shares — the only ones a run must be given arrays of their own for (a kernel that writes
    into an argument it was given is not seen here: the caller compares such inputs itself)."""
    __slots__ = ("run", "steps", "inlined", "stolen", "reused", "private_inputs", "pauses")

    def __init__(self, lines, inputs, outputs, constants, marks, owner, meta, paused=()):
        self.steps = len(lines)
        self.pauses = sum(1 for step in lines if step.source is not None and step.source.startswith("yield "))
        shared = {owner[step.reads[0]] for step in lines if step.writes}    # written
        shared.update(owner[s] for s in outputs)
        self.private_inputs = frozenset(i for i, s in enumerate(inputs) if owner[s] in shared)
        # what a pause yields stays as it was: the caller may hold it while the replay goes on
        memory = _Memory(lines, inputs, list(outputs) + list(paused), owner)
        inliner = _Inliner(constants)
        keep = set(outputs) | set(paused)
        last = {}
        for i, step in enumerate(lines):
            for s in step.reads:
                last[s] = i
            for s in step.outs:
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
        self.inlined = self.stolen = self.reused = 0
        written = set()          # the steps whose store the step before them made (`out=`)
        for i, step in enumerate(lines):
            for name in at_mark.get(i, ()):
                body.append(f"t{len(mark_names)} = clock()")
                mark_names.append(name)
            if i in written:
                pass
            elif step.source is not None:
                body.append(step.source)
            elif step.copy_of is not None and memory.dies_with(step.copy_of, i):
                body.append(f"v{step.outs[0]} = v{step.copy_of}")      # the copy is its dead source
                memory.join(step.outs[0], step.copy_of, i)
                self.stolen += 1
            else:
                store = lines[i + 1] if i + 1 < len(lines) else None
                into = None
                if store is not None and store.stored == step.outs[0] and step.outs[0] not in keep and \
                        last.get(step.outs[0]) == i + 1 and meta[store.reads[0]] == meta[step.outs[0]] and \
                        not at_mark.get(i + 1):
                    into = store.reads[0]     # `v[...] = result` after it: the result is written there
                call = self._call(step, i, inliner, memory, meta, into)
                if into is not None and call.endswith(f"out=v{into})"):
                    written.add(i + 1)
                body.append(f"v{step.outs[0]} = {call}")
            gone = dying.get(i)
            if gone:
                body.append(f"del {', '.join(f'v{s}' for s in sorted(set(gone)))}")
        for name in at_mark.get(len(lines), ()):
            body.append(f"t{len(mark_names)} = clock()")
            mark_names.append(name)
        times = ", ".join(f"t{i}" for i in range(len(mark_names)))
        end = "yield" if self.pauses else "return"
        body.append(f"{end} ({''.join(f'v{s}, ' for s in outputs)}), ({times}{',' if mark_names else ''})")
        params = ", ".join(f"v{s}" for s in inputs)
        source = f"def replay({params}):\n    " + "\n    ".join(body) + "\n"
        namespace = dict(inliner.values)
        namespace.update(asarray=np.asarray, clock=time.perf_counter)
        fn = codegen.define(source, namespace, "<agrad replay>", "replay")
        names = tuple(mark_names)
        if self.pauses:
            self.run = fn
            return

        def run(*arrays):
            outs, times = fn(*arrays)
            return outs, dict(zip(names, times))
        self.run = run

    def _call(self, step, i: int, inliner: _Inliner, memory: _Memory, meta: list, store=None) -> str:
        """The source of a kernel step's call: inline where the kernel is one expression; a single
        ufunc then gets a Python number as a NumPy scalar of the result's float dtype (the cast
        NumPy makes itself) and writes into `store` (the array the next step would copy its
        result into, of the result's layout) or else an operand that dies here, of its layout."""
        known = {j: inliner.values[a] for j, a in enumerate(step.args) if a in inliner.values}
        tree = _expression(step.fn, known)
        if tree is None or len(step.args) != step.fn.__code__.co_argcount:
            call = f"{inliner.name(step.fn)}({', '.join(step.args)})"
            return f"asarray({call})" if step.wrap else call
        self.inlined += 1
        ufunc = None if step.wrap and store is None else _ufunc_call(tree, step.args, inliner.values)
        if ufunc is None:
            call = inliner.source(tree, step.args)
            return f"asarray({call})" if step.wrap else call
        ufunc, operands = ufunc
        out = step.outs[0]
        shape, dtype, strides = meta[out]
        names = [inliner.source(t, step.args) for t in operands]
        slots = [int(n[1:]) if t[0] == "arg" and n[0] == "v" else None for t, n in zip(operands, names)]
        values = [inliner.values.get(n, _NO_EXPRESSION) for n in names]
        # every other operand an array of the result's dtype: the number is cast to it (NEP 50)
        typed = dtype.kind == "f" and all(meta[s][1] == dtype if s is not None else v.__class__ in (int, float)
                                          for s, v in zip(slots, values))
        written, into = [], store
        for name, slot, value in zip(names, slots, values):
            if typed and slot is None and abs(value) <= float(np.finfo(dtype).max):
                name = inliner.name(dtype.type(value))      # (a bool is no int here: its class is bool)
            elif slot is not None and into is None and meta[slot] == meta[out] and memory.dead_after(slot, i):
                into = slot
            written.append(name)
        if into is not None:
            if into != store:
                memory.join(out, into, i)
            self.reused += 1
            written.append(f"out=v{into}")
        return f"{inliner.name(ufunc)}({', '.join(written)})"
