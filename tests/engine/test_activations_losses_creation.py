"""What the generated op tests and the PyTorch fixtures do not reach for the extra activations,
losses and factories: PyTorch's errors and messages, factory values (from PyTorch 2.13.0, noted
beside each), the seeded *_like ops, and cosine_similarity's clamped norms."""
import numpy as np
import pytest

import agrad


def t(values, **kw):
    return agrad.tensor(values, dtype=kw.pop("dtype", "float64"), **kw)


# ---- activations ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,message", [
    (lambda: agrad.elu(agrad.tensor([1, 2])), "\"elu_cpu\" not implemented for 'Long'"),
    (lambda: agrad.selu(agrad.tensor([1, 2])), "\"elu_cpu\" not implemented for 'Long'"),
    (lambda: agrad.mish(agrad.tensor([1, 2])), "\"mish_cpu\" not implemented for 'Long'"),
    (lambda: agrad.hardswish(agrad.tensor([1, 2])), "\"hardswish_cpu\" not implemented for 'Long'"),
    (lambda: agrad.logsigmoid(agrad.tensor([1, 2])), "\"log_sigmoid_cpu\" not implemented for 'Long'"),
    (lambda: agrad.glu(agrad.tensor([1, 2])), "\"glu_cpu\" not implemented for 'Long'"),
])
def test_float_only_activations_reject_integers_as_pytorch(fn, message):
    with pytest.raises(NotImplementedError, match=message):
        fn()


@pytest.mark.parametrize("fn,message", [
    (lambda: agrad.glu(t([1.0, 2.0, 3.0])), "Halving dimension must be even, but dimension 0 is size 3"),
    (lambda: agrad.glu(t(1.0)), "glu does not support scalars because halving size must be even"),
    (lambda: agrad.celu(t([1.0]), 0.0), "ZeroDivisionError: alpha cannot be 0 for CELU"),
    (lambda: agrad.prelu(agrad.ones(2, 3), agrad.ones(2)),
     "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and channel size = 3."),
    (lambda: agrad.prelu(agrad.ones(2, 3), agrad.ones(3, 1)),
     "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    (lambda: agrad.prelu(agrad.ones(2, 3), agrad.ones(3, dtype="float64")),
     "prelu: Type promoting not supported. Got Float and Double"),
])
def test_activation_errors_are_pytorchs(fn, message):
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        fn()


def test_hardtanh_rejects_crossed_bounds_as_f_hardtanh():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        agrad.hardtanh(agrad.ones(2), 2.0, 1.0)


def test_hardtanh_keeps_integer_inputs_and_relu6_records_hardtanh():
    out = agrad.hardtanh(agrad.tensor([1, 5, -4]), 0, 3)
    assert out.dtype == agrad.int64 and out.tolist() == [1, 3, 0]
    y = agrad.relu6(t([-1.0, 3.0, 7.0], requires_grad=True))
    assert y.grad_fn.name() == "HardtanhBackward0" and y.tolist() == [0.0, 3.0, 6.0]


def test_logsigmoid_and_mish_stay_finite_far_out():
    x = t([-1000.0, -40.0, 40.0, 1000.0], requires_grad=True)
    y = agrad.logsigmoid(x)
    assert np.allclose(y.tolist(), [-1000.0, -40.0, -4.248354255291589e-18, 0.0])
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.tolist())) and x.grad.tolist()[0] == 1.0
    assert np.all(np.isfinite(agrad.mish(x).tolist()))


def test_softmin_implicit_dim_is_pytorchs():
    x = t([[1.0, 2.0], [3.0, 5.0]])
    assert np.allclose(agrad.softmin(x).tolist(), agrad.softmax(-x, 1).tolist())
    x3 = agrad.rand(2, 3, 4, dtype="float64")
    assert np.allclose(agrad.softmin(x3).tolist(), agrad.softmax(-x3, 0).tolist())


def test_prelu_weight_gradient_is_summed_to_the_weight():
    x = t([[-1.0, 2.0], [-3.0, -4.0]], requires_grad=True)
    w = t([0.25], requires_grad=True)
    agrad.prelu(x, w).sum().backward()
    assert w.grad.shape == (1,) and w.grad.tolist() == [-8.0]
    assert x.grad.tolist() == [[0.25, 1.0], [0.25, 0.25]]


# ---- losses -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,exc,message", [
    (lambda: agrad.smooth_l1_loss(agrad.ones(2), agrad.ones(2), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: agrad.huber_loss(agrad.ones(2), agrad.ones(2), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda: agrad.binary_cross_entropy(t([1.5]), t([1.0])), RuntimeError,
     "all elements of input should be between 0 and 1"),
    (lambda: agrad.binary_cross_entropy(t([0.5]), t([1.5])), RuntimeError,
     "all elements of target should be between 0 and 1"),
    (lambda: agrad.binary_cross_entropy(t([0.5]), t([[1.0]])), ValueError, "Using a target size"),
    (lambda: agrad.kl_div(agrad.ones(2), agrad.ones(2), reduction="bad"), ValueError,
     "bad is not a valid value for reduction"),
    (lambda: agrad.kl_div(agrad.tensor([1, 2]), agrad.tensor([0, 0])), RuntimeError,
     "kl_div: Integral inputs not supported."),
    (lambda: agrad.l1_loss(agrad.ones(2), agrad.ones(2), weight=agrad.ones(1)), ValueError,
     "Weights and input must have the same size."),
    (lambda: agrad.cosine_embedding_loss(agrad.ones(2, 3), agrad.ones(2, 3), agrad.ones(2, 1)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: agrad.cosine_embedding_loss(agrad.ones(2, 3), agrad.ones(2, 3), agrad.ones(())), RuntimeError,
     "0D target tensor expects 1D input tensors, but found inputs with sizes"),
    (lambda: agrad.margin_ranking_loss(agrad.ones(3), agrad.ones(3), agrad.ones(())), RuntimeError,
     "margin_ranking_loss : All input tensors should have same dimension"),
    (lambda: agrad.triplet_margin_loss(agrad.ones(2, 3), agrad.ones(2, 3), agrad.ones(3)), RuntimeError,
     "anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: agrad.triplet_margin_loss(agrad.ones(2, 3), agrad.ones(2, 3), agrad.ones(2, 3), margin=0.0),
     ValueError, "margin must be greater than 0, got 0.0"),
])
def test_loss_errors_are_pytorchs(fn, exc, message):
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(".", r"\.")):
        fn()


def test_binary_cross_entropy_clamps_its_logs_at_minus_100():
    loss = agrad.binary_cross_entropy(t([0.0, 1.0]), t([1.0, 0.0]), reduction="none")
    assert loss.tolist() == [100.0, 100.0]      # PyTorch 2.13: tensor([100., 100.])


def test_cosine_similarity_clamps_each_norm_and_differentiates_the_unclamped_one():
    a = t([[0.01, 0.02]], requires_grad=True)
    out = agrad.cosine_similarity(a, t([[1.0, 2.0]]), eps=0.1)
    out.backward()
    # PyTorch 2.13: tensor([0.2236]) and a.grad tensor([[3.4721, 6.9443]])
    assert out.grad_fn.name() == "SumBackward1"
    assert np.allclose(out.tolist(), [0.223606797749979])
    assert np.allclose(a.grad.tolist(), [[3.472135954999579, 6.944271909999159]])


def test_cosine_similarity_converts_an_integer_input_as_aten():
    out = agrad.cosine_similarity(agrad.tensor([[3, 4]]), agrad.tensor([[3.0, 4.0]]))
    assert out.dtype == agrad.float32 and np.isclose(out.item(), 1.0)
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        agrad.cosine_similarity(agrad.tensor([[1, 2]]), agrad.tensor([[1, 2]]))


def test_smooth_l1_with_beta_0_is_l1_loss():
    x, y = t([1.0, -2.0, 0.5], requires_grad=True), t([0.0, 0.0, 1.0])
    out = agrad.smooth_l1_loss(x, y, beta=0.0)
    assert out.grad_fn.name() == "MeanBackward0"
    assert np.isclose(out.item(), agrad.l1_loss(x, y).item())


def test_kl_div_batchmean_divides_the_sum_by_the_batch():
    x = agrad.log(t([[0.2, 0.8], [0.5, 0.5]]))
    p = t([[0.1, 0.9], [0.3, 0.7]])
    total = agrad.kl_div(x, p, reduction="sum").item()
    assert np.isclose(agrad.kl_div(x, p, reduction="batchmean").item(), total / 2)
    assert np.isclose(agrad.kl_div(x, agrad.log(p), reduction="sum", log_target=True).item(), total)


# ---- creation ---------------------------------------------------------------------------------

def test_arange_infers_and_converts_as_pytorch():
    assert agrad.arange(5).dtype == agrad.int64
    assert agrad.arange(1, 2.5, 0.5).dtype == agrad.get_default_dtype()
    assert agrad.arange(0.5, 3.7, 1.1, dtype="int64").tolist() == [0, 1, 2]    # torch: tensor([0, 1, 2])
    assert agrad.arange(0, -1, -0.25).tolist() == [0.0, -0.25, -0.5, -0.75]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        agrad.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        agrad.arange(0, -1, 1)


def test_linspace_and_logspace_values_are_pytorchs():
    # torch.linspace(0, 1, 7, dtype=torch.float64).tolist(): the second half counted back from end
    assert agrad.linspace(0, 1, 7, dtype="float64").tolist() == [
        0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666667, 0.8333333333333334, 1.0]
    assert agrad.linspace(-1, 1, 7, dtype="int64").tolist() == [-1, 0, 0, 0, 0, 0, 1]
    assert agrad.linspace(0, 10, 5, dtype="int64").tolist() == [0, 2, 5, 7, 10]
    assert agrad.linspace(0, 1, 5).dtype == agrad.get_default_dtype()
    assert agrad.linspace(1, 1, 1).tolist() == [1.0] and agrad.linspace(0, 1, 0).shape == (0,)
    assert agrad.logspace(0, 3, 4, dtype="int64").tolist() == [1, 10, 100, 1000]
    assert agrad.logspace(0, 2, 3, base=2).tolist() == [1.0, 2.0, 4.0]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        agrad.linspace(0, 1, -1)


def test_like_ops_are_graph_usable_ops_without_gradient():
    x = agrad.ones(2, 3, requires_grad=True)
    z = agrad.zeros_like(x)
    assert agrad.dispatcher.get_op("zeros_like") is not None
    assert not z.requires_grad and z.dtype == x.dtype and z.tolist() == [[0.0] * 3] * 2
    assert agrad.full_like(agrad.tensor([1, 2]), 2.5).tolist() == [2, 2]      # torch: tensor([2, 2])
    assert agrad.ones_like(x, dtype="float64").dtype == agrad.float64


def test_random_like_is_seeded_as_graph_inputs_are():
    x = agrad.zeros(3, 4, dtype="float64")
    a = agrad.randn_like(x, seed=7)
    assert a.tolist() == agrad.randn_like(x, seed=7).tolist()
    # the same numbers as a graph input {shape: [3, 4], init: normal, seed: 7}
    assert np.array_equal(a.numpy(), np.random.default_rng(7).normal(0.0, 1.0, size=(3, 4)))
    u = agrad.rand_like(x, seed=7)
    assert np.array_equal(u.numpy(), np.random.default_rng(7).uniform(0.0, 1.0, size=(3, 4)))
    agrad.manual_seed(5)
    first = agrad.randn_like(x)
    agrad.manual_seed(5)
    assert first.tolist() == agrad.randn_like(x).tolist() != agrad.randn_like(x).tolist()
    assert agrad.randn_like(x.to("meta")).device.type == "meta"


def test_graph_files_call_the_like_ops(tmp_path):
    path = tmp_path / "like.yaml"
    path.write_text(
        "dtype: float64\n"
        "inputs:\n"
        "  mu: {shape: [2, 3], init: normal, seed: 1, requires_grad: true}\n"
        "  e: {shape: [2, 3], init: normal, seed: 3}\n"
        "nodes:\n"
        "  eps: randn_like(mu, seed=3)\n"
        "  one: ones_like(mu, dtype=\"float32\")\n"
        "  loss: sum((mu + eps * exp(zeros_like(mu))) ** 2)\n"
        "backward: loss\n"
        "outputs: [eps, one, loss]\n")
    run = agrad.graphs.load(path).run()
    assert run.outputs["eps"].tolist() == run.values["e"].tolist()     # the graph's own normal init, seed 3
    assert run.outputs["one"].dtype == agrad.float32
    mu, eps = run.values["mu"], run.values["e"]
    assert np.allclose(run.grads["mu"].tolist(), (2 * (mu + eps)).tolist())
