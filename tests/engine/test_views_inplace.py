"""Views, the version counter and in-place ops with autograd, against PyTorch 2.13.

The scenarios of tests/reference/inplace_scenarios.py run here with agrad and are
compared with what PyTorch did in them (tests/reference/inplace_scenarios.json,
written by make_inplace_reference.py): values, gradients, second-order products,
grad_fn names, versions, view/base relations, error messages. This file never
imports torch. The rest checks what those cannot: memory actually shared, gradcheck
and gradgradcheck through views and in-place ops, Meta and the stand-in GPU.
"""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import scenario_fixtures
from agrad.testing import gradcheck, gradgradcheck
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("inplace_scenarios")


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_inplace_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    scenario_fixtures.compare(scenario_fixtures.run(SCENARIOS[label]), RECORDED["scenarios"][label], [label],
                              rtol=1e-10)


# ---- memory and the version counter ----------------------------------------------------------

def test_views_share_memory_and_one_version_counter():
    x = agrad.tensor(np.arange(12.0).reshape(3, 4))
    views = [x.view(12), x[1], x[:, 1:3], x.t(), x.permute(1, 0), x.unsqueeze(0), x.diagonal(), x.narrow(1, 0, 2),
             x.unbind(0)[1], x.split(2, 1)[0], x.expand(2, 3, 4), x.reshape(4, 3), x[0, 0]]
    for v in views:
        assert np.shares_memory(v._data, x._data) and v._base is x and v._version_counter is x._version_counter
    x[0, 0] = -1.0
    assert x._version == 1 and all(v._version == 1 for v in views)
    assert views[-1].item() == -1.0 and views[3].tolist()[0][0] == -1.0
    d = x.detach()
    d.add_(1)
    assert x._version == 2 and d._base is None and x[0, 0].item() == 0.0


def test_a_copying_reshape_is_not_a_view():
    x = agrad.tensor(np.arange(6.0).reshape(2, 3))
    y = x.t().reshape(6)
    assert y._base is None and not np.shares_memory(y._data, x._data)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)


def test_a_tensor_costs_no_version_counter_until_needed():
    x = agrad.ones(3)
    y = x * 2
    assert y._version_counter is None and y._version == 0
    y.add_(1)
    assert y._version == 1


# ---- gradcheck and gradgradcheck through views and in-place ops -------------------------------

def _x(shape, seed):
    return agrad.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=agrad.float64, requires_grad=True)


def _slice_imul(x):
    y = x.clone()
    y[1:3] *= 2
    return (y * y).sum()


def _view_of_view(x, w):
    y = x * 1
    v = y[1:].t()[0:2, 1]      # a view of a view of a view
    v.mul_(w)
    return y * y


def _view_inplace_base_used_later(x, w):
    y = x.clone()
    y[0].add_(w * w)
    return y.exp() * y + y.sum(0)


def _base_inplace_view_used(x):
    y = x * 2
    v = y[:, 1]
    y.tanh_()
    return v * v


def _setitem_advanced(x, w):
    y = x.clone()
    y[agrad.tensor([0, 2])] = w
    y[:, 1][agrad.tensor([True, False, True, False])] = w[0, 0] * w[1, 0]
    return y * y


@pytest.mark.parametrize("fn, shapes", [(_slice_imul, [(5,)]), (_view_of_view, [(3, 4), (2,)]),
                                        (_view_inplace_base_used_later, [(3, 2), (2,)]),
                                        (_base_inplace_view_used, [(3, 3)]), (_setitem_advanced, [(4, 2), (2, 2)])],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_gradcheck_and_second_order(fn, shapes):
    inputs = [_x(s, k) for k, s in enumerate(shapes)]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
    _check_second_order(fn, inputs)


def _directional_first(fn, values, v, u, create_graph):
    """sum(u_i * d(sum(v * fn))/d x_i), and the inputs it was computed at."""
    xs = [agrad.tensor(a, dtype=agrad.float64, requires_grad=True) for a in values]
    out = fn(*xs)
    firsts = agrad.autograd.grad((out * v).sum(), xs, create_graph=create_graph)
    return xs, sum((g * w).sum() for g, w in zip(firsts, u))


def _check_second_order(fn, inputs, eps=1e-6):
    """Second derivatives through create_graph against central differences of the first ones
    (a check of its own: it needs grad mode inside the differenced function)."""
    rng = np.random.default_rng(7)
    values = [x.detach().numpy().copy() for x in inputs]
    v = agrad.tensor(rng.standard_normal(tuple(fn(*inputs).shape)), dtype=agrad.float64)
    u = [agrad.tensor(rng.standard_normal(a.shape), dtype=agrad.float64) for a in values]
    xs, s = _directional_first(fn, values, v, u, True)
    analytic = agrad.autograd.grad(s, xs, allow_unused=True)
    for i, a in enumerate(values):
        numeric = np.zeros(a.size)
        for j in range(a.size):
            step = np.zeros(a.size)
            step[j] = eps
            plus = [b if k != i else b + step.reshape(b.shape) for k, b in enumerate(values)]
            minus = [b if k != i else b - step.reshape(b.shape) for k, b in enumerate(values)]
            numeric[j] = (_directional_first(fn, plus, v, u, False)[1].item()
                          - _directional_first(fn, minus, v, u, False)[1].item()) / (2 * eps)
        got = np.zeros(a.size) if analytic[i] is None else analytic[i].numpy().reshape(-1)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6, err_msg=f"input {i}")


def _copyslices_first_derivative(values, create_graph):
    x = agrad.tensor(values, dtype=agrad.float64, requires_grad=True)
    z = agrad.zeros(4, dtype=agrad.float64)
    z[1:3] = x[:2] * x[2:]        # z has no history before: its grad_fn becomes CopySlices
    (g,) = agrad.autograd.grad((z ** 3).sum(), x, create_graph=create_graph)
    return x, g


def test_copyslices_backward_is_differentiable_again():
    base = np.array([0.5, -1.5, 2.0, 0.75])
    x, g = _copyslices_first_derivative(base, True)
    assert g.grad_fn is not None
    (h,) = agrad.autograd.grad(g.sum(), x)
    eps = 1e-6
    numeric = [(_copyslices_first_derivative(base + eps * e, False)[1].sum().item()
                - _copyslices_first_derivative(base - eps * e, False)[1].sum().item()) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6, atol=1e-8)


# ---- Meta and the stand-in GPU -----------------------------------------------------------------

def test_inplace_and_views_on_meta_check_shapes_only():
    x = agrad.empty(1000, 1000, device="meta", requires_grad=True)
    y = x * 2
    v = y[10:20].t()
    v.mul_(3)
    assert v._base is y and y.grad_fn.name() == "torch::autograd::CopySlices" and y._version == 1
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        y[0].add_(agrad.empty(3, 1000, device="meta"))


def test_inplace_through_views_on_the_standin_gpu(standin_cuda):
    x = agrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True).to("cuda")
    y = x.clone()
    y[1:3] *= agrad.tensor([2.0, 3.0], device="cuda")
    y.sum().backward()
    assert x.grad is None          # x is not a leaf here: its leaf is on the CPU
    w = agrad.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    z = agrad.zeros(3, device="cuda")
    z[agrad.tensor([0, 2], device="cuda")] = w[:2] * w[1:]
    (z * z).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [2 * 2 * 2, 2 * 2 * 1 + 2 * 6 * 3, 2 * 6 * 2])


# ---- smaller rules -------------------------------------------------------------------------------

def test_data_is_an_alias_with_a_version_counter_of_its_own():
    x = agrad.ones(3, requires_grad=True)
    y = x.exp()
    y.data.mul_(2)                      # not seen by autograd, as PyTorch's .data
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.e * np.ones(3), rtol=1e-6)
    with agrad.no_grad():
        x.data.sub_(1)
    assert x._version == 0 and x.tolist() == [0.0, 0.0, 0.0] and x.requires_grad


def test_setitem_values_and_dtypes():
    x = agrad.zeros(2, 3)
    x[0] = [1, 2, 3]
    x[1, agrad.tensor([0, 2])] = 7
    x[:, 1] += agrad.tensor([10.0, 20.0], dtype=agrad.float64)      # float64 result cast into float32
    assert x.tolist() == [[1.0, 12.0, 3.0], [7.0, 20.0, 7.0]] and x.dtype == agrad.float32
    assert x._version == 4


def test_inplace_on_a_leaf_under_no_grad_keeps_it_a_leaf():
    w = agrad.tensor([1.0, 2.0], requires_grad=True)
    with agrad.no_grad():
        w.mul_(3)
        w[0] = 0.5
    assert w.is_leaf and w.grad_fn is None and w.tolist() == [0.5, 6.0]
    (w * w).sum().backward()
    assert w.grad.tolist() == [1.0, 12.0]


def test_a_changed_view_is_regenerated_by_as_strided_unless_view_replay_was_on_when_it_was_made():
    # PyTorch (CPU, default): one as_strided of the base; _force_original_view_tracking(True): the view ops
    x = agrad.ones(2, 2, requires_grad=True)

    def changed(make):
        out = make(x.clone())
        out.mul_(2)
        return out

    for make in (lambda t: t.view(-1), lambda t: t[0], lambda t: t.t()):
        assert type(changed(make).grad_fn).__name__ == "AsStridedBackward0"
    assert not agrad.autograd.is_view_replay_enabled()
    with agrad.autograd.grad_mode._force_original_view_tracking(True):
        assert agrad.autograd.is_view_replay_enabled()
        replayed = [changed(make) for make in (lambda t: t.view(-1), lambda t: t[0], lambda t: t.t())]
    assert [type(t.grad_fn).__name__ for t in replayed] == ["ViewBackward0", "SelectBackward0", "TBackward0"]
    assert not agrad.autograd.is_view_replay_enabled()
    # the gradients are the same either way
    for view_replay in (False, True):
        x.grad = None
        with agrad.autograd.grad_mode._force_original_view_tracking(view_replay):
            out = changed(lambda t: t.t())
        (out * out).sum().backward()
        assert x.grad.tolist() == [[8.0, 8.0], [8.0, 8.0]]
