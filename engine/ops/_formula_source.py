"""A gradient formula's source: the `lambda` or `def` node its code object compiled from, read once per
declaring file (formulas.py prints it as text), and `real_formula_source`, a formula with its `conj_of`
calls dropped — what the registry compiles for the array path of real dtypes. Helpers only: no op
here, and nothing of the op library imported (the registry uses it)."""
from __future__ import annotations

import ast
import functools
import linecache

__all__ = ["real_formula_source"]


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
