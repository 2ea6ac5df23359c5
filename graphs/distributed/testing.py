"""`agrad test --workers N`: every graph file is a task any worker may run (one whose
worker dies runs again on another); outcomes come back in file order, so the table,
JSON, JUnit and GitHub reports read exactly as a single process writes them.

Workers read the graph files, and the data files they name, by the paths the client
was given, from their own current folder: a LocalCluster's workers share the
client's; on several machines the files must be at the same paths.
"""
from __future__ import annotations

from typing import Iterator

from ..results import TestOutcome
from .cluster import Session


def test_on_worker(path: str, plugins: tuple[str, ...], train: bool = True) -> TestOutcome:
    import numpy

    from ..testing import test_file

    numpy.seterr(all="ignore")         # as the client's commands run kernels (cli/library.py)
    return test_file(path, plugins=plugins, train=train)


def test_files_on_cluster(session: Session, files: list[str], plugins=(), train: bool = True) -> Iterator[TestOutcome]:
    """Each file's TestOutcome, in the order of `files`; stop iterating (`-x`) and the
    files not yet done are cancelled."""
    from pathlib import Path

    plugins = tuple(str(Path(p).resolve()) for p in plugins)
    futures = [session.submit(test_on_worker, file, plugins, train) for file in files]
    yield from session.in_order(futures)


test_on_worker.__test__ = False           # pytest would otherwise collect these from modules that import them
test_files_on_cluster.__test__ = False
