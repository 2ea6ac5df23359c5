"""`agrad test PATH...`: run every graph's `expect:` and count passes and failures."""
from __future__ import annotations

import click

from agrad.cli import diagnostics, github, library, status
from agrad.cli.app import App, finish
from agrad.cli.options import format_option, graph_reading
from agrad.cli.paths import graph_files


def _explain(app: App, outcome) -> None:
    """Why a file failed, on stderr, in the compiler style of SPEC §1.5."""
    for diagnostic in outcome.diagnostics:
        app.note(diagnostics.diagnostic_text(diagnostic))
    if outcome.error is not None:
        app.note(diagnostics.test_error_text(outcome))
    for failure in outcome.failures:
        app.note(diagnostics.expect_failure_text(failure))


def _detail(outcome) -> str:
    if outcome.diagnostics:
        return "invalid graph file"
    if outcome.error is not None:
        return "runtime error"
    return f"{outcome.graph}, {outcome.duration_ms:.1f} ms"


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True))
@format_option("table", "json", "github")
@graph_reading
@click.pass_obj
def test(app: App, paths, output_format, plugins):
    """Run the `expect:` of every graph file in PATH... (files, or folders of *.yaml)."""
    from agrad.cli.tables import closing_line, outcome_line

    library.load_plugins(plugins)
    outcomes = []
    for file in graph_files(paths):
        outcome = library.test_file(file)
        outcomes.append(outcome)
        if not outcome.passed:
            _explain(app, outcome)
        if output_format == "table":
            app.line(outcome_line(outcome.passed, file, _detail(outcome)))
        elif output_format == "github":
            for command in github.test_outcome_commands(outcome):
                click.echo(command)

    passed = sum(1 for o in outcomes if o.passed)
    summary = closing_line(passed, len(outcomes) - passed)
    if output_format == "json":
        from agrad.cli.json_docs import test_document

        app.emit_json(test_document(outcomes))
        app.note(summary)
    else:
        click.echo(summary)
    finish(status.worst(status.for_test_outcome(o) for o in outcomes))
