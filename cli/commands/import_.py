"""`agrad import MODEL.onnx`: an ONNX model as a graph file and its weights (agrad[onnx])."""
from __future__ import annotations

import click

from agrad.cli import library
from agrad.cli.app import App, abort
from agrad.cli.options import debug_option
from agrad.cli.status import ExitStatus


class ShapeOption(click.ParamType):
    """`NAME=D0,D1,...` for `--shape`: the sizes of an input's dimensions."""
    name = "NAME=DIMS"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        name, sep, dims = value.partition("=")
        try:
            sizes = tuple(int(d) for d in dims.split(","))
        except ValueError:
            sizes = ()
        if not sep or not name or not sizes or any(s < 0 for s in sizes):
            self.fail(f"{value!r} is not NAME=D0,D1,... (for example --shape x=8,3,224,224)", param, ctx)
        return name, sizes


@click.command("import")
@click.argument("model_file", metavar="MODEL.onnx", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "graph_file", type=click.Path(dir_okay=False), metavar="GRAPH.yaml",
              help="The graph file to write (default: MODEL.yaml); the weights go beside it.")
@click.option("--shape", "shapes", type=ShapeOption(), multiple=True, metavar="NAME=DIMS",
              help="Sizes of an input's dimensions, e.g. x=8,3,224,224 (default: a batch of 1).")
@click.option("--weights", type=click.Choice(["npz", "safetensors"]), default="npz", show_default=True,
              help="The format of the weights file.")
@click.option("--loss", metavar="LOSS",
              help="The backward root: sum, mean (of the outputs), cross_entropy:LABELS or mse:TARGET "
                   "(LABELS, TARGET: a new input). Default: the sum of the outputs.")
@debug_option
@click.pass_obj
def import_(app: App, model_file, graph_file, shapes, weights, loss):
    """Translate an ONNX model into a graph file (one line per ONNX node) and its weights, so that
    `agrad run` and `agrad check` give every gradient."""
    from agrad.cli import files

    given = {}
    for name, sizes in shapes:
        if name in given:
            raise click.BadParameter(f"input {name!r} is given twice", param_hint="--shape")
        given[name] = sizes
    try:
        from agrad.graphs.onnx import MissingOnnx, ModelError
        from agrad.graphs.onnx.importing import ImportOptions, TranslationBug, import_model
        from agrad.graphs.onnx.problems import require_onnx

        require_onnx()
    except MissingOnnx as exc:
        abort(str(exc), ExitStatus.RUNTIME)
    from pathlib import Path

    # (`-o ""` names no file: refused by check_output_paths, not taken for the default)
    graph_path = Path(graph_file) if graph_file is not None else Path(model_file).with_suffix(".yaml")
    files.check_output_paths(model_file, output=str(graph_path))        # first: the weights' name is made from it
    weights_path = graph_path.with_suffix(f".{weights}")
    files.check_output_paths(model_file, weights=str(weights_path))
    library.start_up_over()
    try:
        with files.writing("output", graph_path):       # the model's reading errors are ModelErrors (exit 2)
            result = import_model(model_file, graph_path, ImportOptions(given, weights, loss))
    except ModelError as exc:
        for problem in exc.problems:
            app.error(problem)
        abort(f"nothing written ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''})",
              ExitStatus.INVALID)
    except TranslationBug as exc:
        abort(str(exc), ExitStatus.RUNTIME)
    for note in result.notes:
        app.warn(note)
    app.note(f"wrote {result.graph_path} ({result.nodes} nodes, {result.folded} folded at import, "
             f"{result.parameters} parameters, opset {result.opset}) and {result.weights_path}")
