"""The remaining elementwise ops and reductions: values against NumPy / math computed
independently, PyTorch's gradients at the awkward points (ties, zeros, bounds),
grad_fn names and PyTorch's error messages."""
import math

import numpy as np
import pytest

import agrad

f64 = agrad.float64


def t(values, dtype=f64, requires_grad=True):
    return agrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def grad_of(out, x, create_graph=False, grad_output=None, retain_graph=None):
    if grad_output is None and out.numel() == 1:
        out = out.sum()
    (g,) = agrad.autograd.grad([out], [x], None if grad_output is None else [grad_output],
                               create_graph=create_graph, retain_graph=retain_graph)
    return g


RNG = np.random.default_rng(1234)
X = RNG.uniform(-3, 3, size=(4, 5))


# ---- unary ------------------------------------------------------------------------------

@pytest.mark.parametrize("op,ref", [("sqrt", np.sqrt), ("rsqrt", lambda a: 1 / np.sqrt(a)), ("sin", np.sin),
                                    ("cos", np.cos), ("abs", np.abs), ("sign", np.sign)])
def test_unary_values(op, ref):
    x = np.abs(X) + 0.1 if op in ("sqrt", "rsqrt") else X
    np.testing.assert_allclose(getattr(agrad, op)(t(x)).detach().numpy(), ref(x), rtol=1e-14)


@pytest.mark.parametrize("op,name", [("sqrt", "SqrtBackward0"), ("rsqrt", "RsqrtBackward0"), ("abs", "AbsBackward0"),
                                     ("sign", "SignBackward0"), ("sin", "SinBackward0"), ("cos", "CosBackward0"),
                                     ("silu", "SiluBackward0"), ("gelu", "GeluBackward0"),
                                     ("leaky_relu", "LeakyReluBackward0"), ("softplus", "SoftplusBackward0")])
def test_unary_grad_fn_names(op, name):
    assert getattr(agrad, op)(t([0.5, 1.5])).grad_fn.name() == name


def test_unary_float_ops_promote_integers_to_default_float():
    x = agrad.tensor([1, 4, 9])
    for op in ("sqrt", "rsqrt", "sin", "cos"):
        assert getattr(agrad, op)(x).dtype == agrad.float32
    assert agrad.sqrt(x).tolist() == [1.0, 2.0, 3.0]
    assert agrad.sqrt(agrad.tensor([True, False])).dtype == agrad.float32


def test_abs_and_sign_keep_integer_dtypes():
    x = agrad.tensor([-3, 0, 2])
    assert agrad.abs(x).dtype == agrad.int64 and agrad.abs(x).tolist() == [3, 0, 2]
    assert agrad.sign(x).tolist() == [-1, 0, 1]
    b = agrad.tensor([True, False])
    assert agrad.sign(b).dtype == agrad.bool_ and agrad.sign(b).tolist() == [True, False]
    with pytest.raises(NotImplementedError, match="\"abs_cpu\" not implemented for 'Bool'"):
        agrad.abs(b)


def test_abs_gradient_is_sign_and_zero_at_zero():
    x = t([-2.0, 0.0, 3.0])
    assert grad_of(agrad.abs(x).sum(), x).tolist() == [-1.0, 0.0, 1.0]
    assert grad_of(agrad.sign(x).sum(), x).tolist() == [0.0, 0.0, 0.0]


def test_sqrt_gradient_at_zero_is_inf_as_pytorch():
    x = t([0.0, 4.0])
    assert grad_of(agrad.sqrt(x).sum(), x).tolist() == [math.inf, 0.25]


def test_tensor_methods_exist():
    x = t([1.0, 4.0])
    assert x.sqrt().tolist() == [1.0, 2.0]
    assert x.clamp(max=2.0).tolist() == [1.0, 2.0]
    assert x.amax().item() == 4.0 and x.prod().item() == 4.0


# ---- activations --------------------------------------------------------------------------

def _normal_cdf(x):
    # NOTE: Phi(x) = erfc(-x / sqrt 2) / 2; the textbook (1 + erf(x / sqrt 2)) / 2 cancels for x << 0
    return 0.5 * np.vectorize(math.erfc)(-x * math.sqrt(0.5))


def _gelu_exact(x):
    return x * _normal_cdf(x)


def test_gelu_exact_matches_math_erfc_over_a_wide_range():
    # relative error everywhere, the tail included (gelu(-12) ~ 2e-32): rtol 1e-13 is ~450 ulps, room for
    # SciPy's and libm's erfc (a few ulps, times ~2x^2 from the rounding of x^2 inside exp(-x^2))
    x = np.linspace(-12, 12, 4001)
    np.testing.assert_allclose(agrad.gelu(t(x)).detach().numpy(), _gelu_exact(x), rtol=1e-13, atol=0)
    # the derivative Phi(x) + x phi(x) crosses 0 near x = -0.75, hence an absolute tolerance there
    d = _normal_cdf(x) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    xt = t(x)
    np.testing.assert_allclose(grad_of(agrad.gelu(xt).sum(), xt).detach().numpy(), d, rtol=1e-13, atol=1e-15)


def test_gelu_tanh_approximation():
    x = X
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    # NOTE: 1 + tanh(inner) cancels for x < 0 (x = -3: 400x), so an ulp of difference in `inner` (x ** 3 is
    # libm's pow, agrad multiplies) shows up as ~1e-13 relative
    np.testing.assert_allclose(agrad.gelu(t(x), approximate="tanh").detach().numpy(), 0.5 * x * (1 + np.tanh(inner)),
                               rtol=1e-11)


def test_gelu_float32_and_float16():
    x = np.linspace(-4, 4, 33)
    for dt in (agrad.float32, agrad.float16):
        out = agrad.gelu(agrad.tensor(x, dtype=dt))
        assert out.dtype == dt
        np.testing.assert_allclose(out.detach().numpy().astype(np.float64), _gelu_exact(x), rtol=2e-3 if dt is agrad.float16
                                   else 1e-6, atol=2e-3 if dt is agrad.float16 else 1e-6)


def test_gelu_errors_as_pytorch():
    with pytest.raises(RuntimeError, match="^approximate argument must be either none or tanh.$"):
        agrad.gelu(t([1.0]), approximate="sigmoid")
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        agrad.gelu(agrad.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"silu_cpu\" not implemented for 'Int'"):
        agrad.silu(agrad.tensor([1, 2], dtype=agrad.int32))
    meta = agrad.tensor([1, 2]).to("meta")
    with pytest.raises(NotImplementedError, match="leaky_relu_cpu"):
        agrad.leaky_relu(meta)


def test_leaky_relu_values_and_gradient():
    x = t([-2.0, -0.5, 0.0, 1.5])
    y = agrad.leaky_relu(x, 0.1)
    np.testing.assert_allclose(y.detach().numpy(), [-0.2, -0.05, 0.0, 1.5])
    # at 0 PyTorch takes the negative side's slope (self > 0 ? grad : grad * slope)
    np.testing.assert_allclose(grad_of(y.sum(), x).detach().numpy(), [0.1, 0.1, 0.1, 1.0])
    assert agrad.leaky_relu(x).detach().numpy()[0] == pytest.approx(-0.02)


def test_silu_backward_has_its_own_double_backward():
    g, x = t(RNG.normal(size=5)), t(RNG.uniform(-3, 3, size=5))
    y = agrad.silu_backward(g, x)
    assert y.grad_fn.name() == "SiluBackwardBackward0"
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    np.testing.assert_allclose(y.detach().numpy(), g.detach().numpy() * s * (1 + x.detach().numpy() * (1 - s)),
                               rtol=1e-14)


def test_silu_values_and_second_derivative():
    x = t(X)
    np.testing.assert_allclose(agrad.silu(x).detach().numpy(), X / (1 + np.exp(-X)), rtol=1e-14)
    assert grad_of(agrad.silu(x).sum(), x).grad_fn is None
    g = grad_of(agrad.silu(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"      # PyTorch's differentiable silu derivative under create_graph
    h = grad_of(g.sum(), x)
    s = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(h.detach().numpy(), s * (1 - s) * (2 + X * (1 - 2 * s)), rtol=1e-12)


def test_softplus_threshold_and_large_inputs():
    x = t([-1000.0, -1.0, 0.0, 1.0, 19.0, 21.0, 1000.0])
    y = agrad.softplus(x)
    ref = np.log1p(np.exp(np.array([-1000.0, -1.0, 0.0, 1.0, 19.0]))).tolist() + [21.0, 1000.0]
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-14)
    g = grad_of(y.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), [0.0, 1 / (1 + math.e), 0.5, 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-19)),
                                           1.0, 1.0], rtol=1e-14)
    # beta scales the input; the linear region starts where beta * x > threshold
    z = t([0.4, 0.6])
    np.testing.assert_allclose(agrad.softplus(z, beta=2.0, threshold=1.0).detach().numpy(),
                               [math.log1p(math.exp(0.8)) / 2, 0.6], rtol=1e-14)


# ---- maximum / minimum / clamp ------------------------------------------------------------

def test_maximum_minimum_values_and_ties_split_the_gradient():
    a, b = t([1.0, 2.0, 3.0]), t([3.0, 2.0, 1.0])
    y = agrad.maximum(a, b)
    assert y.tolist() == [3.0, 2.0, 3.0] and y.grad_fn.name() == "MaximumBackward0"
    ga, gb = agrad.autograd.grad([y.sum()], [a, b])
    assert ga.tolist() == [0.0, 0.5, 1.0] and gb.tolist() == [1.0, 0.5, 0.0]
    z = agrad.minimum(a, b)
    assert z.tolist() == [1.0, 2.0, 1.0] and z.grad_fn.name() == "MinimumBackward0"
    ga, gb = agrad.autograd.grad([z.sum()], [a, b])
    assert ga.tolist() == [1.0, 0.5, 0.0] and gb.tolist() == [0.0, 0.5, 1.0]


def test_maximum_broadcasts_promotes_and_propagates_nan():
    a = agrad.tensor([[1, 5]])
    b = agrad.tensor([[2.5], [0.5]])
    y = agrad.maximum(a, b)
    assert y.shape == (2, 2) and y.dtype == agrad.float32
    assert y.tolist() == [[2.5, 5.0], [1.0, 5.0]]
    assert math.isnan(agrad.maximum(t([math.nan]), t([1.0])).item())


def test_clamp_scalar_bounds():
    x = t([-2.0, -1.0, 0.0, 1.0, 2.0])
    y = agrad.clamp(x, -1.0, 1.0)
    assert y.tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0] and y.grad_fn.name() == "ClampBackward1"
    # the subgradient 1 at the bounds themselves
    assert grad_of(y.sum(), x).tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert agrad.clamp(x, min=0.5).tolist() == [0.5, 0.5, 0.5, 1.0, 2.0]
    assert agrad.clamp(x, max=-1.5).tolist() == [-2.0, -1.5, -1.5, -1.5, -1.5]


def test_clamp_tensor_bounds_gradients():
    x = t([-2.0, 0.0, 2.0, 0.5])
    lo = t([-1.0, -1.0, -1.0, 1.0])
    hi = t([1.0, 1.0, 1.0, -1.0])            # last element: min > max, so the result is max
    y = agrad.clamp(x, lo, hi)
    assert y.grad_fn.name() == "ClampBackward0"
    assert y.tolist() == [-1.0, 0.0, 1.0, -1.0]
    gx, glo, ghi = agrad.autograd.grad([y.sum()], [x, lo, hi])
    assert gx.tolist() == [0.0, 1.0, 0.0, 0.0]
    assert glo.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert ghi.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_clamp_broadcast_tensor_bound_gets_summed_gradient():
    x = t([[-2.0, 0.0], [3.0, -4.0]])
    lo = t([-1.0, -1.0])
    (glo,) = agrad.autograd.grad([agrad.clamp(x, lo).sum()], [lo])
    assert glo.tolist() == [1.0, 1.0]


def test_clamp_type_promotion_and_errors():
    y = agrad.clamp(agrad.tensor([1, 2, 3]), min=1.5)
    assert y.dtype == agrad.float32 and y.tolist() == [1.5, 2.0, 3.0]
    assert agrad.clamp(agrad.tensor([1, 2, 3]), 2).dtype == agrad.int64
    with pytest.raises(RuntimeError, match="^torch.clamp: At least one of 'min' or 'max' must not be None$"):
        agrad.clamp(t([1.0]))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        agrad.clamp(t([1.0]).to("meta"))
    with pytest.raises(TypeError, match=r"^clamp\(\) received an invalid combination of arguments - got "
                                        r"\(Tensor, Tensor, float\)"):
        agrad.clamp(t([1.0]), t([0.0]), 2.0)


# ---- amax / amin ------------------------------------------------------------------------

def test_amax_amin_values_with_dims():
    x = t(RNG.normal(size=(3, 4, 2)))
    a = x.detach().numpy()
    np.testing.assert_array_equal(agrad.amax(x, [0, 2]).detach().numpy(), a.max(axis=(0, 2)))
    np.testing.assert_array_equal(agrad.amin(x, 1, True).detach().numpy(), a.min(axis=1, keepdims=True))
    assert agrad.amax(x).shape == () and agrad.amax(x).item() == a.max()
    assert agrad.amax(x).grad_fn.name() == "AmaxBackward0" and agrad.amin(x).grad_fn.name() == "AminBackward0"


def test_amax_ties_share_the_gradient_evenly():
    x = t([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g = grad_of(agrad.amax(x, 1).sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    y = t([[2.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g = grad_of(agrad.amin(y).sum(), y)
    np.testing.assert_allclose(g.detach().numpy(), [[0.25, 0, 0], [0.25, 0.25, 0.25]])


def test_amax_empty_errors_as_pytorch():
    e = agrad.zeros(2, 0)
    with pytest.raises(IndexError, match=r"^amax\(\): Expected reduction dim 1 to have non-zero size.$"):
        agrad.amax(e, 1)
    assert agrad.amax(e, 0).shape == (0,)
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim to be specified"):
        agrad.amin(e.to("meta"))


# ---- prod -----------------------------------------------------------------------------------

def test_prod_values_and_dtypes():
    x = t(RNG.uniform(0.5, 1.5, size=(3, 4)))
    np.testing.assert_allclose(agrad.prod(x, 1).detach().numpy(), x.detach().numpy().prod(axis=1), rtol=1e-14)
    np.testing.assert_allclose(agrad.prod(x, [0, 1], keepdim=True).detach().numpy(), x.detach().numpy().prod(keepdims=True), rtol=1e-14)
    assert agrad.prod(x).grad_fn.name() == "ProdBackward0" and agrad.prod(x, 0).grad_fn.name() == "ProdBackward1"
    i = agrad.tensor([[1, 2], [3, 4]], dtype=agrad.int32)
    assert agrad.prod(i).dtype == agrad.int64 and agrad.prod(i).item() == 24
    assert agrad.prod(i, 0, dtype=agrad.float64).dtype == agrad.float64


def test_prod_gradient_with_zeros_has_no_nan():
    x = t([[2.0, 0.0, 3.0], [0.0, 4.0, 0.0], [1.0, 2.0, 5.0]])
    g = grad_of(agrad.prod(x, 1).sum(), x)
    np.testing.assert_array_equal(g.detach().numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [10.0, 5.0, 2.0]])
    y = t([2.0, 0.0, 3.0])
    g = grad_of(agrad.prod(y), y)
    assert g.tolist() == [0.0, 6.0, 0.0]


def _hessian(fn, values):
    x = t(values)
    g = grad_of(fn(x), x, create_graph=True)
    rows = [grad_of(g, x, grad_output=t(np.eye(len(values))[i], requires_grad=False), retain_graph=True).detach().numpy()
            for i in range(len(values))]
    return np.stack(rows)


def test_prod_second_derivative_through_a_zero():
    # d^2 (a*b*c) / da db = c, also when b == 0: the product of the others is not a constant 0
    np.testing.assert_array_equal(_hessian(agrad.prod, [2.0, 0.0, 3.0]),
                                  [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0], [0.0, 2.0, 0.0]])
    # two zeros: only the cross term of the two zeros survives
    np.testing.assert_array_equal(_hessian(agrad.prod, [0.0, 5.0, 0.0]),
                                  [[0.0, 0.0, 5.0], [0.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
    np.testing.assert_allclose(_hessian(agrad.prod, [2.0, 4.0, 3.0]),
                               [[0.0, 3.0, 4.0], [3.0, 0.0, 2.0], [4.0, 2.0, 0.0]], rtol=1e-15)


# ---- var / std ------------------------------------------------------------------------------

def test_var_std_values_against_numpy():
    a = RNG.normal(size=(3, 4, 2))
    x = t(a)
    np.testing.assert_allclose(agrad.var(x).detach().numpy(), a.var(ddof=1), rtol=1e-13)
    np.testing.assert_allclose(agrad.var(x, 1).detach().numpy(), a.var(axis=1, ddof=1), rtol=1e-13)
    np.testing.assert_allclose(agrad.std(x, [0, 2], correction=0, keepdim=True).detach().numpy(),
                               a.std(axis=(0, 2), ddof=0, keepdims=True), rtol=1e-13)
    np.testing.assert_allclose(agrad.var(x, -1, correction=0.5).detach().numpy(), ((a - a.mean(-1, keepdims=True)) ** 2).sum(-1)
                               / 1.5, rtol=1e-13)
    assert agrad.var(x).grad_fn.name() == "VarBackward0" and agrad.std(x).grad_fn.name() == "StdBackward0"


def test_var_gradient_against_formula():
    a = RNG.normal(size=(3, 4))
    x = t(a)
    g = grad_of(agrad.var(x, 1).sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 2 / 3 * (a - a.mean(1, keepdims=True)), rtol=1e-13)


def test_var_with_no_degrees_of_freedom_is_nan_and_std_of_constant_has_zero_gradient():
    assert math.isnan(agrad.var(t([1.5])).item())
    assert agrad.var(t([1.0, 2.0]), correction=2).item() == math.inf
    c = t([2.0, 2.0, 2.0])
    s = agrad.std(c)
    assert s.item() == 0.0
    assert grad_of(s, c).tolist() == [0.0, 0.0, 0.0]
    one = t([1.5])
    assert math.isnan(grad_of(agrad.var(one), one).item())


def test_var_rejects_integers_as_pytorch():
    with pytest.raises(RuntimeError, match="^std and var only support floating point and complex dtypes$"):
        agrad.std(agrad.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="std and var only support"):
        agrad.var(agrad.tensor([1, 2, 3]).to("meta"))


# ---- logsumexp ------------------------------------------------------------------------------

def test_logsumexp_is_stable_and_correct():
    a = np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -999.5]])
    x = t(a)
    m = a.max(axis=1, keepdims=True)
    ref = (np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m)[:, 0]
    np.testing.assert_allclose(agrad.logsumexp(x, 1).detach().numpy(), ref, rtol=1e-15)
    y = agrad.logsumexp(x, 1)
    assert y.grad_fn.name() == "LogsumexpBackward0"
    # the gradient is the softmax of the slice
    g = grad_of(y.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), np.exp(a - ref[:, None]), rtol=1e-14)


def test_logsumexp_infinities_and_promotion():
    x = t([[-math.inf, -math.inf], [math.inf, 1.0]], requires_grad=False)
    assert agrad.logsumexp(x, 1).tolist() == [-math.inf, math.inf]
    i = agrad.logsumexp(agrad.tensor([1, 2, 3]), 0)
    assert i.dtype == agrad.float32 and i.item() == pytest.approx(math.log(math.e + math.e ** 2 + math.e ** 3))
    assert agrad.logsumexp(agrad.zeros(0, 3), 0).tolist() == [-math.inf] * 3
    assert agrad.logsumexp(t(RNG.normal(size=(2, 3))), [0, 1], keepdim=True).shape == (1, 1)


# ---- norm -------------------------------------------------------------------------------------

@pytest.mark.parametrize("p,ref", [("fro", 2), (2, 2), (1, 1), (math.inf, np.inf), (-math.inf, -np.inf), (3, 3),
                                   (0.5, 0.5), (0, 0)])
def test_norm_values_against_numpy(p, ref):
    a = RNG.normal(size=(3, 4))
    x = t(a)
    np.testing.assert_allclose(agrad.norm(x, p, 1).detach().numpy(), np.linalg.norm(a, ord=ref, axis=1), rtol=1e-13)
    np.testing.assert_allclose(agrad.norm(x, p).detach().numpy(), np.linalg.norm(a.reshape(-1), ord=ref), rtol=1e-13)


def test_norm_grad_fn_and_gradient_at_zero():
    x = t([[0.0, 0.0], [3.0, 4.0]])
    y = agrad.norm(x, dim=1)
    assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    g = grad_of(y.sum(), x)
    np.testing.assert_array_equal(g.detach().numpy(), [[0.0, 0.0], [0.6, 0.8]])
    g1 = grad_of(agrad.norm(x, 1).sum(), x)
    np.testing.assert_array_equal(g1.detach().numpy(), [[0.0, 0.0], [1.0, 1.0]])


def test_norm_inf_gradient_splits_ties_and_keeps_sign():
    x = t([-3.0, 3.0, 1.0])
    np.testing.assert_allclose(grad_of(agrad.norm(x, math.inf), x).detach().numpy(), [-0.5, 0.5, 0.0])
    assert agrad.norm(x, "inf").item() == 3.0 and agrad.norm(x, "-inf").item() == 1.0


def test_norm_errors():
    with pytest.raises(RuntimeError, match="^linalg.vector_norm: Expected a floating point or complex tensor as "
                                           "input. Got Long$"):
        agrad.norm(agrad.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim must be a 2-tuple"):
        agrad.norm(t(np.ones((2, 2, 2))), "fro", [0, 1, 2])
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order abs not supported"):
        agrad.norm(t(np.ones((2, 2))), "abs")


def test_norm_nuc_is_the_sum_of_singular_values():
    # torch.norm's 'nuc' is linalg.matrix_norm's (over every dim of a matrix)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(agrad.norm(t(x), "nuc").item(), np.linalg.norm(x, "nuc"), rtol=1e-14)


# ---- double backward of the dedicated backward ops -------------------------------------

@pytest.mark.parametrize("op,kwargs,name", [("gelu", {}, "GeluBackwardBackward0"),
                                            ("gelu", {"approximate": "tanh"}, "GeluBackwardBackward0"),
                                            ("softplus", {}, "SoftplusBackwardBackward0"),
                                            ("leaky_relu", {"negative_slope": 0.3}, "LeakyReluBackwardBackward0")])
def test_second_derivatives_against_finite_differences(op, kwargs, name):
    a = RNG.uniform(-3, 3, size=7)
    a = np.where(np.abs(a) < 0.1, 0.5, a)
    x = t(a)
    g = grad_of(getattr(agrad, op)(x, **kwargs).sum(), x, create_graph=True)
    assert g.grad_fn.name() == name
    h = grad_of(g.sum(), x).detach().numpy()
    eps = 1e-6

    def first(v):
        xv = t(v)
        return grad_of(getattr(agrad, op)(xv, **kwargs).sum(), xv).detach().numpy()
    np.testing.assert_allclose(h, (first(a + eps) - first(a - eps)) / (2 * eps), rtol=1e-5, atol=1e-7)


# ---- the graph a reduction's backward records (create_graph): PyTorch's Nodes, from torch 2.13 ----

def _first_chain(grad_fn):
    names = []
    while grad_fn is not None and grad_fn.next_functions:
        names.append(type(grad_fn).__name__)
        grad_fn = grad_fn.next_functions[0][0]
    return names


@pytest.mark.parametrize("reduce, chain", [
    (lambda x: x.sum(), ["ExpandBackward0"]),                   # sum_backward: a 0-d grad expands at once
    (lambda x: x.sum(1), ["ExpandBackward0", "UnsqueezeBackward0"]),   # unsqueeze_multiple, one per dim
    (lambda x: x.sum((0, 2)), ["ExpandBackward0", "UnsqueezeBackward0", "UnsqueezeBackward0"]),
    (lambda x: x.sum(-1, keepdim=True), ["ExpandBackward0"]),
    (lambda x: x.prod(1), ["MulBackward0", "UnsqueezeBackward0"]),
    (lambda x: x.logsumexp(1), ["MulBackward0", "UnsqueezeBackward0"]),
    (lambda x: x.amax((0, 1)), ["MulBackward0", "DivBackward0", "ViewBackward0"]),  # restore_reduced_dims
])
def test_a_reductions_backward_restores_the_reduced_dims_as_pytorch_does(reduce, chain):
    x = agrad.randn(3, 4, 5, dtype=f64, requires_grad=True)
    y = reduce(x)
    g = grad_of(y, x, create_graph=True, grad_output=agrad.ones_like(y, requires_grad=True))
    assert tuple(g.shape) == (3, 4, 5)
    assert _first_chain(g.grad_fn) == chain
