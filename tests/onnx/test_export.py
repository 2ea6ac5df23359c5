"""`agrad export`: the forward graph, and with --with-grads the backward pass, as ONNX models that
stock onnxruntime runs to agrad's own values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from agrad import graphs  # noqa: E402
from agrad.cli.main import cli  # noqa: E402
from agrad.graphs.inputs import host_array  # noqa: E402
from agrad.graphs.onnx.importing import import_model  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parents[2] / "graphs" / "examples"


def _cli(*args):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(cli, [str(a) for a in args])


def _onnxruntime(graph_path: Path, model_path: Path) -> dict[str, np.ndarray]:
    checked = graphs.load(graph_path)._checked
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    feeds = {i.name: host_array(checked.leaves[i.name], checked.seed) for i in session.get_inputs()}
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _agrad(graph_path: Path, name: str, run) -> np.ndarray:
    return (run.grads[name[5:]] if name.startswith("grad_") else run.values[name]).detach().numpy()


@pytest.mark.parametrize("name", ["mlp.legacy", "resblock.unfolded", "attention.legacy", "convbn.dynamo",
                                  "encoder.legacy"])
def test_imported_model_exported_with_grads_runs_in_onnxruntime(name, tmp_path):
    import_model(FIXTURES / f"{name}.onnx", tmp_path / "g.yaml")
    result = _cli("export", tmp_path / "g.yaml", "-o", tmp_path / "g.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    model = onnx.load(tmp_path / "g.onnx")
    onnx.checker.check_model(model, full_check=True)
    shaped = {v.name for v in model.graph.value_info} | {o.name for o in model.graph.output}
    edges = {o for n in model.graph.node for o in n.output}
    assert edges <= shaped, sorted(edges - shaped)[:10]              # a shape on every edge (for Netron)
    outputs = _onnxruntime(tmp_path / "g.yaml", tmp_path / "g.onnx")
    assert any(n.startswith("grad_") for n in outputs) and "loss" in outputs
    run = graphs.load(tmp_path / "g.yaml").run()
    for out, value in outputs.items():
        expected = _agrad(tmp_path / "g.yaml", out, run)
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-5, err_msg=out)


def test_round_trip_onnx_import_export_gives_the_original_outputs(tmp_path):
    import_model(FIXTURES / "resblock.legacy.onnx", tmp_path / "g.yaml")
    assert _cli("export", tmp_path / "g.yaml", "-o", tmp_path / "g.onnx").exit_code == 0
    ref = np.load(FIXTURES / "resblock.legacy.npz")
    original = ort.InferenceSession(str(FIXTURES / "resblock.legacy.onnx"), providers=["CPUExecutionProvider"])
    again = ort.InferenceSession(str(tmp_path / "g.onnx"), providers=["CPUExecutionProvider"])
    x = ref["in:x"]
    assert [i.name for i in again.get_inputs()] == ["x"]
    np.testing.assert_allclose(again.run(None, {"x": x})[0], original.run(None, {"x": x})[0], rtol=1e-6, atol=1e-7)


def test_example_graph_exports_and_imports_back_to_the_same_graph(tmp_path):
    source = tmp_path / "mlp.yaml"
    source.write_text((EXAMPLES / "mlp.yaml").read_text())
    assert _cli("export", source, "-o", tmp_path / "mlp.onnx", "--with-grads").exit_code == 0
    outputs = _onnxruntime(source, tmp_path / "mlp.onnx")
    run = graphs.load(source).run()
    for out, value in outputs.items():
        np.testing.assert_allclose(value, _agrad(source, out, run), rtol=1e-5, atol=1e-6, err_msg=out)
    assert _cli("export", source, "-o", tmp_path / "fwd.onnx").exit_code == 0
    back = import_model(tmp_path / "fwd.onnx", tmp_path / "back.yaml")
    again = graphs.load(back.graph_path).run()
    first = next(iter(run.outputs))
    np.testing.assert_allclose(again.values[first].detach().numpy(), run.values[first].detach().numpy(),
                               rtol=1e-6, atol=1e-7)


def test_op_without_onnx_equivalent_is_custom_domain_or_refused_with_strict(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  x: {shape: [3], init: uniform, low: -0.5, high: 0.5, requires_grad: true}\n"
                    "nodes:\n  y: erfinv(x) * 2.0\n  loss: sum(y)\nbackward: loss\n")
    strict = _cli("export", path, "-o", tmp_path / "s.onnx", "--strict")
    assert strict.exit_code == 2 and "erfinv" in strict.output
    assert not (tmp_path / "s.onnx").exists()
    loose = _cli("export", path, "-o", tmp_path / "l.onnx")
    assert loose.exit_code == 0 and "custom domain 'agrad'" in loose.output
    model = onnx.load(tmp_path / "l.onnx")
    assert any(n.domain == "agrad" and n.op_type == "erfinv" for n in model.graph.node)


@pytest.mark.parametrize("example", ["classifier", "split_and_slice", "mlp", "hessian_vector"])
def test_example_graphs_with_grads_run_in_onnxruntime(example, tmp_path):
    source = tmp_path / f"{example}.yaml"
    source.write_text((EXAMPLES / f"{example}.yaml").read_text())
    result = _cli("export", source, "-o", tmp_path / "m.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    run = graphs.load(source).run()
    for out, value in _onnxruntime(source, tmp_path / "m.onnx").items():
        tight = value.dtype == np.float64
        np.testing.assert_allclose(value, _agrad(source, out, run), rtol=1e-9 if tight else 1e-5,
                                   atol=1e-12 if tight else 1e-6, err_msg=out)


@pytest.mark.parametrize("example", ["resnet_block", "lstm", "gnn_layer"])
def test_float64_examples_with_grads_match_the_reference_evaluator(example, tmp_path):
    """These graphs are float64, which onnxruntime's Conv and Erf do not take: onnx's own reference
    implementation runs them (training-mode batch norms and strided convolutions, an LSTM cell
    unrolled, index_add message passing). The running statistics, updated in place, are not exported."""
    from onnx.reference import ReferenceEvaluator

    for data in EXAMPLES.glob("*.npy"):
        (tmp_path / data.name).write_bytes(data.read_bytes())
    source = tmp_path / f"{example}.yaml"
    source.write_text((EXAMPLES / f"{example}.yaml").read_text())
    result = _cli("export", source, "-o", tmp_path / "m.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    model = onnx.load(tmp_path / "m.onnx")
    checked = graphs.load(source)._checked
    feeds = {i.name: host_array(checked.leaves[i.name], checked.seed) for i in model.graph.input}
    outputs = dict(zip([o.name for o in model.graph.output], ReferenceEvaluator(model).run(None, feeds)))
    run = graphs.load(source).run()
    compared = [n for n in outputs if not n.startswith("running_")]
    assert "loss" in compared and any(n.startswith("grad_") for n in compared)
    for out in compared:
        np.testing.assert_allclose(outputs[out], _agrad(source, out, run), rtol=1e-9, atol=1e-12, err_msg=out)


def test_with_grads_follows_the_backward_pass_grad_tensors_and_inputs(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("dtype: float64\ninputs:\n  x: {shape: [3], init: normal, requires_grad: true}\n"
                    "  w: {shape: [3], init: normal, seed: 2, requires_grad: true}\n"
                    "nodes:\n  y: x * w + sin(x)\n"
                    "backward: {of: y, grad_tensors: [[1.0, 2.0, 3.0]], inputs: [x]}\n")
    assert _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads", "--strict").exit_code == 0
    outputs = _onnxruntime(path, tmp_path / "g.onnx")
    assert sorted(outputs) == ["grad_x", "y"]
    run = graphs.load(path).run()
    np.testing.assert_allclose(outputs["grad_x"], run.grads["x"].detach().numpy(), rtol=1e-12)


def test_max_pool3d_exports_as_maxpool_with_its_gradient(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  x: {shape: [2, 2, 4, 5, 6], init: normal, requires_grad: true}\n"
                    "nodes:\n  y: max_pool3d(x, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], ceil_mode=True)\n"
                    "  loss: sum(y * y)\n"
                    "backward: loss\n")
    assert _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads", "--strict").exit_code == 0
    assert "MaxPool" in {n.op_type for n in onnx.load(tmp_path / "g.onnx").graph.node}
    outputs = _onnxruntime(path, tmp_path / "g.onnx")
    run = graphs.load(path).run()
    np.testing.assert_allclose(outputs["grad_x"], run.grads["x"].detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs["loss"], run.values["loss"].detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("size,align", [([2, 1, 3, 4], False), ([2, 1, 2, 3, 2], True)])
def test_affine_grid_exports_as_a_constant_base_grid_times_theta(size, align, tmp_path):
    path = tmp_path / "g.yaml"
    dims = len(size) - 2
    path.write_text(f"inputs:\n  theta: {{shape: [2, {dims}, {dims + 1}], init: normal, requires_grad: true}}\n"
                    f"nodes:\n  grid: affine_grid(theta, {size}, {align})\n"
                    f"  loss: sum(grid * grid)\n"
                    f"backward: loss\n")
    result = _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    outputs = _onnxruntime(path, tmp_path / "g.onnx")
    run = graphs.load(path).run()
    np.testing.assert_allclose(outputs["loss"], run.values["loss"].detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(outputs["grad_theta"], run.grads["theta"].detach().numpy(), rtol=1e-5, atol=1e-5)


def test_a_slice_bound_past_int64_exports_as_python_slices_it(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  a: {value: [1.0, 2.0, 3.0], requires_grad: true}\n"
                    "nodes:\n  c: sum(a[-99999999999999999999:99999999999999999999:99999999999999999999])\n"
                    "backward: c\n")
    result = _cli("export", path, "-o", tmp_path / "g.onnx")
    assert result.exit_code == 0, result.output
    assert _onnxruntime(path, tmp_path / "g.onnx")["c"] == 1.0


def test_a_chain_of_thousands_of_ops_exports_with_its_gradient(tmp_path):
    """The walk from an output emits what it reads deepest first: a chain far past Python's
    recursion limit (it was refused at a few hundred ops) exports, and onnxruntime agrees."""
    path = tmp_path / "g.yaml"
    chain = "".join(f"  n{i}: n{i - 1} * a\n" for i in range(1, 3000))
    path.write_text(f"inputs:\n  a: {{value: 1.0001, requires_grad: true}}\nnodes:\n  n0: a * a\n{chain}"
                    "backward: n2999\n")
    result = _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads")
    assert result.exit_code == 0, result.output
    outputs = _onnxruntime(path, tmp_path / "g.onnx")
    assert set(outputs) == {"n2999", "grad_a"}
    run = graphs.load(path).run()
    for out, value in outputs.items():
        np.testing.assert_allclose(value, _agrad(path, out, run), rtol=1e-5, err_msg=out)


def test_export_traces_on_the_cpu_whatever_the_graphs_device(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("device: cuda:7\ninputs:\n  a: {value: 2.0, requires_grad: true}\nnodes:\n  c: a * a\nbackward: c\n")
    result = _cli("export", path, "-o", tmp_path / "g.onnx")
    assert result.exit_code == 0, result.output
    assert _onnxruntime(path, tmp_path / "g.onnx")["c"] == 4.0
    path.write_text("inputs:\n  a: {value: 2.0, requires_grad: true, device: dask}\nnodes:\n  c: a * a\nbackward: c\n")
    result = _cli("export", path, "-o", tmp_path / "h.onnx")
    assert result.exit_code == 2 and "'a' (dask)" in result.output and "internal error" not in result.output


def test_an_empty_output_is_refused_not_taken_for_the_default(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  a: {value: 2.0, requires_grad: true}\nnodes:\n  c: a * a\nbackward: c\n")
    result = _cli("export", path, "-o", "")
    assert result.exit_code == 2 and "cannot write" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.yaml"]


SPECTRAL = """dtype: {dtype}
inputs:
  x: {{shape: [2, 3, 16], init: normal, requires_grad: true}}
  w: {{shape: [3, 9, 2], init: normal, seed: 2, requires_grad: true}}
nodes:
  spectrum: fft_rfft(x, norm="ortho")
  weighted: view_as_real(spectrum * view_as_complex(w) + 0.5)
  filtered: fft_irfft(view_as_complex(weighted), n=16, norm="ortho")
  odd: fft_irfft(spectrum, n=15, dim=2)
  mixed: sum(pow(view_as_real(fft_fft(spectrum, dim=1)), 2.0), [3])
  full: view_as_real(fft_fft(x, dim=0))
  inverse: view_as_real(fft_ifft(x, n=10, dim=2, norm="forward"))
  y: filtered + mean(mixed, [2], True) + odd[:, :, :1]
  loss: sum(y * y) + sum(full * full) + sum(inverse)
outputs: [y, full, inverse, spectrum]
backward: loss
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fft_transforms_export_as_dft_with_their_gradients(dtype, tmp_path):
    """agrad.fft's primitives as DFT nodes over ONNX's (..., 2) pairs (the one-sided rfft, irfft of an even
    and an odd length, fft along two dims, ifft of a real signal, a conjugate), complex products and sums,
    and the backward pass through them (the conjugate, the zero-padded spectrum, complex sum_to_size); a
    complex output is its pairs."""
    path = tmp_path / "g.yaml"
    path.write_text(SPECTRAL.format(dtype=dtype))
    result = _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    model = onnx.load(tmp_path / "g.onnx")
    assert "DFT" in {n.op_type for n in model.graph.node}
    shaped = {v.name: v for v in list(model.graph.value_info) + list(model.graph.output)}
    assert {o for n in model.graph.node for o in n.output} <= set(shaped)
    assert [d.dim_value for d in shaped["spectrum"].type.tensor_type.shape.dim] == [2, 3, 9, 2]   # pairs
    assert [d.dim_value for d in shaped["weighted"].type.tensor_type.shape.dim] == [2, 3, 9, 2]
    if dtype == "float32":
        outputs, tolerance = _onnxruntime(path, tmp_path / "g.onnx"), 1e-4
    else:
        # (onnx's reference: onnxruntime's float64 DFT of an odd length is good to about 1e-9 only)
        from onnx.reference import ReferenceEvaluator

        checked = graphs.load(path)._checked
        feeds = {i.name: host_array(checked.leaves[i.name], checked.seed) for i in model.graph.input}
        outputs = dict(zip([o.name for o in model.graph.output], ReferenceEvaluator(model).run(None, feeds)))
        tolerance = 1e-12
    assert {"y", "full", "inverse", "loss", "grad_x", "grad_w"} <= set(outputs)
    run = graphs.load(path).run()
    for out, value in outputs.items():
        expected = _agrad(path, out, run)
        if expected.dtype.kind == "c":
            expected = np.stack([expected.real, expected.imag], -1)
        np.testing.assert_allclose(value, expected, rtol=tolerance, atol=tolerance, err_msg=out)


def test_imported_dft_model_exports_back_to_dft(tmp_path):
    """torch's dynamo export of an FNO-style layer, imported (DFT onto agrad.fft) and exported again
    (agrad.fft as DFT): onnxruntime gives the original's outputs."""
    import_model(FIXTURES / "spectral_filter.dynamo.onnx", tmp_path / "g.yaml")
    assert _cli("export", tmp_path / "g.yaml", "-o", tmp_path / "g.onnx", "--strict").exit_code == 0
    ref = np.load(FIXTURES / "spectral_filter.dynamo.npz")
    again = ort.InferenceSession(str(tmp_path / "g.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(again.run(None, {"x": ref["in:x"]})[0], ref["out:add"], rtol=1e-5, atol=1e-5)


def test_an_op_on_complex_values_without_a_complex_translation_is_not_run_on_the_pairs(tmp_path):
    """exp's ONNX Exp of the (real, imaginary) pairs would be wrong: without a translation that knows
    them it goes to the custom domain (refused with --strict)."""
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  x: {shape: [4], init: normal}\n"
                    "nodes:\n  y: view_as_real(exp(fft_fft(x)))\n")
    strict = _cli("export", path, "-o", tmp_path / "s.onnx", "--strict")
    assert strict.exit_code == 2 and "'exp'" in strict.output, strict.output


def test_complex_values_met_with_real_tensors_export_with_their_gradients(tmp_path):
    """A real tensor added to, subtracted from and multiplied with a complex one: the real parts only, or
    both parts; their gradients (real() of complex ones, negations) too."""
    path = tmp_path / "g.yaml"
    path.write_text("inputs:\n  x: {shape: [2, 8], init: normal, requires_grad: true}\n"
                    "  r: {shape: [2, 5], init: normal, seed: 2, requires_grad: true}\n"
                    "nodes:\n  s: fft_rfft(x)\n  t: view_as_real(s * 2.0 + r - s * r + (r - s))\n"
                    "  loss: sum(t * t)\noutputs: [t]\nbackward: loss\n")
    result = _cli("export", path, "-o", tmp_path / "g.onnx", "--with-grads", "--strict")
    assert result.exit_code == 0, result.output
    run = graphs.load(path).run()
    for out, value in _onnxruntime(path, tmp_path / "g.onnx").items():
        np.testing.assert_allclose(value, _agrad(path, out, run), rtol=1e-5, atol=1e-5, err_msg=out)
