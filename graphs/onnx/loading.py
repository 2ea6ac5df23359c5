"""Reading an ONNX model without trusting it, then normalising it.

A model file is data from anywhere. Before any of onnx's own passes runs on it, it is
refused (with what and where) when it is not a regular file or not a protobuf (a
truncated download), when a name holds control characters, when external data points
outside the model's folder or at something other than a regular file, when a declared
shape is absurd (negative, or more bytes than this machine has), or when its nodes form a
cycle. Then: every dynamic dimension of a graph input gets a size (`--shape`, else a batch
of 1 for the first dimension), the model goes to one opset with `onnx.version_converter`,
and `onnx.shape_inference` gives every value its shape.
"""
from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..inputs import memory_bytes
from .problems import ModelError, require_onnx

TARGET_OPSET = 18             # older models are converted up to it; newer ones are kept as they are
_MAX_MODEL_BYTES = 2**31 - 1  # protobuf's own limit for one message


@dataclass
class LoadedModel:
    model: object                      # onnx.ModelProto, normalised
    path: Path
    opset: int                         # of the default domain, after conversion
    original_opset: int
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)   # value name -> static shape
    dtypes: dict[str, np.dtype] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)                  # warnings for stderr
    dynamic_batch: bool = False        # an input's first dimension was symbolic in the model


def _memory_bytes() -> int:
    # where the system does not say, a limit no model reaches before its own shapes are checked
    memory = memory_bytes()
    return memory if memory is not None else 2**40


def printable(name: str) -> str:
    """A name as a message may show it: escapes for anything unprintable."""
    return name.encode("unicode_escape").decode("ascii") if not name.isprintable() else name


def read_model(path: str | os.PathLike):
    """The ModelProto in `path`, external data not yet read; ModelError for a file that is none."""
    onnx = require_onnx()
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise ModelError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    if not stat.S_ISREG(info.st_mode):
        raise ModelError([f"{path}: not a regular file (a folder, a pipe or a device)"])
    if info.st_size > _MAX_MODEL_BYTES:
        raise ModelError([f"{path}: {info.st_size:,} bytes is past protobuf's 2 GiB limit for one model; "
                          "save the weights as external data (onnx.save(..., save_as_external_data=True))"])
    data = path.read_bytes()
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as exc:       # noqa: BLE001 - protobuf's DecodeError and its recursion limit alike
        raise ModelError([f"{path}: not an ONNX model (a truncated or corrupt protobuf: {exc})"]) from None
    if not model.HasField("graph") or not model.opset_import:
        raise ModelError([f"{path}: not an ONNX model (no graph or no opset_import)"])
    undecoded = _undecoded_text(model)
    if undecoded is not None:
        raise ModelError([f"{path}: not an ONNX model: its text field {undecoded} is not UTF-8 (a corrupt file?)"])
    return model


def _undecoded_text(model) -> str | None:
    """Where the first text field is that protobuf could not decode: ONNX's schema is proto2, whose
    parser hands a string field of invalid UTF-8 back as bytes rather than failing, and every name
    the importer reads is such a field. Walked with a stack (subgraphs nest in attributes), by the
    schema's fields: only text and messages are read, never a tensor's raw bytes (which reading
    would copy)."""
    from google.protobuf.message import Message

    stack = [("model", model)]
    while stack:
        where, message = stack.pop()
        for field in message.DESCRIPTOR.fields:
            if field.type == field.TYPE_STRING:
                value = getattr(message, field.name)
                many = value.__class__ is not str and value.__class__ is not bytes    # a repeated field
                for i, text in enumerate(value if many else (value,)):
                    if text.__class__ is not str:
                        return f"{where}.{field.name}" + (f"[{i}]" if many else "")
            elif field.type == field.TYPE_MESSAGE:
                value = getattr(message, field.name)
                if not isinstance(value, Message):
                    stack.extend((f"{where}.{field.name}[{i}]", item) for i, item in enumerate(value))
                elif message.HasField(field.name):     # (an unset one is an empty default: TypeProto nests forever)
                    stack.append((f"{where}.{field.name}", value))
    return None


def _names_problems(path: Path, graph) -> list[str]:
    problems = []

    def check(kind: str, name: str) -> None:
        if any(ord(c) < 32 or ord(c) == 127 or 0x80 <= ord(c) < 0xA0 for c in name):
            problems.append(f"{path.name}: {kind} name '{printable(name)}' holds control characters")

    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        check("value", value.name)
    for init in graph.initializer:
        check("initializer", init.name)
    for i, node in enumerate(graph.node):
        check(f"node {i}", node.name)
        check(f"node {i} op type", node.op_type)
        for name in list(node.input) + list(node.output):
            check(f"node {i} value", name)
    return problems


_ONNX_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
                9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def np_dtype(elem_type: int) -> np.dtype | None:
    kind = _ONNX_DTYPES.get(elem_type)
    return None if kind is None else np.dtype(kind)


def _tensor_bytes(tensor) -> int | None:
    dtype = np_dtype(tensor.data_type)
    if dtype is None or any(d < 0 for d in tensor.dims):
        return None
    return math.prod(tensor.dims) * dtype.itemsize


def _external_data(path: Path, graph) -> list[str]:
    """Read each external tensor into the model, checking where it points first."""
    problems = []
    folder = path.resolve().parent
    memory = _memory_bytes()
    for tensor in graph.initializer:
        declared = math.prod(tensor.dims) if all(d >= 0 for d in tensor.dims) else -1
        where = f"{path.name}: initializer '{printable(tensor.name)}'"
        if declared < 0:
            problems.append(f"{where}: negative dimension in {list(tensor.dims)}")
            continue
        nbytes = _tensor_bytes(tensor)
        if nbytes is not None and nbytes > memory:
            problems.append(f"{where}: declares {list(tensor.dims)}, {nbytes / 2**30:.1f} GiB, more than this "
                            f"machine's memory")
            continue
        if tensor.data_location != 1:        # onnx.TensorProto.EXTERNAL
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        # a NUL names no file (and makes resolve() raise ValueError): refused as any other bad location
        target = (folder / location).resolve() if location and "\0" not in location else None
        if not location or os.path.isabs(location) or target is None or folder not in target.parents:
            problems.append(f"{where}: external data '{printable(location)}' is not a file inside the model's "
                            f"folder {folder}")
            continue
        try:
            st = target.stat()
        except OSError as exc:
            problems.append(f"{where}: external data {target}: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{where}: external data {target} is not a regular file (a pipe or a device?)")
            continue
        try:
            offset = int(info.get("offset", 0))
            length = int(info["length"]) if "length" in info else st.st_size - offset
        except ValueError:
            problems.append(f"{where}: external data offset/length are not integers")
            continue
        if nbytes is None or offset < 0 or length != nbytes or offset + length > st.st_size:
            problems.append(f"{where}: external data holds {length:,} bytes at offset {offset:,} of "
                            f"{target.name} ({st.st_size:,} bytes), the tensor needs {nbytes}")
            continue
        with open(target, "rb") as f:
            f.seek(offset)
            tensor.raw_data = f.read(length)
        del tensor.external_data[:]
        tensor.data_location = 0
    return problems


TRAINING_DOMAIN = "ai.onnx.preview.training"


def implicit_reads(node) -> list[str]:
    """The values of the enclosing graph that `node` reads besides its inputs, which it needs made
    before it as much as them: what its subgraphs (an If's branches, a Loop's body) read, ONNX's
    implicit inputs; and the tensors a `Gradient` names in its attributes (`y`, `xs`, `zs`: the
    function it differentiates, defined by the graph's nodes between them)."""
    from onnx import AttributeProto, helper

    reads = []
    if node.op_type == "Gradient" and node.domain == TRAINING_DOMAIN:
        for attr in node.attribute:
            if attr.name in ("y", "xs", "zs"):
                value = helper.get_attribute_value(attr)
                named = value if isinstance(value, list) else [value]
                reads += [n.decode("utf-8", "replace") if isinstance(n, bytes) else n for n in named]
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == AttributeProto.GRAPH else \
            list(attr.graphs) if attr.type == AttributeProto.GRAPHS else []
        for g in graphs:
            inner = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
            for n in g.node:
                reads += [name for name in [*n.input, *implicit_reads(n)] if name not in inner]
                inner.update(n.output)
            reads += [o.name for o in g.output if o.name not in inner]
    return reads


def topological_order(path: Path, graph) -> list[int]:
    """Node indices in an order where each node follows those it reads (its subgraphs' reads of this
    graph's values too); ModelError on a cycle or on a value no one makes."""
    known = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    producer = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out:
                producer[out] = i
    missing, waiting = [], {}
    users: dict[int, list[int]] = {}
    for i, node in enumerate(graph.node):
        needs = set()
        for name in [*node.input, *implicit_reads(node)]:
            if name in known:
                continue
            if name not in producer:
                missing.append(f"{path.name}: node {i} '{printable(node.name)}' ({node.op_type}) reads "
                               f"'{printable(name)}', which no node, input or initializer makes")
                continue
            needs.add(producer[name])
        waiting[i] = len(needs)
        for p in needs:
            users.setdefault(p, []).append(i)
    if missing:
        raise ModelError(missing)
    order = [i for i, n in waiting.items() if n == 0]
    for i in order:               # grows while walked
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                order.append(u)
    if len(order) < len(graph.node):
        stuck = [i for i, n in waiting.items() if n > 0]
        names = ", ".join(f"{i} '{printable(graph.node[i].name)}' ({graph.node[i].op_type})" for i in stuck[:8])
        raise ModelError([f"{path.name}: the graph has a cycle through nodes {names}"
                          + (f" and {len(stuck) - 8} more" if len(stuck) > 8 else "")])
    return order


def _fix_input_shapes(path: Path, graph, shapes: dict[str, tuple[int, ...]]) -> tuple[list[str], bool]:
    """Give every dynamic dimension of a graph input a size: `--shape NAME=...` or batch 1; also
    whether a first dimension was symbolic (a batch)."""
    problems = []
    dynamic = False
    initializers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    names = {i.name for i in inputs}
    for name in shapes:
        if name not in names:
            problems.append(f"--shape {name}: the model has no input '{printable(name)}' (it has: "
                            f"{', '.join(printable(n) for n in names) or 'none'})")
    memory = _memory_bytes()
    for value in inputs:
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            problems.append(f"{path.name}: input '{printable(value.name)}' is not a tensor")
            continue
        dims = tensor_type.shape.dim
        given = shapes.get(value.name)
        if given is not None:
            if tensor_type.HasField("shape") and len(dims) != len(given):
                problems.append(f"--shape {value.name}: {len(given)} dimensions given, the model declares "
                                f"{len(dims)}")
                continue
            for i, size in enumerate(given):
                if i < len(dims) and dims[i].HasField("dim_value") and dims[i].dim_value != size:
                    problems.append(f"--shape {value.name}: dimension {i} is {dims[i].dim_value} in the model, "
                                    f"not {size}")
            dynamic |= bool(dims) and not dims[0].HasField("dim_value")
            del tensor_type.shape.dim[:]
            for size in given:
                tensor_type.shape.dim.add().dim_value = size
            continue
        if not tensor_type.HasField("shape"):
            problems.append(f"{path.name}: input '{printable(value.name)}' has no declared shape; give one with "
                            f"--shape {printable(value.name)}=D0,D1,...")
            continue
        for i, dim in enumerate(dims):
            if dim.HasField("dim_value"):
                if dim.dim_value < 0:
                    problems.append(f"{path.name}: input '{printable(value.name)}' dimension {i} is {dim.dim_value}")
                continue
            if i == 0:
                dim.dim_value = 1        # the batch: 1 unless --shape says otherwise
                dynamic = True
                continue
            problems.append(f"{path.name}: input '{printable(value.name)}' dimension {i} "
                            f"('{printable(dim.dim_param)}') has no size; give it with --shape "
                            f"{printable(value.name)}=D0,D1,...")
        sizes = [d.dim_value for d in dims]
        dtype = np_dtype(tensor_type.elem_type) or np.dtype(np.float64)
        if all(s >= 0 for s in sizes) and math.prod(sizes) * dtype.itemsize > memory:
            problems.append(f"{path.name}: input '{printable(value.name)}' declares shape {sizes}: "
                            f"{math.prod(sizes) * dtype.itemsize / 2**30:.1f} GiB, more than this machine's memory")
    return problems, dynamic


def shapes_disagree(model) -> str | None:
    """Why ONNX's strict shape inference refuses `model` (a declared shape that its ops contradict),
    or None where it does not. `load` infers leniently, so that a model with shapes it cannot infer
    still imports; this is asked only once its translation has failed to load."""
    onnx = require_onnx()
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:          # noqa: BLE001 - inference errors are the model's
        return str(exc).strip().splitlines()[-1][:300]
    return None


def _default_opset(model) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 0


def load(path: str | os.PathLike, shapes: dict[str, tuple[int, ...]] | None = None) -> LoadedModel:
    """The model at `path`, checked and normalised; ModelError listing every problem."""
    onnx = require_onnx()
    path = Path(path)
    model = read_model(path)
    graph = model.graph
    problems = _names_problems(path, graph)
    if problems:
        raise ModelError(problems)
    fixed, dynamic = _fix_input_shapes(path, graph, dict(shapes or {}))
    problems = _external_data(path, graph) + fixed
    if problems:
        raise ModelError(problems)
    topological_order(path, graph)
    original = _default_opset(model)
    if original == 0:
        if any(n.domain in ("", "ai.onnx") for n in graph.node):
            raise ModelError([f"{path.name}: the model imports no opset of the default ONNX domain"])
        # (a model of another domain's ops alone, as one optimizer step of ai.onnx.preview.training, reads
        # its shapes and constants with today's default opset)
        model.opset_import.add(domain="", version=TARGET_OPSET)
        original = TARGET_OPSET
    notes = []
    if original < TARGET_OPSET and not any(n.domain not in ("", "ai.onnx") for n in graph.node):
        try:
            model = onnx.version_converter.convert_version(model, TARGET_OPSET)
        except Exception as exc:      # noqa: BLE001 - the converter's adapters raise anything
            notes.append(f"{path.name}: kept at opset {original} (onnx's version converter failed: "
                         f"{str(exc).splitlines()[0][:160]})")
    opset = _default_opset(model)
    try:
        model = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as exc:          # noqa: BLE001 - inference errors are the model's
        raise ModelError([f"{path.name}: shape inference failed: {str(exc).splitlines()[0][:300]}"]) from None
    loaded = LoadedModel(model, path, opset, original, notes=notes, dynamic_batch=dynamic)
    graph = model.graph
    memory = _memory_bytes()
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
            continue
        dims = tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shape = tuple(d.dim_value for d in dims)
            dtype = np_dtype(tensor_type.elem_type)
            if dtype is not None and math.prod(shape) * dtype.itemsize > memory:
                raise ModelError([f"{path.name}: value '{printable(value.name)}' would have shape {list(shape)}, "
                                  "more than this machine's memory"])
            loaded.shapes[value.name] = shape
        dtype = np_dtype(tensor_type.elem_type)
        if dtype is not None:
            loaded.dtypes[value.name] = dtype
    return loaded
