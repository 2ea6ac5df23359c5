"""`agrad test PATH...`: run every graph's `expect:` and count passes and failures."""
from __future__ import annotations

import click

from agrad.cli import diagnostics, files, github, library, status
from agrad.cli.app import App, abort, finish
from agrad.cli.options import cluster_options, format_option, graph_reading
from agrad.cli.paths import graph_files, not_graphs_note
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
    return {"no expectations": f"{timing}, no expectations",
            "not trained": f"{timing}, expect.train not checked (--no-train)"}.get(name, timing)


def _selected(files: list[str], pattern: str | None) -> list[str]:
    """`-k PATTERN`: the files whose path holds PATTERN, ignoring case (pytest's -k on a name)."""
    if pattern is None:
        return files
    return [f for f in files if pattern.lower() in f.lower()]


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option("-k", "pattern", metavar="PATTERN", help="Only the graph files whose path contains PATTERN (any case).")
@click.option("-x", "--exitfirst", "exit_first", is_flag=True, help="Stop at the first graph that does not pass.")
@click.option("--strict", is_flag=True,
              help="A graph without `expect:` (or not trained, --no-train) fails instead of being reported apart.")
@click.option("--no-train", "no_train", is_flag=True,
              help="Do not train graphs whose `expect:` has `train:`; they are reported as not trained, not passed.")
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Leave out walked files and folders whose name or path matches GLOB (repeatable).")
@click.option("--junit-xml", "junit_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE.xml",
              help="Also write the results as JUnit XML (GitLab, Jenkins, Azure); missing folders are created.")
@format_option("table", "json", "github")
@graph_reading
@cluster_options
@click.pass_obj
def test(app: App, paths, pattern, exit_first, strict, no_train, exclude, junit_path, output_format, plugins,
         cluster):
    """Run the `expect:` of every graph file in PATH... (files, - for standard input, or folders of
    *.yaml and *.yml), training the graphs whose `expect:` has `train:`.

    A graph without `expect:` is reported as "no expectations" and does not fail
    the run unless --strict.
    """
    from agrad.cli.tables import closing_line, outcome_line

    if junit_path:       # before any graph runs: a report that cannot be written is bad usage
        files.make_parent_folders("junit-xml", junit_path)
        files.check_output_paths(**{"junit-xml": junit_path})
    library.load_plugins(plugins)
    found = graph_files(paths, exclude)
    if (note := not_graphs_note(found)) is not None:
        app.note(note)
    selected = _selected(found.files, pattern)
    if not selected:
        abort(f"no graph file matches -k {pattern!r} (of {len(found.files)})", ExitStatus.INVALID)
    outcome_of = lambda file: library.test_file(file, train=not no_train)     # noqa: E731
    if cluster is not None:           # --workers / --cluster: the files run on dask workers, reported in order
        from agrad.cli import distributed

        if "-" in selected:
            abort("- (standard input) cannot be sent to --workers/--cluster; give the graph as a file",
                  ExitStatus.INVALID)
        outcome_of = distributed.test_outcomes(cluster, selected, plugins, train=not no_train)
    outcomes, names = [], []
    for file in selected:
        outcome = outcome_of(file)
        name = status.test_outcome_name(outcome)
        outcomes.append(outcome)
        names.append(name)
        if name in ("failed", "invalid", "error"):
            _explain(app, outcome)
        if output_format == "table":
            shown = "failed" if strict and name in status.UNCHECKED else name
            app.line(outcome_line(shown, file, _detail(outcome, name)))
        elif output_format == "github":
            for command in github.test_outcome_commands(outcome, strict=strict):
                app.echo(command)
        if exit_first and status.for_test_outcome(outcome, strict) is not ExitStatus.OK:
            break

    counts = status.test_counts(names, strict)
    not_run = len(selected) - len(outcomes)
    summary = closing_line(counts["passed"], counts["failed"], no_expectations=counts["no expectations"],
                           not_trained=counts["not trained"], deselected=len(found.files) - len(selected),
                           not_run=not_run)
    if junit_path:
        from agrad.cli.junit import junit_xml

        with files.writing("junit-xml", junit_path):
            files.write_text_atomically(junit_path, junit_xml(outcomes, names, strict=strict))
    if output_format == "json":
        from agrad.cli.json_docs import test_document

        app.emit_json(test_document(outcomes, names, strict=strict, not_run=not_run))
        app.note(summary)
    else:
        app.echo(summary)
    finish(status.worst(status.for_test_outcome(o, strict) for o in outcomes))
