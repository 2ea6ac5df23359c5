"""The bytecode reader of the replay: a kernel that is one NumPy expression over its arguments
(`lambda xp, a, b: xp.multiply(a, b)`) is read from its bytecode into an expression tree, so
that `Schedule` can write it inline with its functions bound once. Any form it does not know
gives None, and the kernel is called instead: the reader may decline, never mistranslate.
Holds on Python 3.11–3.14 (their opcodes are listed below).
"""
from __future__ import annotations

import dis
import operator
import types

_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
              "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
              ">>": operator.rshift, "<": operator.lt, "<=": operator.le, "==": operator.eq,
              "!=": operator.ne, ">": operator.gt, ">=": operator.ge}
_SKIP = {"RESUME", "NOP", "CACHE", "PUSH_NULL", "PRECALL", "NOT_TAKEN", "TO_BOOL", "EXTENDED_ARG"}
_JUMP_IF = {"POP_JUMP_IF_FALSE": False, "POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_IF_TRUE": True,
            "POP_JUMP_FORWARD_IF_TRUE": True}
# `if x is None` / `if x is not None` (3.11 names them FORWARD): jump when the value is None / is not
_JUMP_IF_NONE = {"POP_JUMP_IF_NONE": True, "POP_JUMP_FORWARD_IF_NONE": True, "POP_JUMP_IF_NOT_NONE": False,
                 "POP_JUMP_FORWARD_IF_NOT_NONE": False}
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
        elif op in _JUMP_IF_NONE:
            if (_fold(stack.pop(), known) is None) == _JUMP_IF_NONE[op]:
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


