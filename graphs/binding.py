"""Checks each op application against the registry's schema and binds its arguments.

The registry is the only list of ops: unknown ops, unknown keywords, arity and
argument kinds all come from `agrad.dispatcher`'s schemas. One form is the graph
language's own rather than an op: `x[...]`, output selection or basic slicing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agrad import codegen, dispatcher, memory_formats

from .diagnostics import Collector, Pos, did_you_mean
from .pytorch_habits import KEYWORD_ALIASES
from .spec import DTYPE_NAMES, NO_KEYWORDS, GraphSpec, NodeSpec, TensorRef, refs_in

GETITEM = "getitem"
GRAD = "grad"          # SPEC §1.3: its `outputs` and `inputs` may be one name instead of a list


@dataclass(slots=True)
class BoundNode:
    """A NodeSpec whose arguments matched a schema, in schema order."""
    spec: NodeSpec
    schema: Any                              # agrad.dispatcher.Schema; None for getitem
    entry: Any = None                        # the OperatorEntry; None for getitem
    args: list[Any] = field(default_factory=list)          # positional values, schema order
    kwargs: dict[str, Any] = field(default_factory=dict)   # keyword-only values given
    selects_output: bool = False             # `parts[0]` on a multi-output node
    _given: list[tuple[Any, Any, Pos]] | None = field(default_factory=list)   # `given`, or None: `written`'s
    plan: Any = None                         # executor.call_plan: how to find each argument, made once
    _ref_names: frozenset | None = None
    written: Any = None                      # _layout's function `node -> given`, where `_given` is None

    @property
    def given(self) -> list[tuple[Any, Any, Pos]]:
        """(Argument, value, pos) of each argument as written. A node bound by a layout makes it
        when asked for (a plan, `inspect`, a diagnostic), once per asker: 3,000,000 ops of a large
        file would otherwise hold 6,000,000 tuples that a run reads once."""
        given = self._given
        return given if given is not None else self.written(self.spec)

    def __eq__(self, other) -> bool:
        """Field by field, as a dataclass's, with `given` compared whichever way it is kept."""
        if other.__class__ is not BoundNode:
            return NotImplemented
        return ((self.spec, self.schema, self.entry, self.args, self.kwargs, self.selects_output, self.given,
                 self.plan, self._ref_names) == (other.spec, other.schema, other.entry, other.args, other.kwargs,
                                                 other.selects_output, other.given, other.plan, other._ref_names))

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def op(self) -> str:
        return self.spec.op

    @property
    def multi_output(self) -> bool:
        return self.schema is not None and (len(self.schema.returns) != 1 or self.schema.returns == ["Tensor[]"])

    def refs(self) -> list[TensorRef]:
        return refs_in(self.args) + refs_in(self.kwargs.values())

    def ref_names(self) -> frozenset:
        """The names this node reads, found once."""
        if self._ref_names is None:
            self._ref_names = frozenset(r.name for r in self.refs())
        return self._ref_names


def _kind(value: Any) -> str:
    if isinstance(value, TensorRef):
        return f"the tensor '{value.name}'"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            type(None): "None"}.get(type(value), type(value).__name__)


def _fits(arg_type: str, value: Any) -> bool:
    """Whether a written value can be passed as an argument of schema type `arg_type`."""
    optional = arg_type.endswith("?")
    core = arg_type.rstrip("?")
    if value is None:
        return optional
    is_list = core.endswith("[]")
    base = core[:-2] if is_list else core
    if is_list:
        if base == "Tensor" and isinstance(value, TensorRef):
            return True                      # a multi-output node's tuple (checked in check_uses)
        if base in ("int", "SymInt") and type(value) is int:
            return True                      # `dim=1` where `int[]` is expected, as in PyTorch
        if base == "float" and type(value) in (int, float):
            return True                      # `scale_factor=2.0` where `float[]` is expected, as in PyTorch
        return isinstance(value, list) and all(_fits(base, v) for v in value)
    if base == "Tensor":
        return isinstance(value, TensorRef) or type(value) in (int, float, bool)
    if isinstance(value, TensorRef):
        return False
    if base in ("int", "SymInt"):
        return type(value) is int
    if base == "float":
        return type(value) in (int, float)
    if base == "Scalar":
        return type(value) in (int, float, bool)
    if base == "bool":
        return type(value) is bool
    if base == "str":
        return isinstance(value, str)
    if base == "ScalarType":
        return value in DTYPE_NAMES
    if base == "Device":
        return isinstance(value, str)
    if base == "MemoryFormat":          # written by name: memory_format: channels_last
        return value in memory_formats.NAMES
    return True


# kinds of written value for which `_fits` looks at nothing but the kind (not a str: `ScalarType` reads it)
_BY_KIND = frozenset((TensorRef, int, float, bool, type(None)))


def _layout(node: NodeSpec, bound: BoundNode):
    """A function `(node, schema, entry) -> BoundNode` that binds any node written as `node` was
    (the same kinds of value, positional and keyword, for the same schema) as `bound` is: each
    value taken from where it is written, or the schema's default."""
    params = bound.schema.arguments
    at = {a.name: i for i, a in enumerate([a for a in params if not a.kwarg_only][:len(node.args)])}
    constants: list = []

    def constant(value) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    def value(arg) -> str:
        if arg.name in node.kwargs:
            return f"k[{arg.name!r}]"
        return f"a[{at[arg.name]}]" if arg.name in at else constant(arg.default)

    def pos(arg) -> str:
        if arg.name in node.kwargs:
            return f"node.kwarg_pos.get({arg.name!r}, node.pos)"
        return f"p[{at[arg.name]}]"

    args = [value(a) for a in params if not a.kwarg_only]
    # every positional value as written, in order: the NodeSpec's list serves (neither changes it)
    args = "a" if args == [f"a[{i}]" for i in range(len(node.args))] else f"[{', '.join(args)}]"
    kwargs = "{" + ", ".join(f"{name!r}: k[{name!r}]" for name in bound.kwargs) + "}" if bound.kwargs else "E"
    given = "".join(f"({constant(arg)}, {value(arg)}, {pos(arg)}), " for arg, _, _ in bound.given)
    scope = {"BoundNode": BoundNode, "E": NO_KEYWORDS, "K": constants}
    scope["written"] = codegen.define(("def written(node):\n"
                                       "    a, k, p = node.args, node.kwargs, node.arg_pos\n"
                                       f"    return [{given}]"), scope, "<agrad binding layout>", "written")
    source = ("def make(node, schema, entry):\n"
              "    a, k = node.args, node.kwargs\n"
              f"    return BoundNode(node, schema, entry, {args}, {kwargs}, False, None, None, None, written)")
    return codegen.define(source, scope, "<agrad binding layout>", "make")


def layout_key(node: NodeSpec, schema) -> tuple:
    """What decides a node's binding layout (`Binder.layouts`): its schema and the kinds of
    value written, positional and keyword."""
    return (id(schema), tuple(map(type, node.args)),
            tuple((k, type(v)) for k, v in node.kwargs.items()) if node.kwargs else ())


def _padding_string(op: str, name: str, value: Any) -> bool:
    """PyTorch's conv1d/2d/3d have a second overload (conv2d.padding) taking padding="same" or "valid"."""
    return name == "padding" and op in ("conv1d", "conv2d", "conv3d") and isinstance(value, str)


class Binder:
    def __init__(self, spec: GraphSpec, collector: Collector):
        self.spec = spec
        self.c = collector
        self.bound: dict[str, BoundNode] = {}
        self.schema_parts: dict[int, tuple] = {}     # id(schema) -> (positional args, args by name, schema)
        self.entries: dict[str, Any] = {}            # op name -> OperatorEntry
        self.fitting: dict[tuple, bool] = {}         # (schema type, kind of value) -> whether it fits
        self.layouts: dict[tuple, Any] = {}          # kinds of value written -> _layout's function
        self.tensor_lists: dict[int, bool] = {}      # id(schema) -> whether it takes a Tensor[]

    @cached_property
    def names(self) -> set[str]:
        """Every name an argument may use (asked only by `bind`: a column-wise check makes no NodeSpecs)."""
        return set(self.spec.inputs) | {n.name for n in self.spec.nodes}

    def op_names(self) -> list[str]:
        """Every op's name, for "did you mean": the whole library loads only for an unknown op."""
        return [e.name for e in dispatcher.all_ops()]

    def bind_all(self) -> dict[str, BoundNode]:
        for node in self.spec.nodes:
            bound = self.bind(node)
            if bound is not None:
                self.bound[node.name] = bound
        self.multi = {name for name, bound in self.bound.items() if bound.multi_output}
        # Without multi-output nodes only a getitem or a `Tensor[]` argument can be misused.
        to_check = self.bound.values() if self.multi else [
            b for b in self.bound.values() if b.schema is None or self.takes_tensor_list(b.schema)]
        misused = [bound.name for bound in to_check if not self.check_uses(bound)]
        for name in misused:
            del self.bound[name]        # not built on Meta: its error is already reported
        return self.bound

    def bind(self, node: NodeSpec) -> BoundNode | None:
        names = self.names
        undefined = [r for r in refs_in(node.args) if r.name not in names]
        if node.kwargs:
            undefined += [r for r in refs_in(node.kwargs.values()) if r.name not in names]
        for ref in undefined:
            if ref.name not in self.spec.broken:
                self.undefined(ref)
        if node.op == GETITEM:
            return None if undefined else BoundNode(node, None, args=list(node.args))
        entry = self.entry(node)
        if entry is None:
            return None
        bound = self.bind_arguments(node, entry.schema, entry)
        return None if undefined else bound

    def entry(self, node: NodeSpec):
        """The OperatorEntry of the node's op, or None after reporting an unknown op."""
        entry = self.entries.get(node.op)
        if entry is None:
            try:
                entry = self.entries[node.op] = dispatcher.get_op(node.op)
            except dispatcher.UnknownOperatorError:
                if "::" in node.op:      # a namespaced op is registered by a plugin file
                    self.c.error("AG016", f"unknown op '{node.op}': ops in the '{node.op.split('::')[0]}' namespace "
                                 "come from a plugin; pass --plugin FILE.py, the file that registers it", node.pos)
                else:
                    self.c.error("AG016", f"unknown op '{node.op}'", node.pos, did_you_mean(node.op, self.op_names()))
        return entry

    def bind_arguments(self, node: NodeSpec, schema, entry) -> BoundNode | None:
        # A layout found once serves every node that writes the same kinds of value the same way:
        # the kinds alone decide whether they fit (_BY_KIND), so no problem can be missed.
        kinds = layout_key(node, schema)
        make = self.layouts.get(kinds)
        if make is not None:
            return make(node, schema, entry)
        bound = self.bind_written(node, schema, entry)
        if bound is not None and all(k in _BY_KIND for k in kinds[1]) and all(k in _BY_KIND for _, k in kinds[2]):
            self.layouts[kinds] = _layout(node, bound)
        return bound

    def bind_written(self, node: NodeSpec, schema, entry) -> BoundNode | None:
        params = schema.arguments
        parts = self.schema_parts.get(id(schema))
        if parts is None:           # per schema, not per node: a large file calls a few ops many times
            parts = self.schema_parts[id(schema)] = ([a for a in params if not a.kwarg_only],
                                                     {a.name: a for a in params}, schema)
        positional, by_name, _ = parts
        ok = True
        if len(node.args) > len(positional):
            self.c.error("AG018", f"{node.op}() takes at most {len(positional)} positional argument(s) but "
                         f"{len(node.args)} were given; schema: {schema}", node.arg_pos[len(positional)])
            return None
        given: dict[str, tuple[Any, Pos]] = {}
        for arg, value, pos in zip(positional, node.args, node.arg_pos):
            given[arg.name] = (value, pos)
        for key, value in node.kwargs.items():
            pos = node.kwarg_pos.get(key, node.pos)
            if key not in by_name:
                # NumPy's `axis=` and `keepdims=`: PyTorch's names are the hint, as its own error gives
                alias = KEYWORD_ALIASES.get(key)
                self.c.error("AG017", f"{node.op}() got an unexpected keyword argument '{key}'; schema: {schema}",
                             pos, f"'{alias}'" if alias in by_name else did_you_mean(key, by_name))
                ok = False
            elif key in given:
                self.c.error("AG018", f"{node.op}() got multiple values for argument '{key}'", pos)
                ok = False
            else:
                given[key] = (value, pos)
        if len(given) < len(params):
            for arg in params:
                if arg.name not in given and not arg.has_default:
                    self.c.error("AG018", f"{node.op}() missing required argument '{arg.name}'; schema: {schema}",
                                 node.pos)
                    ok = False
        args, kwargs, written = [], {}, []
        for arg in params:
            found = given.get(arg.name)
            if found is None:
                if not arg.kwarg_only:
                    args.append(arg.default)
                continue
            value = found[0]
            if not self.fits(arg.type, value) and not _padding_string(node.op, arg.name, value):
                names = memory_formats.NAMES if arg.type.rstrip("?") == "MemoryFormat" else ()
                self.c.error("AG019", f"{node.op}(): argument '{arg.name}' must be {arg.type}"
                             f"{' (' + ', '.join(sorted(names)) + ')' if names else ''}, not {_kind(value)}",
                             found[1], did_you_mean(value, names) if names and isinstance(value, str) else None)
                ok = False
            written.append((arg, value, found[1]))
            if arg.kwarg_only:
                kwargs[arg.name] = value
            else:
                args.append(value)
        if not ok:
            return None
        return BoundNode(node, schema, entry, args, kwargs, False, written)

    def takes_tensor_list(self, schema) -> bool:
        found = self.tensor_lists.get(id(schema))
        if found is None:
            found = self.tensor_lists[id(schema)] = any(a.is_list and a.base == "Tensor" for a in schema.arguments)
        return found

    def fits(self, arg_type: str, value: Any) -> bool:
        """`_fits`, remembered per (type, kind of value) where the kind alone decides it."""
        kind = value.__class__
        if kind not in _BY_KIND:
            return _fits(arg_type, value)
        known = self.fitting.get((arg_type, kind))
        if known is None:
            known = self.fitting[(arg_type, kind)] = _fits(arg_type, value)
        return known

    def undefined(self, ref: TensorRef) -> None:
        self.c.error("AG020", f"undefined name '{ref.name}'", ref.pos, did_you_mean(ref.name, self.names))

    def check_uses(self, bound: BoundNode) -> bool:
        """A multi-output node is used through `name[i]`; anything else is an error."""
        if bound.op == GETITEM:
            source, index = bound.args[:2]       # then the index tensors, if any (x[idx])
            target = self.bound.get(source.name) if isinstance(source, TensorRef) else None
            if target is None or not target.multi_output:
                return True
            if not index.is_single_int():
                self.c.error("AG022", f"'{source.name}' has several outputs: select one with an integer, "
                             f"e.g. {source.name}[0]", bound.spec.pos)
                return False
            bound.selects_output = True
            count = None if target.schema.returns == ["Tensor[]"] else len(target.schema.returns)
            if count is not None and not -count <= index.items[0] < count:
                self.c.error("AG022", f"'{source.name}' has {count} outputs; index {index.items[0]} "
                             "is out of range", bound.spec.pos)
                return False
            return True
        ok = True
        multi = self.multi
        for arg, value, pos in bound.given:
            if value.__class__ is TensorRef and arg.is_list and arg.base == "Tensor":
                # `cat(parts)` passes a split's outputs as a list, as torch.cat(parts) does;
                # grad(y, x) takes a single tensor where it takes a list.
                if bound.op != GRAD and value.name not in multi:
                    self.c.error("AG019", f"{bound.op}(): argument '{arg.name}' must be a list of tensors, "
                                 f"e.g. [{value.name}]", pos)
                    ok = False
                continue
            if not multi:
                continue
            for ref in refs_in((value,)):
                if ref.name in multi:
                    self.c.error("AG022", f"'{ref.name}' has several outputs; use one of them, "
                                 f"e.g. {ref.name}[0]", ref.pos)
                    ok = False
        return ok


def bind(spec: GraphSpec, collector: Collector) -> dict[str, BoundNode]:
    return Binder(spec, collector).bind_all()

