"""`agrad export GRAPH`: a graph file as an ONNX model, its gradients too (agrad[onnx])."""
from __future__ import annotations

import click

from agrad.cli import library
from agrad.cli.app import App, abort
from agrad.cli.options import graph_reading
from agrad.cli.status import ExitStatus


@click.command()
@click.argument("graph_file", metavar="GRAPH", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "model_file", type=click.Path(dir_okay=False), metavar="MODEL.onnx",
              help="The model to write (default: GRAPH with .onnx).")
@click.option("--with-grads", is_flag=True,
              help="Also export the backward pass: the model outputs the loss and every gradient.")
@click.option("--strict", is_flag=True, help="Refuse ops without an ONNX equivalent instead of writing them "
                                              "to the custom domain 'agrad'.")
@graph_reading
@click.pass_obj
def export(app: App, graph_file, model_file, with_grads, strict, plugins):
    """Write GRAPH as an ONNX model (shapes on every edge, checked with onnx.checker); with
    --with-grads, one that stock onnxruntime runs to get the loss and every gradient."""
    from pathlib import Path

    from agrad.cli import files

    try:
        from agrad.graphs.onnx import MissingOnnx, ModelError
        from agrad.graphs.onnx.exporting import export_graph
        from agrad.graphs.onnx.problems import require_onnx

        require_onnx()
    except MissingOnnx as exc:
        abort(str(exc), ExitStatus.RUNTIME)
    # (`-o ""` names no file, as `--save ""` does not: refused by check_output_paths, not the default)
    model_path = Path(model_file) if model_file is not None else Path(graph_file).with_suffix(".onnx")
    files.check_output_paths(graph_file, output=str(model_path))
    library.load_plugins(plugins)
    library.start_up_over()
    try:
        with files.writing("output", model_path):       # the graph's reading errors are its own (exit 2)
            result = export_graph(graph_file, model_path, with_grads=with_grads, strict=strict)
    except ModelError as exc:
        for problem in exc.problems:
            app.error(problem)
        abort("nothing written", ExitStatus.INVALID)
    for note in result.notes:
        app.warn(note)
    if result.custom:
        app.warn(f"{len(result.custom)} op{'s' if len(result.custom) != 1 else ''} without an ONNX equivalent "
                 f"went to the custom domain 'agrad' ({', '.join(result.custom)}): onnxruntime cannot run this "
                 "model; --strict refuses such ops")
    app.note(f"wrote {result.path} ({result.nodes} nodes; outputs: {', '.join(result.outputs)})")
