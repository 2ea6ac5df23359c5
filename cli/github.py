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
    properties = [f"file={_escape_property(file)}"] if file else []
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


def test_outcome_commands(outcome, *, strict: bool = False) -> list[str]:
    """Every reason one `test` file failed; nothing for a file that passed; a graph without
    `expect:` is a notice (an error under `--strict`)."""
    if outcome.unchecked and not (outcome.failures or outcome.diagnostics or outcome.error is not None):
        return [error_command("expect.train was not checked (--no-train); the graph was not trained",
                              title="not trained", file=outcome.file, kind="error" if strict else "notice")]
    if not outcome.checked and not outcome.diagnostics and outcome.error is None:
        return [error_command("the graph has no expect: section; nothing was checked", title="no expectations",
                              file=outcome.file, kind="error" if strict else "notice")]
    lines = [diagnostic_command(d, outcome.file) for d in outcome.diagnostics]
    if outcome.error_diagnostic is not None:
        lines.append(diagnostic_command(outcome.error_diagnostic, outcome.file))
    elif outcome.error is not None:
        lines.append(error_command(outcome.error, title="runtime error", file=outcome.file))
    lines += [error_command(f"{f.what}: {f.message}", title="expect", **_at(f.location, outcome.file))
              for f in outcome.failures]
    return lines


def exception_commands(exc) -> list[str]:
    """A graph file's problems or a runtime failure that ended a command, as annotations."""
    from agrad.graphs.results import GraphFileError

    if isinstance(exc, GraphFileError):
        return [diagnostic_command(d, "") for d in exc.diagnostics]
    diagnostic = getattr(exc, "diagnostic", None)       # a GraphRuntimeError: its code, line and col
    if diagnostic is not None:
        return [diagnostic_command(diagnostic, "")]
    return [error_command(str(exc), title="runtime error", file="")]


def run_commands(result) -> list[str]:
    """`run --format github`: each failed expectation and each anomaly; warnings as warnings."""
    lines = [error_command(w, title="warning", file=result.file, kind="warning") for w in result.warnings]
    lines += [error_command(f"{a.message} (in {a.phase} of '{a.node}')", title="anomaly", **_at(a.location, result.file))
              for a in result.anomalies]
    lines += [error_command(f"{f.what}: {f.message}", title="expect", **_at(f.location, result.file))
              for f in result.expect.failures]
    return lines


def check_commands(result, *, eps: float, atol: float, rtol: float) -> list[str]:
    """`check --format github`: one annotation per leaf whose gradient disagrees."""
    lines = [error_command(w, title="warning", file=result.file, kind="warning") for w in result.warnings]
    from agrad.cli.tables import worst_element_text

    what = "second derivative" if result.order == 2 else "gradient"
    for name, leaf in result.leaves.items():
        if not leaf.passed:
            if leaf.nondeterminism is not None:      # not reentrant: worst_element_text says by how much
                message = f"{what} of {worst_element_text(name, leaf)}"
            else:
                message = (f"{what} of '{name}' disagrees with float64 central differences: "
                           f"{worst_element_text(name, leaf)}; max abs err {leaf.max_abs_err:.3e}, max rel err "
                           f"{leaf.max_rel_err:.3e} (eps={eps:g}, atol={atol:g}, rtol={rtol:g})")
            lines.append(error_command(message, title="gradcheck", **_at(leaf.location, result.file)))
    return lines
