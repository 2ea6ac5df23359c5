"""`agrad export`: a graph file as an ONNX model, its backward pass too with `--with-grads`.

The graph runs once on its own inputs under a `Trace` (forward, then with `--with-grads`
`agrad.autograd.grad(root, leaves, create_graph=True)`, whose formulas are agrad ops), and
the traced calls the outputs depend on are mapped to ONNX nodes with the export table,
starting from the outputs: a call is mapped as a whole where the table has it, else through
the calls it was written with (a composite op), else it becomes a node of the custom domain
`agrad` (a warning; `--strict` refuses it). Shapes and dtypes come from the traced tensors
and are written as `value_info`, so every edge shows its shape. The model is checked with
`onnx.checker` (full check) before it is written.

Leaves: the weights (inputs read from files or written as values) become initializers;
inputs made from a `shape` and an `init` (data placeholders) become the model's inputs.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .export_table import COMPLEX, TABLE, NoMapping
from .problems import ModelError, require_onnx
from .tracing import Trace

OPSET = 18
CUSTOM_DOMAIN = "agrad"


@dataclass
class ExportResult:
    path: Path
    nodes: int
    custom: list[str] = field(default_factory=list)      # agrad ops written to the custom domain
    outputs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)       # warnings for stderr


class _Builder:
    """The ONNX graph being made, and the `b` the export table's translators see."""

    def __init__(self, trace: Trace, names: dict[int, str], leaves: dict[str, object], strict: bool):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.trace = trace
        self.names = dict(names)                 # id(tensor) -> ONNX name
        self.leaves = leaves
        self.strict = strict
        self.nodes: list = []
        self.initializers: list = []
        self.value_info: dict[str, object] = {}
        self.custom: list[str] = []
        self.used_names = set(names.values())
        self.keep: list = []                      # tensors whose ids are names
        self.counter = 0
        self.emitting: set[int] = set()
        self.call = None

    # ---- names --------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        while True:
            self.counter += 1
            name = f"{base}_{self.counter}"
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def const(self, array: np.ndarray, base: str = "const") -> str:
        name = self.fresh(base)
        self.initializers.append(self.numpy_helper.from_array(_pairs(np.asarray(array)), name))
        return name

    def ints(self, values, scalar: bool = False) -> str:
        return self.const(np.array(values, dtype=np.int64) if not scalar else np.array(int(values), dtype=np.int64))

    def scalar(self, value, dtype) -> str:
        return self.const(np.array(value, dtype=dtype))

    # ---- what translators ask -------------------------------------------------------
    @property
    def op(self) -> str:
        return self.call.op

    @property
    def out_dtype(self) -> np.dtype:
        result = self.call.result
        first = result[0] if isinstance(result, (tuple, list)) else result
        return np.dtype(first.detach().numpy().dtype)

    @property
    def out_shape(self) -> list[int]:
        return list(self.call.result.shape)

    def result_array(self) -> np.ndarray:
        return np.array(self.call.result.detach().numpy())

    def shape(self, x) -> tuple:
        return tuple(x.shape)

    def dtype(self, x) -> np.dtype:
        return np.dtype(x.detach().numpy().dtype) if _is_tensor(x) else np.dtype(type(x))

    def common_dtype(self, x, y) -> np.dtype:
        """PyTorch's promotion of two operands (a Python number takes the tensor's kind)."""
        tensors = [t for t in (x, y) if _is_tensor(t)]
        if len(tensors) == 2:
            dx, dy = self.dtype(x), self.dtype(y)
            if dx == dy:
                return dx
            if x.dim() == 0 and y.dim() > 0 and (dx.kind == "f") == (dy.kind == "f"):
                return dy
            if y.dim() == 0 and x.dim() > 0 and (dx.kind == "f") == (dy.kind == "f"):
                return dx
            return np.result_type(dx, dy)
        t = tensors[0]
        other = y if t is x else x
        dt = self.dtype(t)
        if isinstance(other, float) and dt.kind != "f":
            return np.dtype(np.float32)
        return dt

    def cast(self, name: str, dtype) -> str:
        from onnx import helper
        return self.node("Cast", [name], to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))

    def t(self, x, dtype=None) -> str:
        """The ONNX name of argument `x` (a tensor, emitted first if need be, or a number),
        cast to `dtype` when given and different."""
        if not _is_tensor(x):
            if x is None:
                return ""
            return self.scalar(x, dtype if dtype is not None else np.float32)
        name = self.resolve(x)
        if dtype is not None and self.dtype(x) != np.dtype(dtype):
            return self.cast(name, dtype)
        return name

    def node(self, op_type: str, inputs: list[str], outputs: int = 1, domain: str = "", **attrs):
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(self.helper.make_node(op_type, inputs, names, name=self.fresh(f"n_{op_type}"),
                                                domain=domain or None, **attrs))
        return names[0] if outputs == 1 else names

    # ---- the walk from the outputs -----------------------------------------------------
    def resolve(self, tensor) -> str:
        key = id(tensor)
        name = self.names.get(key)
        if name is not None and (key in self.leaf_ids or key in self.emitted):
            return name
        if not self.emitting:               # a walk from an output: what it reads first, deepest first
            for earlier in self._inputs_first(tensor):
                self.resolve(earlier)
        producers = self.trace.producers.get(key)
        if not producers:
            # made outside any traced op (a gradient seed, a zeros buffer): a constant
            return self._named(tensor, self.const(np.array(tensor.detach().numpy()),
                                                  self.names.get(key, "const")))
        if key in self.emitting:
            raise ModelError([f"cannot export: the traced op calls form a cycle at {producers[-1].op}"])
        self.emitting.add(key)
        try:
            out = self._emit(tensor, producers)
        finally:
            self.emitting.discard(key)
        return out

    def _inputs_first(self, tensor) -> list:
        """The not yet emitted tensors the outermost calls that made `tensor` read, transitively,
        each after those it reads: resolved in this order, each translation finds its inputs emitted
        and resolve recurses a call deep, not once per op of the longest path (a chain of a few hundred
        ops was past Python's recursion limit)."""
        order, seen = [], {id(tensor)}
        stack = [(tensor, False)]
        while stack:
            t, expanded = stack.pop()
            if expanded:
                order.append(t)
                continue
            producers = self.trace.producers.get(id(t))
            if not producers:
                continue                    # a leaf, or a constant: resolved where it is read
            stack.append((t, True))
            for arg in reversed(producers[-1].args):
                for a in arg if isinstance(arg, (list, tuple)) else (arg,):
                    if _is_tensor(a) and id(a) not in seen and id(a) not in self.emitted and id(a) not in self.leaf_ids:
                        seen.add(id(a))
                        stack.append((a, False))
        return order[:-1]                   # (the last is `tensor` itself)

    def _named(self, tensor, name: str) -> str:
        self.emitted.add(id(tensor))
        wanted = self.names.get(id(tensor))
        if wanted is not None and wanted != name and wanted not in self.taken_outputs:
            # the graph file's own name for it, on the node that makes it
            last = self.nodes[-1] if self.nodes else None
            if last is not None and name in last.output:
                last.output[list(last.output).index(name)] = wanted
            else:
                self.nodes.append(self.helper.make_node("Identity", [name], [wanted], name=self.fresh("n_name")))
            self.taken_outputs.add(wanted)
            name = wanted
        self.names[id(tensor)] = name
        self.keep.append(tensor)
        self._info(name, tensor)
        return name

    def _info(self, name: str, tensor) -> None:
        try:
            self.value_info[name] = _declared(name, tensor)
        except (KeyError, TypeError, ValueError):
            return

    def _emit(self, tensor, producers) -> str:
        """Map the outermost call that returned `tensor` that the table (or, failing that, the
        custom domain, for the innermost) can express."""
        for i, call in enumerate(reversed(producers)):
            innermost = i == len(producers) - 1
            fn = TABLE.get(call.op)
            if fn is not None and (call.op in COMPLEX or not _reads_complex(call)):
                previous, self.call = self.call, call
                try:
                    out = fn(self, dict(zip(call.names, call.args)))
                except NoMapping:
                    out = None          # what it made stays, unused (pruned at the end): inputs it
                                        # resolved on the way may be used by what comes next
                finally:
                    self.call = previous
                if out is not None:
                    bound = self._bind(call, tensor, out)
                    if bound is not None:
                        return bound
            if _constant_call(call, self):
                return self._named(tensor, self.const(np.array(tensor.detach().numpy())))
            if innermost:
                return self._bind(call, tensor, self._custom(call))
        raise AssertionError("unreachable")

    def _bind(self, call, tensor, out) -> str:
        result = call.result
        if isinstance(result, (tuple, list)):
            outs = out if isinstance(out, list) else [out]
            found = None
            for t, name in zip(result, outs):
                if t is not None and id(t) not in self.emitted:
                    bound = self._named(t, name)
                    if t is tensor:
                        found = bound
            return found if found is not None else (self.names.get(id(tensor)) if id(tensor) in self.emitted
                                                    else None)
        return self._named(tensor, out)

    def _custom(self, call) -> list[str] | str:
        if self.strict:
            raise ModelError([f"agrad op '{call.op}' has no ONNX equivalent (--strict refuses the custom domain "
                              f"'{CUSTOM_DOMAIN}')"])
        if call.op not in self.custom:
            self.custom.append(call.op)
        inputs, attrs = [], {}
        for name, value in zip(call.names, call.args):
            if _is_tensor(value):
                inputs.append(self.resolve(value))
            elif isinstance(value, (list, tuple)) and value and all(_is_tensor(v) for v in value):
                inputs += [self.resolve(v) for v in value]
            elif value is not None:
                attrs[name] = list(value) if isinstance(value, tuple) else value
        result = call.result
        count = len(result) if isinstance(result, (tuple, list)) else 1
        previous, self.call = self.call, call
        try:
            return self.node(call.op, inputs, outputs=count, domain=CUSTOM_DOMAIN,
                             **{k: v for k, v in attrs.items() if isinstance(v, (int, float, str, list))})
        finally:
            self.call = previous


def _live(nodes: list, wanted: set[str]) -> list:
    """The nodes the outputs depend on, in order (a mapping abandoned half-way leaves some that
    nothing reads)."""
    needed, kept = set(wanted), []
    for node in reversed(nodes):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
    return kept[::-1]


def _pairs(array: np.ndarray) -> np.ndarray:
    """A complex array as ONNX holds one: reals with a trailing dim of 2 (real, imaginary)."""
    return np.stack([array.real, array.imag], -1) if array.dtype.kind == "c" else array


def _declared(name: str, tensor):
    """The value_info of `tensor`: a complex one as its (..., 2) real pairs."""
    from onnx import helper

    dtype, shape = np.dtype(tensor.detach().numpy().dtype), list(tensor.shape)
    if dtype.kind == "c":
        dtype, shape = np.empty(0, dtype).real.dtype, shape + [2]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), shape)


def _reads_complex(call) -> bool:
    """Whether a call reads or returns a complex tensor (which only COMPLEX's translators take)."""
    values = list(call.args) + [call.result]
    for value in values:
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if _is_tensor(v) and v.is_complex():
                return True
    return False


def _is_tensor(x) -> bool:
    import agrad
    return isinstance(x, agrad.Tensor)


_VALUE_ONLY = ("zeros_like", "ones_like", "full_like", "empty_like")


def _constant_call(call, b) -> bool:
    """A call none of whose tensor arguments depends on a model input or a weight: its result
    is a constant of the model (a mask built from a constant, a folded shape)."""
    if call.op in _VALUE_ONLY:
        return True
    for value in call.args:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for v in items:
            if _is_tensor(v) and b.depends(v):
                return False
    return True


def export_graph(graph_path, model_path, *, with_grads: bool = False, strict: bool = False,
                 plugins=()) -> ExportResult:
    """Trace the graph at `graph_path` and write it as ONNX to `model_path`; ModelError when it
    cannot be exported (nothing written)."""
    onnx = require_onnx()
    from onnx import helper

    import agrad
    from agrad import graphs
    from agrad.graphs.runner import Runner, output_names
    from agrad.graphs.saving import write_atomically

    # traced on the CPU: an ONNX model has no device, and the trace reads every value back as a
    # NumPy array, which a graph's default `device: dask` or `cuda` would not give
    graph = graphs.load(graph_path, device="cpu", plugins=plugins)
    checked = graph._checked
    spec = checked.spec
    runner = Runner(checked, str(graph_path))
    elsewhere = [f"'{name}' ({plan.device})" for name, plan in checked.leaves.items() if plan.device != "cpu"]
    if elsewhere:       # an input's own `device:` outranks the default given to load() above
        raise ModelError([f"{graph_path}: export traces the graph on the CPU; these inputs name another "
                          f"device: {', '.join(elsewhere)}"])
    leaves = runner.make_leaves()
    with Trace() as trace:
        env = runner.forward(leaves)
        outputs = [(name, env[name]) for name in output_names(checked)]
        params = [(n, t) for n, t in leaves.items() if t.requires_grad]
        grads = []
        if with_grads:
            if not spec.backward:
                raise ModelError([f"{graph_path}: --with-grads needs a `backward:` root in the graph file"])
            first = spec.backward[0]
            roots = [env[r.name] for r in first.roots]
            if first.inputs is not None:          # `backward: {of: ..., inputs: [...]}` names the leaves
                params = [(r.name, env[r.name]) for r in first.inputs]
            if not params:
                raise ModelError([f"{graph_path}: --with-grads: no input has requires_grad: true"])
            seeds = None
            if first.grad_tensors is not None:    # as the runner makes them
                from .. import spec as spec_module
                seeds = [env[g.name] if isinstance(g, spec_module.TensorRef) else
                         agrad.tensor(g, dtype=root.dtype, device=root.device)
                         for g, root in zip(first.grad_tensors, roots)]
            found = agrad.autograd.grad(roots, [t for _, t in params], grad_outputs=seeds, create_graph=True,
                                        allow_unused=True)
            grads = [(f"grad_{n}", g) for (n, _), g in zip(params, found) if g is not None]
            outputs += [(r.name, env[r.name]) for r in spec.backward[0].roots
                        if r.name not in {n for n, _ in outputs}]

    names = {}
    for name, value in env.items():
        if _is_tensor(value):
            names.setdefault(id(value), name)
    builder = _Builder(trace, names, leaves, strict)
    builder.emitted, builder.taken_outputs = set(), set()
    builder.leaf_ids = {id(t) for t in leaves.values()}
    depends = {}

    def depends_on_leaf(tensor) -> bool:
        key = id(tensor)
        if key in builder.leaf_ids:
            return True
        if key not in depends:
            depends[key] = False
            producers = trace.producers.get(key, [])
            depends[key] = any(_is_tensor(v) and depends_on_leaf(v)
                               for call in producers[:1] for arg in call.args
                               for v in (arg if isinstance(arg, (list, tuple)) else (arg,)))
        return depends[key]
    builder.depends = depends_on_leaf

    inputs, initializers = [], []
    for name, t in leaves.items():
        plan = checked.leaves[name]
        array = np.array(t.detach().numpy())
        if plan.spec.kind == "init":
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype),
                                                        list(array.shape)))
        else:
            initializers.append(builder.numpy_helper.from_array(array, name))
        builder.emitted.add(id(t))
        builder.keep.append(t)

    graph_outputs = []
    for name, tensor in outputs + grads:
        if not _is_tensor(tensor):
            raise ModelError([f"{graph_path}: output '{name}' is not a tensor"])
        try:
            produced = builder.resolve(tensor)
        except RecursionError:
            # resolve emits what an output's outermost calls read first (_inputs_first); a long chain
            # of calls with no translation of their own, read through their inner calls, still
            # recurses once a call: refused as the graph's size, not an internal error
            raise ModelError([f"{graph_path}: output '{name}' is made by a chain of ops too long to export "
                              f"(Python's recursion limit, {sys.getrecursionlimit()} frames)"]) from None
        if produced != name:
            builder.nodes.append(helper.make_node("Identity", [produced], [name], name=builder.fresh("n_out")))
        graph_outputs.append(_declared(name, tensor))
        builder.used_names.add(name)

    builder.nodes = _live(builder.nodes, {o.name for o in graph_outputs})
    used = {i for n in builder.nodes for i in n.input} | {o.name for o in graph_outputs}
    inputs = [i for i in inputs if i.name in used]
    initializers = [i for i in initializers + builder.initializers if i.name in used]
    output_set = {o.name for o in graph_outputs} | {i.name for i in inputs} | {i.name for i in initializers}
    value_info = [v for n, v in builder.value_info.items() if n not in output_set]
    model_graph = helper.make_graph(builder.nodes, spec.name, inputs, graph_outputs, initializers,
                                    value_info=value_info)
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(CUSTOM_DOMAIN, 1)] if builder.custom else [])
    model = helper.make_model(model_graph, opset_imports=opsets, producer_name="agrad",
                              producer_version=_version())
    model.ir_version = min(model.ir_version, 9)
    try:        # the edges inside one mapping (threshold_backward's Greater) get their shapes too
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:                 # noqa: BLE001 - then those edges go without; the checker decides
        pass
    try:
        onnx.checker.check_model(model, full_check=not builder.custom)
    except Exception as exc:          # noqa: BLE001 - the checker's ValidationError and inference errors
        raise ModelError([f"{graph_path}: the exported model does not pass onnx.checker: "
                          f"{str(exc).splitlines()[0][:300]} (a bug in agrad export)"]) from None
    data = model.SerializeToString()
    write_atomically(model_path, lambda f: f.write(data))
    notes = []
    if with_grads and len(spec.backward) > 1:
        notes.append(f"the graph has {len(spec.backward)} backward passes; the model's gradients are those of the "
                     "first (`run` accumulates every pass into .grad)")
    return ExportResult(Path(model_path), len(builder.nodes), builder.custom, [o.name for o in graph_outputs], notes)


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("agrad")
    except Exception:                 # noqa: BLE001
        return os.environ.get("AGRAD_VERSION", "0")
