"""`check`: every analytic gradient against float64 central differences, per leaf.

Leaves are cast to float64 (integer leaves stay as they are) and the forward is
rebuilt from them, so the comparison is not drowned in float32 rounding.
"""
from __future__ import annotations

import agrad

from .build import CheckedGraph
from .executor import run_nodes
from .inputs import host_array
from .results import CheckResult, LeafCheck
from .runner import output_names


def check_gradients(graph: CheckedGraph, file: str, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                    fast: bool = False) -> CheckResult:
    spec = graph.spec
    warnings = []
    base = {}
    for name, plan in graph.leaves.items():
        data = host_array(plan, graph.seed)
        dtype = agrad.float64 if data.dtype.kind == "f" else agrad.dtypes.from_name(plan.dtype)
        base[name] = agrad.tensor(data, dtype=dtype, device=plan.device)
    float_leaves = [name for name, plan in graph.leaves.items() if plan.dtype != "float64" and
                    plan.dtype.startswith("float")]
    if float_leaves:
        warnings.append(f"the graph is not float64 ({', '.join(float_leaves)}); check casts its float inputs to "
                        "float64, so it tests the formulas, not the graph's own precision")
    wrt = [name for name, plan in graph.leaves.items() if plan.requires_grad]
    outputs = output_names(graph)

    def fn(*tensors):
        # gradcheck evaluates its finite differences under no_grad; a `grad` node inside
        # the graph needs grad mode and leaves that require grad to differentiate at all.
        with agrad.enable_grad():
            env = dict(base)
            env.update((name, t if t.requires_grad else t.detach().requires_grad_(True))
                       for name, t in zip(wrt, tensors))
            run_nodes(graph.order, env)
        values = [env[name] for name in outputs]
        return tuple(v for v in values if not isinstance(v, tuple) and v.dtype.is_floating_point)

    inputs = [base[name].detach().requires_grad_(True) for name in wrt]
    reports = agrad.testing.gradcheck_report(fn, inputs, eps=eps, atol=atol, rtol=rtol, fast_mode=fast, seed=0)
    leaves = {}
    for name, report in zip(wrt, reports):
        worst = report.worst_index
        leaves[name] = LeafCheck(name=name, max_abs_err=float(report.max_abs_err),
                                 max_rel_err=float(report.max_rel_err), passed=bool(report.passed),
                                 worst_index=None if worst is None else [int(i) for i in worst])
    if not wrt:
        warnings.append("no input has requires_grad: true; nothing to check")
    return CheckResult(graph=spec.name, file=file, passed=all(c.passed for c in leaves.values()), leaves=leaves,
                       warnings=warnings)
