"""`check`: every analytic gradient against float64 central differences, per leaf.

Leaves are cast to float64 (integer leaves stay as they are) and the forward is
rebuilt from them, so the comparison is not drowned in float32 rounding. A graph
that `run` accepts either checks, fails the comparison, or is refused with a
located reason (AG035): never an internal error.
"""
from __future__ import annotations

import math

import agrad

from .binding import GRAD
from .build import CheckedGraph
from .inputs import host_array
from .results import CheckResult, Diagnostic, GraphFileError, GraphRuntimeError, LeafCheck, SourceLocation
from .runner import Runner, output_names

# A full check runs two forward passes per input element and one backward pass per
# output element; past this many passes it would run for minutes: --fast runs three.
MAX_FULL_CHECK_PASSES = 20_000


def _refuse(file: str, pos, message: str) -> GraphFileError:
    return GraphFileError([Diagnostic("AG035", message, SourceLocation(file, pos.line, pos.col))])


def _feeding(graph: CheckedGraph, outputs: list[str]) -> set[str]:
    """Names of the nodes the outputs are computed from (the outputs included)."""
    needed = set(outputs)
    for bound in reversed(graph.order):
        if bound.name in needed:
            needed.update(r.name for r in bound.refs())
    return needed


def _refuse_uncheckable(graph: CheckedGraph, file: str, outputs: list[str], wrt: list[str], fast: bool) -> None:
    needed = _feeding(graph, outputs)
    for bound in graph.order:
        given = {arg.name: value for arg, value, _ in bound.given}
        if bound.name in needed and bound.op == GRAD and given.get("create_graph") is not True:
            raise _refuse(file, bound.spec.pos, f"'{bound.spec.owner}' calls grad() without create_graph=True, so "
                          "its result is a constant to backward while finite differences see it change: the two "
                          "cannot agree; add create_graph=True to check through it")
    if fast or not wrt:
        return
    passes = sum(2 * math.prod(graph.leaves[name].shape) for name in wrt)
    passes += sum(math.prod(v.shape) for name in outputs if not isinstance(v := graph.meta.get(name), tuple)
                  and v is not None and v.dtype.is_floating_point)
    if passes > MAX_FULL_CHECK_PASSES:
        biggest = max(wrt, key=lambda name: math.prod(graph.leaves[name].shape))
        raise _refuse(file, graph.spec.inputs[biggest].pos,
                      f"a full check of this graph runs {passes:,} passes (two per element of input "
                      f"'{biggest}' and of every input that requires grad, one per output element); "
                      "use --fast, which checks one random direction per input")


def check_gradients(graph: CheckedGraph, file: str, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                    fast: bool = False) -> CheckResult:
    spec = graph.spec
    runner = Runner(graph, file)
    warnings = []
    wrt = [name for name, plan in graph.leaves.items() if plan.requires_grad]
    outputs = output_names(graph)
    if not wrt:
        return CheckResult(graph=spec.name, file=file, passed=True, leaves={},
                           warnings=["no input has requires_grad: true; nothing to check"])
    _refuse_uncheckable(graph, file, outputs, wrt, fast)
    runner.refuse_beyond_memory()
    base = {}
    for name, plan in graph.leaves.items():
        try:
            data = host_array(plan, graph.seed)
            dtype = agrad.float64 if data.dtype.kind == "f" else agrad.dtypes.from_name(plan.dtype)
            base[name] = agrad.tensor(data, dtype=dtype, device=plan.device)
        except (RuntimeError, MemoryError, ValueError, TypeError) as exc:
            raise runner.failures.leaf(name, exc) from exc
    float_leaves = [name for name, plan in graph.leaves.items() if plan.dtype != "float64" and
                    plan.dtype.startswith("float")]
    if float_leaves:
        warnings.append(f"the graph is not float64 ({', '.join(float_leaves)}); check casts its float inputs to "
                        "float64, so it tests the formulas, not the graph's own precision")

    def fn(*tensors):
        # gradcheck evaluates its finite differences under no_grad; a `grad` node inside
        # the graph needs grad mode and leaves that require grad to differentiate at all.
        with agrad.enable_grad():
            env = dict(base)
            env.update((name, t if t.requires_grad else t.detach().requires_grad_(True))
                       for name, t in zip(wrt, tensors))
            env = runner.forward(env)           # a failing kernel: located, as in `run`
            runner.forward_profile.clear()
        values = [env[name] for name in outputs]
        return tuple(v for v in values if not isinstance(v, tuple) and v.dtype.is_floating_point)

    inputs = [base[name].detach().requires_grad_(True) for name in wrt]
    try:
        reports = agrad.testing.gradcheck_report(fn, inputs, eps=eps, atol=atol, rtol=rtol, fast_mode=fast, seed=0)
    except GraphRuntimeError:
        raise
    except (Exception, SystemExit) as exc:      # noqa: BLE001 - a backward formula failed: located at its node
        node = getattr(exc, "agrad_node", None)
        yaml_node = runner.yaml_node_of(node)
        raise runner.failures.backward(exc, yaml_node, node.name() if node is not None else None,
                                       runner.location(outputs[0] if outputs else None)) from exc
    leaves = {}
    for name, report in zip(wrt, reports):
        worst = report.worst_index
        leaves[name] = LeafCheck(name=name, max_abs_err=float(report.max_abs_err),
                                 max_rel_err=float(report.max_rel_err), passed=bool(report.passed),
                                 worst_index=None if worst is None else [int(i) for i in worst])
    return CheckResult(graph=spec.name, file=file, passed=all(c.passed for c in leaves.values()), leaves=leaves,
                       warnings=warnings)
