"""The graph's Meta build redone for new input shapes (a batch, eval data, `inputs=`):
shared by the `train:` section's checks and the training loop.
"""
from __future__ import annotations

from dataclasses import replace

from .build import GraphChecker
from .diagnostics import Collector, did_you_mean
from .executor import run_nodes
from .results import Diagnostic


def unknown_inputs(checked, names, what: str, file: str) -> list[Diagnostic]:
    return [Diagnostic("AG064", f"{what} '{name}' names no input of the graph", None,
                       did_you_mean(name, checked.spec.inputs))
            for name in names if name not in checked.leaves]


class ShapeCheck:
    """The graph's Meta build, redone for the input shapes a run or a batch brings; one
    build per distinct set of shapes."""

    def __init__(self, checked, file: str):
        self.checked, self.file = checked, file
        self._seen: dict[tuple, list[Diagnostic]] = {}

    def problems(self, shapes: dict[str, tuple[int, ...]]) -> list[Diagnostic]:
        leaves = self.checked.leaves
        changed = {n: tuple(s) for n, s in shapes.items() if tuple(s) != tuple(leaves[n].shape)}
        key = tuple(sorted(changed.items()))
        if not changed:
            return []
        if key not in self._seen:
            self._seen[key] = self._check(changed)
        return self._seen[key]

    def _check(self, changed: dict[str, tuple[int, ...]]) -> list[Diagnostic]:
        checked = self.checked
        collector = Collector(self.file)
        checker = GraphChecker(checked.spec, collector, checked.base_dir, checked.options)
        plans = {n: (p if n not in changed else _with_shape(p, changed[n])) for n, p in checked.leaves.items()}
        missing: set[str] = set()
        checker.make_meta_leaves(plans, missing)
        run_nodes(checked.order, checker.meta, on_error=checker.report_failure, failed=missing)
        names = set(checked.spec.inputs) | {n.name for n in checked.spec.nodes}
        for pass_ in checked.spec.backward:
            checker.check_pass(pass_, names)
        given = ", ".join(f"{n}: {list(s)}" for n, s in changed.items())
        return [Diagnostic(d.code, f"{d.message} (with input shapes {given})", d.location, d.hint)
                for d in collector.sorted()]


def _with_shape(plan, shape):
    return replace(plan, shape=tuple(shape))
