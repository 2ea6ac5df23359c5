"""PyTorch's deprecated Jacobian helpers, agrad.autograd.gradcheck.get_numerical_jacobian and
get_analytical_jacobian (the module, while agrad.autograd.gradcheck is the function): PyTorch's
test_gradcheck_get_numerical_jacobian and test_gradcheck_get_analytical_jacobian."""
import importlib

import numpy as np
import pytest

import agrad
from agrad.autograd import Function
from agrad.autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian

FUTURE = "was part of PyTorch's private API"


def _inputs():
    return (agrad.rand(2, 2, dtype=agrad.float64, requires_grad=True),
            agrad.rand(2, 2, dtype=agrad.float64, requires_grad=True))


def _eq(t, expected):
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_the_module_is_importable_beside_the_function():
    assert callable(agrad.autograd.gradcheck)
    assert importlib.import_module("agrad.autograd.gradcheck").get_numerical_jacobian is get_numerical_jacobian


def test_numerical_jacobian_of_the_first_output():
    a, b = _inputs()

    def fn(inputs):                     # takes the inputs as one tuple
        x, y = inputs
        return 2 * x + y, x + 2 * y

    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` " + FUTURE):
        jacobian = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
    assert len(jacobian) == 1 and jacobian[0].dtype is agrad.float64
    _eq(jacobian[0], 2 * np.eye(4))
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` " + FUTURE):
        jacobian = get_numerical_jacobian(fn, (a, b), eps=1e-6)
    _eq(jacobian[0], 2 * np.eye(4))
    _eq(jacobian[1], np.eye(4))
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
        get_numerical_jacobian(fn, (a, b), eps=1e-6, grad_out=2.0)


def test_numerical_jacobian_is_laid_out_input_by_output():
    a = agrad.rand(3, dtype=agrad.float64, requires_grad=True)
    with pytest.warns(FutureWarning):
        (jacobian,) = get_numerical_jacobian(lambda inputs: inputs[0][:2] * 3, (a,), eps=1e-6)
    assert jacobian.shape == (3, 2)
    _eq(jacobian, 3 * np.eye(3, 2))


class _NonDet(Function):
    @staticmethod
    def forward(ctx, x, jitter=0.0):
        ctx._jitter = jitter
        return x

    @staticmethod
    def backward(ctx, grad_out):
        return _NonDet.apply(grad_out, ctx._jitter) * (1 + agrad.rand_like(grad_out) * ctx._jitter), None


def test_analytical_jacobian_and_reentrancy():
    a, b = _inputs()
    out = 2 * a + b
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` " + FUTURE):
        jacobians, reentrant, ok1, ok2 = get_analytical_jacobian((a, b), out)
    _eq(jacobians[0], 2 * np.eye(4))
    _eq(jacobians[1], np.eye(4))
    assert reentrant and ok1 and ok2
    with pytest.warns(FutureWarning):
        _, reentrant, _, _ = get_analytical_jacobian((a,), _NonDet.apply(a, 1e-6))
    assert not reentrant
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
        get_analytical_jacobian((a,), out, grad_out=2.0)

