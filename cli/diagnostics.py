"""How problems read on stderr, in the compiler style SPEC §1.5 fixes.

`FILE:LINE:COL: error[AGnnn]: MESSAGE` for file problems; the same location prefix
for runtime errors, failed expectations and anomalies, so an editor or a terminal
can jump to the line.
"""
from __future__ import annotations

import re

from rich.text import Text

_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow"}


def _where(location) -> str:
    return f"{location}: " if location is not None else ""


def diagnostic_text(diagnostic) -> Text:
    """`str(diagnostic)` with the severity and code coloured."""
    label = f"{diagnostic.severity}[{diagnostic.code}]"
    text = Text.assemble(_where(diagnostic.location), (label, _SEVERITY_STYLE.get(diagnostic.severity, "bold")),
                         ": ", diagnostic.message)
    if diagnostic.hint:
        text.append(f" (did you mean {diagnostic.hint}?)")
    return text


def runtime_error_text(exc) -> Text:
    """A `GraphRuntimeError`: where it happened, which node, PyTorch's message."""
    node = f" in node '{exc.node}'" if getattr(exc, "node", None) else ""
    return Text.assemble(_where(getattr(exc, "location", None)), ("runtime error", "bold red"), f"{node}: {exc}")


def expect_failure_text(failure) -> Text:
    return Text.assemble(_where(failure.location), ("expect failed", "bold red"), f": {failure.what}: {failure.message}")


def anomaly_text(anomaly) -> Text:
    return Text.assemble(_where(anomaly.location), ("anomaly", "bold red"),
                         f" in {anomaly.phase} of '{anomaly.node}': {anomaly.message}")


def test_error_text(outcome) -> Text:
    """A `test` file whose run failed, located like every other problem.

    `TestOutcome.error` is one string that starts with `FILE:LINE:COL: ` when the
    library knew where the failure happened; that prefix is moved to the front.
    """
    match = re.match(rf"({re.escape(outcome.file)}(?::\d+){{0,2}}): (.*)", outcome.error, re.S)
    where, message = match.groups() if match else (outcome.file, outcome.error)
    return Text.assemble(f"{where}: ", ("runtime error", "bold red"), ": ", message)
