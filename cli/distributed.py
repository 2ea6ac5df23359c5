"""`--workers` / `--cluster` for check, test and train: the cluster opened around the job,
a progress bar on a terminal, and the job's results handed back in the shapes the
single-process commands render. The work itself is in agrad.graphs.distributed.
"""
from __future__ import annotations

from contextlib import contextmanager

from agrad.cli import library
from agrad.cli.app import App


@contextmanager
def _progress(app: App, what: str):
    """A bar on a terminal only; yields the `(done, total)` callback (None elsewhere)."""
    if not app.err.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=app.err, transient=True) as progress:
        task = progress.add_task(what, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def check(app: App, graph_file: str, cluster, plugins, **options):
    """`agrad check --workers/--cluster`: the CheckResult of the single-process check."""
    from agrad.graphs.distributed.check import check_on_cluster

    source = library.graph_source(graph_file, plugins=plugins)
    graph = source.load()                  # an invalid file is exit 2 before any cluster starts
    with library.open_cluster(cluster) as session, _progress(app, "finite differences") as on_progress:
        return check_on_cluster(session, source, graph, on_progress=on_progress, **options)


def test_outcomes(cluster, files: list[str], plugins, train: bool = True):
    """`agrad test --workers/--cluster`: a function giving each file's TestOutcome, asked for in
    the order of `files`, while all of them run on the cluster. The cluster stays open until
    the command ends (click closes it, `-x` and errors included)."""
    import click

    from agrad.graphs.distributed.testing import test_files_on_cluster

    context = click.get_current_context()
    session = context.with_resource(library.open_cluster(cluster))
    produced = test_files_on_cluster(session, files, plugins, train=train)
    context.call_on_close(produced.close)          # a run stopped by -x cancels the files not yet run
    expected = iter(files)

    def outcome_of(file: str):
        assert file == next(expected), "test outcomes are asked for in file order"
        return next(produced)
    return outcome_of


test_outcomes.__test__ = False


def train(cluster, graph_file: str, plugins, seed, trainer, options: dict, **run_options):
    """`agrad train --workers/--cluster`: `trainer` stepped by replicas on the cluster's workers."""
    from agrad.graphs.distributed.training import train_on_cluster

    source = library.graph_source(graph_file, plugins=plugins, seed=seed)
    with library.open_cluster(cluster) as session:
        return train_on_cluster(session, source, trainer, options, **run_options)
