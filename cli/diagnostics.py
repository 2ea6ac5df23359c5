"""How problems read on stderr, in the compiler style SPEC §1.5 fixes.

`FILE:LINE:COL: error[AGnnn]: MESSAGE` for file problems and runtime failures alike;
the same location prefix for failed expectations and anomalies, so an editor or a
terminal can jump to the line. Under a diagnostic, the line it points at with a caret
under the column, as rustc and ruff print it:

    g.yaml:6:10: error[AG015]: '.T' is not supported; transpose with the op t() (did you mean 't(W)'?)
      |
    6 |   h: x @ W.T
      |          ^
"""
from __future__ import annotations

import functools

from rich.text import Text

_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow"}


def _where(location) -> str:
    return f"{location}: " if location is not None else ""


EXCERPT_WIDTH = 100         # a longer source line is shown as a window around the column


def _source_lines(file: str) -> list[str] | None:
    """The file's lines (read once while it is unchanged: up to 20 diagnostics point into one file)."""
    import os
    import stat

    from agrad.cli import library

    if file == library.STDIN_NAME:
        return library.stdin_text.splitlines() if library.stdin_text is not None else None
    try:
        info = os.stat(file)
        if not stat.S_ISREG(info.st_mode):
            return None
        return _read_lines(file, info.st_mtime_ns, info.st_size)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


@functools.lru_cache(maxsize=4)
def _read_lines(file: str, _mtime_ns: int, _size: int) -> list[str]:
    with open(file, encoding="utf-8") as f:
        return f.read().splitlines()


def excerpt(location) -> list[str]:
    """The source line `location` points at and a caret under its column; [] when there is none
    to show (no location, the file is gone, a line past its end)."""
    if location is None or not location.line or not location.col:
        return []
    lines = _source_lines(location.file)
    if not lines or location.line > len(lines):
        return []
    source = lines[location.line - 1].replace("\t", " ")       # one column a character, as the col counts
    col = min(location.col, len(source) + 1)
    if len(source) > EXCERPT_WIDTH:                              # a window around the column
        start = max(0, min(col - EXCERPT_WIDTH // 2, len(source) - EXCERPT_WIDTH))
        source = ("..." if start else "") + source[start:start + EXCERPT_WIDTH] + \
            ("..." if start + EXCERPT_WIDTH < len(source) else "")
        col = col - start + (3 if start else 0)
    gutter = " " * len(str(location.line))
    return [f"{gutter} |", f"{location.line} | {source.rstrip()}", f"{gutter} | {' ' * (col - 1)}^"]


def diagnostic_text(diagnostic, source: bool = True) -> Text:
    """`str(diagnostic)` with the severity and code coloured; `source`: and the line it points at."""
    label = f"{diagnostic.severity}[{diagnostic.code}]"
    style = _SEVERITY_STYLE.get(diagnostic.severity, "bold")
    text = Text.assemble(_where(diagnostic.location), (label, style), ": ", diagnostic.message)
    if diagnostic.hint:
        text.append(f" (did you mean {diagnostic.hint}?)")
    if source:
        for line in excerpt(diagnostic.location):
            gutter, bar, rest = line.partition("|")
            text.append("\n")
            text.append(gutter + bar, style="bold blue")
            text.append(rest, style=style if rest.strip() == "^" else "")
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
