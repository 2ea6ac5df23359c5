"""Runs bound nodes in order on whatever tensors it is given: Meta ones to infer
shapes and build the backward graph, real ones to compute.

Every backward Node an op creates is labelled with the YAML node and line that
made it (`Node.metadata`), so engine errors and anomaly reports can point at the
file.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import agrad

from .binding import GETITEM, BoundNode
from .expressions import Index, Slice, TensorIndex
from .spec import NO_KEYWORDS, TensorRef


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


# how an argument's value is found at each call: as written, a tensor by name, a tensor by
# name converted (`grad(y, x)`'s one tensor made a list), a list rebuilt (it may hold tensors)
_CONSTANT, _TENSOR, _CONVERTED, _RESOLVED = 0, 1, 2, 3


_DEFAULTS: dict[int, tuple] = {}      # id(schema Argument) -> (the Argument, its default's recipe)


def _recipe(arg, value, given: bool) -> tuple:
    """(how, value, schema type) of one argument: a constant is converted once, here."""
    if not given:                                  # a schema default, passed as it is: one recipe per argument
        known = _DEFAULTS.get(id(arg))
        if known is None or known[0] is not arg:
            known = _DEFAULTS[id(arg)] = (arg, (_CONSTANT, value, None))
        return known[1]
    if isinstance(value, TensorRef):
        plain = arg.type.rstrip("?") not in ("Tensor[]", "ScalarType")    # what _convert leaves as it is
        return (_TENSOR if plain else _CONVERTED), value.name, arg.type
    if isinstance(value, list):
        return _RESOLVED, value, arg.type
    return _CONSTANT, _convert(arg.type, value), None


def call_plan(bound: BoundNode) -> tuple[list[tuple], dict[str, tuple]]:
    """The positional and keyword argument recipes of a bound op, worked out once per node."""
    if bound.plan is None:
        values = {arg.name: value for arg, value, _ in bound.given}
        args, kwargs = [], {}
        for arg in bound.schema.arguments:
            given = arg.name in values
            if not given and not arg.has_default:
                continue
            recipe = _recipe(arg, values[arg.name] if given else arg.default, given)
            if not arg.kwarg_only:
                args.append(recipe)
            elif given:
                kwargs[arg.name] = recipe
        bound.plan = (args, kwargs or NO_KEYWORDS)
    return bound.plan


def _value(recipe: tuple, env: dict[str, Any]) -> Any:
    how, value, arg_type = recipe
    if how == _CONSTANT:
        return value
    if how == _TENSOR:
        return env[value]
    return _convert(arg_type, env[value] if how == _CONVERTED else _resolve(value, env))


def apply(bound: BoundNode, env: dict[str, Any]) -> Any:
    """The value of one node: a tensor, or a tuple for a multi-output node."""
    if bound.op == GETITEM:
        source = _resolve(bound.args[0], env)
        index = bound.args[1]
        if bound.selects_output:
            return source[index.items[0]]
        return source[_python_index(index, [_resolve(a, env) for a in bound.args])]
    plan_args, plan_kwargs = bound.plan or call_plan(bound)
    args = [value if how == _CONSTANT else env[value] if how == _TENSOR else _value((how, value, arg_type), env)
            for how, value, arg_type in plan_args]
    result = (bound.entry(*args, **{k: _value(r, env) for k, r in plan_kwargs.items()}) if plan_kwargs
              else bound.entry(*args))
    return tuple(result) if isinstance(result, list) else result


def label(bound: BoundNode, result: Any) -> None:
    """Tag the backward Nodes this node made with its YAML name and line.

    Nodes are labelled as they are made, so every unlabelled Node reachable from
    the result is new: one op's result Node, or all the Nodes a composite (such as
    `grad` with create_graph) built. The walk stops at labelled Nodes and leaves.
    """
    todo = [getattr(t, "grad_fn", None) for t in (result if isinstance(result, tuple) else (result,))]
    name = line = None
    while todo:
        fn = todo.pop()
        if fn is None or hasattr(fn, "variable"):
            continue
        metadata = fn.metadata
        if "yaml_node" in metadata:
            continue
        if name is None:
            name, line = bound.name, bound.spec.line
        metadata["yaml_node"] = name
        metadata["line"] = line
        todo += fn.next_fns


def label_all(order: list[BoundNode], env: dict[str, Any]) -> None:
    """Label the Nodes of a pass that `run_nodes(labelled=False)` made, as it would have: in
    run order, each walk stopping at Nodes already labelled. (A Node is only ever reachable
    from the results of its own op and later ones, so labelling after the pass is the same.)"""
    for bound in order:
        value = env.get(bound.name)
        if value is not None and (bound.op != GETITEM or not bound.selects_output):
            label(bound, value)


def run_nodes(order: list[BoundNode], env: dict[str, Any],
              on_node: Callable[[BoundNode, Any, float], None] | None = None,
              on_error: Callable[[NodeFailure], None] | None = None,
              failed: set[str] | None = None, shared: SharedResults | None = None,
              labelled: bool = True) -> dict[str, Any]:
    """Compute every node in `order` into `env`.

    `on_node(bound, value, seconds)` sees each value as it is made (anomaly checks,
    the profiler). Without `on_error` the first failure raises NodeFailure. With it (Meta
    inference), each failure is reported and the nodes that depend on it are
    skipped, so one bad node gives one error rather than a cascade. With `shared`
    (Meta inference of a check), nodes of one signature share one result, unlabelled.
    With `labelled=False` the Nodes are left unlabelled for `label_all` to label if anyone
    asks (a run: only an error, a profile or an anomaly report reads the labels).
    """
    failed = set(failed or ())          # names with no value: failed leaves, unbound nodes
    clock = time.perf_counter if on_node is not None else _no_clock
    compute = apply if shared is None else shared.apply
    for bound in order:
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
            label(bound, result)
        env[bound.name] = result
        if on_node is not None:
            on_node(bound, result, clock() - start)
    return env


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
