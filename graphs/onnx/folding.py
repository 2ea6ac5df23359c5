"""Values known before any data: integer initializers, `Constant` nodes, and every node all
of whose inputs are known (Shape of a value whose shape is static, the Gather/Concat/
Unsqueeze chains exporters build from it, Reshape targets, Range, ConstantOfShape …).

Such a node is evaluated here, once, with onnx's reference implementation of its own opset,
so an integer tensor never becomes a leaf of the graph file and a shape written into it is a
list of numbers. Float initializers are the model's parameters and are never folded
(their gradients are the point); a float constant computed from other constants is.
"""
from __future__ import annotations

import numpy as np

from .problems import require_onnx

# Ops whose result depends on more than their inputs' values, or that are too heavy to run
# at import time, or that make a sequence (a list of values the import table keeps, never an
# array; SequenceEmpty has no inputs at all): never folded. (Gradient's result depends on the
# graph around it, not only on its inputs.)
NOT_FOLDED = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                        "Bernoulli", "Loop", "Scan", "If", "LSTM", "GRU", "RNN", "Conv", "ConvTranspose",
                        "SequenceEmpty", "SequenceConstruct", "SplitToSequence", "SequenceInsert", "SequenceErase",
                        "Gradient"})
# Past this many elements a folded result is not worth embedding in the weights.
MAX_FOLDED = 1 << 22


def shape_only(op_type: str) -> bool:
    """Ops that read only their input's shape, so fold whenever the shape is static."""
    return op_type in ("Shape", "Size", "EyeLike")


def evaluate(node, inputs: list, opset: int) -> list[np.ndarray]:
    """The outputs of `node` on `inputs` (arrays, None for an absent optional input)."""
    onnx = require_onnx()
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [f"in{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outputs = [f"out{i}" if o else "" for i, o in enumerate(node.output)]
    clone = helper.make_node(node.op_type, names, outputs, domain=node.domain or None)
    clone.attribute.extend(node.attribute)
    graph = helper.make_graph([clone], "fold", [helper.make_empty_tensor_value_info(n) for n in names if n],
                              [helper.make_empty_tensor_value_info(o) for o in outputs if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    feeds = {n: x for n, x in zip(names, inputs) if n}
    results = ReferenceEvaluator(model).run(None, feeds)
    out = iter(results)
    return [np.asarray(next(out)) if o else None for o in outputs]


def constant_attribute(node) -> np.ndarray:
    """The value of a `Constant` node, whatever attribute holds it."""
    require_onnx()
    from onnx import helper, numpy_helper

    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if attr.name == "value":
            return numpy_helper.to_array(value)
        if attr.name in ("value_float", "value_int"):
            return np.array(value, dtype=np.float32 if attr.name == "value_float" else np.int64)
        if attr.name in ("value_floats", "value_ints"):
            return np.array(list(value), dtype=np.float32 if attr.name == "value_floats" else np.int64)
    raise ValueError("a Constant node without a value attribute (sparse or string constants are not supported)")
