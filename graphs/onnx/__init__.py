"""ONNX models in and out of graph files: `agrad import` and `agrad export`.

- `loading`: reads a model without trusting it (size, names, external data, cycles,
  declared shapes), then normalises it (one opset, inferred shapes);
- `folding`: what is known before any data (initializers of integers, Shape chains);
- `import_table`: each ONNX op as an expression of agrad ops (`import_sequences`: sequences as
  lists kept at import; `import_training`: the ai.onnx.preview.training domain, Gradient and
  the optimizers);
- `importing`: walks the graph with the table (an If on a known condition inlined, a Loop of
  known iterations unrolled) and writes the graph file and weights;
- `tracing` and `export_table`: a graph's passes traced op by op and mapped to ONNX nodes
  (`exporting` writes the model).

Only these modules import `onnx`; a missing package is `MissingOnnx`.
"""
from .problems import MissingOnnx, ModelError

__all__ = ["MissingOnnx", "ModelError"]
