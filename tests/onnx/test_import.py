"""`agrad import`: torch 2.13's exports (tests/onnx/fixtures, made by make_onnx_fixtures.py) come in
with onnxruntime's outputs and torch autograd's gradients; hostile models are refused whole."""
from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from agrad import graphs  # noqa: E402
from agrad.cli.main import cli  # noqa: E402
from agrad.graphs.onnx import ModelError  # noqa: E402
from agrad.graphs.onnx.importing import ImportOptions, import_model  # noqa: E402
from gpu import requires_gpu  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
MODELS = sorted(k for k, v in MANIFEST["models"].items() if "failed" not in v)


def _cli(*args):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(cli, [str(a) for a in args])


def imported_run(name: str, tmp_path: Path, device: str | None = None):
    """Import fixture `name` with `--loss mse:target`, run it on the fixture's inputs and target."""
    ref = dict(np.load(FIXTURES / f"{name}.npz"))
    # (the inputs' shapes, as `--shape` gives them: a model exported with a dynamic batch has none of its own)
    shapes = {k[3:]: v.shape for k, v in ref.items() if k.startswith("in:")}
    result = import_model(FIXTURES / f"{name}.onnx", tmp_path / f"{name}.yaml",
                          ImportOptions(loss="mse:target", shapes=shapes))
    agrad_name = {onnx_name: a for a, onnx_name in result.names.items()}
    files = {}
    for key, value in ref.items():
        if key.startswith("in:") or key == "target":
            onnx_name = key[3:] if key.startswith("in:") else None
            path = tmp_path / f"{key.replace(':', '_')}.npy"
            np.save(path, value.astype(np.float32) if value.dtype == np.float64 else value)
            files[agrad_name[onnx_name] if onnx_name else "target"] = str(path)
    run = graphs.load(result.graph_path, inputs=files, device=device).run()
    return ref, result, run, agrad_name


# (rtol, atol) of the outputs against onnxruntime's (float32): on a GPU cuBLAS and CuPy's reductions
# sum in another order than the CPU's
OUTPUT_TOLERANCE = {"cpu": (1e-5, 2e-6), "cuda": (1e-4, 1e-5)}


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_gpu)])
@pytest.mark.parametrize("name", MODELS)
def test_imported_outputs_match_onnxruntime_and_gradients_match_torch(name, device, tmp_path):
    ref, result, run, agrad_name = imported_run(name, tmp_path, device)
    rtol, atol = OUTPUT_TOLERANCE[device]
    outs = [k for k in ref if k.startswith("out:")]
    values = list(run.outputs.values())
    assert len(values) == len(outs)
    for key, value in zip(outs, values):
        assert value.device.type == device
        np.testing.assert_allclose(value.detach().cpu().numpy(), ref[key], rtol=rtol, atol=atol, err_msg=key)
    grads = [k for k in ref if k.startswith("grad:")]
    assert grads, "the fixture has gradients to compare"
    for key in grads:
        grad = run.grads[agrad_name[key[5:]]]
        expected = ref[key]
        scale = np.abs(expected).max() + 1e-6
        assert np.abs(grad.detach().cpu().numpy() - expected).max() / scale < 1e-4, key


def test_each_node_is_one_line_naming_the_onnx_node(tmp_path):
    result = import_model(FIXTURES / "resblock.unfolded.onnx", tmp_path / "g.yaml")
    text = result.graph_path.read_text()
    nodes = text.split("nodes:\n")[1].split("\n\n")[0].splitlines()
    model = onnx.load(FIXTURES / "resblock.unfolded.onnx")
    translated = [n for n in model.graph.node if n.op_type != "Constant"]
    assert len(nodes) == len(translated) + 1         # and the loss
    for node in translated:
        assert sum(f"ONNX node '{node.name}' {node.op_type}" in line for line in nodes) == 1
    assert "bn1_running_mean: {file: g.npz, key: bn1_running_mean}" in text      # no requires_grad
    assert "conv1_weight: {file: g.npz, key: conv1_weight, requires_grad: true}" in text


def test_cli_import_then_check_passes(tmp_path):
    result = _cli("import", FIXTURES / "mlp.legacy.onnx", "-o", tmp_path / "mlp.yaml", "--shape", "x=2,6")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "mlp.npz").exists()
    check = _cli("check", tmp_path / "mlp.yaml")
    assert check.exit_code == 0, check.output


def test_an_initializer_read_both_as_a_parameter_and_as_statistics_is_two_inputs_of_one_array(tmp_path):
    # torch's dynamo exporter gives an untrained batch norm's bias and running mean (zeros) one initializer,
    # and its weight and running variance (ones) another: the gradient is the parameter's (as torch's, which
    # the fixture's comparison above checks), and finite differences of the graph must agree with it
    result = import_model(FIXTURES / "fresh_bn.dynamo.onnx", tmp_path / "bn.yaml")
    text = result.graph_path.read_text()
    assert "bn_bias: {file: bn.npz, key: bn_bias, requires_grad: true}" in text
    assert "bn_bias_const: {file: bn.npz, key: bn_bias}  # initializer 'bn.bias' float32[3] (where no gradient" in text
    assert "batch_norm(x, bn_bias_const, bn_weight_const, bn_weight, bn_bias, False," in text
    assert not [k for k in np.load(tmp_path / "bn.npz").files if k.endswith("_const")]   # each array once
    assert result.parameters == 4
    check = _cli("check", result.graph_path)
    assert check.exit_code == 0, check.output


def test_weights_whose_path_is_on_another_file_system_are_copied_into_place(tmp_path, monkeypatch):
    # `-o link.yaml` with link.yaml a symlink to another file system: both files are staged beside
    # the graph's target, so moving the weights to theirs crosses file systems (EXDEV)
    from agrad.graphs.onnx import importing

    replace = importing.os.replace

    def across(source, target):
        if ".agrad-import." in str(source) and str(target).endswith(".npz"):     # the staged weights only
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        replace(source, target)
    monkeypatch.setattr(importing.os, "replace", across)
    (tmp_path / "mlp.npz").write_bytes(b"old")
    result = _cli("import", FIXTURES / "mlp.legacy.onnx", "-o", tmp_path / "mlp.yaml", "--shape", "x=2,6")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.npz", "mlp.yaml"]
    assert _cli("check", tmp_path / "mlp.yaml").exit_code == 0


def test_cross_entropy_loss_adds_a_labels_input(tmp_path):
    import_model(FIXTURES / "mlp.legacy.onnx", tmp_path / "m.yaml", ImportOptions(loss="cross_entropy:labels"))
    text = (tmp_path / "m.yaml").read_text()
    assert "labels: {shape: [2], init: zeros, dtype: int64}" in text
    assert "loss: cross_entropy(v7, labels)" in text
    run = graphs.load(tmp_path / "m.yaml").run()
    assert run.grads["fc1_weight"] is not None


def test_unsupported_ops_are_all_listed_and_nothing_is_written(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Det", ["x"], ["a"], name="first"), helper.make_node("Relu", ["x"], ["b"], name="ok"),
             helper.make_node("NonZero", ["b"], ["c"], name="second"),
             helper.make_node("Add", ["a", "b"], ["y"], name="after")]
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 18)]), path)
    result = _cli("import", path)
    assert result.exit_code == 2
    assert "node 0 'first' (Det, opset 18): no agrad translation" in result.output
    assert "'second' (NonZero, opset 18)" in result.output
    assert "'after'" not in result.output          # downstream of a refused node: not news
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_lstm_is_unrolled_one_line_per_step_each_naming_the_node(tmp_path):
    import_model(FIXTURES / "lstm.legacy.onnx", tmp_path / "l.yaml")
    lines = [line for line in (tmp_path / "l.yaml").read_text().splitlines() if "'/lstm/LSTM' LSTM (composed)" in line]
    assert len(lines) == 2 + 3 * 4 + 1        # input gates, R^T, (gates, c, h) per step of 4, the output Y


def test_an_op_without_a_translation_is_refused_naming_the_node(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Det", ["x"], ["y"], name="det")
    path = tmp_path / "det.onnx"
    onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)]),
              path)
    with pytest.raises(ModelError) as found:
        import_model(path, tmp_path / "d.yaml")
    assert found.value.problems == ["det.onnx: node 0 'det' (Det, opset 18): no agrad translation for this op"]


def _small_model(path: Path, nodes=None, inputs=None, initializers=(), opset=18):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = nodes or [helper.make_node("Relu", ["x"], ["y"], name="r")]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs or [x], [y], list(initializers)),
                              opset_imports=[helper.make_opsetid("", opset)])
    path.write_bytes(model.SerializeToString())
    return path


def _refused(tmp_path, path, *needles):
    before = sorted(p.name for p in tmp_path.iterdir())
    result = _cli("import", path, "-o", tmp_path / "out.yaml")
    assert result.exit_code == 2, result.output
    for needle in needles:
        assert needle in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_truncated_protobuf(tmp_path):
    data = (FIXTURES / "mlp.legacy.onnx").read_bytes()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    _refused(tmp_path, path, "truncated or corrupt")


def test_cyclic_graph(tmp_path):
    nodes = [helper.make_node("Relu", ["x2"], ["x1"], name="a"), helper.make_node("Relu", ["x1"], ["x2"], name="b"),
             helper.make_node("Add", ["x", "x2"], ["y"], name="c")]
    _refused(tmp_path, _small_model(tmp_path / "cycle.onnx", nodes), "cycle", "'a' (Relu)")


def _external(tmp_path, location: str) -> Path:
    weight = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value=location)
    weight.external_data.add(key="length", value="24")
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return _small_model(tmp_path / "ext.onnx", nodes, initializers=[weight])


def test_external_data_outside_the_model_folder(tmp_path):
    (tmp_path.parent / "secret.bin").write_bytes(b"\0" * 24)
    _refused(tmp_path, _external(tmp_path, "../secret.bin"), "not a file inside the model's folder")


def test_external_data_on_a_device(tmp_path):
    (tmp_path / "dev").symlink_to("/dev/zero")
    _refused(tmp_path, _external(tmp_path, "dev"), "not a file inside the model's folder")


def test_external_data_named_with_a_nul(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 24)
    _refused(tmp_path, _external(tmp_path, "w.bin\0/../../../etc/passwd"), "not a file inside the model's folder")


def test_external_data_resolved_relative_to_the_model(tmp_path):
    (tmp_path / "ext.onnx.data").write_bytes(np.full((2, 3), 2.0, np.float32).tobytes())
    path = _external(tmp_path, "ext.onnx.data")
    result = import_model(path, tmp_path / "e.yaml")
    assert np.load(tmp_path / "e.npz")["w"].tolist() == [[2.0] * 3] * 2
    assert result.parameters == 1


def test_huge_declared_shape(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20, 1 << 20, 1 << 10])
    _refused(tmp_path, _small_model(tmp_path / "huge.onnx", inputs=[x]), "more than this machine's memory")


def test_control_characters_in_names(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="bad\x1b[2Jname")]
    _refused(tmp_path, _small_model(tmp_path / "ctl.onnx", nodes), "control characters", "bad\\x1b[2Jname")


def test_names_too_long_for_a_yaml_key_are_shortened(tmp_path):
    long = "v" * 5000
    nodes = [helper.make_node("Relu", ["x"], [long], name="r"), helper.make_node("Relu", [long], ["y"], name="s")]
    path = _small_model(tmp_path / "long.onnx", nodes)
    result = _cli("import", path, "-o", tmp_path / "long.yaml")
    assert result.exit_code == 0, result.output
    assert _cli("run", tmp_path / "long.yaml").exit_code == 0


def test_contrib_domain_names_the_unoptimised_export(tmp_path):
    nodes = [helper.make_node("FusedConv", ["x"], ["y"], name="fused", domain="com.microsoft")]
    path = tmp_path / "opt.onnx"
    model = helper.make_model(helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                                                [helper.make_tensor_value_info("y", 1, None)]),
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
    path.write_bytes(model.SerializeToString())
    _refused(tmp_path, path, "import the unoptimised export")


def test_missing_onnx_is_exit_3_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    result = _cli("import", FIXTURES / "mlp.legacy.onnx", "-o", tmp_path / "m.yaml")
    assert result.exit_code == 3
    assert "pip install 'agrad[onnx]'" in result.output


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    def varint(n: int) -> bytes:
        out = b""
        while True:
            low, n = n & 0x7F, n >> 7
            out += bytes([low | (0x80 if n else 0)])
            if not n:
                return out
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_protobuf_bomb_nested_past_protobufs_depth_limit(tmp_path):
    graph = _field(1, _field(4, b"Relu"))                        # GraphProto{node: [NodeProto{op_type}]}
    for _ in range(300):                                          # If.then_branch, nested
        attribute = _field(1, b"then_branch") + _field(6, graph) + b"\xa0\x01\x05"   # type: GRAPH
        graph = _field(1, _field(4, b"If") + _field(5, attribute))
    model = b"\x08\x08" + _field(8, b"\x10\x12") + _field(7, graph)   # ir_version 8, opset 18, graph
    path = tmp_path / "bomb.onnx"
    path.write_bytes(model)
    _refused(tmp_path, path, "not an ONNX model")


def test_text_that_is_not_utf8_is_refused_as_a_corrupt_model(tmp_path):
    """protobuf decodes ONNX's proto2 string fields of invalid UTF-8 as bytes instead of failing: a
    node's output, and one inside a subgraph (an If's branch), each named by its path."""
    relu = helper.make_node("Relu", ["x"], ["y"], name="r")
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "body", [],
                             [helper.make_tensor_value_info("z", 1, [2, 3])])
    branch = helper.make_node("If", ["c"], ["w"], then_branch=body, else_branch=body)
    graph = helper.make_graph([relu, branch], "g", [helper.make_tensor_value_info("x", 1, [2, 3]),
                                                    helper.make_tensor_value_info("c", 9, [])],
                              [helper.make_tensor_value_info("y", 1, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()
    # same-length corruptions: a lone continuation byte is not UTF-8 anywhere
    for name, where in ((b"\x01x\x12\x01y", "model.graph.node[0].output[0]"),
                        (b"\x12\x01z", "model.graph.node[1].attribute[0].g.node[0].output[0]")):
        assert model.count(name) >= 1
        bad = model.replace(name, name[:-1] + b"\x80", 1)
        path = tmp_path / "bad.onnx"
        path.write_bytes(bad)
        _refused(tmp_path, path, "not an ONNX model", "is not UTF-8", where)
        path.unlink()


def test_arithmetic_on_hostile_attributes_is_a_refused_node(tmp_path):
    """A Split into 0 outputs divides by zero; an inf where an index goes does not convert to an int:
    each is that node's problem (exit 2), never an internal error."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    starts = numpy_helper.from_array(np.array([np.inf]), "starts")
    ends = numpy_helper.from_array(np.array([2], np.int64), "ends")
    for nodes, inits, needle in (
            ([helper.make_node("Split", ["x"], ["y"], axis=1, num_outputs=0, name="split")], [], "ZeroDivisionError"),
            ([helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="slice")], [starts, ends],
             "OverflowError")):
        model = helper.make_model(helper.make_graph(nodes, "g", [x], [out], initializer=inits),
                                  opset_imports=[helper.make_opsetid("", 18)])
        path = tmp_path / "hostile.onnx"
        path.write_bytes(model.SerializeToString())
        _refused(tmp_path, path, "cannot translate its attributes or inputs", needle)
        path.unlink()


def test_a_constant_of_an_unknown_tensor_type_cannot_be_read(tmp_path):
    value = numpy_helper.from_array(np.ones(2, np.float32), "v")
    value.data_type = 113                                  # no ONNX type has this number
    constant = helper.make_node("Constant", [], ["c"], value=value, name="c")
    add = helper.make_node("Add", ["x", "c"], ["y"], name="add")
    model = helper.make_model(helper.make_graph([constant, add], "g", [helper.make_tensor_value_info("x", 1, [2])],
                                                [helper.make_tensor_value_info("y", 1, None)]),
                              opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "const.onnx"
    path.write_bytes(model.SerializeToString())
    _refused(tmp_path, path, "Constant 'c' cannot be read: KeyError: 113")


def test_a_model_whose_shapes_disagree_is_the_models_problem_not_a_bug(tmp_path):
    """A Gemm of one output feature with a bias of two, declared to give two: lenient shape inference
    lets it through, the graph it makes cannot load, and ONNX's strict inference says why (the shape
    it infers and the one declared differ): exit 2, the model's fault."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
    inits = [numpy_helper.from_array(np.ones((1, 3), np.float32), "w"),
             numpy_helper.from_array(np.ones(2, np.float32), "b")]
    gemm = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")
    model = helper.make_model(helper.make_graph([gemm], "g", [x], [out], initializer=inits),
                              opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "disagree.onnx"
    path.write_bytes(model.SerializeToString())
    _refused(tmp_path, path, "the model's shapes disagree", "The graph it makes does not load")


def test_a_model_whose_declared_sizes_its_ops_refuse_is_the_models_problem_not_a_bug(tmp_path):
    """A 3x3 Conv over an input declared 0 wide: ONNX's inference, strict too, accepts it, and PyTorch's
    conv2d refuses it on Meta. Exit 2, the model's fault (it was exit 3, "a bug in agrad import")."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 0])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    conv = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], name="conv")
    model = helper.make_model(helper.make_graph([conv], "g", [x], [y], [numpy_helper.from_array(
        np.ones((1, 1, 3, 3), np.float32), "w")]), opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "narrow.onnx"
    path.write_bytes(model.SerializeToString())
    _refused(tmp_path, path, "narrow.onnx: the shapes the model declares do not fit its ops",
             "Kernel size can't be greater than actual input size")


def test_bad_shape_and_loss_options_are_usage_errors(tmp_path):
    model = FIXTURES / "mlp.legacy.onnx"
    for args, needle in ((["--shape", "y=2,6"], "the model has no input 'y'"),
                         (["--shape", "x=2,7"], "dimension 1 is 6 in the model, not 7"),
                         (["--shape", "x=2"], "1 dimensions given"),
                         (["--loss", "huber"], "expected sum, mean, cross_entropy:LABELS or mse:TARGET"),
                         (["--loss", "mse:x"], "'x' is not a free name")):
        result = _cli("import", model, "-o", tmp_path / "m.yaml", *args)
        assert result.exit_code == 2, (args, result.output)
        assert needle in result.output, (args, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_dynamic_batch_baked_into_a_reshape_stays_free(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    twelve = numpy_helper.from_array(np.array([12], np.int64), "twelve")
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "twelve"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="flat")]
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [zero, twelve, axes]),
                                opset_imports=[helper.make_opsetid("", 18)]), path)
    result = import_model(path, tmp_path / "d.yaml")
    assert result.folded == 4
    assert "y: reshape(x, [-1, 12])" in (tmp_path / "d.yaml").read_text()
    np.save(tmp_path / "x5.npy", np.ones((5, 3, 4), np.float32))
    run = graphs.load(tmp_path / "d.yaml", inputs={"x": str(tmp_path / "x5.npy")}).run()
    assert run.outputs["y"].shape == (5, 12)


def test_an_antialiased_resize_too_large_for_a_matrix_is_refused_not_resized_without_it(tmp_path):
    # (a small one is a product with each dim's interpolation matrix: test_import_ops)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 600, 4])
    sizes = numpy_helper.from_array(np.array([1, 1, 300, 2], np.int64), "sizes")
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="aa", mode="linear", antialias=1)
    _refused(tmp_path, _small_model(tmp_path / "aa.onnx", [node], [x], [sizes]), "'aa' (Resize", "antialias",
             "600 -> 300")


def test_a_0d_float_initializer_is_a_constant_not_a_parameter(tmp_path):
    # the dynamo exporter lifts constants into 0-d initializers (GELU's 0.044715, a Pow's exponent): as
    # parameters they would be trained, and a Pow exponent's gradient is NaN where the base is negative
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    w = numpy_helper.from_array(np.full((3,), 0.5, np.float32), "w")
    p = numpy_helper.from_array(np.array(3.0, np.float32), "val_0")
    nodes = [helper.make_node("Pow", ["x", "val_0"], ["c"], name="cube"),
             helper.make_node("Mul", ["c", "w"], ["y"], name="scale")]
    result = import_model(_small_model(tmp_path / "m.onnx", nodes, [x], [w, p]), tmp_path / "m.yaml")
    text = result.graph_path.read_text()
    assert "requires_grad: true" in text.split("w:", 1)[1].splitlines()[0]
    assert "val_0" not in text or "requires_grad" not in text.split("val_0", 1)[1].splitlines()[0]
    agrad_name = {o: a for a, o in result.names.items()}
    np.save(tmp_path / "x.npy", np.array([[-1.0, 2.0, -3.0], [0.5, -0.5, 1.0]], np.float32))
    run = graphs.load(result.graph_path, inputs={agrad_name["x"]: str(tmp_path / "x.npy")}).run()
    assert all(np.isfinite(g.detach().numpy()).all() for g in run.grads.values())
    np.testing.assert_allclose(run.grads[agrad_name["w"]].detach().numpy(),
                               np.array([-1 + 0.125, 8 - 0.125, -27 + 1], np.float32))


def test_an_if_whose_condition_is_known_at_import_is_its_taken_branch(tmp_path):
    # the legacy exporter leaves shape tests in the graph (`if x.dim() == 2: ...`): Shape -> Size -> Equal -> If
    ort = pytest.importorskip("onnxruntime")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    scale = numpy_helper.from_array(np.full((3,), 1.5, np.float32), "scale")

    def branch(name, op):
        out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node(op, ["x", "scale"], [f"{name}_out"], name=f"{name}_op")],
                                 name, [], [out])
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"), helper.make_node("Size", ["s"], ["rank"]),
             helper.make_node("Equal", ["rank", "two"], ["is2d"], name="test"),
             helper.make_node("If", ["is2d"], ["y"], name="branch", then_branch=branch("then", "Mul"),
                              else_branch=branch("else", "Add"))]
    path = tmp_path / "if.onnx"
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [two, scale]),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8        # what any onnxruntime reads (onnx's newest IR may be newer than it)
    onnx.save(model, path)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": data})
    result = import_model(path, tmp_path / "if.yaml")
    text = result.graph_path.read_text()
    assert "ONNX node 'then_op' Mul" in text and "else_op" not in text
    np.save(tmp_path / "x.npy", data)
    agrad_name = {o: a for a, o in result.names.items()}
    run = graphs.load(result.graph_path, inputs={agrad_name["x"]: str(tmp_path / "x.npy")}).run()
    np.testing.assert_allclose(list(run.outputs.values())[0].detach().numpy(), expected)


def test_a_malformed_if_is_refused_naming_the_node(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    cond = numpy_helper.from_array(np.array([], np.bool_), "cond")          # no element to decide by
    out = helper.make_tensor_value_info("b_out", TensorProto.FLOAT, None)
    branch = helper.make_graph([helper.make_node("Neg", ["x"], ["b_out"])], "b", [], [out])
    nodes = [helper.make_node("If", ["cond"], ["y"], name="iffy", then_branch=branch, else_branch=branch)]
    _refused(tmp_path, _small_model(tmp_path / "if.onnx", nodes, [x], [cond]), "'iffy' (If", "condition has 0 elements")
    nodes = [helper.make_node("If", ["one"], ["y"], name="half", then_branch=branch)]     # no else_branch
    one = numpy_helper.from_array(np.array(False), "one")
    _refused(tmp_path, _small_model(tmp_path / "half.onnx", nodes, [x], [one]), "'half' (If", "else_branch is missing")


def test_an_empty_output_is_refused_not_taken_for_the_default(tmp_path):
    path = _small_model(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"], name="r")])
    result = _cli("import", path, "-o", "")
    assert result.exit_code == 2 and "cannot write" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
