"""Reads a loaded YAML document into a `GraphSpec`, reporting every problem.

This pass knows the file format (SPEC §1) but not the ops: keys, types, names,
dtypes, devices, input definitions, expressions and backward passes. Checks that
need the op registry or shapes come later (`binding.py`, `build.py`).
"""
from __future__ import annotations

import keyword
import math
import re
from typing import Any

from agrad import codegen

from . import expressions
from .diagnostics import Collector, Pos, did_you_mean
from .expressions import ExpressionError
from .pytorch_habits import device_hint
from .values import INT64_MAX, MAX_DIMS, misfit_message
from .spec import (DTYPE_NAMES, INITS, NO_KEYWORDS, BackwardSpec, Expectation, ExpectSpec, GraphSpec, InputSpec,
                   NodeColumns, NodeSpec, TensorRef)
from .yaml_loader import Document, NodesBlock, one_line_scalar, scalar_locator

TOP_KEYS = ("agrad", "name", "description", "dtype", "device", "seed", "inputs", "nodes", "backward",
            "retain_grad", "outputs", "expect", "train")      # `train:`: graphs/train_section.py
INPUT_KEYS = ("value", "shape", "init", "fill", "mean", "std", "low", "high", "seed", "file", "key",
              "dtype", "device", "requires_grad")
INIT_PARAMS = {"full": ("fill",), "normal": ("mean", "std"), "uniform": ("low", "high")}
PARAM_DEFAULTS = {"mean": 0.0, "std": 1.0, "low": 0.0, "high": 1.0}
BACKWARD_KEYS = ("of", "grad_tensors", "inputs", "retain_graph", "create_graph")
EXPECT_KEYS = ("outputs", "grads", "atol", "rtol", "train")     # `train`: graphs/train_section.py
DEVICE_RE = re.compile(r"^(cpu|cuda(:\d+)?|dask|meta)$")
_META_DEVICE = ("device 'meta' holds shapes but no data, so a graph cannot run on it "
                "(agrad validate already checks on Meta); use cpu or cuda")

_PLAIN = frozenset((int, float, bool, str, type(None)))     # argument values that hold no Ref

_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
               dict: "a mapping", type(None): "null"}


def _kind(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def literal_shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a nested-list literal of numbers/bools, or None if ragged or not numeric."""
    if type(value) in (int, float, bool):
        return ()
    if not isinstance(value, list):
        return None
    if not value:
        return (0,)
    shapes = {literal_shape(v) for v in value}
    if len(shapes) != 1 or None in shapes:
        return None
    return (len(value),) + shapes.pop()


def _problem(value, key: str | None, from_expression: bool) -> str | None:
    """What no op can take in a constant argument (`key`: its keyword), or None."""
    if isinstance(value, list):
        return next((p for p in (_problem(v, key, from_expression) for v in value) if p), None)
    if type(value) is int and not -INT64_MAX - 1 <= value <= INT64_MAX:
        return misfit_message(value, "int64", "integer")
    if type(value) is float and from_expression and math.isinf(value):
        return "a number beyond the float64 range (largest is about 1.8e308)"
    if isinstance(value, str) and value == "meta" and key in ("device", None):
        return _META_DEVICE
    return None


class DocumentReader:
    def __init__(self, doc: Document, file: str, collector: Collector):
        self.doc = doc
        self.file = file
        self.c = collector

    # ---- helpers ---------------------------------------------------------------

    def error(self, code: str, message: str, path: tuple, hint: str | None = None, key: bool = False) -> None:
        pos = self.doc.key_pos(path) if key else self.doc.pos(path)
        self.c.error(code, message, pos, hint)

    def expect_type(self, value: Any, types: tuple, what: str, path: tuple, described: str) -> bool:
        if type(value) in types:
            return True
        self.error("AG005", f"{what} must be {described}, not {_kind(value)}", path)
        return False

    def check_keys(self, mapping: dict, allowed: tuple, path: tuple, where: str) -> None:
        for k in mapping:
            if k not in allowed:
                self.error("AG004", f"unknown key '{k}' in {where}", path + (k,),
                           did_you_mean(k, allowed), key=True)

    def names_list(self, value: Any, path: tuple, what: str) -> list[TensorRef]:
        """A name or a list of names, as TensorRefs."""
        items = value if isinstance(value, list) else [value]
        refs = []
        for i, item in enumerate(items):
            item_path = path + (i,) if isinstance(value, list) else path
            if isinstance(item, str):
                refs.append(TensorRef(item, self.doc.pos(item_path)))
            else:
                self.error("AG005", f"{what} must be a name or a list of names, not {_kind(item)}", item_path)
        return refs

    def dtype(self, value: Any, path: tuple) -> str | None:
        if not isinstance(value, str) or value not in DTYPE_NAMES:
            hint = did_you_mean(value, DTYPE_NAMES) if isinstance(value, str) else None
            self.error("AG008", f"unknown dtype {value!r}; expected one of {', '.join(DTYPE_NAMES)}", path, hint)
            return None
        return value

    def device(self, value: Any, path: tuple) -> str | None:
        if not isinstance(value, str) or not DEVICE_RE.match(value):
            hint = (f"'{device_hint(value)}'" if device_hint(value) else did_you_mean(value, ("cpu", "cuda"))) \
                if isinstance(value, str) else None
            self.error("AG009", f"bad device {value!r}; expected cpu, cuda, cuda:N or dask", path, hint)
            return None
        if value == "meta":
            self.error("AG009", _META_DEVICE, path)
            return None
        return value

    def number(self, value: Any, what: str, path: tuple, finite: bool = False) -> float | None:
        """A YAML number as a float, or None after reporting: not a number, too big, or not finite."""
        if not self.expect_type(value, (int, float), what, path, "a number"):
            return None
        try:
            number = float(value)
        except OverflowError:
            self.error("AG005", f"{what} is beyond the float64 range (largest is about 1.8e308)", path)
            return None
        if finite and not math.isfinite(number):
            self.error("AG005", f"{what} must be a finite number, not {number}", path)
            return None
        return number

    # ---- the document ------------------------------------------------------------

    def read(self, default_name: str) -> GraphSpec:
        data = self.doc.data
        spec = GraphSpec(name=default_name, file=self.file, doc=self.doc)
        if not isinstance(data, dict):
            self.error("AG005", f"a graph file must be a mapping with `inputs:` and `nodes:`, not {_kind(data)}", ())
            return spec
        self.check_keys(data, TOP_KEYS, (), "the graph file")
        if "agrad" in data and (type(data["agrad"]) is not int or data["agrad"] != 1):
            self.error("AG007", f"unsupported format version {data['agrad']!r}; this agrad reads version 1",
                       ("agrad",))
        if "name" in data and self.expect_type(data["name"], (str,), "`name`", ("name",), "a string"):
            spec.name = data["name"]
        if "description" in data and self.expect_type(data["description"], (str,), "`description`",
                                                       ("description",), "a string"):
            spec.description = data["description"]
        if "dtype" in data:
            spec.dtype = self.dtype(data["dtype"], ("dtype",)) or spec.dtype
        if "device" in data:
            spec.device = self.device(data["device"], ("device",)) or spec.device
        if "seed" in data and self.expect_type(data["seed"], (int,), "`seed`", ("seed",), "an integer"):
            if data["seed"] < 0:
                self.error("AG005", "`seed` must be a non-negative integer", ("seed",))
            spec.seed = data["seed"]

        inputs = data.get("inputs", {})
        if inputs is None or not self.expect_type(inputs, (dict,), "`inputs`", ("inputs",), "a mapping"):
            inputs = {}
        for name, entry in inputs.items():
            if self.check_name(name, ("inputs", name)):
                before = len(self.c.diagnostics)
                spec.inputs[name] = self.input(name, entry, ("inputs", name))
                spec.inputs[name].valid = len(self.c.diagnostics) == before

        nodes = data.get("nodes")
        if "nodes" not in data:
            self.c.error("AG006", "missing key `nodes` (the graph's op applications)", Pos(1, 1))
            nodes = {}
        elif not self.expect_type(nodes, (dict,), "`nodes`", ("nodes",), "a mapping"):
            nodes = {}
        block = self.doc.block
        if block is not None and nodes is block.nodes:
            spec.columns = self.columns(spec, block)
        else:
            known = set(spec.inputs) | set(nodes)
            for name, entry in nodes.items():
                spec.nodes.extend(self.yaml_node(spec, name, entry, known))

        if "backward" in data:
            spec.backward = self.backward(data["backward"], ("backward",))
        if "retain_grad" in data:
            spec.retain_grad = self.names_list(data["retain_grad"], ("retain_grad",), "`retain_grad`")
        if "outputs" in data:
            spec.outputs = self.names_list(data["outputs"], ("outputs",), "`outputs`")
        if "expect" in data:
            spec.expect = self.expect(data["expect"], ("expect",))
        return spec

    def yaml_node(self, spec: GraphSpec, name: str, entry: Any, known: set[str]) -> list[NodeSpec]:
        """The NodeSpecs of one entry of `nodes:`, read call by call."""
        path = ("nodes", name)
        if not self.check_name(name, path):
            return []
        if name in spec.inputs:
            first = spec.inputs[name].pos
            self.error("AG011", f"'{name}' is assigned twice (it is an input, line {first.line})", path, key=True)
            return []
        made = self.node(name, entry, path, known)
        if not made:
            spec.broken.add(name)
        return made

    def columns(self, spec: GraphSpec, block: NodesBlock) -> NodeColumns:
        """The block read in bulk, column-wise: an expression of a shape with a builder and
        nothing to report is kept as its shape (its NodeSpecs made when asked for, by the
        builder); any other node is read call by call here, its problems reported in file
        order as they would be."""
        columns = NodeColumns(block, lambda i, name, text, shape=None, names=None, shifts=None:
                              _from_shape(block, i, name, text, shape, names, shifts))
        entries, ops, inputs = columns.entries, columns.ops, spec.inputs
        shape_of = expressions.shape_of
        for name, text in block.nodes.items():
            # bulk text is one line written as read, no leading blank, name an identifier
            found = None if name in inputs or keyword.iskeyword(name) else shape_of(text, False)
            if found is not None:
                shape, names, _ = found
                if shape.builder is None:
                    shape.builder = _builder(shape)
                if shape.builder is not _NO_BUILDER:
                    for i in shape.ops:
                        ops.add(names[i])
                    if "getitem" not in text or not any(names[i] == "getitem" for i in shape.ops):
                        entries.append(shape)
                        continue
            made = self.yaml_node(spec, name, text, set())     # `known` is for mappings only
            entries.append(made)
            ops.update(n.op for n in made)
        for shape in {id(e): e for e in entries if e.__class__ is not list}.values():
            ops.update(c.op for c in shape.calls if not c.op.startswith("Z"))
        return columns

    def check_name(self, name: str, path: tuple) -> bool:
        if not name.isidentifier() or keyword.iskeyword(name):
            self.error("AG010", f"'{name}' is not a usable name: names are identifiers "
                       "(letters, digits, _; not a Python keyword)", path, key=True)
            return False
        return True

    # ---- inputs ------------------------------------------------------------------

    def input(self, name: str, entry: Any, path: tuple) -> InputSpec:
        spec = InputSpec(name=name, pos=self.doc.key_pos(path), path=path, kind="value")
        if not isinstance(entry, dict):
            spec.value = self.literal(entry, path)
            return spec
        self.check_keys(entry, INPUT_KEYS, path, f"input '{name}'")
        sources = [k for k in ("value", "shape", "file") if k in entry]
        if len(sources) != 1:
            message = (f"input '{name}' needs one of `value`, `shape` + `init`, or `file`" if not sources else
                       f"input '{name}' has both `{sources[0]}` and `{sources[1]}`; give one")
            self.error("AG012", message, path + ((sources[1],) if len(sources) > 1 else ()), key=len(sources) > 1)
        if "dtype" in entry:
            spec.dtype = self.dtype(entry["dtype"], path + ("dtype",))
        if "device" in entry:
            spec.device = self.device(entry["device"], path + ("device",))
        if "requires_grad" in entry and self.expect_type(entry["requires_grad"], (bool,), "`requires_grad`",
                                                         path + ("requires_grad",), "true or false"):
            spec.requires_grad = entry["requires_grad"]
        source = sources[0] if sources else "value"
        if source == "value":
            spec.value = self.literal(entry.get("value", 0.0), path + ("value",))
        elif source == "shape":
            spec.kind = "init"
            self.init(entry, spec, path)
        else:
            spec.kind = "file"
            self.file_source(entry, spec, path)
        used = {"value": (), "init": ("init", "seed") + INIT_PARAMS.get(spec.init or "", ()),
                "file": ("key",)}[spec.kind]
        for extra in ("init", "fill", "mean", "std", "low", "high", "seed", "key"):
            if extra in entry and extra not in used and len(sources) == 1:
                self.error("AG012", f"`{extra}` does not apply to input '{name}' here", path + (extra,), key=True)
        return spec

    def literal(self, value: Any, path: tuple) -> Any:
        shape = literal_shape(value)
        if shape is None:
            self.error("AG012", "a tensor literal must be a number, a boolean, or a rectangular nested list "
                       f"of them (got {_kind(value)})", path)
            return 0.0
        if len(shape) > MAX_DIMS:
            self.error("AG012", f"a tensor literal has {len(shape)} dimensions; at most {MAX_DIMS} are supported",
                       path)
            return 0.0
        return value

    def init(self, entry: dict, spec: InputSpec, path: tuple) -> None:
        shape = entry["shape"]
        if isinstance(shape, int) and type(shape) is int:
            shape = [shape]
        if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
            self.error("AG012", "`shape` must be a list of non-negative integers", path + ("shape",))
            shape = []
        elif len(shape) > MAX_DIMS:
            self.error("AG012", f"`shape` has {len(shape)} dimensions; at most {MAX_DIMS} are supported",
                       path + ("shape",))
            shape = []
        elif max(shape, default=0) > INT64_MAX or (0 not in shape and math.prod(shape) > INT64_MAX):
            # PyTorch counts elements in int64; NumPy in intp.
            self.error("AG012", f"`shape` {shape} has more elements than an int64 can count", path + ("shape",))
            shape = []
        spec.shape = tuple(shape)
        if "init" not in entry:
            self.error("AG006", f"input '{spec.name}' has a `shape` but no `init` "
                       f"(one of {', '.join(INITS)})", path, key=True)
            return
        init = entry["init"]
        if init not in INITS:
            self.error("AG012", f"unknown init {init!r}; expected one of {', '.join(INITS)}", path + ("init",),
                       did_you_mean(init, INITS))
            return
        spec.init = init
        if init == "eye" and len(spec.shape) != 2:
            self.error("AG012", f"init `eye` needs a 2-D shape, got {list(spec.shape)}", path + ("shape",))
        for param in INIT_PARAMS.get(init, ()):
            if param not in entry and param not in PARAM_DEFAULTS:
                self.error("AG006", f"init `{init}` needs `{param}`", path, key=True)
                continue
            value = entry.get(param, PARAM_DEFAULTS.get(param))
            # A random init's bounds must be finite numbers; `fill` may be nan or inf.
            number = self.number(value, f"`{param}`", path + (param,), finite=param != "fill")
            if number is not None:
                spec.params[param] = number
        if init == "normal" and spec.params.get("std", 0.0) < 0:
            self.error("AG012", "`std` must not be negative", path + ("std",))
        if init == "uniform" and spec.params.get("low", 0.0) > spec.params.get("high", 1.0):
            self.error("AG012", "`low` must not be greater than `high`", path + ("low",))
        if "seed" in entry and init in ("normal", "uniform") and self.expect_type(
                entry["seed"], (int,), "`seed`", path + ("seed",), "an integer"):
            if entry["seed"] < 0:
                self.error("AG012", "`seed` must be a non-negative integer", path + ("seed",))
            spec.seed = entry["seed"]

    def file_source(self, entry: dict, spec: InputSpec, path: tuple) -> None:
        file = entry["file"]
        if not self.expect_type(file, (str,), "`file`", path + ("file",), "a path string"):
            return
        spec.file = file
        archive = next((s for s in (".npz", ".safetensors") if file.lower().endswith(s)), None)
        if not (archive or file.lower().endswith(".npy")):
            self.error("AG013", f"input files are .npy, .npz or .safetensors, not {file!r}", path + ("file",))
        if archive and "key" not in entry:
            self.error("AG006", f"input '{spec.name}' reads an {archive}: give the array's `key`", path, key=True)
        if "key" in entry and self.expect_type(entry["key"], (str,), "`key`", path + ("key",), "a string"):
            spec.key = entry["key"]

    # ---- nodes -------------------------------------------------------------------

    def node(self, name: str, entry: Any, path: tuple, known: set[str]) -> list[NodeSpec]:
        if isinstance(entry, (str, dict)):
            if isinstance(entry, str):
                specs = self.expression_node(name, entry, path)       # its constants checked there
            else:
                specs = self.structured_node(name, entry, path, known)
                for spec in specs:
                    self.check_constants(spec, from_expression=False)
            if any(s.op == "getitem" and not (len(s.args) >= 2 and isinstance(s.args[1], expressions.Index))
                   for s in specs):
                # The subscript's op is made by `x[...]`; by name it would take any argument.
                written = next(s for s in specs if s.op == "getitem")
                self.c.error("AG016", "unknown op 'getitem': a subscript is written as one, e.g. x[0] or x[:, 1]",
                             written.pos)
                return []
            return specs
        self.error("AG005", f"node '{name}' must be an expression string or a mapping with `op`, "
                   f"not {_kind(entry)}", path)
        return []

    def check_constants(self, spec: NodeSpec, from_expression: bool) -> None:
        """Scalars and devices written as arguments: what no op can take, reported where written."""
        for value, pos in zip(spec.args, spec.arg_pos):
            if value.__class__ is not TensorRef and (message := _problem(value, None, from_expression)) is not None:
                self.c.error("AG009" if message is _META_DEVICE else "AG019", message, pos)
        for key, value in spec.kwargs.items():
            if (message := _problem(value, key, from_expression)) is not None:
                self.c.error("AG009" if message is _META_DEVICE else "AG019", message, spec.kwarg_pos.get(key))

    def expression_node(self, name: str, text: str, path: tuple) -> list[NodeSpec]:
        stripped = text.lstrip()
        start = one_line_scalar(self.doc, path, text) if stripped else None
        if start is not None:
            found = expressions.shape_of(stripped)
            if found is not None:
                shape, names, shifts = found
                if shape.builder is None:
                    shape.builder = _builder(shape)
                if shape.builder is not _NO_BUILDER:
                    line, col = start
                    return shape.builder(name, names, shifts, line, col + len(text) - len(stripped), path, text)
        locate = scalar_locator(self.doc, path)

        def at(offset: int | None) -> Pos:
            return locate(offset) if offset is not None else self.doc.pos(path)

        try:
            calls = expressions.parse_expression(name, text)
        except ExpressionError as exc:
            self.c.error(exc.code, exc.message, at(exc.offset), exc.hint)
            return []
        Ref, Index = expressions.Ref, expressions.Index

        def refs(value):
            if value.__class__ is Ref:
                return TensorRef(value.name, locate(value.offset))
            if isinstance(value, list):
                return [refs(v) for v in value]
            return value

        specs = [NodeSpec(call.name, name, call.op,
                         [a if a.__class__ in _PLAIN or a.__class__ is Index else refs(a) for a in call.args],
                         {k: refs(v) for k, v in call.kwargs.items()} if call.kwargs else {},
                         locate(call.offset), [locate(o) for o in call.arg_offsets],
                         {k: locate(o) for k, o in call.kwarg_offsets.items()} if call.kwarg_offsets else {},
                         path, text) for call in calls]
        for spec in specs:
            self.check_constants(spec, from_expression=True)
        return specs

    def structured_node(self, name: str, entry: dict, path: tuple, known: set[str]) -> list[NodeSpec]:
        if "op" not in entry:
            self.error("AG006", f"node '{name}' needs `op` (or write it as an expression string)", path, key=True)
            return []
        op = entry["op"]
        if not self.expect_type(op, (str,), "`op`", path + ("op",), "an op name"):
            return []
        args = entry.get("args", [])
        if not isinstance(args, list):
            args = [args]           # `args: x` is one argument, as `args: [x]`
            arg_paths = [path + ("args",)]
        else:
            arg_paths = [path + ("args", i) for i in range(len(args))]

        def refs(value, vpath):
            if isinstance(value, str) and value in known:
                return TensorRef(value, self.doc.pos(vpath))
            if isinstance(value, list):
                return [refs(v, vpath + (i,)) for i, v in enumerate(value)]
            if isinstance(value, dict):
                self.error("AG005", "an argument cannot be a mapping", vpath)
            return value

        kwargs = {k: refs(v, path + (k,)) for k, v in entry.items() if k not in ("op", "args")}
        for k in kwargs:
            if not k.isidentifier():
                self.error("AG017", f"'{k}' is not a keyword argument name", path + (k,), key=True)
        return [NodeSpec(
            name=name, owner=name, op=op, args=[refs(a, p) for a, p in zip(args, arg_paths)], kwargs=kwargs,
            pos=self.doc.pos(path + ("op",)), arg_pos=[self.doc.pos(p) for p in arg_paths],
            kwarg_pos={k: self.doc.key_pos(path + (k,)) for k in kwargs}, path=path)]

    # ---- backward, expect ----------------------------------------------------------

    def backward(self, value: Any, path: tuple) -> list[BackwardSpec]:
        if isinstance(value, dict):
            return [p for p in [self.backward_pass(value, path)] if p]
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            return [p for i, v in enumerate(value) if (p := self.backward_pass(v, path + (i,)))]
        if isinstance(value, list) and any(isinstance(v, dict) for v in value):
            self.error("AG005", "`backward` is a list of root names or a list of passes (mappings), not both", path)
            return []
        roots = self.names_list(value, path, "`backward`")
        return [BackwardSpec(roots=roots, pos=self.doc.pos(path))] if roots else []

    def backward_pass(self, entry: dict, path: tuple) -> BackwardSpec | None:
        self.check_keys(entry, BACKWARD_KEYS, path, "a backward pass")
        if "of" not in entry:
            self.error("AG006", "a backward pass needs `of` (its root or roots)", path)
            return None
        spec = BackwardSpec(roots=self.names_list(entry["of"], path + ("of",), "`of`"), pos=self.doc.pos(path))
        if entry["of"] == []:
            self.error("AG006", "`of` names no root; give at least one", path + ("of",))
        if "grad_tensors" in entry:
            grads = entry["grad_tensors"]
            gpath = path + ("grad_tensors",)
            if not isinstance(grads, list):
                self.error("AG028", "`grad_tensors` is a list with one gradient per root", gpath)
            elif len(grads) != len(spec.roots):
                self.error("AG028", f"`grad_tensors` has {len(grads)} entries for {len(spec.roots)} root(s); "
                           "give one per root", gpath)
            else:
                spec.grad_tensors = []
                for i, g in enumerate(grads):
                    if isinstance(g, str):
                        spec.grad_tensors.append(TensorRef(g, self.doc.pos(gpath + (i,))))
                    else:
                        spec.grad_tensors.append(self.literal(g, gpath + (i,)))
                    spec.grad_pos.append(self.doc.pos(gpath + (i,)))
        if "inputs" in entry:
            spec.inputs = self.names_list(entry["inputs"], path + ("inputs",), "`inputs`")
        for flag in ("retain_graph", "create_graph"):
            if flag in entry and self.expect_type(entry[flag], (bool,), f"`{flag}`", path + (flag,),
                                                  "true or false"):
                setattr(spec, flag, entry[flag])
        return spec

    def expect(self, value: Any, path: tuple) -> ExpectSpec | None:
        if not self.expect_type(value, (dict,), "`expect`", path, "a mapping"):
            return None
        self.check_keys(value, EXPECT_KEYS, path, "`expect`")
        spec = ExpectSpec(pos=self.doc.pos(path), train="train" in value)
        for tol in ("atol", "rtol"):
            if tol not in value:
                continue
            number = self.number(value[tol], f"`{tol}`", path + (tol,), finite=True)
            if number is not None and number < 0:
                self.error("AG005", f"`{tol}` must not be negative", path + (tol,))
            elif number is not None:
                setattr(spec, tol, number)
        for section in ("outputs", "grads"):
            entries = value.get(section, {})
            spath = path + (section,)
            if not self.expect_type(entries, (dict,), f"`expect.{section}`", spath, "a mapping of name: value"):
                continue
            for name, expected in entries.items():
                epath = spath + (name,)
                # null under grads: this gradient must be None (nothing reached it).
                if not (expected is None and section == "grads") and literal_shape(expected) is None:
                    self.error("AG030", f"expected value of '{name}' must be a number or a nested list", epath)
                    continue
                getattr(spec, section).append(Expectation(name, expected, self.doc.key_pos(epath)))
        return spec


# ---- the NodeSpecs of an expression's shape, made by a function written for the shape ----------
# A 100,000-node file repeats a few shapes (`tanh(n41) * 0.999 + x`): each shape gets a
# function that makes its NodeSpecs from the names and the column where the text starts,
# with no walk over Calls per node. Only shapes whose every argument is a name, a number
# or a list of them, with no constant an op could refuse (checked here, once), get one.

def _NO_BUILDER(*args):
    raise AssertionError("a shape without a builder is read Call by Call")


def _builder(shape: expressions.Shape):
    """The function `(target, names, shifts, line, col, path, text) -> [NodeSpec]` of one
    shape (col: the column of the text's first non-blank), or _NO_BUILDER."""
    Ref, target = expressions.Ref, expressions.TARGET
    constants: list = []
    positions: dict[int, str] = {}

    def name(written: str) -> str:
        if written.startswith(target):
            return "T" + (f" + {written[len(target):]!r}" if written != target else "")
        return f"N[{int(written[1:])}]" if written[:1] == "Z" and written[1:].isdigit() else repr(written)

    def pos(offset: int) -> str:
        if offset not in positions:
            positions[offset] = f"p{len(positions)}"
        return positions[offset]

    def value(v) -> str | None:
        if v.__class__ is Ref:
            return f"TensorRef({name(v.name)}, {pos(v.offset)})"
        if isinstance(v, list):
            items = [value(x) for x in v]
            return None if None in items else "[" + "".join(i + ", " for i in items) + "]"
        if type(v) in (int, float, bool, type(None)) and _problem(v, None, True) is None:
            constants.append(v)
            return f"K[{len(constants) - 1}]"
        return None                     # an Index, or a constant to report: read Call by Call

    specs = []
    for c in shape.calls:
        args = [value(a) for a in c.args]
        kwargs = {name(k): value(v) for k, v in c.kwargs.items()}
        if None in args or None in kwargs.values():
            return _NO_BUILDER
        specs.append(
            f"NodeSpec({name(c.name)}, T, {name(c.op)}, [{', '.join(args)}], "
            + (f"{{{', '.join(f'{k}: {v}' for k, v in kwargs.items())}}}" if kwargs else "E") + f", {pos(c.offset)}, "
            f"[{', '.join(pos(o) for o in c.arg_offsets)}], "
            + (f"{{{', '.join(f'{name(k)}: {pos(o)}' for k, o in c.kwarg_offsets.items())}}}" if kwargs else "E")
            + ", path, text)")
    lines = ["def build(T, N, S, L, C, path, text):"]
    lines += [f"    {var} = Pos(L, C + {o} + S[{shape.before[o]}])" for o, var in positions.items()]
    lines.append("    return [" + ", ".join(specs) + "]")
    scope = {"NodeSpec": NodeSpec, "TensorRef": TensorRef, "Pos": Pos, "K": tuple(constants), "E": NO_KEYWORDS}
    return codegen.define(lines, scope, "<agrad expression shape>", "build")


def _from_shape(block: NodesBlock, i: int, name: str, text: str, shape=None, names=None, shifts=None
                ) -> list[NodeSpec]:
    """The NodeSpecs of a node of the block kept as its expression's shape (`DocumentReader.columns`);
    `shape`, `names`, `shifts`: its `shape_of`, where the caller has it (column_check)."""
    if shape is None:
        shape, names, shifts = expressions.shape_of(text)
    if shape.builder is None:       # the shapes were forgotten (expressions._MAX_TEMPLATES) and read again
        shape.builder = _builder(shape)
    return shape.builder(name, names, shifts, block.row(i), block.value_col(name), ("nodes", name), text)


def read_document(doc: Document, file: str, default_name: str, collector: Collector) -> GraphSpec:
    spec = DocumentReader(doc, file, collector).read(default_name)
    # Columns inside scalars are found while reading (every NodeSpec read call by call has its
    # positions now; those kept column-wise work theirs out from the block, NodesBlock);
    # the scalars' extents are a quarter of the document's size and nothing asks for them later.
    doc.scalars = {}
    doc._scalar_maps = {}
    return spec

