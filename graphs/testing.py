"""`agrad test`: load, run and check one graph file's `expect:`."""
from __future__ import annotations

import time

from .graph import load
from .results import GraphFileError, GraphRuntimeError, TestOutcome


def test_file(path, *, plugins=()) -> TestOutcome:
    start = time.perf_counter()
    outcome = TestOutcome(file=str(path), graph="", passed=False)
    try:
        graph = load(path, plugins=plugins)
        outcome.graph = graph.name
        result = graph.run().result()
    except GraphFileError as exc:
        outcome.diagnostics = exc.diagnostics
    except GraphRuntimeError as exc:
        where = f"{exc.location}: " if exc.location else ""
        outcome.error = f"{where}{exc}"
    else:
        outcome.failures = list(result.expect.failures)
        outcome.passed = result.expect.passed
    outcome.duration_ms = (time.perf_counter() - start) * 1e3
    return outcome


# pytest would otherwise collect `test_file` from modules that import it.
test_file.__test__ = False
