"""Runs bound nodes in order on whatever tensors it is given: Meta ones to infer
shapes and build the backward graph, real ones to compute.

Every backward Node an op creates is labelled with the YAML node and line that
made it (`Node.metadata`), so engine errors and anomaly reports can point at the
file.
"""
from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable

import agrad
from agrad import codegen
from agrad._tensor import AutogradMeta as _AutogradMeta
from agrad._tensor import Tensor as _Tensor
from agrad.dispatcher import OMITTED

from .binding import GETITEM, BoundNode
from .expressions import Index, Slice, TensorIndex
from .spec import NO_KEYWORDS, TensorRef, refs_in


class NodeFailure(Exception):
    """An op raised while computing `bound`; `error` is the engine's exception."""

    def __init__(self, bound: BoundNode, error: BaseException):
        super().__init__(str(error))
        self.bound = bound
        self.error = error


def _resolve(value: Any, env: dict[str, Any]) -> Any:
    if isinstance(value, TensorRef):
        return env[value.name]
    if isinstance(value, list):
        return [_resolve(v, env) for v in value]
    return value


def _python_index(index: Index, args: list[Any] = ()):
    """The Python index of a subscript; `args` are the getitem's arguments (index tensors from 2 on)."""
    def one(item):
        if isinstance(item, TensorIndex):
            return args[item.arg]
        return slice(item.start, item.stop, item.step) if isinstance(item, Slice) else item
    items = tuple(one(i) for i in index.items)
    return items[0] if len(items) == 1 else items


def _convert(arg_type: str, value: Any) -> Any:
    """A written value as the op wants it: dtype names become agrad dtypes, and one
    tensor where a list is expected (`grad(y, x)`) becomes a list of one."""
    if value is None:
        return None
    base = arg_type.rstrip("?")
    if base == "ScalarType" and isinstance(value, str):
        return agrad.dtypes.from_name(value)
    if base == "Tensor[]" and not isinstance(value, (list, tuple)):
        return [value]
    return value


# how `_value` finds an argument at each call (a call's "v" operands): a tensor by name converted
# (`grad(y, x)`'s one tensor made a list), or a list rebuilt (it may hold tensors)
_CONVERTED, _RESOLVED = 2, 3


_ARGUMENTS: dict[int, tuple] = {}     # id(schema) -> (the schema, its arguments as call_plan reads them)


def _arguments(schema) -> tuple:
    """(Argument, kwarg_only, has_default, how a tensor named for it is read) per argument of
    `schema`, worked out once per schema: "t" as it is, "v" converted (`_convert`)."""
    known = _ARGUMENTS.get(id(schema))
    if known is None or known[0] is not schema:
        table = tuple((arg, arg.kwarg_only, arg.has_default,
                       "t" if arg.type.rstrip("?") not in ("Tensor[]", "ScalarType") else "v")
                      for arg in schema.arguments)
        known = _ARGUMENTS[id(schema)] = (schema, table)
    return known[1]


_CALLS: dict[tuple, Callable] = {}       # a pattern of argument kinds -> its generated call


def _call_for(kinds: tuple, keywords: tuple) -> Callable:
    """`call(env, call, name, f, *operands)`: `f` applied to the arguments a node's operands
    stand for, a list result made a tuple; generated once per pattern (`kinds`: "c" a constant,
    "t" a tensor by name, "v" a recipe for `_value`; `keywords`: the keyword arguments' (name, kind))."""
    key = (kinds, keywords)
    call = _CALLS.get(key)
    if call is None:
        names = [f"a{i}" for i in range(len(kinds))] + [f"k_{name}" for name, _ in keywords]
        read = {"c": "{}", "t": "env[{}]", "v": "_value({}, env)"}
        passed = [read[kind].format(n) for kind, n in zip(kinds, names)] + \
            [f"{name}={read[kind].format('k_' + name)}" for name, kind in keywords]
        lines = [f"def call(env, _call, _name, f{''.join(', ' + n for n in names)}):",
                 f"    result = f({', '.join(passed)})",
                 "    return tuple(result) if result.__class__ is list else result"]
        filename = f"<agrad graph call {''.join(kinds)}{''.join(',' + n + '=' + k for n, k in keywords)}>"
        call = _CALLS[key] = codegen.define(lines, {"_value": _value}, filename, "call")
    return call


def _getitem_call(env: dict[str, Any], _call, _name: str, bound: BoundNode) -> Any:
    source = _resolve(bound.args[0], env)
    index = bound.args[1]
    if bound.selects_output:
        return source[index.items[0]]
    return source[_python_index(index, [_resolve(a, env) for a in bound.args])]


def _operands(table: tuple, given: list, given_none=()) -> tuple:
    """(operands, kinds, keywords, keyword operands) of a node's written arguments `given`, which
    binding puts in schema order (`table`: `_arguments`). An argument of `given_none` left out is
    passed as OMITTED, not as its default None (which would choose PyTorch's other overload:
    `sum(x)` is SumBackward0, `sum(x, dim: null)` SumBackward1)."""
    operands, kinds, keywords, kw_operands = [], [], [], []
    j = 0
    for arg, kwarg_only, has_default, tensor_kind in table:
        if j < len(given) and given[j][0] is arg:
            value = given[j][1]
            j += 1
            if value.__class__ is TensorRef:
                kind, operand = tensor_kind, (value.name if tensor_kind == "t" else (_CONVERTED, value.name, arg.type))
            elif isinstance(value, list):
                kind, operand = "v", (_RESOLVED, value, arg.type)
            else:
                kind, operand = "c", _convert(arg.type, value)
        elif has_default and not kwarg_only:
            # a schema default, passed as it is
            kind, operand = "c", OMITTED if arg.name in given_none else arg.default
        else:
            continue
        if kwarg_only:
            keywords.append((arg.name, kind))
            kw_operands.append(operand)
        else:
            kinds.append(kind)
            operands.append(operand)
    assert j == len(given), "a node's arguments are bound in schema order (binding.py)"
    return operands, kinds, keywords, kw_operands


def call_plan(bound: BoundNode) -> tuple:
    """How a bound node is computed, worked out once per node: a flat tuple `plan` whose
    `plan[0](env, *plan)` is the node's value and `plan[1]` its name. One tuple a node (a
    1,000,000-node file has millions): the call is shared by every node of its pattern."""
    if bound.plan is None:
        if bound.op == GETITEM:
            bound.plan = (_getitem_call, bound.name, bound)
            return bound.plan
        call, function, operands, kinds = plan_parts(bound)
        bound.plan = (call, bound.name, function, *operands)
    return bound.plan


def plan_parts(bound: BoundNode) -> tuple:
    """(call, function, operands, kinds) of a node's plan (not a getitem's), each operand's kind
    as `_call_for` reads it: "t" a tensor by name, "c" a constant, "v" a recipe for `_value`."""
    operands, kinds, keywords, kw_operands = _operands(_arguments(bound.schema), bound.given,
                                                       getattr(bound.entry, "given_none", ()))
    call = _call_for(tuple(kinds), tuple(keywords))
    return call, bound.entry.function or bound.entry, operands + kw_operands, kinds + [kind for _, kind in keywords]


def node_plans(order) -> Any:
    """Each node's plan (call_plan) in run order: a ColumnOrder makes them from its nodes' texts
    (column_order.py), a list's BoundNodes keep theirs."""
    plans = getattr(order, "plans", None)
    return plans() if plans is not None else [bound.plan or call_plan(bound) for bound in order]


def node_reads(order) -> Any:
    """(name, the names it reads) of each node of a list of BoundNodes in run order (a
    ColumnOrder gives release_plan its `last_reads` instead)."""
    return ((bound.name, _reads_of(bound)) for bound in order)


def _reads_of(bound: BoundNode) -> list[str]:
    # (not ref_names(): a set cached on every node; a plain argument read here without a call)
    reads = []
    for value in bound.args:
        if value.__class__ is TensorRef:
            reads.append(value.name)
        elif isinstance(value, (list, tuple)):
            reads += [ref.name for ref in refs_in(value)]
    if bound.kwargs:
        reads += [ref.name for ref in refs_in(bound.kwargs.values())]
    return reads


def _value(recipe: tuple, env: dict[str, Any]) -> Any:
    how, value, arg_type = recipe
    return _convert(arg_type, env[value] if how == _CONVERTED else _resolve(value, env))


def apply(bound: BoundNode, env: dict[str, Any]) -> Any:
    """The value of one node: a tensor, or a tuple for a multi-output node."""
    plan = bound.plan or call_plan(bound)
    return plan[0](env, *plan)


def node_name(fn) -> str:
    """A backward Node's name as agrad's tables, messages and documents show it: its name(), the engine's
    own Nodes without the C++ namespace PyTorch's name() gives them (torch::autograd::AccumulateGrad ->
    AccumulateGrad), as the SPEC's documents have always named them."""
    return fn.name().removeprefix("torch::autograd::")


def label(bound: BoundNode, result: Any, labels: dict | None = None) -> None:
    """Tag the backward Nodes this node made with its YAML name and line: in each Node's
    metadata, or, given `labels`, as `labels[Node] = (name, line)`, the Nodes left untouched
    (`inspect` of a large graph: 160 bytes a Node there, with the (name, line) its op's Nodes
    share, against 250 for a metadata dict of its own).

    Nodes are labelled as they are made, so every unlabelled Node reachable from
    the result is new: one op's result Node, or all the Nodes a composite (such as
    `grad` with create_graph) built. The walk stops at labelled Nodes and leaves.
    """
    _label_from(bound, [getattr(t, "grad_fn", None) for t in (result if isinstance(result, tuple) else (result,))],
                labels)


def _label_from(bound: BoundNode, todo: list, labels: dict | None = None) -> None:
    name = line = None
    while todo:
        fn = todo.pop()
        if fn is None:
            continue
        if labels is not None:
            if fn in labels or hasattr(fn, "variable"):
                continue                # labelled already, or a leaf's AccumulateGrad
            if name is None:
                name = (bound.name, bound.spec.line)    # one tuple for the Nodes of this node
            labels[fn] = name
            todo += fn.next_fns
            continue
        # (`_metadata`, not `metadata`: most Nodes met here are new, with none yet, or labelled)
        metadata = fn._metadata
        if metadata is not None and "yaml_node" in metadata or hasattr(fn, "variable"):
            continue                    # labelled already, or a leaf's AccumulateGrad
        if name is None:
            name, line = bound.name, bound.spec.line
        if metadata is None:
            fn._metadata = {"yaml_node": name, "line": line}
        else:
            metadata["yaml_node"] = name
            metadata["line"] = line
        todo += fn.next_fns


def label_all(order: list[BoundNode], env: dict[str, Any], released: dict[str, Any] | None = None) -> None:
    """Label the Nodes of a pass that `run_nodes(labelled=False)` made, as it would have: in
    run order, each walk stopping at Nodes already labelled. (A Node is only ever reachable
    from the results of its own op and later ones, so labelling after the pass is the same.)
    `released`: the grad_fn of each value the pass let go of (`run_nodes(release=...)`)."""
    for bound in order:
        if bound.op == GETITEM and bound.selects_output:
            continue
        value = env.get(bound.name)
        if value is not None:
            label(bound, value)
        elif released is not None and released.get(bound.name) is not None:
            _label_from(bound, [released[bound.name]])


def run_nodes(order: list[BoundNode], env: dict[str, Any],
              on_node: Callable[[BoundNode, Any, float], None] | None = None,
              on_error: Callable[[NodeFailure], None] | None = None,
              failed: set[str] | None = None, shared: SharedResults | None = None,
              labelled: bool = True, release=None,
              released: dict[str, Any] | None = None) -> dict[str, Any]:
    """Compute every node in `order` into `env`.

    `on_node(bound, value, seconds)` sees each value as it is made (anomaly checks,
    the profiler). Without `on_error` the first failure raises NodeFailure. With it (Meta
    inference), each failure is reported and the nodes that depend on it are
    skipped, so one bad node gives one error rather than a cascade. With `shared`
    (Meta inference of a check), nodes of one signature share one result, unlabelled.
    With `labelled=False` the Nodes are left unlabelled for `label_all` to label if anyone
    asks (a run: only an error, a profile or an anomaly report reads the labels).
    With `release` (runner.ReleasePlan, one tuple of names per node of `order`: the values nothing
    after it reads), those values leave `env` once the node has run, their grad_fn kept in `released` (if
    given) for `label_all` (the backward graph still holds what backward needs).
    """
    if on_node is None and on_error is None and not failed and shared is None and not labelled:
        return _run_plain(order, env, release, released)
    made = nodes_made(order, env, on_error=on_error, failed=failed, shared=shared, labelled=labelled,
                      release=release, released=released, timed=on_node is not None)
    if on_node is None:
        for _ in made:
            pass
    else:
        for _, bound, result, seconds in made:
            on_node(bound, result, seconds)
    return env


def nodes_made(order, env: dict[str, Any], *, on_error: Callable[[NodeFailure], None] | None = None,
               failed: set[str] | None = None, shared: SharedResults | None = None, labelled: bool = True,
               release=None, released: dict[str, Any] | None = None,
               timed: bool = False, labels: dict | None = None):
    """run_nodes one node at a time: yields (i, bound, value, seconds) as the value of node `i` of
    `order` is put in `env`, before the values it was the last to read (`release[i]`) leave it
    (`seconds`: 0.0 unless `timed`). A failed or skipped node yields nothing. `inspect` reads the
    build so, a row a node as it writes them. `labels`: where `label` puts the labels."""
    failed = set(failed or ())          # names with no value: failed leaves, unbound nodes
    clock = time.perf_counter if timed else _no_clock
    compute = apply if shared is None else shared.apply
    for i, bound in enumerate(order):
        if failed and (bound.name in failed or not failed.isdisjoint(bound.ref_names())):
            failed.add(bound.name)
            continue
        start = clock()
        try:
            result = compute(bound, env)
        except (Exception, SystemExit) as exc:      # noqa: BLE001 - any kernel error (a plugin's sys.exit too)
            failure = NodeFailure(bound, exc)
            if on_error is None:
                raise failure from exc
            on_error(failure)
            failed.add(bound.name)
            continue
        if labelled and shared is None and (bound.op != GETITEM or not bound.selects_output):
            label(bound, result, labels)
        env[bound.name] = result
        yield i, bound, result, clock() - start
        if release is not None and release[i]:
            _release(env, release[i], released)


def _run_plain(order, env: dict[str, Any], release, released) -> dict[str, Any]:
    """run_nodes' loop with nothing to watch (a run's forward): each node's plan called as it is,
    but for the commonest calls (a tensor, two tensors, a tensor and a constant), whose generated
    `call` is inlined here: a frame less per op of a long chain of small ones."""
    one, two, scaled = _call_for(("t",), ()), _call_for(("t", "t"), ()), _call_for(("t", "c"), ())
    i = 0
    try:
        # (ReleasePlan's own entries: a bare name where a node lets go of one, no tuple made for it)
        for plan, names in zip(node_plans(order), release.entries if release is not None else itertools.repeat(())):
            call = plan[0]
            if call is two:
                result = plan[2](env[plan[3]], env[plan[4]])
            elif call is one:
                result = plan[2](env[plan[3]])
            elif call is scaled:
                result = plan[2](env[plan[3]], plan[4])
            else:
                result = call(env, *plan)
            env[plan[1]] = tuple(result) if result.__class__ is list else result
            # _release inlined for a tensor with a history (a chain lets go of one every op)
            for name in (names,) if names.__class__ is str else names:
                value = env.get(name)
                meta = value._autograd_meta if value.__class__ is _Tensor else None
                if meta.__class__ is _AutogradMeta and meta.grad_fn is not None:
                    del env[name]
                    if released is not None:
                        released[name] = meta.grad_fn
                else:
                    _release(env, (name,), released)
            i += 1
    except (Exception, SystemExit) as exc:      # noqa: BLE001 - as run_nodes
        raise NodeFailure(order[i], exc) from exc
    return env


def _release(env: dict[str, Any], names: tuple[str, ...], released: dict[str, Any] | None) -> None:
    for name in names:
        value = env.get(name)
        if value.__class__ is _Tensor:
            # (the slots read directly, as Tensor.grad_fn / requires_grad would: once per op of a pass)
            meta = value._autograd_meta
            if meta is None:
                fn = None
            elif meta.__class__ is _AutogradMeta:
                fn = meta.grad_fn
                if fn is None and meta.requires_grad:
                    continue    # a leaf that requires grad (an op handed back its input): its .grad is read
            else:
                fn = value.grad_fn
                if fn is None and value.requires_grad:
                    continue
        elif value is None or value.__class__ is tuple:
            continue            # a multi-output node's values stay (few, and read by their selections)
        else:
            fn = getattr(value, "grad_fn", None)
            if fn is None and getattr(value, "requires_grad", False):
                continue
        del env[name]
        if released is not None:
            released[name] = fn     # None: it did not require grad


def _no_clock() -> float:
    return 0.0


class SharedResults:
    """Meta inference by signature: nodes that apply one op to inputs alike share one result.

    On Meta an op's result depends only on what its inputs are (shape, dtype, whether
    they require grad, are leaves or views) and on its constant arguments, so a chain of
    100,000 `tanh(n) * 0.999 + x` runs each of its three ops once. Inputs alike are made
    the same object (`canonical`), so a signature is the inputs' identities plus the
    constants. Shared results carry no per-node labels or backward graph: for checking
    only (`inspect` builds the graph node by node). Only for graphs of the library's own
    ops without `grad` (`applies_to`): a plugin's kernel may look at more than a signature.
    """

    __slots__ = ("results", "canonical")

    # NOTE: below this many nodes the check builds the Meta graph node by node, as `inspect`
    # needs it, and keeps it: a small file is checked in milliseconds either way, and its
    # Nodes are then numbered (sequence_nr) from wherever the process's count stood.
    MIN_NODES = 5_000

    def __init__(self, leaves: dict[str, Any]):
        self.results: dict[tuple, Any] = {}
        self.canonical: dict[tuple, Any] = {}
        for value in leaves.values():
            self.canonical.setdefault(_signature(value), value)

    @classmethod
    def applies_to(cls, order: list[BoundNode]) -> bool:
        if len(order) < cls.MIN_NODES:
            return False
        return all(bound.entry is None or cls.shares(bound.entry) for bound in order)

    @staticmethod
    def shares(entry) -> bool:
        """Whether the op's Meta result depends only on its signature: one of the library's own ops,
        not `grad` and its kin (tagged autograd), which look at the backward graph."""
        return "::" not in entry.name and entry.info is not None and "autograd" not in entry.info.tags

    def apply(self, bound: BoundNode, env: dict[str, Any]) -> Any:
        if bound.selects_output:
            return apply(bound, env)              # one of a tuple's values: already canonical
        try:
            key = self.key(bound, env)
            found = self.results.get(key)
        except TypeError:                         # an unhashable constant: this node runs itself
            key = found = None
        if found is not None:
            return found
        result = apply(bound, env)
        if isinstance(result, tuple):
            result = tuple(self.canonical.setdefault(_signature(t), t) if isinstance(t, agrad.Tensor) else t
                           for t in result)
        elif isinstance(result, agrad.Tensor):
            result = self.canonical.setdefault(_signature(result), result)
        if key is not None:
            self.results[key] = result
        return result

    @staticmethod
    def key(bound: BoundNode, env: dict[str, Any]) -> tuple:
        if bound.op == GETITEM:
            return (GETITEM, _identity(_resolve(bound.args[0], env)), bound.args[1],
                    tuple(_identity(_resolve(a, env)) for a in bound.args[2:]))
        key = [bound.entry]
        for value in bound.args:                # in schema order, defaults included
            if value.__class__ is TensorRef and (found := env[value.name]).__class__ is not tuple:
                key.append(id(found))           # the common case, without a call
            else:
                key.append(_written_key(value, env))
        if bound.kwargs:
            key.append(tuple((k, _written_key(v, env)) for k, v in bound.kwargs.items()))
        return tuple(key)


def _signature(t) -> tuple:
    """What a Meta op can see of a tensor."""
    if not isinstance(t, agrad.Tensor):
        return (type(t), id(t))
    return (tuple(t.shape), t.dtype, str(t.device), t.requires_grad, t.is_leaf, t._base is not None)


def _identity(value) -> Any:
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_identity(v) for v in value))
    return id(value) if isinstance(value, agrad.Tensor) else _constant(value)


def _constant(value) -> tuple:
    """A constant as a key: typed, as 1, 1.0 and True are equal in Python, and -0.0 told from 0.0."""
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_constant(v) for v in value))
    if type(value) is float:
        return (float, value, math.copysign(1.0, value))
    return (type(value), value)


def _written_key(value, env: dict[str, Any]) -> Any:
    """An argument's value as written, as a key: tensors by identity, constants typed."""
    if isinstance(value, TensorRef):
        return _identity(env[value.name])
    if isinstance(value, list):
        return (list, tuple(_written_key(v, env) for v in value))
    return _constant(value)
