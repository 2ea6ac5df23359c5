"""Recording the backend kernel calls of one pass, to replay them as straight-line code.

A pass through the engine (forward, backward, gradient accumulation, un-broadcasting)
ends in backend kernels: array functions called on arrays. While a `Recorder` is
`ACTIVE`, every backend kernel call (engine/ops/registry.py), every cast that type
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
- a single ufunc writes into an operand that dies there (`out=`), and takes a Python
  number as a NumPy scalar of the result's dtype (the cast NumPy would make).

What the steps cannot express makes the pass unreplayable (`unreplayable(reason)`):
writes into an array outside a kernel (in-place ops), a kernel call from another
thread, accumulation into a constant. Callers also refuse what they know of (hooks,
anomaly mode, random draws from the global generator). `ACTIVE` is None in the normal
path, so recording costs one check per kernel call.
"""
from __future__ import annotations

import dis
import operator
import threading
import time
import types
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


class _Step:
    """One line of the schedule: `source`, or for a kernel with one array result, the call
    `fn(*args)` (argument names `vN`/`cN`) that `Schedule` writes out or inlines."""
    __slots__ = ("outs", "reads", "source", "fn", "args", "wrap", "copy_of")

    def __init__(self, outs, reads, source=None, fn=None, args=None, wrap=False, copy_of=None):
        self.outs, self.reads, self.source = outs, reads, source
        self.fn, self.args, self.wrap = fn, args, wrap      # wrap: the result goes through asarray
        self.copy_of = copy_of          # the slot this step copies, layout and all (a clone), or None


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
        if fn is _clone_kernel() and len(after) >= 1 and after[0].__class__ is _ndarray:
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
        self.lines.append(_Step((), tuple(reads), source))

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
        return Schedule(self.lines, self.inputs, out_slots, self.constants, self.marks, self.owner, self.meta)


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and \
        bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


_CLONE = []


def _clone_kernel():
    """The clone op's backend kernel (a copy in the source's layout), looked up on first use."""
    if not _CLONE:
        from ..ops.inplace import _clone_kernel as kernel
        _CLONE.append(kernel)
    return _CLONE[0]


# ---- kernels written inline ------------------------------------------------------------------

_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
              "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
              ">>": operator.rshift, "<": operator.lt, "<=": operator.le, "==": operator.eq,
              "!=": operator.ne, ">": operator.gt, ">=": operator.ge}
_SKIP = {"RESUME", "NOP", "CACHE", "PUSH_NULL", "PRECALL", "NOT_TAKEN", "TO_BOOL", "EXTENDED_ARG"}
_JUMP_IF = {"POP_JUMP_IF_FALSE": False, "POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_IF_TRUE": True,
            "POP_JUMP_FORWARD_IF_TRUE": True}
_NO_EXPRESSION, _CONDITIONAL = object(), object()
# code object -> its tree, _NO_EXPRESSION, or _CONDITIONAL: then (code, the constants' keys) -> tree
_expressions: dict = {}


class _NotConstant(Exception):
    pass


def _key(value):
    """A dictionary key for a constant: repr tells -0.0 from 0.0 (equal as keys); else identity."""
    return (type(value), repr(value)) if isinstance(value, (int, float, str, type(None))) else id(value)


def _expression(fn, known: dict):
    """The expression a kernel returns, as a tree over its parameters — ('arg', i), ('const',
    value), ('attr', tree, name), ('op', symbol, left, right), ('neg', tree), ('call', tree,
    args, keywords) — when it is a function of one `return` expression and nothing else: no
    globals, closures, defaults, loops or assignments; a conditional expression only on the
    arguments in `known` ({position: value}: the schedule's constants), decided here. Else None:
    the kernel is called."""
    code = getattr(fn, "__code__", None)
    if code is None or fn.__closure__ or fn.__defaults__ or fn.__kwdefaults__ or \
            code.co_flags & (0x04 | 0x08) or code.co_kwonlyargcount:     # *args, **kwargs
        return None
    tree = _expressions.get(code)
    if tree is None:
        tree = _expressions[code] = _decompiled(code, {})
    if tree is _CONDITIONAL:        # decided by the constants it is given: one tree per set of them
        key = (code, tuple((i, _key(v)) for i, v in sorted(known.items())))
        tree = _expressions.get(key)
        if tree is None:
            tree = _expressions[key] = _decompiled(code, known)
    return tree if tree.__class__ is tuple else None


def _decompiled(code, known: dict):
    try:
        tree = _decompile(code, known)
    except _NotConstant:
        return _NO_EXPRESSION if known else _CONDITIONAL
    except (ValueError, IndexError, KeyError, TypeError, ArithmeticError, AttributeError):
        return _NO_EXPRESSION
    return _NO_EXPRESSION if tree is None else tree


def _fold(tree, known: dict):
    """The value of a condition over constant arguments (no calls), or _NotConstant."""
    kind = tree[0]
    if kind == "arg":
        if tree[1] not in known:
            raise _NotConstant
        return known[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "op":
        return _OPERATORS[tree[1]](_fold(tree[2], known), _fold(tree[3], known))
    if kind == "neg":
        return -_fold(tree[1], known)
    raise _NotConstant


def _decompile(code, known: dict):
    params = code.co_varnames[:code.co_argcount]
    stack: list = []
    names = ()                                  # KW_NAMES: the keywords of the next call
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: i for i, ins in enumerate(instructions)}
    i = 0
    while True:
        ins = instructions[i]
        i += 1
        op = ins.opname
        if op in _SKIP:
            continue
        if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW",
                  "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            for name in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)):
                stack.append(("arg", params.index(name)))          # ValueError: not a parameter
        elif op in ("LOAD_CONST", "LOAD_SMALL_INT"):
            stack.append(("const", ins.argval))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            stack.append(("attr", stack.pop(), ins.argval))
        elif op in ("BINARY_OP", "COMPARE_OP"):
            symbol = ins.argrepr.removeprefix("bool(").removesuffix(")")
            if symbol not in _OPERATORS:
                return None
            right, left = stack.pop(), stack.pop()
            stack.append(("op", symbol, left, right))
        elif op == "UNARY_NEGATIVE":
            stack.append(("neg", stack.pop()))
        elif op in _JUMP_IF:
            if bool(_fold(stack.pop(), known)) == _JUMP_IF[op]:
                i = at[ins.argval]
        elif op in ("JUMP_FORWARD", "JUMP"):
            if ins.argval <= ins.offset:
                return None
            i = at[ins.argval]
        elif op == "KW_NAMES":
            names = code.co_consts[ins.arg]
        elif op in ("CALL", "CALL_KW"):
            if op == "CALL_KW":
                kind, names = stack.pop()
                if kind != "const":
                    return None
            n = ins.arg
            args = stack[len(stack) - n:] if n else []
            del stack[len(stack) - n:]
            positional = args[:n - len(names)]
            keywords = tuple(zip(names, args[n - len(names):]))
            stack.append(("call", stack.pop(), tuple(positional), keywords))
            names = ()
        elif op == "RETURN_VALUE":
            return stack.pop() if len(stack) == 1 else None
        else:
            return None


class _Inliner:
    """Writes expression trees out as source over a schedule's names; constants (and a module
    argument's attributes, bound once) go into its namespace."""

    def __init__(self, constants: list):
        self.constants = constants
        self.values = {f"c{i}": c for i, c in enumerate(constants)}
        self._bound: dict = {}     # key of a value -> its name

    def name(self, value) -> str:
        key = _key(value)
        name = self._bound.get(key)
        if name is None:
            name = self._bound[key] = f"k{len(self._bound)}"
            self.values[name] = value
        return name

    def source(self, tree, args: list) -> str:
        kind = tree[0]
        if kind == "arg":
            return args[tree[1]]
        if kind == "const":
            return self.name(tree[1])
        if kind == "attr":
            inner = tree[1]
            if inner[0] == "arg" and args[inner[1]] in self.values and \
                    isinstance(self.values[args[inner[1]]], types.ModuleType):
                return self.name(getattr(self.values[args[inner[1]]], tree[2]))   # xp.multiply, bound once
            return f"{self.source(inner, args)}.{tree[2]}"
        if kind == "op":
            return f"({self.source(tree[2], args)} {tree[1]} {self.source(tree[3], args)})"
        if kind == "neg":
            return f"(-{self.source(tree[1], args)})"
        callee, positional, keywords = tree[1], tree[2], tree[3]
        written = [self.source(a, args) for a in positional] + [f"{k}={self.source(v, args)}" for k, v in keywords]
        return f"{self.source(callee, args)}({', '.join(written)})"


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
    """A recorded pass compiled to one function: `run(*input_arrays) -> (outputs, mark_times)`.
    `private_inputs`: the positions of the inputs whose memory a step writes into or an output
    shares — the only ones a run must be given arrays of their own for (a kernel that writes
    into an argument it was given is not seen here: the caller compares such inputs itself)."""
    __slots__ = ("run", "steps", "inlined", "stolen", "reused", "private_inputs")

    def __init__(self, lines, inputs, outputs, constants, marks, owner, meta):
        self.steps = len(lines)
        shared = {owner[step.reads[0]] for step in lines if not step.outs and step.reads}    # written
        shared.update(owner[s] for s in outputs)
        self.private_inputs = frozenset(i for i, s in enumerate(inputs) if owner[s] in shared)
        memory = _Memory(lines, inputs, outputs, owner)
        inliner = _Inliner(constants)
        keep = set(outputs)
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
        for i, step in enumerate(lines):
            for name in at_mark.get(i, ()):
                body.append(f"t{len(mark_names)} = clock()")
                mark_names.append(name)
            if step.source is not None:
                body.append(step.source)
            elif step.copy_of is not None and memory.dies_with(step.copy_of, i):
                body.append(f"v{step.outs[0]} = v{step.copy_of}")      # the copy is its dead source
                memory.join(step.outs[0], step.copy_of, i)
                self.stolen += 1
            else:
                body.append(f"v{step.outs[0]} = {self._call(step, i, inliner, memory, meta)}")
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
        namespace = dict(inliner.values)
        namespace.update(asarray=np.asarray, clock=time.perf_counter)
        exec(compile(source, "<agrad replay>", "exec"), namespace)   # noqa: S102 - source built above
        names = tuple(mark_names)
        fn = namespace["replay"]

        def run(*arrays):
            outs, times = fn(*arrays)
            return outs, dict(zip(names, times))
        self.run = run

    def _call(self, step, i: int, inliner: _Inliner, memory: _Memory, meta: list) -> str:
        """The source of a kernel step's call: inline where the kernel is one expression; a single
        ufunc then gets a Python number as a NumPy scalar of the result's float dtype (the cast
        NumPy makes itself) and writes into an operand that dies here, of the result's layout."""
        known = {j: inliner.values[a] for j, a in enumerate(step.args) if a in inliner.values}
        tree = _expression(step.fn, known)
        if tree is None or len(step.args) != step.fn.__code__.co_argcount:
            call = f"{inliner.name(step.fn)}({', '.join(step.args)})"
            return f"asarray({call})" if step.wrap else call
        self.inlined += 1
        ufunc = None if step.wrap else _ufunc_call(tree, step.args, inliner.values)
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
        written, into = [], None
        for name, slot, value in zip(names, slots, values):
            if typed and slot is None and abs(value) <= float(np.finfo(dtype).max):
                name = inliner.name(dtype.type(value))      # (a bool is no int here: its class is bool)
            elif slot is not None and into is None and meta[slot] == meta[out] and memory.dead_after(slot, i):
                into = slot
            written.append(name)
        if into is not None:
            memory.join(out, into, i)
            self.reused += 1
            written.append(f"out=v{into}")
        return f"{inliner.name(ufunc)}({', '.join(written)})"
