"""Operator schemas, PyTorch's string form:
`add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
"""
from __future__ import annotations

import ast
import re

__all__ = ["Schema", "Argument", "SchemaError", "parse_schema"]

_BASE_TYPES = {"Tensor", "Scalar", "int", "float", "bool", "str", "ScalarType", "Device", "SymInt",
               "MemoryFormat"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)?(\.[A-Za-z_][A-Za-z0-9_]*)?$")
_NO_DEFAULT = object()


class SchemaError(ValueError):
    pass


class Argument:
    __slots__ = ("name", "type", "base", "is_list", "optional", "default", "kwarg_only")

    def __init__(self, name, type_, default=_NO_DEFAULT, kwarg_only=False):
        self.name = name
        self.type = type_
        self.optional = type_.endswith("?")
        core = type_.rstrip("?")
        self.is_list = core.endswith("[]")
        self.base = core[:-2] if self.is_list else core
        self.default = default
        self.kwarg_only = kwarg_only

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor"

    def __str__(self):
        text = f"{self.type} {self.name}"
        return text + (f"={_format_default(self.default)}" if self.has_default else "")

    def __repr__(self):
        return f"Argument({self})"


def _format_default(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


class Schema:
    __slots__ = ("name", "namespace", "overload", "arguments", "returns", "_text")

    def __init__(self, name, arguments, returns, text):
        qual, _, self.overload = name.partition(".")
        self.namespace, _, base = qual.rpartition("::")
        self.name = qual
        self.arguments = arguments
        self.returns = returns
        self._text = text

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"Schema({self._text!r})"

    @property
    def num_outputs(self) -> int | None:
        """Number of outputs, or None when the op returns `Tensor[]` (known only per call)."""
        if self.returns == ["Tensor[]"]:
            return None
        return len(self.returns)


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        parts.append(tail)
    return parts


def parse_schema(text: str) -> Schema:
    m = re.fullmatch(r"\s*([^\s(]+)\s*\((.*)\)\s*->\s*(.+?)\s*", text, re.S)
    if not m:
        raise SchemaError(f"cannot parse schema {text!r}: expected 'name(args) -> returns'")
    name, arg_text, ret_text = m.groups()
    if not _NAME.match(name):
        raise SchemaError(f"invalid operator name {name!r} in schema {text!r}")
    arguments, kwarg_only, seen = [], False, set()
    for part in _split_top(arg_text):
        if part == "*":
            kwarg_only = True
            continue
        decl, eq, default_text = part.partition("=")
        pieces = decl.split()
        if len(pieces) != 2:
            raise SchemaError(f"cannot parse argument {part!r} in schema {text!r}")
        type_, arg_name = pieces
        base = type_.rstrip("?")
        base = base[:-2] if base.endswith("[]") else base
        if base not in _BASE_TYPES:
            raise SchemaError(f"unknown type {type_!r} of argument {arg_name!r} in schema {text!r}")
        if arg_name in seen:
            raise SchemaError(f"argument {arg_name!r} appears twice in schema {text!r}")
        seen.add(arg_name)
        default = _NO_DEFAULT
        if eq:
            default = _parse_default(default_text.strip(), text)
        elif arguments and arguments[-1].has_default and not kwarg_only:
            raise SchemaError(f"argument {arg_name!r} without a default follows one with a default in {text!r}")
        arguments.append(Argument(arg_name, type_, default, kwarg_only))
    ret_text = ret_text.strip()
    if ret_text.startswith("("):
        returns = [r.split()[0] for r in _split_top(ret_text[1:-1])]
    elif ret_text == "()":
        returns = []
    else:
        returns = [ret_text.split()[0]]
    return Schema(name, arguments, returns, text.strip())


def _parse_default(text: str, schema: str):
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise SchemaError(f"cannot parse default {text!r} in schema {schema!r}") from None
