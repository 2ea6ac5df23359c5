"""The graph file as checked data: what `document.py` reads out of the YAML.

Nothing here touches the engine; names are still names and dtypes still strings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable

from .diagnostics import Pos, Record
from .yaml_loader import Document

DTYPE_NAMES = ("float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")
INITS = ("zeros", "ones", "full", "arange", "eye", "normal", "uniform")


class TensorRef(Record):
    """A use of an input's or node's name, where it is written."""
    __slots__ = ("name", "pos")

    def __init__(self, name: str, pos: Pos):
        self.name = name
        self.pos = pos


# The keyword arguments (and their positions) of the many nodes that have none: one shared,
# read-only mapping rather than two empty dicts per op (a 1,000,000-node file has 3,000,000 ops).
NO_KEYWORDS = MappingProxyType({})


def tensor_refs(value):
    """Every TensorRef in an argument value (nested lists included), in order."""
    if isinstance(value, TensorRef):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensor_refs(v)


def refs_in(values) -> list[TensorRef]:
    """`tensor_refs` of several values as a list, without a generator per value (a large
    file asks for millions)."""
    found = []
    for v in values:
        if v.__class__ is TensorRef:
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found += refs_in(v)
    return found


@dataclass
class InputSpec:
    name: str
    pos: Pos                           # the input's key
    path: tuple                        # YAML path of its entry
    kind: str                          # "value" | "init" | "file"
    value: Any = None
    shape: tuple[int, ...] | None = None
    init: str | None = None
    params: dict[str, float] = field(default_factory=dict)   # fill / mean, std / low, high
    seed: int | None = None
    file: str | None = None
    key: str | None = None
    dtype: str | None = None           # None: the file's default (or the array's, for files)
    device: str | None = None
    requires_grad: bool = False
    valid: bool = True                 # False once its entry had a problem: no tensor is made for it


@dataclass(slots=True)
class NodeSpec:
    """One op application; a nested expression gives several (`h.1`, `h.2`, `h`)."""
    name: str
    owner: str                         # the YAML node it was written in
    op: str
    args: list[Any]                    # literals, TensorRefs, lists of them, Index
    kwargs: dict[str, Any]
    pos: Pos                           # where the op is written
    arg_pos: list[Pos]
    kwarg_pos: dict[str, Pos]
    path: tuple                        # YAML path of the owner's entry
    text: str | None = None            # the expression, when written as one

    @property
    def line(self) -> int:
        return self.pos.line


@dataclass
class BackwardSpec:
    roots: list[TensorRef]
    pos: Pos
    grad_tensors: list[Any] | None = None      # literal or TensorRef per root
    grad_pos: list[Pos] = field(default_factory=list)
    inputs: list[TensorRef] | None = None
    retain_graph: bool | None = None
    create_graph: bool = False


@dataclass
class Expectation:
    name: str
    value: Any                         # literal, or None for "no gradient"
    pos: Pos


@dataclass
class ExpectSpec:
    pos: Pos
    outputs: list[Expectation] = field(default_factory=list)
    grads: list[Expectation] = field(default_factory=list)
    atol: float | None = None
    rtol: float | None = None
    train: bool = False                # `expect.train`: checked only by a command that trains


class NodeColumns:
    """The `nodes:` block read in bulk, kept column-wise: per YAML node, in file order, the
    Shape of its expression (`expressions.Shape`, whose builder makes its NodeSpecs) or,
    for a node read call by call, the NodeSpecs read. The names and the texts are the
    block's (`NodesBlock.nodes`); NodeSpecs and their positions are made only when asked
    for (`make(i, name, text)`: node number `i`; `make(i, name, text, shape, names, shifts)`
    where its `expressions.shape_of` is known), so checking a file that needs none makes none."""
    __slots__ = ("block", "entries", "ops", "make")

    def __init__(self, block, make: Callable[..., list[NodeSpec]]):
        self.block = block
        self.entries: list = []
        self.ops: set[str] = set()      # every op named, for preloading without the NodeSpecs
        self.make = make

    def node_specs(self) -> list[NodeSpec]:
        made: list[NodeSpec] = []
        make = self.make
        for i, ((name, text), entry) in enumerate(zip(self.block.nodes.items(), self.entries)):
            made += entry if entry.__class__ is list else make(i, name, text)
        return made

    def last(self) -> NodeSpec | None:
        """The last NodeSpec, made alone."""
        last = len(self.entries) - 1
        for back, ((name, text), entry) in enumerate(zip(reversed(self.block.nodes.items()), reversed(self.entries))):
            made = entry if entry.__class__ is list else self.make(last - back, name, text)
            if made:
                return made[-1]
        return None


@dataclass
class GraphSpec:
    name: str
    file: str
    doc: Document
    dtype: str = "float32"
    device: str = "cpu"
    seed: int = 0
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    backward: list[BackwardSpec] = field(default_factory=list)
    retain_grad: list[TensorRef] = field(default_factory=list)
    outputs: list[TensorRef] | None = None
    expect: ExpectSpec | None = None
    description: str | None = None
    # nodes whose definition was already reported as wrong: using them is not a new error
    broken: set[str] = field(default_factory=set)
    # the nodes read in bulk, column-wise; `nodes` makes their NodeSpecs on first use
    columns: NodeColumns | None = None
    _nodes: list[NodeSpec] | None = field(default=None, repr=False)

    @property
    def nodes(self) -> list[NodeSpec]:
        """Every op application, in file order."""
        if self._nodes is None:
            self._nodes = self.columns.node_specs() if self.columns is not None else []
        return self._nodes

    def last_node(self) -> NodeSpec | None:
        if self._nodes is None and self.columns is not None:
            return self.columns.last()
        return self.nodes[-1] if self.nodes else None

    def owners(self) -> list[str]:
        """The YAML nodes that made NodeSpecs, in file order (the columns' names: no NodeSpec made)."""
        if self._nodes is None and self.columns is not None and all(self.columns.entries):
            return list(self.columns.block.nodes)
        return list(dict.fromkeys(n.owner for n in self.nodes))

    def op_names(self) -> set[str]:
        """Every op the nodes name (the columns' record of them: no pass over a million NodeSpecs)."""
        return self.columns.ops if self.columns is not None else {n.op for n in self.nodes}

    def node(self, name: str) -> NodeSpec | None:
        return next((n for n in self.nodes if n.name == name), None)
