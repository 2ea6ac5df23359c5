"""Each op's derivative formulas as text, read back from its declaration: the survey that
PyTorch's derivatives.yaml gives (`agrad ops NAME`, `agrad ops --formulas`).

A formula is the source of the callable in the op's `grads` (OpInfo.grads), found with `ast`
in the file that declares it: a lambda's body, exactly as written (line breaks folded into
spaces); a named function's returned expression when its body is one `return`; otherwise
the call `name(parameters)`, as derivatives.yaml names its helper functions
(`pow_backward_exponent(grad, self, exponent, result)`). `conj_of(x)` (a conjugate that costs nothing
for a real operand) reads as derivatives.yaml writes it, `x.conj()`. Nothing is evaluated.
"""
from __future__ import annotations

import ast
import functools
import io
import linecache
import tokenize
from dataclasses import dataclass, field

from ..dispatcher import get_op
from .registry import NotDifferentiable, NotImplementedDerivative, registered

COMPOSITE = "composite (gradients from the ops it calls)"
NOT_DIFFERENTIABLE = "not differentiable"
_KINDS = {"composite": COMPOSITE, "not differentiable": NOT_DIFFERENTIABLE,
          "external": "registered outside the op library (agrad.library): no formulas to read"}


@dataclass(frozen=True)
class Formulas:
    """An op's derivatives. `kind`: "formulas" (one per tensor input in `inputs`, in schema
    order; an input without a gradient reads NOT_DIFFERENTIABLE); "composite"; "not
    differentiable"; "external" (an op registered through agrad.library). All but "formulas"
    have no `inputs`: every op the library declares states its derivatives as formulas."""
    op: str
    kind: str
    inputs: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """What an op without `inputs` shows in their place."""
        return _KINDS.get(self.kind, "")

    def lines(self) -> list[tuple[str, str]]:
        """(input, formula) pairs, one per line of the survey; ("", summary) for an op without."""
        return list(self.inputs.items()) if self.kind == "formulas" else [("", self.summary())]


def formulas(name: str) -> Formulas:
    """The derivative formulas of op `name` (the dispatcher's UnknownOperatorError if there is none)."""
    entry = get_op(name)
    info = entry.info
    if info is None:
        return Formulas(entry.name, "external")
    if info.composite is not None:
        return Formulas(info.name, "composite")
    if not info.grads:
        return Formulas(info.name, "not differentiable")
    tensor_inputs = [a.name for a in info.entry.schema.arguments if a.is_tensor]
    return Formulas(info.name, "formulas",
                    {arg: NOT_DIFFERENTIABLE if info.grads.get(arg) is None or
                     isinstance(info.grads[arg], NotDifferentiable) else
                     # derivatives.yaml's spelling of it
                     f'not_implemented("{info.grads[arg].what}")'
                     if isinstance(info.grads[arg], NotImplementedDerivative) else formula_text(info.grads[arg])
                     for arg in tensor_inputs if arg in info.grads})


def all_formulas() -> list[Formulas]:
    """Every declared op's formulas, by name."""
    return [formulas(info.name) for info in registered()]


def formula_text(fn) -> str:
    """The source text of one gradient formula (see the module docstring)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    code = getattr(fn, "__code__", None)
    if code is None:
        return repr(fn)
    node = _node_of(code)
    if isinstance(node, ast.Lambda):
        return _as_conj(_text(code.co_filename, node.body))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            return _as_conj(_text(code.co_filename, body[0].value))
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return f"{fn.__name__}({', '.join(parameters)})"


class _ConjOf(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "conj_of" and len(node.args) == 1 and not node.keywords:
            return ast.Call(ast.Attribute(node.args[0], "conj", ast.Load()), [], [])
        return node


def _as_conj(text: str) -> str:
    """`conj_of(x)` in a formula's text as derivatives.yaml writes it: `x.conj()`."""
    if "conj_of(" not in text:
        return text
    return ast.unparse(_ConjOf().visit(ast.parse(text, mode="eval")))


class _DropConjOf(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "conj_of" and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        return node


def real_formula_source(fn) -> str | None:
    """The source of `fn` (a lambda formula) with its `conj_of(x)` calls replaced by `x` — what it computes
    on real operands — as `def on_arrays(...)`, or None where its source cannot be read."""
    code = getattr(fn, "__code__", None)
    node = _node_of(code) if code is not None else None
    if not isinstance(node, ast.Lambda):
        return None
    body = _DropConjOf().visit(ast.parse(ast.unparse(node.body), mode="eval")).body
    params = ", ".join(code.co_varnames[:code.co_argcount])
    return f"def on_arrays({params}):\n    return {ast.unparse(body)}\n"


def _node_of(code):
    """The `lambda` or `def` node that compiled to `code`, or None where no source is found."""
    source = _source(code.co_filename)
    if source is None:
        return None
    parameters = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    candidates = []
    for node in source.functions.get(code.co_firstlineno, ()):
        if isinstance(node, ast.Lambda) and code.co_name == "<lambda>" or \
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            arguments = node.args
            if [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)] == parameters:
                candidates.append(node)
    if len(candidates) > 1:
        # several lambdas with the same parameters on one line: the one whose span holds the code's
        # instructions (their positions are known from Python 3.11)
        spans = [p for p in getattr(code, "co_positions", lambda: ())()
                 if None not in p and (p[0], p[2]) != (p[1], p[3])]      # not the empty span of RESUME
        for node in candidates:
            if spans and all(_within(node, p) for p in spans):
                return node
    return candidates[0] if candidates else None


def _within(node, position) -> bool:
    line, end_line, column, end_column = position
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return start <= (line, column) and (end_line, end_column) <= end


class _Source:
    """A declaring file read once: its lines, and its lambdas and defs by first line (the survey asks
    for hundreds of formulas of one file: walking its tree, or splitting its text, per formula made
    `agrad ops --formulas` take seconds)."""
    __slots__ = ("lines", "functions")

    def __init__(self, lines: list[str], tree: ast.AST):
        self.lines = lines
        self.functions: dict[int, list] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.lineno, []).append(node)

    def segment(self, node) -> str | None:
        """ast.get_source_segment's text of `node` (its columns count UTF-8 bytes)."""
        if getattr(node, "end_lineno", None) is None or node.end_col_offset is None:
            return None
        first, last = node.lineno - 1, node.end_lineno - 1
        if last >= len(self.lines):
            return None
        if first == last:
            return self.lines[first].encode()[node.col_offset:node.end_col_offset].decode()
        parts = [self.lines[first].encode()[node.col_offset:].decode(), *self.lines[first + 1:last],
                 self.lines[last].encode()[:node.end_col_offset].decode()]
        return "".join(parts)


@functools.lru_cache(maxsize=None)
def _source(filename: str) -> _Source | None:
    lines = linecache.getlines(filename)
    try:
        return _Source(lines, ast.parse("".join(lines))) if lines else None
    except SyntaxError:
        return None


def _text(filename: str, node) -> str:
    """The node's source on one line: comments dropped, each line break with its indent one space
    (none just inside a bracket)."""
    source = _source(filename)
    segment = source.segment(node) if source is not None else None
    if segment is None:
        return ast.unparse(node)
    lines = segment.splitlines()
    try:       # in brackets, so that a body broken over lines tokenizes as it parsed
        tokens = list(tokenize.generate_tokens(io.StringIO("(" + segment + ")").readline))
    except (tokenize.TokenError, SyntaxError):
        tokens = []
    for token in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        row, column = token.start
        lines[row - 1] = lines[row - 1][:column - (1 if row == 1 else 0)]
    text = ""
    for part in (line.strip().removesuffix("\\").strip() for line in lines):
        if text and part and text[-1] not in "([{" and part[0] not in ")]},":
            text += " "
        text += part
    return text
