"""ONNX's DFT imported onto agrad.fft, beyond the one-node cases of test_import_ops: a complex signal
that agrad holds as a strided view, and each DFT agrad refuses, named with its node and why (exit 2)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from click.testing import CliRunner  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from agrad import graphs  # noqa: E402
from agrad.cli.main import cli  # noqa: E402
from agrad.graphs.onnx.importing import import_model  # noqa: E402


def _model(path, nodes, shape, inits=(), opset=18, dtype=TensorProto.FLOAT, inputs=()):
    x = helper.make_tensor_value_info("x", dtype, shape)
    y = helper.make_tensor_value_info("y", dtype, None)
    graph = helper.make_graph(nodes, "g", [x, *inputs], [y], [numpy_helper.from_array(v, n) for n, v in inits])
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString())
    return path


def test_a_complex_signal_held_as_a_transposed_view_is_transformed_and_differentiated(tmp_path):
    """(5, 3, 2) from a Transpose of (2, 5, 3): its (real, imaginary) pairs are not adjacent in memory,
    which view_as_complex alone refuses."""
    x = np.random.default_rng(3).normal(size=(2, 5, 3)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0], name="t"),
             helper.make_node("DFT", ["t"], ["y"], axis=0, inverse=1, name="dft")]
    path = _model(tmp_path / "m.onnx", nodes, list(x.shape))
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    result = import_model(path, tmp_path / "g.yaml")
    np.save(tmp_path / "x.npy", x)
    graph = graphs.load(result.graph_path, inputs={"x": str(tmp_path / "x.npy")})
    got = list(graph.run().outputs.values())[0].detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)
    assert graph.check().passed


def _refused(tmp_path, path, *needles):
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        cli, ["import", str(path), "-o", str(tmp_path / "out.yaml")])
    assert result.exit_code == 2, result.output
    assert "node 0 'dft' (DFT" in result.output, result.output
    for needle in needles:
        assert needle in result.output, result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("shape, attrs, inits, opset, needle", [
    ([2, 4, 3], {"axis": 1}, (), 18, "whose last dim is 3 (1: real, 2: complex)"),
    ([2, 4, 2], {"axis": 2}, (), 18, "along axis 2, the signal's (real, imaginary) dim"),
    ([2, 4, 2], {}, (("", None), ("a", np.array(-1, np.int64))), 20, "along axis 2, the signal's (real, imaginary) dim"),
    ([2, 4, 2], {"axis": 5}, (), 18, "along axis 5 of a signal of rank 3"),
    ([2, 4, 2], {"axis": 1, "onesided": 1}, (), 18, "a onesided DFT of a complex signal (ONNX takes a real one)"),
    ([2, 4, 1], {"axis": 1, "onesided": 1, "inverse": 1}, (), 18,
     "a onesided inverse DFT of a real signal (ONNX takes a complex one)"),
    ([2, 4, 1], {"axis": 1}, (("n", np.array(0, np.int64)),), 18, "a DFT of 0 points (dft_length given)"),
    ([2, 1, 2], {"axis": 1, "onesided": 1, "inverse": 1}, (), 18, "a DFT of 0 points (dft_length from the signal)"),
], ids=["three-parts", "complex-axis", "complex-axis-input", "axis-past-rank", "rfft-of-complex",
        "irfft-of-real", "no-points", "irfft-of-one-frequency"])
def test_a_dft_agrad_cannot_express_is_refused_naming_the_node(tmp_path, shape, attrs, inits, opset, needle):
    names = ["x"] + [n for n, _ in inits]
    nodes = [helper.make_node("DFT", names, ["y"], name="dft", **attrs)]
    _refused(tmp_path, _model(tmp_path / "m.onnx", nodes, shape, [(n, v) for n, v in inits if n], opset), needle)


def test_a_dft_length_from_the_data_is_refused(tmp_path):
    n = helper.make_tensor_value_info("n", TensorProto.INT64, [])
    nodes = [helper.make_node("DFT", ["x", "n"], ["y"], axis=1, name="dft")]
    _refused(tmp_path, _model(tmp_path / "m.onnx", nodes, [2, 4, 1], inputs=[n]), "must be known at import time")


def test_a_half_precision_dft_is_refused(tmp_path):
    nodes = [helper.make_node("DFT", ["x"], ["y"], axis=1, name="dft")]
    _refused(tmp_path, _model(tmp_path / "m.onnx", nodes, [2, 4, 1], dtype=TensorProto.FLOAT16),
             "a DFT of float16")
