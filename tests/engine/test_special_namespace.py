"""agrad.special (torch.special's names) and the Tensor methods whose argument order is PyTorch's,
not the op's (x.polygamma(n), x.where(condition, y))."""
import numpy as np
import scipy.special

import agrad
from agrad import special


def test_special_names_are_the_ops():
    # aliases, as in PyTorch: the same op under scipy's name, so grad_fn names are the op's
    assert special.expit is agrad.sigmoid
    assert special.gammaln is agrad.lgamma
    assert special.psi is special.digamma is agrad.digamma
    assert special.ndtr is agrad.special_ndtr
    for name in special.__all__:
        assert callable(getattr(special, name)), name


def test_ndtr_is_the_normal_cdf():
    x = agrad.tensor([-3.0, -0.5, 0.0, 1.25, 4.0], dtype=agrad.float64, requires_grad=True)
    y = special.ndtr(x)
    np.testing.assert_allclose(y.detach().numpy(), scipy.special.ndtr(x.detach().numpy()), rtol=1e-15, atol=1e-16)
    y.sum().backward()      # the density
    np.testing.assert_allclose(x.grad.numpy(), np.exp(-x.detach().numpy() ** 2 / 2) / np.sqrt(2 * np.pi), rtol=1e-14)


def test_special_round_records_decimals():
    x = agrad.tensor([0.4, 1.6], dtype=agrad.float64, requires_grad=True)
    assert special.round(x).grad_fn.name() == "RoundBackward1"      # PyTorch's round.decimals


def test_method_argument_orders():
    x = agrad.tensor([0.5, 1.5, 2.5], dtype=agrad.float64, requires_grad=True)
    y = agrad.tensor([9.0, 8.0, 7.0], dtype=agrad.float64)
    np.testing.assert_array_equal(x.polygamma(1).detach().numpy(), agrad.polygamma(1, x).detach().numpy())
    out = x.where(x > 1.0, y)
    np.testing.assert_array_equal(out.detach().numpy(), [9.0, 1.5, 2.5])
    assert out.grad_fn.name() == "WhereBackward0"
