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
import tokenize
from dataclasses import dataclass, field

from ..dispatcher import get_op
from ._formula_source import _node_of, _source
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
