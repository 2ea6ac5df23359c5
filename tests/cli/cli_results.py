"""Hand-built result objects, so renderers are tested without running a graph, and how to render them."""
from __future__ import annotations

import io

from rich.console import Console

from agrad.graphs.results import (AnomalyReport, CheckResult, Diagnostic, ExpectFailure, ExpectResult,
                                  InspectBackwardNode, InspectNode, InspectResult, LeafCheck, ProfileRecord,
                                  RunResult, SourceLocation, TensorSummary, TestOutcome)

SEED_FILE = "graphs/examples/seed.yaml"
UINT64_MAX = 2**64 - 1     # the sequence_nr of AccumulateGrad, as in PyTorch


WIDTH = 80      # golden tables are rendered at this width (every pipe and CI log), as with COLUMNS=80


def render_text(renderable, width: int = WIDTH) -> str:
    """A renderable as plain text at a fixed width, as a terminal without colour shows it."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, markup=False, highlight=False).print(renderable)
    return buffer.getvalue()


def scalar(value: float, dtype: str = "float32") -> TensorSummary:
    summary = {"min": value, "max": value, "mean": value, "norm": abs(value)} if dtype.startswith("float") else None
    return TensorSummary(shape=[], dtype=dtype, device="cpu", value=value, summary=summary, numel=1)


def seed_run(**overrides) -> RunResult:
    """What `agrad run graphs/examples/seed.yaml` produces: d = a * (a + b) at a=1, b=2."""
    fields = dict(
        graph="seed", file=SEED_FILE, device="cpu",
        outputs={"d": scalar(3.0)},
        grads={"a": scalar(4.0), "b": scalar(1.0)},
        not_retained=["c"],
        timings_ms={"parse": 0.4, "build": 0.1, "forward": 0.05, "backward": 0.08},
        expect=ExpectResult(passed=True),
    )
    fields.update(overrides)
    return RunResult(**fields)


def failed_expect() -> ExpectResult:
    return ExpectResult(passed=False, failures=[
        ExpectFailure("outputs.d", "expected 4.0, got 3.0 (max abs err 1.0)", SourceLocation(SEED_FILE, 20, 17))])


def seed_profile() -> list[ProfileRecord]:
    return [
        ProfileRecord("c", "add", "forward", 1, 0.010, line=14, start_ms=[0.0], duration_ms=[0.010]),
        ProfileRecord("d", "mul", "forward", 1, 0.030, line=15, start_ms=[0.02], duration_ms=[0.030]),
        ProfileRecord("d", "MulBackward0", "backward", 1, 0.040, line=15, start_ms=[0.10], duration_ms=[0.040]),
        ProfileRecord("c", "AddBackward0", "backward", 1, 0.020, line=14, start_ms=[0.15], duration_ms=[0.020]),
    ]


def seed_inspect() -> InspectResult:
    return InspectResult(
        graph="seed", file=SEED_FILE,
        nodes=[
            InspectNode("a", "input", [], [], "float32", "cpu", "", 10),
            InspectNode("b", "input", [], [], "float32", "cpu", "", 11),
            InspectNode("c", "add", ["a", "b"], [], "float32", "cpu", "Autograd -> CPU", 14),
            InspectNode("d", "mul", ["a", "c"], [], "float32", "cpu", "Autograd -> CPU", 15),
        ],
        backward=[
            InspectBackwardNode(0, "MulBackward0", "d", [(2, 0), (1, 0)], 1, 2, 0, 15),
            InspectBackwardNode(1, "AddBackward0", "c", [(2, 0), (3, 0)], 0, 1, 1, 14),
            InspectBackwardNode(2, "AccumulateGrad", "a", [], UINT64_MAX, 0, 2, 10),
            InspectBackwardNode(3, "AccumulateGrad", "b", [], UINT64_MAX, 0, 1, 11),
        ],
        order=[0, 1, 3, 2],
        edges=[("a", "c", []), ("b", "c", []), ("a", "d", []), ("c", "d", [])],
    )


def seed_check(passed: bool = True) -> CheckResult:
    b_err = 1.2e-7 if passed else 0.5
    return CheckResult(graph="seed", file=SEED_FILE, passed=passed, leaves={
        "a": LeafCheck("a", 3.1e-8, 7.7e-9, True, [], 4.0, 4.0, 0, SourceLocation(SEED_FILE, 10, 3)),
        "b": LeafCheck("b", b_err, b_err, passed, [], 1.0 + b_err, 1.0, 0, SourceLocation(SEED_FILE, 11, 3)),
    })


def bad_name_diagnostic(file: str = SEED_FILE) -> Diagnostic:
    return Diagnostic("AG020", "undefined name 'e'", SourceLocation(file, 15, 10), hint="'d'")


def anomaly() -> AnomalyReport:
    return AnomalyReport("backward", "MulBackward0", "MulBackward0 returned nan in its 0th output",
                         SourceLocation(SEED_FILE, 15, 3))


def outcome(file: str, passed: bool = True, **fields) -> TestOutcome:
    return TestOutcome(file=file, graph="seed", passed=passed, duration_ms=1.5, **fields)
