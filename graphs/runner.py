"""Running a checked graph: leaves on the real device, the forward pass, every
backward pass in order, then results as tensors (`GraphRun`) and as plain data
(`GraphRun.result()`).
"""
from __future__ import annotations

import contextlib
import functools
import gc
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import agrad
import numpy as np
from agrad.fp_warnings import quiet

from .build import CheckedGraph
from .executor import NodeFailure, label_all, node_name, node_reads, run_nodes
from .expectations import check_expectations
from .failures import OUT_OF_MEMORY, Failures
from .inputs import memory_bytes, pass_array
from .profiling import WARMUP_PASSES, ProfileCollector
from .replay import ReplayCache, eligible, record_pass
from .results import AnomalyReport, GraphRuntimeError, RunResult, SourceLocation
from .spec import BackwardSpec, TensorRef
from .summaries import summarize


@dataclass
class GraphRun:
    """One run's tensors. `outputs` and `grads` are agrad Tensors (a grad may be None)."""
    graph: CheckedGraph
    file: str
    device: str
    values: dict[str, Any]
    outputs: dict[str, Any]
    grads: dict[str, Any]
    not_retained: list[str]
    timings_ms: dict[str, float]
    repeat: dict[str, dict[str, float]] | None = None
    profile: list | None = None
    anomalies: list[AnomalyReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def result(self) -> RunResult:
        spec = self.graph.spec
        expect = check_expectations(spec.expect, self.file, self.values, self.grads)
        return RunResult(
            graph=spec.name, file=self.file, device=self.device,
            outputs={name: self._summary(name, t) for name, t in self.outputs.items()},
            grads={name: None if g is None else self._summary(name, g, "gradient of ")
                   for name, g in self.grads.items()},
            not_retained=list(self.not_retained), timings_ms=dict(self.timings_ms), expect=expect,
            repeat=self.repeat, profile=self.profile, anomalies=list(self.anomalies), warnings=list(self.warnings))

    def _summary(self, name: str, tensor, what: str = ""):
        """The tensor as data for the CLI; out of memory on the way is AG044 at its node."""
        try:
            return summarize(tensor)
        except MemoryError as exc:
            failures = Failures(self.graph.spec, self.file)
            raise GraphRuntimeError(f"{what}'{name}': out of memory while summarizing it: {exc}",
                                    failures.location(name), name, code=OUT_OF_MEMORY) from exc


class Runner:
    def __init__(self, graph: CheckedGraph, file: str, *, anomaly: bool = False):
        self.graph = graph
        self.spec = graph.spec
        self.file = file
        self.anomaly = anomaly
        self.anomalies: list[AnomalyReport] = []
        self.forward_profile: list[tuple[str, str, int, float, float]] = []   # name, op, line, start, seconds
        self.leaf_ids: dict[int, str] = {}       # id(leaf tensor) -> input name, for AccumulateGrad errors
        self.timed = True                        # record forward_profile (off when nothing reads it)
        # Label the Nodes of a pass only when yaml_node_of first asks (executor.label_all): right
        # where every error is read from the latest pass (run_graph), not in gradcheck's many passes.
        self.lazy_labels = False
        self.env: dict[str, Any] | None = None   # the latest forward pass's values
        # with `release` (release_plan): the values no later node, output, expectation, retain or
        # backward pass reads leave `env` as soon as their last reader has run; `released` keeps
        # each one's grad_fn, for labels
        self.release: ReleasePlan | None = None
        self.released: dict[str, Any] = {}
        self.labelled: dict[str, Any] | None = None   # the env whose Nodes label_all labelled

    @functools.cached_property
    def failures(self) -> Failures:
        # made when first needed: its maps of every node cost a replayed pass more than the replay
        return Failures(self.spec, self.file)

    def location(self, name: str | None) -> SourceLocation | None:
        return self.failures.location(name)

    # ---- leaves and forward -------------------------------------------------------

    def refuse_beyond_memory(self) -> None:
        """AG044 before any kernel runs when the pass could not fit in this machine's memory: one
        node's result larger than it (`sum(expand(x, [10**6, 10**6]))` would otherwise visit 10**12
        elements for hours, or fail wherever the allocation happens to fail), or the leaves with
        their gradients larger than it (two [10**5, 10**5] parameters of a matmul: each fits a
        large machine, and the pass would run for hours before it failed)."""
        memory = memory_bytes()
        if memory is None:
            return
        graph = self.graph
        largest = graph.largest
        if largest is not None and largest.nbytes > memory:
            owner = self.failures.owners.get(largest.node, largest.node)
            raise GraphRuntimeError(f"{owner}: {largest.op}(...) would make {largest.numel:.3g} {largest.dtype} "
                                    f"elements ({largest.nbytes / 2**30:,.1f} GiB), more than this machine's memory "
                                    f"({memory / 2**30:.1f} GiB); nothing was run", self.location(largest.node), owner,
                                    code=OUT_OF_MEMORY)
        held, leaf = graph.held_by_leaves()
        if held > memory:
            single = len(graph.leaves) == 1
            what = f"input '{leaf}'" if single else f"the inputs (the largest: '{leaf}')"
            if graph.spec.backward:
                what += " with its gradient" if single else " with the gradients of those that require grad"
            raise GraphRuntimeError(f"{what} would hold {held / 2**30:,.1f} GiB, "
                                    f"more than this machine's memory ({memory / 2**30:.1f} GiB); nothing was run",
                                    self.location(leaf), leaf, code=OUT_OF_MEMORY)

    def make_leaves(self) -> dict[str, Any]:
        self.refuse_beyond_memory()
        leaves = {}
        for name, plan in self.graph.leaves.items():
            try:
                array = pass_array(plan, self.graph.seed)
                if plan.device == "cpu":        # the pass's own array, used in place: no second copy
                    leaf = agrad.from_numpy(array).requires_grad_(plan.requires_grad)
                else:
                    leaf = agrad.tensor(array, dtype=agrad.dtypes.from_name(plan.dtype), device=plan.device,
                                        requires_grad=plan.requires_grad)
                leaves[name] = leaf
            except (RuntimeError, MemoryError, ValueError, TypeError) as exc:   # DeviceUnavailableError too
                raise self.failures.leaf(name, exc) from exc
        self.leaf_ids = {id(t): name for name, t in leaves.items()}
        return leaves

    def forward(self, leaves: dict[str, Any]) -> dict[str, Any]:
        env = self.env = dict(leaves)
        self.released = {}

        def seen(bound, value, seconds):
            start = time.perf_counter() - seconds
            self.forward_profile.append((bound.name, bound.op, bound.spec.line, start, seconds))
            # Only the first non-finite value is news: every node after it inherits it.
            if self.anomaly and not any(a.phase == "forward" for a in self.anomalies):
                self.check_finite(bound.name, value)

        try:
            # NOTE: labels are made when first read (yaml_node_of): walking every op's new Nodes
            # to label them was a fifth of a pass's forward time.
            run_nodes(self.graph.order, env, on_node=seen if self.timed or self.anomaly else None,
                      labelled=not self.lazy_labels, release=self.release, released=self.released)
        except NodeFailure as failure:
            raise self.failures.forward(failure.bound.name, failure.error) from failure.error
        return env

    def check_finite(self, name: str, value) -> None:
        for i, t in enumerate(value if isinstance(value, tuple) else (value,)):
            if t is None or not t.dtype.is_floating_point:
                continue
            try:       # one boolean array at a time: near a memory limit, --anomaly must not be what fails
                data = t.detach().cpu().numpy()
                if np.isfinite(data).all():
                    continue
                what = "nan" if np.isnan(data).any() else "inf"
            except MemoryError as exc:
                raise self.failures.forward(name, exc) from exc
            # a nested expression's intermediate (`loss.2`) is reported as the YAML node it was
            # written in, at the op's own column
            node = self.failures.owners.get(name, name)
            where = f" in its {self.failures.ops.get(name, '?')}(...)" if node != name else ""
            self.anomalies.append(AnomalyReport("forward", node, f"'{node}' produced {what} values{where}"
                                  + (f" in its output {i}" if isinstance(value, tuple) else ""),
                                  self.location(name)))
            return

    # ---- backward -----------------------------------------------------------------

    def retain(self, env: dict[str, Any]) -> None:
        for name in self.graph.retained():
            env[name].retain_grad()

    def backward(self, env: dict[str, Any]) -> None:
        for pass_ in self.spec.backward:
            self.backward_pass(pass_, env)

    def backward_pass(self, pass_: BackwardSpec, env: dict[str, Any]) -> None:
        roots = [env[r.name] for r in pass_.roots]
        grad_tensors = None
        if pass_.grad_tensors is not None:
            grad_tensors = [env[g.name] if isinstance(g, TensorRef) else
                            agrad.tensor(g, dtype=root.dtype, device=root.device)
                            for g, root in zip(pass_.grad_tensors, roots)]
        inputs = [env[r.name] for r in pass_.inputs] if pass_.inputs is not None else None
        try:
            with self.backward_mode():
                agrad.autograd.backward(roots, grad_tensors=grad_tensors, retain_graph=pass_.retain_graph,
                                        create_graph=pass_.create_graph, inputs=inputs)
        except (Exception, SystemExit) as exc:      # noqa: BLE001 - the engine's error (a plugin's sys.exit too)
            found = self.backward_error(exc, SourceLocation(self.file, pass_.pos.line, pass_.pos.col))
            if isinstance(found, AnomalyReport):
                self.anomalies.append(found)
                return
            raise found from exc

    @contextlib.contextmanager
    def backward_mode(self):
        """Anomaly mode around a backward pass under `--anomaly`: set_detect_anomaly(True), which the
        user asked for, so without PyTorch's "has been enabled" warning; its "Error detected in ..."
        warning (the Python stack of the forward op) is not shown either: `backward_error` names the
        node and its line in the graph file instead. Nor the engine's warning for create_graph=True
        (a reference cycle through the parameters' .grad): a graph file declares its double
        backward, and its tensors end with the run."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Using backward\(\) with create_graph=True",
                                    category=UserWarning)
            if not self.anomaly:
                yield
                return
            with agrad.autograd.set_detect_anomaly(True):
                warnings.filterwarnings("ignore", message="Error detected in ", category=UserWarning)
                yield

    def backward_error(self, exc: Exception, fallback: SourceLocation | None) -> AnomalyReport | Exception:
        """The engine's error in backward, located at the YAML node whose op made the failing
        Node (else `fallback`): in anomaly mode a NaN/Inf is an AnomalyReport, anything else
        the exception to raise."""
        node = getattr(exc, "agrad_node", None)
        yaml_node = self.yaml_node_of(node)
        location = self.location(yaml_node) or fallback
        if self.anomaly and isinstance(exc, agrad.autograd.AnomalyError):
            return AnomalyReport("backward", self.failures.owners.get(yaml_node, yaml_node) or node_name(node), str(exc),
                                 location)
        return self.failures.backward(exc, yaml_node, node_name(node) if node is not None else None, location)

    def yaml_node_of(self, node) -> str | None:
        if node is None:
            return None
        if self.lazy_labels and self.env is not None and self.labelled is not self.env:
            label_all(self.graph.order, self.env, self.released)
            self.labelled = self.env
        name = node.metadata.get("yaml_node")
        if name is None and hasattr(node, "variable"):
            name = self.leaf_name(node.variable)
        return name

    def leaf_name(self, tensor) -> str | None:
        return self.leaf_ids.get(id(tensor))

    # ---- one whole run ---------------------------------------------------------------

    def run_once(self, leaves: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
        t0 = time.perf_counter()
        env = self.forward(leaves)
        t1 = time.perf_counter()
        self.retain(env)
        self.backward(env)
        return env, (t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3


class ReleasePlan(Sequence):
    """Per node of an order, the tuple of names to let go of once it has run (release_plan). Kept
    as one entry a node, a bare name where it is one (the commonest case: every op of a chain): a
    1-tuple was 56 of the 390 bytes an op of a long chain holds when its forward ends."""
    __slots__ = ("entries",)

    def __init__(self, entries: list):
        self.entries = entries          # (), a name, or a tuple of two names or more

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, i) -> tuple[str, ...]:
        entry = self.entries[i]
        return (entry,) if entry.__class__ is str else entry

    def __iter__(self):
        return ((entry,) if entry.__class__ is str else entry for entry in self.entries)


def release_plan(graph: CheckedGraph) -> ReleasePlan:
    """For each node of the order, the values to let go of once it has run: those it was the
    last to read (or nobody reads), unless an output, an expectation, a retained tensor or a
    backward pass reads them after the forward. Only node values: leaves stay."""
    spec = graph.spec
    kept = set(output_names(graph)) | set(graph.retained())
    kept.update(e.name for e in (spec.expect.outputs if spec.expect else ()))
    for pass_ in spec.backward:
        kept.update(r.name for r in pass_.roots)
        kept.update(g.name for g in pass_.grad_tensors or () if isinstance(g, TensorRef))
        kept.update(r.name for r in pass_.inputs or ())
    order = graph.order
    last_reads = getattr(order, "last_reads", None)
    inputs = spec.inputs
    if last_reads is not None:
        # a ColumnOrder: the values made inside each YAML node already placed by its signature
        # (none of them kept: no output, pass or retain names one where the columns apply)
        release, last = last_reads()
    else:
        release, last = [], {}
        for i, (name, reads) in enumerate(node_reads(order)):
            for read in reads:
                last[read] = i
            last[name] = i              # made here: read by nodes after it, if any
            release.append(())
    for name, i in last.items():
        if name not in inputs and name not in kept:     # a node's value (leaves stay)
            entry = release[i]
            release[i] = name if entry == () else (entry, name) if entry.__class__ is str else entry + (name,)
    return ReleasePlan(release)


def output_names(graph: CheckedGraph) -> list[str]:
    spec = graph.spec
    if spec.outputs:
        return list(dict.fromkeys(r.name for r in spec.outputs))
    roots = [r.name for p in spec.backward for r in p.roots]
    if roots:
        return list(dict.fromkeys(roots))
    last = spec.last_node()
    return [last.owner] if last is not None else []


def _computed_together(run: GraphRun) -> None:
    """A lazy device's (dask's) results, computed all together: the outputs, the gradients and what
    `expect:` reads are computed by one compute (work they share is done once) and stay tensors
    of that device holding the computed arrays, so that nothing read later computes again."""
    spec = run.graph.spec
    wanted = dict(run.outputs)
    wanted.update({e.name: run.values[e.name] for e in (spec.expect.outputs if spec.expect else ())})
    names = [n for n, t in wanted.items() if isinstance(t, agrad.Tensor)]
    grads = [n for n, g in run.grads.items() if g is not None]
    tensors = [wanted[n].detach() for n in names] + [run.grads[n] for n in grads]
    dev = agrad.device(run.device)
    arrays = dev.backend.to_numpy_all([t._data for t in tensors])
    host = [agrad.Tensor._make(a, dev, dev.backend.key) for a in arrays]
    on_host = dict(zip(names, host))
    run.outputs = {n: on_host.get(n, t) for n, t in run.outputs.items()}
    run.values = {**run.values, **on_host}
    run.grads.update(zip(grads, host[len(names):]))


@contextlib.contextmanager
def _cyclic_gc_paused():
    """agrad's graphs hold no reference cycles (a saved output does not hold its Node, a
    leaf holds its AccumulateGrad weakly), so reference counting frees them; the cyclic
    collector would only re-traverse the growing graph, about a third of forward time
    on large graphs. What cycles user code makes are collected when it resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # NOTE: the objects made while paused are all in the youngest generation, and the
            # first collection after resuming would traverse every one (seconds at 1M nodes).
            # freeze + unfreeze moves them to the oldest generation without traversing them.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def run_graph(graph: CheckedGraph, file: str, *, timings: dict[str, float], profile: bool = False,
              anomaly: bool = False, repeat: int = 1, on_repeat=None, leaf_values=None,
              replay: ReplayCache | None = None, keep_values: bool = True) -> GraphRun:
    """One run of `repeat` passes. With `replay` (the graph's cache; None: the engine only),
    a pass after the first is recorded and later passes replay it (graphs/replay.py).
    `keep_values=False`: the run's `values` hold only the leaves and what the outputs,
    expectations, retained tensors and backward passes read (`agrad run`): each other value
    is let go of as soon as the last node reading it has run (release_plan). NumPy's floating-point
    warnings are off for the run, as for a training run's steps (training.run_trainer) and for the
    CLI: a graph's log(0) is its -inf, which PyTorch computes without a warning."""
    with _cyclic_gc_paused(), quiet():
        return _run_graph(graph, file, timings=timings, profile=profile, anomaly=anomaly, repeat=repeat,
                          on_repeat=on_repeat, leaf_values=leaf_values, replay=replay, keep_values=keep_values)


def _run_graph(graph: CheckedGraph, file: str, *, timings: dict[str, float], profile: bool, anomaly: bool,
               repeat: int, on_repeat, leaf_values=None, replay: ReplayCache | None = None,
               keep_values: bool = True) -> GraphRun:
    runner = Runner(graph, file, anomaly=anomaly)
    runner.lazy_labels = True
    release = None if keep_values else release_plan(graph)
    if replay is not None and replay.replay is not None and not (leaf_values or profile or anomaly):
        leaves = replay.replay.leaves(runner)   # every pass replayed: leaf tensors made only when looked at
    else:
        leaves = runner.make_leaves()
    if leaf_values:                     # Graph.run(inputs=...): already made and shape-checked
        leaves.update(leaf_values)
        runner.leaf_ids = {id(t): name for name, t in leaves.items()}
    forward_ms, backward_ms = [], []
    profiler = ProfileCollector(runner) if profile else None
    runner.timed = profiler is not None
    # As `caffe time`: a profile starts with passes that pay the first-call costs and are not counted.
    warmup = WARMUP_PASSES if profiler else 0
    env: dict[str, Any] = {}
    if replay is not None and (leaf_values or eligible(graph, leaves, profile=profile, anomaly=anomaly)):
        replay = None                   # other leaf values, or a pass that must run through the engine
    replayed = None                     # the gradients of the last pass, when it was replayed (graphs/replay.py)
    for i in range(warmup + max(1, repeat)):
        counted = i >= warmup
        for t in leaves.values() if replay is None or replay.replay is None else ():   # a replay sets them all
            if t.requires_grad:
                t.grad = None            # zero_grad(set_to_none=True), as PyTorch's optimizers do
        runner.forward_profile.clear()
        runner.anomaly = anomaly and i == 0      # a repeat finds the same values again
        if replay is not None and replay.replay is not None:
            env, replayed, f_ms, b_ms = replay.replay.run(leaves)
        elif replay is not None and replay.reason is None and (replay.runs or i):
            # the second pass of this graph: recorded, so later ones replay it (from every value)
            runner.release = None
            env, f_ms, b_ms, replay.replay, replay.reason = record_pass(runner, leaves)
        else:
            runner.release = release
            with profiler.backward_events() if profiler and counted else contextlib.nullcontext():
                env, f_ms, b_ms = runner.run_once(leaves)
            if replay is not None:
                replay.runs += 1
        if not counted:
            continue
        forward_ms.append(f_ms)
        backward_ms.append(b_ms)
        if profiler:
            profiler.add_forward(runner.forward_profile)
        if on_repeat is not None:
            on_repeat(i + 1 - warmup)
    spec = graph.spec
    grads = {} if replayed is not None else \
        {name: leaves[name].grad for name in spec.inputs if name in leaves and leaves[name].requires_grad}
    if replayed is not None:
        grads.update(replayed)
        not_retained = list(replay.replay.not_retained)
    else:
        for name in graph.retained():
            grads[name] = env[name].grad
        released = runner.released
        not_retained = [owner for owner in spec.owners()
                        if owner not in grads and (released[owner] is not None if owner in released else
                                                   not isinstance(env.get(owner), tuple)
                                                   and getattr(env.get(owner), "requires_grad", False))]
    run = GraphRun(graph=graph, file=file, device=str(agrad.device(graph.options.device or spec.device)), values=env,
                   outputs={name: env[name] for name in output_names(graph)}, grads=grads,
                   not_retained=not_retained,
                   timings_ms={**timings, "forward": min(forward_ms), "backward": min(backward_ms)},
                   anomalies=runner.anomalies)
    if agrad.device(run.device).backend.lazy:
        _computed_together(run)
    if repeat > 1:
        import statistics     # only a repeated run has medians (its import is not free)

        run.repeat = {"forward": {"min": min(forward_ms), "median": statistics.median(forward_ms)},
                      "backward": {"min": min(backward_ms), "median": statistics.median(backward_ms)}}
    if profiler:
        run.profile = profiler.records()
    return run
