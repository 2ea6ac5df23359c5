"""How problems read on stderr, in the compiler style SPEC §1.5 fixes.

`FILE:LINE:COL: error[AGnnn]: MESSAGE` for file problems and runtime failures alike;
the same location prefix for failed expectations and anomalies, so an editor or a
terminal can jump to the line.
"""
from __future__ import annotations

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
    """A `GraphRuntimeError` (exit 3): `FILE:LINE:COL: error[AG04n]: MESSAGE`, as every problem."""
    return diagnostic_text(exc.diagnostic)


def expect_failure_text(failure) -> Text:
    return Text.assemble(_where(failure.location), ("expect failed", "bold red"), f": {failure.what}: {failure.message}")


def anomaly_text(anomaly) -> Text:
    return Text.assemble(_where(anomaly.location), ("anomaly", "bold red"),
                         f" in {anomaly.phase} of '{anomaly.node}': {anomaly.message}")


def test_error_text(outcome) -> Text:
    """A `test` file whose run failed, as `run` reports the same failure."""
    if outcome.error_diagnostic is not None:
        return diagnostic_text(outcome.error_diagnostic)
    return Text.assemble(f"{outcome.file}: ", ("error", "bold red"), f": {outcome.error}")
