"""Runs bound nodes in order on whatever tensors it is given: Meta ones to infer
shapes and build the backward graph, real ones to compute.

Every backward Node an op creates is labelled with the YAML node and line that
made it (`Node.metadata`), so engine errors and anomaly reports can point at the
file.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import agrad

from .binding import GETITEM, BoundNode
from .expressions import Index, Slice, TensorIndex
from .spec import TensorRef


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


_CONSTANT, _TENSOR, _RESOLVED = 0, 1, 2        # how an argument's value is found at each call


def _recipe(arg, value, given: bool) -> tuple:
    """(how, value, schema type) of one argument: a constant is converted once, here."""
    if not given:
        return _CONSTANT, value, None              # a schema default, passed as it is
    if isinstance(value, TensorRef):
        return _TENSOR, value.name, arg.type
    if isinstance(value, list):                    # rebuilt at each call: it may hold tensors
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
        bound.plan = (args, kwargs)
    return bound.plan


def _value(recipe: tuple, env: dict[str, Any]) -> Any:
    how, value, arg_type = recipe
    if how == _CONSTANT:
        return value
    return _convert(arg_type, env[value] if how == _TENSOR else _resolve(value, env))


def apply(bound: BoundNode, env: dict[str, Any]) -> Any:
    """The value of one node: a tensor, or a tuple for a multi-output node."""
    if bound.op == GETITEM:
        source = _resolve(bound.args[0], env)
        index = bound.args[1]
        if bound.selects_output:
            return source[index.items[0]]
        return source[_python_index(index, [_resolve(a, env) for a in bound.args])]
    plan_args, plan_kwargs = bound.plan or call_plan(bound)
    args = [_value(r, env) for r in plan_args]
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
    while todo:
        fn = todo.pop()
        if fn is None or "yaml_node" in fn.metadata or hasattr(fn, "variable"):
            continue
        fn.metadata["yaml_node"] = bound.name
        fn.metadata["line"] = bound.spec.line
        todo.extend(edge.function for edge in fn.next_edges)


def run_nodes(order: list[BoundNode], env: dict[str, Any],
              on_node: Callable[[BoundNode, Any, float], None] | None = None,
              on_error: Callable[[NodeFailure], None] | None = None,
              failed: set[str] | None = None) -> dict[str, Any]:
    """Compute every node in `order` into `env`.

    `on_node(bound, value, seconds)` sees each value as it is made (anomaly checks,
    the profiler). Without `on_error` the first failure raises NodeFailure. With it (Meta
    inference), each failure is reported and the nodes that depend on it are
    skipped, so one bad node gives one error rather than a cascade.
    """
    failed = set(failed or ())          # names with no value: failed leaves, unbound nodes
    clock = time.perf_counter if on_node is not None else _no_clock
    for bound in order:
        if failed and (bound.name in failed or not failed.isdisjoint(bound.ref_names())):
            failed.add(bound.name)
            continue
        start = clock()
        try:
            result = apply(bound, env)
        except (Exception, SystemExit) as exc:      # noqa: BLE001 - any kernel error (a plugin's sys.exit too)
            failure = NodeFailure(bound, exc)
            if on_error is None:
                raise failure from exc
            on_error(failure)
            failed.add(bound.name)
            continue
        if bound.op != GETITEM or not bound.selects_output:
            label(bound, result)
        env[bound.name] = result
        if on_node is not None:
            on_node(bound, result, clock() - start)
    return env


def _no_clock() -> float:
    return 0.0
