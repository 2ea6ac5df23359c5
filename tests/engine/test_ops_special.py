"""Special functions (engine/ops/pointwise/special.py) against the standard library's math module,
identities and PyTorch's edge cases; SciPy is loaded on first use, not by `import agrad`.

Tolerances: a few hundred ulps of the value itself (rtol, atol=0): room for any libm's
and SciPy's last ulps, but a formula that cancels (1 - erf(x) for erfc) fails by orders
of magnitude."""
import math
import subprocess
import sys

import numpy as np
import pytest

import agrad

f64 = agrad.float64


def t(values, dtype=f64, requires_grad=True):
    return agrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def grad_of(out, x, create_graph=False):
    (g,) = agrad.autograd.grad([out.sum()], [x], create_graph=create_graph)
    return g


def values(x):
    return x.detach().numpy()


X = np.linspace(-6, 6, 1201)


def test_erf_and_erfc_match_math():
    np.testing.assert_allclose(values(agrad.erf(t(X))), [math.erf(v) for v in X], rtol=1e-14, atol=0)
    # erfc to 26 (erfc(26) ~ 6e-296, above it SciPy flushes the subnormals to 0): relative accuracy in the
    # far tail, where 1 - erf(x) is 0
    x = np.linspace(-6, 26, 3201)
    np.testing.assert_allclose(values(agrad.erfc(t(x))), [math.erfc(v) for v in x], rtol=1e-13, atol=0)


def test_erfinv_inverts_erf():
    y = np.linspace(-0.999, 0.999, 1999)
    x = values(agrad.erfinv(t(y)))
    # erf is flat near +-1, so erf(erfinv(y)) is a well-conditioned check of erfinv
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-14, atol=1e-16)
    # PyTorch's edge values: +-1 give +-inf, outside [-1, 1] NaN
    edge = agrad.erfinv(t([1.0, -1.0, 1.5, -2.0, 0.0], requires_grad=False)).tolist()
    assert edge[:2] == [math.inf, -math.inf] and all(math.isnan(v) for v in edge[2:4]) and edge[4] == 0.0


def test_error_function_gradients_are_pytorchs():
    x = t(X[::50])
    a = X[::50]
    y = agrad.erf(x)
    assert y.grad_fn.name() == "ErfBackward0"
    np.testing.assert_allclose(values(grad_of(y, x)), 2 / math.sqrt(math.pi) * np.exp(-a * a), rtol=1e-14)
    y = agrad.erfc(x)
    assert y.grad_fn.name() == "ErfcBackward0"
    np.testing.assert_allclose(values(grad_of(y, x)), -2 / math.sqrt(math.pi) * np.exp(-a * a), rtol=1e-14)
    # erfinv'(y) = sqrt(pi)/2 exp(erfinv(y)^2); its second derivative through the recorded backward
    yv = np.array([-0.7, -0.1, 0.3, 0.9])
    u = t(yv)
    z = agrad.erfinv(u)
    assert z.grad_fn.name() == "ErfinvBackward0"
    w = values(z)
    g = grad_of(z, u, create_graph=True)
    np.testing.assert_allclose(values(g), math.sqrt(math.pi) / 2 * np.exp(w * w), rtol=1e-14)
    np.testing.assert_allclose(values(grad_of(g, u)), 2 * w * values(g) ** 2, rtol=1e-13)


def test_integer_inputs_compute_in_the_default_float():
    for op in (agrad.erf, agrad.erfc, agrad.erfinv, agrad.lgamma, agrad.digamma):
        assert op(agrad.tensor([0, 1])).dtype == agrad.float32
    assert agrad.erf(agrad.tensor([1.0], dtype=agrad.float16)).dtype == agrad.float16


def test_lgamma_matches_math_and_pytorchs_infinities():
    x = np.concatenate([np.linspace(0.05, 30, 300), np.linspace(-4.95, -0.05, 100)])
    np.testing.assert_allclose(values(agrad.lgamma(t(x))), [math.lgamma(v) for v in x], rtol=1e-13, atol=1e-15)
    edge = agrad.lgamma(t([0.0, -1.0, -2.0, math.inf, -math.inf], requires_grad=False)).tolist()
    assert edge == [math.inf] * 5
    y = agrad.lgamma(t([2.5]))
    assert y.grad_fn.name() == "LgammaBackward0"


def test_digamma_and_polygamma_identities():
    euler = 0.5772156649015329
    d = agrad.digamma(t([1.0, 0.5], requires_grad=False)).tolist()
    assert d == pytest.approx([-euler, -euler - 2 * math.log(2)], rel=1e-15)
    # psi(x + 1) = psi(x) + 1/x and psi_1(x + 1) = psi_1(x) - 1/x^2 over a range of x
    x = np.linspace(0.1, 20, 200)
    for n, step in ((0, 1 / x), (1, -1 / (x * x))):
        lhs = values(agrad.polygamma(n, t(x + 1)))
        np.testing.assert_allclose(lhs, values(agrad.polygamma(n, t(x))) + step, rtol=1e-13, atol=1e-15)
    # psi_1(1) = pi^2/6, psi_1(1/2) = pi^2/2, psi_2(1) = -2 zeta(3)
    assert agrad.polygamma(1, t([1.0, 0.5])).tolist() == pytest.approx([math.pi ** 2 / 6, math.pi ** 2 / 2],
                                                                       rel=1e-14)
    assert agrad.polygamma(2, t([1.0])).item() == pytest.approx(-2 * 1.2020569031595942, rel=1e-14)
    # PyTorch: digamma(0) = -inf, digamma(-0.) = inf, NaN at the negative integers
    edge = agrad.digamma(t([0.0, -0.0, -2.0], requires_grad=False)).tolist()
    assert edge[:2] == [-math.inf, math.inf] and math.isnan(edge[2])


def test_gamma_family_gradients_chain_to_the_next_polygamma():
    x = t([0.7, 1.5, 3.0])
    y = agrad.lgamma(x)
    g = grad_of(y, x, create_graph=True)
    np.testing.assert_allclose(values(g), values(agrad.digamma(x)), rtol=1e-15)
    assert g.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(values(grad_of(g, x)), values(agrad.polygamma(1, x)), rtol=1e-15)
    p = agrad.polygamma(2, x)
    assert p.grad_fn.name() == "PolygammaBackward0"
    np.testing.assert_allclose(values(grad_of(p, x)), values(agrad.polygamma(3, x)), rtol=1e-15)
    with pytest.raises(RuntimeError, match=r"^polygamma\(n, x\) does not support negative n\.$"):
        agrad.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="negative n"):
        agrad.polygamma(-1, x.detach().to("meta"))


@pytest.mark.filterwarnings("ignore:invalid value encountered")     # d/dy = x / y is 0/0 at x = y = 0
def test_xlogy_zero_nan_and_overloads():
    x = t([0.0, 0.0, 0.0, 2.0, 3.0])
    y = t([0.0, -1.0, math.nan, 0.5, 4.0])
    out = agrad.xlogy(x, y)
    got = out.tolist()
    assert got[:2] == [0.0, 0.0] and math.isnan(got[2])
    assert got[3:] == pytest.approx([2 * math.log(0.5), 3 * math.log(4.0)], rel=1e-15)
    assert out.grad_fn.name() == "XlogyBackward0"
    gx, gy = agrad.autograd.grad([out.sum()], [x, y])
    # d/dx is log(y), but 0 where x == 0 and y <= 0 (PyTorch masks it); d/dy is x / y
    assert gx.tolist()[:2] == [0.0, 0.0] and gx.tolist()[3] == pytest.approx(math.log(0.5))
    assert gy.tolist()[3:] == pytest.approx([4.0, 0.75])
    assert agrad.xlogy(2.0, t([3.0])).grad_fn.name() == "XlogyBackward1"
    assert agrad.xlogy(t([3.0]), 2.0).grad_fn.name() == "XlogyBackward2"
    assert agrad.xlogy(agrad.tensor([1, 2]), agrad.tensor([3, 4])).dtype == agrad.float32


def test_scipy_is_imported_on_first_use_only():
    code = ("import sys, agrad; x = agrad.tensor([0.5, 1.], requires_grad=True); (x * x).sum().backward(); "
            "assert 'scipy' not in sys.modules, 'imported by agrad'; "
            "assert agrad.gelu(x).sum().item() > 0; assert 'scipy.special' in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_kernels_call_the_backends_special_namespace(standin_cuda):
    """A backend supplies its own special functions (cupyx.scipy.special on a GPU)."""
    import scipy.special
    from standin_cuda import StandInCUDA

    calls = []

    class Recording:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(scipy.special, name)

    class RecordingCUDA(StandInCUDA):
        special = Recording()

    agrad.backends.register_backend(RecordingCUDA())     # the fixture puts the real one back
    x = agrad.tensor([0.25], dtype=f64, device="cuda")
    assert agrad.erf(x).device.type == "cuda"
    agrad.gelu(x)
    assert calls == ["erf", "erfc"]
