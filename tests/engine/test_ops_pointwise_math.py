"""engine/ops/pointwise/unary.py and binary.py and div(rounding_mode=): values against the math module and
Python's own operators, PyTorch's dtype rules, edge values and errors. (Gradients and
PyTorch's values for every sample are checked by the generated and reference tests.)"""
import math

import numpy as np
import pytest

import agrad
from agrad.errors import DtypeError, DtypeNotImplementedError

f64 = agrad.float64


def t(values, dtype=f64, requires_grad=False):
    return agrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def grads(out, *xs):
    return agrad.autograd.grad([out.sum()], list(xs))


def test_log1p_and_expm1_keep_the_small_values_exactly():
    small = [1e-10, -3e-12, 2.5e-17]
    assert agrad.log1p(t(small)).tolist() == pytest.approx([math.log1p(v) for v in small], rel=1e-15)
    assert agrad.expm1(t(small)).tolist() == pytest.approx([math.expm1(v) for v in small], rel=1e-15)


@pytest.mark.parametrize("op,ref", [("log2", math.log2), ("log10", math.log10), ("exp2", lambda v: 2.0 ** v),
                                    ("asin", math.asin), ("acos", math.acos), ("atan", math.atan),
                                    ("sinh", math.sinh), ("cosh", math.cosh), ("asinh", math.asinh),
                                    ("atanh", math.atanh), ("reciprocal", lambda v: 1 / v)])
def test_unary_values_match_math(op, ref):
    x = [-0.75, -0.2, 0.3, 0.9] if op not in ("log2", "log10") else [0.3, 1.0, 8.0, 1000.0]
    np.testing.assert_allclose(getattr(agrad, op)(t(x)).tolist(), [ref(v) for v in x], rtol=1e-14)
    assert agrad.acosh(t([1.0, 2.0])).tolist() == pytest.approx([0.0, math.acosh(2.0)], rel=1e-15)


@pytest.mark.filterwarnings("ignore:invalid value encountered")   # NaN results, as in PyTorch
def test_integers_compute_in_the_default_float_or_stay_integers():
    i = agrad.tensor([3, -7, 5])
    for op in ("log1p", "expm1", "exp2", "reciprocal", "atan", "sinh"):
        assert getattr(agrad, op)(i).dtype == agrad.float32, op
    for op in ("floor", "ceil", "trunc", "round", "nan_to_num", "square"):
        out = getattr(agrad, op)(i)
        assert out.dtype == agrad.int64 and out.tolist() == ([9, 49, 25] if op == "square" else [3, -7, 5]), op
    assert agrad.atan2(i, i).dtype == agrad.float32
    for op, kernel in (("frac", "frac_cpu"), ("hypot", "hypot_cpu"), ("logaddexp", "logaddexp_cpu")):
        with pytest.raises(DtypeNotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
            getattr(agrad, op)(*([i] if op == "frac" else [i, i]))
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        agrad.round(i, decimals=1)


def test_rounding_is_pytorchs():
    x = t([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -2.7])
    assert agrad.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 2.0, -3.0]       # half to even
    assert agrad.floor(x).tolist() == [0.0, 1.0, 2.0, -1.0, -2.0, 2.0, -3.0]
    assert agrad.ceil(x).tolist() == [1.0, 2.0, 3.0, -0.0, -1.0, 3.0, -2.0]
    assert agrad.trunc(x).tolist() == [0.0, 1.0, 2.0, -0.0, -1.0, 2.0, -2.0]
    assert agrad.frac(t([2.75, -2.75])).tolist() == [0.75, -0.75]
    assert agrad.round(t([1234.5, 2.5, -151.0]), decimals=-2).tolist() == [1200.0, 0.0, -200.0]
    assert agrad.round(t([0.125, 0.135]), decimals=2).tolist() == [0.12, 0.14]
    y = t([1.26, -3.5], requires_grad=True)
    r = agrad.round(y, decimals=1)
    assert r.grad_fn.name() == "RoundBackward1" and agrad.round(y).grad_fn.name() == "RoundBackward0"
    assert grads(r, y)[0].tolist() == [0.0, 0.0]
    assert agrad.frac(y).grad_fn.name() == "FracBackward0" and grads(agrad.frac(y), y)[0].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("a,b", [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (5.0, 2.5)])
def test_remainder_is_pythons_modulo_and_fmod_is_cs(a, b):
    assert agrad.remainder(t([a]), t([b])).item() == a % b
    assert agrad.fmod(t([a]), b).item() == math.fmod(a, b)
    ia, ib = int(a * 2), int(b * 2)
    assert agrad.remainder(agrad.tensor([ia]), agrad.tensor([ib])).tolist() == [ia % ib]
    assert agrad.fmod(agrad.tensor([ia]), ib).tolist() == [int(math.fmod(ia, ib))]


@pytest.mark.filterwarnings("ignore:invalid value encountered")   # NaN results, as in PyTorch
def test_remainder_and_fmod_gradients_and_errors():
    a, b = t([7.5, -7.5], requires_grad=True), t([2.0, 2.0], requires_grad=True)
    r = agrad.remainder(a, b)
    assert r.grad_fn.name() == "RemainderBackward1" and agrad.remainder(a, 2.0).grad_fn.name() == "RemainderBackward0"
    ga, gb = grads(r, a, b)
    assert ga.tolist() == [1.0, 1.0] and gb.tolist() == [-3.0, 4.0]        # -floor(a / b)
    f = agrad.fmod(a, b)
    assert f.grad_fn.name() == "FmodBackward1" and grads(f, b)[0].tolist() == [-3.0, 3.0]   # -trunc(a / b)
    for op in (agrad.remainder, agrad.fmod):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            op(agrad.tensor([3, 4]), agrad.tensor([1, 0]))
    assert math.isnan(agrad.remainder(t([1.0]), 0.0).item())
    assert agrad.remainder(agrad.tensor([5]), 2.5).dtype == agrad.float32


def test_div_rounding_modes():
    a, b = [7.0, -7.0, 7.0, -7.5], [2.0, 2.0, -2.0, 2.0]
    assert agrad.div(t(a), t(b), rounding_mode="floor").tolist() == [x // y for x, y in zip(a, b)]
    assert agrad.div(t(a), t(b), rounding_mode="trunc").tolist() == [float(math.trunc(x / y)) for x, y in zip(a, b)]
    ia, ib = agrad.tensor([7, -7, 7, -8]), agrad.tensor([2, 2, -2, 3])
    floor = agrad.div(ia, ib, rounding_mode="floor")
    assert floor.dtype == agrad.int64 and floor.tolist() == [3, -4, -4, -3]
    assert agrad.div(ia, ib, rounding_mode="trunc").tolist() == [3, -3, -3, -2]
    assert agrad.div(ia, ib).dtype == agrad.float32
    assert agrad.div(ia, 2.5, rounding_mode="floor").dtype == agrad.float32
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        agrad.div(ia, 0, rounding_mode="floor")
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                           "found 'round'"):
        agrad.div(t(a), t(b), rounding_mode="round")
    x, y = t(a, requires_grad=True), t(b, requires_grad=True)
    out = agrad.div(x, y, rounding_mode="floor")
    assert out.grad_fn.name() == "DivBackward2" and (x / y).grad_fn.name() == "DivBackward0"
    assert [g.tolist() for g in grads(out, x, y)] == [[0.0] * 4, [0.0] * 4]   # zeros, as PyTorch (not None)


def test_lerp():
    a, b = t([1.0, -2.0, 3.0], requires_grad=True), t([4.0, 5.0, -6.0], requires_grad=True)
    assert agrad.lerp(a, b, 0.0).tolist() == [1.0, -2.0, 3.0] and agrad.lerp(a, b, 1.0).tolist() == [4.0, 5.0, -6.0]
    w = t([0.25, 0.75, 2.0], requires_grad=True)
    out = agrad.lerp(a, b, w)
    assert out.tolist() == [1.75, 3.25, -15.0]
    assert out.grad_fn.name() == "LerpBackward1" and agrad.lerp(a, b, 0.5).grad_fn.name() == "LerpBackward0"
    ga, gb, gw = grads(out, a, b, w)
    assert ga.tolist() == [0.75, 0.25, -1.0] and gb.tolist() == [0.25, 0.75, 2.0] and gw.tolist() == [3.0, 7.0, -9.0]
    with pytest.raises(DtypeError, match="^expected dtype double for `end` but got dtype float$"):
        agrad.lerp(a, b.detach().to(dtype=agrad.float32), 0.5)
    with pytest.raises(DtypeNotImplementedError, match="\"lerp_kernel_scalar\" not implemented for 'Long'"):
        agrad.lerp(agrad.tensor([1]), agrad.tensor([2]), 0.5)


def test_addcmul_and_addcdiv():
    s, a, b = t([1.0, 2.0], requires_grad=True), t([3.0, 4.0], requires_grad=True), t([2.0, -8.0], requires_grad=True)
    assert agrad.addcmul(s, a, b, value=0.5).tolist() == [4.0, -14.0]
    out = agrad.addcdiv(s, a, b, value=2)
    assert out.tolist() == [4.0, 1.0] and out.grad_fn.name() == "AddcdivBackward0"
    gs, ga, gb = grads(out, s, a, b)
    assert gs.tolist() == [1.0, 1.0] and ga.tolist() == [1.0, -0.25] and gb.tolist() == [-1.5, -0.125]
    with pytest.raises(RuntimeError, match="^Integer division with addcdiv is no longer supported"):
        agrad.addcdiv(agrad.tensor([1]), agrad.tensor([3]), agrad.tensor([2]))
    assert agrad.addcmul(agrad.tensor([1]), agrad.tensor([3]), agrad.tensor([2])).tolist() == [7]


def test_hypot_logaddexp_atan2():
    assert agrad.hypot(t([3.0, 1e200]), t([4.0, 1e200])).tolist() == [5.0, math.hypot(1e200, 1e200)]
    big = agrad.logaddexp(t([1000.0, -1000.0, -math.inf]), t([1000.0, -1001.0, -math.inf])).tolist()
    assert big[0] == pytest.approx(1000 + math.log(2), rel=1e-15) and big[2] == -math.inf
    assert big[1] == pytest.approx(-1000 + math.log1p(math.exp(-1)), rel=1e-15)
    y, x = t([1.0, -1.0, 0.0], requires_grad=True), t([-1.0, -1.0, 2.0], requires_grad=True)
    out = agrad.atan2(y, x)
    assert out.tolist() == [math.atan2(1, -1), math.atan2(-1, -1), 0.0]
    gy, gx = grads(out, y, x)
    assert gy.tolist() == pytest.approx([-0.5, -0.5, 0.5]) and gx.tolist() == pytest.approx([-0.5, 0.5, 0.0])


def test_nan_to_num():
    x = t([math.nan, math.inf, -math.inf, 1.5], requires_grad=True)
    big = np.finfo(np.float64)
    assert agrad.nan_to_num(x).tolist() == [0.0, big.max, big.min, 1.5]
    assert agrad.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0).tolist() == [1.0, 2.0, -2.0, 1.5]
    f32 = agrad.nan_to_num(x.detach().to(dtype=agrad.float32)).tolist()
    assert f32[1] == float(np.finfo(np.float32).max)
    out = agrad.nan_to_num(x)
    assert out.grad_fn.name() == "NanToNumBackward0" and grads(out, x)[0].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_square_is_pow_and_methods_are_bound():
    x = t([1.5, -2.0], requires_grad=True)
    assert agrad.square(x).grad_fn.name() == "PowBackward0" and x.square().tolist() == [2.25, 4.0]
    assert x.abs().log1p().grad_fn.name() == "Log1PBackward0"
    assert x.remainder(1.0).tolist() == [0.5, 0.0] and x.fmod(1.0).tolist() == [0.5, -0.0]
    assert x.lerp(agrad.zeros(2, dtype=f64), 0.5).tolist() == [0.75, -1.0]


def test_graph_files_use_them(tmp_path):
    from agrad import graphs
    path = tmp_path / "g.yaml"
    path.write_text('dtype: float64\ninputs:\n  a: {value: [7.5, -7.5], requires_grad: true}\n  b: [2.0, 2.0]\n'
                    'nodes:\n  q: div(a, b, rounding_mode="floor")\n  r: remainder(a, b)\n  s: sum(q * b + r)\n'
                    'backward: s\nexpect:\n  outputs: {s: 0.0}\n  grads: {a: [1.0, 1.0]}\n')
    run = graphs.load(path).run()
    assert run.outputs["s"].item() == 0.0 and run.result().expect.passed
