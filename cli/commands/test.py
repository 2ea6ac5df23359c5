"""`agrad test PATH...`: run every graph's `expect:` and count passes and failures."""
from __future__ import annotations

import click

from agrad.cli import diagnostics, github, library, status
from agrad.cli.app import App, abort, finish
from agrad.cli.options import cluster_options, format_option, graph_reading
from agrad.cli.paths import graph_files
from agrad.cli.status import ExitStatus


def _explain(app: App, outcome) -> None:
    """Why a file failed, on stderr, in the compiler style of SPEC §1.5."""
    for diagnostic in outcome.diagnostics:
        app.note(diagnostics.diagnostic_text(diagnostic))
    if outcome.error is not None:
        app.note(diagnostics.test_error_text(outcome))
    for failure in outcome.failures:
        app.note(diagnostics.expect_failure_text(failure))


def _detail(outcome, name: str) -> str:
    if name == "invalid":
        return "invalid graph file"
    if name == "error":
        return "runtime error"
    timing = f"{outcome.graph}, {outcome.duration_ms:.1f} ms"
    return f"{timing}, no expectations" if name == "no expectations" else timing


def _selected(files: list[str], pattern: str | None) -> list[str]:
    """`-k PATTERN`: the files whose path holds PATTERN, ignoring case (pytest's -k on a name)."""
    if pattern is None:
        return files
    return [f for f in files if pattern.lower() in f.lower()]


def _check_report_path(path: str) -> None:
    """Before any graph runs: a report that cannot be written is bad usage, not a crash at the end."""
    import os
    from pathlib import Path

    folder = Path(path).parent
    if not folder.is_dir():
        abort(f"--junit-xml {path}: no such folder {folder}", ExitStatus.INVALID)
    if not os.access(folder, os.W_OK | os.X_OK):
        abort(f"--junit-xml {path}: cannot write in {folder}", ExitStatus.INVALID)


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-k", "pattern", metavar="PATTERN", help="Only the graph files whose path contains PATTERN (any case).")
@click.option("-x", "--exitfirst", "exit_first", is_flag=True, help="Stop at the first graph that does not pass.")
@click.option("--strict", is_flag=True, help="A graph without `expect:` fails instead of being reported apart.")
@click.option("--junit-xml", "junit_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE.xml",
              help="Also write the results as JUnit XML (GitLab, Jenkins, Azure).")
@format_option("table", "json", "github")
@graph_reading
@cluster_options
@click.pass_obj
def test(app: App, paths, pattern, exit_first, strict, junit_path, output_format, plugins, cluster):
    """Run the `expect:` of every graph file in PATH... (files, or folders of *.yaml).

    A graph without `expect:` is reported as "no expectations" and does not fail
    the run unless --strict.
    """
    from agrad.cli.tables import closing_line, outcome_line

    library.load_plugins(plugins)
    found = graph_files(paths)
    selected = _selected(found, pattern)
    if not selected:
        abort(f"no graph file matches -k {pattern!r} (of {len(found)})", ExitStatus.INVALID)
    if junit_path:
        _check_report_path(junit_path)
    outcome_of = library.test_file
    if cluster is not None:           # --workers / --cluster: the files run on dask workers, reported in order
        from agrad.cli import distributed

        outcome_of = distributed.test_outcomes(cluster, selected, plugins)
    outcomes, names = [], []
    for file in selected:
        outcome = outcome_of(file)
        name = status.test_outcome_name(outcome)
        outcomes.append(outcome)
        names.append(name)
        if name in ("failed", "invalid", "error"):
            _explain(app, outcome)
        if output_format == "table":
            shown = "failed" if strict and name == "no expectations" else name
            app.line(outcome_line(shown, file, _detail(outcome, name)))
        elif output_format == "github":
            for command in github.test_outcome_commands(outcome, strict=strict):
                app.echo(command)
        if exit_first and status.for_test_outcome(outcome, strict) is not ExitStatus.OK:
            break

    passed, failed, unchecked = status.test_counts(names, strict)
    summary = closing_line(passed, failed, no_expectations=unchecked, deselected=len(found) - len(selected))
    if junit_path:
        from agrad.cli import files
        from agrad.cli.junit import junit_xml

        files.write_text_atomically(junit_path, junit_xml(outcomes, names, strict=strict))
    if output_format == "json":
        from agrad.cli.json_docs import test_document

        app.emit_json(test_document(outcomes, names, strict=strict))
        app.note(summary)
    else:
        app.echo(summary)
    finish(status.worst(status.for_test_outcome(o, strict) for o in outcomes))
