"""`agrad import`: an ONNX model as a graph file and its weights.

The model is loaded and normalised (`loading`), then walked in topological order: values
known before any data are folded (`folding`), every other node becomes one line of YAML
from the import table (`import_table`), with the ONNX node's name and op type in a comment
on that line. Float initializers become inputs read from the weights file with
`requires_grad: true` (the running statistics of a batch norm do not require grad); graph
inputs become inputs with their shapes. Every node agrad cannot express is listed at once
(`ModelError`) and nothing is written; what is written was first checked by loading it, as
`agrad validate` would, from a folder beside the destination, then moved into place.
"""
from __future__ import annotations

import json
import keyword
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import folding, loading
from .import_table import COMPOSED, TABLE, TRAINING_OPS, Known, Multi, Outputs, Refuse, Same, Sequence, dtype_name, lit
# the sequence and training-domain ops add themselves to TABLE (they import the table: no cycle)
from . import import_sequences, import_training  # noqa: F401
from .loading import printable
from .problems import ModelError, require_onnx

CONTRIB_DOMAINS = ("com.microsoft", "com.microsoft.nchwc", "com.ms.internal.nhwc", "ai.onnx.ml",
                   "ai.onnx.training", "ai.onnx.preview.training")
LOSSES = ("sum", "mean", "cross_entropy", "mse")


class TranslationBug(RuntimeError):
    """The graph file the importer made does not load: a bug in agrad import, not in the model
    (unless the model's own shapes disagree: import_model asks first). `details`: why, per line;
    `codes`: the problems' codes."""

    def __init__(self, message: str, details: str, codes: frozenset = frozenset()):
        super().__init__(message)
        self.details = details
        self.codes = codes


# The code of a shape an op refuses on Meta (graphs.build.classify): where it is every problem, the
# sizes the model declares do not fit its ops (a 3x3 Conv over an input 0 wide), which ONNX's
# shape inference, strict or not, does not check.
SHAPE_REFUSED = "AG023"
# The code of a backward root that requires no grad: where a Gradient's outputs are every float output and
# constant in the inputs (the derivative of a linear function), which only building the graph tells.
ROOT_WITHOUT_GRAD = "AG027"


@dataclass
class ImportOptions:
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    weights: str = "npz"                     # npz | safetensors
    loss: str | None = None                  # sum | mean | cross_entropy:LABELS | mse:TARGET


@dataclass
class ImportResult:
    graph_path: Path
    weights_path: Path
    nodes: int                               # ONNX nodes translated (not folded)
    folded: int                              # ONNX nodes evaluated at import time
    parameters: int                          # inputs with requires_grad
    opset: int
    original_opset: int
    notes: list[str]
    names: dict[str, str]                    # agrad name -> ONNX name (the reverse map)


class _Value:
    __slots__ = ("kind", "expr", "array", "name", "broken", "grad")

    def __init__(self, kind: str, expr: str | None = None, array=None, name: str | None = None, broken=False,
                 grad: bool = False):
        self.kind = kind            # "tensor" | "const" | "param" | "sequence"
        self.expr = expr            # a tensor's expression (a name, or `name[i]`)
        self.array = array          # a const's or a param's value; a sequence's Sequence of value names
        self.name = name            # the ONNX name
        self.broken = broken        # made by a node that could not be translated
        self.grad = grad            # a gradient can flow to it from a float input or parameter


# Ops whose float outputs have no gradient whatever their inputs (a loss of them alone could not
# be differentiated): one-hot codes, indices, shapes, fills, draws.
NO_GRADIENT = frozenset({"Hardmax", "ArgMax", "ArgMin", "Shape", "Size", "ConstantOfShape", "EyeLike", "NonZero",
                         "OneHot", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"})


# The most iterations a Loop is unrolled to: each is a copy of its body's lines.
_MAX_UNROLLED = 4096

_IDENT = re.compile(r"[^0-9A-Za-z_]+")
_MAX_NAME = 200


class Names:
    """ONNX names as agrad identifiers: sanitised, unique, never an op's name, with the reverse map."""

    def __init__(self, reserved: set[str]):
        self.taken = set(reserved)
        self.reverse: dict[str, str] = {}

    def make(self, onnx_name: str, fallback: str, suffix: str = "") -> str:
        base = _IDENT.sub("_", onnx_name).strip("_")
        # a YAML key longer than 1024 characters does not parse (PyYAML's simple keys); the full
        # ONNX name stays in `reverse` and the line's comment
        base = (re.sub(r"_output_0$", "", base)[:_MAX_NAME].rstrip("_") or fallback) + suffix
        if base[0].isdigit():
            base = f"v{base}"
        if keyword.iskeyword(base) or base in ("True", "False", "None"):
            base = f"{base}_"
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        self.reverse[name] = onnx_name
        return name


def _op_names() -> set[str]:
    from agrad import dispatcher

    return {op.name.split("::")[-1] for op in dispatcher.all_ops()} | {"getitem"}


class Importer:
    """The walk over one model; also the `ctx` the import table's translators see."""

    def __init__(self, loaded: loading.LoadedModel, weights_file: str):
        self.loaded = loaded
        self.model = loaded.model
        self.graph = self.model.graph
        self.opset = loaded.opset
        self.file = loaded.path.name
        self.weights_file = weights_file
        self.names = Names(_op_names())
        self.values: dict[str, _Value] = {}
        self.inputs: list[tuple[str, dict, str]] = []        # (agrad name, entry, comment)
        self.nodes: list[tuple[str, str, str]] = []          # (agrad name, expression, comment)
        self.weights: dict[str, np.ndarray] = {}
        # (ONNX initializer, whether a gradient flows where it is used) -> agrad input. An initializer both
        # trained and read where no gradient flows (a BatchNormalization's statistics: torch's dynamo exporter
        # gives a bias of zeros and the running mean of zeros one initializer) is two inputs of one array, so
        # that its gradient is the trained parameter's, as in the model exported, and finite differences of
        # the graph agree with it.
        self.param_inputs: dict[tuple[str, bool], str] = {}
        self.param_keys: dict[str, str] = {}                 # ONNX initializer -> its key in the weights file
        self.const_inputs: dict[int, str] = {}               # id(array) -> agrad input
        self.users: dict[str, int] = {}
        self.problems: list[str] = []
        self.folded = 0
        self.current = None                                  # the node being translated
        self.batch_dynamic = False
        self.default_dtype = np.dtype(np.float32)
        self.differentiates = False                          # a Gradient node was translated

    # ---- what translators ask ------------------------------------------------------

    def _value(self, name: str) -> _Value:
        value = self.values.get(name)
        if value is None:
            raise Refuse(f"input '{printable(name)}' is missing")
        return value

    def is_const(self, name: str) -> bool:
        return self._value(name).kind == "const"

    def is_sequence(self, name: str) -> bool:
        return self._value(name).kind == "sequence"

    def sequence(self, name: str) -> Sequence:
        """The elements of sequence `name`: the names of their values."""
        value = self._value(name)
        if value.kind != "sequence":
            raise Refuse(f"'{printable(name)}' is a tensor where a sequence is expected")
        return value.array

    def element(self, expr: str, shape: tuple[int, ...], dtype: np.dtype, grad: bool) -> str:
        """A value of its own for an element a translation makes (a split's piece of a sequence), by
        its expression; the name it is known by."""
        name = f"{self.current.output[0]}#{len(self.values)}"
        self.values[name] = _Value("tensor", expr=expr, name=name, grad=grad)
        self.loaded.shapes[name], self.loaded.dtypes[name] = tuple(shape), np.dtype(dtype)
        return name

    def pinned(self, name: str) -> str:
        """A name for the value `name` has now, which a later binding of `name` (a Loop's next iteration)
        leaves alone: a sequence's element."""
        key = f"{name}#{len(self.values)}"
        self.values[key] = self._value(name)
        for known in (self.loaded.shapes, self.loaded.dtypes):
            if name in known:
                known[key] = known[name]
        return key

    def declare(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        """The shape and dtype of an output that ONNX's inference does not give (a Gradient's)."""
        self.loaded.shapes.setdefault(name, tuple(shape))
        self.loaded.dtypes.setdefault(name, np.dtype(dtype))

    def carries_grad(self, name: str) -> bool:
        return self._value(name).grad

    def recomputed(self, y: str, fed: dict[str, str]) -> str:
        """The expression of `y` computed again with each value named in `fed` replaced by the value
        its entry names (a Gradient's inputs, the point at which it differentiates): the nodes between
        them and `y` are translated once more, as lines of their own before the node being translated;
        every value keeps its first translation afterwards."""
        for name, given in fed.items():
            if self.shape(name) != self.shape(given):
                raise Refuse(f"'{printable(given)}' has shape {list(self.shape(given))}, the value it stands for, "
                             f"'{printable(name)}', {list(self.shape(name))}")
        depends = set(fed)
        for index in self.order:                 # every value computed from one of those fed
            node = self.graph.node[index]
            if any(n in depends for n in [*node.input, *loading.implicit_reads(node)]):
                depends.update(o for o in node.output if o)
        cone, seen, stack = set(), set(fed), [y]
        while stack:                             # ... that `y` is computed from
            name = stack.pop()
            if name in seen or name not in depends or name not in self.producer:
                continue
            seen.add(name)
            index = self.producer[name]
            cone.add(index)
            node = self.graph.node[index]
            stack += [*node.input, *loading.implicit_reads(node)]
        values, state = dict(self.values), (self.current, self.steps, self.step_owner)
        try:
            for name, given in fed.items():
                self.values[name] = values[given]
            for index in self.order:
                if index in cone:
                    self._translate(index, self.graph.node[index])
            return self.ref(y)
        finally:
            self.values = values
            self.current, self.steps, self.step_owner = state

    def is_param(self, name: str) -> bool:
        return self._value(name).kind == "param"

    def constant(self, array: np.ndarray) -> str:
        """An input holding `array` (a value the translation makes, as a fill value)."""
        array = np.asarray(array)
        self._keep_alive.append(array)
        return self._const_input(array, "const")

    def const(self, name: str) -> np.ndarray:
        value = self._value(name)
        if value.kind in ("const", "param"):
            return value.array
        raise Refuse(f"'{printable(name)}' must be known at import time (a shape, axes or sizes input), but it "
                     "is computed from the data")

    def shape(self, name: str) -> tuple[int, ...]:
        value = self._value(name)
        if value.kind in ("const", "param"):
            return tuple(value.array.shape)
        shape = self.loaded.shapes.get(name)
        if shape is None:
            raise Refuse(f"the shape of '{printable(name)}' is not known after shape inference")
        return shape

    def dtype(self, name: str) -> np.dtype:
        value = self._value(name)
        if value.kind in ("const", "param"):
            return value.array.dtype
        dtype = self.loaded.dtypes.get(name)
        if dtype is None:
            raise Refuse(f"the dtype of '{printable(name)}' is not known after shape inference")
        return dtype

    def used(self, name: str) -> bool:
        return self.users.get(name, 0) > 0

    def is_tensor(self, name: str) -> bool:
        return self._inline(name) is None

    def _inline(self, name: str) -> str | None:
        """A size-1 constant that broadcasting would not grow, as a number literal; else None."""
        value = self._value(name)
        if value.kind != "const" or value.array.size != 1 or not np.isfinite(value.array).all():
            return None
        others = [self.shape(n) for n in self.current.input if n and n != name and self._value(n).kind != "const"]
        if value.array.ndim and not any(len(s) >= value.array.ndim for s in others):
            return None
        return lit(value.array.reshape(-1)[0].item())

    def arg(self, name: str) -> str:
        inline = self._inline(name)
        return inline if inline is not None else self.ref(name)

    def ref(self, name: str, grad: bool = True) -> str:
        value = self._value(name)
        if value.kind == "tensor":
            return value.expr
        if value.kind == "sequence":
            raise Refuse(f"'{printable(name)}' is a sequence, read here as a tensor (agrad's sequences are lists "
                         "made at import: SequenceAt, ConcatFromSequence and SequenceLength read them)")
        if value.kind == "param":
            name = value.name          # (an initializer by another name, as a SequenceAt of it, is the same input)
            agrad_name = self.param_inputs.get((name, grad))
            if agrad_name is None:
                # (read by other nodes too, it may be trained there: that input keeps the initializer's name)
                suffix = "" if grad or self.users.get(name, 0) <= 1 else "_const"
                agrad_name = self.param_inputs[name, grad] = self.names.make(name, "param", suffix)
                # its array once in the weights file, under the trained input's name where there is one
                key = self.param_keys.get(name)
                if key is None or grad:
                    self.weights[agrad_name] = self.weights.pop(key) if key is not None else value.array
                    self.param_keys[name] = agrad_name
            return agrad_name
        return self._const_input(value.array, value.name or "const")

    def parameters(self) -> int:
        """How many initializers are trained: used somewhere a gradient flows."""
        return sum(1 for _, grad in self.param_inputs if grad)

    def _const_input(self, array: np.ndarray, onnx_name: str) -> str:
        known = self.const_inputs.get(id(array))
        if known is not None:
            return known
        name = self.const_inputs[id(array)] = self.names.make(onnx_name, "const")
        kind = dtype_name(array.dtype)
        if array.ndim == 0 and (kind == "bool" or kind.startswith("int") or np.isfinite(array)):
            entry = {"value": array.item(), "dtype": kind}
        else:
            self.weights[name] = array
            entry = {"file": self.weights_file, "key": name}
        self.inputs.append((name, entry, f"constant '{printable(onnx_name)}' {kind}{list(array.shape)}"))
        return name

    def step(self, expr: str, what: str) -> str:
        """A line of its own for part of the node being translated (an unrolled LSTM's step);
        its name, to use in later parts."""
        base = printable(self.step_owner.name or self.step_owner.output[0])
        name = self.names.make(f"{base}_{what}", "step")
        self.steps.append((name, expr, what))
        return name

    def zeros(self, shape: list[int], dtype) -> str:
        array = np.zeros(shape, dtype=dtype)
        self._keep_alive.append(array)
        return self._const_input(array, "zeros")

    def index_tensor_nd(self, index: np.ndarray) -> str:
        array = np.asarray(index, dtype=np.int64)
        self._keep_alive.append(array)
        return self._const_input(array, "index")

    def index_tensor(self, index: list[int]) -> str:
        array = np.asarray(index, dtype=np.int64)
        self._keep_alive.append(array)
        return self._const_input(array, "index")

    def batch_free(self, x: str, target: list[int]) -> list[int]:
        """A Reshape target with the batch left to -1 where the model's batch was dynamic."""
        shape = self.shape(x)
        if self.batch_dynamic and target and shape and target[0] == shape[0] and -1 not in target and \
                math.prod(target) == math.prod(shape) and shape[0] > 0:
            return [-1] + list(target[1:])
        return target

    # ---- the walk ---------------------------------------------------------------------

    def where(self, index: int, node) -> str:
        return (f"{self.file}: node {index} '{printable(node.name)}' ({node.op_type}, opset "
                f"{self.opset if node.domain in ('', 'ai.onnx') else node.domain})")

    def run(self, options: ImportOptions) -> None:
        require_onnx()
        from onnx import numpy_helper

        self._keep_alive: list = []
        graph = self.graph
        order = self.order = loading.topological_order(self.loaded.path, graph)
        self.producer = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
        self._count_users(graph)
        for out in graph.output:
            self.users[out.name] = self.users.get(out.name, 0) + 1
        initializers = {t.name for t in graph.initializer}
        for tensor in graph.initializer:
            try:
                array = numpy_helper.to_array(tensor)
            except Exception as exc:      # noqa: BLE001 - a malformed tensor is the model's problem
                self.problems.append(f"{self.file}: initializer '{printable(tensor.name)}' cannot be read: {exc}")
                continue
            # a float tensor is a parameter (trained, its gradient reported); a 0-d one is a constant the
            # exporter lifted out of the graph (GELU's 0.044715, an attention scale, a Pow's exponent), whose
            # "gradient" an optimizer must not follow (a Pow exponent's is NaN where the base is negative)
            if array.dtype.kind == "f" and array.ndim:
                self.values[tensor.name] = _Value("param", array=array, name=tensor.name, grad=True)
            else:
                self.values[tensor.name] = _Value("const", array=array, name=tensor.name)
        float_inputs = []
        for value in graph.input:
            if value.name in initializers:
                continue
            shape = self.loaded.shapes.get(value.name)
            dtype = loading.np_dtype(value.type.tensor_type.elem_type)
            if shape is None or dtype is None:
                self.problems.append(f"{self.file}: input '{printable(value.name)}' has no static shape or an "
                                     "unsupported dtype")
                continue
            try:
                kind = dtype_name(dtype)
            except Refuse as exc:
                self.problems.append(f"{self.file}: input '{printable(value.name)}': {exc}")
                continue
            name = self.names.make(value.name, "input")
            entry = {"shape": list(shape), "init": "normal" if dtype.kind == "f" else "zeros", "dtype": kind}
            if dtype.kind == "f":
                entry["requires_grad"] = True      # a gradient with respect to the data is often the point
            self.inputs.append((name, entry, f"ONNX input '{printable(value.name)}' {kind}{list(shape)}"))
            self.values[value.name] = _Value("tensor", expr=name, name=value.name, grad=dtype.kind == "f")
            if dtype.kind == "f":
                float_inputs.append(dtype)
        self.float_inputs = len(float_inputs)
        self.batch_dynamic = self.loaded.dynamic_batch
        floats = [v.array.dtype for v in self.values.values() if v.kind == "param"] + float_inputs
        if floats:
            self.default_dtype = max(set(floats), key=floats.count)
        if self.problems:
            raise ModelError(self.problems)

        self.translated = 0
        for index in order:
            self._translate(index, graph.node[index])
        if self.problems:
            raise ModelError(self.problems)
        self._outputs(options)

    def _count_users(self, graph) -> None:
        """How many nodes read each value: those of the graph, and of its subgraphs (whose outputs an
        inlined If's outputs read)."""
        for node in graph.node:
            for name in [*node.input, *loading.implicit_reads(node)]:
                if name:
                    self.users[name] = self.users.get(name, 0) + 1
            for attr in node.attribute:
                if attr.g.node:
                    self._count_users(attr.g)
                    for out in attr.g.output:
                        self.users[out.name] = self.users.get(out.name, 0) + 1

    def _inline_if(self, index: int, node) -> bool:
        """An If whose condition is known at import (a shape test the exporter left in the graph) is
        its taken branch: that subgraph's nodes are translated in its place, its outputs the If's."""
        if node.op_type != "If" or not node.input or node.input[0] not in self.values or \
                not self.is_const(node.input[0]):
            return False
        condition = np.asarray(self.const(node.input[0])).reshape(-1)
        taken = "then_branch" if condition.size and bool(condition[0]) else "else_branch"
        branch = next((a.g for a in node.attribute if a.name == taken), None)
        if condition.size != 1 or branch is None or len(branch.output) != len(node.output):
            self._fail(index, node, f"an If whose condition has {condition.size} elements or whose {taken} is "
                                    "missing or does not make the If's outputs")
            return True
        for sub in branch.node:
            self._translate(index, sub)
        for out, branch_out in zip(node.output, branch.output):
            if out and branch_out.name in self.values:
                self.values[out] = self.values[branch_out.name]
                # the taken branch's shape: inference leaves an If's unknown where its branches differ, and
                # an exporter may declare the other branch's
                for known in (self.loaded.shapes, self.loaded.dtypes):
                    if branch_out.name in known:
                        known[out] = known[branch_out.name]
        return True

    def _unroll_loop(self, index: int, node) -> bool:
        """A Loop whose trip count is known at import, and its condition after every iteration too (torch's
        exporters write EmbeddingBag so: one iteration per bag), is its body translated once per iteration:
        iteration i's inputs are i, the condition and the values the one before carried, its nodes translated
        as the graph's own (their shapes inferred afresh: a bag's length may differ from the last). The Loop's
        outputs are the carried values after the last iteration, then each scan output's values stacked."""
        if node.op_type != "Loop":
            return False
        body = next((a.g for a in node.attribute if a.name == "body"), None)
        trips, condition = (list(node.input) + ["", ""])[:2]
        carried = list(node.input[2:])
        scans = len(body.output) - 1 - len(carried) if body is not None else -1
        try:
            if body is None or scans < 0 or len(body.input) != 2 + len(carried):
                raise Refuse("a Loop whose body's inputs and outputs do not match its own")
            # (no trip count: the condition ends it, the dynamo exporter's while loops)
            count = int(np.asarray(self.const(trips)).reshape(-1)[0]) if trips else _MAX_UNROLLED + 1
            going = bool(np.asarray(self.const(condition)).reshape(-1)[0]) if condition else True
            if count > _MAX_UNROLLED and trips:
                raise Refuse(f"a Loop of {count} iterations (agrad unrolls at most {_MAX_UNROLLED})")
            state = [self._value(n) for n in carried]
            stacked: list[list[_Value]] = [[] for _ in range(scans)]
            made = _made_in(body)
            for i in range(count):
                if not going:
                    break
                inputs = [_Value("const", array=np.array(i, np.int64)), _Value("const", array=np.array(going))]
                for value, formal in zip(inputs + state, body.input):
                    self.values[formal.name] = value
                    for known, source in ((self.loaded.shapes, value.name), (self.loaded.dtypes, value.name)):
                        known.pop(formal.name, None)
                        if source in known:
                            known[formal.name] = known[source]
                for name in made:            # this iteration's shapes, not the last one's
                    self.loaded.shapes.pop(name, None)
                for sub in body.node:
                    self._translate(index, sub)
                if any(self.values[o.name].broken for o in body.output if o.name in self.values):
                    return True
                ended = self._value(body.output[0].name)
                if ended.kind != "const":
                    raise Refuse("a Loop whose condition is computed from the data (agrad unrolls a loop whose "
                                 "iterations are known at import)")
                going = bool(np.asarray(ended.array).reshape(-1)[0])
                state = [self._value(o.name) for o in body.output[1:1 + len(carried)]]
                for k, out in enumerate(body.output[1 + len(carried):]):
                    stacked[k].append(self._value(out.name))
                    if stacked[k][-1].kind == "sequence":
                        raise Refuse("a Loop whose scan output is a sequence")
            if going and not trips:
                raise Refuse(f"a Loop still going after {_MAX_UNROLLED} iterations (agrad unrolls at most that many)")
            if scans and not stacked[0]:
                raise Refuse("a Loop of no iterations with scan outputs (their shape is not known)")
        except Refuse as exc:
            self._fail(index, node, str(exc))
            return True
        self.current = node
        for out, value in zip(node.output, state):
            if out:
                self.values[out] = value
        comment = f"ONNX node '{printable(node.name)}' Loop (unrolled)"
        for out, values in zip(node.output[len(carried):], stacked):
            if not out:
                continue
            name = self.names.make(out, "loop")
            parts = [v.expr if v.kind == "tensor" else self.ref(v.name) if v.kind == "param" else
                     self._const_input(v.array, "const") for v in values]
            self.nodes.append((name, f"stack([{', '.join(parts)}], 0)", f"{comment} -> '{printable(out)}'"))
            self.values[out] = _Value("tensor", expr=name, name=out, grad=any(v.grad for v in values))
            first = values[0]
            shape = first.array.shape if first.kind != "tensor" else self.loaded.shapes.get(first.name)
            if shape is not None:
                self.loaded.shapes[out] = (len(values), *shape)
        self.translated += 1
        return True

    def _translate(self, index: int, node) -> None:
        """One node (`index`: its place in the model, for messages) into lines of the graph file."""
        from onnx import helper

        self.current = node
        if self._inline_if(index, node) or self._unroll_loop(index, node):
            return
        if node.domain not in ("", "ai.onnx") and not (node.domain == loading.TRAINING_DOMAIN and
                                                       node.op_type in TRAINING_OPS):
            hint = " (an optimised model: import the unoptimised export instead)" \
                if node.domain.startswith("com.microsoft") or node.domain.startswith("com.ms") else ""
            self._fail(index, node, f"op domain '{printable(node.domain)}' is not supported{hint}")
            return
        if self._fold(node):
            return
        translator = TABLE.get(node.op_type)
        if translator is None or (node.op_type in TRAINING_OPS) != (node.domain == loading.TRAINING_DOMAIN):
            self._fail(index, node, "no agrad translation for this op")
            return
        attrs = {a.name: _text(helper.get_attribute_value(a)) for a in node.attribute}
        self.steps = []
        self.step_owner = node
        try:
            expr = translator(self, node, attrs)
        except Refuse as exc:
            self._fail(index, node, str(exc))
            return
        # (ArithmeticError: a constant's inf or a zero where a count goes, e.g. Split's num_outputs;
        # RuntimeError: NumPy's, for a shape of more dimensions than it supports)
        except (KeyError, IndexError, ValueError, TypeError, ArithmeticError, RuntimeError) as exc:
            self._fail(index, node, f"cannot translate its attributes or inputs ({type(exc).__name__}: {exc})")
            return
        self.translated += 1
        self.differentiates |= node.op_type == "Gradient"
        outputs = [o for o in node.output if o]
        kind = f"{node.op_type}{' (composed)' if node.op_type in COMPOSED else ''}"
        comment = f"ONNX node '{printable(node.name)}' {kind}"
        for step_name, step_expr, what in self.steps:        # an unrolled op's lines, in order
            self.nodes.append((step_name, step_expr, f"{comment}: {what}"))
        if isinstance(expr, (Sequence, Same, Known)):        # a value of the import, no line of its own
            self._value_of(node, expr)
            return
        if isinstance(expr, Outputs):                         # one line per output that is used
            for out, out_expr in zip(node.output, expr):
                if out and out_expr is not None and self.used(out):
                    name = self.names.make(out, node.op_type.lower())
                    self.nodes.append((name, out_expr, f"{comment} -> '{printable(out)}'"))
                    self.values[out] = _Value("tensor", expr=name, name=out, grad=self._carries_grad(node, out))
            self._infer_missing(node)
            return
        name = self.names.make(outputs[0] if outputs else node.name, node.op_type.lower())
        if len(outputs) > 1 or isinstance(expr, Multi):
            comment += f" -> {', '.join(repr(printable(o)) for o in node.output if o)}"
        elif outputs and outputs[0] != node.name:
            comment += f" -> '{printable(outputs[0])}'"
        self.nodes.append((name, str(expr), comment))
        self._infer_missing(node)
        for i, out in enumerate(node.output):
            if out:
                self.values[out] = _Value("tensor", expr=f"{name}[{i}]" if isinstance(expr, Multi) else name,
                                          name=out, grad=self._carries_grad(node, out))

    def _value_of(self, node, made) -> None:
        """Output 0 of `node` as what its translator made: a sequence (its elements' names), another
        value itself, or a value known at import."""
        out = node.output[0]
        if isinstance(made, Sequence):
            grad = any(self.values[n].grad for n in made if n is not None)
            self.values[out] = _Value("sequence", array=made, name=out, grad=grad)
        elif isinstance(made, Same):
            self.values[out] = self.values[made.name]
            for known in (self.loaded.shapes, self.loaded.dtypes):
                if made.name in known:
                    known[out] = known[made.name]
        else:
            self.values[out] = _Value("const", array=np.asarray(made.array), name=out)

    def _carries_grad(self, node, out: str) -> bool:
        """Whether a gradient can flow from output `out` of `node` back to an input or parameter."""
        if node.op_type in NO_GRADIENT:
            return False
        dtype = self.loaded.dtypes.get(out)
        if dtype is not None and dtype.kind != "f":
            return False
        # (an input of no elements has nothing to pass a gradient to: the reduction of an empty set is a fill)
        return any(self.values[n].grad and 0 not in self.loaded.shapes.get(n, (1,))
                   for n in node.input if n and n in self.values)

    def _infer_missing(self, node) -> None:
        """Shapes onnx's whole-model inference left out (a Reshape whose target it could not
        follow), inferred again for this node alone, its folded inputs given as data."""
        if all(not o or o in self.loaded.shapes for o in node.output):
            return
        import onnx
        from onnx import helper, numpy_helper

        types, data = {}, {}
        for name in node.input:
            if not name:
                continue
            try:
                shape, dtype = self.shape(name), self.dtype(name)
            except Refuse:
                return
            types[name] = helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(dtype), list(shape))
            value = self.values[name]
            if value.kind == "const":
                data[name] = numpy_helper.from_array(value.array, name)
        try:
            schema = onnx.defs.get_schema(node.op_type, self.opset, node.domain)
            found = onnx.shape_inference.infer_node_outputs(
                schema, node, types, data, opset_imports=[helper.make_opsetid("", self.opset)])
        except Exception:         # noqa: BLE001 - then the shape stays unknown, and a node that needs it says so
            return
        for name, type_proto in found.items():
            tensor = type_proto.tensor_type
            if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
                self.loaded.shapes.setdefault(name, tuple(d.dim_value for d in tensor.shape.dim))
            dtype = loading.np_dtype(tensor.elem_type)
            if dtype is not None:
                self.loaded.dtypes.setdefault(name, dtype)

    def _fail(self, index: int, node, reason: str) -> None:
        broken = any(self.values.get(n) is not None and self.values[n].broken for n in node.input if n)
        if not broken:            # a node downstream of a refused one is not news
            self.problems.append(f"{self.where(index, node)}: {reason}")
        for out in node.output:
            if out:
                self.values[out] = _Value("tensor", expr=f"broken_{len(self.values)}", name=out, broken=True)

    def _fold(self, node) -> bool:
        """Evaluate `node` now if its result is known before any data; True when done."""
        if node.op_type == "Constant":
            try:
                self.values[node.output[0]] = _Value("const", array=folding.constant_attribute(node),
                                                     name=node.output[0])
            except Exception as exc:      # noqa: BLE001 - a malformed tensor is the model's problem (as an initializer's)
                raise ModelError([f"{self.file}: Constant '{printable(node.name)}' cannot be read: "
                                  f"{type(exc).__name__}: {exc}"]) from None
            self.folded += 1
            return True
        if node.op_type in folding.NOT_FOLDED:
            return False
        inputs = []
        for name in node.input:
            if not name:
                inputs.append(None)
                continue
            value = self.values.get(name)
            if value is None or value.broken:
                return False
            if value.kind == "const":
                inputs.append(value.array)
            elif folding.shape_only(node.op_type) and name in self.loaded.shapes and value.kind == "tensor":
                dtype = self.loaded.dtypes.get(name, np.dtype(np.float32))
                inputs.append(np.broadcast_to(np.zeros((), dtype), self.loaded.shapes[name]))
            elif folding.shape_only(node.op_type) and value.kind == "param":
                inputs.append(value.array)
            else:
                return False
        try:
            results = folding.evaluate(node, inputs, self.opset)
        except Exception:            # noqa: BLE001 - not foldable after all: translated instead
            return False
        if any(r is not None and r.size > folding.MAX_FOLDED for r in results):
            return False
        for out, result in zip(node.output, results):
            if out and result is not None:
                self.values[out] = _Value("const", array=np.array(result, order="C"), name=out)
        self.folded += 1
        return True

    def _outputs(self, options: ImportOptions) -> None:
        graph = self.graph
        self.output_names = []
        defined = {n for n, _, _ in self.nodes}
        for out in graph.output:
            value = self.values.get(out.name)
            if value is None:
                raise ModelError([f"{self.file}: graph output '{printable(out.name)}' is never made"])
            if value.kind == "tensor" and value.expr in defined:
                self.output_names.append(value.expr)
                continue
            name = self.names.make(out.name, "output")
            try:
                source = self.ref(out.name)
            except Refuse as exc:          # a folded output of a dtype agrad has not
                raise ModelError([f"{self.file}: graph output '{printable(out.name)}': {exc}"]) from None
            self.nodes.append((name, f"alias({source})", f"ONNX graph output '{printable(out.name)}'"))
            self.output_names.append(name)
        self._loss(options)

    def _loss(self, options: ImportOptions) -> None:
        outputs = []
        for name, onnx_out in zip(self.output_names, self.graph.output):
            dtype = self.loaded.dtypes.get(onnx_out.name)
            if (dtype is None or dtype.kind == "f") and self.values[onnx_out.name].grad:
                outputs.append((name, onnx_out.name))
        loss = options.loss or "sum"
        kind, _, target = loss.partition(":")
        if not outputs or (options.loss is None and not self.parameters() and not self.float_inputs):
            self.backward = None        # nothing requires grad: a model of integers in, or no float out
            return
        name = self.names.make("loss", "loss")
        if kind in ("sum", "mean"):
            expr = " + ".join(f"{kind}({n})" for n, _ in outputs)
            what = f"the {kind} of every float output"
        else:
            if len(outputs) != 1:
                raise ModelError([f"--loss {loss}: the model has {len(outputs)} float outputs; {kind} needs one"])
            out, onnx_name = outputs[0]
            shape = self.loaded.shapes.get(onnx_name)
            if shape is None:
                raise ModelError([f"--loss {loss}: the shape of output '{printable(onnx_name)}' is not known"])
            target_name = self.names.make(target, "target")
            if target_name != target:
                raise ModelError([f"--loss {loss}: '{target}' is not a free name for the new input "
                                  f"(use another, e.g. {target_name})"])
            if kind == "cross_entropy":
                if len(shape) < 2:
                    raise ModelError([f"--loss {loss}: output '{printable(onnx_name)}' has shape {list(shape)}; "
                                      "cross_entropy needs [N, classes] or [..., classes]"])
                labels = list(shape[:-1])
                self.inputs.append((target, {"shape": labels, "init": "zeros", "dtype": "int64"},
                                    f"class labels for --loss {loss} (give them with --input {target}=FILE)"))
                if len(shape) == 2:
                    expr = f"cross_entropy({out}, {target})"
                else:
                    expr = f"cross_entropy(reshape({out}, [-1, {shape[-1]}]), reshape({target}, [-1]))"
            else:
                self.inputs.append((target, {"shape": list(shape), "init": "zeros",
                                             "dtype": dtype_name(self.loaded.dtypes[onnx_name])},
                                    f"regression target for --loss {loss} (give it with --input {target}=FILE)"))
                expr = f"mse_loss({out}, {target})"
            what = f"--loss {loss}"
        self.nodes.append((name, expr, what))
        self.backward = name

    # ---- the file ---------------------------------------------------------------------

    def yaml_text(self, graph_name: str) -> str:
        lines = [f"# Imported from {printable(self.file)} by `agrad import` (ONNX opset {self.opset}"
                 + (f", converted from {self.loaded.original_opset}" if self.loaded.original_opset != self.opset
                    else "")
                 + (f"; producer {printable(self.model.producer_name)} {printable(self.model.producer_version)}"
                    if self.model.producer_name else "") + ").",
                 "# Each node is one ONNX node, named in the comment on its line; weights are in "
                 f"{self.weights_file}.",
                 "agrad: 1",
                 f"name: {json.dumps(graph_name)}",
                 f"dtype: {self.default_dtype.name}",
                 "", "inputs:"]
        entries = []
        for name, entry, comment in self.inputs:
            entries.append((name, entry, comment))
        for (onnx_name, grad), name in self.param_inputs.items():
            value = self.values[onnx_name]
            entry = {"file": self.weights_file, "key": self.param_keys[onnx_name]}
            if grad:
                entry["requires_grad"] = True
            also = " (where no gradient flows)" if (onnx_name, not grad) in self.param_inputs and not grad else ""
            entries.append((name, entry, f"initializer '{printable(onnx_name)}' "
                                         f"{value.array.dtype.name}{list(value.array.shape)}{also}"))
        for name, entry, comment in entries:
            if entry.get("dtype") == self.default_dtype.name and "shape" not in entry or \
                    entry.get("dtype") == self.default_dtype.name and entry.get("init") == "normal":
                entry = {k: v for k, v in entry.items() if k != "dtype"}
            lines.append(f"  {name}: {_flow(entry)}  # {comment}")
        lines += ["", "nodes:"]
        for name, expr, comment in self.nodes:
            lines.append(f"  {name}: {_scalar(expr)}  # {comment}")
        lines += ["", f"outputs: [{', '.join(self.output_names)}]"]
        if self.backward:
            lines.append(f"backward: {self.backward}")
        return "\n".join(lines) + "\n"


def _made_in(graph) -> set[str]:
    """The values the nodes of `graph` and of its subgraphs (an If's branches) make."""
    made = set()
    for node in graph.node:
        made.update(o for o in node.output if o)
        for attr in node.attribute:
            for sub in [attr.g] + list(attr.graphs):
                if sub.node:
                    made |= _made_in(sub)
    return made


def _text(value):
    """ONNX's string attributes come as bytes."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", "replace") for v in value]
    return value


def _flow(entry: dict) -> str:
    parts = []
    for k, v in entry.items():
        if isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, str):
            text = v if re.fullmatch(r"[A-Za-z_][\w.\-]*", v) and v not in ("true", "false", "null") else json.dumps(v)
        elif isinstance(v, float):
            text = repr(v) if math.isfinite(v) else (".nan" if v != v else ("-.inf" if v < 0 else ".inf"))
        else:
            text = json.dumps(v)
        parts.append(f"{k}: {text}")
    return "{" + ", ".join(parts) + "}"


def _scalar(expr: str) -> str:
    """An expression as a YAML scalar: plain where YAML reads it back as written, else quoted."""
    if ": " in expr or " #" in expr or expr[:1] in "[{&*!|>'\"%@`-?:,#" or expr.endswith(":"):
        return json.dumps(expr)
    return expr


def import_model(model_path, graph_path=None, options: ImportOptions | None = None) -> ImportResult:
    """Translate `model_path` and write the graph file and its weights; ModelError (nothing written)
    when the model cannot be read or translated."""
    options = options or ImportOptions()
    if options.weights not in ("npz", "safetensors"):
        raise ValueError(f"weights format {options.weights!r}")
    if options.loss is not None:
        kind, sep, target = options.loss.partition(":")
        if kind not in LOSSES or (kind in ("cross_entropy", "mse")) != bool(sep and target) or \
                (target and not target.isidentifier()):
            raise ModelError([f"--loss {options.loss}: expected sum, mean, cross_entropy:LABELS or mse:TARGET "
                              "(LABELS and TARGET name a new input)"])
    model_path = Path(model_path)
    graph_path = Path(graph_path) if graph_path is not None else model_path.with_suffix(".yaml")
    weights_path = graph_path.with_suffix(".npz" if options.weights == "npz" else ".safetensors")
    loaded = loading.load(model_path, options.shapes)
    importer = Importer(loaded, weights_path.name)
    importer.run(options)
    text = importer.yaml_text(graph_path.stem)
    try:
        try:
            _write_checked(graph_path, text, weights_path, importer.weights, options.weights)
        except TranslationBug as bug:
            if bug.codes != {ROOT_WITHOUT_GRAD} or not importer.differentiates or importer.backward is None:
                raise
            # the float outputs are gradients constant in the inputs: nothing to differentiate, so no backward,
            # as for a model without float outputs
            importer.nodes = [line for line in importer.nodes if line[0] != importer.backward]
            importer.backward = None
            _write_checked(graph_path, importer.yaml_text(graph_path.stem), weights_path, importer.weights,
                           options.weights)
    except TranslationBug as bug:
        # the model's own shapes may disagree (its declared shapes are taken as they are; ONNX's
        # inference runs leniently): then the graph could not load, and the model is at fault
        disagreement = loading.shapes_disagree(loaded.model)
        if disagreement is not None:
            raise ModelError([f"{model_path.name}: the model's shapes disagree (ONNX's strict shape inference: "
                              f"{disagreement}). {bug.details}"]) from None
        if bug.codes == {SHAPE_REFUSED}:
            raise ModelError([f"{model_path.name}: the shapes the model declares do not fit its ops (as PyTorch "
                              f"checks them; ONNX's shape inference does not). {bug.details}"]) from None
        raise
    return ImportResult(graph_path, weights_path, importer.translated, importer.folded,
                        importer.parameters(), loaded.opset,
                        loaded.original_opset, loaded.notes, dict(importer.names.reverse))


def _write_checked(graph_path: Path, text: str, weights_path: Path, weights: dict, kind: str) -> None:
    """Write both files into a new folder beside the destination, load the graph from there (a
    translation that does not load is a bug: TranslationBug), then move both into place."""
    from agrad import graphs

    target = Path(os.path.realpath(graph_path)).parent
    folder = Path(tempfile.mkdtemp(prefix=".agrad-import.", dir=target))
    try:
        staged_graph, staged_weights = folder / graph_path.name, folder / weights_path.name
        with open(staged_weights, "wb") as f:
            if kind == "npz":
                np.savez(f, **weights)
            else:
                from agrad import _safetensors
                _safetensors.write(f, weights)
        staged_graph.write_text(text, encoding="utf-8")
        problems = [d for d in graphs.validate(staged_graph) if d.severity == "error"]
        if problems:
            lines = text.splitlines()

            def where(d) -> str:
                line = d.location.line if d.location else 0
                return f"line {line or '?'}: {d.message} [{lines[line - 1].strip() if 0 < line <= len(lines) else ''}]"
            details = "; ".join(where(d) for d in problems[:5])
            raise TranslationBug(f"agrad import made a graph that does not load (a bug in agrad import): {details}",
                                 f"The graph it makes does not load: {details}", frozenset(d.code for d in problems))
        _move_into_place(staged_weights, Path(os.path.realpath(weights_path)))
        os.replace(staged_graph, Path(os.path.realpath(graph_path)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _move_into_place(staged: Path, target: Path) -> None:
    """os.replace, or, where `target` is on another file system than the staging folder (the
    weights' path is a symlink out of the graph's folder: the folder is staged beside the graph's
    target), an atomic copy beside `target` (os.replace cannot cross file systems: EXDEV)."""
    import errno

    try:
        os.replace(staged, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        from agrad.graphs.saving import write_atomically

        with open(staged, "rb") as source:
            write_atomically(target, lambda f: shutil.copyfileobj(source, f))
