"""torch.autograd.graph.allow_mutation_on_saved_tensors: within the block a tensor saved for backward
may be modified in place; it is cloned just before its first modification and backward uses the clone.
The cases are PyTorch's TestAllowMutationOnSaved (test/test_autograd.py), whose expected values are
its semantics (one clone per saved tensor and version; nothing cloned once backward freed the saved
tensor; the state cleared on exit), plus the in-place paths agrad has besides apply_inplace (view ops,
resize_, set_, a `.grad` accumulated in place) and a view that starts inside its saved base."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import agrad
from agrad import watchers
from agrad.autograd.graph import allow_mutation_on_saved_tensors
from recordings import recording  # noqa: F401 — every test here runs with the C and the Python recording

MODIFIED = "variables needed for gradient computation has been modified by an inplace"
OUTSIDE = "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=1e-12)


def _leaf():
    return agrad.rand(2, 3, dtype=agrad.float64, requires_grad=True)


def test_a_saved_tensor_modified_in_place_is_cloned_for_backward():
    a = _leaf()

    def fn(a):
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
        return a.grad

    with pytest.raises(RuntimeError, match=MODIFIED):
        fn(a)
    with allow_mutation_on_saved_tensors() as ctx:
        da = fn(a)
    _close(da, 2 * a)
    assert len(ctx.cloned) == 0 and len(ctx.original) == 0      # cleared on exit


@pytest.mark.parametrize("view", [lambda b: b.view_as(b), lambda b: b[:1], lambda b: b[1:], lambda b: b[:, 2]],
                         ids=["view_as", "first_row", "second_row", "column"])
def test_modifying_a_view_clones_its_saved_base(view):
    # b[1:] and b[:, 2] do not start where b does: PyTorch's data_ptr() would miss them, agrad's sid does not
    with allow_mutation_on_saved_tensors() as ctx:
        a = _leaf()
        b = a.clone()
        out = (b ** 2).sum()
        c = view(b)
        c.mul_(10)
        assert len(ctx.cloned) == 1
        out.backward()
        assert len(ctx.cloned) == 0          # backward freed the saved tensor, and its clone with it
    _close(a.grad, 2 * a)


def test_modifying_the_base_clones_a_saved_view():
    with allow_mutation_on_saved_tensors():
        a = _leaf()
        b = a.clone()
        out = (b[:] ** 2).sum()
        b *= 2
        out.backward()
        _close(a.grad, 2 * a)


def test_double_backward_uses_the_clone():
    with allow_mutation_on_saved_tensors() as ctx:
        a = _leaf()
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        (da,) = agrad.autograd.grad(out, a, create_graph=True)
        _close(da, 2 * a)
        (d2a,) = agrad.autograd.grad(da.sum(), a)
    _close(d2a, 2 * agrad.ones_like(a))
    assert len(ctx.cloned) == 0


def test_nothing_is_cloned_once_backward_freed_the_saved_tensor():
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.randn(2, 3, requires_grad=True).clone()
        out = (a ** 2).sum()
        assert len(ctx.tid_to_weakhandle) == 1 and len(ctx.cloned) == 0
        out.backward()
        a.sin_()
        assert len(ctx.cloned) == 0
        out = (a ** 2).sum()
        a.sin_()
        assert len(ctx.cloned) == 1
        del out
        gc.collect()
        assert len(ctx.cloned) == 0


def test_a_tensor_saved_many_times_at_one_version_is_cloned_once():
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.randn(2, 3, requires_grad=True).clone()
        b = a ** 2
        c = a ** 2
        a.sin_()
        assert len(ctx.cloned) == 1
        del b, c
        gc.collect()
        assert len(ctx.cloned) == 0


def test_each_saved_version_has_its_own_clone():
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.randn(2, 3, dtype=agrad.float64, requires_grad=True)
        x = a.clone()
        v0 = x.detach().clone()
        b = x ** 2
        x.sin_()
        v1 = x.detach().clone()
        c = x ** 2
        x.sin_()
        assert len(ctx.cloned) == 2
        (b.sum() + c.sum()).backward()
    # d/da of sum(a^2) + sum(sin(a)^2) = 2a + 2 sin(a) cos(a): each square read its own version
    _close(a.grad, 2 * v0 + 2 * v1 * agrad.cos(v0))
    del b, c
    gc.collect()
    assert len(ctx.cloned) == 0


def test_an_out_argument_is_cloned_before_it_is_written():
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.tensor([1.0], requires_grad=True)
        b = agrad.tensor([1.0])
        out = a * b
        assert len(ctx.tid_to_weakhandle) == 1
        agrad.sin(agrad.tensor([2.0]), out=b)
        assert len(ctx.cloned) == 1
        out.backward()
        assert len(ctx.cloned) == 0
    assert a.grad.tolist() == [1.0]


@pytest.mark.parametrize("mutate", [lambda b: b.t_(), lambda b: b.resize_(6), lambda b: b.fill_(3.0),
                                    lambda b: b.set_(agrad.zeros(2, 3, dtype=agrad.float64)),
                                    lambda b: b.copy_(agrad.zeros(2, 3, dtype=agrad.float64))],
                         ids=["t_", "resize_", "fill_", "set_", "copy_"])
def test_every_in_place_path_clones_first(mutate):
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.rand(2, 3, dtype=agrad.float64, requires_grad=True)
        b = a.detach().clone()
        out = (a * b).sum()          # saves b for a's gradient
        expected = b.clone()
        mutate(b)
        assert len(ctx.cloned) == 1
        out.backward()
    _close(a.grad, expected)


def test_a_grad_accumulated_in_place_is_cloned_first():
    with allow_mutation_on_saved_tensors() as ctx:
        w = agrad.rand(3, dtype=agrad.float64, requires_grad=True)
        (w * 2).sum().backward()
        g = w.grad
        x = agrad.rand(3, dtype=agrad.float64, requires_grad=True)
        out = (x * g).sum()          # saves w.grad
        (w * 3).sum().backward()     # adds into w.grad in place
        assert g is w.grad and g.tolist() == [5.0] * 3 and len(ctx.cloned) == 1
        out.backward()
    assert x.grad.tolist() == [2.0] * 3


def test_backward_outside_the_block_that_recorded_the_graph_is_refused():
    with allow_mutation_on_saved_tensors():
        a = _leaf()
        out = (a ** 2).sum()
    with pytest.raises(AssertionError, match=OUTSIDE):
        out.backward()

    with allow_mutation_on_saved_tensors():
        a = _leaf()
        out = (a ** 2).sum()
    with allow_mutation_on_saved_tensors():
        with pytest.raises(AssertionError, match=OUTSIDE):
            out.backward()


def test_blocks_cannot_be_nested_and_leave_no_watcher_behind():
    with allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
            with allow_mutation_on_saved_tensors():
                pass
    assert watchers.mutation_observers == []
    with pytest.raises(ValueError):
        with allow_mutation_on_saved_tensors():
            raise ValueError
    assert watchers.mutation_observers == []
    # outside the block, the usual error again
    a = _leaf()
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.backward()


def test_the_in_place_op_s_own_saved_self_is_not_cloned():
    # sin_ saves the old self for its backward: a copy made before the write, never a clone on mutation
    with allow_mutation_on_saved_tensors() as ctx:
        a = agrad.rand(3, dtype=agrad.float64, requires_grad=True)
        b = a.clone()
        b.sin_()
        b.cos_()
        assert len(ctx.cloned) == 0
        b.sum().backward()
    _close(a.grad, -agrad.sin(agrad.sin(a)) * agrad.cos(a))
