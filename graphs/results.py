"""Plain result objects handed from `agrad.graphs` to the command line.

The graphs layer computes; the CLI renders these as tables, JSON or GitHub
workflow commands. Nothing here imports rich or click, and nothing here holds a
live engine object: tensors are already converted to `TensorSummary`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceLocation:
    file: str            # as the user wrote it on the command line
    line: int            # 1-based
    col: int             # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a graph file: `FILE:LINE:COL: error[AGnnn]: MESSAGE`."""
    code: str                          # "AG001" ... stable per kind of problem (README lists them)
    message: str
    location: SourceLocation | None    # None only when the file itself cannot be read
    hint: str | None = None            # "did you mean 'weight'?"
    severity: str = "error"            # "error" | "warning"

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.severity}[{self.code}]: {self.message}"
        return f"{text} (did you mean {self.hint}?)" if self.hint else text


class GraphFileError(Exception):
    """Raised by `agrad.graphs.load` when a file has problems; exit status 2."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class GraphRuntimeError(Exception):
    """A kernel or the engine failed while running a valid graph; exit status 3.

    `location` points at the YAML node whose forward op or backward Node failed; `code`
    is the kind of failure (AG040-AG046, graphs/failures.py), so it reads as every other
    problem does: `diagnostic`, `FILE:LINE:COL: error[AGnnn]: MESSAGE`.
    """

    def __init__(self, message: str, location: SourceLocation | None = None, node: str | None = None,
                 code: str = "AG041"):
        self.location = location
        self.node = node
        self.code = code
        super().__init__(message)

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, str(self), self.location)


@dataclass
class TensorSummary:
    """A tensor as the CLI shows it. `value` is the nested list (None over 100,000 elements)."""
    shape: list[int]
    dtype: str
    device: str
    value: Any = None
    summary: dict[str, float] | None = None   # min, max, mean, norm: float tensors only
    numel: int = 0


@dataclass
class ExpectFailure:
    what: str                          # "outputs.d" or "grads.a"
    message: str                       # one line: "expected 9.0 at [1, 1], got 8.0 (max abs err 1; ...)"
    location: SourceLocation | None = None
    expected: Any = None               # the whole expected and actual values (nested lists), for JSON and
    actual: Any = None                 # JUnit bodies; None when the failure is not a value mismatch


@dataclass
class ExpectResult:
    passed: bool
    failures: list[ExpectFailure] = field(default_factory=list)
    checked: bool = True               # False when nothing was compared (no `expect:`, or only `train:`)
    unchecked: list[str] = field(default_factory=list)   # sections this command does not check: ["train"]

    @property
    def verdict(self) -> bool:
        """What a report may call "passed": something was checked, nothing failed, nothing was left out."""
        return self.passed and self.checked and not self.unchecked


@dataclass
class ProfileRecord:
    """One row of `--profile`: a YAML node's forward op or its backward Node."""
    node: str                          # YAML node name ("d", "d.1") or backward node name
    op: str                            # "mul" or "MulBackward0"
    phase: str                         # "forward" | "backward"
    calls: int
    self_ms: float
    line: int | None = None
    start_ms: list[float] = field(default_factory=list)   # for --trace: start offsets of each call
    duration_ms: list[float] = field(default_factory=list)


@dataclass
class AnomalyReport:
    phase: str                         # "forward" | "backward"
    node: str                          # YAML node name or backward Node name
    message: str                       # "MulBackward0 returned nan in its 0th output"
    location: SourceLocation | None = None


@dataclass
class RunResult:
    graph: str
    file: str
    device: str
    outputs: dict[str, TensorSummary]
    grads: dict[str, TensorSummary | None]     # None: nothing reached it
    not_retained: list[str]                    # non-leaf nodes a user might look for (shown as "not retained")
    timings_ms: dict[str, float]               # parse, build, forward, backward
    expect: ExpectResult
    repeat: dict[str, dict[str, float]] | None = None   # phase -> {"min", "median"} with --repeat
    profile: list[ProfileRecord] | None = None
    anomalies: list[AnomalyReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Rows:
    """A list made as it is read, once: the rows of a result too large to hold at once (the
    inspect of a 1,000,000-node graph would otherwise be millions of objects). `count`: its length,
    or None where it is not known before it is read."""
    __slots__ = ("count", "items")

    def __init__(self, count: int | None, items):
        self.count = count
        self.items = items

    def __iter__(self):
        return iter(self.items)


@dataclass(slots=True)       # one per node: a 1,000,000-node graph holds millions
class InspectNode:
    name: str
    op: str
    args: list[str]                   # argument names / literals as written
    shape: list[int]
    dtype: str
    device: str
    kernel: str                       # e.g. "Autograd -> CPU" (the dispatch path the real run takes)
    line: int | None
    view_of: str | None = None        # a view (shares memory with) this node or leaf, as PyTorch's `_base`


@dataclass(slots=True)
class InspectBackwardNode:
    id: int
    name: str                         # "MulBackward0", "AccumulateGrad", "GraphRoot"
    node: str | None                  # the YAML node (or leaf) it belongs to
    next_edges: list[tuple[int, int] | None]   # (id, input_nr) or None for an invalid edge
    sequence_nr: int
    topological_nr: int
    dependencies: int
    line: int | None = None
    # the tensors the Node saved for its backward: name, shape, dtype, version (when saved) and
    # current_version (a backward fails when they differ), is_output (saved its own output)
    saved: list[dict] = field(default_factory=list)


@dataclass
class InspectLeaf:
    name: str
    shape: list[int]
    dtype: str
    requires_grad: bool


@dataclass
class InspectResult:
    """Lists; with `Graph.inspect(streamed=True)`, `nodes`, `backward` and `order` are Rows, to be
    read in that order (the Meta build runs as `nodes` is read)."""
    graph: str
    file: str
    nodes: list[InspectNode] | Rows
    backward: list[InspectBackwardNode] | Rows
    order: list[int] | Rows           # backward ids, in the engine's ready-queue order
    edges: list[tuple[str, str, list[int]]] = field(default_factory=list)  # forward (src, dst, shape) for DOT
    leaves: list[InspectLeaf] = field(default_factory=list)               # the inputs, in order
    outputs: list[str] = field(default_factory=list)                      # what `run` prints as outputs
    selected: dict[str, int] = field(default_factory=dict)   # node -> the output it selects of a multi-output node


@dataclass
class LeafCheck:
    name: str
    max_abs_err: float
    max_rel_err: float
    passed: bool
    worst_index: list[int] | None = None   # the input element where analytic and numeric differ most
    analytic: float | None = None          # the two values there (--fast: the directional derivatives)
    numeric: float | None = None
    output_index: int | None = None        # which element of the outputs (flattened, in order) it was
    location: SourceLocation | None = None  # the leaf's line in the file
    nondeterminism: float | None = None     # two backward passes' gradients differ by up to this: a failure


@dataclass
class CheckResult:
    graph: str
    file: str
    passed: bool
    leaves: dict[str, LeafCheck]
    warnings: list[str] = field(default_factory=list)
    order: int = 1                         # 2: `--second-order`, derivatives of the gradients
    skipped_outputs: list[str] = field(default_factory=list)   # outputs not compared: they do not require grad


@dataclass
class TestOutcome:
    file: str
    graph: str
    passed: bool
    failures: list[ExpectFailure] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)   # the file did not load
    error: str | None = None                                     # a runtime failure
    error_diagnostic: Diagnostic | None = None                   # the same, with its code and location
    duration_ms: float = 0.0
    checked: bool = True                                         # False: the graph has no `expect:`
    unchecked: list[str] = field(default_factory=list)           # ["train"] under --no-train
