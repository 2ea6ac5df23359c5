"""Forward-mode AD (agrad.autograd.forward_ad): every differentiable op's samples, their tangents
against finite differences and against the reverse-mode jvp (autograd.functional.jvp); the API's
semantics and errors against PyTorch 2.13's (fixtures from tests/reference/make_forward_ad.py)."""
import numpy as np
import pytest

import agrad
import agrad.autograd.forward_ad as fwAD
import op_sample_runs
import scenario_fixtures

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("forward_ad_scenarios")


# ---- every op's samples ----------------------------------------------------------------------------

def _float_inputs(t) -> bool:
    return t.dtype == agrad.float64 and t.requires_grad


def _fn(info, sample):
    """The op as a function of the sample's float64 inputs that require grad, returning a tuple."""
    call, inputs = op_sample_runs.as_function(info, sample, takes=_float_inputs)

    def fn(*tensors):
        out = call(*tensors)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return fn, inputs


def _float_outputs(outs):
    return [k for k, o in enumerate(outs) if isinstance(o, agrad.Tensor) and o.is_floating_point()]


@pytest.mark.parametrize("info,sample", list(op_sample_runs.cases(lambda info: info.differentiable)))
def test_op_tangents(info, sample):
    fn, inputs = _fn(info, sample)
    if not inputs:
        pytest.skip("no float64 input in this sample")
    if "ties" in sample.name:
        pytest.skip("no directional derivative where values tie")
    if info.name in ("as_strided", "as_strided_copy") and "T" in sample.name.split(" ")[0]:
        # agrad lays out p + eps * t C-contiguous where PyTorch's TensorIterator follows the first operand
        # (a transposed p): the finite differences then read another layout than the tangent, which make_dual
        # and the double-vjp trick lay out as p (as PyTorch's set_fw_grad does).
        pytest.xfail("an elementwise result's layout is C order, not its first operand's as in PyTorch")
    primals = [t.detach() for t in inputs]
    rng = np.random.default_rng(len(sample.name))
    tangents = [agrad.tensor(rng.uniform(-1, 1, tuple(p.shape))) for p in primals]
    first, again = fn(*primals), fn(*primals)
    if any(isinstance(a, agrad.Tensor) and not np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)
           for a, b in zip(first, again)):
        pytest.skip("random op: no finite difference")
    if not info.forward_ad_supported:
        # a not_implemented derivative: PyTorch refuses any tangent, even on an input whose gradient it has
        with fwAD.dual_level(), pytest.raises(NotImplementedError, match=f"Trying to use forward AD with "
                                                                          f"{info.name} that does not support it"):
            fn(*[fwAD.make_dual(p, t) for p, t in zip(primals, tangents)])
        return
    with fwAD.dual_level():
        try:
            outs = fn(*[fwAD.make_dual(p, t) for p, t in zip(primals, tangents)])
        except (NotImplementedError, RuntimeError) as e:
            if info.gradgrad or "derivative" not in str(e):
                raise
            pytest.skip("the op's backward is not differentiable (as in PyTorch, which has no forward AD for it)")
        unpacked = [fwAD.unpack_dual(o) if isinstance(o, agrad.Tensor) else None for o in outs]
    # the outputs PyTorch differentiates: floating, and requiring grad where the inputs do (not lstsq's
    # singular values, not an index output)
    graded = fn(*inputs)
    floats = [k for k in _float_outputs(outs) if graded[k].requires_grad]
    # the primal is the op's value
    for k in floats:
        np.testing.assert_allclose(unpacked[k].primal.detach().numpy(), first[k].detach().numpy(), rtol=1e-12, atol=1e-12)
    # finite differences, central, along the tangents
    eps = 1e-6
    plus = fn(*[p + eps * t for p, t in zip(primals, tangents)])
    minus = fn(*[p - eps * t for p, t in zip(primals, tangents)])
    for k in floats:
        tangent = unpacked[k].tangent
        expected = (plus[k].detach().numpy() - minus[k].detach().numpy()) / (2 * eps)
        got = np.zeros_like(expected) if tangent is None else tangent.detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=f"output {k}")
    # reverse mode's jvp (double backward)
    if any(first[k].requires_grad for k in floats):
        _, jvps = agrad.autograd.functional.jvp(lambda *xs: tuple(fn(*xs)[k] for k in floats), tuple(primals),
                                                tuple(tangents))
        for k, jv in zip(floats, jvps):
            got = unpacked[k].tangent
            np.testing.assert_allclose(np.zeros(tuple(jv.shape)) if got is None else got.detach().numpy(), jv.detach().numpy(),
                                       rtol=1e-10, atol=1e-12)


# ---- the API, against PyTorch's fixtures ----------------------------------------------------------

@pytest.mark.parametrize("name", ["errors", "semantics", "backward", "custom_function", "gradcheck_forward"])
def test_the_scenarios_match_pytorch(name):
    """tests/reference/forward_ad_scenarios.py run on agrad, as make_forward_ad.py ran them on torch 2.13:
    the API's errors and messages, tangents through views, in-place ops and no_grad, backward through
    dual tensors (the primal keeps its graph; the tangent is differentiable in both), custom Functions'
    jvp with its checks, and gradcheck(check_forward_ad=True)."""
    scenario_fixtures.compare(SCENARIOS[name](agrad, fwAD), RECORDED[name], [name], rtol=1e-12)


def test_random_op_tangent_uses_the_primals_numbers():
    """dropout draws its mask once: the tangent is masked and scaled as the primal is."""
    agrad.manual_seed(3)
    x = agrad.ones(1000, dtype=agrad.float64)
    with fwAD.dual_level():
        out = agrad.nn.functional.dropout(fwAD.make_dual(x, 3 * x), p=0.5)
        primal, tangent = fwAD.unpack_dual(out)
    np.testing.assert_array_equal(tangent.numpy(), 3 * primal.numpy())


def test_decorator_and_level_state():
    @fwAD.dual_level()
    def f(x):
        return fwAD.unpack_dual(fwAD.make_dual(x, agrad.ones_like(x)) * 3).tangent

    assert f(agrad.zeros(2, dtype=agrad.float64)).tolist() == [3.0, 3.0]
    # the level is closed again: ops take their ordinary path
    assert fwAD.unpack_dual(agrad.zeros(2)).tangent is None
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def test_out_variant_and_print():
    """PyTorch refuses an out= call on a dual tensor (as out or as input), and prints a dual tensor's tangent."""
    with fwAD.dual_level():
        foo = fwAD.make_dual(agrad.zeros(2), agrad.ones(2))
        bar = agrad.zeros(2)
        for call in (lambda: agrad.add(bar, bar, out=foo), lambda: agrad.add(foo, bar, out=bar)):
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with add_out that does not "
                                                          "support it because it is an out= function"):
                call()
        assert repr(foo) == "tensor([0., 0.], tangent=tensor([1., 1.]))"
        primal, tangent = fwAD.unpack_dual(foo)
        assert "tangent=" not in repr(primal) and "tangent=" not in repr(tangent)


@pytest.mark.parametrize("inplace_view", ["squeeze_", "unsqueeze_", "transpose_", "t_"])
@pytest.mark.parametrize("through_op", [True, False])
def test_an_in_place_view_op_changes_the_tangent_layout_with_the_primal(inplace_view, through_op):
    """As PyTorch's: `y.transpose_(0, 1)` on a dual tensor transposes its tangent too (quantile ends so)."""
    apply = {"squeeze_": lambda d: d.squeeze_(-1), "unsqueeze_": lambda d: d.unsqueeze_(0),
             "transpose_": lambda d: d.transpose_(0, 1), "t_": lambda d: d.t_()}[inplace_view]
    primal = agrad.tensor([[1.0], [2.0], [3.0]], dtype=agrad.float64)
    tangent = agrad.tensor([[0.5], [-1.0], [2.0]], dtype=agrad.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal.clone(), tangent)
        y = dual * 1.0 if through_op else dual
        apply(y)
        got = fwAD.unpack_dual(y).tangent
        assert tuple(got.shape) == tuple(y.shape)
        assert got.reshape(-1).tolist() == [0.5, -1.0, 2.0]


@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid", "sqrt", "softmax"])
def test_forward_over_reverse_through_a_formula_that_uses_the_output(op):
    """A backward formula that reads the op's own output (tanh's 1 - y^2) gets the output's tangent, as
    PyTorch's SavedVariable keeps fw_grad_: the jvp of a gradient is the Hessian-vector product."""
    fn = {"softmax": lambda x: agrad.softmax(x, 0)}.get(op, getattr(agrad, op))
    f = lambda x: (fn(x) * agrad.tensor([1.0, -2.0, 0.5], dtype=agrad.float64)).sum()   # noqa: E731
    x = agrad.tensor([0.3, 0.7, 1.2], dtype=agrad.float64)
    v = agrad.tensor([1.0, 0.5, -1.0], dtype=agrad.float64)
    with fwAD.dual_level():
        leaf = x.detach().requires_grad_()
        dual = fwAD.make_dual(leaf, v)
        with agrad.enable_grad():
            (g,) = agrad.autograd.grad(f(dual), dual, create_graph=True)
        tangent = fwAD.unpack_dual(g).tangent
    want = agrad.autograd.functional.hvp(f, x, v)[1]
    np.testing.assert_allclose(tangent.detach().numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_a_random_op_draws_under_forward_ad_what_a_plain_run_draws():
    # the fallback runs the op twice (the tangent's double-vjp, then the primal): the default Generator's
    # state goes back between them, so the primal is the plain run's and the tangent has its mask
    x = agrad.ones(16, dtype=agrad.float64)
    agrad.manual_seed(5)
    plain = agrad.nn.functional.dropout(x, 0.5)
    agrad.manual_seed(5)
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(agrad.nn.functional.dropout(fwAD.make_dual(x, x.clone()), 0.5))
    assert agrad.equal(primal, plain) and agrad.equal(tangent, plain)


def test_an_op_with_a_not_implemented_derivative_refuses_every_tangent():
    # PyTorch 2.13: igamma's derivative in its input is not_implemented, so it has no forward AD at all
    x, v = agrad.rand(3, dtype=agrad.float64) + 0.5, agrad.rand(3, dtype=agrad.float64)
    message = ("Trying to use forward AD with igamma that does not support it because it has not been implemented "
               "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
               "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
               "implementation to derivatives.yaml")
    with fwAD.dual_level():
        for a, b in ((fwAD.make_dual(x, v), x), (x, fwAD.make_dual(x, v))):
            with pytest.raises(NotImplementedError) as info:
                agrad.igamma(a, b)
            assert str(info.value) == message
        assert agrad.igamma(x, x).shape == (3,)            # no tangent: the op runs


def test_make_dual_lays_the_tangent_out_as_the_primal():
    # PyTorch's set_fw_grad: a tangent of another layout or storage size is copied into one laid out as the
    # primal (so a view of the primal replays on it); the caller's tangent is never written
    primal = agrad.randn(5, dtype=agrad.float64)[:4]
    tangent = agrad.randn(4, dtype=agrad.float64)
    before = tangent.clone()
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        unpacked = fwAD.unpack_dual(dual).tangent
        assert unpacked is not tangent and len(unpacked.untyped_storage()) == len(primal.untyped_storage())
        unpacked *= 2
        np.testing.assert_array_equal(tangent.numpy(), before.numpy())
        np.testing.assert_array_equal(fwAD.unpack_dual(dual.as_strided((5,), (1,), 0)).tangent.numpy()[:4],
                                      2 * before.numpy())
        t = agrad.randn(3, 4, dtype=agrad.float64).t()
        d = fwAD.make_dual(t, agrad.randn(4, 3, dtype=agrad.float64))
        assert fwAD.unpack_dual(d).tangent.stride() == t.stride()
        assert tuple(fwAD.unpack_dual(d.ravel()).tangent.shape) == (12,)
        same = agrad.randn(4, dtype=agrad.float64)
        assert fwAD.unpack_dual(fwAD.make_dual(agrad.randn(4, dtype=agrad.float64), same)).tangent is same


def test_detach_in_place_drops_the_tangent():
    # PyTorch 2.13 (test_autograd's test_advanced_packing_unpacking): detach_() resets fw_grad_ as well
    foo, bar = agrad.rand(2, dtype=agrad.float64), agrad.ones(2, dtype=agrad.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar).clone()
        assert fwAD.unpack_dual(dual * 2).tangent is not None
        dual.detach_()
        p, t = fwAD.unpack_dual(dual * 2)
        assert t is None and not p.requires_grad
        np.testing.assert_array_equal(p.numpy(), foo.numpy() * 2)
