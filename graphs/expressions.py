"""Node expressions (`relu(x @ W1 + b1)`) parsed with `ast`, never evaluated.

An expression becomes a list of `Call`s: one per op application, inner ones
first. Nested applications get unnamed intermediates named `h.1`, `h.2`, … and
the outermost carries the node's own name. Every part keeps its character
offset in the expression text so errors can point inside the YAML string.
"""
from __future__ import annotations

import ast
import bisect
import keyword
import operator
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from .diagnostics import Record
from .pytorch_habits import attribute_habit, call_habit

_BINARY_OPS = {ast.Add: ("add", "+"), ast.Sub: ("sub", "-"), ast.Mult: ("mul", "*"),
               ast.Div: ("div", "/"), ast.Pow: ("pow", "**"), ast.MatMult: ("matmul", "@")}
_COMPARE_OPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_UNSUPPORTED_OPERATORS = {ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
                          ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&"}
_UNSUPPORTED_NODES = {
    ast.Attribute: "attribute access", ast.Lambda: "lambda", ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension", ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
    ast.IfExp: "conditional expression", ast.BoolOp: "'and'/'or'", ast.Dict: "dict literal", ast.Set: "set literal",
    ast.Starred: "star-unpacking", ast.NamedExpr: "assignment expression", ast.JoinedStr: "f-string",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
}


class Ref(Record):
    """A tensor named by an input or node. `offset` is None in the structured form."""
    __slots__ = ("name", "offset")

    def __init__(self, name: str, offset: int | None = None):
        self.name = name
        self.offset = offset


@dataclass(frozen=True)
class Slice:
    start: int | None
    stop: int | None
    step: int | None


@dataclass(frozen=True)
class TensorIndex:
    """An index tensor in a subscript (`x[idx]`, `x[:, idx]`): the getitem call's argument
    number `arg`, where its Ref is (so ordering and binding see it as any other use)."""
    arg: int
    name: str


@dataclass(frozen=True)
class Index:
    """The index of a subscript: ints, Slices, None (new axis), Ellipsis, TensorIndex
    (an input's or node's name: an integer or bool tensor) and lists of ints or bools."""
    items: tuple

    def is_single_int(self) -> bool:
        return len(self.items) == 1 and type(self.items[0]) is int

    def __str__(self) -> str:
        def one(item):
            if item is Ellipsis:
                return "..."
            if item is None:
                return "None"
            if isinstance(item, Slice):
                text = f"{'' if item.start is None else item.start}:{'' if item.stop is None else item.stop}"
                return text + (f":{item.step}" if item.step is not None else "")
            if isinstance(item, TensorIndex):
                return item.name
            return str(item)
        return "[" + ", ".join(one(i) for i in self.items) + "]"


@dataclass
class Call:
    """One op application: `name = op(*args, **kwargs)`."""
    name: str
    op: str
    args: list[Any]
    kwargs: dict[str, Any]
    offset: int | None = None                       # where the op (or its operator) is written
    arg_offsets: list[int | None] = field(default_factory=list)
    kwarg_offsets: dict[str, int | None] = field(default_factory=dict)
    intermediate: bool = False                      # an unnamed `d.1` made from a nested expression


class ExpressionError(Exception):
    def __init__(self, code: str, message: str, offset: int, hint: str | None = None):
        super().__init__(message)
        self.code = code                # AG014 syntax, AG015 unsupported construct
        self.message = message
        self.offset = offset            # character offset in the expression text
        self.hint = hint                # what to write instead (a PyTorch habit: graphs/pytorch_habits.py)


class _Offsets:
    """Turns ast's (line, UTF-8 byte column) into a character offset in the text."""

    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.starts = [0]
        for row in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(row) + 1)

    def of(self, lineno: int, byte_col: int) -> int:
        row = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(row.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        return self.of(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.of(node.end_lineno, node.end_col_offset)


class _Parser:
    def __init__(self, target: str, text: str):
        self.target = target
        self.text = text
        self.offsets = _Offsets(text)
        self.calls: list[Call] = []
        self.intermediates = 0

    def fail(self, node: ast.AST, message: str, code: str = "AG015", hint: str | None = None) -> ExpressionError:
        return ExpressionError(code, message, self.offsets.start(node), hint)

    def segment(self, node: ast.AST) -> str:
        """The source text of `node` (a keyword argument: `dim=1`)."""
        if isinstance(node, ast.keyword):
            return f"{node.arg}={self.segment(node.value)}" if node.arg else f"**{self.segment(node.value)}"
        return self.text[self.offsets.start(node):self.offsets.end(node)]

    def habit(self, node: ast.AST) -> ExpressionError | None:
        """A PyTorch habit (`torch.relu(x)`, `h.sum(dim=1)`, `W.T`), with what to write instead."""
        if isinstance(node, ast.Call):
            found = call_habit(node, self.segment)
        elif isinstance(node, ast.Attribute):
            found = attribute_habit(node, self.segment)
        else:
            return None
        if found is None:
            return None
        message, instead = found
        return self.fail(node, message, hint=f"'{instead}'" if instead else None)

    def new_name(self) -> str:
        # Named once its own arguments are recorded, so numbers follow evaluation order.
        self.intermediates += 1
        return f"{self.target}.{self.intermediates}"

    def top(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Name, ast.Constant, ast.List, ast.Tuple)) or self.is_negative_number(node):
            raise self.fail(node, "a node must apply an op (a bare name or literal is not a node; "
                                  "declare constants under `inputs:`)")
        self.emit(node, self.target)

    def emit(self, node: ast.AST, name: str | None) -> str:
        """Record `node`, an op application, as a Call named `name` (a new intermediate if None)."""
        op, offset, args, kwargs = self.application(node)
        arg_values, arg_offsets = [], []
        for arg in args:
            arg_values.append(self.argument(arg))
            arg_offsets.append(self.offsets.start(arg) if isinstance(arg, ast.AST) else offset)
        kw_values, kw_offsets = {}, {}
        for kw in kwargs:
            kw_values[kw.arg] = self.argument(kw.value)
            kw_offsets[kw.arg] = self.offsets.start(kw)
        intermediate = name is None
        name = self.new_name() if intermediate else name
        self.calls.append(Call(name, op, arg_values, kw_values, offset, arg_offsets, kw_offsets, intermediate))
        return name

    def application(self, node: ast.AST):
        """(op, offset, positional args, keywords) of an op-applying expression."""
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) and (habit := self.habit(node)) is not None:
                raise habit
            if not isinstance(node.func, ast.Name):
                what = _UNSUPPORTED_NODES.get(type(node.func), "this callee")
                raise self.fail(node.func, f"{what} is not supported; call an op by its name, e.g. relu(x)")
            seen = set()
            for kw in node.keywords:
                if kw.arg is None:
                    raise self.fail(kw, "**-unpacking of keyword arguments is not supported")
                if kw.arg in seen:
                    raise self.fail(kw, f"keyword argument '{kw.arg}' given twice", "AG014")
                seen.add(kw.arg)
            return node.func.id, self.offsets.start(node.func), list(node.args), list(node.keywords)
        if isinstance(node, ast.BinOp):
            if type(node.op) in _UNSUPPORTED_OPERATORS:
                symbol = _UNSUPPORTED_OPERATORS[type(node.op)]
                raise ExpressionError("AG015", f"operator '{symbol}' is not supported; "
                                      "use + - * / ** @ or call an op", self.operator_offset(node, symbol))
            op, symbol = _BINARY_OPS[type(node.op)]
            return op, self.operator_offset(node, symbol), [node.left, node.right], []
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return "neg", self.offsets.start(node), [node.operand], []
            if isinstance(node.op, ast.UAdd):
                raise self.fail(node, "unary '+' is not supported")
            raise self.fail(node, f"'{'not' if isinstance(node.op, ast.Not) else '~'}' is not supported")
        if isinstance(node, ast.Compare):
            if len(node.ops) > 1:
                raise self.fail(node, "chained comparisons are not supported; use lt/le/gt/ge/eq/ne")
            op = _COMPARE_OPS.get(type(node.ops[0]))
            if op is None:
                raise self.fail(node, "only < <= > >= == != comparisons are supported")
            return op, self.offsets.start(node), [node.left, node.comparators[0]], []
        if isinstance(node, ast.Subscript):
            tensors: list[ast.AST] = []        # index tensors: arguments 2, 3, … of the getitem
            index = self.index(node.slice, tensors)
            return "getitem", self.offsets.end(node.value), [node.value, index, *tensors], []
        raise self.fail(node, f"{_UNSUPPORTED_NODES.get(type(node), type(node).__name__)} is not supported")

    def operator_offset(self, node: ast.BinOp, symbol: str) -> int:
        """The operator's own column: between the operands, outside any parentheses."""
        lo, hi = self.offsets.end(node.left), self.offsets.start(node.right)
        found = self.text.find(symbol, lo, hi)
        return found if found >= 0 else self.offsets.start(node)

    def argument(self, node: Any) -> Any:
        """An argument's value: a literal, a Ref, a list, or a Ref to a new intermediate."""
        if isinstance(node, Index):
            return node
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float, str)) or node.value is None:
                return node.value
            raise self.fail(node, f"{type(node.value).__name__} literals are not supported")
        if self.is_negative_number(node):
            return -node.operand.value
        if isinstance(node, ast.Name):
            return Ref(node.id, self.offsets.start(node))
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.argument(item) for item in node.elts]
        if isinstance(node, ast.Attribute):
            raise self.habit(node)
        if type(node) in _UNSUPPORTED_NODES:
            raise self.fail(node, f"{_UNSUPPORTED_NODES[type(node)]} is not supported")
        return Ref(self.emit(node, None), self.offsets.start(node))

    @staticmethod
    def is_negative_number(node: ast.AST) -> bool:
        return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float))

    def index(self, node: ast.AST, tensors: list) -> Index:
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        return Index(tuple(self.index_item(p, tensors) for p in parts))

    def index_item(self, node: ast.AST, tensors: list):
        if isinstance(node, ast.Name):
            tensors.append(node)
            return TensorIndex(1 + len(tensors), node.id)
        if isinstance(node, ast.List):
            return self.index_list(node)
        if isinstance(node, ast.Slice):
            return Slice(*(None if b is None else self.index_int(b) for b in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            return node.value
        return self.index_int(node)

    def index_int(self, node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if self.is_negative_number(node) and type(node.operand.value) is int:
            return -node.operand.value
        raise self.fail(node, "an index is an integer, a slice (a:b:c), None, ..., a tensor's name or a list of "
                              "integers or booleans")

    def index_list(self, node: ast.AST):
        """A list literal in a subscript (`x[:, [0, 2]]`, `x[[True, False]]`): ints or bools, nested."""
        if isinstance(node, ast.List):
            return [self.index_list(e) for e in node.elts]
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            return node.value
        return self.index_int(node)


def parse_expression(target: str, text: str) -> list[Call]:
    """The Calls that compute node `target` from its expression, inner ones first."""
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    if not stripped.strip():
        raise ExpressionError("AG014", "empty expression", 0)
    calls = _from_template(target, stripped)
    if calls is not None:
        if lead:
            for call in calls:
                _shift(call, lead)
        return calls
    return _parse_text(target, stripped, lead)


def _parse_text(target: str, stripped: str, lead: int) -> list[Call]:
    try:
        tree = ast.parse(stripped, mode="eval")
    except (RecursionError, MemoryError):
        raise _too_deep(lead) from None
    except SyntaxError as exc:
        offsets = _Offsets(stripped)
        line = min(max(exc.lineno or 1, 1), len(offsets.lines))
        col = max((exc.offset or 1) - 1, 0)         # SyntaxError.offset is 1-based, in characters
        reason = (exc.msg or "invalid syntax").replace("invalid syntax. ", "")
        raise ExpressionError("AG014", f"invalid expression: {reason}",
                              lead + offsets.starts[line - 1] + col) from None
    parser = _Parser(target, stripped)
    try:
        parser.top(tree.body)
    except ExpressionError as exc:
        exc.offset += lead
        raise
    except RecursionError:
        raise _too_deep(lead) from None
    if lead:
        for call in parser.calls:
            _shift(call, lead)
    return parser.calls


# ---- expressions of one shape, parsed once ---------------------------------------------
# A large file repeats a few shapes of expression with other names (`tanh(n41) * 0.999 + x`,
# `tanh(n42) * 0.999 + x`). Each shape is parsed once, with its names replaced by
# placeholders; every expression of that shape is then that parse with its own names put
# back and its offsets moved. Only one-line ASCII text with no string, comment or
# attribute is templated (where a name's spelling cannot change the parse); names that are
# the same in the text are the same placeholder, so `f(a=1, a=2)` is still refused.

# (ASCII classes, not \w: every text it reads passed _TEMPLATABLE, and Unicode classes made it 30% slower)
_NAME_SPLIT = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_]*)")
_KEYWORDS = frozenset(keyword.kwlist)
_TEMPLATABLE = re.compile(r"[A-Za-z0-9_ ()\[\],:+\-*/@<>=!.]*")
_TARGET = "\0"                              # the placeholder target: no name can hold a NUL
_MAX_TEMPLATES = 4096
_templates: dict[str, Shape | None] = {}
# The common text names each thing once and holds no keyword: its template is then its
# skeleton (every name one mark) with the names numbered in order, so the shape is found
# from two regular-expression passes and the length changes summed in C, no loop per name.
_skeletons: dict[str, str] = {}             # skeleton -> template (a key of _templates)
_PLACEHOLDER_LENGTHS = [len(f"Z{i}") for i in range(101)]     # 200 characters hold at most 100 names


class Shape:
    """One shape's Calls (names are placeholders `Z0`, `Z1`, …; the node's own name is
    `TARGET`), with each offset's place among the names: an offset `o` in the template is
    `o` plus the length change of the first `before[o]` names in the text. `builder` is
    free for a reader of the file format to keep what it makes of the shape
    (document.py: a function that makes its NodeSpecs)."""
    __slots__ = ("calls", "before", "builder", "ops", "refs", "words")

    def __init__(self, calls: list[Call], bounds: list[int]):
        self.calls = calls
        self.builder = None
        offsets = {c.offset for c in calls} | {o for c in calls for o in c.arg_offsets}
        offsets |= {o for c in calls for o in c.kwarg_offsets.values()}
        stack = [v for c in calls for v in (*c.args, *c.kwargs.values())]
        refs = set()
        while stack:
            v = stack.pop()
            if isinstance(v, Ref):
                offsets.add(v.offset)
                refs.add(v.name)
            elif isinstance(v, list):
                stack.extend(v)
        self.before = {o: bisect.bisect_right(bounds, o) for o in offsets if o is not None}
        # which of the names (placeholder numbers) are ops, tensors read, words (ops and keywords), so
        # that a checker tells two expressions of this shape apart by their names without the Calls
        self.ops = _placeholders(c.op for c in calls)
        self.refs = _placeholders(refs)
        self.words = _placeholders([c.op for c in calls] + [k for c in calls for k in c.kwargs])   # ops, keywords


def _placeholders(names) -> tuple[int, ...]:
    return tuple(sorted({int(n[1:]) for n in names if n[:1] == "Z" and n[1:].isdigit()}))


TARGET = _TARGET


def shape_of(text: str, shifts: bool = True) -> tuple[Shape, list[str], list[int] | None] | None:
    """`text`'s shape, its names in placeholder order and the length change after each name
    written (`shifts[i]`: after the first i; maybe None unless `shifts`); None where the text
    must be parsed itself.
    `text` has no leading blanks (parse_expression strips them)."""
    if len(text) > 200 or not _TEMPLATABLE.fullmatch(text):
        return None
    written = _NAME_SPLIT.findall(text)
    distinct = len(set(written)) == len(written) and _KEYWORDS.isdisjoint(written)
    if distinct:
        skeleton = _NAME_SPLIT.sub("\x01", text)
        shape = _templates.get(_skeletons.get(skeleton), False)
        if shape is not False:
            if shape is None:
                return None
            if not shifts:
                return shape, written, None
            return shape, written, list(accumulate(map(operator.sub, map(len, written), _PLACEHOLDER_LENGTHS),
                                                   initial=0))
    names: list[str] = []                   # placeholder number -> name
    placeholder_of: dict[str, str] = {}
    parts = _NAME_SPLIT.split(text)         # text, name, text, name, ..., text
    bounds, changes, shift = [], [0], 0      # per name written: its end in the template; length change so far
    at = len(parts[0])                      # where parts[i] starts in the template
    for i in range(1, len(parts), 2):
        name = parts[i]
        if name not in _KEYWORDS:
            placeholder = placeholder_of.get(name)
            if placeholder is None:
                placeholder = placeholder_of[name] = f"Z{len(names)}"
                names.append(name)
            parts[i] = placeholder
            bounds.append(at + len(placeholder))
            shift += len(name) - len(placeholder)
            changes.append(shift)
        at += len(parts[i]) + len(parts[i + 1])
    template = "".join(parts)
    shape = _templates.get(template, False)
    if shape is False:
        if len(_templates) >= _MAX_TEMPLATES:
            _templates.clear()
            _skeletons.clear()
        try:
            shape = Shape(_parse_text(_TARGET, template, 0), bounds)
        except ExpressionError:
            shape = None                     # parsed (and reported) from the text itself
        _templates[template] = shape
    if distinct:
        _skeletons[skeleton] = template
    if shape is None:
        return None
    return shape, names, changes


def names_in(text: str) -> list[str]:
    """The names of a templated `text` (one whose `shape_of` is not None), in placeholder
    order: what `shape_of` gives, without finding the shape again."""
    written = _NAME_SPLIT.findall(text)
    if len(set(written)) == len(written) and _KEYWORDS.isdisjoint(written):
        return written
    return list(dict.fromkeys(w for w in written if w not in _KEYWORDS))


def names_and_shifts(text: str) -> tuple[list[str], list[int]]:
    """`shape_of(text)`'s names and shifts for a templated `text`, without finding the shape
    again (a loader that kept the shape makes the NodeSpecs of each of a million nodes)."""
    written = _NAME_SPLIT.findall(text)
    if len(set(written)) == len(written) and _KEYWORDS.isdisjoint(written):
        return written, list(accumulate(map(operator.sub, map(len, written), _PLACEHOLDER_LENGTHS), initial=0))
    _, names, shifts = shape_of(text)
    return names, shifts


def _from_template(target: str, text: str) -> list[Call] | None:
    """`text`'s Calls from its shape's parse, or None where the text must be parsed itself."""
    found = shape_of(text)
    if found is None:
        return None
    shape, names, shifts = found
    before = shape.before

    def name_of(name: str) -> str:
        if name[0] == _TARGET:
            return target + name[1:]
        return names[int(name[1:])] if name[0] == "Z" else name

    def value(v):
        if v.__class__ is Ref:
            return Ref(name_of(v.name), v.offset + shifts[before[v.offset]])
        if isinstance(v, list):
            return [value(x) for x in v]
        if isinstance(v, Index):
            return Index(tuple(TensorIndex(i.arg, name_of(i.name)) if isinstance(i, TensorIndex) else value(i)
                               for i in v.items))
        return v

    return [Call(name_of(c.name), name_of(c.op), [value(a) for a in c.args],
                 {name_of(k): value(v) for k, v in c.kwargs.items()} if c.kwargs else {},
                 c.offset + shifts[before[c.offset]], [o + shifts[before[o]] for o in c.arg_offsets],
                 {name_of(k): o + shifts[before[o]] for k, o in c.kwarg_offsets.items()} if c.kwarg_offsets else {},
                 c.intermediate) for c in shape.calls]


def _too_deep(offset: int) -> ExpressionError:
    # NOTE: Python's parser and this walker both recurse once per nesting level
    return ExpressionError("AG014", "expression is nested too deeply to parse (hundreds of operators in one "
                                    "expression); split it over several nodes", offset)


def _shift(call: Call, by: int) -> None:
    call.offset = None if call.offset is None else call.offset + by
    call.arg_offsets = [None if o is None else o + by for o in call.arg_offsets]
    call.kwarg_offsets = {k: None if o is None else o + by for k, o in call.kwarg_offsets.items()}
    call.args = [_shift_ref(a, by) for a in call.args]
    call.kwargs = {k: _shift_ref(v, by) for k, v in call.kwargs.items()}


def _shift_ref(value: Any, by: int) -> Any:
    if isinstance(value, Ref) and value.offset is not None:
        return Ref(value.name, value.offset + by)
    if isinstance(value, list):
        return [_shift_ref(v, by) for v in value]
    return value
