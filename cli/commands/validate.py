"""`agrad validate PATH...`: parse and check graph files; no kernel runs."""
from __future__ import annotations

import click

from agrad.cli import diagnostics, github, library, status
from agrad.cli.app import App, finish
from agrad.cli.options import format_option, graph_reading
from agrad.cli.paths import graph_files
from agrad.cli.status import ExitStatus


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True))
@format_option("table", "json", "github")
@graph_reading
@click.pass_obj
def validate(app: App, paths, output_format, plugins):
    """Check every graph file in PATH... (files, or folders of *.yaml) without running a kernel."""
    from agrad.cli.tables import closing_line, outcome_line

    library.load_plugins(plugins)
    checked = []
    for file in graph_files(paths):
        found = library.validate_file(file)
        valid = status.for_validation(found) is ExitStatus.OK
        checked.append((file, found, valid))
        if output_format == "github":
            for diagnostic in found:
                app.echo(github.diagnostic_command(diagnostic, file))
            continue
        for diagnostic in found:
            app.note(diagnostics.diagnostic_text(diagnostic))
        if output_format == "table":
            errors = sum(1 for d in found if d.severity == "error")
            detail = "valid" if valid else f"{errors} error{'s' if errors != 1 else ''}"
            app.line(outcome_line("passed" if valid else "failed", file, detail))

    passed = sum(1 for _, _, valid in checked if valid)
    summary = closing_line(passed, len(checked) - passed)
    if output_format == "json":
        from agrad.cli.json_docs import validate_document

        app.emit_json(validate_document(checked))
        app.note(summary)
    else:
        app.echo(summary)
    finish(status.worst(status.for_validation(found) for _, found, _ in checked))
