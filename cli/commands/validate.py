"""`agrad validate PATH...`: parse and check graph files; no kernel runs."""
from __future__ import annotations

import click

from agrad.cli import diagnostics, github, library, status
from agrad.cli.app import App, finish
from agrad.cli.options import format_option, graph_reading
from agrad.cli.paths import graph_files, not_graphs_note
from agrad.cli.status import ExitStatus


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Leave out walked files and folders whose name or path matches GLOB (repeatable).")
@click.option("--skip-non-graphs", "skip_non_graphs", is_flag=True,
              help="Skip named YAML files that are not graphs too, as walked ones are (for pre-commit, which "
                   "names every changed YAML file).")
@click.option("-q", "--quiet", is_flag=True, help="Print only the problems (and the closing line when there are any), as for a pre-commit hook.")
@format_option("table", "json", "github")
@graph_reading
@click.pass_obj
def validate(app: App, paths, exclude, skip_non_graphs, quiet, output_format, plugins):
    """Check every graph file in PATH... (files, - for standard input, or folders of *.yaml and *.yml)
    without running a kernel."""
    from agrad.cli.tables import closing_line, outcome_line

    library.load_plugins(plugins)
    found_files = graph_files(paths, exclude, skip_named=skip_non_graphs)
    if not quiet and (note := not_graphs_note(found_files)) is not None:
        app.note(note)
    checked = []
    for file in found_files.files:
        found = library.validate_file(file)
        valid = status.for_validation(found) is ExitStatus.OK
        checked.append((file, found, valid))
        if output_format == "github":
            for diagnostic in found:
                app.echo(github.diagnostic_command(diagnostic, file))
            continue
        for diagnostic in found:
            app.note(diagnostics.diagnostic_text(diagnostic))
        if output_format == "table" and not quiet:
            errors = sum(1 for d in found if d.severity == "error")
            detail = "valid" if valid else f"{errors} error{'s' if errors != 1 else ''}"
            app.line(outcome_line("passed" if valid else "failed", file, detail))

    passed = sum(1 for _, _, valid in checked if valid)
    summary = closing_line(passed, len(checked) - passed)
    if output_format == "json":
        from agrad.cli.json_docs import validate_document

        app.emit_json(validate_document(checked))
        app.note(summary)
    elif not (quiet and passed == len(checked)):        # -q: silent when all is well, as `ruff -q`
        app.echo(summary)
    finish(status.worst(status.for_validation(found) for _, found, _ in checked))
