"""The ops of ONNX's training domain (ai.onnx.preview.training) through agrad import: `Gradient`'s
outputs against central differences of the same function run by onnxruntime (which has no Gradient
op), at the graph's own values and at values fed in its inputs, to second order; Adagrad, Momentum
and Adam against onnx's reference evaluator. Each import's own gradients (through the Gradient
outputs, so third derivatives of the function) against finite differences (`check`)."""
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
from agrad.graphs.onnx.problems import ModelError  # noqa: E402

TRAINING = "ai.onnx.preview.training"
R = np.random.default_rng(3)


def _model(nodes, inputs: dict, outputs: list[str], path: Path, consts: dict | None = None) -> Path:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                     for n, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(TRAINING, 1)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def _run(path: Path, inputs: dict, tmp_path: Path):
    """The imported graph's outputs (by ONNX name) on `inputs`, and the graph."""
    result = import_model(path, tmp_path / "g.yaml")
    agrad_name = {o: a for a, o in result.names.items()}
    files = {}
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        files[agrad_name[name]] = str(tmp_path / f"{name}.npy")
    graph = graphs.load(result.graph_path, inputs=files)
    outputs = graph.run().outputs
    return {result.names[k]: v.detach().numpy() for k, v in outputs.items()}, graph


def _differences(nodes, inputs: dict, y: str, wrt: str, tmp_path: Path, eps=1e-6) -> np.ndarray:
    """d sum(y) / d inputs[wrt] by central differences of the forward model, run by onnxruntime."""
    path = _model(nodes, inputs, [y], tmp_path / "forward.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    grad = np.zeros_like(inputs[wrt])
    for i in np.ndindex(grad.shape):
        values = []
        for step in (eps, -eps):
            moved = dict(inputs)
            moved[wrt] = inputs[wrt].copy()
            moved[wrt][i] += step
            values.append(session.run(None, moved)[0].sum())
        grad[i] = (values[0] - values[1]) / (2 * eps)
    return grad


# y = sum(tanh(X @ W) * X[:, :2]): a function of both, through an intermediate H
FORWARD = [helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Tanh", ["H"], ["T"]),
           helper.make_node("Slice", ["X", "s0", "s2", "s1"], ["Xs"]), helper.make_node("Mul", ["T", "Xs"], ["P"]),
           helper.make_node("ReduceSum", ["P"], ["Y"], keepdims=0)]
SLICES = {"s0": np.array([0]), "s2": np.array([2]), "s1": np.array([1])}
X, W = R.normal(size=(4, 3)), R.normal(size=(3, 2))


def _forward_with_slices(extra=()):
    return [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v.astype(np.int64)))
            for k, v in SLICES.items()] + FORWARD + list(extra)


def test_gradient_is_the_derivative_of_the_graphs_function(tmp_path):
    gradient = helper.make_node("Gradient", ["X", "W"], ["dX", "dW"], domain=TRAINING, xs=["X", "W"], y="Y")
    path = _model(_forward_with_slices([gradient]), {"X": X, "W": W}, ["Y", "dX", "dW"], tmp_path / "m.onnx")
    got, graph = _run(path, {"X": X, "W": W}, tmp_path)
    for name in ("X", "W"):
        want = _differences(_forward_with_slices(), {"X": X, "W": W}, "Y", name, tmp_path)
        np.testing.assert_allclose(got[f"d{name}"], want, rtol=1e-6, atol=1e-8)
    assert graph.check().passed


def test_gradient_at_fed_values_recomputes_the_function_there(tmp_path):
    # dY/dH at H1 (H an intermediate: its inputs X and W no longer matter), and dY/dW with H fixed: zero
    H1 = R.normal(size=(4, 2))
    gradient = helper.make_node("Gradient", ["H1", "W", "X"], ["dH", "dW"], domain=TRAINING, xs=["H", "W"],
                                zs=["X"], y="Y")
    path = _model(_forward_with_slices([gradient]), {"X": X, "W": W, "H1": H1}, ["Y", "dH", "dW"],
                  tmp_path / "m.onnx")
    got, graph = _run(path, {"X": X, "W": W, "H1": H1}, tmp_path)
    after_h = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v.astype(np.int64)))
               for k, v in SLICES.items()] + FORWARD[1:]
    want = _differences(after_h, {"H": H1, "X": X}, "Y", "H", tmp_path)
    np.testing.assert_allclose(got["dH"], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(got["dW"], np.zeros_like(W))
    np.testing.assert_allclose(got["Y"], (np.tanh(X @ W) * X[:, :2]).sum())      # Y itself as the graph has it
    assert graph.check().passed


def test_gradient_of_a_gradient_is_the_second_derivative(tmp_path):
    # y = sum(W^3 * X): dy/dW = 3 W^2 X; the sum of that, differentiated again: 6 W X
    Wv, Xv = R.normal(size=(2, 3)), R.normal(size=(2, 3))
    nodes = [helper.make_node("Mul", ["W", "W"], ["W2"]), helper.make_node("Mul", ["W2", "W"], ["W3"]),
             helper.make_node("Mul", ["W3", "X"], ["P"]), helper.make_node("ReduceSum", ["P"], ["Y"], keepdims=0),
             helper.make_node("Gradient", ["W"], ["dW"], domain=TRAINING, xs=["W"], y="Y"),
             helper.make_node("ReduceSum", ["dW"], ["S"], keepdims=0),
             helper.make_node("Gradient", ["W", "X"], ["ddW", "ddX"], domain=TRAINING, xs=["W", "X"], y="S")]
    path = _model(nodes, {"W": Wv, "X": Xv}, ["dW", "ddW", "ddX"], tmp_path / "m.onnx")
    got, graph = _run(path, {"W": Wv, "X": Xv}, tmp_path)
    np.testing.assert_allclose(got["dW"], 3 * Wv ** 2 * Xv, rtol=1e-12)
    np.testing.assert_allclose(got["ddW"], 6 * Wv * Xv, rtol=1e-12)
    np.testing.assert_allclose(got["ddX"], 3 * Wv ** 2, rtol=1e-12)
    assert graph.check().passed


def test_gradient_of_a_tensor_is_that_of_its_sum_and_optional_outputs_may_be_left_out(tmp_path):
    gradient = helper.make_node("Gradient", ["X", "W"], ["", "dW"], domain=TRAINING, xs=["X", "W"], y="P")
    path = _model(_forward_with_slices([gradient]), {"X": X, "W": W}, ["dW"], tmp_path / "m.onnx")
    got, _ = _run(path, {"X": X, "W": W}, tmp_path)
    want = _differences(_forward_with_slices(), {"X": X, "W": W}, "Y", "W", tmp_path)
    np.testing.assert_allclose(got["dW"], want, rtol=1e-6, atol=1e-8)


def test_gradients_constant_in_the_inputs_leave_nothing_to_differentiate(tmp_path):
    # y = a + b: its gradients are ones whatever a and b, so the import, whose outputs they are, has no backward
    a, b = R.normal(size=(2,)), R.normal(size=(2,))
    nodes = [helper.make_node("Add", ["a", "b"], ["c"]),
             helper.make_node("Gradient", ["a", "b"], ["da", "db"], domain=TRAINING, xs=["a", "b"], y="c")]
    path = _model(nodes, {"a": a, "b": b}, ["da", "db"], tmp_path / "m.onnx")
    got, graph = _run(path, {"a": a, "b": b}, tmp_path)
    np.testing.assert_array_equal(got["da"], np.ones(2))
    np.testing.assert_array_equal(got["db"], np.ones(2))
    assert "backward:" not in (tmp_path / "g.yaml").read_text()


@pytest.mark.parametrize("xs, inputs, message", [
    (["I"], ["I"], "the gradient with respect to 'I', of dtype int64 (only a float tensor has one)"),
    (["F"], ["F"], "the gradient with respect to 'F', whose value 'F' is known at import or computed from no float "
                   "input or parameter (agrad's autograd records what is)"),
    (["X"], ["X", "X"], "2 inputs for the 1 tensors xs and zs name"),
])
def test_a_gradient_agrad_cannot_take_is_refused_with_its_node(tmp_path, xs, inputs, message):
    nodes = [helper.make_node("Cast", ["I"], ["F"], to=TensorProto.DOUBLE), helper.make_node("Add", ["F", "X"], ["Y"]),
             helper.make_node("Gradient", inputs, ["d"], domain=TRAINING, xs=xs, y="Y", name="grad")]
    path = _model(nodes, {"X": X, "I": np.ones((4, 3), np.int64)}, ["d"], tmp_path / "m.onnx")
    with pytest.raises(ModelError) as found:
        import_model(path, tmp_path / "g.yaml")
    assert found.value.problems == [f"m.onnx: node 2 'grad' (Gradient, opset {TRAINING}): {message}"]


def test_gradient_of_the_default_domain_is_no_op(tmp_path):
    nodes = [helper.make_node("Add", ["X", "X"], ["Y"]), helper.make_node("Gradient", ["X"], ["d"], xs=["X"], y="Y")]
    path = _model(nodes, {"X": X}, ["d"], tmp_path / "m.onnx")
    with pytest.raises(ModelError, match="no agrad translation for this op"):
        import_model(path, tmp_path / "g.yaml")


# ---- one optimizer step --------------------------------------------------------------------------------

def _f32(*shape):
    return R.normal(size=shape).astype(np.float32)


OPTIMIZERS = [
    ("Adagrad", {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.01}, 3),
    ("Momentum", {"alpha": 0.9, "beta": 0.3, "mode": "standard", "norm_coefficient": 0.01}, 3),
    ("Momentum", {"alpha": 0.9, "beta": 0.3, "mode": "nesterov", "norm_coefficient": 0.0}, 3),
    ("Adam", {"alpha": 0.8, "beta": 0.95, "epsilon": 1e-4, "norm_coefficient": 0.01, "norm_coefficient_post": 0.02}, 4),
]


@pytest.mark.parametrize("step", [0, 3])
@pytest.mark.parametrize("op, attrs, per", OPTIMIZERS, ids=[f"{o}-{a.get('mode', '')}" for o, a, _ in OPTIMIZERS])
def test_optimizer_step_matches_the_reference(tmp_path, op, attrs, per, step):
    # two tensors, each with its gradient and state; the state squared-like where it is a sum of squares
    shapes = [(2, 3), (4,)]
    groups = [[_f32(*s) if k < 2 or op == "Momentum" else np.abs(_f32(*s)) for s in shapes] for k in range(per)]
    names = [f"{kind}{i}" for kind in "XGVH"[:per] for i in range(len(shapes))]
    values = dict(zip(names, [v for group in groups for v in group]))
    inputs = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64), **values}
    outs = [f"{kind}_new{i}" for kind in ["X"] + list("VH"[:per - 2]) for i in range(len(shapes))]
    node = helper.make_node(op, list(inputs), outs, domain=TRAINING, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                                           list(v.shape)) for n, v in inputs.items()],
                              [helper.make_empty_tensor_value_info(o) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)])   # (that domain alone)
    model.ir_version = 8
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    expected = ReferenceEvaluator(model).run(None, inputs)
    got, graph = _run(path, inputs, tmp_path)
    for name, want in zip(outs, expected):
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    assert graph.check().passed
