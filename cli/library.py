"""The CLI's one doorway into `agrad.graphs` and the engine.

Commands call these functions instead of the library directly, so that what the
CLI needs of the library is written down in one place. Every import is inside a
function: `agrad --help` must not import NumPy or the engine.
"""
from __future__ import annotations

import gc
from typing import Callable

from agrad.cli.app import abort
from agrad.cli.status import ExitStatus


_collector_paused = False


def pause_collector() -> None:
    """Start-up (the imports, the op library, reading the graph) makes long-lived objects only,
    with the cycles of modules and functions that are never garbage: the cyclic collector would
    traverse them over and over, a tenth of a cold `agrad run`. `main` pauses it; it resumes
    once the command has its graph (`start_up_over`). A command that never reads one (`ops`,
    `schema`) ends without it, as a short process whose objects all live to its end."""
    global _collector_paused
    if gc.isenabled():
        gc.disable()
        _collector_paused = True


def start_up_over() -> None:
    """The collector resumes if `pause_collector` paused it: called where a command has its graph,
    here, and by the commands that do not come through here (`import`, `export`)."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        # as the runner resumes it: start-up's objects moved to the oldest generation untraversed
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def exiting() -> None:
    """The command is over and its objects die with the process: frozen out of the collector's
    sight (gc.freeze), they are not traversed again by the collections the interpreter runs while
    it shuts down, a sixth of a cold `agrad run`. (Files are closed where they are written,
    and the standard streams are flushed at exit whatever the collector does.) A collector that
    start-up paused and no graph resumed (`ops`, `schema`, an error before the graph) is resumed:
    `main` may run inside a longer process (a test, a notebook) that needs it."""
    global _collector_paused
    gc.freeze()
    if _collector_paused:
        _collector_paused = False
        gc.enable()


def load_plugins(paths) -> None:
    """Import each `--plugin FILE.py` once, before any graph file is read (SPEC §4).

    Done up front rather than per file, so a broken plugin is one AG032 and exit 2,
    not the same error repeated for every file `test` reads.
    """
    from agrad import graphs

    for path in paths:
        graphs.load_plugin(path)


def _graphs_running_kernels():
    """agrad.graphs, with NumPy's floating-point warnings off: NaN and Inf are results to
    show (and what --anomaly reports), not warnings for stderr."""
    import numpy

    from agrad import graphs

    numpy.seterr(all="ignore")
    return graphs


STDIN_NAME = "<stdin>"     # how a graph read from `-` is named in messages, as Python and compilers do
stdin_text: str | None = None       # what was read from `-`, for the source excerpts of its diagnostics


def _read_stdin() -> str:
    import sys

    if sys.stdin is None:         # started with stdin closed (`agrad run - <&-`)
        abort(f"{STDIN_NAME}: standard input is closed", ExitStatus.INVALID)
    binary = getattr(sys.stdin, "buffer", None)
    data = binary.read() if binary is not None else sys.stdin.read().encode("utf-8")
    global stdin_text
    try:
        stdin_text = data.decode("utf-8")
        return stdin_text
    except UnicodeDecodeError as exc:
        abort(f"{STDIN_NAME}: not UTF-8 text (byte {exc.start}); graph files are UTF-8", ExitStatus.INVALID)


def _sandbox() -> bool:
    """`--sandbox` of the command being run (cli/options.py keeps it on the App)."""
    import click

    from agrad.cli.app import App

    ctx = click.get_current_context(silent=True)
    app = ctx.find_object(App) if ctx is not None else None
    return bool(app is not None and app.sandbox)


def load_graph(path: str, *, device=None, dtype=None, seed=None, inputs=None):
    """The checked graph, or `GraphFileError` with every problem found; `-` reads it from stdin."""
    graphs = _graphs_running_kernels()
    try:
        if path == "-":
            return graphs.load(STDIN_NAME, device=device, dtype=dtype, seed=seed, inputs=inputs or None,
                               source=_read_stdin(), sandbox=_sandbox())
        return graphs.load(path, device=device, dtype=dtype, seed=seed, inputs=inputs or None, sandbox=_sandbox())
    finally:
        start_up_over()


def run_graph(graph, *, profile: bool, anomaly: bool, repeat: int,
              on_repeat: Callable[[int], None] | None = None, replay: bool = True):
    """Run forward and every backward pass; returns the run (for `save_npz`) and its RunResult.

    `on_repeat(done)` is called after each of the `repeat` passes (the progress bar).
    """
    # keep_values=False: the command shows outputs, gradients and expectations, not every value
    run = graph.run(profile=profile, anomaly=anomaly, repeat=repeat, on_repeat=on_repeat, replay=replay,
                    keep_values=False)
    return run, run.result()


def save_npz(run, path: str) -> None:
    from agrad import graphs

    graphs.save_npz(run, path)


def test_file(path: str, *, train: bool = True):
    """One `test` file's outcome; `-` reads the graph from stdin. `train=False`: `--no-train`."""
    graphs = _graphs_running_kernels()
    start_up_over()        # a test file may train: not without the collector
    if path == "-":
        return graphs.test_file(STDIN_NAME, train=train, source=_read_stdin(), sandbox=_sandbox())
    return graphs.test_file(path, train=train, sandbox=_sandbox())


def validate_file(path: str) -> list:
    from agrad import graphs

    start_up_over()
    if path == "-":
        return graphs.validate(STDIN_NAME, source=_read_stdin(), sandbox=_sandbox())
    return graphs.validate(path, sandbox=_sandbox())


def json_schema() -> dict:
    from agrad import graphs

    return graphs.json_schema()


def all_ops() -> list:
    from agrad import dispatcher

    return sorted(dispatcher.all_ops(), key=lambda op: op.name)


def is_public(name: str) -> bool:
    """An op a graph file is meant to call: not `_internal`, not another op's `*_backward`."""
    base = name.split("::")[-1]
    return not base.startswith("_") and not base.endswith("_backward")


def generated_sources(name: str) -> dict:
    """{filename: source} of the code generated for op `name` (agrad.codegen), generated now if
    the op has not run yet."""
    from agrad import codegen, dispatcher

    dispatcher.get_op(name).generate()
    return codegen.sources(name)


def op_formulas(entries) -> list:
    """Each op's derivative formulas as text (`agrad.ops.formulas.Formulas`), read from its declaration."""
    from agrad.ops.formulas import formulas

    return [formulas(op.name) for op in entries]


def get_op(name: str):
    """The op's registry entry; an unknown name is bad usage, with the dispatcher's "did you mean"."""
    from agrad import dispatcher

    try:
        return dispatcher.get_op(name)
    except dispatcher.UnknownOperatorError as exc:
        abort(f"{exc.args[0] if exc.args else exc}; `agrad ops` lists them all", ExitStatus.INVALID)




def graph_source(path: str, *, plugins=(), **options):
    """The graph file as a cluster job ships it (its text, read here once; `-` is stdin)."""
    from agrad.graphs.distributed.graph_source import GraphSource

    start_up_over()
    if path == "-":
        return GraphSource.read(STDIN_NAME, _read_stdin(), plugins=plugins, **options)
    return GraphSource.read(path, plugins=plugins, **options)


def dask_arrays_computed_on(options):
    """`run --device dask` with `--workers`/`--cluster`: its compute on that cluster (a context
    manager: the cluster is closed however the command ends); nothing without either."""
    if options is None:
        import contextlib

        return contextlib.nullcontext()
    _graphs_running_kernels()
    from agrad.graphs.distributed.cluster import dask_arrays_computed_on as on_

    return on_(options)


def open_cluster(options):
    """The dask cluster of `--workers`/`--cluster` (a context manager: closed however the command ends)."""
    _graphs_running_kernels()
    start_up_over()
    from agrad.graphs.distributed.cluster import open_cluster as open_

    return open_(options)
