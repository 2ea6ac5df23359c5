"""agrad.nn's layers beyond the common ones, past the forwards compared with torch in
test_nn_reference.py (nn_layers_scenarios.py): float64 gradchecks of the functional forms agrad
composes from its ops (adaptive_max_pool1d/3d, lp_pool, max_unpool1d/3d, local_response_norm,
bilinear, channel_shuffle, the dropouts with a seed), the dropouts' statistics, in-place forms
and warnings, the initial distributions of the new parameters, ParameterList's and
ParameterDict's container API, and PyTorch 2.13's messages for wrong arguments (strings taken
from torch 2.13; torch.Size printed as agrad.Size)."""
from __future__ import annotations

import math
import re
from collections import OrderedDict

import numpy as np
import pytest

import agrad
import agrad.nn as nn
import agrad.nn.functional as F
from agrad.autograd import gradcheck, gradgradcheck


def _randn(*shape, seed=0, grad=True):
    rng = np.random.default_rng([seed, *shape])
    return agrad.tensor(rng.normal(size=shape).tolist(), dtype=agrad.float64, requires_grad=grad)


def _raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


# ---- gradchecks of the composed functional forms -------------------------------------------------------

@pytest.mark.parametrize("fn, shapes", [
    (lambda x: F.adaptive_max_pool1d(x, 3), [(2, 3, 7)]),
    (lambda x: F.adaptive_max_pool1d(x, 5), [(3, 4)]),
    (lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)), [(1, 2, 5, 4, 3)]),
    (lambda x: F.adaptive_max_pool3d(x, (3, None, 4)), [(2, 3, 2, 3)]),
    (lambda x: F.lp_pool1d(x, 2, 3, stride=2), [(2, 3, 8)]),
    (lambda x: F.lp_pool2d(x, 2, (2, 3), ceil_mode=True), [(1, 2, 5, 7)]),
    (lambda x: F.lp_pool2d(x, float("inf"), 2), [(1, 2, 4, 4)]),
    (lambda x: F.lp_pool3d(x, 2.0, 2, stride=(1, 2, 2)), [(1, 1, 3, 4, 4)]),
    (lambda x: F.local_response_norm(x, 3), [(2, 5, 4)]),
    (lambda x: F.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0), [(2, 4, 3, 2)]),
    (lambda x: F.local_response_norm(x, 4, alpha=0.2), [(1, 5, 2, 2, 2)]),
    (lambda a, b, w, c: F.bilinear(a, b, w, c), [(3, 2), (3, 4), (5, 2, 4), (5,)]),
    (lambda a, b, w: F.bilinear(a, b, w), [(2, 3, 2), (2, 3, 3), (2, 2, 3)]),
    (lambda x: F.channel_shuffle(x, 3), [(2, 6, 2, 2)]),
    (lambda x: F.native_channel_shuffle(x, 2), [(1, 4, 3)]),
    (lambda x: F.dropout1d(x, 0.4, seed=1), [(3, 4, 2)]),
    (lambda x: F.dropout2d(x, 0.4, seed=2), [(2, 3, 2, 2)]),
    (lambda x: F.dropout3d(x, 0.4, seed=3), [(3, 2, 2, 2)]),
    (lambda x: F.alpha_dropout(x, 0.3, True, seed=4), [(4, 5)]),
    (lambda x: F.feature_alpha_dropout(x, 0.3, True, seed=5), [(3, 4, 2)]),
], ids=["amp1d", "amp1d_unbatched_up", "amp3d", "amp3d_unbatched_none", "lp1d", "lp2d_ceil", "lp2d_inf", "lp3d",
        "lrn3d", "lrn4d", "lrn5d", "bilinear", "bilinear_batched_nobias", "channel_shuffle", "native_channel_shuffle",
        "dropout1d", "dropout2d", "dropout3d_unbatched", "alpha_dropout", "feature_alpha_dropout"])
def test_composed_functional_gradcheck(fn, shapes):
    inputs = [_randn(*shape, seed=i) for i, shape in enumerate(shapes)]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("fn, shapes", [
    (lambda a, b, w: F.bilinear(a, b, w), [(3, 2), (3, 4), (2, 2, 4)]),
    (lambda x: F.local_response_norm(x, 3), [(1, 4, 3)]),
    (lambda x: F.lp_pool1d(x, 2, 2), [(1, 2, 6)]),
    (lambda x: F.adaptive_max_pool3d(x, 2), [(1, 1, 3, 3, 3)]),
], ids=["bilinear", "lrn", "lp_pool", "amp3d"])
def test_composed_functional_gradgradcheck(fn, shapes):
    assert gradgradcheck(fn, [_randn(*shape, seed=i) for i, shape in enumerate(shapes)])


def test_unpooling_gradcheck_and_inverse_of_pooling():
    x = _randn(2, 2, 4, 4, 6, grad=False)
    values, indices = F.max_pool3d(x, 2, return_indices=True)
    values = values.detach().requires_grad_()
    assert gradcheck(lambda v: F.max_unpool3d(v, indices, 2), [values])
    assert gradcheck(lambda v: F.max_unpool3d(v, indices, 2, output_size=[5, 5, 7]), [values])
    out = F.max_unpool3d(values, indices, 2)
    # each max back at its place, zeros elsewhere: pooling again gives the same values
    assert out.shape == (2, 2, 4, 4, 6) and (out != 0).sum().item() == values.numel()
    np.testing.assert_array_equal(F.max_pool3d(out, 2).detach().numpy(), values.detach().numpy())
    y = _randn(2, 3, 9, grad=False)
    v1, i1 = F.max_pool1d(y, 3, 3, return_indices=True)       # NOTE: windows apart, so no index repeats
    v1 = v1.detach().requires_grad_()
    assert gradcheck(lambda v: F.max_unpool1d(v, i1, 3, 3, output_size=[10]), [v1])
    assert F.max_unpool1d(v1, i1, 3).shape == (2, 3, 9)


def test_adaptive_max_pool_indices_point_at_the_maxima():
    x = _randn(2, 3, 5, 7, 4, grad=False)
    values, indices = F.adaptive_max_pool3d(x, (2, 3, 3), return_indices=True)
    assert indices.dtype == agrad.int64 and values.shape == indices.shape == (2, 3, 2, 3, 3)
    flat = x.flatten(-3)
    np.testing.assert_array_equal(flat.gather(-1, indices.flatten(-3)).numpy(), values.flatten(-3).numpy())
    # window (i, j, k) of a dim of n into m: [floor(i n / m), ceil((i + 1) n / m)), checked on one window
    np.testing.assert_allclose(values[1, 2, 1, 2, 0].item(), x[1, 2, 2:5, 4:7, 0:2].max().item())
    v1, i1 = F.adaptive_max_pool1d(x[0, 0, 0], 3, return_indices=True)
    assert v1.shape == i1.shape == (7, 3)
    assert F.adaptive_max_pool2d_with_indices(x[0, 0], (2, None))[1].shape == (5, 2, 4)


# ---- dropouts ------------------------------------------------------------------------------------------

def test_feature_dropout_zeroes_whole_channels_with_probability_p():
    agrad.manual_seed(0)
    x = agrad.ones(60, 50, 3, 2)
    out = nn.Dropout2d(0.3)(x).numpy()
    per_channel = out.reshape(60, 50, -1)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()        # one mask value per (n, c)
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.7)}
    dropped = (per_channel[..., 0] == 0).mean()
    assert abs(dropped - 0.3) < 4 * math.sqrt(0.3 * 0.7 / 3000)
    for module, shape in ((nn.Dropout1d(0.5), (40, 30, 4)), (nn.Dropout1d(0.5), (30, 4)),
                          (nn.Dropout3d(0.5), (20, 30, 2, 2, 2)), (nn.Dropout3d(0.5), (30, 2, 2, 2))):
        out = module(agrad.ones(shape)).numpy()
        channels = out.reshape(-1, shape[-1] if len(shape) <= 3 else 8)
        assert (channels.min(-1) == channels.max(-1)).all() and set(np.unique(out)) == {0.0, 2.0}


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    agrad.manual_seed(1)
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x = agrad.randn(400, 500, dtype=agrad.float64)
    out = F.alpha_dropout(x, p, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01
    dropped = np.isclose(out, -alpha * a * (1 - p))
    assert abs(dropped.mean() - p) < 0.005
    kept = ~dropped
    np.testing.assert_allclose(out[kept], x.numpy()[kept] * a + alpha * a * p)
    feature = F.feature_alpha_dropout(agrad.zeros(300, 200, 3), 0.5, training=True).numpy()
    assert (feature.min(-1) == feature.max(-1)).all()
    assert abs(np.isclose(feature[..., 0], -alpha * (1 / math.sqrt((alpha ** 2 * 0.5 + 1) * 0.5)) * 0.5).mean()
               - 0.5) < 0.02


def test_dropouts_identity_zero_and_seed():
    x = agrad.randn(3, 4, 2)
    assert F.alpha_dropout(x, 0.5) is x                       # training defaults to False, as PyTorch's
    assert F.feature_alpha_dropout(x, 0.5) is x
    assert F.dropout2d(x.unsqueeze(0), 0.5, False).shape == (1, 3, 4, 2)
    assert F.dropout1d(x, 0.0) is x and nn.Dropout1d(0.7).eval()(x) is x
    assert F.dropout1d(x[0], 0.5, False) is not x[0]          # unbatched: unsqueezed and squeezed, as PyTorch's
    assert F.feature_alpha_dropout(agrad.ones(3), 0.0, True).tolist() == [1.0, 1.0, 1.0]
    for fn, y in ((F.dropout1d, x), (F.dropout3d, x.unsqueeze(0)), (F.alpha_dropout, x),
                  (F.feature_alpha_dropout, x)):
        assert float(fn(y, 1.0, True).abs().sum()) == 0.0
    assert F.dropout3d(x.unsqueeze(0), 0.5, seed=7).tolist() == F.dropout3d(x.unsqueeze(0), 0.5, seed=7).tolist()


def test_dropouts_in_place():
    x = agrad.ones(4, 3, 5)
    assert F.dropout1d(x, 0.5, True, True, seed=0) is x and set(np.unique(x.numpy())) <= {0.0, 2.0}
    y = agrad.ones(6, 5)
    assert F.dropout1d(y, 0.5, True, True) is y and y.shape == (6, 5)
    z = agrad.ones(2, 3, 2, 2)
    assert F.dropout3d(z, 0.5, True, True) is z and z.shape == (2, 3, 2, 2)
    w = agrad.zeros(5, 6)
    assert F.alpha_dropout(w, 0.5, True, True) is w and (w.numpy() != 0).all()
    leaf = agrad.ones(2, 3, 4, 4, requires_grad=True)
    with _raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."):
        F.dropout2d(leaf, 0.5, True, True)
    h = agrad.ones(2, 3, 4, requires_grad=True) * 1
    nn.Dropout1d(0.5, inplace=True)(h).sum().backward()


_DROPOUT2D_3D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                 "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
                 "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
                 "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
                 "instead.")


def _deprecated_dims(name, dim, spatial, dims):
    return (f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in an error in a "
            f"future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            f"{name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {dims}D inputs).")


def test_dropout_warnings_and_errors():
    with pytest.warns(UserWarning, match=re.escape(_DROPOUT2D_3D)) as record:
        F.dropout2d(agrad.ones(2, 3, 4), 0.5, False)
    assert record[0].filename == __file__
    with pytest.warns(UserWarning, match=re.escape(_deprecated_dims("dropout2d", 5, 2, "3D or 4"))):
        nn.Dropout2d()(agrad.ones(2, 3, 4, 1, 1))
    with pytest.warns(UserWarning, match=re.escape(_deprecated_dims("dropout3d", 3, 3, "4D or 5"))):
        F.dropout3d(agrad.ones(2, 3, 4), 0.5, False)
    with _raises(RuntimeError, "dropout1d: Expected 2D or 3D input, but received a 4D input. Note that dropout1d "
                               "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                               "dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."):
        F.dropout1d(agrad.ones(1, 2, 3, 4))
    with _raises(RuntimeError, "Feature dropout requires at least 2 dimensions in the input"):
        F.feature_alpha_dropout(agrad.ones(3), 0.5, True)
    for fn in (F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        with _raises(ValueError, "dropout probability has to be between 0 and 1, but got 1.5"):
            fn(agrad.ones(2, 3, 4, 5), 1.5)
    for cls in (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout):
        with _raises(ValueError, "dropout probability has to be between 0 and 1, but got -0.1"):
            cls(-0.1)


def test_deprecated_upsample_functions_warn():
    x = agrad.randn(1, 1, 2, 2)
    for name, call, mode in (("upsample", lambda: F.upsample(x, scale_factor=2), "nearest"),
                             ("upsample_nearest", lambda: F.upsample_nearest(x, scale_factor=2), "nearest"),
                             ("upsample_bilinear", lambda: F.upsample_bilinear(x, size=4), "bilinear")):
        with pytest.warns(UserWarning, match=re.escape(f"`nn.functional.{name}` is deprecated. Use "
                                                       f"`nn.functional.interpolate` instead.")) as record:
            out = call()
        assert record[0].filename == __file__
        want = F.interpolate(x, size=4, mode=mode, align_corners=True if mode == "bilinear" else None)
        np.testing.assert_allclose(out.numpy(), want.numpy())


# ---- initial distributions -----------------------------------------------------------------------------

@pytest.mark.parametrize("build, fan_in", [
    (lambda: nn.ConvTranspose2d(4, 600, 3, groups=2), 300 * 9),     # torch's fan_in: weight.size(1) · kernel
    (lambda: nn.ConvTranspose1d(300, 40, 5), 40 * 5),
    (lambda: nn.ConvTranspose3d(20, 30, (2, 3, 1)), 30 * 6),
    (lambda: nn.Conv3d(6, 402, (2, 2, 3), groups=3), 2 * 12),
    (lambda: nn.Bilinear(50, 7, 300), 50),
], ids=["conv_transpose2d", "conv_transpose1d", "conv_transpose3d", "conv3d", "bilinear"])
def test_initial_parameters_are_uniform_within_torchs_bound(build, fan_in):
    agrad.manual_seed(3)
    module = build()
    bound = 1 / math.sqrt(fan_in)           # kaiming_uniform_(a=√5) and the bias both give 1/√fan_in
    for param in (module.weight, module.bias):
        values = np.abs(param.detach().numpy())
        assert values.max() <= bound * (1 + 1e-6) and values.max() > 0.9 * bound
        assert abs(values.mean() - bound / 2) < 0.1 * bound


def test_parameterless_and_deterministic_initial_state():
    assert [p.tolist() for p in nn.GroupNorm(2, 4).parameters()] == [[1.0] * 4, [0.0] * 4]
    assert nn.RMSNorm((2, 3)).weight.tolist() == [[1.0] * 3] * 2
    assert list(nn.RMSNorm(3, elementwise_affine=False).parameters()) == []
    assert list(nn.LocalResponseNorm(3).state_dict()) == []
    bn = nn.BatchNorm3d(4)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


# ---- ParameterList and ParameterDict -------------------------------------------------------------------

def test_parameter_list():
    pl = nn.ParameterList([agrad.ones(2), nn.Parameter(agrad.zeros(3, 1))])
    assert isinstance(pl[0], nn.Parameter) and len(pl) == 2
    assert pl.append("x") is pl and pl[-1] == "x" and len(pl) == 3
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [agrad.float32 of size 2]\n"
                        "    (1): Parameter containing: [agrad.float32 of size 3x1]\n    (2): Object of type: str\n)")
    assert repr(nn.ParameterList()) == "ParameterList()"
    pl.foo = agrad.ones(2)                      # an attribute: neither in the list nor a parameter
    pl.bar = nn.Parameter(agrad.ones(2))        # a parameter, not in the list
    assert len(pl) == 3 and [n for n, _ in pl.named_parameters()] == ["0", "1", "bar"]
    assert list(pl.state_dict()) == ["0", "1", "bar"]
    assert not [d for d in dir(pl) if d.isdigit()]
    part = pl[0:2]
    assert type(part) is nn.ParameterList and part[0] is pl[0] and part[1] is pl[1]
    pl[0] = agrad.full((2,), 3.0)
    assert isinstance(pl[0], nn.Parameter) and pl[0].tolist() == [3.0, 3.0] and list(pl)[0] is pl[0]
    pl += [agrad.ones(1)]
    assert len(pl) == 4 and pl.extend([]) is pl and not hasattr(pl, "insert")     # as torch 2.13's
    assert pl.double()[0].dtype == agrad.float64
    with _raises(IndexError, "index 4 is out of range"):
        pl[4]
    with _raises(IndexError, "index -5 is out of range"):
        pl[-5] = agrad.ones(1)
    with _raises(TypeError, "ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(agrad.ones(3))
    with _raises(RuntimeError, "ParameterList should not be called."):
        pl(1)


def test_parameter_dict():
    t = agrad.ones(2)
    pd = nn.ParameterDict({"b": t, "a": agrad.zeros(1, 2, dtype=agrad.float64)})
    assert list(pd) == ["a", "b"] and isinstance(pd["b"], nn.Parameter)      # a plain dict: sorted
    assert repr(pd) == ("ParameterDict(\n    (a): Parameter containing: [agrad.DoubleTensor of size 1x2]\n"
                        "    (b): Parameter containing: [agrad.FloatTensor of size 2]\n)")
    assert list(nn.ParameterDict(OrderedDict([("b", t), ("a", t)]))) == ["b", "a"]
    assert list(nn.ParameterDict([("b", t), ("a", t)])) == ["b", "a"]
    assert "a" in pd and "c" not in pd and len(pd) == 2 and list(reversed(pd)) == ["b", "a"]
    assert pd.get("c", 5) == 5 and pd.get("a") is pd["a"]
    copy = pd.copy()
    assert list(copy) == ["a", "b"] and copy["a"] is pd["a"]
    assert list(pd.fromkeys(["x", "y"], agrad.ones(1))) == ["x", "y"]
    assert pd.setdefault("c", agrad.ones(3)).shape == (3,) and list(pd.keys())[-1] == "c"
    merged = nn.ParameterDict({"z": t}) | pd
    assert list(merged) == ["z", "a", "b", "c"]
    pd |= nn.ParameterDict({"d": t})
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c", "d"] and list(pd.state_dict()) == list(pd)
    assert pd.popitem()[0] == "d" and list(pd) == ["a", "b", "c"]
    popped = pd.pop("a")
    assert isinstance(popped, nn.Parameter) and [n for n, _ in pd.named_parameters()] == ["b", "c"]
    pd["label"] = "text"
    assert pd["label"] == "text" and [k for k, _ in pd.items()] == ["b", "c", "label"] and len(list(pd.values())) == 3
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == [] and repr(pd) == "ParameterDict()"
    with _raises(TypeError, "Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            "'int'). Open an issue on github if you need non-string keys."):
        pd[1]
    with _raises(TypeError, "ParametersDict.update should be called with an iterable of key/value pairs, but got int"):
        pd.update(3)
    with _raises(TypeError, "ParameterDict update sequence element #0 should be Iterable; isint"):
        pd.update([3])
    with _raises(ValueError, "ParameterDict update sequence element #0 has length 3; 2 is required"):
        pd.update([(1, 2, 3)])
    with _raises(RuntimeError, "ParameterDict should not be called."):
        pd(1)


# ---- reprs and messages (torch 2.13's strings) ---------------------------------------------------------

def test_reprs_equal_torchs():
    assert [repr(m) for m in (
        nn.Upsample(size=3), nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
        nn.ConvTranspose1d(2, 3, 3, padding=1, output_padding=0), nn.MaxUnpool1d(2), nn.AvgPool1d(3),
        nn.LPPool2d(2, 3), nn.LocalResponseNorm(2), nn.RMSNorm(3), nn.GroupNorm(2, 4), nn.Bilinear(2, 3, 4),
        nn.Unflatten(1, (2, 3)), nn.ChannelShuffle(2), nn.PairwiseDistance(), nn.CosineSimilarity())] == [
        "Upsample(size=3, mode='nearest')", "Upsample(scale_factor=2.0, mode='bilinear')",
        "ConvTranspose1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,))",
        "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))",
        "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))",
        "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)",
        "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)", "RMSNorm((3,), eps=None, elementwise_affine=True)",
        "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)",
        "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)",
        "Unflatten(dim=1, unflattened_size=(2, 3))", "ChannelShuffle(groups=2)", "PairwiseDistance()",
        "CosineSimilarity()"]
    assert nn.Upsample(size=(2, 3)).name == "Upsample"
    assert nn.UpsamplingBilinear2d(size=2).name == "UpsamplingBilinear2d"


def _r(*shape):
    return agrad.randn(*shape)


def _long(*shape, fill=0):
    return agrad.full(shape, fill, dtype=agrad.int64)


# (call, exception type, torch 2.13's message)
ERRORS = [
    (lambda: F.adaptive_max_pool1d(_r(1, 2, 3, 4), 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for "
     "adaptive_max_pool1d)"),
    (lambda: F.adaptive_max_pool1d(_r(1, 2, 4), (2, 2)), RuntimeError,
     "adaptive_max_pool1d() argument 'output_size' should contain one int (got 2)"),
    (lambda: F.adaptive_max_pool1d(_r(2, 3, 0), 2), RuntimeError,
     "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 3, 0] with dimension 2 being empty"),
    (lambda: F.adaptive_max_pool1d(_r(1, 2, 3), -1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [1, 2, 1, -1]"),
    (lambda: F.adaptive_max_pool1d(_long(1, 2, 4), 2), NotImplementedError,
     "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    (lambda: F.adaptive_max_pool3d(_r(2, 3, 4), 2), RuntimeError,
     "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [2, 3, 4]"),
    (lambda: F.adaptive_max_pool3d(_r(1, 2, 3, 4, 5), (2, 2)), RuntimeError,
     "adaptive_max_pool3d(): internal error: output_size.size() must be 3"),
    (lambda: F.adaptive_max_pool3d(_r(1, 2, 0, 4, 5), (2, 2)), RuntimeError,
     "adaptive_max_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[1, 2, 0, 4, 5] with dimension 2 being empty"),
    (lambda: F.adaptive_max_pool3d(_r(4, 5), (None, 2, None)), ValueError, "Input dimension should be at least 4"),
    (lambda: F.adaptive_max_pool3d(_long(1, 2, 3, 4, 5), 2), NotImplementedError,
     "\"adaptive_max_pool3d_cpu\" not implemented for 'Long'"),
    (lambda: F.adaptive_max_pool3d(_r(1, 2, 3, 4, 5), -1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [1, 2, -1, -1, -1]"),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2).int(), 2), RuntimeError,
     "elements in indices should be type int64"),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 1), 2), RuntimeError,
     "Expected shape of indices to be same as that of the input tensor ([1, 1, 2, 2, 2]) but got indices tensor "
     "with shape: [1, 1, 2, 2, 1]"),
    (lambda: F.max_unpool3d(_r(1, 2, 2), _long(1, 2, 2), 2), RuntimeError,
     "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 dimensions."),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2, fill=64), 2), RuntimeError,
     "Found an invalid max index: 64 (output volumes are of size 4x4x4)"),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2, fill=-1), 2), RuntimeError,
     "Found an invalid max index: -1 (output volumes are of size 4x4x4)"),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2), 2, output_size=(9, 4, 4)), ValueError,
     'invalid output_size "(9, 4, 4)" (dim 0 must be between 2 and 6)'),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2), 2, output_size=(4, 4)), ValueError,
     "output_size should be a sequence containing 3 or 5 elements, but it has a length of '2'"),
    (lambda: F.max_unpool3d(_long(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2), 2), NotImplementedError,
     "\"max_unpool3d\" not implemented for 'Long'"),
    (lambda: F.max_unpool3d(_r(1, 0, 2, 2, 2), _long(1, 0, 2, 2, 2), 2), RuntimeError,
     "max_unpooling3d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but got "
     "[1, 0, 2, 2, 2] with dimension 1 being empty."),
    (lambda: F.max_unpool3d(_r(1, 1, 2, 2, 2), _long(1, 1, 2, 2, 2), 2, 0), RuntimeError,
     "strides should be greater than zero, but got stride: [0, 0, 0]"),
    (lambda: F.max_unpool1d(_r(1, 2, 3), _long(1, 2, 3, fill=6), 2), RuntimeError,
     "Found an invalid max index: 6 (output volumes are of size 6x1)"),
    (lambda: F.max_unpool1d(_r(1, 2, 3), _long(1, 2, 3), 2, output_size=[9]), ValueError,
     'invalid output_size "[9]" (dim 0 must be between 4 and 8)'),
    (lambda: F.channel_shuffle(_r(2, 4), 2), RuntimeError,
     "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 4]"),
    (lambda: F.channel_shuffle(_r(1, 4, 2), 0), RuntimeError,
     "Number of groups to divide channels in must be positive. Value of groups:0"),
    (lambda: F.native_channel_shuffle(_r(1, 5, 2), 2), RuntimeError,
     "Number of channels must be divisible by groups. Got 5 channels and 2 groups."),
    (lambda: F.bilinear(_r(2, 2), _r(2, 4), _r(5, 3, 4), _r(5)), RuntimeError,
     "bilinear(): input1 size does not match weight size: got 2 but expected 3"),
    (lambda: F.bilinear(_r(2, 3), _r(2, 5), _r(5, 3, 4), _r(5)), RuntimeError,
     "bilinear(): input2 size does not match weight size: got 5 but expected 4"),
    (lambda: F.bilinear(_r(2, 3), _r(3, 4), _r(5, 3, 4), _r(5)), RuntimeError,
     "bilinear(): input batch dimensions do not match at dim 0: got 2 and 3"),
    (lambda: F.bilinear(_r(2, 3), _r(1, 2, 4), _r(5, 3, 4), _r(5)), RuntimeError,
     "bilinear(): input dimensions do not match: got 2 and 3"),
    (lambda: F.bilinear(_r(2, 3), _r(2, 4), _r(5, 3, 4), _r(6)), RuntimeError,
     "bilinear(): bias size does not match weight size: got 6 but expected 5"),
    (lambda: F.bilinear(_r(2, 3), _r(2, 4), _r(5, 3), _r(5)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: F.bilinear(_r(2, 3), _r(2, 4).double(), _r(5, 3, 4), _r(5)), RuntimeError,
     "All tensors must have the same dtype, got input1: float, input2: double, weight: float, bias: float"),
    (lambda: F.local_response_norm(_r(2, 3), 2), ValueError,
     "Expected 3D or higher dimensionality                          input (got 2 dimensions)"),
    (lambda: nn.Unflatten(1, [2, 3.0]), TypeError,
     "unflattened_size must be tuple of ints, but found element of type float at pos 1"),
    (lambda: nn.Unflatten(1, 6), TypeError, "unflattened_size must be a tuple of ints, but found type int"),
    # NOTE: torch 2.13 dropped Unflatten's named form (a str dim with (name, size) pairs)
    (lambda: nn.Unflatten("a", (("x", 2),)), TypeError,
     "unflattened_size must be tuple of ints, but found element of type tuple at pos 0"),
    (lambda: nn.GroupNorm(3, 4), ValueError, "num_channels (4) must be divisible by num_groups (3)"),
    (lambda: nn.Bilinear(0, 2, 3), ValueError, "in1_features must be > 0, but got (in1_features=0)"),
    (lambda: nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
    (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2)(_r(1, 2, 4, 4), output_size=(20, 20)), ValueError,
     "requested an output size of (20, 20), but valid sizes range from [9, 9] to [10, 10] (for an input of "
     "agrad.Size([4, 4]))"),
    (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2)(_r(1, 2, 4, 4), output_size=(20,)), ValueError,
     "ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements (got 1)"),
    (lambda: nn.Conv3d(2, 3, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.BatchNorm3d(2)(_r(2, 2, 3, 3)), ValueError, "expected 5D input (got 4D input)"),
    (lambda: nn.CircularPad2d(1)(_r(2, 3)), ValueError, "expected 3D or 4D input (got 2D input)"),
    (lambda: nn.CircularPad3d(1)(_r(2, 3, 3)), ValueError, "expected 4D or 5D input (got 3D input)"),
]


@pytest.mark.parametrize("call, exc, message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_messages_equal_torchs(call, exc, message):
    with _raises(exc, message):
        call()


def test_functional_names_are_exported():
    new = ["adaptive_max_pool1d", "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "max_unpool1d", "max_unpool3d", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout", "local_response_norm", "bilinear", "channel_shuffle", "native_channel_shuffle",
           "upsample", "upsample_nearest", "upsample_bilinear"]
    assert set(new) <= set(F.__all__) and len(F.__all__) == len(set(F.__all__))
    assert F.native_channel_shuffle is F.channel_shuffle
    assert [name for name in F._TORCH_NAMES if name in new and name not in F.__all__] == []


def test_composed_layers_keep_the_inputs_device(standin_cuda):
    """The tensors the compositions make (window tables, zero volumes, masks) go where the input lives."""
    x = agrad.randn(1, 2, 4, 4, 6, requires_grad=True)
    layers = [nn.AdaptiveMaxPool3d((2, 3, 2)), nn.LPPool3d(2, 2), nn.LocalResponseNorm(3), nn.Dropout3d(0.5),
              nn.FeatureAlphaDropout(0.3), nn.ChannelShuffle(2), nn.ConvTranspose3d(2, 2, 2).to("cuda")]
    xc = x.to("cuda")
    for layer in layers:
        out = layer.train()(xc)
        assert out.device.type == "cuda", type(layer).__name__
        out.sum().backward()
    values, indices = F.max_pool3d(xc, 2, return_indices=True)
    assert F.max_unpool3d(values, indices, 2).device.type == "cuda"
    pair = (agrad.randn(3, 2).to("cuda"), agrad.randn(3, 4).to("cuda"))
    assert nn.Bilinear(2, 4, 5).to("cuda")(*pair).device.type == "cuda"
    assert x.grad is not None and x.grad.device.type == "cpu"
