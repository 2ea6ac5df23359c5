"""`agrad inspect GRAPH`: the graph the engine would run, built on Meta (no kernel runs)."""
from __future__ import annotations

import click

from agrad.cli import library
from agrad.cli.app import App
from agrad.cli.options import format_option, graph_reading


@click.command()
@click.argument("graph_file", metavar="GRAPH", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@format_option("table", "json", "dot")
@click.option("--graph", "which", type=click.Choice(("both", "forward", "backward")),
              help="With --format dot: draw the forward graph, the backward graph, or both (the default).")
@graph_reading
@click.pass_obj
def inspect(app: App, graph_file, output_format, which, plugins):
    """Show GRAPH's nodes, backward graph, dependencies and execution order without running it
    (GRAPH: a file, or - for standard input)."""
    if which is not None and output_format != "dot":
        raise click.UsageError("--graph chooses what --format dot draws; add --format dot")
    library.load_plugins(plugins)
    # only DOT draws the forward edges; JSON is written, and the tables read, as the graph is built (a row at
    # a time: a large graph's rows are never all held)
    result = library.load_graph(graph_file).inspect(edges=output_format == "dot", streamed=output_format != "dot")
    if output_format == "json":
        from agrad.cli.json_docs import inspect_document

        app.emit_json(inspect_document(result, streamed=True))
    elif output_format == "dot":
        from agrad.cli.dot import inspect_dot

        app.echo(inspect_dot(result, which or "both").rstrip("\n"))
    else:
        from agrad.cli.inspect_tables import inspect_view

        app.show(inspect_view(result))
