"""Every op of the import table on a one-node model: agrad's output against onnxruntime's, and
(for differentiable ops) agrad's gradients against float64 central differences (`check`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from agrad import graphs  # noqa: E402
from agrad.graphs.onnx.importing import import_model  # noqa: E402

R = np.random.default_rng(7)


def f(*shape, low=-2.0, high=2.0):
    return R.uniform(low, high, size=shape).astype(np.float32)


def pos(*shape):
    return f(*shape, low=0.3, high=2.0)


def i64(values):
    return np.array(values, dtype=np.int64)


class Case:
    def __init__(self, op, inputs, attrs=None, consts=None, opset=18, outputs=1, grad=True, name=None,
                 order=None, reference=False):
        self.op, self.inputs, self.attrs = op, inputs, attrs or {}
        self.reference = reference  # against onnx's reference evaluator (the spec's), not onnxruntime
        self.consts, self.opset, self.outputs, self.grad = consts or {}, opset, outputs, grad
        self.id = name or op
        self.order = order          # the node's inputs, by name, with "" for an absent one

    def model(self, path: Path) -> Path:
        names = self.order or list(self.inputs) + list(self.consts)
        outs = [f"y{i}" for i in range(self.outputs)]
        node = helper.make_node(self.op, names, outs, name=f"the_{self.op}", **self.attrs)
        inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                  for n, v in self.inputs.items()]
        graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outs],
                                  [numpy_helper.from_array(v, n) for n, v in self.consts.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        path.write_bytes(model.SerializeToString())
        return path


X = f(2, 3, 4)
CASES = [Case(op, {"x": pos(2, 3) if op in ("Log", "Sqrt", "Reciprocal") else f(2, 3)})
         for op in ("Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Relu", "Erf", "Sin", "Cos",
                    "Atan", "Sinh", "Softsign", "Softplus", "Selu", "HardSwish", "Mish")]
CASES += [
    Case("Floor", {"x": f(2, 3)}, grad=False),
    Case("LeakyRelu", {"x": f(2, 3)}, {"alpha": 0.3}),
    Case("Elu", {"x": f(2, 3)}, {"alpha": 0.7}),
    Case("Celu", {"x": f(2, 3)}, {"alpha": 0.7}),
    Case("ThresholdedRelu", {"x": f(2, 3)}, {"alpha": 0.5}),
    Case("HardSigmoid", {"x": f(2, 3)}, {"alpha": 0.3, "beta": 0.4}),
    Case("Gelu", {"x": f(2, 3)}, {"approximate": "tanh"}, opset=20),
    Case("Add", {"a": f(2, 3), "b": f(3)}), Case("Sub", {"a": f(2, 3), "b": f(2, 1)}),
    Case("Mul", {"a": f(2, 3), "b": f(3)}), Case("Div", {"a": f(2, 3), "b": pos(3)}),
    Case("Pow", {"a": pos(2, 3), "b": f(3)}),
    Case("Max", {"a": f(2, 3), "b": f(3), "c": f(2, 1)}), Case("Min", {"a": f(2, 3), "b": f(3)}),
    Case("Mean", {"a": f(2, 3), "b": f(3)}), Case("Sum", {"a": f(2, 3), "b": f(3), "c": f(1)}),
    Case("Where", {"x": f(2, 3), "y": f(3)}, consts={"c": np.array([True, False, True])}, order=["c", "x", "y"]),
    Case("PRelu", {"x": f(2, 3)}, consts={"slope": f(3)}),
    Case("Greater", {"a": f(2, 3), "b": f(3)}, grad=False),
    Case("Equal", {"a": i64([[1, 2], [3, 4]]), "b": i64([1, 4])}, grad=False),
    Case("Gemm", {"a": f(3, 2), "b": f(3, 4), "c": f(4)}, {"transA": 1, "alpha": 0.5, "beta": 2.0}),
    Case("Gemm", {"a": f(2, 3), "b": f(4, 3), "c": f(4)}, {"transB": 1}, name="Gemm-linear"),
    Case("MatMul", {"a": f(2, 3, 4), "b": f(4, 5)}),
    Case("Einsum", {"a": f(2, 3), "b": f(3, 4)}, {"equation": "ij,jk->ik"}),
    Case("Conv", {"x": f(1, 2, 5, 5), "w": f(4, 1, 3, 3)}, {"pads": [1, 0, 0, 1], "group": 2}, name="Conv-asym-groups"),
    Case("Conv", {"x": f(1, 2, 6, 6), "w": f(3, 2, 3, 3)}, {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
         name="Conv-same-upper"),
    Case("Conv", {"x": f(1, 2, 9), "w": f(3, 2, 3), "b": f(3)}, {"dilations": [2]}, name="Conv1d-dilated"),
    Case("ConvTranspose", {"x": f(1, 2, 3, 3), "w": f(2, 3, 3, 3)}, {"strides": [2, 2], "output_padding": [1, 1],
                                                                      "pads": [1, 1, 1, 1]}),
    Case("MaxPool", {"x": f(1, 2, 5, 5)}, {"kernel_shape": [3, 3], "pads": [1, 1, 0, 0], "strides": [2, 2]},
         name="MaxPool-asym"),
    Case("MaxPool", {"x": f(1, 2, 5, 5)}, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
         name="MaxPool-ceil"),
    Case("AveragePool", {"x": f(1, 2, 5, 5)}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    # 3-d MaxPool, and the Indices output: positions in the whole input (PyTorch's are per plane)
    Case("MaxPool", {"x": f(2, 2, 4, 5, 6)}, {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2],
                                            "pads": [1, 1, 0, 1, 1, 0], "dilations": [2, 1, 1]}, name="MaxPool-3d"),
    Case("MaxPool", {"x": f(2, 3, 5, 5)}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
         outputs=2, name="MaxPool-indices"),
    Case("MaxPool", {"x": f(2, 2, 4, 5, 6)}, {"kernel_shape": [2, 2, 3], "strides": [2, 1, 2], "ceil_mode": 1},
         outputs=2, name="MaxPool-3d-indices-ceil"),
    Case("MaxPool", {"x": f(1, 2, 5, 6, 5)}, {"kernel_shape": [3, 2, 3], "pads": [2, 0, 1, 0, 1, 1],
                                            "strides": [2, 2, 1]}, outputs=2, name="MaxPool-3d-indices-asym-pads"),
    Case("MaxPool", {"x": f(2, 3, 9)}, {"kernel_shape": [3], "strides": [2], "pads": [0, 2], "dilations": [2]},
         outputs=2, name="MaxPool-1d-indices-asym-pads"),
    # storage_order=1: Indices column-major within each plane (the first spatial dim fastest), planes in order
    Case("MaxPool", {"x": f(2, 3, 5, 4)}, {"kernel_shape": [2, 2], "strides": [1, 2], "storage_order": 1},
         outputs=2, name="MaxPool-indices-column-major"),
    Case("MaxPool", {"x": f(1, 2, 5, 4, 3)}, {"kernel_shape": [2, 2, 2], "pads": [1, 0, 0, 0, 1, 1],
                                            "storage_order": 1}, outputs=2, name="MaxPool-3d-indices-column-major-pads"),
    # Col2Im (torch's fold): overlapping blocks add up; unequal pads fold into the padded image, then crop
    Case("Col2Im", {"x": f(2, 12, 20)}, consts={"i": i64([5, 6]), "b": i64([2, 2])}),
    Case("Col2Im", {"x": f(1, 12, 9)}, {"dilations": [2, 1], "pads": [1, 2, 1, 2], "strides": [2, 3]},
         consts={"i": i64([6, 7]), "b": i64([2, 3])}, name="Col2Im-dilated-strided"),
    Case("Col2Im", {"x": f(2, 8, 15)}, {"pads": [1, 0, 0, 2], "strides": [2, 1]},
         consts={"i": i64([5, 4]), "b": i64([2, 2])}, name="Col2Im-unequal-pads"),
    # other than 2 spatial dims: each column entry added at its place (an index_add), the padding cut off
    # (onnxruntime 1.23's 3-d Col2Im differs from the spec's reference: with a dilation past the first dim, and
    # with several channels and batches)
    Case("Col2Im", {"x": f(2, 24, 24)}, {"dilations": [1, 2, 1], "pads": [1, 0, 0, 0, 1, 1], "strides": [1, 1, 2]},
         consts={"i": i64([3, 5, 4]), "b": i64([2, 2, 2])}, name="Col2Im-3d", reference=True),
    Case("Col2Im", {"x": f(2, 24, 20)}, {"dilations": [2, 1, 1], "pads": [1, 0, 0, 0, 1, 1], "strides": [1, 1, 2]},
         consts={"i": i64([3, 5, 4]), "b": i64([2, 2, 2])}, name="Col2Im-3d-dilated-first", reference=True),
    Case("Col2Im", {"x": f(1, 6, 4)}, {"strides": [2]}, consts={"i": i64([9]), "b": i64([3])}, name="Col2Im-1d"),
    # GridSample: opset 16's mode names and opset 20's, every padding mode, align_corners either way
    Case("GridSample", {"x": f(2, 3, 4, 5), "g": f(2, 3, 2, 2, low=-1.3, high=1.3)}, opset=16),
    Case("GridSample", {"x": f(1, 2, 5, 4), "g": f(1, 4, 3, 2, low=-1.6, high=1.6)},
         {"mode": "bicubic", "padding_mode": "reflection", "align_corners": 1}, opset=16,
         name="GridSample-16-bicubic-reflection-align-corners"),
    Case("GridSample", {"x": f(2, 2, 3, 4), "g": f(2, 3, 3, 2, low=-1.6, high=1.6)},
         {"mode": "nearest", "padding_mode": "border"}, opset=16, name="GridSample-16-nearest-border"),
    Case("GridSample", {"x": f(1, 3, 4, 4), "g": f(1, 2, 5, 2, low=-1.6, high=1.6)},
         {"mode": "linear", "padding_mode": "reflection"}, opset=20, name="GridSample-20-linear-reflection"),
    Case("GridSample", {"x": f(1, 2, 4, 5), "g": f(1, 3, 2, 2, low=-1.6, high=1.6)},
         {"mode": "cubic", "padding_mode": "border", "align_corners": 1}, opset=20,
         name="GridSample-20-cubic-border-align-corners"),
    # 5-d input: grid_sampler_3d (trilinear, nearest)
    Case("GridSample", {"x": f(1, 2, 3, 4, 3), "g": f(1, 2, 3, 2, 3, low=-1.6, high=1.6)},
         {"mode": "linear", "padding_mode": "reflection"}, opset=20, name="GridSample-20-volumetric-linear-reflection"),
    Case("GridSample", {"x": f(2, 2, 3, 3, 4), "g": f(2, 2, 2, 3, 3, low=-1.6, high=1.6)},
         {"mode": "nearest", "padding_mode": "border", "align_corners": 1}, opset=20,
         name="GridSample-20-volumetric-nearest-border-align-corners"),
    Case("GlobalAveragePool", {"x": f(2, 3, 4, 4)}), Case("GlobalMaxPool", {"x": f(2, 3, 4, 4)}),
    Case("BatchNormalization", {"x": f(2, 3, 4)}, {"epsilon": 1e-3},
         consts={"s": pos(3), "b": f(3), "m": f(3), "v": pos(3)}),
    Case("LayerNormalization", {"x": f(2, 3, 4)}, {"axis": -2}, consts={"s": pos(3, 4), "b": f(3, 4)}),
    Case("InstanceNormalization", {"x": f(2, 3, 4)}, consts={"s": pos(3), "b": f(3)}),
    Case("GroupNormalization", {"x": f(2, 4, 3)}, {"num_groups": 2}, consts={"s": pos(2), "b": f(2)},
         name="GroupNormalization-18"),
    Case("GroupNormalization", {"x": f(2, 4, 3)}, {"num_groups": 2}, consts={"s": pos(4), "b": f(4)}, opset=21,
         name="GroupNormalization-21"),
    Case("Softmax", {"x": f(2, 3, 4)}, {"axis": 1}, opset=11, name="Softmax-11-flattening"),
    Case("Softmax", {"x": f(2, 3, 4)}, {"axis": 1}), Case("LogSoftmax", {"x": f(2, 3, 4)}),
    Case("Reshape", {"x": X}, consts={"s": i64([0, -1])}),
    Case("Flatten", {"x": X}, {"axis": 2}), Case("Transpose", {"x": X}, {"perm": [2, 0, 1]}),
    Case("Squeeze", {"x": f(2, 1, 3)}, consts={"a": i64([1])}),
    Case("Unsqueeze", {"x": f(2, 3)}, consts={"a": i64([0, -1])}),
    Case("Concat", {"a": f(2, 3), "b": f(2, 1)}, {"axis": -1}),
    Case("Split", {"x": f(2, 5)}, {"axis": 1}, consts={"s": i64([2, 3])}, outputs=2),
    Case("Slice", {"x": f(6, 4)}, consts={"s": i64([5, 1]), "e": i64([0, 100]), "a": i64([0, 1]),
                                          "st": i64([-2, 2])}, name="Slice-negative-step"),
    Case("Gather", {"x": f(5, 3)}, {"axis": 0}, consts={"i": i64([[0, 4], [-1, 2]])}, name="Gather-2d-index"),
    Case("Gather", {"x": f(5, 3)}, {"axis": 0}, consts={"i": np.array(3, dtype=np.int64)}, name="Gather-scalar"),
    Case("GatherElements", {"x": f(3, 4)}, {"axis": 1}, consts={"i": i64([[0, 3], [1, 1], [2, 0]])}),
    # indices computed from the data may count from the end (ONNX), which torch's ops refuse
    Case("Gather", {"x": f(5, 3), "i": i64([[0, -1], [4, -5]])}, {"axis": 0}, name="Gather-negative-embedding"),
    Case("Gather", {"x": f(2, 5, 3), "i": i64([-2, 1])}, {"axis": 1}, name="Gather-negative-axis-1"),
    Case("GatherElements", {"x": f(3, 4), "i": i64([[0, -1], [-4, 1], [2, 0]])}, {"axis": -1},
         name="GatherElements-negative"),
    Case("ScatterElements", {"x": f(3, 4), "i": i64([[-1], [0], [-3]]), "u": f(3, 1)}, {"axis": 1},
         order=["x", "i", "u"], name="ScatterElements-negative"),
    Case("ScatterElements", {"x": f(3, 4), "u": f(3, 2)}, {"axis": 1, "reduction": "add"},
         consts={"i": i64([[0, 3], [1, 1], [2, 0]])}, order=["x", "i", "u"]),
    Case("Expand", {"x": f(3, 1)}, consts={"s": i64([2, 3, 4])}),
    Case("Tile", {"x": f(2, 3)}, consts={"r": i64([2, 1])}),
    Case("Pad", {"x": f(1, 2, 4, 4)}, {"mode": "reflect"}, consts={"p": i64([0, 0, 1, 2, 0, 0, 2, 1])},
         name="Pad-reflect"),
    Case("Pad", {"x": f(2, 3)}, {"mode": "edge"}, consts={"p": i64([1, 0, 0, 2])}, name="Pad-edge"),
    Case("Pad", {"x": f(2, 3)}, consts={"p": i64([1, 0, 0, 2]), "v": np.array(1.5, np.float32)}, name="Pad-value"),
    Case("Trilu", {"x": f(4, 4)}, {"upper": 0}, consts={"k": np.array(1, dtype=np.int64)}),
    Case("DepthToSpace", {"x": f(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}),
    Case("DepthToSpace", {"x": f(1, 8, 2, 3)}, {"blocksize": 2}, name="DepthToSpace-DCR"),
    Case("SpaceToDepth", {"x": f(1, 2, 4, 6)}, {"blocksize": 2}),
    Case("CumSum", {"x": f(3, 4)}, {"reverse": 1, "exclusive": 1}, consts={"a": np.array(1, dtype=np.int64)}),
    # an element large beside the sum before it: `cumsum - x` would lose that sum (the gradient, linear, is
    # checked above: central differences at 1e8 would measure float64's rounding, not it)
    Case("CumSum", {"x": np.array([[1e-3, 1e8, 1.0], [2.0, -3e8, 0.5]], np.float32)}, {"exclusive": 1},
         consts={"a": np.array(1, dtype=np.int64)}, grad=False, name="CumSum-exclusive-large-step"),
    Case("CumSum", {"x": np.array([[1e8, 1.0, 1e-3], [0.5, -3e8, 2.0]], np.float32)}, {"exclusive": 1, "reverse": 1},
         consts={"a": np.array(-1, dtype=np.int64)}, grad=False, name="CumSum-reverse-exclusive-large-step"),
    Case("AveragePool", {"x": f(1, 2, 4, 5, 3)}, {"kernel_shape": [2, 3, 1], "strides": [2, 1, 1],
                                                  "pads": [1, 1, 0, 1, 1, 0]}, name="AveragePool-3d"),
    Case("CumSum", {"x": X}, consts={"a": i64([1])}, name="CumSum-axis-of-shape-1"),   # as the dynamo exporter writes it
    Case("ReduceSum", {"x": X}, {"keepdims": 0}, consts={"a": i64([0, 2])}),
    Case("ReduceMean", {"x": X}, {"axes": [-1]}, opset=13),
    Case("ReduceMax", {"x": X}, {"keepdims": 1}, consts={"a": i64([1])}),
    Case("ReduceL2", {"x": X}, consts={"a": i64([1])}), Case("ReduceLogSumExp", {"x": X}),
    Case("ReduceSumSquare", {"x": X}, {"keepdims": 0}, consts={"a": i64([2])}),
    Case("ArgMax", {"x": X}, {"axis": 1, "keepdims": 0}, grad=False),
    Case("TopK", {"x": f(3, 5)}, {"axis": 1}, consts={"k": i64([2])}, outputs=2, grad=False),
    Case("Resize", {"x": f(1, 2, 3, 3)}, {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                          "nearest_mode": "floor"},
         consts={"s": np.array([1, 1, 2, 2], np.float32)}, order=["x", "", "s"], name="Resize-nearest"),
    Case("Resize", {"x": f(1, 2, 3, 3)}, {"mode": "linear"}, consts={"s": np.array([1, 1, 2, 2], np.float32)},
         order=["x", "", "s"], name="Resize-linear"),
    # scales that do not divide the size: coordinates go through the scale (x / 1.5), not out / in
    Case("Resize", {"x": f(1, 2, 5, 5)}, {"mode": "linear"}, consts={"s": np.array([1, 1, 1.5, 1.7], np.float32)},
         order=["x", "", "s"], name="Resize-linear-inexact-scales"),
    Case("Resize", {"x": f(1, 1, 5, 4)}, {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                          "nearest_mode": "floor"},
         consts={"s": np.array([1, 1, 1.5, 1.7], np.float32)}, order=["x", "", "s"], grad=False,
         name="Resize-nearest-inexact-scales"),
    Case("Resize", {"x": f(1, 1, 5, 5)}, {"mode": "cubic"}, consts={"s": np.array([1, 1, 1.5, 1.5], np.float32)},
         order=["x", "", "s"], name="Resize-cubic-inexact-scales"),
    # modes interpolate has not: one step per dim, an index_select (nearest) or a product with the dim's
    # interpolation matrix (antialias, align_corners on inexact scales, tf_crop_and_resize, a channel dim)
    Case("Resize", {"x": f(1, 2, 6, 5)}, {"mode": "linear", "antialias": 1},
         consts={"s": np.array([1, 1, 0.5, 0.6], np.float32)}, order=["x", "", "s"], name="Resize-linear-antialias"),
    Case("Resize", {"x": f(1, 1, 4, 5)}, {"mode": "cubic", "coordinate_transformation_mode": "align_corners"},
         consts={"s": np.array([1, 1, 0.6, 1.3], np.float32)}, order=["x", "", "s"],
         name="Resize-cubic-align-corners-inexact-scales"),
    Case("Resize", {"x": f(1, 1, 4, 4)}, {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                                          "extrapolation_value": 2.5},
         consts={"roi": np.array([0, 0, 0.4, -0.2, 1, 1, 0.9, 0.7], np.float32), "s": np.array([1, 1, 1.5, 1.5], np.float32)},
         order=["x", "roi", "s"], name="Resize-tf-crop-and-resize-extrapolated"),
    Case("Resize", {"x": f(2, 3, 4)}, {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
                                       "nearest_mode": "round_prefer_ceil", "axes": [1, 2]},
         consts={"sz": np.array([5, 7], np.int64)}, order=["x", "", "", "sz"], grad=False,
         name="Resize-nearest-half-pixel-axes"),
    # average pools avg_pool cannot make: dilations, uneven pads left out of the count (a convolution, a count)
    Case("AveragePool", {"x": f(1, 2, 7, 6)}, {"kernel_shape": [3, 2], "dilations": [2, 2], "pads": [1, 0, 2, 1],
                                               "ceil_mode": 1, "strides": [2, 1]}, opset=19, name="AveragePool-dilated-uneven"),
    Case("ConvTranspose", {"x": f(1, 2, 3, 3), "w": f(2, 3, 3, 3)}, {"pads": [0, 2, 1, 0], "strides": [2, 1]},
         consts={"b": f(3)}, order=["x", "w", "b"], name="ConvTranspose-uneven-pads"),
    Case("LRN", {"x": f(2, 5, 3, 2)}, {"size": 3, "alpha": 0.3, "beta": 0.6, "bias": 1.5}),
    Case("LayerNormalization", {"x": f(2, 3, 4)}, consts={"s": pos(3, 4), "b": f(3, 4)}, attrs={"axis": 1},
         outputs=3, name="LayerNormalization-mean-invstddev"),
    Case("ArgMax", {"x": np.array([[1, 3, 3], [2, 2, 0]], np.float32)}, {"axis": 1, "select_last_index": 1},
         grad=False, name="ArgMax-select-last-index"),
    Case("Hardmax", {"x": f(2, 3, 4)}, {"axis": 1}, grad=False),
    # the class-index losses PyTorch's exporters write for F.cross_entropy and F.nll_loss
    Case("SoftmaxCrossEntropyLoss", {"x": f(4, 3)}, consts={"t": i64([0, 2, 1, 2])}),
    Case("SoftmaxCrossEntropyLoss", {"x": f(2, 3, 4)}, {"reduction": "sum", "ignore_index": 1},
         consts={"t": i64([[0, 1, 2, 2], [1, 1, 0, 2]]), "w": pos(3)}, order=["x", "t", "w"], outputs=2,
         name="SoftmaxCrossEntropyLoss-weighted-ignored-log-prob"),
    Case("NegativeLogLikelihoodLoss", {"x": f(4, 3)}, consts={"t": i64([0, 2, 1, 2]), "w": pos(3)},
         order=["x", "t", "w"], name="NegativeLogLikelihoodLoss-weighted-mean"),
    Case("NegativeLogLikelihoodLoss", {"x": f(2, 3, 2)}, {"reduction": "none"}, consts={"t": i64([[0, 2], [1, 1]])},
         name="NegativeLogLikelihoodLoss-none-2d"),
    Case("Clip", {"x": f(2, 3)}, consts={"lo": np.array(-0.5, np.float32), "hi": np.array(0.7, np.float32)}),
    Case("Cast", {"x": f(2, 3)}, {"to": TensorProto.DOUBLE}),
    Case("OneHot", {"i": i64([[0, 3], [-1, 2]])}, {"axis": 1},
         consts={"d": np.array(4, dtype=np.int64), "v": np.array([0.5, 2.0], np.float32)}, grad=False),
    # older opsets: attributes where opset 13+ has inputs; the importer converts them to opset 18 first
    Case("Split", {"x": f(2, 5)}, {"axis": 1, "split": [3, 2]}, outputs=2, opset=11, name="Split-11"),
    Case("Squeeze", {"x": f(2, 1, 3)}, {"axes": [1]}, opset=11, name="Squeeze-11"),
    Case("Unsqueeze", {"x": f(2, 3)}, {"axes": [0, 3]}, opset=11, name="Unsqueeze-11"),
    Case("ReduceSum", {"x": X}, {"axes": [1], "keepdims": 0}, opset=11, name="ReduceSum-11"),
    Case("Softmax", {"x": f(2, 3, 4)}, {"axis": 2}, opset=9, name="Softmax-9"),
    Case("Clip", {"x": f(2, 3)}, {"min": -0.5, "max": 0.7}, opset=6, name="Clip-6"),
    Case("LSTM", {"x": f(3, 2, 4)}, {"hidden_size": 3, "direction": "bidirectional"},
         consts={"W": f(2, 12, 4) / 2, "R": f(2, 12, 3) / 2, "B": f(2, 24) / 3}, outputs=3, name="LSTM-bidirectional"),
    Case("LSTM", {"x": f(3, 2, 4)}, {"hidden_size": 3, "direction": "bidirectional"},
         consts={"W": f(2, 12, 4) / 2, "R": f(2, 12, 3) / 2, "B": f(2, 24) / 3, "P": f(2, 9) / 2}, outputs=3,
         order=["x", "W", "R", "B", "", "", "", "P"], name="LSTM-peepholes-bidirectional"),
    Case("GRU", {"x": f(3, 2, 4)}, {"hidden_size": 3, "linear_before_reset": 1},
         consts={"W": f(1, 9, 4) / 2, "R": f(1, 9, 3) / 2, "B": f(1, 18) / 3}, outputs=2,
         name="GRU-linear-before-reset"),
    Case("GRU", {"x": f(3, 2, 4)}, {"hidden_size": 3, "direction": "reverse"},
         consts={"W": f(1, 9, 4) / 2, "R": f(1, 9, 3) / 2, "B": f(1, 18) / 3}, outputs=2, name="GRU-reverse"),
    Case("RNN", {"x": f(3, 2, 4), "h0": f(2, 2, 3)}, {"hidden_size": 3, "direction": "bidirectional",
                                                     "activations": ["Tanh", "Relu"]},
         consts={"W": f(2, 3, 4) / 2, "R": f(2, 3, 3) / 2, "B": f(2, 6) / 3}, outputs=2,
         order=["x", "W", "R", "B", "", "h0"], name="RNN-bidirectional-tanh-relu"),
    Case("RNN", {"x": f(2, 3, 4)}, {"hidden_size": 3}, consts={"W": f(1, 3, 4) / 2, "R": f(1, 3, 3) / 2},
         outputs=2, name="RNN-no-bias"),          # (onnxruntime runs no batch-first RNN: layout 0 only)
    # GatherND / ScatterND (what exporters make of x[i, j] and x[i, j] = v): index tuples from the data
    # or constants, negative indices counted from the end, batch dims
    Case("GatherND", {"x": f(3, 4, 2), "i": i64([[0, 1], [2, -1], [1, 0]])}, name="GatherND-pairs"),
    Case("GatherND", {"x": f(3, 4, 2)}, consts={"i": i64([[[2], [0]]])}, name="GatherND-const-rows"),
    Case("GatherND", {"x": f(2, 3, 4), "i": i64([[[1, 3]], [[2, -4]]])}, {"batch_dims": 1}, name="GatherND-batch"),
    Case("ScatterND", {"x": f(4, 3), "i": i64([[3], [-4]]), "u": f(2, 3)}, name="ScatterND-rows"),
    Case("ScatterND", {"x": f(2, 3, 2), "u": f(3, 2)}, {"reduction": "add"},
         consts={"i": i64([[0, 1], [1, 2], [0, 1]])}, order=["x", "i", "u"], name="ScatterND-add-repeated"),
    Case("ScatterND", {"x": f(3, 3), "i": i64([[0, 0], [2, 1]]), "u": f(2)}, {"reduction": "mul"},
         name="ScatterND-mul-elements"),
    # DFT: a real signal (last dim 1) or a complex one (2), onto agrad.fft: opset 17's axis attribute, opset 20's
    # axis input (default -2), dft_length cutting or zero-padding the signal, inverse, onesided (rfft, irfft)
    Case("DFT", {"x": f(2, 5, 3, 1)}, {"axis": 1}, opset=17, name="DFT-real"),
    Case("DFT", {"x": f(2, 5, 3, 1)}, {"axis": 1, "onesided": 1}, consts={"n": i64(7)}, order=["x", "n"], opset=17,
         name="DFT-rfft-padded"),
    Case("DFT", {"x": f(2, 3, 5, 2)}, {"axis": 2}, consts={"n": i64(3)}, order=["x", "n"], opset=17,
         name="DFT-complex-cut"),
    Case("DFT", {"x": f(2, 5, 3, 2)}, {"axis": -3, "inverse": 1}, opset=17, name="DFT-inverse"),
    Case("DFT", {"x": f(2, 5, 3, 1)}, {"axis": 1, "inverse": 1}, opset=17, name="DFT-inverse-real"),
    Case("DFT", {"x": f(2, 5, 3, 2)}, {"axis": 1, "inverse": 1, "onesided": 1}, opset=17, name="DFT-irfft"),
    Case("DFT", {"x": f(2, 4, 3, 2)}, {"onesided": 1, "inverse": 1}, consts={"n": i64(6)}, order=["x", "n"],
         opset=17, name="DFT-irfft-length"),
    # (a dft_length whose n // 2 + 1 is not the frequencies given: onnxruntime 1.32 reads all of them and pads
    # none, where the reference, numpy and torch.fft.irfft cut or zero-pad them to n // 2 + 1)
    Case("DFT", {"x": f(2, 5, 3, 2)}, {"axis": 1, "inverse": 1, "onesided": 1}, consts={"n": i64(7)},
         order=["x", "n"], opset=17, name="DFT-irfft-odd-cut", reference=True),
    Case("DFT", {"x": f(2, 3, 4, 2)}, {"axis": 1, "inverse": 1, "onesided": 1}, consts={"n": i64(6)},
         order=["x", "n"], opset=17, name="DFT-irfft-padded", reference=True),
    Case("DFT", {"x": f(2, 5, 3, 1)}, opset=20, name="DFT-opset20-default-axis"),
    Case("DFT", {"x": f(2, 5, 3, 2)}, {"inverse": 1, "onesided": 1}, consts={"a": i64(1)}, order=["x", "", "a"],
         opset=20, name="DFT-opset20-irfft"),
    Case("DFT", {"x": f(3, 4, 2, 1)}, {"onesided": 1}, consts={"n": i64(5), "a": i64(-4)}, order=["x", "n", "a"],
         opset=20, name="DFT-opset20-rfft-negative-axis"),
    Case("DFT", {"x": f(2, 4, 3, 2).astype(np.float64)}, {"axis": 2}, opset=17, name="DFT-float64"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_matches_onnxruntime(case, tmp_path):
    path = case.model(tmp_path / "m.onnx")
    if case.reference:
        expected = ReferenceEvaluator(str(path)).run(None, dict(case.inputs))
    else:
        expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, dict(case.inputs))
    result = import_model(path, tmp_path / "g.yaml")
    agrad_name = {o: a for a, o in result.names.items()}
    files = {}
    for name, value in case.inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        files[agrad_name[name]] = str(tmp_path / f"{name}.npy")
    graph = graphs.load(result.graph_path, inputs=files)
    run = graph.run()
    got = list(run.outputs.values())
    for i, (value, ref) in enumerate(zip(got, expected)):
        assert value.detach().numpy().shape == ref.shape, i
        np.testing.assert_allclose(value.detach().numpy(), ref, rtol=2e-5, atol=2e-6)
    if case.grad:
        check = graph.check(fast=case.op in ("LSTM", "GRU", "RNN"))        # (one random direction per leaf)
        assert check.passed, [(name, leaf.max_abs_err) for name, leaf in check.leaves.items() if not leaf.passed]
