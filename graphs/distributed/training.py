"""`agrad train --workers N` / `--cluster`: data-parallel training with engine replicas,
with PyTorch DistributedDataParallel's semantics.

- Every worker holds a replica: the graph built from the file's text, its `train:`
  data read by the worker itself, and a Trainer started from one state (the client's
  fresh start, or the `--resume` checkpoint), so every replica begins identical.
- Step k's global batch is the one a single process would take (`Batches.batch(k)`,
  a function of the seed and k alone); rank r of N takes its rows [r*B/N, (r+1)*B/N).
- The replicas' gradients are combined once per step, as the loss's reduction says:
  a mean over the batch is the row-weighted mean of the shards' means (n_r/B each),
  a sum is the sum. Rank 0's worker combines them (dask moves each shard's gradients
  there, worker to worker) and every replica takes the one result as the input of its
  next task, clipping and stepping its optimizer and schedule with it: parameters and
  optimizer state stay identical on every replica (checked at the end of every run).
  The client sees a few numbers per step (loss, lr, eval), never the gradients.
- So a data-parallel run equals the single-process run with the same global batch,
  up to the rounding of the sum (float64: within 1e-12). What would make the shards
  depend on each other is refused before the first step (AG070, located): a
  batch_norm in training mode (its statistics couple the batch), a loss that is not
  a mean or a sum over the batch, a batch that the graph cannot run in shards.
- Checkpoints are written once, by the client, from rank 0's state; a checkpoint
  holds no worker count, so `--resume` works on any number of workers.

A replica lives in its worker's memory for the job: a worker that dies takes its
replica with it, which is a located runtime error (AG047, exit 3) naming the step; the
last checkpoint resumes the run.
"""
from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..results import Diagnostic, GraphFileError, SourceLocation
from .cluster import Session, cluster_error
from .graph_source import GraphSource

NOT_DATA_PARALLEL = "AG070"

# The loss ops whose `reduction` (default "mean") is over the batch; `mean`/`sum` with no dim too.
REDUCED_LOSSES = ("cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                  "binary_cross_entropy", "binary_cross_entropy_with_logits")
WHOLE_REDUCTIONS = {"mean": "mean", "sum": "sum"}


def _given(node) -> dict[str, Any]:
    return {arg.name: value for arg, value, _ in node.given}


def _refusal(file: str, pos, message: str) -> GraphFileError:
    location = SourceLocation(file, pos.line, pos.col) if pos is not None else None
    return GraphFileError([Diagnostic(NOT_DATA_PARALLEL, message, location)])


def loss_reduction(checked, file: str, loss: str) -> str:
    """"mean" or "sum": how the loss node reduces the batch; GraphFileError (AG070) when it is
    neither, or couples the shards in a way a row-weighted sum cannot undo."""
    node = next((n for n in checked.order if n.name == loss), None)
    if node is None:
        raise _refusal(file, checked.spec.inputs[loss].pos if loss in checked.spec.inputs else None,
                       f"train.loss '{loss}' is an input; data-parallel training needs a loss computed from the batch")
    given = _given(node)
    if node.op in WHOLE_REDUCTIONS and given.get("dim") is None:
        return WHOLE_REDUCTIONS[node.op]
    if node.op in REDUCED_LOSSES:
        reduction = given.get("reduction", "mean")
        if reduction == "mean" and node.op in ("cross_entropy", "nll_loss") and given.get("weight") is not None:
            raise _refusal(file, node.spec.pos, f"'{loss}' is a class-weighted mean: its denominator is the batch's "
                           "total weight, which no shard knows; use reduction=\"sum\" divided by a constant, or "
                           "train on one process")
        if reduction in ("mean", "sum"):
            return reduction
    raise _refusal(file, node.spec.pos, f"data-parallel training needs the loss '{loss}' to be a mean or a sum over "
                   f"the batch (mean(...), sum(...) or a loss op with reduction \"mean\"/\"sum\"), not {node.op}(...): "
                   "the shards' gradients could not be combined into the whole batch's")


def refuse_batch_coupling(checked, file: str) -> None:
    """batch_norm in training mode normalises each row by statistics of the whole batch:
    refused before the first step (SyncBatchNorm's statistics are not built)."""
    for node in checked.order:
        if node.op == "batch_norm" and _given(node).get("training") is True:
            raise _refusal(file, node.spec.pos, f"'{node.spec.owner}' is batch_norm(training=True), whose statistics "
                           "couple the rows of the batch: it cannot be split across workers; train on one process")


def shard_bounds(batch_size: int, size: int) -> list[tuple[int, int]]:
    """Rank r's rows of a global batch: [r*B//N, (r+1)*B//N), as DistributedSampler's contiguous split."""
    return [(r * batch_size // size, (r + 1) * batch_size // size) for r in range(size)]


# ---- on the workers ---------------------------------------------------------------

@dataclass(frozen=True)
class ReplicaJob:
    id: str
    source: GraphSource
    trainer_options: dict          # Trainer's keyword arguments, less the data (each worker reads it)
    state: dict                    # Trainer.state() every replica starts from


class Replica:
    """One worker's engine replica: a Trainer whose step is cut where DDP cuts it, between
    the backward pass and the optimizer step."""

    def __init__(self, job: ReplicaJob, rank: int, size: int):
        from ..train_section import train_spec
        from ..training import Trainer

        graph = job.source.load()                 # reads the `train:` data here, on the worker
        spec = train_spec(graph)
        options = dict(job.trainer_options)
        options.update(data=spec.data, eval_data=spec.eval_data)
        self.trainer = Trainer(graph, **options)
        self.trainer.load_state(job.state)
        batch = self.trainer.batches.batch_size
        self.lo, self.hi = shard_bounds(batch, size)[rank]
        self.rank = rank

    def gradients(self, step: int):
        """Forward and backward on this rank's rows of global batch `step`: (loss, grads, anomaly)."""
        import agrad

        from ..training import as_input_tensor

        t = self.trainer
        batch = t.batches.batch(step)
        values = {n: as_input_tensor(t.checked, n, a[self.lo:self.hi]) for n, a in batch.items()}
        for leaf in t.grad_leaves:
            leaf.grad = None
        runner = t.runner
        runner.anomalies.clear()
        env = t._forward(values)
        loss = env[t.loss_name]
        value = float(loss.item())
        if not math.isfinite(value):
            origin = next((a for a in runner.anomalies if a.phase == "forward"), None)
            return value, None, origin
        try:
            with runner.backward_mode():
                agrad.autograd.backward([loss])
        except Exception as exc:     # noqa: BLE001 - located in the file as Trainer.step does
            found = runner.backward_error(exc, runner.location(t.loss_name))
            if isinstance(found, Exception):
                raise found from exc
            return value, None, found
        grads = [None if p.grad is None else p.grad.detach().cpu().numpy() for p in t.params]
        return value, grads, None

    def apply(self, grads: list, loss: float) -> float:
        """The optimizer step with the combined gradients; returns the lr it used."""
        import agrad
        import agrad.nn.utils

        t = self.trainer
        for p, g in zip(t.params, grads):
            p.grad = None if g is None else agrad.tensor(g, dtype=p.dtype, device=p.device)
        if t.clip is not None:
            agrad.nn.utils.clip_grad_norm_(t.params, t.clip)
        lr = float(t.optimizer.param_groups[0]["lr"])
        t.run.lrs.append(lr)
        t.optimizer.step()
        if t.scheduler is not None:
            t.scheduler.step()
        t.run.losses.append(loss)
        t.run.steps += 1
        return lr


_replicas: dict[str, Replica] = {}      # job id -> this worker process's replica


def start_replica(job: ReplicaJob, rank: int, size: int) -> None:
    np.seterr(all="ignore")
    _replicas[job.id] = Replica(job, rank, size)


def advance(job_id: str, combined: tuple | None, evaluate: bool, step: int | None):
    """One round of the step loop on a replica: apply the previous step's combined
    gradients (with its loss), evaluate when asked, then the gradients of `step`.
    Returns (lr, eval record, (loss, grads, anomaly) of `step`, seconds it took)."""
    from agrad.fp_warnings import quiet

    from ..runner import _cyclic_gc_paused

    replica = _replica(job_id)
    lr = record = computed = None
    start = time.perf_counter()
    with _cyclic_gc_paused(), quiet():     # as run_trainer steps on one process
        if combined is not None:
            lr = replica.apply(*combined)
        if evaluate:
            record = replica.trainer.evaluate()
        if step is not None:
            computed = replica.gradients(step)
    return lr, record, computed, time.perf_counter() - start


def combine_shards(shards: list, bounds: list[tuple[int, int]], reduction: str):
    """On rank 0: the step's (gradients, loss) from every rank's `advance` result; None when a
    shard's loss is NaN/Inf or a gradient is (the client stops the run, as one process does)."""
    parts = [computed for _, _, computed, _ in shards]
    if any(grads is None for _, grads, _ in parts):
        return None
    loss, grads = _combine(parts, bounds, reduction)
    return grads, loss


def round_summary(shards: list, combined):
    """The little the client needs of a round: rank 0's lr and eval record, the slowest rank's
    seconds, the step's loss (the first NaN/Inf shard's when one is) and the first anomaly."""
    lr, record, computed, _ = shards[0]
    seconds = max(s for *_, s in shards)
    loss = anomaly = None
    if computed is not None:
        parts = [c for _, _, c, _ in shards]
        anomaly = next((a for _, _, a in parts if a is not None), None)
        loss = combined[1] if combined is not None else next((v for v, _, _ in parts if not math.isfinite(v)),
                                                             math.nan)
    return lr, record, seconds, loss, anomaly


def replica_state(job_id: str) -> dict:
    return _replica(job_id).trainer.state()


def _replica(job_id: str) -> Replica:
    replica = _replicas.get(job_id)
    if replica is None:     # the worker was restarted under the job (its nanny does that after a crash)
        raise cluster_error("a training replica is gone: its worker restarted during the run")
    return replica


def forget(job_id: str) -> None:
    _replicas.pop(job_id, None)


# ---- on the client ----------------------------------------------------------------

def _combine(parts: list, bounds: list[tuple[int, int]], reduction: str):
    """The whole batch's loss and gradients from the shards': n_r/B-weighted for a mean, summed
    for a sum, added in rank order (the same on every run)."""
    total = bounds[-1][1]
    weights = [(hi - lo) / total if reduction == "mean" else 1.0 for lo, hi in bounds]
    loss = sum(w * value for w, (value, _, _) in zip(weights, parts))
    grads = []
    for i in range(len(parts[0][1])):
        pieces = [(w, g[i]) for w, (_, g, _) in zip(weights, parts) if g[i] is not None]
        if not pieces:
            grads.append(None)
            continue
        out = pieces[0][1] * pieces[0][0] if reduction == "mean" else pieces[0][1].copy()
        for w, g in pieces[1:]:
            out += w * g if reduction == "mean" else g
        grads.append(out)
    return loss, grads


def train_on_cluster(session: Session, source: GraphSource, trainer, options: dict, *, steps: int,
                     stop_after: int | None = None, eval_every: int | None = None, on_step: Callable | None = None,
                     timing: dict | None = None):
    """Step `trainer` (the client's Trainer, made with `options`: fresh or resumed) to `steps`
    in total (or to `stop_after`) with a replica on every worker of the cluster, as
    `run_trainer` does on one process; the client's trainer ends with the replicas' state and
    the run's losses, lrs and evals. Raises TrainingDiverged as run_trainer does.

    `timing`, when given, receives `rounds`, `seconds` (the step loop's wall time) and
    `busiest_worker_seconds` (per round, the slowest replica's own time, summed): the rest
    of the wall time is what data parallelism costs (communication, the client's sum)."""
    from ..training import TrainingDiverged

    checked, file = trainer.checked, trainer.file
    if trainer.batches is None:
        raise _refusal(file, None, "data-parallel training splits the rows of `train: data:`; this graph has none "
                       "(it trains on its own inputs): train it on one process")
    refuse_batch_coupling(checked, file)
    reduction = loss_reduction(checked, file, trainer.loss_name)
    workers = session.workers()
    batch = trainer.batches.batch_size
    if batch < len(workers):
        raise _refusal(file, None, f"the batch of {batch} rows cannot be split across {len(workers)} workers")
    bounds = shard_bounds(batch, len(workers))
    for lo, hi in sorted(set(bounds)):
        shapes = {n: (hi - lo,) + a.shape[1:] for n, a in trainer.batches.arrays.items()}
        problems = trainer.shapes.problems(shapes)
        if problems:
            raise _refusal(file, problems[0].location, f"the graph cannot run on a shard of {hi - lo} rows (of the "
                           f"batch's {batch}) on each of {len(workers)} workers: {problems[0].message}")
    shipped = {k: v for k, v in options.items() if k not in ("data", "eval_data")}     # each worker reads its own
    job = ReplicaJob(uuid.uuid4().hex, source, shipped, trainer.state())
    size = len(workers)
    run = trainer.run
    first = run.steps
    end = steps if stop_after is None else min(steps, stop_after)
    start = time.perf_counter()
    diverged = None

    def final_eval_due(after: int) -> bool:         # run_trainer's evaluation after the last step
        return after == steps and (not run.evals or run.evals[-1]["step"] != steps)

    rounds, busiest, loop_start = 0, 0.0, None
    try:
        session.gather([session.submit(start_replica, job, r, size, worker=w) for r, w in enumerate(workers)],
                       pinned=workers)
        combined = None           # the future of the previous step's (gradients, loss), on rank 0
        applied_loss = None       # that step's loss, recorded once its gradients are applied
        loop_start = time.perf_counter()
        while True:
            after = run.steps + (combined is not None)
            evaluate = bool(combined is not None and eval_every and after % eval_every == 0 and after < steps) \
                or final_eval_due(after)
            step = after if after < end else None        # the global batch whose gradients this round makes
            if combined is None and step is None and not evaluate:
                break
            # NOTE: the gradients go from worker to worker (dask moves a task's inputs between
            # workers), never through the client or the scheduler: the client sees one summary
            shards = [session.submit(advance, job.id, combined, evaluate and r == 0, step, worker=w)
                      for r, w in enumerate(workers)]
            combined = None if step is None else \
                session.submit(combine_shards, shards, bounds, reduction, worker=workers[0])
            summary = session.submit(round_summary, shards, combined, worker=workers[0])
            lr, record, seconds, loss, anomaly = _gather_step(session, summary, workers, run.steps + 1,
                                                              trainer.runner.location(trainer.loss_name))
            rounds += 1
            busiest += seconds
            if lr is not None:
                run.lrs.append(lr)
                run.losses.append(applied_loss)
                run.steps += 1
            if record is not None:
                run.evals.append(record)
            if lr is not None and on_step is not None:
                on_step(trainer)
            if step is None:
                break
            if anomaly is not None or not math.isfinite(loss):
                location = anomaly.location if anomaly is not None else trainer.runner.location(trainer.loss_name)
                diverged = TrainingDiverged(step + 1, loss, location, anomaly)
                break
            applied_loss = loss
        states = session.gather([session.submit(replica_state, job.id, worker=w) for w in workers], pinned=workers)
        _require_identical(states, workers)
        trainer.load_state(states[0])      # rank 0's parameters, optimizer state and the run's record
    finally:
        run.seconds = time.perf_counter() - start
        if timing is not None and loop_start is not None:
            timing.update(rounds=rounds, busiest_worker_seconds=busiest, seconds=time.perf_counter() - loop_start)
        run.session_steps = run.steps - first
        session.forget_everywhere(forget, job.id)
    if diverged is not None:
        raise diverged
    return run


def _require_identical(states: list[dict], workers: list[str]) -> None:
    """DDP's invariant, checked once at the end: every replica holds the same parameters and
    optimizer buffers, bit for bit (only rank 0 evaluates, so the records may differ)."""
    first = states[0]
    for worker, state in zip(workers[1:], states[1:]):
        for key, value in first.items():
            if key != "meta" and not np.array_equal(value, state[key]):
                raise cluster_error(f"replica on {worker} ended with a different '{key}' than rank 0's: "
                                    "the replicas diverged (a bug in agrad's data-parallel training)")


def _at_step(exc, step: int, location):
    return cluster_error(f"{exc} (at step {step}; a checkpoint written with --save resumes the run, on any number "
                         "of workers)", location)


def _gather_step(session: Session, future, workers: list[str], step: int, location):
    """One round's results; a lost worker is located at the loss (the replicas' job) and names
    the first step not taken."""
    from ..results import GraphRuntimeError

    try:
        return session.gather([future], pinned=workers)[0]
    except GraphRuntimeError as exc:
        if exc.code != "AG047":
            raise
        raise _at_step(exc, step, location) from exc
