"""agrad.nn's losses beyond the common ones, EmbeddingBag, pdist, RReLU and gumbel_softmax, past
what is compared with torch elsewhere (the ops' values, gradients and grad_fn names in
tests/engine/test_reference.py; the layers' forwards in test_nn_reference.py, from
nn_losses_scenarios.py): float64 gradchecks of each new functional form, the statistics of the
random ones (rrelu's slopes, gumbel_softmax's samples and its straight-through gradient), the
deprecated size_average/reduce and their warnings, EmbeddingBag's max_norm, from_pretrained and
PyTorch 2.13's scale_grad_by_freq counts, and PyTorch 2.13's messages for wrong arguments (strings
taken from torch 2.13, torch.Size printed as agrad.Size). Never imports torch."""
from __future__ import annotations

import math
import re
import warnings

import agrad
import agrad.nn as nn
import agrad.nn.functional as F
import numpy as np
import pytest
from agrad.autograd import gradcheck, gradgradcheck


def _randn(*shape, seed=0, grad=True, low=None, high=None):
    rng = np.random.default_rng([seed, *shape])
    values = rng.normal(size=shape) if low is None else rng.uniform(low, high, size=shape)
    return agrad.tensor(values.tolist(), dtype=agrad.float64, requires_grad=grad)


def _ints(values):
    return agrad.tensor(values, dtype=agrad.int64)


def _signs(*shape, seed=0):
    rng = np.random.default_rng([seed, 7, *shape])
    return agrad.tensor(np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0).tolist(), dtype=agrad.float64)


def _raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def _log_softmax_of(fn, dim=-1):
    """fn of log-probabilities, as a function of the logits (CTC's gradient is the one through a log_softmax)."""
    return lambda logits, *rest: fn(F.log_softmax(logits, dim), *rest)


# ---- gradchecks of the functional forms ------------------------------------------------------------

_MM_TARGET = _ints([2, 0, 3])
_MLM_TARGET = _ints([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 0]])
_MM_WEIGHT = agrad.tensor([1.0, 0.5, 2.0, 1.5], dtype=agrad.float64)


@pytest.mark.parametrize("fn, args", [
    (lambda x, t: F.hinge_embedding_loss(x, t, 0.7), [_randn(3, 4), _signs(3, 4)]),
    (lambda x, t: F.hinge_embedding_loss(x, t, reduction="none"), [_randn(5), _signs(5)]),
    (lambda x, t: F.poisson_nll_loss(x, t), [_randn(3, 4), _randn(3, 4, low=0.0, high=4.0)]),
    (lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
     [_randn(3, 4, low=0.2, high=3.0), _randn(3, 4, low=0.5, high=5.0)]),
    (lambda x, t, v: F.gaussian_nll_loss(x, t, v), [_randn(3, 4), _randn(3, 4), _randn(3, 4, low=0.1, high=2.0)]),
    (lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     [_randn(3, 4), _randn(3, 4), _randn(3, low=0.1, high=2.0)]),
    (lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="sum"),
     [_randn(2, 3, 2), _randn(2, 3, 2), _randn(2, 1, 2, low=0.1, high=2.0)]),
    (lambda x, t: F.gaussian_nll_loss(x, t, 0.5), [_randn(4), _randn(4)]),
    (lambda x: F.soft_margin_loss(x, _signs(3, 4)), [_randn(3, 4)]),
    (lambda x: F.soft_margin_loss(x, _signs(4), reduction="none"), [_randn(3, 4)]),
    (lambda x, t: F.multilabel_soft_margin_loss(x, t, _MM_WEIGHT), [_randn(3, 4), _randn(3, 4, low=0.0, high=1.0)]),
    (lambda x: F.multi_margin_loss(x, _MM_TARGET), [_randn(3, 4, seed=1)]),
    (lambda x: F.multi_margin_loss(x, _MM_TARGET, p=2, margin=0.5, weight=_MM_WEIGHT, reduction="none"),
     [_randn(3, 4, seed=1)]),
    (lambda x: F.multilabel_margin_loss(x, _MLM_TARGET), [_randn(3, 4, seed=2)]),
    (lambda x: F.multilabel_margin_loss(x, _MLM_TARGET, reduction="none"), [_randn(3, 4, seed=2)]),
    (lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.1), [_randn(4, 3), _randn(4, 3, seed=1), _signs(4)]),
    (lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.2), [_randn(5), _randn(5, seed=1), _signs(5)]),
    (lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n), [_randn(4, 3), _randn(4, 3, seed=1),
                                                                      _randn(4, 3, seed=2)]),
    (lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), margin=1.5, swap=True,
        reduction="none"), [_randn(4, 3), _randn(4, 3, seed=1), _randn(4, 3, seed=2)]),
    (_log_softmax_of(lambda lp: F.ctc_loss(lp, _ints([[1, 2, 2], [3, 1, 0]]), _ints([6, 4]), _ints([3, 2]))),
     [_randn(6, 2, 4)]),
    (_log_softmax_of(lambda lp: F.ctc_loss(lp, _ints([1, 1, 3]), [5, 5], [2, 1], blank=2, reduction="sum")),
     [_randn(5, 2, 4)]),
    (_log_softmax_of(lambda lp: F.ctc_loss(lp, _ints([[1, 1, 1], [2, 0, 0]]), (3, 2), (3, 1), reduction="none",
                                           zero_infinity=True)), [_randn(3, 2, 4)]),
    (_log_softmax_of(lambda lp: F.ctc_loss(lp, _ints([1, 3]), _ints(5), _ints(2), reduction="none")), [_randn(5, 4)]),
    (lambda w: F.embedding_bag(_ints([0, 2, 4, 1, 5, 3, 2]), w, _ints([0, 2, 2])), [_randn(6, 3)]),
    (lambda w, psw: F.embedding_bag(_ints([[0, 5, 1], [5, 3, 3]]), w, mode="sum", per_sample_weights=psw,
                                    padding_idx=-1), [_randn(6, 3), _randn(2, 3, seed=1)]),
    (lambda w: F.embedding_bag(_ints([4, 2, 0, 1, 5, 3]), w, _ints([0, 1, 1, 6]), mode="max",
                               include_last_offset=True), [_randn(6, 2)]),
    (lambda x: F.pdist(x), [_randn(5, 3)]),
    (lambda x: F.pdist(x, 1.5), [_randn(4, 2)]),
    (lambda x: F.rrelu(x, 0.1, 0.3), [_randn(3, 4)]),
    (lambda x: F.rrelu(x, 0.1, 0.3, training=True, seed=5), [_randn(3, 4)]),
])
def test_gradcheck(fn, args):
    assert gradcheck(fn, args)


@pytest.mark.parametrize("fn, args", [
    (lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True), [_randn(3, 4, low=0.2, high=3.0),
                                                                         _randn(3, 4, low=0.5, high=5.0)]),
    (lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True), [_randn(3, 4), _randn(3, 4),
                                                                _randn(3, low=0.1, high=2.0)]),
    (lambda x: F.soft_margin_loss(x, _signs(3, 4)), [_randn(3, 4)]),
    (lambda x, t: F.multilabel_soft_margin_loss(x, t), [_randn(3, 4), _randn(3, 4, low=0.0, high=1.0)]),
])
def test_gradgradcheck(fn, args):
    assert gradgradcheck(fn, args)


def test_embedding_bag_gradients_are_the_embeddings_gradients_per_bag():
    """sum / mean / max of bags equal embedding + the reduction, values and gradients."""
    weight = _randn(6, 3)
    indices, offsets = [0, 2, 4, 1, 5, 3, 2], [0, 3, 3, 5]
    bags = [indices[s:e] for s, e in zip(offsets, offsets[1:] + [len(indices)])]
    for mode in ("sum", "mean", "max"):
        out = F.embedding_bag(_ints(indices), weight, _ints(offsets), mode=mode)
        g_bag = agrad.autograd.grad(out.sum(), [weight])[0]
        rows = [F.embedding(_ints(b), weight) if b else None for b in bags]
        parts = [agrad.zeros(3, dtype=agrad.float64) if r is None else
                 getattr(r, mode)(0) if mode != "max" else r.max(0)[0] for r in rows]
        ref = agrad.stack(parts)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        g_ref = agrad.autograd.grad(ref.sum(), [weight])[0]
        np.testing.assert_allclose(g_bag.numpy(), g_ref.numpy(), rtol=1e-12)


# ---- RReLU and gumbel_softmax: the random ones -------------------------------------------------------

def test_rrelu_training_draws_uniform_slopes_and_passes_them_as_the_gradient():
    agrad.manual_seed(0)
    x = agrad.tensor(np.linspace(-3, 3, 40001).tolist(), dtype=agrad.float64, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    (g,) = agrad.autograd.grad(y.sum(), [x])
    xs, ys, gs = x.detach().numpy(), y.detach().numpy(), g.numpy()
    pos, neg = xs > 0, xs < 0
    np.testing.assert_array_equal(ys[pos], xs[pos])
    np.testing.assert_array_equal(gs[pos], 1.0)
    slopes = ys[neg] / xs[neg]
    np.testing.assert_allclose(gs[neg], slopes, rtol=1e-12)
    assert slopes.min() >= 0.1 and slopes.max() < 0.3
    n = slopes.size
    assert abs(slopes.mean() - 0.2) < 6 * (0.2 / math.sqrt(12)) / math.sqrt(n)      # uniform on [0.1, 0.3)
    assert slopes.std() == pytest.approx(0.2 / math.sqrt(12), rel=0.03)
    assert len(np.unique(slopes)) > n - 10                                           # one slope per element


def test_rrelu_eval_is_leaky_relu_with_the_mean_slope_and_the_module_follows_training():
    x = _randn(4, 5)
    np.testing.assert_array_equal(F.rrelu(x, 0.2, 0.4).detach().numpy(),
                                  F.leaky_relu(x, (0.2 + 0.4) / 2).detach().numpy())
    layer = nn.RReLU(0.2, 0.4)
    assert repr(layer) == "RReLU(lower=0.2, upper=0.4)"
    assert repr(nn.RReLU(inplace=True)) == "RReLU(lower=0.125, upper=0.3333333333333333, inplace=True)"
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), F.leaky_relu(x, (0.2 + 0.4) / 2).detach().numpy())
    layer.train()
    agrad.manual_seed(3)
    a = layer(x)
    agrad.manual_seed(3)
    np.testing.assert_array_equal(a.detach().numpy(), layer(x).detach().numpy())     # the global generator
    assert not np.array_equal(a.detach().numpy(), layer(x).detach().numpy())


def test_rrelu_seed_and_in_place_forms():
    x = _randn(3, 4, grad=False)
    a = F.rrelu(x, training=True, seed=11)
    np.testing.assert_array_equal(a.numpy(), F.rrelu(x, training=True, seed=11).numpy())
    y = x.clone()
    assert F.rrelu_(y, training=True, seed=11) is y
    np.testing.assert_array_equal(y.numpy(), a.numpy())
    z = x.clone()
    assert F.rrelu(z, 0.1, 0.2, False, True) is z
    np.testing.assert_array_equal(z.numpy(), F.leaky_relu(x, 0.15000000000000002).numpy())


def test_gumbel_softmax_samples_follow_the_softmax():
    logits = agrad.tensor([[1.0, 0.0, -1.0, 0.5]] * 20000, dtype=agrad.float64)
    p = np.exp([1.0, 0.0, -1.0, 0.5]) / np.exp([1.0, 0.0, -1.0, 0.5]).sum()
    agrad.manual_seed(0)
    soft = F.gumbel_softmax(logits, tau=0.5).numpy()
    np.testing.assert_allclose(soft.sum(-1), 1.0, rtol=1e-12)
    assert (soft > 0).all()
    agrad.manual_seed(0)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0}
    np.testing.assert_array_equal(hard.sum(-1), 1.0)
    np.testing.assert_array_equal(hard.argmax(-1), soft.argmax(-1))      # the same draws, made one-hot
    freq = hard.mean(0)
    # the Gumbel-max trick: the argmax of logits + Gumbel(0, 1) noise is distributed as softmax(logits)
    np.testing.assert_allclose(freq, p, atol=5 * np.sqrt(p * (1 - p) / 20000).max())
    # a higher temperature spreads the soft samples
    agrad.manual_seed(1)
    hot = F.gumbel_softmax(logits, tau=10.0).numpy()
    assert hot.max(-1).mean() < soft.max(-1).mean()


def test_gumbel_softmax_straight_through_gradient_is_the_soft_samples():
    logits = _randn(6, 5)
    weights = _randn(6, 5, seed=3, grad=False)
    agrad.manual_seed(4)
    soft = F.gumbel_softmax(logits, tau=0.7, dim=1)
    (g_soft,) = agrad.autograd.grad((soft * weights).sum(), [logits])
    agrad.manual_seed(4)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    (g_hard,) = agrad.autograd.grad((hard * weights).sum(), [logits])
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(hard.detach().numpy().argmax(1), soft.detach().numpy().argmax(1))
    # the soft sample is softmax((logits + g) / tau): its gradient is the softmax's for fixed g
    agrad.manual_seed(4)
    g = -agrad.log(-agrad.log1p(-agrad.rand_like(logits)))
    np.testing.assert_allclose(soft.detach().numpy(), F.softmax((logits + g) / 0.7, 1).detach().numpy(), rtol=1e-12)


def test_gumbel_softmax_eps_is_deprecated():
    with pytest.warns(UserWarning, match=re.escape("`eps` parameter is deprecated and has no effect.")):
        F.gumbel_softmax(_randn(2, 3), eps=1e-5)
    with _raises(RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be a "
                               "floating point but you specified Long"):
        F.gumbel_softmax(_ints([[1, 2]]))


# ---- size_average / reduce, 'elementwise_mean' ---------------------------------------------------------

_LEGACY = "size_average and reduce args will be deprecated, please use reduction='{}' instead."


@pytest.mark.parametrize("size_average, reduce, reduction", [
    (None, False, "none"), (False, None, "sum"), (True, None, "mean"), (False, False, "none"), (None, True, "mean")])
def test_size_average_and_reduce_decide_the_reduction_with_a_warning(size_average, reduce, reduction):
    x, t = _randn(3, 4), _signs(3, 4)
    expected = F.soft_margin_loss(x, t, reduction=reduction).detach().numpy()
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format(reduction))):
        got = F.soft_margin_loss(x, t, size_average, reduce, "sum")
    np.testing.assert_array_equal(got.detach().numpy(), expected)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format(reduction))):
        layer = nn.HingeEmbeddingLoss(1.0, size_average, reduce)
    assert layer.reduction == reduction
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format(reduction))):
        assert nn.MultiMarginLoss(1, 1.0, None, size_average, reduce).reduction == reduction
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format(reduction))):
        assert nn.L1Loss(size_average, reduce).reduction == reduction


def test_legacy_arguments_sit_where_pytorch_puts_them():
    x, t = _randn(2, 3, low=0.5, high=2.0), _randn(2, 3, low=0.0, high=3.0)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("sum"))):
        a = F.poisson_nll_loss(x, t, False, False, False, 1e-8, None)
    np.testing.assert_allclose(a.item(), F.poisson_nll_loss(x, t, False, reduction="sum").item(), rtol=1e-14)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("none"))):
        assert F.multilabel_soft_margin_loss(x, t / 3, None, None, False).shape == (2,)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("none"))):
        assert F.multi_margin_loss(x, _ints([1, 2]), 1, 1.0, None, True, False).shape == (2,)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("sum"))):
        layer = nn.PoissonNLLLoss(True, False, False)
    assert layer.reduction == "sum" and layer.eps == 1e-8
    # the margin losses agrad had before take them too
    a, b, s = _randn(4, 3), _randn(4, 3, seed=1), _signs(4)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("sum"))):
        got = F.cosine_embedding_loss(a, b, s, 0.1, False)
    assert got.item() == F.cosine_embedding_loss(a, b, s, 0.1, reduction="sum").item()
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("none"))):
        assert F.margin_ranking_loss(a[:, 0], b[:, 0], s, 0.0, None, False).shape == (4,)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("none"))):
        assert F.triplet_margin_loss(a, b, b + 1, 1.0, 2, 1e-6, False, None, False).shape == (4,)
    with pytest.warns(UserWarning, match=re.escape(_LEGACY.format("sum"))):
        assert nn.TripletMarginLoss(0.5, 2.0, 1e-6, False, False).reduction == "sum"


def test_elementwise_mean_is_mean_with_a_warning_where_pytorch_takes_it():
    x, t = _randn(3, 4), _signs(3, 4)
    message = "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."
    for fn in (lambda r: F.soft_margin_loss(x, t, reduction=r), lambda r: F.hinge_embedding_loss(x, t, reduction=r),
               lambda r: F.multi_margin_loss(x, _ints([0, 1, 3]), reduction=r)):
        with pytest.warns(UserWarning, match=re.escape(message)):
            got = fn("elementwise_mean")
        assert got.item() == fn("mean").item()
    # PyTorch's Python losses check the name themselves
    with _raises(ValueError, "elementwise_mean is not a valid value for reduction"):
        F.poisson_nll_loss(x, t.abs(), reduction="elementwise_mean")
    with _raises(ValueError, "elementwise_mean is not valid"):
        F.multilabel_soft_margin_loss(x, t.abs(), reduction="elementwise_mean")
    with _raises(ValueError, "elementwise_mean is not valid"):
        F.gaussian_nll_loss(x, t, t.abs(), reduction="elementwise_mean")


def test_nll_loss_2d_is_a_deprecated_nll_loss():
    message = ("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
               "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")
    with pytest.warns(FutureWarning, match=re.escape(message)):
        layer = nn.NLLLoss2d(None, None, 1)
    assert isinstance(layer, nn.NLLLoss) and layer.ignore_index == 1 and repr(layer) == "NLLLoss2d()"
    x, t = F.log_softmax(_randn(2, 3, 2, 2), 1), _ints([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    assert layer(x, t).item() == F.nll_loss(x, t, ignore_index=1).item()


# ---- EmbeddingBag --------------------------------------------------------------------------------------

def test_scale_grad_by_freq_divides_as_pytorch_2_13s_cpu_kernel():
    # PyTorch 2.13's values (pytorch/pytorch#190063: the k-th distinct index divided by the count of the k-th
    # element of the sorted indices)
    w = agrad.ones(4, 3, requires_grad=True)
    F.embedding_bag(_ints([1, 1, 3]), w, _ints([0]), mode="sum", scale_grad_by_freq=True).sum().backward()
    assert w.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 0.5]
    w = agrad.ones(4, 3, requires_grad=True)
    F.embedding_bag(_ints([1, 1, 3, 2]), w, _ints([0, 2]), mode="mean", scale_grad_by_freq=True).sum().backward()
    assert w.grad[:, 0].tolist() == [0.0, 0.5, 0.25, 0.5]


def test_max_norm_renormalises_the_rows_used_in_place():
    # PyTorch 2.13's values
    w = agrad.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0], [6.0, 8.0]])
    out = F.embedding_bag(_ints([0, 1, 3]), w, _ints([0]), max_norm=2.0, mode="sum")
    np.testing.assert_allclose(w.numpy(), [[1.2, 1.6], [0.3, 0.4], [1.0, 0.0], [1.2, 1.6]], rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), [[2.7, 3.6]], rtol=1e-6)
    w = agrad.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0], [6.0, 8.0]])
    out = F.embedding_bag(_ints([0, 1, 3]), w, _ints([0]), max_norm=2.0, norm_type=1.0, mode="max")
    np.testing.assert_allclose(w.numpy(), [[0.8571428, 1.1428571], [0.3, 0.4], [1.0, 0.0], [0.8571429, 1.1428572]],
                               rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), [[0.8571429, 1.1428572]], rtol=1e-6)
    # a leaf that requires grad is renormalised too, without recording
    layer = nn.EmbeddingBag(5, 4, max_norm=0.5, mode="sum")
    layer(_ints([[0, 1], [1, 3]])).sum().backward()
    norms = np.linalg.norm(layer.weight.detach().numpy(), axis=1)
    assert (norms[[0, 1, 3]] <= 0.5 + 1e-6).all() and layer.weight.grad is not None


def test_two_d_input_is_bags_of_its_rows():
    w = _randn(7, 3)
    x = [[0, 6, 2], [3, 3, 1]]
    for mode in ("sum", "mean", "max"):
        a = F.embedding_bag(_ints(x), w, mode=mode)
        b = F.embedding_bag(_ints([i for row in x for i in row]), w, _ints([0, 3]), mode=mode)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_padding_idx_and_empty_bags():
    w = _randn(5, 2)
    out = F.embedding_bag(_ints([2, 2, 1, 2]), w, _ints([0, 2, 2, 4]), padding_idx=2, include_last_offset=True)
    np.testing.assert_array_equal(out[0].detach().numpy(), [0.0, 0.0])          # only padding: zeros
    np.testing.assert_array_equal(out[1].detach().numpy(), [0.0, 0.0])          # empty
    np.testing.assert_allclose(out[2].detach().numpy(), w[1].detach().numpy())  # the mean leaves the padding out
    (g,) = agrad.autograd.grad(out.sum(), [w])
    np.testing.assert_array_equal(g.numpy()[2], [0.0, 0.0])


def test_embedding_bag_layer_and_from_pretrained():
    layer = nn.EmbeddingBag(10, 3, padding_idx=-2)
    assert layer.padding_idx == 8 and layer.weight[8].tolist() == [0.0, 0.0, 0.0]
    assert repr(layer) == "EmbeddingBag(10, 3, mode='mean', padding_idx=8)"
    assert repr(nn.EmbeddingBag(4, 2, max_norm=1.5, norm_type=3, scale_grad_by_freq=True, mode="sum")) == (
        "EmbeddingBag(4, 2, max_norm=1.5, norm_type=3, scale_grad_by_freq=True, mode='sum')")
    weights = agrad.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = nn.EmbeddingBag.from_pretrained(weights, mode="max")
    assert not frozen.weight.requires_grad and frozen.mode == "max"
    assert frozen(_ints([[0, 2], [1, 0]])).tolist() == [[5.0, 6.0], [3.0, 4.0]]
    assert nn.EmbeddingBag.from_pretrained(weights, freeze=False).weight.requires_grad
    with _raises(AssertionError, "Embeddings parameter is expected to be 2-dimensional"):
        nn.EmbeddingBag.from_pretrained(agrad.ones(3))
    with _raises(AssertionError, "padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
    with _raises(AssertionError, "Shape of weight does not match num_embeddings and embedding_dim"):
        nn.EmbeddingBag(3, 2, _weight=agrad.ones(2, 2))
    psw = _randn(4).to(agrad.float32)
    out = nn.EmbeddingBag.from_pretrained(weights, mode="sum")(_ints([0, 1, 2, 2]), _ints([0, 2]), psw)
    expected = [[1 * psw[0].item() + 3 * psw[1].item(), 2 * psw[0].item() + 4 * psw[1].item()],
                [5 * (psw[2].item() + psw[3].item()), 6 * (psw[2].item() + psw[3].item())]]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)


def test_embedding_bag_swapped_arguments_warn_and_are_swapped_back():
    w = _randn(4, 2, grad=False)
    with pytest.warns(UserWarning, match=re.escape("Argument order of nn.functional.embedding_bag was changed.")):
        out = F.embedding_bag(w, _ints([1, 3]), _ints([0]))
    np.testing.assert_allclose(out.numpy(), F.embedding_bag(_ints([1, 3]), w, _ints([0])).numpy())


# ---- the layers --------------------------------------------------------------------------------------

def test_loss_layers_hold_their_options():
    assert repr(nn.TripletMarginWithDistanceLoss()) == ("TripletMarginWithDistanceLoss(\n  (distance_function): "
                                                        "PairwiseDistance()\n)")
    assert repr(nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: a)) == "TripletMarginWithDistanceLoss()"
    layer = nn.MultiMarginLoss(p=2, margin=0.5, weight=agrad.ones(3))
    assert (layer.p, layer.margin, list(layer.state_dict())) == (2, 0.5, ["weight"])
    assert (nn.CTCLoss().blank, nn.CTCLoss().reduction, nn.CTCLoss().zero_infinity) == (0, "mean", False)
    assert nn.GaussianNLLLoss().eps == 1e-6 and nn.PoissonNLLLoss().eps == 1e-8
    assert nn.CosineEmbeddingLoss().margin == 0.0 and nn.MarginRankingLoss().margin == 0.0
    with pytest.raises(TypeError):
        nn.GaussianNLLLoss(True)              # keyword-only, as PyTorch's


def test_layers_compute_their_functional_forms():
    x, y, z = _randn(4, 3), _randn(4, 3, seed=1), _randn(4, 3, seed=2)
    t = _signs(4)
    pairs = [(nn.CosineEmbeddingLoss(0.2)(x, y, t), F.cosine_embedding_loss(x, y, t, 0.2)),
             (nn.MarginRankingLoss(0.1, reduction="sum")(x[:, 0], y[:, 0], t),
              F.margin_ranking_loss(x[:, 0], y[:, 0], t, 0.1, reduction="sum")),
             (nn.TripletMarginLoss(0.5, 1.0, swap=True)(x, y, z), F.triplet_margin_loss(x, y, z, 0.5, 1.0, swap=True)),
             (nn.TripletMarginWithDistanceLoss(swap=True)(x, y, z),
              F.triplet_margin_with_distance_loss(x, y, z, swap=True)),
             (nn.SoftMarginLoss()(x, _signs(4, 3)), F.soft_margin_loss(x, _signs(4, 3))),
             (nn.MultiLabelMarginLoss()(x, _ints([[2, -1, 0]] * 4)), F.multilabel_margin_loss(x, _ints([[2, -1, 0]] * 4)))]
    for got, expected in pairs:
        assert got.item() == expected.item()
    # the default distance function is PairwiseDistance: the default triplet margin loss
    np.testing.assert_allclose(nn.TripletMarginWithDistanceLoss()(x, y, z).item(),
                               F.triplet_margin_loss(x, y, z).item(), rtol=1e-14)


# ---- PyTorch 2.13's messages ----------------------------------------------------------------------------

def _lp(grad=False):
    return F.log_softmax(_randn(6, 2, 5, grad=False), 2).detach().requires_grad_(grad)


_T2 = _ints([[1, 2], [3, 3]])


@pytest.mark.parametrize("call, exc, message", [
    (lambda: F.hinge_embedding_loss(_randn(3, 4), _signs(3), reduction="bad"), ValueError,
     "bad is not a valid value for reduction"),
    (lambda: F.hinge_embedding_loss(_randn(3, 4), _signs(3)), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    (lambda: F.poisson_nll_loss(_randn(3), _randn(3), reduction="bad"), ValueError,
     "bad is not a valid value for reduction"),
    (lambda: F.gaussian_nll_loss(_randn(3, 4), _randn(3, 4), -0.5), ValueError, "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(_randn(3, 4), _randn(3, 4), -_randn(3, 4, low=0.1, high=1.0)), ValueError,
     "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(_randn(3, 4), _randn(3, 4), _randn(2, 4, low=0.1, high=1.0)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(_randn(3, 4), _randn(3, 4), _randn(1, 1, low=0.1, high=1.0)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(_randn(3), _randn(3), _randn(3, low=0.1, high=1.0), reduction="bad"), ValueError,
     "bad is not valid"),
    (lambda: F.soft_margin_loss(_randn(3, 4), _randn(3, 4)), RuntimeError,
     "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. This input cannot "
     "have requires_grad True."),
    (lambda: F.soft_margin_loss(_randn(4), _signs(3, 4)), RuntimeError,
     "output with shape [4] doesn't match the broadcast shape [3, 4]"),
    (lambda: F.multilabel_soft_margin_loss(_randn(3, 4), _randn(3, 4), reduction="bad"), ValueError,
     "bad is not valid"),
    (lambda: F.multilabel_soft_margin_loss(_randn(), _randn()), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 4])), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1])), RuntimeError,
     "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). "
     "Expected target size [3], but got [2]. Input has shape [3, 4]."),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 1]), p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 1]), weight=agrad.ones(2, 4)), ValueError,
     "weight must be one-dimensional"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 1]), weight=agrad.ones(3, dtype=agrad.float64)),
     RuntimeError, "inconsistent weight size, expected 4 but got [3]"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 1]), weight=agrad.ones(4)), RuntimeError,
     "expected scalar type Double but found Float"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _randn(3)), RuntimeError, "expected scalar type Long but found Double"),
    (lambda: F.multi_margin_loss(_randn(3, 0), _ints([0, 0, 0])), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [3, 0]"),
    (lambda: F.multi_margin_loss(_ints([[1, 2]]), _ints([0])), NotImplementedError,
     "\"multi_margin_loss_cpu_kernel\" not implemented for 'Long'"),
    (lambda: F.multi_margin_loss(_randn(3, 4), _ints([0, 1, 1]), weight=_randn(4)), RuntimeError,
     "The function 'multi_margin_loss' is not differentiable with respect to argument 'weight'. This input cannot "
     "have requires_grad True."),
    (lambda: F.multilabel_margin_loss(_randn(3, 4), _ints([[0, 1, -2, 2]] * 3)), RuntimeError,
     "argument #2 'target' is out of range"),
    (lambda: F.multilabel_margin_loss(_randn(3, 4), _ints([[0, 1, 4, 2]] * 3)), RuntimeError,
     "argument #2 'target' is out of range"),
    (lambda: F.multilabel_margin_loss(_randn(3, 4), _ints([[0, 1, 2]] * 3)), RuntimeError,
     "inconsistent target size: [3, 3] for input of size: [3, 4]"),
    (lambda: F.multilabel_margin_loss(_randn(4), _ints([[0, 1, 2, 3]])), RuntimeError,
     "inconsistent target size: [1, 4] for input of size: [4]"),
    (lambda: F.multilabel_margin_loss(_randn(3, 4), _ints([[0, 1, -1, 2]] * 3).to(agrad.int32)), RuntimeError,
     "expected scalar type Long but found Int"),
    (lambda: F.multilabel_margin_loss(_randn(2, 3, 4), _ints([0, 0])), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]"),
    (lambda: F.triplet_margin_with_distance_loss(_randn(3), _randn(3), _randn(3), margin=0), ValueError,
     "margin must be greater than 0, got 0"),
    (lambda: F.triplet_margin_with_distance_loss(_randn(3), _randn(3), _randn(3), reduction="x"), ValueError,
     "x is not a valid value for reduction"),
    (lambda: F.triplet_margin_with_distance_loss(_randn(2, 3), _randn(2, 3), _randn(3)), RuntimeError,
     "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
     "anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError,
     "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got 0 instead"),
    (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: nn.MultiMarginLoss(weight=agrad.ones(2, 2)), ValueError,
     "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"),
    (lambda: F.ctc_loss(_lp(), _T2, agrad.tensor([6.0, 5.0]), _ints([2, 2])), RuntimeError,
     "input_lengths must be integral"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), agrad.tensor([2.0, 2.0])), RuntimeError,
     "target_lengths must be integral"),
    (lambda: F.ctc_loss(_lp()[0, 0], _T2, _ints([6, 5]), _ints([2, 2])), RuntimeError,
     "Expected 3-dimensional tensor, but got 2-dimensional tensor for argument #1 'log_probs' (while checking "
     "arguments for ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2[None], _ints([6, 5]), _ints([2, 2])), RuntimeError,
     "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets' (while checking arguments "
     "for ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), _ints([2, 2]), blank=5), RuntimeError,
     "blank must be in label range"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5, 4]), _ints([2, 2])), RuntimeError,
     "input_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), _ints([2])), RuntimeError,
     "target_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), _ints([2, -1])), RuntimeError,
     "Expected target_lengths to have value at least 0, but got value -1 (while checking arguments for "
     "ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), _ints([2, 3])), RuntimeError,
     "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 'targets' (while "
     "checking arguments for ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _ints([1, 2, 3, 3]), _ints([6, 5]), _ints([2, 3])), RuntimeError,
     "Expected tensor to have size 5 at dimension 0, but got size 4 for argument #2 'targets' (while checking "
     "arguments for ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([7, 5]), _ints([2, 2])), RuntimeError,
     "Expected input_lengths to have value at most 6, but got value 7 (while checking arguments for "
     "ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([-1, 5]), _ints([2, 2])), RuntimeError,
     "Expected input_lengths to have value at least 0, but got value -1 (while checking arguments for "
     "ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(_lp(), _T2, _ints([6, 5]), _ints([2, 2]), reduction="bad"), ValueError,
     "bad is not a valid value for reduction"),
    (lambda: F.ctc_loss(_lp().long(), _T2, _ints([6, 5]), _ints([2, 2])), NotImplementedError,
     "\"ctc_loss_cpu\" not implemented for 'Long'"),
    (lambda: F.embedding_bag(_ints([0, 2, 4, 1]), _randn(6, 3), _ints([1, 2])), RuntimeError,
     "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, "
     "got 1"),
    (lambda: F.embedding_bag(_ints([0, 2, 4, 1]), _randn(6, 3), _ints([0, 7])), RuntimeError,
     "offsets[-1] can not be greater than input's length 4 but got offsets[-1] of 7"),
    (lambda: F.embedding_bag(_ints([0, 9]), _randn(6, 3), _ints([0])), RuntimeError,
     "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 9"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), padding_idx=6), RuntimeError,
     "padding_idx must be within the number of embeddings, -6 through 5, but got 6"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), mode="x"), ValueError,
     "mode has to be one of sum, mean or max"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([[0]])), ValueError, "offsets has to be a 1D Tensor"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3)), ValueError, "offsets has to be a 1D Tensor but got None"),
    (lambda: F.embedding_bag(_ints([[0, 2]]), _randn(6, 3), _ints([0])), ValueError,
     "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. "
     "However, found offsets of type <class 'agrad.Tensor'>"),
    (lambda: F.embedding_bag(_ints([[[0, 2]]]), _randn(6, 3)), ValueError,
     "input has to be 1D or 2D Tensor, but got Tensor of dimension 3"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6), _ints([0])), ValueError,
     "weight has to be a 2D Tensor, but got Tensor of dimension 1"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), per_sample_weights=_randn(2)),
     NotImplementedError, "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                          "mode='sum' (got mode='mean'). Please open a feature request on GitHub."),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), mode="sum", per_sample_weights=_randn(3)),
     ValueError, "embedding_bag: If per_sample_weights (agrad.Size([3])) is not None, then it must have the same "
                 "shape as the input (agrad.Size([2]))"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), mode="max", scale_grad_by_freq=True),
     ValueError, "max mode does not support scaling the gradient by the frequency"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), _ints([0]), mode="max", sparse=True), ValueError,
     "max mode does not support sparse weights"),
    (lambda: F.embedding_bag(_ints([0, 2]), _randn(6, 3), agrad.tensor([0.0, 1.0])), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
     "agrad.DoubleTensor instead (while checking arguments for embedding_bag)"),
    (lambda: F.embedding_bag(_ints([0, 2]), _ints([[1, 2]]), _ints([0])), RuntimeError,
     "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, Float, "
     "Double; but got agrad.LongTensor instead (while checking arguments for embedding_bag)"),
    (lambda: F.pdist(_randn(3)), RuntimeError, "pdist only supports 2D tensors, got: 1D"),
    (lambda: F.pdist(_ints([[1, 2]])), RuntimeError, "pdist only supports floating-point dtypes"),
    (lambda: F.pdist(_randn(3, 2), -1), RuntimeError, "pdist only supports non-negative p values"),
    (lambda: F.rrelu(_randn(3), 0.5, 0.2, training=True), RuntimeError,
     "Lower bound should be less than or equal to the upper bound"),
    (lambda: F.rrelu(_ints([1, -2])), NotImplementedError, "\"leaky_relu_cpu\" not implemented for 'Long'"),
    (lambda: F.rrelu(_ints([1, -2]), training=True), NotImplementedError,
     "\"rrelu_with_noise_out_cpu\" not implemented for 'Long'"),
])
def test_pytorch_messages(call, exc, message):
    with _raises(exc, message):
        call()


def test_ctc_loss_lengths_as_python_ints_are_refused_as_in_pytorch():
    with pytest.raises(TypeError, match=re.escape("ctc_loss() received an invalid combination of arguments - got "
                                                  "(Tensor, Tensor, int, int, int, int, bool), but expected one of:")):
        F.ctc_loss(_lp()[:, 0], _ints([1, 2]), 6, 2)


def test_pdist_is_the_pairwise_distances_in_row_major_order():
    x = _randn(5, 3, grad=False)
    a = x.numpy()
    for p in (2.0, 1.0, 0.0, 3.0, math.inf):
        expected = [np.linalg.norm(a[i] - a[j], ord=p) for i in range(5) for j in range(i + 1, 5)]
        np.testing.assert_allclose(F.pdist(x, p).numpy(), expected, rtol=1e-12)
    assert F.pdist(x[:1]).shape == (0,)


def test_no_warnings_from_the_common_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.ctc_loss(_lp(True), _T2, _ints([6, 5]), _ints([2, 2])).backward()
        F.ctc_loss(_lp(True), _T2, _ints([1, 5]), _ints([2, 2]), zero_infinity=True).backward()
        F.poisson_nll_loss(_randn(3, low=0.0, high=2.0), _randn(3, low=0.0, high=2.0), False, True).backward()


@pytest.mark.parametrize("shape, classes_dim", [((6, 4), 1), ((4,), 0), ((2, 3, 2, 2), 1)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [agrad.float32, agrad.float64])
def test_nll_loss_without_weights_or_ignored_targets_is_the_weighted_loss_with_unit_weights(
        shape, classes_dim, reduction, dtype):
    # nll_loss skips its masks when no target is ignored and no weight is given (every weight 1):
    # values and gradients are those of the general path, given weights of one, bit for bit
    rng = np.random.default_rng(len(shape))
    classes = shape[classes_dim]
    target_shape = shape[:classes_dim] + shape[classes_dim + 1:]
    target = _ints(rng.integers(0, classes, size=target_shape).tolist())
    results = []
    for weight in (None, agrad.ones(classes, dtype=dtype)):
        x = agrad.tensor(rng.normal(size=shape) if weight is None else x0, dtype=dtype, requires_grad=True)
        x0 = x.detach().numpy()
        loss = F.nll_loss(x, target, weight=weight, reduction=reduction)
        grad, = agrad.autograd.grad(loss.sum() * 3.0, x)
        results.append((loss.detach().numpy(), grad.numpy()))
    (loss_fast, grad_fast), (loss_weighted, grad_weighted) = results
    assert loss_fast.dtype == loss_weighted.dtype and loss_fast.shape == loss_weighted.shape
    np.testing.assert_array_equal(loss_fast, loss_weighted)
    np.testing.assert_array_equal(grad_fast, grad_weighted)


def test_nll_loss_takes_the_general_path_for_an_ignored_target_or_one_out_of_bounds():
    x = agrad.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]], requires_grad=True)
    loss = F.nll_loss(x, _ints([0, 1, 2]), ignore_index=1)     # 1 lies between the targets' min and max
    np.testing.assert_allclose(loss.item(), -(0.1 + 0.25) / 2, rtol=1e-6)
    with _raises(IndexError, "Target 3 is out of bounds."):
        F.nll_loss(x, _ints([0, 3, 2]))
    with _raises(IndexError, "Target -1 is out of bounds."):
        F.nll_loss(x, _ints([0, -1, 2]))
