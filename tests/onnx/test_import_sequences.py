"""ONNX sequences and the Loops that build them, through agrad import: a sequence is a list the
importer keeps (its length and elements known at import), a Loop whose iterations are known at import
is unrolled. Values against onnxruntime, gradients against finite differences (`check`); what agrad
cannot make static is refused with the node and why."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from agrad import graphs  # noqa: E402
from agrad.graphs.onnx.importing import import_model  # noqa: E402
from agrad.graphs.onnx.problems import ModelError  # noqa: E402

R = np.random.default_rng(11)


def i64(*values):
    return np.array(values if len(values) != 1 else values[0], dtype=np.int64)


def _model(nodes, inputs: dict, outputs: list[str], path: Path, consts: dict | None = None) -> Path:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                     for n, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def _against_onnxruntime(path: Path, inputs: dict, tmp_path: Path, grad: bool = True) -> None:
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, inputs)
    result = import_model(path, tmp_path / "g.yaml")
    agrad_name = {o: a for a, o in result.names.items()}
    files = {}
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        files[agrad_name[name]] = str(tmp_path / f"{name}.npy")
    graph = graphs.load(result.graph_path, inputs=files)
    got = list(graph.run().outputs.values())
    assert len(got) == len(expected)
    for value, want in zip(got, expected):
        assert value.detach().numpy().shape == want.shape
        np.testing.assert_allclose(value.detach().numpy(), want, rtol=1e-5, atol=1e-6)
    if grad:
        assert graph.check().passed


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


X = R.normal(size=(2, 5, 3)).astype(np.float32)
Y = R.normal(size=(2, 2, 3)).astype(np.float32)

CASES = {
    # torch.split(x, 2, 1) read as a list: uneven chunks, an element read, all of them concatenated back reversed
    "split-chunks-at-and-concat": ([
        node("SplitToSequence", ["X", "two"], ["s"], axis=1), node("SequenceAt", ["s", "minus1"], ["last"]),
        node("SequenceErase", ["s", "zero"], ["rest"]), node("SequenceInsert", ["rest", "Y", "zero"], ["t"]),
        node("ConcatFromSequence", ["t"], ["cat"], axis=1), node("SequenceLength", ["t"], ["n"])],
        ["last", "cat", "n"], {"two": i64(2), "minus1": i64(-1), "zero": i64(0)}),
    # torch.unbind (no split, keepdims=0) and torch.stack (new_axis=1), counting the axis from the end
    "unbind-and-stack": ([
        node("SplitToSequence", ["X"], ["s"], axis=2, keepdims=0), node("SequenceErase", ["s"], ["u"]),
        node("ConcatFromSequence", ["u"], ["stacked"], axis=-1, new_axis=1)], ["stacked"], {}),
    # the legacy exporter's unbind: a scalar split of 1 with keepdims=0 drops the axis (onnxruntime's reading)
    "unbind-as-torch-writes-it": ([
        node("SplitToSequence", ["X", "one"], ["s"], axis=0, keepdims=0), node("SequenceAt", ["s", "one"], ["second"])],
        ["second"], {"one": i64(1)}),
    # sizes, and a sequence built element by element: SequenceEmpty, SequenceInsert at the back and the front
    "sizes-and-built": ([
        node("SplitToSequence", ["X", "sizes"], ["s"], axis=-2), node("SequenceAt", ["s", "one"], ["mid"]),
        node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT), node("SequenceInsert", ["e", "mid"], ["a"]),
        node("SequenceInsert", ["a", "Y", "zero"], ["b"]), node("SequenceConstruct", ["Y", "mid"], ["c"]),
        node("ConcatFromSequence", ["b"], ["from_b"], axis=1), node("ConcatFromSequence", ["c"], ["from_c"], axis=0)],
        ["from_b", "from_c"], {"sizes": i64(1, 2, 2), "one": i64(1), "zero": i64(0)}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_sequence_ops_match_onnxruntime(name, tmp_path):
    nodes, outputs, consts = CASES[name]
    path = _model(nodes, {"X": X, "Y": Y}, outputs, tmp_path / "m.onnx", consts)
    _against_onnxruntime(path, {"X": X, "Y": Y}, tmp_path)


@pytest.mark.parametrize("nodes, consts, message", [
    ([node("SplitToSequence", ["X"], ["s"], axis=1), node("SequenceAt", ["s", "P"], ["y"], name="at")], {},
     "'P' must be known at import time (a shape, axes or sizes input), but it is computed from the data"),
    ([node("SplitToSequence", ["X"], ["s"], axis=0), node("SequenceAt", ["s", "p"], ["y"], name="at")],
     {"p": i64(2)}, "position 2 is outside a sequence of 2 elements"),
    ([node("SplitToSequence", ["X", "L"], ["s"], axis=1), node("SequenceAt", ["s", "p"], ["y"], name="at")],
     {"p": i64(0)}, "the sizes of the SplitToSequence making this sequence are computed from the data ('L'); only "
                    "its length is known"),
])
def test_a_sequence_agrad_cannot_make_static_is_refused_where_it_is_read(nodes, consts, message, tmp_path):
    path = _model(nodes, {"X": X, "P": i64(1), "L": i64(2, 3)}, ["y"], tmp_path / "m.onnx", consts)
    with pytest.raises(ModelError) as found:
        import_model(path, tmp_path / "g.yaml")
    assert found.value.problems == [f"m.onnx: node 1 'at' (SequenceAt, opset 18): {message}"]


def test_a_sequence_is_no_graph_output(tmp_path):
    path = _model([node("SplitToSequence", ["X"], ["s"], axis=1)], {"X": X}, ["s"], tmp_path / "m.onnx")
    with pytest.raises(ModelError, match="graph output 's': 's' is a sequence, read here as a tensor"):
        import_model(path, tmp_path / "g.yaml")


# ---- Loops unrolled ---------------------------------------------------------------------------------------

WEIGHT = R.normal(size=(6, 3)).astype(np.float32)
TOKENS = np.array([[1, 4, 0], [5, 5, 2]], np.int64)


def _bag_body(carry_sequence: bool):
    """One bag's mean embedding per iteration (as torch's exporters write EmbeddingBag): the bag's
    tokens are row `i` of the input; a scan output (trip count, the legacy exporter) or a sequence
    carried and a condition computed each time (a while loop, the dynamo exporter)."""
    i, cond = helper.make_tensor_value_info("i", TensorProto.INT64, []), \
        helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    nodes = [node("Gather", ["tokens", "i"], ["row"], axis=0), node("Gather", ["W", "row"], ["vectors"], axis=0),
             node("ReduceMean", ["vectors", "axis0"], ["bag"], keepdims=0)]
    ins, outs = [i, cond], [helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])]
    if carry_sequence:
        ins.append(helper.make_tensor_sequence_value_info("acc", TensorProto.FLOAT, None))
        nodes += [node("Unsqueeze", ["bag", "axis0"], ["bag2"]), node("SequenceInsert", ["acc", "bag2"], ["acc_out"]),
                  node("Add", ["i", "one"], ["next"]), node("Less", ["next", "bags"], ["c_out"])]
        outs.append(helper.make_tensor_sequence_value_info("acc_out", TensorProto.FLOAT, None))
    else:
        nodes.append(node("Identity", ["c"], ["c_out"]))
        outs.append(helper.make_tensor_value_info("bag", TensorProto.FLOAT, None))
    return helper.make_graph(nodes, "body", ins, outs)


@pytest.mark.parametrize("while_loop", [False, True], ids=["trip-count-scan", "while-sequence"])
def test_a_loop_known_at_import_is_unrolled(while_loop, tmp_path):
    consts = {"axis0": i64([0]), "one": i64(1), "bags": i64(2), "true": np.array(True), "n": i64(2)}
    if while_loop:
        nodes = [node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
                 node("Loop", ["", "true", "empty"], ["bags_seq"], body=_bag_body(True)),
                 node("ConcatFromSequence", ["bags_seq"], ["out"], axis=0)]
    else:
        nodes = [node("Loop", ["n", "true"], ["out"], body=_bag_body(False))]
    path = _model(nodes, {"tokens": TOKENS}, ["out"], tmp_path / "m.onnx", {"W": WEIGHT, **consts})
    _against_onnxruntime(path, {"tokens": TOKENS}, tmp_path)


def test_a_loop_on_the_data_is_refused(tmp_path):
    body = helper.make_graph([node("Less", ["i", "limit"], ["c_out"]), node("Identity", ["x"], ["x_out"])], "body",
                             [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                              helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 3])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2, 5, 3])])
    path = _model([node("Loop", ["", "", "X"], ["y"], body=body, name="loop")], {"X": X, "limit": i64(3)}, ["y"],
                  tmp_path / "m.onnx")
    with pytest.raises(ModelError) as found:
        import_model(path, tmp_path / "g.yaml")
    assert found.value.problems == ["m.onnx: node 0 'loop' (Loop, opset 18): a Loop whose condition is computed from "
                                    "the data (agrad unrolls a loop whose iterations are known at import)"]
