"""`check`: every analytic gradient against float64 central differences, per leaf.

Leaves are cast to float64 (integer leaves stay as they are) and the forward is
rebuilt from them, so the comparison is not drowned in float32 rounding. A graph
that `run` accepts either checks, fails the comparison, or is refused with a
located reason (AG035): never an internal error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import agrad
from agrad.autograd.gradcheck import compared_outputs, vjp
from agrad.fp_warnings import quiet

from .binding import GRAD
from .build import CheckedGraph
from .check_replay import BackwardReplay, ForwardReplay
from .executor import node_name
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


def _refuse_uncheckable(graph: CheckedGraph, file: str, outputs: list[str], wrt: list[str], fast: bool,
                        max_passes: int) -> None:
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
                  and v is not None and v.dtype.is_floating_point) \
        + sum(2 * math.prod(v.shape) for name in outputs if not isinstance(v := graph.meta.get(name), tuple)
              and v is not None and v.dtype.is_complex)
    if passes > max_passes:
        biggest = max(wrt, key=lambda name: math.prod(graph.leaves[name].shape))
        raise _refuse(file, graph.spec.inputs[biggest].pos,
                      f"a full check of this graph runs {passes:,} passes (two per element of input "
                      f"'{biggest}' and of every input that requires grad, one per output element); "
                      "use --fast, which checks one random direction per input")


def _worst(report) -> tuple[float | None, float | None, int | None]:
    """Analytic and numeric values where they differ most, and which output element that is."""
    if report.numerical is None or report.analytical is None or not report.numerical.size:
        return None, None, None
    diff = np.abs(report.analytical - report.numerical)
    where = np.unravel_index(int(np.argmax(np.where(np.isnan(diff), np.inf, diff))), diff.shape)
    row = int(where[0]) if diff.ndim == 2 else None
    return float(report.analytical[where]), float(report.numerical[where]), row


def _second_order(fn, n_wrt: int, seed: int = 0):
    """What `--second-order` checks, as PyTorch's gradgradcheck: the gradients v·dy/dx, for a fixed
    random v, are themselves differentiated by backward and by finite differences."""
    rng = np.random.default_rng(seed)
    directions: list = []

    def first_derivatives(*xs):
        with agrad.enable_grad():
            xs = [x if x.requires_grad else x.detach().requires_grad_(True) for x in xs]
            outs = [o for o in fn(*xs) if o.requires_grad]
            if not outs:
                return ()
            if not directions:
                directions.extend(agrad.tensor(rng.standard_normal(tuple(o.shape)), dtype=agrad.float64,
                                               device=o.device) for o in outs)
            grads = agrad.autograd.grad(outs, xs, directions, create_graph=True, allow_unused=True)
        # an input the outputs do not reach has a zero gradient, so every call returns n_wrt tensors
        return tuple(agrad.zeros_like(x) if g is None else g for x, g in zip(xs, grads))

    return first_derivatives


@dataclass
class CheckSetup:
    """What a check compares, built once per process from the checked graph: the float64
    leaves that require grad (`inputs`, named `wrt`), and `fn`, the graph's forward from
    those leaves to its float outputs. `agrad check --workers` builds one on every worker
    from the file's text (graphs/distributed/check.py)."""
    runner: Runner
    wrt: list[str]
    outputs: list[str]
    fn: Callable
    inputs: list
    warnings: list[str]
    skipped: list[str]          # outputs not compared: they do not require grad (`detach(h)` kept for logging)
    compared: list[bool]        # per float output, whether it is compared (gradcheck's compared_outputs): asked
    #                             once in grad mode, as values-only passes (replayed) make no output require grad


def check_setup(graph: CheckedGraph, file: str, *, fast: bool = False,
                max_passes: int = MAX_FULL_CHECK_PASSES, replay: bool = True) -> CheckSetup | None:
    """None when no input requires grad; raises GraphFileError (AG035) for a graph that
    cannot be checked, or a full check of more than `max_passes` passes. `replay=False`:
    every finite-difference pass runs through the engine."""
    runner = Runner(graph, file)
    warnings = []
    wrt = [name for name, plan in graph.leaves.items() if plan.requires_grad]
    outputs = output_names(graph)
    if not wrt:
        return None
    _refuse_uncheckable(graph, file, outputs, wrt, fast, max_passes)
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

    def leaves(tensors) -> dict:
        env = dict(base)
        env.update((name, t if t.requires_grad else t.detach().requires_grad_(True)) for name, t in zip(wrt, tensors))
        return env

    def forward(env):
        env = runner.forward(env)           # a failing kernel: located, as in `run`
        runner.forward_profile.clear()
        return env

    def floats(env):
        # a complex output is compared as its real and imaginary parts (view_as_real: a real tensor whose
        # backward is the complex one), what central differences of the real leaves measure
        return tuple(agrad.view_as_real(v) if v.dtype.is_complex else v
                     for v in (env[name] for name in outputs) if _is_float_tensor(v))

    def values(*tensors) -> list:
        # the graph runs as `run` runs it, in grad mode, from leaves that require grad: a `grad`
        # node inside it differentiates whatever gradcheck's caller's mode is
        with agrad.enable_grad():
            env = forward(leaves(tensors))
        return [env[name] for name in outputs]

    recording = ForwardReplay()

    def fn(*tensors):
        # the finite differences' passes (run under no_grad by gradcheck_report and check --workers),
        # the same graph with one value changed, replay the first of them (graphs/check_replay.py)
        values_only = replay and not agrad.is_grad_enabled()
        with agrad.enable_grad():
            env = leaves(tensors)
            if values_only and recording.fits(env):
                replayed = recording.outputs(env)
                if replayed is not None:
                    return replayed
            if values_only and not recording.recorded:
                return recording.record(env, forward, floats)
            return floats(forward(env))

    inputs = [base[name].detach().requires_grad_(True) for name in wrt]
    # what gradcheck compares (agrad.autograd.gradcheck.compared_outputs): the outputs that require
    # grad, as torch.autograd.gradcheck; the others are named, so a check never passes silently
    keep = compared_outputs(fn, inputs)
    compared = iter(keep)
    skipped = [name for name, v in zip(outputs, values(*inputs)) if not (_is_float_tensor(v) and next(compared))]
    if skipped:
        names = ", ".join(f"'{name}'" for name in skipped)
        warnings.append(f"output {names} is not compared: it does not require grad" if len(skipped) == 1 else
                        f"outputs {names} are not compared: they do not require grad")
        warnings[-1] += " (as in torch.autograd.gradcheck, only outputs that require grad are checked)"
    return CheckSetup(runner, wrt, outputs, fn, inputs, warnings, skipped, keep)


def _is_float_tensor(value) -> bool:
    # (a complex output is compared as its real and imaginary parts: `floats` in check_setup)
    return not isinstance(value, tuple) and (value.dtype.is_floating_point or value.dtype.is_complex)


def located_backward_failure(setup: CheckSetup, exc: BaseException) -> GraphRuntimeError:
    """A backward formula failed during the check: located at its node."""
    runner, outputs = setup.runner, setup.outputs
    node = getattr(exc, "agrad_node", None)
    yaml_node = runner.yaml_node_of(node)
    return runner.failures.backward(exc, yaml_node, node_name(node) if node is not None else None,
                                    runner.location(outputs[0] if outputs else None))


def nothing_to_check(graph: CheckedGraph, file: str) -> CheckResult:
    return CheckResult(graph=graph.spec.name, file=file, passed=True, leaves={},
                       warnings=["no input has requires_grad: true; nothing to check"])


def check_result(graph: CheckedGraph, file: str, setup: CheckSetup, reports, *, fast: bool = False,
                 second_order: bool = False) -> CheckResult:
    """The per-leaf verdicts of gradcheck's reports (one per leaf of `setup.wrt`, in order)."""
    leaves = {}
    for name, report in zip(setup.wrt, reports):
        worst = report.worst_index
        analytic, numeric, row = _worst(report)
        pos = graph.spec.inputs[name].pos
        leaves[name] = LeafCheck(name=name, max_abs_err=float(report.max_abs_err),
                                 max_rel_err=float(report.max_rel_err), passed=bool(report.passed),
                                 worst_index=None if worst is None else [int(i) for i in worst],
                                 analytic=analytic, numeric=numeric, output_index=None if fast else row,
                                 location=SourceLocation(file, pos.line, pos.col),
                                 nondeterminism=report.nondeterminism)
    return CheckResult(graph=graph.spec.name, file=file, passed=all(c.passed for c in leaves.values()),
                       leaves=leaves, warnings=setup.warnings, order=2 if second_order else 1,
                       skipped_outputs=setup.skipped)


@quiet()      # NumPy's floating-point warnings off, as for a run (runner.run_graph)
def check_gradients(graph: CheckedGraph, file: str, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                    fast: bool = False, second_order: bool = False, replay: bool = True) -> CheckResult:
    """`second_order`: the gradients' own derivatives (PyTorch's gradgradcheck), see `_second_order`;
    `replay=False`: every pass through the engine (see `check_setup`)."""
    setup = check_setup(graph, file, fast=fast, replay=replay)
    if setup is None:
        return nothing_to_check(graph, file)
    checked = _second_order(setup.fn, len(setup.wrt)) if second_order else setup.fn
    # the analytic Jacobian's backward passes, one per output element, replayed after each output's
    # first (graphs/check_replay.py); fast mode has one per output, nothing to replay
    rows = BackwardReplay() if replay and not (fast or second_order) else vjp
    try:
        reports = agrad.testing.gradcheck_report(checked, setup.inputs, eps=eps, atol=atol, rtol=rtol,
                                                 fast_mode=fast, seed=0, vjp=rows)
    except GraphRuntimeError:
        raise
    except (Exception, SystemExit) as exc:      # noqa: BLE001 - a backward formula failed: located at its node
        raise located_backward_failure(setup, exc) from exc
    return check_result(graph, file, setup, reports, fast=fast, second_order=second_order)
