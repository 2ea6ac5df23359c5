"""Checks a whole graph before any kernel runs: leaves, op bindings, order, and a
build on the Meta device (shapes, dtypes and the backward graph, no data), then
the backward passes, retained tensors and expectations against that build.
"""
from __future__ import annotations

import contextlib
import math
from collections import ChainMap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import agrad
from agrad import watchers
from agrad.backends import Backend
from agrad.errors import DimensionError, DtypeError, ShapeError

from .binding import BoundNode, bind
from .column_check import check_columns
from .diagnostics import Collector, Pos, did_you_mean
from .document import literal_shape
from .executor import NodeFailure, SharedResults, nodes_made, run_nodes
from .inputs import InputError, LeafPlan, plan_leaf
from .ordering import run_order
from .spec import BackwardSpec, GraphSpec, TensorRef
from .values import misfit_in


@dataclass
class Options:
    """The command line's say over a file: `--device`, `--dtype`, `--seed`, `--input`, `--sandbox`."""
    device: str | None = None
    dtype: str | None = None
    seed: int | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    sandbox: bool = False           # refuse data files outside the graph's folder (inputs.inside_folder)


@dataclass(frozen=True)
class LargestResult:
    node: str
    op: str
    numel: int
    dtype: str
    nbytes: int


@dataclass
class CheckedGraph:
    spec: GraphSpec
    leaves: dict[str, LeafPlan]
    order: Sequence[BoundNode]          # a list, or a ColumnOrder: made as it is read (column_order.py)
    _meta: dict[str, Any] | None        # the Meta build; None once released (`meta` builds it again)
    base_dir: Path
    options: Options
    largest: LargestResult | None = None    # the node whose result would be largest (Runner refuses it
                                            # before any kernel when it exceeds the machine's memory)

    @property
    def meta(self) -> dict[str, Any]:
        """name -> Meta tensor (or tuple for multi-output nodes), with the backward graph on Meta."""
        if self._meta is None:
            meta, made = self.meta_build()
            for _ in made:
                pass
            self._meta = meta
        return self._meta

    def meta_build(self, release=None, labels: dict | None = None):
        """The Meta build a node at a time, kept nowhere: (env, executor.nodes_made's iterator over
        it). `release` (runner.release_plan): each value leaves `env` once nothing later reads it
        (`inspect` streams a large graph's rows so, holding only its backward graph). `labels`: the
        Nodes' labels go there (executor.label), not into their metadata."""
        checker = GraphChecker(self.spec, Collector(self.spec.file), self.base_dir, self.options)
        missing: set[str] = set()
        checker.make_meta_leaves(self.leaves, missing)
        return checker.meta, nodes_made(self.order, checker.meta, on_error=checker.report_failure,
                                        failed=missing, release=release, labels=labels)

    def held_by_leaves(self) -> tuple[int, str | None]:
        """(bytes, the largest leaf): what a pass holds from its first node to its end, at the
        least: every leaf (all are made before any node runs, and the run keeps them), and, when
        the graph has a backward pass, a gradient as large as each leaf that requires one. A run
        refuses a graph that would not fit even so (Runner.refuse_beyond_memory)."""
        held = grads = biggest = 0
        largest = None
        for name, plan in self.leaves.items():
            size = math.prod(plan.shape) * agrad.dtypes.from_name(plan.dtype).itemsize
            held += size
            grads += size if plan.requires_grad else 0
            if largest is None or size > biggest:
                largest, biggest = name, size
        return held + (grads if self.spec.backward else 0), largest

    def release_meta(self) -> None:
        """Let the Meta build go: a run does not need it, and at 1,000,000 nodes it holds gigabytes."""
        self._meta = None

    @property
    def seed(self) -> int:
        return self.options.seed if self.options.seed is not None else self.spec.seed

    def retained(self) -> list[str]:
        return list(dict.fromkeys(r.name for r in self.spec.retain_grad))


# Losses whose target is class indices (PyTorch: int64), not probabilities.
CLASS_INDEX_LOSSES = frozenset({"cross_entropy", "nll_loss"})


def classify(exc: BaseException) -> str:
    """The error code of an op's complaint, by the engine's error type: shape, dtype, or
    anything else it rejected."""
    if isinstance(exc, (ShapeError, DimensionError)):
        return "AG023"
    if isinstance(exc, DtypeError):
        return "AG024"
    return "AG025"


def _message(exc: BaseException) -> str:
    # NOTE: only a KeyError's str() quotes its message; others may end in a quote of their own
    text = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc).strip()
    return text or type(exc).__name__


# AG071: the graph calls an op its device's backend declares it cannot run (Backend.refusal)
UNSUPPORTED_ON_DEVICE = "AG071"


class DeviceRefusals:
    """Watches the Meta build (an op observer) for the ops the graph's device cannot run,
    including those a composite op or an index calls: each node that calls one, once."""

    def __init__(self, device: str, backend):
        self.device, self.backend = device, backend
        self.found: list[tuple[Any, str, str]] = []
        self._seen: list[tuple[str, str]] = []       # refused ops called since the last node was made

    @classmethod
    def of(cls, leaves: dict[str, LeafPlan]) -> "DeviceRefusals | None":
        for plan in leaves.values():
            dev = agrad.device(plan.device)
            if type(dev.backend).refusal is not Backend.refusal:
                return cls(dev.type, dev.backend)
        return None

    def __enter__(self):
        watchers.op_observers.append(self)
        return self

    def __exit__(self, *exc):
        watchers.op_observers.remove(self)

    def op_start(self, op, args) -> None:
        why = self.backend.refusal(op.name)
        if why is not None:
            self._seen.append((op.name, why))

    def op_end(self, op, result) -> None:
        pass

    def node_done(self, bound, value, seconds) -> None:
        if self._seen:
            self.found.append((bound, *self._seen[0]))
            self._seen.clear()


class GraphChecker:
    def __init__(self, spec: GraphSpec, collector: Collector, base_dir: Path, options: Options):
        self.spec = spec
        self.c = collector
        self.base_dir = base_dir
        self.options = options
        self.meta: dict[str, Any] = {}

    def check(self) -> CheckedGraph:
        """Every problem reported, and what a run needs. A large file of nodes kept column-wise is
        checked shape by shape where that check applies, each node bound as the first of its
        signature was (column_check): no Meta build is kept, as none is for a large file."""
        leaves = self.plan_leaves()
        if self.columns_apply(leaves) and (checked := check_columns(self, leaves, keep=True)) is not None:
            order, firsts = checked         # firsts: the first node of each signature, whose are all Meta values
            self.check_backward_and_outputs(self.node_names())
            return CheckedGraph(self.spec, leaves, order, None, self.base_dir, self.options,
                                self.largest_result(firsts))
        self.meta = {}
        return self.build(leaves)

    def validate(self) -> None:
        """Report every problem; what `check` finds, without keeping what it builds."""
        leaves = self.plan_leaves()
        if self.columns_apply(leaves) and check_columns(self, leaves) is not None:
            self.check_backward_and_outputs(self.node_names())
            return
        self.meta = {}
        self.build(leaves)

    def columns_apply(self, leaves: dict[str, LeafPlan]) -> bool:
        """Whether the nodes may be checked shape by shape (column_check): kept column-wise, every
        leaf made, no device refusing ops, and nothing after the nodes naming an op inside one."""
        spec, columns = self.spec, self.spec.columns
        return (columns is not None and len(leaves) == len(spec.inputs) and DeviceRefusals.of(leaves) is None
                and all(n in spec.inputs or n in columns.block.nodes for n in self.named_after_nodes()))

    def node_names(self) -> ChainMap:
        """Every name an input or a node of the columns defines (what names a node, not an op
        inside one, is all the passes and outputs use: `columns_apply`)."""
        return ChainMap(self.spec.inputs, self.spec.columns.block.nodes)

    def build(self, leaves: dict[str, LeafPlan]) -> CheckedGraph:
        bound = bind(self.spec, self.c)
        ordered = run_order(self.spec, self.c)
        order = [bound[n.name] for n in ordered if n.name in bound]
        missing = {n.name for n in self.spec.nodes if n.name not in bound}
        missing |= {name for name in self.spec.inputs if name not in leaves}
        self.make_meta_leaves(leaves, missing)
        shared = SharedResults(self.meta) if SharedResults.applies_to(order) else None
        refusals = DeviceRefusals.of(leaves)
        with refusals or contextlib.nullcontext():
            run_nodes(order, self.meta, on_error=self.report_failure, failed=missing, shared=shared,
                      on_node=refusals.node_done if refusals else None)
        if refusals:
            for bound, op_name, why in refusals.found:
                what = op_name if op_name == bound.spec.op else f"{op_name} (called by {bound.spec.op})"
                self.c.error(UNSUPPORTED_ON_DEVICE, f"'{bound.name}': {what} is not supported on device "
                             f"{refusals.device}: {why}", bound.spec.pos)
        largest = self.largest_result(order)
        self.check_backward_and_outputs(set(self.spec.inputs) | {n.name for n in self.spec.nodes})
        # shared results stand for each node's value, but are no node-by-node Meta build
        return CheckedGraph(self.spec, leaves, order, self.meta if shared is None else None, self.base_dir,
                            self.options, largest)

    def check_backward_and_outputs(self, names) -> None:
        """The backward passes, retained tensors, outputs and expectations against the Meta build;
        `names`: every name a node or an input defines."""
        for pass_ in self.spec.backward:
            self.check_pass(pass_, names)
        self.check_retain_grad(names)
        self.check_outputs_and_expect(names)

    def named_after_nodes(self) -> list[str]:
        """Every name the backward passes, retained tensors, outputs and expectations use."""
        spec = self.spec
        refs = [r for p in spec.backward for r in (*p.roots, *(p.inputs or ()))]
        refs += [g for p in spec.backward for g in p.grad_tensors or () if isinstance(g, TensorRef)]
        names = [r.name for r in refs + spec.retain_grad + (spec.outputs or [])]
        if spec.expect is not None:
            names += [e.name for e in spec.expect.outputs + spec.expect.grads]
        return names

    # ---- leaves ------------------------------------------------------------------

    def plan_leaves(self) -> dict[str, LeafPlan]:
        spec, opts = self.spec, self.options
        for name in opts.inputs:
            if name not in spec.inputs:
                self.c.error("AG033", f"--input {name}=...: the graph has no input '{name}'", None,
                             did_you_mean(name, spec.inputs))
        leaves = {}
        for name, input_spec in spec.inputs.items():
            if not input_spec.valid:
                continue
            override = opts.inputs.get(name)
            try:
                leaves[name] = plan_leaf(
                    input_spec, base_dir=self.base_dir, default_dtype=opts.dtype or spec.dtype,
                    default_device=opts.device or spec.device,
                    override=Path(override) if override is not None else None,
                    doc=spec.doc, sandbox=opts.sandbox)
            except InputError as exc:
                self.c.error(exc.code, exc.message, exc.pos)
        return leaves

    def make_meta_leaves(self, leaves: dict[str, LeafPlan], missing: set[str]) -> None:
        for name, leaf in leaves.items():
            try:
                t = agrad.empty(leaf.shape, dtype=agrad.dtypes.from_name(leaf.dtype), device="meta")
                if leaf.requires_grad:
                    t.requires_grad_(True)
            except (RuntimeError, ValueError, TypeError) as exc:
                self.c.error("AG012", f"input '{name}': {_message(exc)}", leaf.spec.pos)
                missing.add(name)
                continue
            self.meta[name] = t

    def report_failure(self, failure: NodeFailure) -> None:
        node = failure.bound.spec
        if failure.bound.selects_output and isinstance(failure.error, IndexError):
            source, index = failure.bound.args
            count = len(self.meta.get(source.name, ()))
            self.c.error("AG022", f"'{source.name}' has {count} output(s); index {index.items[0]} is out of range",
                         node.pos)
            return
        # an op inside a node's expression has an internal name (`loss.2`); the message names the node
        what = f"{node.name} = {node.op}(...)" if node.name == node.owner else f"{node.op}(...) in '{node.owner}'"
        message = f"{what}: {_message(failure.error)}"
        if (label := self.float_class_labels(failure)) is not None:
            message += f"; class labels are integers: give input '{label}' `dtype: int64`"
        self.c.error(classify(failure.error), message, node.pos)

    def float_class_labels(self, failure: NodeFailure) -> str | None:
        """The input holding a classification loss's target, when it is floats (PyTorch wants int64
        class indices; YAML's `[0, 1, 2]` becomes the graph's default dtype, float32)."""
        node = failure.bound.spec
        if node.op not in CLASS_INDEX_LOSSES or not isinstance(failure.error, DtypeError) or len(node.args) < 2:
            return None
        target = node.args[1]
        if not isinstance(target, TensorRef) or target.name not in self.spec.inputs:
            return None
        meta = self.meta.get(target.name)
        return target.name if meta is not None and getattr(meta.dtype, "is_floating_point", False) else None

    def largest_result(self, order: list[BoundNode]) -> LargestResult | None:
        """The node whose result, materialized, would be largest (a view counts in full: the
        ops that read it visit every element). A run refuses it when it exceeds the
        machine's memory (Runner.make_leaves); checking and `inspect` never allocate."""
        largest: LargestResult | None = None
        seen: set[int] = set()
        for bound in order:
            value = self.meta.get(bound.name)
            for t in value if isinstance(value, tuple) else (value,):
                if id(t) in seen or t is None or not hasattr(t, "numel"):
                    continue
                seen.add(id(t))
                size = t.numel() * t.element_size()
                if largest is None or size > largest.nbytes:
                    largest = LargestResult(bound.name, bound.spec.op, t.numel(), t.dtype.name, size)
        return largest

    # ---- backward passes ----------------------------------------------------------

    def tensor(self, ref: TensorRef, names: set[str], what: str):
        """The Meta tensor `ref` names, or None (after reporting) when it has none."""
        if ref.name not in names:
            if ref.name not in self.spec.broken:
                self.c.error("AG020", f"undefined name '{ref.name}' in {what}", ref.pos,
                             did_you_mean(ref.name, names))
            return None
        value = self.meta.get(ref.name)
        if isinstance(value, tuple):
            self.c.error("AG022", f"'{ref.name}' has several outputs; name one, e.g. {ref.name}[0] "
                         "(make it a node)", ref.pos)
            return None
        return value          # None: its node already has an error

    def check_pass(self, pass_: BackwardSpec, names: set[str]) -> None:
        roots = [self.tensor(r, names, "backward") for r in pass_.roots]
        for i, (ref, root) in enumerate(zip(pass_.roots, roots)):
            if root is None:
                continue
            if not root.requires_grad:
                # PyTorch's own words for a root with no path to a leaf that requires grad.
                self.c.error("AG027", f"element {i} of tensors does not require grad and does not have a grad_fn "
                             f"('{ref.name}' reaches no input with requires_grad: true)", ref.pos)
            elif pass_.grad_tensors is None and root.numel() != 1:
                self.c.error("AG026", f"grad can be implicitly created only for scalar outputs ('{ref.name}' has "
                             f"shape {list(root.shape)}; give `grad_tensors`)", ref.pos)
        if pass_.grad_tensors is not None:
            for i, (root, grad, pos) in enumerate(zip(roots, pass_.grad_tensors, pass_.grad_pos)):
                self.check_grad_tensor(i, root, grad, pos, names)
        for ref in pass_.inputs or ():
            t = self.tensor(ref, names, "backward inputs")
            if t is not None and not t.requires_grad:
                self.c.error("AG029", f"One of the differentiated Tensors does not require grad ('{ref.name}')",
                             ref.pos)

    def check_grad_tensor(self, i: int, root, grad, pos: Pos, names: set[str]) -> None:
        if isinstance(grad, TensorRef):
            t = self.tensor(grad, names, "grad_tensors")
            shape = None if t is None else tuple(t.shape)
        else:
            shape = literal_shape(grad)
        if root is None or shape is None:
            return
        # A literal may be a scalar standing for a tensor of the root's shape only if the root is scalar.
        if tuple(shape) != tuple(root.shape):
            self.c.error("AG028", f"Mismatch in shape: grad_output[{i}] has a shape of {list(shape)} and "
                         f"output[{i}] has a shape of {list(root.shape)}", pos)
        elif not isinstance(grad, TensorRef) and (
                problem := misfit_in(grad, root.dtype.name, f"grad_tensors[{i}]:")) is not None:
            self.c.error("AG028", problem, pos)

    def check_retain_grad(self, names: set[str]) -> None:
        for ref in self.spec.retain_grad:
            t = self.tensor(ref, names, "retain_grad")
            if t is not None and not t.requires_grad:
                self.c.error("AG034", f"can't retain_grad on Tensor that has requires_grad=False ('{ref.name}')",
                             ref.pos)

    def check_outputs_and_expect(self, names: set[str]) -> None:
        for ref in self.spec.outputs or ():
            self.tensor(ref, names, "outputs")
        last = self.spec.last_node() if not self.spec.outputs and not self.spec.backward else None
        if last is not None:                    # the graph's output when nothing else is named
            if isinstance(self.meta.get(last.owner), tuple):
                self.c.error("AG022", f"'{last.owner}' has several outputs and, as the last node, would be the "
                             f"graph's output; list one under `outputs:` (a node such as {last.owner}[0])", last.pos)
        expect = self.spec.expect
        if expect is None:
            return
        retained = {r.name for r in self.spec.retain_grad}
        for e in expect.outputs:
            t = self.tensor(TensorRef(e.name, e.pos), names, "expect.outputs")
            self.check_expected_shape(e, t)
        for e in expect.grads:
            t = self.tensor(TensorRef(e.name, e.pos), names, "expect.grads")
            if t is None:
                continue
            is_grad_leaf = e.name in self.spec.inputs and t.requires_grad
            if not (is_grad_leaf or e.name in retained):
                self.c.error("AG030", f"'{e.name}' has no .grad to check: only inputs with requires_grad and "
                             "tensors under `retain_grad` keep one", e.pos)
            elif e.value is not None:
                self.check_expected_shape(e, t)

    def check_expected_shape(self, e, t) -> None:
        if t is None:
            return
        shape = literal_shape(e.value)
        # A scalar expectation is broadcast (every element equals it); a list must match exactly.
        if shape not in ((), tuple(t.shape)):
            self.c.error("AG030", f"expected value of '{e.name}' has shape {list(shape)} but the tensor has "
                         f"shape {list(t.shape)}", e.pos)
        elif (problem := misfit_in(e.value, t.dtype.name, f"expected value of '{e.name}':")) is not None:
            self.c.error("AG030", problem, e.pos)


def check_graph(spec: GraphSpec, collector: Collector, base_dir: Path, options: Options) -> CheckedGraph:
    return GraphChecker(spec, collector, base_dir, options).check()


def validate_graph(spec: GraphSpec, collector: Collector, base_dir: Path, options: Options) -> None:
    """`check_graph`'s diagnostics, for `validate`: nothing built is kept."""
    GraphChecker(spec, collector, base_dir, options).validate()
