"""agrad.func against torch.func 2.13.0: every scenario of func_scenarios.py compared with what PyTorch did
(tests/reference/engine/func.json, written by tests/reference/make_func_reference.py): values to 1e-12
relative, requires_grad, and error types and messages exactly. Then checks of agrad alone: the
transforms against agrad.autograd.functional where they overlap, vmap against an explicit loop, and
the pytree helper. This file never imports torch."""

import numpy as np
import pytest

import agrad
import scenario_fixtures
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from agrad.func import grad, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap
from agrad.func.pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten, treespec_pprint
from func_scenarios import SCENARIOS

F = agrad.autograd.functional
EXPECTED = scenario_fixtures.expected("func.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_func_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    scenario_fixtures.compare(got, EXPECTED["scenarios"][name], [name], rtol=1e-12)


# -- agrad alone ------------------------------------------------------------------------------------------
def _inputs():
    rng = np.random.default_rng(3)
    return agrad.tensor(rng.normal(size=3)), agrad.tensor(rng.normal(size=(2, 2)))


def _f(x, y):
    return agrad.sin(x[:2]).unsqueeze(1) * y ** 2, (x * agrad.exp(y[0, 0])).sum() * x


def _scalar(x, y):
    return (agrad.cos(x) * x ** 3).sum() * y[1, 0] + (agrad.tanh(y) * x[:2]).sum()


def _close(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for u, v in zip(a, b):
            _close(u, v)
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_jacobians_equal_autograd_functional():
    x, y = _inputs()
    want = F.jacobian(_f, (x, y))
    _close(jacrev(_f, argnums=(0, 1))(x, y), want)
    _close(jacfwd(_f, argnums=(0, 1))(x, y), want)
    _close(jacrev(_f, argnums=(0, 1), chunk_size=3)(x, y), want)


def test_hessian_equals_autograd_functional():
    x, y = _inputs()
    _close(hessian(_scalar, argnums=(0, 1))(x, y), F.hessian(_scalar, (x, y)))


def test_vjp_and_jvp_equal_autograd_functional():
    x, y = _inputs()
    v = (agrad.ones(2, 2, dtype=agrad.float64), agrad.ones(3, dtype=agrad.float64) * 0.5)
    out, vjp_fn = vjp(_f, x, y)
    want_out, want_vjp = F.vjp(_f, (x, y), v)
    _close(out, want_out)
    _close(vjp_fn(v), want_vjp)
    t = (agrad.tensor([1.0, -1.0, 0.5], dtype=agrad.float64), agrad.ones(2, 2, dtype=agrad.float64))
    _close(jvp(_f, (x, y), t), F.jvp(_f, (x, y), t))
    out, jvp_fn = linearize(_f, x, y)
    _close(jvp_fn(*t), F.jvp(_f, (x, y), t)[1])


def test_grad_through_a_linearized_jvp_fn_is_the_second_derivative():
    """linearize's jvp_fn is made of differentiable ops: grad of sum(J(x) 1) for an elementwise f is f''."""
    x, _ = _inputs()
    f = lambda x: agrad.sin(x) * x ** 2   # noqa: E731
    got = grad(lambda x: linearize(f, x)[1](agrad.ones(3, dtype=agrad.float64)).sum())(x)
    _close(got, F.hvp(lambda x: f(x).sum(), x, agrad.ones(3, dtype=agrad.float64))[1])


def test_per_sample_gradients_equal_a_loop_of_autograd_grad():
    rng = np.random.default_rng(5)
    w = agrad.tensor(rng.normal(size=(2, 3)))
    xs, ts = agrad.tensor(rng.normal(size=(6, 3))), agrad.tensor(rng.normal(size=(6, 2)))

    def loss(w, x, t):
        return ((agrad.tanh(x @ w.T) - t) ** 2).sum()
    got = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ts)
    for i in range(6):
        wi = w.detach().requires_grad_()
        (want,) = agrad.autograd.grad(loss(wi, xs[i], ts[i]), wi)
        _close(got[i], want)


def test_torch_vmap_is_func_vmap():
    # torch.vmap is torch._functorch.apis.vmap, the function torch.func.vmap names too
    assert agrad.vmap is agrad.func.vmap
    assert agrad.vmap(agrad.sum)(agrad.ones(3, 2)).tolist() == [2.0, 2.0, 2.0]


def test_vmap_is_differentiable_and_keeps_the_graph():
    xs = agrad.tensor(np.random.default_rng(1).normal(size=(4, 3)), requires_grad=True)
    out = vmap(lambda x: (x ** 2).sum(), out_dims=0)(xs)
    out.sum().backward()
    _close(xs.grad, 2 * xs)


def test_vmap_randomness_same_draws_what_one_sample_draws():
    agrad.manual_seed(11)
    same = vmap(lambda x: x + agrad.rand(3, dtype=agrad.float64), randomness="same")(agrad.zeros(4, 3,
                                                                                              dtype=agrad.float64))
    after = agrad.rand(1, dtype=agrad.float64)
    agrad.manual_seed(11)
    once = agrad.rand(3, dtype=agrad.float64)
    _close(same, once.expand(4, 3))
    _close(after, agrad.rand(1, dtype=agrad.float64))     # the generator moved on by one sample's draws


def test_vmap_error_mode_leaves_the_generator_working():
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: x + agrad.rand(3))(agrad.zeros(2, 3))
    assert agrad.rand(2).shape == (2,)
    state = vmap(lambda x: agrad.get_rng_state().float().sum() + x)(agrad.zeros(2))   # reading the state is no draw
    assert state.shape == (2,)


def test_vmap_output_structure_must_not_depend_on_values():
    with pytest.raises(RuntimeError, match="different structures"):
        vmap(lambda x: x if x > 0 else (x, x))(agrad.tensor([1.0, -1.0]))


def test_vmap_over_an_empty_dimension_is_a_clear_error():
    with pytest.raises(ValueError, match="size 0"):
        vmap(lambda x: x)(agrad.zeros(0, 3))


def test_pytree_round_trip_and_prefix_broadcast():
    tree = ({"b": 1, "a": [2, (3, None)]}, 4)
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, None, 4]
    assert tree_unflatten(leaves, spec) == tree
    assert treespec_pprint(spec) == "({'b': *, 'a': [*, (*, *)]}, *)"
    assert broadcast_to_and_flatten((0, None), spec) == [0, 0, 0, 0, None]
    # a dict prefix's leaves come in its own key order, as torch 2.13's _broadcast_to_and_flatten gives them
    assert broadcast_to_and_flatten(({"a": 1, "b": 2}, 3), spec) == [1, 1, 1, 2, 3]
    assert broadcast_to_and_flatten((0,), spec) is None
    assert broadcast_to_and_flatten(({"a": 1}, 3), spec) is None


def test_a_custom_function_has_pytorchs_vmap_defaults_and_vmap_runs_it_per_sample():
    class MySquare(agrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    assert MySquare.generate_vmap_rule is False and hasattr(MySquare, "vmap")
    with pytest.raises(NotImplementedError, match="override the vmap staticmethod or set generate_vmap_rule=True"):
        MySquare.vmap(None, (0,), agrad.ones(2))
    x = agrad.arange(6.0, dtype=agrad.float64).view(3, 2)
    np.testing.assert_array_equal(agrad.func.vmap(MySquare.apply)(x).numpy(), x.numpy() ** 2)
