"""`agrad.graphs.load` and `validate`: a graph file read, checked and ready to run."""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from .build import CheckedGraph, Options, check_graph, validate_graph
from .diagnostics import Collector, TooManyProblems, did_you_mean
from .document import DEVICE_RE, read_document
from .plugins import load_plugin
from .preload import load_ops, preload_kernels
from .results import CheckResult, Diagnostic, GraphFileError, InspectResult, SourceLocation
from .replay import ReplayCache
from .runner import GraphRun, _cyclic_gc_paused, run_graph
from .spec import DTYPE_NAMES
from .yaml_loader import NotUtf8, decode_source, load_yaml


class Graph:
    """A checked graph. Every method builds afresh, so a Graph can run many times."""

    def __init__(self, checked: CheckedGraph, file: str, timings_ms: dict[str, float]):
        self._checked = checked
        self.file = file
        self.timings_ms = timings_ms
        self._replay = ReplayCache()      # the recorded pass of a plain run, once there is one

    @property
    def name(self) -> str:
        return self._checked.spec.name

    @property
    def spec(self):
        return self._checked.spec

    def run(self, *, inputs: dict | None = None, profile: bool = False, anomaly: bool = False, repeat: int = 1,
            on_repeat=None, replay: bool = True, keep_values: bool = True) -> GraphRun:
        """Forward and every backward pass; raises GraphRuntimeError (exit 3) when a kernel fails.

        The second pass of this graph (the second of `repeat`, or of a second `run`) is
        recorded and later passes replay its kernel calls (graphs/replay.py), with the
        engine's results; `replay=False` runs every pass through the engine. `keep_values=False`
        lets each value go once nothing reads it (the run's `values` keep the leaves, outputs,
        expectations, retained tensors and what backward passes read), as `agrad run` does.

        `inputs={name: array or Tensor}` replaces those leaves' values for this run (in
        the input's dtype and device); a new shape re-checks the graph (GraphFileError).
        """
        self._checked.release_meta()    # built again if `inspect` or `check` asks for it
        if inputs:
            from .training import run_with_inputs
            return run_with_inputs(self, inputs, profile=profile, anomaly=anomaly, repeat=repeat,
                                   on_repeat=on_repeat)
        return run_graph(self._checked, self.file, timings=self.timings_ms, profile=profile, anomaly=anomaly,
                         repeat=repeat, on_repeat=on_repeat, replay=self._replay if replay else None,
                         keep_values=keep_values)

    def train(self, **options):
        """Train with agrad.optim, as `agrad train` does: the file's `train:` section, with
        `options` overriding it (or, without a section, `loss=` and `steps=` given); see
        `agrad.graphs.training.train` for `params`, `optimizer`, `schedule`, `data`,
        `batch_size`, `shuffle`, `clip_grad_norm`, `eval_data`, `eval_every`, `metrics`.
        The second step of each batch shape is recorded and later steps replay it
        (graphs/train_replay.py), with the engine's results; `replay=False` runs every
        step through the engine."""
        from .training import train
        return train(self, **options)

    def inspect(self, *, edges: bool = True, streamed: bool = False) -> InspectResult:
        """`edges=False`: the result without its forward edges (`edges`: only DOT draws them).
        `streamed`: its nodes, backward Nodes and order are Rows, made as they are read, in that
        order (the whole graph is never held as rows: `agrad inspect --format json`)."""
        from .inspection import inspect_graph

        with _cyclic_gc_paused():       # the Meta graph holds no cycles (runner._cyclic_gc_paused)
            return inspect_graph(self._checked, self.file, edges=edges, streamed=streamed)

    def check(self, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, fast: bool = False,
              second_order: bool = False, replay: bool = True) -> CheckResult:
        """Analytic gradients against float64 central differences; `second_order`: the gradients'
        own derivatives too (PyTorch's gradgradcheck). The finite differences' passes after
        the first replay it (graphs/check_replay.py), with the engine's values; `replay=False`
        runs every pass through the engine."""
        from .gradcheck import check_gradients

        return check_gradients(self._checked, self.file, eps=eps, atol=atol, rtol=rtol, fast=fast,
                               second_order=second_order, replay=replay)


def _check(path, options: Options, plugins, source: str | None = None, validating: bool = False
           ) -> tuple[CheckedGraph | None, list[Diagnostic], dict[str, float]]:
    """(the checked graph, every problem, timings); `validating`: only the problems are wanted
    (no checked graph comes back)."""
    file = str(path)
    bad_options = _check_options(options)
    if bad_options:
        return None, bad_options, {}
    for plugin in plugins:
        try:
            load_plugin(plugin)
        except GraphFileError as exc:
            return None, exc.diagnostics, {}
    collector = Collector(file)
    load_engine()
    t0 = time.perf_counter()
    try:
        if source is None:
            mode = os.stat(path).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                # /dev/zero or /dev/urandom would be read until memory runs out; a pipe (`<(...)`) is
                # still read, as its writer ends it
                raise OSError(0, "a device, not a graph file")
            source = decode_source(Path(path).read_bytes())
    except NotUtf8 as exc:
        return None, [Diagnostic("AG031", exc.message, SourceLocation(file, exc.pos.line, exc.pos.col))], {}
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, [Diagnostic("AG031", f"cannot read {file}: {reason}", None)], {}
    checked = None
    timings = {}
    # NOTE: a check makes millions of acyclic objects (values, positions, Meta tensors) that
    # the cyclic collector would only re-traverse: half the time of `validate` on a large file.
    try:
        with _cyclic_gc_paused():
            doc = load_yaml(source, collector)
            if doc is not None:
                spec = read_document(doc, file, Path(path).stem, collector)
                timings["parse"] = (time.perf_counter() - t0) * 1e3
                load_ops(spec.op_names())      # outside the clocks (preload.py)
                t1 = time.perf_counter()
                training = _mentions_training(doc)
                if validating and not training:
                    validate_graph(spec, collector, Path(path).parent, options)
                else:
                    checked = check_graph(spec, collector, Path(path).parent, options)
                if collector.ok and training:
                    from .train_section import check_train_section   # the optimizers, data sources

                    check_train_section(checked, collector)
                timings["build"] = (time.perf_counter() - t1) * 1e3
    except TooManyProblems:
        checked = None
    return checked, collector.sorted(), timings


def _mentions_training(doc) -> bool:
    """Whether the file has a `train:` section or `expect: {train: ...}` to check."""
    data = doc.data
    if not isinstance(data, dict):
        return False
    expect = data.get("expect")
    return "train" in data or (isinstance(expect, dict) and "train" in expect)


def load_engine() -> None:
    """Import the op library before the clocks start: the one-off cost of loading it
    (a few hundred ms cold) is not the time it takes to parse or build a graph."""
    import agrad

    agrad.Tensor  # noqa: B018 - the first public name loads the whole engine (agrad/__init__.py)


def _check_options(options: Options) -> list[Diagnostic]:
    problems = []
    if options.dtype is not None and options.dtype not in DTYPE_NAMES:
        problems.append(Diagnostic("AG008", f"--dtype {options.dtype}: expected one of {', '.join(DTYPE_NAMES)}",
                                   None, did_you_mean(options.dtype, DTYPE_NAMES)))
    if options.device is not None and not DEVICE_RE.match(options.device):
        problems.append(Diagnostic("AG009", f"--device {options.device}: expected cpu, cuda, cuda:N or dask", None))
    return problems


def validate(path, *, device: str | None = None, dtype: str | None = None, seed: int | None = None,
             inputs: dict[str, str] | None = None, plugins=(), source: str | None = None,
             sandbox: bool = False) -> list[Diagnostic]:
    """Every problem in the file (up to 20), found without running any kernel; `source` as for `load`;
    `sandbox`: data files outside the graph's folder are refused."""
    _, diagnostics, _ = _check(path, Options(device, dtype, seed, dict(inputs or {}), sandbox), plugins, source,
                               validating=True)
    return diagnostics


def load(path, *, device: str | None = None, dtype: str | None = None, seed: int | None = None,
         inputs: dict[str, str] | None = None, plugins=(), source: str | None = None,
         sandbox: bool = False) -> Graph:
    """The checked graph; raises GraphFileError (exit 2) listing every problem.

    With `source`, that text is the graph and `path` only names it in messages
    (`agrad run -` passes what it read from stdin as `<stdin>`); relative input
    files are then found from the current folder.
    """
    checked, diagnostics, timings = _check(path, Options(device, dtype, seed, dict(inputs or {}), sandbox), plugins,
                                           source)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors or checked is None:
        raise GraphFileError(errors or diagnostics)
    # outside every clock: the first forward pass is the graph's time, not SciPy's import or codegen
    preload_kernels(checked.spec.op_names(), [plan.device for plan in checked.leaves.values()])
    return Graph(checked, str(path), timings)
