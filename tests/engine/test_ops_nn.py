"""nn ops: values against NumPy written independently (loops, the textbook formulas),
PyTorch's error messages, grad_fn names, and the edge cases the generated tests miss."""
import math

import numpy as np
import pytest

import agrad
from agrad.testing import gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)


def t(array, requires_grad=False, dtype="float64"):
    return agrad.tensor(np.asarray(array), dtype=dtype, requires_grad=requires_grad)


def meta(shape, dtype="float32"):
    return agrad.zeros(*shape, dtype=dtype, device="meta")


# ---- linear ------------------------------------------------------------------------------------------

def test_linear_values_and_grad_fn_names():
    x, w, b = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    out = agrad.linear(t(x, True), t(w, True), t(b, True))
    np.testing.assert_allclose(out.detach().numpy(), x @ w.T + b)
    assert type(out.grad_fn).__name__ == "AddmmBackward0"
    assert type(agrad.linear(t(x, True), t(w)).grad_fn).__name__ == "MmBackward0"
    batched = agrad.linear(t(RNG.standard_normal((2, 2, 3)), True), t(w), t(b))
    assert batched.shape == (2, 2, 4) and type(batched.grad_fn).__name__ == "ViewBackward0"


def test_linear_shape_error_is_pytorchs():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)"):
        agrad.linear(meta((2, 3)), meta((4, 5)), meta((4,)))


# ---- softmax / log_softmax ------------------------------------------------------------------------------

def test_softmax_and_log_softmax_values_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 3.0]])
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(agrad.softmax(t(x), 1).detach().numpy(), ref)
    log_ref = x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))
    np.testing.assert_allclose(agrad.log_softmax(t(x), -1).detach().numpy(), log_ref)
    assert np.isfinite(agrad.log_softmax(t(x), 1).detach().numpy()).all()


def test_softmax_grad_fn_names_and_double_backward():
    x = t(RNG.standard_normal((3, 4)), True)
    y = agrad.softmax(x, 1)
    assert type(y.grad_fn).__name__ == "SoftmaxBackward0"
    assert type(agrad.log_softmax(x, 0).grad_fn).__name__ == "LogSoftmaxBackward0"
    (g,) = agrad.autograd.grad([(y * y).sum()], [x], create_graph=True)
    assert type(g.grad_fn).__name__ == "SoftmaxBackwardDataBackward0"
    assert gradgradcheck(lambda a: agrad.log_softmax(a, 1), [x])


def test_softmax_dtype_argument_and_integer_input():
    x = agrad.tensor([[1, 2], [3, 4]])
    out = agrad.softmax(x, 1, dtype="float64")
    assert out.dtype == agrad.float64
    np.testing.assert_allclose(out.detach().numpy().sum(1), [1.0, 1.0])
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        agrad.softmax(x, 1)


def test_softmax_dim_out_of_range():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        agrad.softmax(meta((2, 3)), 2)


# ---- losses -------------------------------------------------------------------------------------------

def _log_softmax_np(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_cross_entropy_class_indices_weight_and_ignore_index():
    x = RNG.standard_normal((4, 5))
    target = np.array([1, 0, -100, 4])
    w = np.array([0.5, 1.0, 2.0, 1.5, 0.25])
    logp = _log_softmax_np(x, 1)
    kept = target != -100
    picked = np.array([-logp[i, c] * w[c] for i, c in enumerate(target) if c != -100])
    out = agrad.cross_entropy(t(x, True), agrad.tensor(target), t(w))
    np.testing.assert_allclose(out.item(), picked.sum() / w[target[kept]].sum())
    assert type(out.grad_fn).__name__ == "NllLossBackward0"
    none = agrad.cross_entropy(t(x), agrad.tensor(target), t(w), reduction="none").detach().numpy()
    np.testing.assert_allclose(none[kept], picked)
    assert none[2] == 0.0


def test_cross_entropy_spatial_and_unbatched():
    x = RNG.standard_normal((2, 3, 4))
    target = RNG.integers(0, 3, (2, 4))
    logp = _log_softmax_np(x, 1)
    ref = -np.mean([logp[n, target[n, k], k] for n in range(2) for k in range(4)])
    out = agrad.cross_entropy(t(x, True), agrad.tensor(target))
    np.testing.assert_allclose(out.item(), ref)
    assert type(out.grad_fn).__name__ == "NllLoss2DBackward0"
    x1 = RNG.standard_normal(5)
    np.testing.assert_allclose(agrad.cross_entropy(t(x1), agrad.tensor(3)).item(), -_log_softmax_np(x1, 0)[3])


def test_cross_entropy_label_smoothing_matches_the_formula():
    x = RNG.standard_normal((3, 4))
    target = np.array([0, 3, 1])
    eps = 0.2
    logp = _log_softmax_np(x, 1)
    nll = -logp[np.arange(3), target].mean()
    smooth = -logp.sum(1).mean()
    ref = (1 - eps) * nll + eps / 4 * smooth
    np.testing.assert_allclose(agrad.cross_entropy(t(x), agrad.tensor(target), label_smoothing=eps).item(), ref)


def test_cross_entropy_probability_targets():
    x = RNG.standard_normal((3, 4))
    p = RNG.random((3, 4))
    p /= p.sum(1, keepdims=True)
    ref = -(_log_softmax_np(x, 1) * p).sum(1).mean()
    out = agrad.cross_entropy(t(x, True), t(p))
    np.testing.assert_allclose(out.item(), ref)
    assert type(out.grad_fn).__name__ == "DivBackward0"
    # the gradient of the mean soft-target loss is (softmax - p) / batch
    xt = t(x, True)
    agrad.cross_entropy(xt, t(p)).backward()
    np.testing.assert_allclose(xt.grad.detach().numpy(), (np.exp(_log_softmax_np(x, 1)) - p) / 3)


def test_cross_entropy_errors_are_pytorchs():
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(4\)\."):
        agrad.cross_entropy(meta((3, 5)), agrad.zeros(4, dtype="int64", device="meta"))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        agrad.cross_entropy(meta((3, 5)), meta((3,)))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, "
                                           "got Long"):
        agrad.cross_entropy(meta((3, 5)), agrad.zeros(3, 5, dtype="int64", device="meta"))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        agrad.cross_entropy(meta((3, 5)), agrad.zeros(3, 2, dtype="int64", device="meta"))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 3\]"):
        agrad.cross_entropy(meta((2, 5, 4)), agrad.zeros(2, 3, dtype="int64", device="meta"))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        agrad.cross_entropy(meta((3, 5)), agrad.zeros(3, dtype="int64", device="meta"), reduction="avg")
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5 classes or no classes "
                                           r"but got weight tensor of shape: \[4\]"):
        agrad.nll_loss(meta((3, 5)), agrad.zeros(3, dtype="int64", device="meta"), meta((4,)))


def test_nll_loss_target_out_of_bounds():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        agrad.nll_loss(t(RNG.standard_normal((2, 3))), agrad.tensor([0, 7]))


def test_nll_loss_double_backward_through_grad_output():
    x = t(RNG.standard_normal((3, 4)), True)
    target = agrad.tensor([1, 2, 3])
    assert gradgradcheck(lambda a: agrad.nll_loss(agrad.log_softmax(a, 1), target, reduction="sum"), [x])


def test_mse_loss_values_and_broadcast():
    x, y = RNG.standard_normal((3, 1)), RNG.standard_normal((3, 4))
    out = agrad.mse_loss(t(x, True), t(y))
    np.testing.assert_allclose(out.item(), ((x - y) ** 2).mean())
    assert type(out.grad_fn).__name__ == "MseLossBackward0"
    xt = t(x, True)
    agrad.mse_loss(xt, t(y), reduction="sum").backward()
    np.testing.assert_allclose(xt.grad.detach().numpy(), (2 * (x - y)).sum(1, keepdims=True))


def test_bce_with_logits_is_stable_and_matches_the_formula():
    x = np.array([-800.0, -3.0, 0.5, 40.0, 800.0])
    y = np.array([1.0, 0.0, 0.3, 1.0, 0.0])
    pw = np.array([2.0, 0.5, 1.0, 3.0, 1.5])
    out = agrad.binary_cross_entropy_with_logits(t(x), t(y), None, t(pw), reduction="none").detach().numpy()
    log_sig = lambda v: -np.logaddexp(0, -v)  # noqa: E731
    ref = -(pw * y * log_sig(x) + (1 - y) * log_sig(-x))
    np.testing.assert_allclose(out, ref)
    assert np.isfinite(out).all()
    xt = t(x, True)
    loss = agrad.binary_cross_entropy_with_logits(xt, t(y), reduction="sum")
    assert type(loss.grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward0"
    loss.backward()
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(xt.grad.detach().numpy(), 1 / (1 + np.exp(-x)) - y)


def test_bce_with_logits_target_size_error():
    with pytest.raises(ValueError, match=r"Target size \(agrad.Size\(\[3\]\)\) must be the same as input size "
                                         r"\(agrad.Size\(\[3, 2\]\)\)"):
        agrad.binary_cross_entropy_with_logits(meta((3, 2)), meta((3,)))


# ---- layer_norm ---------------------------------------------------------------------------------------

def test_layer_norm_values():
    x, w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    mu = x.mean((1, 2), keepdims=True)
    var = x.var((1, 2), keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-5) * w + b
    out = agrad.layer_norm(t(x, True), [3, 4], t(w, True), t(b, True))
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10)
    assert type(out.grad_fn).__name__ == "NativeLayerNormBackward0"


def test_layer_norm_shape_error():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], "
                                           r"but got input of size\[2, 3, 4\]"):
        agrad.layer_norm(meta((2, 3, 4)), [5])
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got weight "
                                           r"of shape \[3\] and normalized_shape = \[4\]"):
        agrad.layer_norm(meta((2, 4)), [4], meta((3,)))


# ---- dropout ------------------------------------------------------------------------------------------

def test_dropout_mask_comes_from_the_seed():
    x = np.ones((50, 40))
    p = 0.3
    out = agrad.dropout(t(x), p, seed=42).detach().numpy()
    keep = np.random.default_rng(42).random(x.shape) < 1 - p
    np.testing.assert_allclose(out, keep / (1 - p))
    np.testing.assert_array_equal(agrad.dropout(t(x), p, seed=42).detach().numpy(), out)
    assert not np.array_equal(agrad.dropout(t(x), p, seed=43).detach().numpy(), out)
    assert abs((out == 0).mean() - p) < 0.05


def test_dropout_gradient_is_the_mask():
    x = t(RNG.standard_normal((4, 5)), True)
    out = agrad.dropout(x, 0.5, seed=3)
    assert type(out.grad_fn).__name__ == "MulBackward0"
    out.sum().backward()
    keep = np.random.default_rng(3).random((4, 5)) < 0.5
    np.testing.assert_allclose(x.grad.detach().numpy(), keep * 2.0)


def test_dropout_eval_p0_p1_and_bad_p():
    x = t(RNG.standard_normal((3,)), True)
    assert agrad.dropout(x, 0.5, False) is x
    assert agrad.dropout(x, 0.0, seed=1) is x
    np.testing.assert_array_equal(agrad.dropout(x, 1.0, seed=1).detach().numpy(), np.zeros(3))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        agrad.dropout(x, 1.5)


def test_dropout_on_meta_draws_nothing():
    out = agrad.dropout(agrad.zeros(10 ** 6, 10 ** 6, device="meta"), 0.5, seed=0)
    assert out.shape == (10 ** 6, 10 ** 6) and out.device.type == "meta"


# ---- conv2d -------------------------------------------------------------------------------------------

def _conv_ref(x, w, b, stride, padding, dilation, groups):
    """A direct loop over every output element."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for ni in range(n):
        for oc in range(o):
            g = oc // og
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ci in range(cg):
                        for a in range(kh):
                            for bb in range(kw):
                                acc += w[oc, ci, a, bb] * xp[ni, g * cg + ci, i * stride[0] + a * dilation[0],
                                                             j * stride[1] + bb * dilation[1]]
                    out[ni, oc, i, j] = acc + (b[oc] if b is not None else 0.0)
    return out


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", [
    ((2, 2, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 2, 7, 6), (2, 2, 3, 2), (2, 3), (1, 2), (1, 1), 1),
    ((1, 4, 7, 7), (6, 2, 2, 3), (1, 2), (1, 0), (2, 1), 2),
    ((2, 3, 4, 4), (3, 1, 3, 3), (1, 1), (1, 1), (1, 1), 3),
])
def test_conv2d_matches_a_direct_loop(xs, ws, stride, padding, dilation, groups):
    x, w, b = RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])
    out = agrad.conv2d(t(x), t(w), t(b), list(stride), list(padding), list(dilation), groups)
    np.testing.assert_allclose(out.detach().numpy(), _conv_ref(x, w, b, stride, padding, dilation, groups), rtol=1e-10)


def test_conv2d_unbatched_and_grad_fn():
    x, w = RNG.standard_normal((2, 5, 5)), RNG.standard_normal((3, 2, 3, 3))
    xt = t(x, True)
    out = agrad.conv2d(xt, t(w, True), None, 2, 1)
    np.testing.assert_allclose(out.detach().numpy(), _conv_ref(x[None], w, None, (2, 2), (1, 1), (1, 1), 1)[0])
    assert type(out.grad_fn).__name__ == "ConvolutionBackward0"
    (gx,) = agrad.autograd.grad([(out * out).sum()], [xt], create_graph=True)
    assert gx.shape == xt.shape and type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"


def test_conv2d_double_backward():
    x, w, b = (t(RNG.standard_normal(s), True) for s in ((1, 2, 5, 4), (2, 2, 3, 2), (2,)))
    assert gradgradcheck(lambda a, k, c: agrad.conv2d(a, k, c, [2, 1], 1, [1, 2]), [x, w, b])


def test_conv2d_float32_on_cpu():
    x, w = RNG.standard_normal((1, 2, 5, 5)), RNG.standard_normal((3, 2, 3, 3))
    out = agrad.conv2d(t(x, dtype="float32"), t(w, dtype="float32"))
    assert out.dtype == agrad.float32
    np.testing.assert_allclose(out.detach().numpy(), _conv_ref(x, w, None, (1, 1), (0, 0), (1, 1), 1),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("args,kwargs,message", [
    (((1, 4, 5, 5), (8, 3, 3, 3)), {}, r"Given groups=1, weight of size \[8, 3, 3, 3\], expected input\[1, 4, 5, 5\] "
                                       r"to have 3 channels, but got 4 channels instead"),
    (((4, 5, 5), (8, 3, 3, 3)), {}, r"Given groups=1, weight of size \[8, 3, 3, 3\], expected input\[1, 4, 5, 5\] "
                                    r"to have 3 channels, but got 4 channels instead"),
    (((3, 5), (8, 3, 3, 3)), {}, r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
                                 r"size: \[3, 5\]"),
    (((1, 3, 2, 2), (8, 3, 3, 3)), {}, r"Calculated padded input size per channel: \(2 x 2\)\. Kernel size: "
                                       r"\(3 x 3\)\. Kernel size can't be greater than actual input size"),
    (((1, 3, 5, 5), (8, 3, 3, 3), (4,)), {}, r"Given weight of size \[8, 3, 3, 3\], expected bias to be "
                                             r"1-dimensional with 8 elements, but got bias of size \[4\] instead"),
    (((1, 6, 5, 5), (8, 3, 3, 3)), {"groups": 3}, r"Given groups=3, expected weight to be divisible by 3 at "
                                                  r"dimension 0, but got weight of size \[\[8, 3, 3, 3\]\] instead"),
    (((1, 3, 5, 5), (8, 3, 3, 3)), {"stride": [1, 1, 1]}, r"expected stride to be a single integer value or a list "
                                                          r"of 2 values to match the convolution dimensions, but got "
                                                          r"stride=\[1, 1, 1\]"),
    (((1, 3, 5, 5), (8, 3, 3, 3)), {"padding": -1}, "negative padding is not supported"),
])
def test_conv2d_shape_errors_are_pytorchs(args, kwargs, message):
    tensors = [meta(s) for s in args]
    with pytest.raises(RuntimeError, match=message):
        agrad.conv2d(*tensors, **kwargs)
    with pytest.raises(RuntimeError, match=message):     # the CPU kernel checks the same way
        agrad.conv2d(*[agrad.zeros(*s) for s in args], **kwargs)


def test_conv2d_dtype_errors():
    with pytest.raises(RuntimeError, match=r"Input type \(agrad.DoubleTensor\) and weight type \(agrad.FloatTensor\) "
                                           "should be the same"):
        agrad.conv2d(meta((1, 3, 5, 5), "float64"), meta((2, 3, 3, 3)))
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) should be the same"):
        agrad.conv2d(meta((1, 3, 5, 5)), meta((2, 3, 3, 3)), meta((2,), "float64"))


# ---- pooling ------------------------------------------------------------------------------------------

def _pool_ref(x, k, s, p, d, ceil_mode, reduce):
    """PyTorch's CPU loops: windows clipped to the input, output size by pooling_output_shape."""
    n, c, h, w = x.shape

    def size(length, kk, ss, pp, dd):
        out = (length + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil_mode else 0)) // ss + 1
        return out - 1 if ceil_mode and (out - 1) * ss >= length + pp else out
    oh, ow = size(h, k[0], s[0], p[0], d[0]), size(w, k[1], s[1], p[1], d[1])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            out[:, :, i, j] = reduce(x, rows, cols, i, j)
    return out


def _max_reduce(x, rows, cols, i, j):
    rows = [r for r in rows if 0 <= r < x.shape[2]]
    cols = [c for c in cols if 0 <= c < x.shape[3]]
    return x[:, :, rows][:, :, :, cols].max(axis=(2, 3))


@pytest.mark.parametrize("xs,k,s,p,d,ceil_mode", [
    ((2, 2, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 7, 6), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((1, 1, 7, 7), (2, 3), (1, 2), (1, 1), (2, 2), False),
    ((1, 1, 5, 5), (2, 2), (2, 2), (0, 0), (1, 1), True),
])
def test_max_pool2d_matches_a_direct_loop(xs, k, s, p, d, ceil_mode):
    x = RNG.standard_normal(xs)
    out = agrad.max_pool2d(t(x), list(k), list(s), list(p), list(d), ceil_mode)
    np.testing.assert_allclose(out.detach().numpy(), _pool_ref(x, k, s, p, d, ceil_mode, _max_reduce))


def test_max_pool2d_gradient_goes_to_the_first_argmax():
    x = t([[[[1.0, 3.0, 3.0], [0.0, 2.0, 3.0], [1.0, 1.0, 1.0]]]], True)
    out = agrad.max_pool2d(x, 2, 1)
    assert type(out.grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    out.sum().backward()
    # windows: [1,3,0,2] -> (0,1); [3,3,2,3] -> (0,1) again; [0,2,1,1] -> (1,1); [2,3,1,1] -> (1,2)
    np.testing.assert_array_equal(x.grad.detach().numpy()[0, 0], [[0, 2, 0], [0, 1, 1], [0, 0, 0]])


def _avg_reduce(count_include_pad, x):
    def reduce(arr, rows, cols, i, j):
        h, w = arr.shape[2:]
        pad = _avg_reduce.pad
        k = _avg_reduce.kernel
        r0, c0 = rows[0], cols[0]
        r1, c1 = min(r0 + k[0], h + pad[0]), min(c0 + k[1], w + pad[1])
        pool = (r1 - r0) * (c1 - c0)
        r0, c0, r1, c1 = max(r0, 0), max(c0, 0), min(r1, h), min(c1, w)
        total = arr[:, :, r0:r1, c0:c1].sum(axis=(2, 3))
        return total / (pool if count_include_pad else (r1 - r0) * (c1 - c0))
    return reduce


@pytest.mark.parametrize("xs,k,s,p,ceil_mode,include", [
    ((2, 2, 4, 4), (2, 2), (2, 2), (0, 0), False, True),
    ((1, 2, 6, 5), (3, 3), (2, 2), (1, 1), True, True),
    ((1, 2, 6, 5), (3, 3), (2, 2), (1, 1), True, False),
    ((1, 1, 5, 7), (2, 3), (1, 2), (1, 1), False, False),
])
def test_avg_pool2d_matches_pytorchs_divisors(xs, k, s, p, ceil_mode, include):
    x = RNG.standard_normal(xs)
    _avg_reduce.pad, _avg_reduce.kernel = p, k
    ref = _pool_ref(x, k, s, p, (1, 1), ceil_mode, _avg_reduce(include, x))
    out = agrad.avg_pool2d(t(x), list(k), list(s), list(p), ceil_mode, include)
    np.testing.assert_allclose(out.detach().numpy(), ref)


def test_avg_pool2d_divisor_override_and_grad_fn():
    x = t(RNG.standard_normal((1, 1, 4, 4)), True)
    out = agrad.avg_pool2d(x, 2, divisor_override=3)
    np.testing.assert_allclose(out.detach().numpy() * 3, x.detach().numpy().reshape(1, 1, 2, 2, 2, 2).sum((3, 5)))
    assert type(out.grad_fn).__name__ == "AvgPool2DBackward0"
    assert gradgradcheck(lambda a: agrad.avg_pool2d(a, 3, 2, 1, True, False), [x])


@pytest.mark.parametrize("call,message", [
    (lambda: agrad.max_pool2d(meta((1, 1, 5, 5)), 3, 1, 2),
     "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 3, kH = 3"),
    (lambda: agrad.max_pool2d(meta((1, 3, 2, 2)), 3),
     r"Given input size: \(3x2x2\)\. Calculated output size: \(3x0x0\)\. Output size is too small"),
    (lambda: agrad.max_pool2d(meta((5, 5)), 2), r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
    (lambda: agrad.avg_pool2d(meta((1, 1, 5, 5)), [2, 2, 2]),
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda: agrad.max_pool2d(meta((1, 1, 5, 5)), 2, [1, 1, 1]),
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
])
def test_pool_errors_are_pytorchs(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_pools_accept_unbatched_input():
    x = RNG.standard_normal((2, 4, 4))
    np.testing.assert_allclose(agrad.max_pool2d(t(x), 2).detach().numpy(),
                               x.reshape(2, 2, 2, 2, 2).max((2, 4)))
    np.testing.assert_allclose(agrad.avg_pool2d(t(x), 2).detach().numpy(),
                               x.reshape(2, 2, 2, 2, 2).mean((2, 4)))


def test_a_small_cnn_trains_end_to_end():
    """conv -> relu -> pool -> linear -> cross_entropy: one gradient check of the whole stack."""
    x = t(RNG.standard_normal((2, 1, 6, 6)))
    target = agrad.tensor([0, 2])
    w1, b1 = t(RNG.standard_normal((2, 1, 3, 3)) * 0.5, True), t(RNG.standard_normal(2) * 0.1, True)
    w2 = t(RNG.standard_normal((3, 8)) * 0.5, True)

    def model(a, b, c):
        h = agrad.max_pool2d(agrad.relu(agrad.conv2d(x, a, b, padding=1)), 2, 2)   # (2, 2, 3, 3)
        h = agrad.avg_pool2d(h, 2, 1)                                                 # (2, 2, 2, 2)
        return agrad.cross_entropy(agrad.linear(agrad.reshape(h, [2, 8]), c), target, label_smoothing=0.1)
    assert gradcheck(model, [w1, b1, w2])
    assert math.isfinite(model(w1, b1, w2).item())


def test_a_class_weight_that_requires_grad_is_refused_as_pytorch_refuses_it():
    # derivatives.yaml lists no formula for nll_loss's weight: PyTorch's generated check_no_requires_grad
    x = agrad.randn(4, 3, requires_grad=True).log_softmax(1)
    t, w = agrad.tensor([0, 2, 1, 2]), agrad.rand(3, requires_grad=True)
    message = ("The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
               "This input cannot have requires_grad True.")
    for loss in (agrad.nn.functional.nll_loss, agrad.nn.functional.cross_entropy):
        with pytest.raises(RuntimeError) as caught:
            loss(x, t, w)
        assert str(caught.value) == message
    assert agrad.nn.functional.nll_loss(x, t, w.detach()).requires_grad
    with agrad.no_grad():
        agrad.nn.functional.nll_loss(x, t, w)            # nothing recorded, nothing refused
