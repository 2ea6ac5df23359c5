"""`agrad test`: load, run and check one graph file's `expect:`."""
from __future__ import annotations

import time

from .graph import load, load_engine
from .results import GraphFileError, GraphRuntimeError, TestOutcome


def test_file(path, *, plugins=(), sandbox: bool = False) -> TestOutcome:
    load_engine()         # once per process, not part of the first file's duration
    start = time.perf_counter()
    outcome = TestOutcome(file=str(path), graph="", passed=False)
    try:
        graph = load(path, plugins=plugins, sandbox=sandbox)
        outcome.graph = graph.name
        result = graph.run().result()
    except GraphFileError as exc:
        outcome.diagnostics = exc.diagnostics
    except GraphRuntimeError as exc:
        outcome.error_diagnostic = exc.diagnostic
        outcome.error = str(exc.diagnostic)
    else:
        outcome.failures = list(result.expect.failures)
        outcome.checked = result.expect.checked
        # A graph without `expect:` ran, but nothing was checked: not a pass (`agrad test` says so).
        outcome.passed = result.expect.passed and result.expect.checked
    outcome.duration_ms = (time.perf_counter() - start) * 1e3
    return outcome


# pytest would otherwise collect `test_file` from modules that import it.
test_file.__test__ = False
