"""`agrad check GRAPH`: analytic gradients against float64 central differences."""
from __future__ import annotations

import click

from agrad.cli import github, library, status
from agrad.cli.app import App, finish
from agrad.cli.options import FiniteFloatRange, InputReplacement, cluster_options, format_option, graph_reading

# PyTorch's gradcheck defaults, which agrad.testing.gradcheck shares (STYLE.md).
DEFAULT_EPS, DEFAULT_ATOL, DEFAULT_RTOL = 1e-6, 1e-5, 1e-3


@click.command()
@click.argument("graph_file", metavar="GRAPH", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--eps", type=FiniteFloatRange(min=0, min_open=True), default=DEFAULT_EPS, show_default=True,
              help="Finite-difference step.")
@click.option("--atol", type=FiniteFloatRange(min=0), default=DEFAULT_ATOL, show_default=True,
              help="Absolute tolerance.")
@click.option("--rtol", type=FiniteFloatRange(min=0), default=DEFAULT_RTOL, show_default=True,
              help="Relative tolerance.")
@click.option("--fast", is_flag=True, help="Check one random direction per leaf instead of every element.")
@click.option("--second-order", "second_order", is_flag=True,
              help="Also differentiate the gradients (PyTorch's gradgradcheck): what a graph that calls "
                   "grad(..., create_graph=True), or is trained through one, relies on.")
@click.option("--input", "replacements", type=InputReplacement(), multiple=True, metavar="NAME=FILE",
              help="Check at real data: replace an input's data with a .npy/.npz file (FILE.npz:KEY names "
                   "the array; repeatable).")
@format_option("table", "json", "github")
@graph_reading
@cluster_options
@click.pass_obj
def check(app: App, graph_file, eps, atol, rtol, fast, second_order, replacements, output_format, plugins,
          cluster):
    """Compare every analytic gradient of GRAPH (a file, or - for standard input) with central finite
    differences; exit 1 on a mismatch."""
    library.load_plugins(plugins)
    inputs = dict(replacements)
    if len(inputs) != len(replacements):
        raise click.BadParameter("an input is given twice", param_hint="--input")
    if cluster is not None:             # --workers / --cluster: the finite differences on dask workers
        if inputs:
            raise click.BadParameter("--input is read by this process only: not with --workers/--cluster "
                                     "(workers read the graph's own input files)", param_hint="--input")
        if second_order:
            raise click.BadParameter("--second-order runs in this process only: not with --workers/--cluster",
                                     param_hint="--second-order")
        from agrad.cli import distributed

        result = distributed.check(app, graph_file, cluster, plugins, eps=eps, atol=atol, rtol=rtol, fast=fast)
    else:
        result = library.load_graph(graph_file, inputs=inputs).check(eps=eps, atol=atol, rtol=rtol, fast=fast,
                                                                     second_order=second_order)
    if output_format == "github":
        for command in github.check_commands(result, eps=eps, atol=atol, rtol=rtol):
            app.echo(command)
        finish(status.for_check(result))
    for warning in result.warnings:
        app.warn(warning)
    if output_format == "json":
        from agrad.cli.json_docs import check_document

        app.emit_json(check_document(result))
    else:
        from agrad.cli.tables import check_view

        app.show(check_view(result, eps=eps, atol=atol, rtol=rtol))
    finish(status.for_check(result))
