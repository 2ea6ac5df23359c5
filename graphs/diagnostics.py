"""The error codes of graph files and the collector that gathers them.

Codes are stable: a code, once published, keeps its meaning (the README lists
them from `CODES`). New kinds of problems get new codes at the end.
"""
from __future__ import annotations

from typing import Iterable

from .results import Diagnostic, SourceLocation

MAX_PROBLEMS = 20

CODES: dict[str, str] = {
    "AG001": "YAML syntax error",
    "AG002": "duplicate key in a mapping",
    "AG003": "YAML tag not allowed (files are loaded safely: no tag builds Python objects)",
    "AG004": "unknown key",
    "AG005": "value of the wrong type",
    "AG006": "required key missing",
    "AG007": "unsupported format version (`agrad:` must be 1)",
    "AG008": "unknown dtype",
    "AG009": "bad device",
    "AG010": "bad name for an input or node",
    "AG011": "name assigned twice",
    "AG012": "bad input definition (literal, shape or init)",
    "AG013": "bad input file (.npy/.npz)",
    "AG014": "expression syntax error",
    "AG015": "unsupported expression (only names, literals, calls, + - * / ** @, unary -, subscripts)",
    "AG016": "unknown op",
    "AG017": "unknown keyword argument",
    "AG018": "wrong number of arguments",
    "AG019": "argument of the wrong kind for the op's schema",
    "AG020": "undefined name",
    "AG021": "cycle between nodes",
    "AG022": "bad use of a multi-output node",
    "AG023": "shape mismatch",
    "AG024": "dtype mismatch",
    "AG025": "op rejected its arguments",
    "AG026": "non-scalar root without grad_tensors",
    "AG027": "root reaches no leaf that requires grad",
    "AG028": "bad grad_tensors",
    "AG029": "bad backward inputs",
    "AG030": "bad expect entry",
    "AG031": "graph file cannot be read",
    "AG032": "plugin failed to load",
    "AG033": "bad --input override",
    "AG034": "retain_grad of a tensor that does not require grad",
    "AG035": "graph cannot be checked by finite differences (`check`)",
    # runtime failures (exit status 3; graphs/failures.py), located at the node that failed
    "AG040": "backward through a graph whose saved tensors were freed (pass retain_graph)",
    "AG041": "an op's kernel failed",
    "AG042": "a backward pass failed in a node's gradient",
    "AG043": "device unavailable",
    "AG044": "out of memory",
    "AG045": "a plugin op's kernel failed",
    "AG046": "an input tensor could not be made",
    "AG047": "the dask cluster failed under a job (`--workers`/`--cluster`: a worker died, no scheduler, no dask)",
    # training (`train:` section, `agrad train`, Graph.train / Graph.run(inputs=...))
    "AG060": "bad `train:` entry",
    "AG061": "unknown optimizer or schedule, or a bad hyper-parameter",
    "AG062": "train.loss is not a scalar node that reaches a parameter",
    "AG063": "train.params names no input that requires grad",
    "AG064": "data or new input values name no input of the graph",
    "AG065": "training data cannot be read or do not fit the graph",
    "AG066": "bad eval entry or metric",
    "AG067": "bad expect.train entry",
    "AG068": "loss became NaN or Inf during training",
    "AG069": "checkpoint cannot be read or does not match the graph",
    # more than one process (`--workers`, `--cluster`)
    "AG070": "graph cannot be trained data-parallel (batch_norm in training mode, a loss that is not a mean or sum "
             "over the batch)",
    "AG071": "op not supported on the graph's device (`--device dask`: an op dask.array cannot run lazily)",
}


class Record:
    """A small immutable-by-convention value: slotted fields, compared and hashed by value.
    A plain class rather than a frozen dataclass: a 100,000-node file makes millions of
    positions and references, and a frozen dataclass's __init__ costs three times as much.
    Subclasses list their `__slots__` and write a plain `__init__`."""
    __slots__ = ()

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other):
        return other.__class__ is self.__class__ and self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self.__slots__)})"


class Pos(Record):
    """A 1-based line and column inside the graph file."""
    __slots__ = ("line", "col")

    def __init__(self, line: int, col: int):
        self.line = line
        self.col = col


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """`'weight'` for a near miss, or None; quoted so the hint reads as a name."""
    if not isinstance(word, str):
        return None
    import difflib      # only a misspelt name needs it

    close = difflib.get_close_matches(word, [c for c in candidates if isinstance(c, str)], n=1, cutoff=0.6)
    return f"'{close[0]}'" if close else None


class TooManyProblems(Exception):
    """Raised by the collector once it holds MAX_PROBLEMS, to end the pass early."""


class Collector:
    """Keeps the problems of one file, in the order found, at most MAX_PROBLEMS."""

    def __init__(self, file: str):
        self.file = file
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[tuple] = set()

    def error(self, code: str, message: str, pos: Pos | None, hint: str | None = None,
              severity: str = "error") -> None:
        assert code in CODES, code
        location = SourceLocation(self.file, pos.line, pos.col) if pos else None
        key = (code, message, location)
        if key in self._seen:               # an alias in YAML can make one problem appear twice
            return
        self._seen.add(key)
        self.diagnostics.append(Diagnostic(code, message, location, hint, severity))
        if self.full:
            raise TooManyProblems()

    @property
    def full(self) -> bool:
        return len(self.errors) >= MAX_PROBLEMS

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def sorted(self) -> list[Diagnostic]:
        """File order: what an editor shows first is what the user reads first."""
        def key(d: Diagnostic):
            loc = d.location
            return (0, 0) if loc is None else (loc.line, loc.col)
        return sorted(self.diagnostics, key=key)
