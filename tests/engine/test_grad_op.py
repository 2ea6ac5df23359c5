"""The `grad` op: autograd.grad as a node of the graph (gradient penalties, HVPs)."""
import numpy as np

import agrad
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops


def test_grad_op_returns_one_gradient_per_input_and_zeros_for_unused():
    x = agrad.tensor([1.0, 2.0], dtype=agrad.float64, requires_grad=True)
    z = agrad.tensor(3.0, dtype=agrad.float64, requires_grad=True)
    y = (x ** 2).sum()
    gx, gz = agrad.grad([y], [x, z])
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    assert gz.item() == 0.0 and x.grad is None


def test_gradient_penalty_differentiates_through_the_grad_op():
    x = agrad.tensor([0.5, -1.0], dtype=agrad.float64, requires_grad=True)
    w = agrad.tensor([2.0, 3.0], dtype=agrad.float64, requires_grad=True)
    y = agrad.tanh(x * w).sum()
    (gx,) = agrad.grad([y], [x], create_graph=True)
    penalty = (gx ** 2).sum()
    penalty.backward()
    # d/dw sum((w (1 - tanh(xw)^2))^2), by hand
    x0, w0 = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    t = np.tanh(x0 * w0)
    s = 1 - t ** 2
    d_w = 2 * w0 * s * (s + w0 * (-2 * t * s * x0))
    np.testing.assert_allclose(w.grad.numpy(), d_w, rtol=1e-12)


def test_grad_op_builds_on_meta():
    x = agrad.empty([3], device="meta", requires_grad=True)
    y = agrad.exp(x).sum()
    (g,) = agrad.grad([y], [x], create_graph=True)
    assert g.device.type == "meta" and g.shape == (3,) and g.requires_grad
