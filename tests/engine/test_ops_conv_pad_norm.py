"""Convolution (1-3 D, transposed, padding strings), pad, interpolate, the extra pools and the
normalisations: values against NumPy written independently (loops, np.pad, textbook
formulas), the running-statistics side effects, PyTorch's error messages, and what the
generated registry tests cannot see."""
import itertools

import numpy as np
import pytest

import agrad

RNG = np.random.default_rng(4321)


def t(array, requires_grad=False, dtype="float64"):
    return agrad.tensor(np.asarray(array), dtype=dtype, requires_grad=requires_grad)


def meta(shape, dtype="float64"):
    return agrad.zeros(*shape, dtype=dtype, device="meta")


# ---- convolution ------------------------------------------------------------------------------------

def _conv_ref(x, w, stride, lo, hi, dilation, groups):
    """A loop over every output position, any number of spatial dims; (lo, hi) padding per dim."""
    dims = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)))
    o, cg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(dims)]
    out = np.zeros((x.shape[0], o) + tuple(out_sp))
    og = o // groups
    for pos in itertools.product(*[range(s) for s in out_sp]):
        window = tuple(slice(p * s, p * s + d * (kk - 1) + 1, d) for p, s, d, kk in zip(pos, stride, dilation, k))
        for g in range(groups):
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + window]           # (N, cg, *k)
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                patch, w[g * og:(g + 1) * og], axes=(list(range(1, dims + 2)), list(range(1, dims + 2))))
    return out


@pytest.mark.parametrize("op,xs,ws,stride,padding,dilation,groups", [
    ("conv1d", (2, 2, 9), (3, 2, 3), (2,), (1,), (1,), 1),
    ("conv1d", (1, 4, 8), (4, 2, 2), (1,), (0,), (3,), 2),
    ("conv3d", (1, 2, 4, 5, 4), (2, 2, 2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1),
    ("conv3d", (2, 4, 3, 3, 3), (2, 2, 1, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2),
])
def test_conv_nd_matches_a_direct_loop(op, xs, ws, stride, padding, dilation, groups):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    out = getattr(agrad, op)(t(x), t(w), None, list(stride), list(padding), list(dilation), groups)
    ref = _conv_ref(x, w, stride, padding, padding, dilation, groups)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-12)


def test_padding_same_pads_the_odd_extra_after_and_valid_pads_nothing():
    x, w = RNG.standard_normal((1, 2, 6, 5)), RNG.standard_normal((3, 2, 2, 3))
    out = agrad.conv2d(t(x), t(w), padding="same", dilation=[3, 1])
    # total padding dilation * (k - 1) = (3, 2): (1 before, 2 after) in H, (1, 1) in W
    np.testing.assert_allclose(out.detach().numpy(), _conv_ref(x, w, (1, 1), (1, 1), (2, 1), (3, 1), 1), rtol=1e-10)
    assert out.shape == (1, 3, 6, 5)
    valid = agrad.conv2d(t(x), t(w), None, 1, "valid")
    np.testing.assert_allclose(valid.detach().numpy(), _conv_ref(x, w, (1, 1), (0, 0), (0, 0), (1, 1), 1), rtol=1e-10)
    same1d = agrad.conv1d(t(x[:, :, 0], True), t(w[:, :, 0]), padding="same")
    assert same1d.shape == (1, 3, 5) and type(same1d.grad_fn).__name__ == "ConvolutionBackward0"


@pytest.mark.parametrize("kwargs,message", [
    ({"padding": "foo"}, "Invalid padding string: 'foo'"),
    ({"padding": "same", "stride": 2}, "padding='same' is not supported for strided convolutions"),
])
def test_padding_string_errors_are_pytorchs(kwargs, message):
    for device in ("meta", "cpu"):
        with pytest.raises(RuntimeError, match=message):
            agrad.conv2d(agrad.zeros(1, 2, 5, 5, device=device), agrad.zeros(3, 2, 3, 3, device=device), **kwargs)


@pytest.mark.parametrize("op,xs,ws,stride,padding,output_padding,groups,dilation", [
    ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 2), (2, 1), (1, 0), (1, 0), 1, (1, 1)),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 2), (1, 1), (0, 1), (0, 0), 2, (2, 2)),
    ("conv_transpose1d", (2, 2, 5), (2, 3, 3), (3,), (2,), (2,), 1, (1,)),
    ("conv_transpose1d", (1, 2, 4), (2, 2, 2), (1,), (0,), (1,), 1, (2,)),     # output_padding >= stride
])
def test_conv_transpose_is_the_adjoint_of_conv(op, xs, ws, stride, padding, output_padding, groups, dilation):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    out = getattr(agrad, op)(t(x), t(w), None, list(stride), list(padding), list(output_padding), groups,
                             list(dilation))
    y = RNG.standard_normal(tuple(out.shape))
    conv = getattr(agrad, op.replace("_transpose", ""))
    back = conv(t(y), t(w), None, list(stride), list(padding), list(dilation), groups).detach().numpy()
    back = back[(Ellipsis,) + tuple(slice(0, s) for s in xs[2:])]      # output_padding >= stride: one more
    # <conv_transpose(x), y> == <x, conv(y)>
    np.testing.assert_allclose(np.sum(out.detach().numpy() * y), np.sum(x * back), rtol=1e-10)
    expected = [(i - 1) * s - 2 * p + d * (k - 1) + op_ + 1 for i, s, p, d, k, op_ in
                zip(xs[2:], stride, padding, dilation, ws[2:], output_padding)]
    assert list(out.shape) == [xs[0], ws[1] * groups] + expected


def test_conv_transpose_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match=r"output padding must be smaller than either stride or dilation, but "
                                           r"got output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
                                           r"stride_width: 2 dilation_height: 1 dilation_width: 1"):
        agrad.conv_transpose2d(meta((2, 4, 5, 5)), meta((4, 3, 2, 2)), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match=r"Given transposed=1, weight of size \[3, 3, 2, 2\], expected "
                                           r"input\[2, 4, 5, 5\] to have 3 channels, but got 4 channels instead"):
        agrad.conv_transpose2d(meta((2, 4, 5, 5)), meta((3, 3, 2, 2)))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d"):
        agrad.conv_transpose2d(meta((5, 5)), meta((4, 3, 2, 2)))
    with pytest.raises(RuntimeError, match=r"Calculated output size per channel: \(0 x 0\). Output size is too"):
        agrad.conv_transpose2d(meta((2, 4, 5, 5)), meta((4, 3, 2, 2)), padding=3)


# ---- pad -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap"),
                                          ("constant", "constant")])
def test_pad_matches_numpy(mode, np_mode):
    x = RNG.standard_normal((2, 3, 4, 5))
    out = agrad.pad(t(x), [1, 3, 2, 0], mode)
    ref = np.pad(x, ((0, 0), (0, 0), (2, 0), (1, 3)), mode=np_mode)
    np.testing.assert_array_equal(out.detach().numpy(), ref)


def test_pad_gradient_adds_every_copy_back_and_names_pytorchs_nodes():
    x = t(RNG.standard_normal((1, 1, 4)), True)
    out = agrad.pad(x, [2, 3], "reflect")        # reads 2 1 | 0 1 2 3 | 2 1 0
    assert type(out.grad_fn).__name__ == "ReflectionPad1DBackward0"
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy()[0, 0], [2, 3, 3, 1])
    assert type(agrad.pad(x, [1, 1, 1, 1]).grad_fn).__name__ == "ConstantPadNdBackward0"
    assert type(agrad.pad(x[0], [1, 1], "replicate").grad_fn).__name__ == "ReplicationPad1DBackward0"


def test_pad_constant_value_crop_and_integers():
    x = np.arange(12).reshape(3, 4)
    out = agrad.pad(agrad.tensor(x), [-1, 2, 1, 0], value=7.0)
    assert out.dtype == agrad.int64
    np.testing.assert_array_equal(out.numpy(), np.pad(x[:, 1:], ((1, 0), (0, 2)), constant_values=7))


@pytest.mark.parametrize("args,kwargs,error,message", [
    (((1, 2, 3), [1]), {}, RuntimeError, "Padding length must be divisible by 2"),
    (((1, 2, 3), [3, 3], "reflect"), {}, RuntimeError, r"Argument #4: Padding size should be less than the "
                                                       r"corresponding input dimension, but got: padding \(3, 3\) at "
                                                       r"dimension 2 of input \[1, 2, 3\]"),
    (((1, 2, 3), [1, 1], "reflect"), {"value": 1.0}, RuntimeError, "Padding mode \"reflect\" doesn't take in value"),
    (((1, 2, 3), [1, 1], "foo"), {}, NotImplementedError, "Unrecognised padding mode foo"),
    (((3,), [1, 1], "replicate"), {}, NotImplementedError, "Padding size 2 is not supported for 1D input tensor"),
    (((1, 2, 3), [4, 4], "circular"), {}, RuntimeError, "Padding value causes wrapping around more than once"),
])
def test_pad_errors_are_pytorchs(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        agrad.pad(meta(args[0]), *args[1:], **kwargs)


# ---- interpolate ---------------------------------------------------------------------------------------

def test_interpolate_nearest_doubling_repeats_and_bilinear_align_corners_keeps_the_corners():
    x = RNG.standard_normal((1, 2, 3, 4))
    out = agrad.interpolate(t(x), scale_factor=2.0)
    np.testing.assert_array_equal(out.numpy(), x.repeat(2, axis=2).repeat(2, axis=3))
    lin = agrad.interpolate(t(x), [5, 7], mode="bilinear", align_corners=True).numpy()
    np.testing.assert_allclose(lin[..., [0, -1], :][..., [0, -1]], x[..., [0, -1], :][..., [0, -1]], rtol=1e-12)
    # the midpoint between rows 0 and 1 of the input (5 rows from 3: a step of one half)
    np.testing.assert_allclose(lin[..., 1, 0], (x[..., 0, 0] + x[..., 1, 0]) / 2, rtol=1e-12)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"size": [3, 3], "scale_factor": 2.0}, ValueError, "only one of size or scale_factor should be defined"),
    ({}, ValueError, "either size or scale_factor should be defined"),
    ({"scale_factor": 2.0, "align_corners": True}, ValueError, "align_corners option can only be set with the "
                                                               "interpolating modes"),
    ({"scale_factor": [2.0]}, ValueError, "Input and scale_factor must have the same number of spatial dimensions"),
    ({"scale_factor": 2.0, "mode": "linear"}, NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
    ({"scale_factor": 2.0, "mode": "cubic"}, NotImplementedError, r"\(got 4D\) .* \(got cubic\)"),
    ({"scale_factor": 2.0, "mode": "area", "align_corners": False}, ValueError, "align_corners option can only be "
                                                                              "set with the interpolating modes"),
])
def test_interpolate_errors_are_pytorchs(kwargs, error, message):
    with pytest.raises(error, match=message):
        agrad.interpolate(meta((1, 1, 4, 4)), **kwargs)


def test_bicubic_needs_4d_input_and_a_float_area_is_adaptive_pooling():
    # PyTorch's texts (torch 2.13.0): bicubic of 3-D input falls through to the generic refusal
    with pytest.raises(NotImplementedError, match=r"\(got 3D\) .* \(got bicubic\)"):
        agrad.interpolate(meta((1, 1, 4)), scale_factor=2.0, mode="bicubic")
    with pytest.raises(NotImplementedError, match="\"compute_indices_weights_cubic\" not implemented for 'Long'"):
        agrad.interpolate(agrad.ones(1, 1, 2, 2, dtype=agrad.int64), scale_factor=2.0, mode="bicubic")
    x = agrad.tensor(RNG.standard_normal((1, 2, 4, 6)), requires_grad=True)
    out = agrad.interpolate(x, scale_factor=0.5, mode="area")
    assert out.grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy().reshape(1, 2, 2, 2, 3, 2).mean((3, 5)),
                               rtol=1e-12)


# ---- pooling --------------------------------------------------------------------------------------------

def test_max_pool_takes_integers_and_returns_indices():
    x = agrad.tensor(np.arange(16).reshape(1, 4, 4))
    out, idx = agrad.max_pool2d(x, 2, return_indices=True)
    assert out.dtype == agrad.int64 and idx.dtype == agrad.int64
    np.testing.assert_array_equal(out.numpy(), [[[5, 7], [13, 15]]])
    np.testing.assert_array_equal(idx.numpy(), [[[5, 7], [13, 15]]])
    padded = agrad.max_pool2d(agrad.tensor(-np.arange(9, dtype=np.int32).reshape(1, 3, 3)), 2, 2, 1)
    np.testing.assert_array_equal(padded.numpy(), [[[0, -1], [-3, -4]]])    # padding never wins
    with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Long'"):
        agrad.max_pool1d(agrad.tensor(np.arange(8).reshape(1, 8)), 2)
    values, indices = agrad.max_pool1d(agrad.tensor(np.arange(8).reshape(1, 8)), 2, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), [[1, 3, 5, 7]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 3, 5, 7]])
    with pytest.raises(NotImplementedError, match="\"max_pool2d\" not implemented for 'Bool'"):
        agrad.max_pool2d(agrad.tensor(np.ones((1, 2, 2), dtype=bool)), 2)


def test_pool1d_are_the_2d_pools_of_a_row():
    x = t(RNG.standard_normal((2, 3, 8)), True)
    out = agrad.max_pool1d(x, 3, 2, 1)
    assert type(out.grad_fn).__name__ == "SqueezeBackward1"
    ref = agrad.max_pool2d(x.unsqueeze(2), [1, 3], [1, 2], [0, 1]).squeeze(2)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    avg = agrad.avg_pool1d(x, 2).detach().numpy()
    np.testing.assert_allclose(avg, x.detach().numpy().reshape(2, 3, 4, 2).mean(-1))


def test_adaptive_pools_match_pytorchs_windows():
    x = RNG.standard_normal((2, 3, 5, 7))
    avg = agrad.adaptive_avg_pool2d(t(x), [3, 4]).numpy()
    mx = agrad.adaptive_max_pool2d(t(x), [3, 4]).numpy()
    for i, j in itertools.product(range(3), range(4)):
        rows = slice(i * 5 // 3, -(-(i + 1) * 5 // 3))
        cols = slice(j * 7 // 4, -(-(j + 1) * 7 // 4))
        np.testing.assert_allclose(avg[..., i, j], x[..., rows, cols].mean(axis=(-2, -1)), rtol=1e-12)
        np.testing.assert_array_equal(mx[..., i, j], x[..., rows, cols].max(axis=(-2, -1)))
    assert type(agrad.adaptive_avg_pool2d(t(x, True), 1).grad_fn).__name__ == "MeanBackward1"
    assert type(agrad.adaptive_avg_pool2d(t(x, True), 2).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"


# ---- normalisation ------------------------------------------------------------------------------------

def test_batch_norm_training_updates_the_running_stats_in_place():
    x = RNG.standard_normal((4, 3, 5))
    rm, rv = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3)
    running_mean, running_var = t(rm), t(rv)
    out = agrad.batch_norm(t(x, True), running_mean, running_var, None, None, True, 0.2, 1e-5)
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(out.detach().numpy(), (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5),
                               rtol=1e-10)
    np.testing.assert_allclose(running_mean.numpy(), 0.8 * rm + 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(running_var.numpy(), 0.8 * rv + 0.2 * x.var(axis=(0, 2), ddof=1), rtol=1e-12)
    assert type(out.grad_fn).__name__ == "NativeBatchNormBackward0"
    # evaluation mode reads the running stats and leaves them alone
    before = running_mean.numpy().copy()
    ev = agrad.batch_norm(t(x), running_mean, running_var, training=False)
    np.testing.assert_allclose(ev.numpy(), (x - before[:, None]) / np.sqrt(running_var.numpy()[:, None] + 1e-5))
    np.testing.assert_array_equal(running_mean.numpy(), before)


def test_instance_norm_averages_the_running_stats_over_the_batch():
    x = RNG.standard_normal((2, 3, 6))
    running_mean, running_var = t(np.zeros(3)), t(np.ones(3))
    out = agrad.instance_norm(t(x, True), running_mean, running_var, momentum=0.5)
    mean, var = x.mean(axis=2), x.var(axis=2)
    np.testing.assert_allclose(out.detach().numpy(), (x - mean[..., None]) / np.sqrt(var[..., None] + 1e-5),
                               rtol=1e-10)
    np.testing.assert_allclose(running_mean.numpy(), 0.5 * mean.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(running_var.numpy(), 0.5 + 0.5 * x.var(axis=2, ddof=1).mean(axis=0), rtol=1e-12)
    assert type(out.grad_fn).__name__ == "ViewBackward0"


def test_group_norm_rms_norm_normalize_values():
    x = RNG.standard_normal((2, 4, 3))
    g = x.reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(2, 4, 3)
    np.testing.assert_allclose(agrad.group_norm(t(x), 2).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(agrad.rms_norm(t(x), [3]).numpy(),
                               x / np.sqrt((x * x).mean(-1, keepdims=True) + np.finfo(np.float64).eps), rtol=1e-12)
    np.testing.assert_allclose(agrad.normalize(t(x)).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True),
                               rtol=1e-12)


@pytest.mark.parametrize("call,error,message", [
    (lambda: agrad.batch_norm(meta((2, 4, 3)), meta((3,)), meta((4,)), training=True), RuntimeError,
     "running_mean should contain 4 elements not 3"),
    (lambda: agrad.batch_norm(meta((2, 4, 3)), None, None, training=False), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda: agrad.batch_norm(meta((1, 4, 1)), None, None, training=True), ValueError,
     "Expected more than 1 value per channel when training"),
    (lambda: agrad.batch_norm(meta((2, 4), "int64"), None, None, training=True), NotImplementedError,
     "\"batch_norm\" not implemented for 'Long'"),
    (lambda: agrad.group_norm(meta((2, 4, 3)), 3), RuntimeError,
     r"Expected number of channels in input to be divisible by num_groups, but got input of shape \[2, 4, 3\] and "
     r"num_groups=3"),
    (lambda: agrad.instance_norm(meta((2, 4, 1))), ValueError, "Expected more than 1 spatial element when training"),
    (lambda: agrad.rms_norm(meta((2, 4, 3)), [4]), RuntimeError,
     r"Given normalized_shape=\[4\], expected input with shape \[\*4\], but got input of size\[2, 4, 3\]"),
])
def test_normalisation_errors_are_pytorchs(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_graph_files_take_conv_padding_strings(tmp_path):
    path = tmp_path / "same.yaml"
    path.write_text("dtype: float64\ninputs:\n  x: {shape: [1, 2, 5, 4], init: normal, seed: 1}\n"
                    "  W: {shape: [3, 2, 2, 3], init: normal, seed: 2}\n"
                    "nodes:\n  y: conv2d(x, W, padding=\"same\")\n  z: conv2d(x, W, padding=\"full\")\n")
    with pytest.raises(agrad.graphs.GraphFileError, match="Invalid padding string: 'full'"):
        agrad.graphs.load(path)
    path.write_text(path.read_text().replace("  z: conv2d(x, W, padding=\"full\")\n", ""))
    assert tuple(agrad.graphs.load(path).run().values["y"].shape) == (1, 3, 5, 4)


def test_errors_are_typed_for_the_graph_checker():
    from agrad.errors import DtypeError, ShapeError
    with pytest.raises(ShapeError):
        agrad.conv1d(meta((1, 4, 5)), meta((2, 3, 3)))
    with pytest.raises(DtypeError):
        agrad.conv3d(meta((1, 2, 3, 3, 3)), meta((2, 2, 1, 1, 1), "float32"))
    with pytest.raises(ShapeError):
        agrad.pad(meta((1, 2, 3)), [3, 3], "reflect")
    with pytest.raises(ShapeError):
        agrad.group_norm(meta((2, 4, 3)), 3)
    with pytest.raises(ShapeError):
        agrad.adaptive_avg_pool2d(meta((4, 4)), 2)


def test_graph_files_take_a_number_for_interpolates_scale_factor(tmp_path):
    path = tmp_path / "up.yaml"
    path.write_text("dtype: float64\ninputs:\n  x: {shape: [1, 2, 3, 4], init: normal, seed: 1}\n"
                    "nodes:\n  y: interpolate(x, scale_factor=1.5, mode=\"bilinear\")\n")
    assert tuple(agrad.graphs.load(path).run().values["y"].shape) == (1, 2, 4, 6)
