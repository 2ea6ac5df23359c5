"""`agrad check --workers N`: the finite-difference columns of a full check, split across
workers.

A full check is one backward pass per output element (the analytic Jacobian, made
here on the client) and two forward passes per input element (the numerical one):
column j of the numerical Jacobian of leaf k depends on nothing but the graph and j,
so the columns are cut into contiguous shares, several per worker, and any worker
runs any share (a worker that dies takes its share to another). Each worker builds
the graph once per job, from the file's text, and keeps it for the job's shares.

The result equals the single-process check number for number: the columns, the analytic
Jacobian and the verdict are made by gradcheck's own functions (agrad.autograd.gradcheck's
numerical_jacobian for a range of columns, analytical_jacobian, jacobian_report), and the
columns are stacked in the same order. The tests hold the two to equality.
"""
from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np

from agrad.autograd.gradcheck import analytical_jacobian, jacobian_report, not_reentrant, numerical_jacobian
from agrad.grad_mode import no_grad

from ..check_replay import BackwardReplay
from ..gradcheck import (MAX_FULL_CHECK_PASSES, CheckSetup, check_result, check_setup, located_backward_failure,
                         nothing_to_check)
from ..results import CheckResult, GraphRuntimeError
from .cluster import Session
from .graph_source import GraphSource

SHARES_PER_WORKER = 4       # several shares each: balance, a progress bar that moves, a death costs a quarter


@dataclass(frozen=True)
class CheckJob:
    """What every worker needs to rebuild the check: the graph's text and the step."""
    id: str
    source: GraphSource
    eps: float


# ---- on the workers ---------------------------------------------------------------

_setups: dict[str, CheckSetup] = {}      # job id -> the check built in this worker process


def _setup_of(job: CheckJob) -> CheckSetup:
    setup = _setups.get(job.id)
    if setup is None:
        graph = job.source.load()
        setup = check_setup(graph._checked, graph.file, max_passes=math.inf)
        while len(_setups) >= 2:                     # an abandoned job's graph does not stay forever
            _setups.pop(next(iter(_setups)))
        _setups[job.id] = setup
    return setup


def forget(job_id: str) -> None:
    _setups.pop(job_id, None)


def numerical_columns(job: CheckJob, share: list[tuple[int, int, int]]) -> list[list[np.ndarray]]:
    """For each (leaf k, lo, hi) of `share`: per output, the columns lo..hi-1 of d output /
    d leaf k, by gradcheck's own numerical_jacobian."""
    from ..runner import _cyclic_gc_paused

    np.seterr(all="ignore")           # NaN/Inf are results here, as in the client (cli/library.py)
    setup = _setup_of(job)
    # NOTE: a worker process holds dask's many long-lived objects, which every full collection
    # would traverse again during thousands of passes that make no reference cycles
    # no_grad: values only, as gradcheck_report computes them (and so they replay: graphs/check_replay.py)
    with _cyclic_gc_paused(), no_grad():
        return [numerical_jacobian(setup.fn, setup.inputs, k, job.eps, range(lo, hi), keep=setup.compared)
                for k, lo, hi in share]


# ---- on the client ----------------------------------------------------------------

def _shares(sizes: list[int], count: int) -> list[list[tuple[int, int, int]]]:
    """The columns of every leaf, in order, cut into at most `count` runs of equal length
    (a run may span two leaves)."""
    total = sum(sizes)
    length = max(1, math.ceil(total / max(1, count)))
    shares, current, room = [], [], length
    for k, size in enumerate(sizes):
        lo = 0
        while lo < size:
            hi = min(size, lo + room)
            current.append((k, lo, hi))
            room -= hi - lo
            lo = hi
            if room == 0:
                shares.append(current)
                current, room = [], length
    if current:
        shares.append(current)
    return shares


def check_on_cluster(session: Session, source: GraphSource, graph=None, *, eps: float = 1e-6, atol: float = 1e-5,
                     rtol: float = 1e-3, fast: bool = False, max_passes: float | None = None,
                     on_progress: Callable[[int, int], None] | None = None) -> CheckResult:
    """`Graph.check` with the numerical Jacobian computed on the cluster's workers.
    `on_progress(done, total)` counts finished columns. `--fast` (three passes in all)
    runs here, on the client: there is nothing to split. A full check of more than
    `max_passes` passes is refused (AG035); by default, N workers take N times what one
    process takes."""
    graph = graph if graph is not None else source.load()
    checked, file = graph._checked, graph.file
    if fast:
        return graph.check(eps=eps, atol=atol, rtol=rtol, fast=True)
    workers = max(1, len(session.workers()))
    # the refusal of a huge check is about minutes on one process: N workers take N times as many passes
    limit = MAX_FULL_CHECK_PASSES * workers if max_passes is None else max_passes
    setup = check_setup(checked, file, max_passes=limit)
    if setup is None:
        return nothing_to_check(checked, file)
    sizes = [x.numel() for x in setup.inputs]
    total = sum(sizes)
    job = CheckJob(uuid.uuid4().hex, source, eps)
    shares = _shares(sizes, workers * SHARES_PER_WORKER)
    # NOTE: the job goes with every task (a graph's text is small), not scattered once: a share
    # whose worker dies must be able to run anywhere, and scattered data dies with its worker
    futures = [session.submit(numerical_columns, job, share) for share in shares]
    unstable = {}
    try:
        try:
            analytical = analytical_jacobian(setup.fn, setup.inputs, range(len(setup.inputs)),   # meanwhile
                                             keep=setup.compared, vjp=BackwardReplay(), unstable=unstable)
        except GraphRuntimeError:
            raise
        except (Exception, SystemExit) as exc:       # noqa: BLE001 - a backward formula failed: located at its node
            raise located_backward_failure(setup, exc) from exc
        counts = [sum(hi - lo for _, lo, hi in share) for share in shares]
        columns_done = 0

        def finished(i, _blocks):
            nonlocal columns_done
            columns_done += counts[i]
            if on_progress is not None:
                on_progress(columns_done, total)

        results = session.gather(futures, on_done=finished)
    finally:
        session.forget_everywhere(forget, job.id)
    numerical: list[list[list[np.ndarray]]] = [[] for _ in setup.inputs]     # [leaf][block][output]
    for share, blocks in zip(shares, results):
        for (k, _, _), block in zip(share, blocks):
            numerical[k].append(block)
    reports = []
    for k, leaf in enumerate(setup.inputs):
        per_output = [np.concatenate([block[o] for block in numerical[k]], axis=1) for o in range(len(analytical))] \
            if numerical[k] else []
        reports.append(jacobian_report(k, tuple(leaf.shape), per_output, [a[k] for a in analytical], atol, rtol))
    return check_result(checked, file, setup, not_reentrant(reports, unstable))
