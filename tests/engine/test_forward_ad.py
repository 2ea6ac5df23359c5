"""Forward-mode AD (agrad.autograd.forward_ad): every differentiable op's samples, their tangents
against finite differences and against the reverse-mode jvp (autograd.functional.jvp); the API's
semantics and errors against PyTorch 2.13's (fixtures from tests/reference/make_forward_ad.py)."""
import json
from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.autograd.forward_ad as fwAD
from agrad.ops import registered

FIXTURES = json.loads((Path(__file__).parent.parent / "reference" / "forward_ad.json").read_text())


# ---- every op's samples ----------------------------------------------------------------------------

def _cases():
    for info in registered():
        if info.samples is None or not info.differentiable:
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")


def _float_inputs(sample):
    """[(position, index in a Tensor[] or None)] of the sample's float64 tensor arguments."""
    return [(i, j) for i, a in enumerate(sample.args)
            for j, t in ([(None, a)] if not isinstance(a, (list, tuple)) else enumerate(a))
            if isinstance(t, agrad.Tensor) and t.dtype == agrad.float64 and t.requires_grad]


def _fn(info, sample, positions):
    def fn(*tensors):
        args = [list(a) if isinstance(a, (list, tuple)) else a for a in sample.args]
        for (i, j), t in zip(positions, tensors):
            if j is None:
                args[i] = t
            else:
                args[i][j] = t
        out = info.entry.function(*args, **sample.kwargs)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return fn


def _float_outputs(outs):
    return [k for k, o in enumerate(outs) if isinstance(o, agrad.Tensor) and o.is_floating_point()]


@pytest.mark.parametrize("info,sample", list(_cases()))
def test_op_tangents(info, sample):
    positions = _float_inputs(sample)
    if not positions:
        pytest.skip("no float64 input in this sample")
    if "ties" in sample.name:
        pytest.skip("no directional derivative where values tie")
    fn = _fn(info, sample, positions)
    primals = [(sample.args[i] if j is None else sample.args[i][j]).detach() for i, j in positions]
    rng = np.random.default_rng(len(sample.name))
    tangents = [agrad.tensor(rng.uniform(-1, 1, tuple(p.shape))) for p in primals]
    first, again = fn(*primals), fn(*primals)
    if any(isinstance(a, agrad.Tensor) and not np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)
           for a, b in zip(first, again)):
        pytest.skip("random op: no finite difference")
    with fwAD.dual_level():
        try:
            outs = fn(*[fwAD.make_dual(p, t) for p, t in zip(primals, tangents)])
        except (NotImplementedError, RuntimeError) as e:
            if info.gradgrad or "derivative" not in str(e):
                raise
            pytest.skip("the op's backward is not differentiable (as in PyTorch, which has no forward AD for it)")
        unpacked = [fwAD.unpack_dual(o) if isinstance(o, agrad.Tensor) else None for o in outs]
    floats = _float_outputs(outs)
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

def _message(fn):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        return [type(e).__name__, str(e)]
    return None


def test_errors_match_pytorch():
    x, t = agrad.rand(3, dtype=agrad.float64), agrad.ones(3, dtype=agrad.float64)
    got = {"outside_level": _message(lambda: fwAD.make_dual(x, t))}
    with fwAD.dual_level():
        got["nested"] = _message(fwAD.enter_dual_level)
        got["shape"] = _message(lambda: fwAD.make_dual(x, agrad.ones(4, dtype=agrad.float64)))
        got["int_tangent"] = _message(lambda: fwAD.make_dual(x, agrad.ones(3, dtype=agrad.int64)))
        got["int_primal"] = _message(lambda: fwAD.make_dual(agrad.ones(3, dtype=agrad.int64), t))
        got["bad_level"] = _message(lambda: fwAD.make_dual(x, t, level=1))
        dual = fwAD.make_dual(x, t)
        got["dual_of_dual"] = _message(lambda: fwAD.make_dual(dual, t))
        got["exit_other"] = _message(lambda: fwAD.exit_dual_level(level=5))
    got["exit_none"] = _message(fwAD.exit_dual_level)
    assert got == FIXTURES["errors"]


def _values(t):
    return None if t is None else np.asarray(t.detach().numpy()).tolist()


def test_semantics_match_pytorch():
    """What each fixture case computes in torch 2.13 (tests/reference/make_forward_ad.py does the same)."""
    ref = FIXTURES["semantics"]
    x = agrad.tensor(ref["x"], dtype=agrad.float64)
    t = agrad.tensor(ref["t"], dtype=agrad.float64)
    got = {}
    with fwAD.dual_level() as level:
        got["level"] = level
        d = fwAD.make_dual(x, t)
        got["dual_is_view"] = d._base is x
        got["dual_requires_grad"] = d.requires_grad
        got["tangent_as_is"] = fwAD.unpack_dual(d).tangent is t
        got["detach"] = _values(fwAD.unpack_dual(d.detach()).tangent)
        got["plain"] = _values(fwAD.unpack_dual(x).tangent)
        with agrad.no_grad():
            got["no_grad"] = _values(fwAD.unpack_dual(d * 2).tangent)
        got["argmax"] = _values(fwAD.unpack_dual(d.argmax()).tangent)
        got["floor"] = _values(fwAD.unpack_dual(d.floor()).tangent)
        got["gt"] = _values(fwAD.unpack_dual(d > 0).tangent)
        v = d[1:]
        got["view_of_tangent"] = fwAD.unpack_dual(v).tangent._base is t
        b = x.clone()
        vb = b[:2]
        vb.mul_(fwAD.make_dual(agrad.ones(2, dtype=agrad.float64), agrad.ones(2, dtype=agrad.float64)))
        got["inplace_view_base"] = _values(fwAD.unpack_dual(b).tangent)
        got["inplace_view"] = _values(fwAD.unpack_dual(vb).tangent)
        c = x.clone()
        vc = c[:2]
        c.mul_(d)
        got["view_after_base_inplace"] = _values(fwAD.unpack_dual(vc).tangent)
        e = d.clone()
        kept = fwAD.unpack_dual(e).tangent
        e.mul_(2)
        got["inplace_keeps_tangent"] = fwAD.unpack_dual(e).tangent is kept
        got["inplace_tangent"] = _values(kept)
        f = (d.sin() * d).sum()
        got["chain"] = _values(fwAD.unpack_dual(f).tangent)
        got["unpacked_type"] = type(fwAD.unpack_dual(d)).__name__
        y = d * 2
    got["after_exit"] = _values(fwAD.unpack_dual(y).tangent)
    got["after_exit_dual"] = _values(fwAD.unpack_dual(d).tangent)
    assert got == ref["got"]


def test_backward_through_dual_tensors():
    """The primal keeps its reverse-mode graph, and the tangent is differentiable in the primal and in
    the tangent: d/dx of (x * x).sum()'s tangent in direction t is 2 t."""
    ref = FIXTURES["backward"]
    x = agrad.tensor(ref["x"], dtype=agrad.float64, requires_grad=True)
    t = agrad.tensor(ref["t"], dtype=agrad.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        out = (d * d.exp()).sum()
        primal, tangent = fwAD.unpack_dual(out)
        primal.backward(retain_graph=True)
        grad_primal = x.grad.clone()
        x.grad = None
        tangent.backward()
    assert _values(grad_primal) == pytest.approx(ref["grad_primal"], rel=1e-12)
    assert _values(x.grad) == pytest.approx(ref["grad_tangent_x"], rel=1e-12)
    assert _values(t.grad) == pytest.approx(ref["grad_tangent_t"], rel=1e-12)


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

    assert _values(f(agrad.zeros(2, dtype=agrad.float64))) == [3.0, 3.0]
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
