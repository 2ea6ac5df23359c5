"""In-place view ops (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_): what PyTorch
2.13 does, checked against its printed results (names, shapes, versions, gradients, errors)."""
import numpy as np
import pytest

import agrad
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op


def _nonleaf(*shape):
    x = agrad.randn(*shape, requires_grad=True)
    return x, x * 2


def test_t_changes_the_layout_and_records_TBackward1():
    x, y = _nonleaf(2, 3)
    assert y.t_() is y
    assert y.shape == (3, 2) and y._version == 1 and not y._is_view()
    assert y.grad_fn.name() == "TBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    (y * agrad.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0).reshape(3, 2).T)


@pytest.mark.parametrize("call,name,shape", [
    (lambda t: t.squeeze_(), "SqueezeBackward3", (2, 3)),
    (lambda t: t.squeeze_(1), "SqueezeBackward4", (2, 3)),
    (lambda t: t.squeeze_((0, 1)), "SqueezeBackward5", (2, 3)),
    (lambda t: t.unsqueeze_(0), "UnsqueezeBackward1", (1, 2, 1, 3)),
    (lambda t: t.transpose_(0, 2), "TransposeBackward1", (3, 1, 2)),
    (lambda t: t.swapdims_(0, 2), "TransposeBackward1", (3, 1, 2)),
    (lambda t: t.swapaxes_(0, 2), "TransposeBackward1", (3, 1, 2)),
])
def test_names_and_shapes(call, name, shape):
    x, y = _nonleaf(2, 1, 3)
    call(y)
    assert y.grad_fn.name() == name and y.shape == shape
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 1, 3), 2.0))


def test_a_tensor_without_grad_only_changes_layout():
    w = agrad.randn(2, 3)
    w.t_()
    assert w.shape == (3, 2) and w._version == 1 and w.grad_fn is None and not w._is_view()


def test_a_leaf_that_requires_grad_is_refused_unless_under_no_grad():
    x = agrad.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.t_()
    with agrad.no_grad():
        x.t_()
    assert x.shape == (3, 2) and x._version == 1 and x.grad_fn is None and x.is_leaf


def test_a_view_stays_a_view_of_its_base():
    _, a = _nonleaf(2, 3)
    v = a[0]
    v.unsqueeze_(0)
    assert v.shape == (1, 3) and v._base is a
    assert v.grad_fn.name() == "UnsqueezeBackward1"
    assert v.grad_fn.next_functions[0][0].name() == "SelectBackward0"
    a.mul_(2)                      # the base changes: the view's history is rebuilt from it, with the new shape
    assert v.grad_fn is not None and v.shape == (1, 3)


def test_an_output_of_a_multi_view_op_is_refused():
    _, u = _nonleaf(2, 3)
    first = u.split(1)[0]
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace"):
        first.t_()


def test_a_saved_tensor_changed_by_an_inplace_view_op_fails_at_backward():
    _, r = _nonleaf(2, 3)
    out = (r * r).sum()            # MulBackward0 saves r
    r.t_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
