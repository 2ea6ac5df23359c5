"""`agrad run GRAPH`: forward, every backward pass, and what came out."""
from __future__ import annotations

import json
from contextlib import contextmanager

import click

from agrad.cli import diagnostics, files, github, library, status
from agrad.cli.app import App, finish
from agrad.cli.options import DTYPES, DeviceType, InputReplacement, cluster_options, format_option, graph_reading
from agrad.cli.tensor_text import VALUE_MODES

# enough passes for stable timings of any graph (a 10 us pass repeated 100,000 times is a
# second); a larger count is a typo or `10**26`, which would run until killed
MAX_REPEAT = 100_000


@contextmanager
def _progress(app: App, repeat: int):
    """A progress bar over the `--repeat` passes, on a terminal only; yields the per-pass callback."""
    if repeat <= 1 or not app.err.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=app.err, transient=True) as progress:
        task = progress.add_task("running", total=repeat)
        yield lambda done: progress.update(task, completed=done)


def _inputs(replacements) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for name, path in replacements:
        if name in inputs:
            raise click.BadParameter(f"input {name!r} is given twice", param_hint="--input")
        inputs[name] = path
    return inputs


@click.command()
@click.argument("graph_file", metavar="GRAPH", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--device", type=DeviceType(),
              help="Device for the graph's inputs: cpu, cuda, cuda:N or dask (lazy dask.array, needs agrad[dask]).")
@click.option("--dtype", type=click.Choice(DTYPES), help="Default dtype of the graph's inputs.")
@click.option("--seed", type=int, help="Seed for random inits and dropout.")
@click.option("--input", "replacements", type=InputReplacement(), multiple=True, metavar="NAME=FILE",
              help="Replace an input's data with a .npy/.npz file; FILE.npz:KEY names the array (repeatable).")
@format_option("table", "json", "github")
@click.option("--values", "values", type=click.Choice(VALUE_MODES), default="compact", show_default=True,
              help="Tensors in the table: compact (values up to 8 elements, else shape/min/max/mean/norm, "
                   "4 significant digits) or full (every value).")
@click.option("--save", "save_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE.npz",
              help="Write outputs and gradients to FILE.npz (complete or absent).")
@click.option("--profile", is_flag=True, help="Add a per-node table of forward and backward time.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE.json",
              help="Write the per-node timings as Chrome trace events.")
@click.option("--anomaly", is_flag=True, help="Check every output and gradient for NaN/Inf.")
@click.option("--repeat", type=click.IntRange(min=1, max=MAX_REPEAT), default=1, show_default=True,
              help=f"Run the whole pass N times (at most {MAX_REPEAT:,}) and report min/median timings.")
@click.option("--no-replay", "no_replay", is_flag=True,
              help="Run every pass through the engine (by default passes after the second replay its kernels).")
@graph_reading
@cluster_options
@click.pass_obj
def run(app: App, graph_file, device, dtype, seed, replacements, output_format, values, save_path, profile,
        trace_path, anomaly, repeat, no_replay, plugins, cluster):
    """Run GRAPH (a file, or - for standard input): forward, then every backward pass; print outputs,
    gradients and timings."""
    if cluster is not None and device != "dask":
        raise click.UsageError("run computes on --workers/--cluster only with --device dask (dask.array on the "
                               "cluster's workers)")
    files.check_output_paths(graph_file, save=save_path, trace=trace_path)      # before the run, not after it
    library.load_plugins(plugins)
    graph = library.load_graph(graph_file, device=device, dtype=dtype, seed=seed, inputs=_inputs(replacements))
    with library.dask_arrays_computed_on(cluster), _progress(app, repeat) as on_repeat:
        graph_run, result = library.run_graph(graph, profile=profile or trace_path is not None, anomaly=anomaly,
                                              repeat=repeat, on_repeat=on_repeat, replay=not no_replay)
    if save_path:
        with files.writing("save", save_path):
            library.save_npz(graph_run, save_path)
    if trace_path:
        from agrad.cli.trace import trace_document

        with files.writing("trace", trace_path):
            files.write_text_atomically(trace_path, json.dumps(trace_document(result)))

    if output_format == "github":
        for command in github.run_commands(result):
            app.echo(command)
        finish(status.for_run(result))
    for warning in result.warnings:
        app.warn(warning)
    for anomaly_report in result.anomalies:
        app.note(diagnostics.anomaly_text(anomaly_report))
    for failure in result.expect.failures:
        app.note(diagnostics.expect_failure_text(failure))

    if output_format == "json":
        from agrad.cli.json_docs import run_document

        app.emit_json(run_document(result))
    else:
        from agrad.cli.tables import run_view

        app.show(run_view(result, passes=repeat, values=values))
        if profile and result.profile is not None:
            from agrad.cli.profile_table import profile_view
            from agrad.graphs.profiling import WARMUP_PASSES

            app.out.print()
            app.show(profile_view(result.profile, repeat, WARMUP_PASSES))
    finish(status.for_run(result))
