"""`agrad test`: load, run and check one graph file's `expect:`, training it when the
expectations include `train:` (a CI gate must not call an unchecked bound passed)."""
from __future__ import annotations

import time

from .graph import load, load_engine
from .results import ExpectFailure, GraphFileError, GraphRuntimeError, SourceLocation, TestOutcome


def train_failures(graph) -> list[ExpectFailure]:
    """Train `graph` as `agrad train` does and check `expect.train`: one failure per bound missed,
    located at the bound, or one for a loss that became NaN/Inf."""
    from .train_section import expectation_failures, train_spec
    from .training import TrainingDiverged

    spec = train_spec(graph)
    try:
        run = graph.train()
    except TrainingDiverged as exc:
        return [ExpectFailure("train", str(exc), exc.location)]
    failures = []
    for problem in expectation_failures(spec, run):
        bound = next(b for b in spec.expect if problem.startswith(f"expect.train.{b.name}:"))
        where = SourceLocation(graph.file, bound.pos.line, bound.pos.col) if bound.pos is not None else None
        failures.append(ExpectFailure(f"train.{bound.name}", problem.split(": ", 1)[1], where))
    return failures


def test_file(path, *, plugins=(), train: bool = True, source: str | None = None,
              sandbox: bool = False) -> TestOutcome:
    """`train=False` (`--no-train`) leaves `expect.train` unchecked, and the outcome says so;
    `source`: the graph's text when it was read from stdin (`path` then only names it);
    `sandbox`: data files outside the graph's folder are refused."""
    load_engine()         # once per process, not part of the first file's duration
    start = time.perf_counter()
    outcome = TestOutcome(file=str(path), graph="", passed=False)
    try:
        graph = load(path, plugins=plugins, source=source, sandbox=sandbox)
        outcome.graph = graph.name
        expect = graph.run().result().expect
        outcome.failures = list(expect.failures)
        outcome.checked = expect.checked
        outcome.unchecked = list(expect.unchecked)
        if train and "train" in outcome.unchecked:
            outcome.failures += train_failures(graph)
            outcome.unchecked.remove("train")
            outcome.checked = True
    except GraphFileError as exc:
        outcome.diagnostics = exc.diagnostics
    except GraphRuntimeError as exc:
        outcome.error_diagnostic = exc.diagnostic
        outcome.error = str(exc.diagnostic)
    else:
        # A graph without `expect:` ran, but nothing was checked: not a pass (`agrad test` says so);
        # nor is one whose training was skipped (--no-train).
        outcome.passed = not outcome.failures and outcome.checked and not outcome.unchecked
    outcome.duration_ms = (time.perf_counter() - start) * 1e3
    return outcome


# pytest would otherwise collect `test_file` from modules that import it.
test_file.__test__ = False
