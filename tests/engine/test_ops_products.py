"""outer, baddbmm, einsum (linalg.py), cumsum/cumprod/diff (reduce/cumulative.py), tril/triu (shape/diagonal.py) and
scaled_dot_product_attention (nn/attention.py), beyond the generated tests."""
import math

import numpy as np
import pytest

import agrad


def f64(values, requires_grad=False):
    return agrad.tensor(values, dtype=agrad.float64, requires_grad=requires_grad)


def randn(*shape, seed=0, requires_grad=False):
    return f64(np.random.default_rng(seed).standard_normal(shape), requires_grad)


# ---- scaled_dot_product_attention ---------------------------------------------------------------

def _reference(q, k, v, mask=None, scale=None):
    s = q.numpy() @ np.swapaxes(k.numpy(), -1, -2) * (scale or 1 / math.sqrt(q.shape[-1]))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v.numpy()


def test_causal_attention_is_the_lower_triangular_mask():
    q, k, v = randn(2, 3, 4, 2, seed=1), randn(2, 3, 5, 2, seed=2), randn(2, 3, 5, 3, seed=3)
    out = agrad.scaled_dot_product_attention(q, k, v, is_causal=True)
    mask = np.tril(np.ones((4, 5), dtype=bool))
    np.testing.assert_allclose(out.numpy(), _reference(q, k, v, mask), rtol=1e-12)
    explicit = agrad.scaled_dot_product_attention(q, k, v, agrad.tensor(mask))
    np.testing.assert_allclose(out.numpy(), explicit.numpy(), rtol=1e-12)


def test_attention_dropout_is_reproducible_from_its_seed():
    q, k, v = randn(2, 3, 4, seed=4), randn(2, 3, 4, seed=5), randn(2, 3, 4, seed=6)
    a = agrad.scaled_dot_product_attention(q, k, v, dropout_p=0.4, seed=11)
    b = agrad.scaled_dot_product_attention(q, k, v, dropout_p=0.4, seed=11)
    c = agrad.scaled_dot_product_attention(q, k, v, dropout_p=0.4, seed=12)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), c.numpy())
    weights = agrad.softmax(agrad.matmul(q, k.transpose(-2, -1)) / 2.0, -1)
    manual = agrad.matmul(agrad.dropout(weights, 0.4, seed=11), v)
    np.testing.assert_allclose(a.numpy(), manual.numpy(), rtol=1e-12)


def test_grouped_query_attention_repeats_key_value_heads():
    q, k, v = randn(1, 4, 3, 2, seed=7), randn(1, 2, 3, 2, seed=8), randn(1, 2, 3, 2, seed=9)
    out = agrad.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    kk, vv = (f64(np.repeat(t.numpy(), 2, axis=1)) for t in (k, v))
    np.testing.assert_allclose(out.numpy(), _reference(q, kk, vv), rtol=1e-12)


def test_attention_causal_with_a_mask_applies_both():
    # PyTorch 2.13's CPU flash path (4-D q, k, v; no dropout; a mask without grad) masks with both; its math
    # path refuses the pair (values and texts: tests/reference/engine/edge_cases.json)
    q, k, v = randn(1, 2, 3, 4, seed=1), randn(1, 2, 3, 4, seed=2), randn(1, 2, 3, 4, seed=3)
    causal = np.tril(np.ones((3, 3), dtype=bool))
    keep = np.array([[True, False, True]] * 3)
    out = agrad.scaled_dot_product_attention(q, k, v, agrad.tensor(keep), is_causal=True)
    want = agrad.scaled_dot_product_attention(q, k, v, agrad.tensor(keep & causal))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    bias = randn(3, 3, seed=4)
    out = agrad.scaled_dot_product_attention(q, k, v, bias, is_causal=True)
    want = agrad.scaled_dot_product_attention(q, k, v, bias + agrad.tensor(np.where(causal, 0.0, -np.inf)))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        agrad.scaled_dot_product_attention(q[0], k[0], v[0], bias, is_causal=True)


def test_attention_errors():
    with pytest.raises(RuntimeError, match="must be a multiple of the number of heads"):
        agrad.scaled_dot_product_attention(randn(1, 3, 2, 2), randn(1, 2, 2, 2), randn(1, 2, 2, 2), enable_gqa=True)


# ---- einsum, outer, baddbmm ------------------------------------------------------------------------

@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ij->ij", [(2, 3), (3,)], "more operands were provided than specified in the equation"),
    ("i1->i", [(2,)], "invalid subscript given at index 1"),
    ("ij->k", [(2, 3)], "output subscript k does not appear in the equation for any input operand"),
    ("ij->ii", [(2, 2)], "output subscript i appears more than once in the output"),
    ("ij", [(2, 3, 4)], r"number of subscripts in the equation \(2\) does not match the number of dimensions \(3\)"),
    ("i,i->", [(2,), (3,)], "operands do not broadcast"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match=message):
        agrad.einsum(equation, [randn(*s) for s in shapes])


def test_einsum_matches_numpy_and_differentiates_twice():
    a, b = randn(2, 3, seed=1, requires_grad=True), randn(3, 3, seed=2, requires_grad=True)
    out = agrad.einsum("ij,jj->i", [a, b])
    np.testing.assert_allclose(out.detach().numpy(), np.einsum("ij,jj->i", a.detach().numpy(), b.detach().numpy()))
    assert agrad.testing.gradgradcheck(lambda x, y: agrad.einsum("ij,jj->i", [x, y]), [a, b])


def test_outer_and_baddbmm_errors():
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        agrad.outer(randn(2, 2), randn(2))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        agrad.baddbmm(randn(2, 2), randn(2, 2), randn(1, 2, 2))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[1, 2\]"):
        agrad.baddbmm(randn(1, 2, 2), randn(1, 2, 2), randn(1, 3, 2))


def test_baddbmm_ignores_self_when_beta_is_zero():
    out = agrad.baddbmm(f64(np.full((1, 2, 2), np.nan)), randn(1, 2, 3), randn(1, 3, 2), beta=0)
    assert np.isfinite(out.numpy()).all()


# ---- cumsum, cumprod, diff, tril/triu --------------------------------------------------------------

def test_cumsum_dtypes():
    assert agrad.cumsum(agrad.tensor([1, 2], dtype=agrad.int32), 0).dtype == agrad.int64
    assert agrad.cumsum(agrad.tensor([True, True]), 0).numpy().tolist() == [1, 2]
    assert agrad.cumsum(randn(3), 0, dtype=agrad.float32).dtype == agrad.float32
    x = randn(3, requires_grad=True)
    agrad.cumsum(x, 0, dtype=agrad.float32).sum().backward()
    assert x.grad.dtype == agrad.float64
    np.testing.assert_array_equal(x.grad.numpy(), [3, 2, 1])


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.5, 2.0, 3.0, 0.0],
                                    [0.0, 0.0, 0.0, 0.0]])
def test_cumprod_gradient_with_zeros_is_exact(values):
    x = f64(values, requires_grad=True)
    weights = f64([1.0, -2.0, 0.5, 3.0])
    (agrad.cumprod(x, 0) * weights).sum().backward()
    # d/dx_i sum_k w_k prod_{j<=k} x_j = sum_{k>=i} w_k prod_{j<=k, j!=i} x_j
    expected = [sum(weights.numpy()[k] * np.prod([values[j] for j in range(k + 1) if j != i])
                    for k in range(i, 4)) for i in range(4)]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, atol=1e-12)
    assert agrad.testing.gradgradcheck(lambda t: agrad.cumprod(t, 0), [f64(values, requires_grad=True)])


def test_diff_and_triangle_errors():
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        agrad.diff(f64(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        agrad.diff(randn(3), -1)
    with pytest.raises(RuntimeError, match="diff expects prepend or append to be the same dimension as input"):
        agrad.diff(randn(3, 2), prepend=randn(2))
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        agrad.tril(randn(3))
    np.testing.assert_array_equal(agrad.diff(agrad.tensor([True, True, False]), 1).numpy(), [False, True])
    np.testing.assert_array_equal(agrad.diff(f64([1.0, 4.0, 9.0]), 0).numpy(), [1, 4, 9])


def test_einsum_takes_operands_one_by_one_or_as_a_list():
    a, b = randn(2, 3, seed=1), randn(3, 2, seed=2)
    expected = a.numpy() @ b.numpy()
    for out in (agrad.einsum("ij,jk->ik", a, b), agrad.einsum("ij,jk->ik", [a, b]), agrad.einsum("ij,jk", (a, b))):
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
