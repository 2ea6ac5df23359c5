"""`--format github`: GitHub Actions workflow commands, one per problem.

`::error file=F,line=L,col=C,title=AGnnn::message`. The runner decodes
%-escapes, so the message and the properties are escaped as its toolkit does
(`@actions/core`'s escapeData / escapeProperty).
"""
from __future__ import annotations


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_command(message: str, *, title: str, file: str, line: int | None = None, col: int | None = None,
                  kind: str = "error") -> str:
    properties = [f"file={_escape_property(file)}"]
    if line is not None:
        properties.append(f"line={line}")
    if col is not None:
        properties.append(f"col={col}")
    properties.append(f"title={_escape_property(title)}")
    return f"::{kind} {','.join(properties)}::{_escape_data(message)}"


def _at(location, fallback_file: str) -> dict:
    if location is None:
        return {"file": fallback_file}
    return {"file": location.file, "line": location.line, "col": location.col}


def diagnostic_command(diagnostic, file: str) -> str:
    message = diagnostic.message + (f" (did you mean {diagnostic.hint}?)" if diagnostic.hint else "")
    kind = "warning" if diagnostic.severity == "warning" else "error"
    return error_command(message, title=diagnostic.code, kind=kind, **_at(diagnostic.location, file))


def test_outcome_commands(outcome) -> list[str]:
    """Every reason one `test` file failed; nothing for a file that passed."""
    lines = [diagnostic_command(d, outcome.file) for d in outcome.diagnostics]
    if outcome.error is not None:
        lines.append(error_command(outcome.error, title="runtime error", file=outcome.file))
    lines += [error_command(f"{f.what}: {f.message}", title="expect", **_at(f.location, outcome.file))
              for f in outcome.failures]
    return lines
