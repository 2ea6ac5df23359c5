"""PyTorch spellings that other frameworks' op suites call on tensors: NumPy's argument
names (`axis`, `keepdims`), `Tensor.type`, method forms with positional arguments after a
size list (`t.roll(1, 0)`), the `// % & | ^ ~` operators. Expected values are NumPy's (the
same semantics: floor division, remainder with the divisor's sign)."""
import json
import pickle

import numpy as np
import pytest

import agrad


def _x(shape=(3, 4, 5), seed=0):
    return agrad.tensor(np.random.RandomState(seed).uniform(-2, 2, shape), requires_grad=True)


def _np(t):
    return t.detach().numpy()


# ---- axis / keepdims (PyTorch's numpy_compatibility_arg_names) -------------------------------

def test_axis_is_dim_for_reductions():
    x = _x()
    a = _np(x)
    np.testing.assert_allclose(_np(x.sum(axis=1)), a.sum(1))
    np.testing.assert_allclose(_np(x.sum(axis=(0, 2), keepdims=True)), a.sum((0, 2), keepdims=True))
    np.testing.assert_allclose(_np(x.mean(axis=(1, 2))), a.mean((1, 2)))
    np.testing.assert_allclose(_np(x.max(axis=1)[0]), a.max(1))
    np.testing.assert_array_equal(x.any(axis=(1, 2)).numpy(), (a != 0).any((1, 2)))
    np.testing.assert_allclose(_np(x.var(axis=(0, 2), correction=0)), a.var((0, 2)))
    np.testing.assert_allclose(_np(agrad.sum(x, axis=-1)), a.sum(-1))


def test_axis_for_a_required_dim_and_its_gradient():
    x = _x((2, 3))
    y = x.softmax(axis=1)
    np.testing.assert_allclose(_np(y), _np(agrad.softmax(x, 1)))
    (g,) = agrad.autograd.grad(x.sum(axis=0).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))


def test_axis_and_dim_together_or_neither_raise():
    x = _x()
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        x.sum(1, axis=2)
    with pytest.raises(TypeError, match="multiple values for argument 'keepdim'"):
        x.sum(1, True, keepdims=True)
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        x.softmax()


# ---- Tensor.type -----------------------------------------------------------------------------

def test_type_converts_and_names():
    x = agrad.tensor([1.7, -2.2])
    assert x.type() == "agrad.FloatTensor"
    assert x.type(agrad.int32).dtype == agrad.int32
    np.testing.assert_array_equal(x.type(agrad.int32).numpy(), [1, -2])
    assert x.type("agrad.DoubleTensor").dtype == agrad.float64
    assert x.type(agrad.float32) is x
    assert agrad.tensor([1, 2]).type() == "agrad.LongTensor"
    with pytest.raises(ValueError, match="invalid type"):
        x.type("agrad.NoSuchTensor")
    # a legacy type, or its name as code written for PyTorch spells it (test_autograd's test_type_conversions)
    for legacy in (agrad.DoubleTensor, agrad.IntTensor, agrad.ByteTensor):
        assert isinstance(x.type(legacy), legacy)
    assert x.type("torch.IntTensor").dtype == agrad.int32


def test_type_keeps_the_graph():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    (g,) = agrad.autograd.grad((x.type(agrad.float32) * 3).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])


# ---- methods with arguments after a size list ------------------------------------------------

def test_roll_and_logsumexp_positional_arguments():
    x = _x((2, 4, 6))
    a = _np(x)
    np.testing.assert_array_equal(_np(x.roll(1, 0)), np.roll(a, 1, 0))
    np.testing.assert_array_equal(_np(x.roll(-5, -1)), np.roll(a, -5, -1))
    np.testing.assert_array_equal(_np(x.roll(shifts=(2, -3), dims=(0, 2))), np.roll(a, (2, -3), (0, 2)))
    assert x.logsumexp(0, True).shape == (1, 4, 6)
    assert x.reshape(8, 6).shape == (8, 6) and x.permute(2, 0, 1).shape == (6, 2, 4)


# ---- operators -------------------------------------------------------------------------------

_A = [-4, 7, 5, 4, -7, 8, -9]
_B = [2, -3, 8, -2, 3, 5, -5]


@pytest.mark.parametrize("float_a", [True, False])
@pytest.mark.parametrize("float_b", [True, False])
def test_mod_and_floordiv_follow_floor_semantics(float_a, float_b):
    a = np.array(_A, dtype=np.float64 if float_a else np.int64)
    b = np.array(_B, dtype=np.float64 if float_b else np.int64)
    x, y = agrad.tensor(a), agrad.tensor(b)
    out_dtype = np.result_type(a, b)
    for got, want in [(x % y, np.mod(a, b)), (x // y, np.floor_divide(a, b)), (x % 3, np.mod(a, 3)),
                      (100 % x, np.mod(100, a)), (100.5 % x, np.mod(100.5, a)), (x // 2, np.floor_divide(a, 2))]:
        np.testing.assert_array_equal(got.numpy(), want)
    assert (x % y).numpy().dtype == out_dtype


def test_floor_divide_gradient_is_zero():
    x = agrad.tensor([5.5, -3.2], requires_grad=True)
    (g,) = agrad.autograd.grad((x // 2).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_bitwise_operators_on_integers_and_bools():
    data = np.array([[1, -8, 1], [32, 1, 6]], dtype=np.int32)
    t = agrad.tensor(data)
    for got, want in [(t ^ t, data ^ data), (t ^ 0x1337, data ^ 0x1337), (0x1337 ^ t, 0x1337 ^ data),
                      (t & 0x1337, data & 0x1337), (0x1337 | t, 0x1337 | data), (~t, ~data),
                      (t.bitwise_not(), ~data)]:
        assert got.dtype == agrad.int32
        np.testing.assert_array_equal(got.numpy(), want)
    p, q = agrad.tensor([True, True, False, False]), agrad.tensor([True, False, True, False])
    np.testing.assert_array_equal((p & q).numpy(), [True, False, False, False])
    np.testing.assert_array_equal((p | q).numpy(), [True, True, True, False])
    np.testing.assert_array_equal((~p).numpy(), [False, False, True, True])
    x = agrad.tensor([1.2, 1.2, 3.2])
    np.testing.assert_array_equal(((1 < x) & (x < 2)).numpy(), [True, True, False])


def test_bitwise_on_floats_raises_as_pytorch():
    x = agrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        x & x
    with pytest.raises(RuntimeError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        ~x


def test_logical_ops():
    x = agrad.tensor([1.0, 2.0, 0.0, 0.5])
    np.testing.assert_array_equal(agrad.logical_not(x).numpy(), [False, False, True, False])
    np.testing.assert_array_equal(agrad.logical_xor(x, agrad.tensor([0, 1, 0, 0])).numpy(),
                                  [True, False, False, True])


def test_clip_and_tan():
    x = agrad.tensor([-3.0, -2.5, 0.0, 1.5, 2.0], dtype=agrad.float64, requires_grad=True)
    y = x.clip(-2.5, 1.5)
    np.testing.assert_array_equal(_np(y), [-2.5, -2.5, 0.0, 1.5, 1.5])
    (g,) = agrad.autograd.grad(y.sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])   # PyTorch: 1 at the bounds
    (g,) = agrad.autograd.grad(x.tan().sum(), [x])
    np.testing.assert_allclose(g.numpy(), 1 / np.cos(_np(x)) ** 2, rtol=1e-12)


# ---- agrad.nn.functional ---------------------------------------------------------------------

def test_nn_functional_names_are_the_ops():
    import agrad.nn.functional as F
    assert F.conv2d is agrad.conv2d and F.cross_entropy is agrad.cross_entropy
    assert F.relu(agrad.tensor([-1.0, 2.0])).tolist() == agrad.relu(agrad.tensor([-1.0, 2.0])).tolist()
    # F.unfold is im2col (and F.fold col2im), not Tensor.unfold
    assert F.unfold is not agrad.unfold and F.unfold(agrad.ones(1, 1, 2, 3), 2).shape == (1, 4, 2)
    assert F.fold(F.unfold(agrad.ones(1, 1, 2, 3), 2), (2, 3), 2).tolist() == [[[[1.0, 2.0, 1.0]] * 2]]
    x = agrad.tensor([[-1.0, 0.5, 2.0]], dtype=agrad.float64)
    np.testing.assert_allclose(F.leaky_relu(x, 0.01).numpy(), [[-0.01, 0.5, 2.0]])
    np.testing.assert_allclose(F.pad(x, (1, 0), value=3.0).numpy(), [[3.0, -1.0, 0.5, 2.0]])


# ---- creation --------------------------------------------------------------------------------

def test_randint_takes_pytorchs_argument_forms():
    agrad.manual_seed(3)
    a = agrad.randint(3, size=[3, 4, 5])
    assert a.dtype == agrad.int64 and a.shape == (3, 4, 5) and 0 <= a.min().item() and a.max().item() < 3
    b = agrad.randint(low=-1, high=1, size=(2, 1, 1), dtype=agrad.int32, requires_grad=False)
    assert b.dtype == agrad.int32 and set(b.numpy().ravel()) <= {-1, 0}
    c = agrad.randint(5, 9, (100,))
    assert 5 <= c.min().item() and c.max().item() < 9
    assert agrad.randint(high=1, size=(1, 3)).tolist() == [[0, 0, 0]]
    agrad.manual_seed(3)
    assert agrad.randint(3, size=[3, 4, 5]).tolist() == a.tolist()       # seeded


def test_randint_errors():
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        agrad.randint(3, 3, (2,))
    with pytest.raises(TypeError, match="randint"):
        agrad.randint(3)
    with pytest.raises(RuntimeError, match="floating point"):
        agrad.randint(3, (2,), requires_grad=True)


def test_linspace_to_bool_is_not_implemented_as_in_pytorch():
    with pytest.raises(NotImplementedError, match="\"linspace_cpu\" not implemented for 'Bool'"):
        agrad.linspace(5, 10, 3, dtype=agrad.bool)
    with pytest.raises(NotImplementedError, match="\"logspace_cpu\" not implemented for 'Bool'"):
        agrad.logspace(0, 1, 3, dtype=agrad.bool)


def test_shift_operators():
    data = np.array([[0, 1, 2], [1 << 8, 1 << 16, -(1 << 20)]], dtype=np.int32)
    t = agrad.tensor(data)
    for got, want in [(t << 2, data << 2), (t >> 2, data >> 2), (t.bitwise_left_shift(3), data << 3),
                      (1 << agrad.tensor([0, 3], dtype=agrad.int32), np.array([1, 8]))]:
        np.testing.assert_array_equal(got.numpy(), want)
    assert (t >> 2).dtype == agrad.int32


# ---- F.pad: negative pads that crop a dim to nothing (values/messages from torch 2.13) ----------

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_cropping_a_dim_to_zero_size(mode):
    x = _x((3, 5, 5))
    y = agrad.nn.functional.pad(x, (0, 0, 0, -5), mode=mode)
    assert tuple(y.shape) == (3, 0, 5)
    (g,) = agrad.autograd.grad((y * y).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), np.zeros((3, 5, 5)))


def test_pad_reflect_replicate_crop_and_pad_one_dim():
    x = _x((2, 3, 4))
    a = _np(x)
    y = agrad.nn.functional.pad(x, (3, -4), mode="reflect")      # torch: the mirror of the first 3 columns
    np.testing.assert_allclose(_np(y), a[..., [3, 2, 1]])
    y = agrad.nn.functional.pad(x, (-4, 2), mode="replicate")
    np.testing.assert_allclose(_np(y), a[..., [3, 3]])


@pytest.mark.parametrize("mode,shape,pad,message", [
    ("reflect", (3, 5, 5), (0, -5), "input (W: 5) is too small. Calculated output W: 0"),
    ("replicate", (2, 3, 4), (-2, -2), "input (W: 4) is too small. Calculated output W: 0"),
    ("reflect", (3, 5, 5), (-5, 0, -6, 0), "input (H: 5, W: 5) is too small. Calculated output H: -1 W: 0"),
    ("replicate", (2, 3, 5, 5), (-5, 0, -5, 0), "input (H: 5, W: 5 ) is too small. Calculated output H: 0 W: 0"),
    ("reflect", (2, 2, 3, 4), (-4, 0, -3, 0, -2, 0),
     "input (D: 2 H: 3, W: 4) is too small. Calculated output D: 0 H: 0 W: 0"),
    ("circular", (3, 5, 5), (-5, 0, -6, 0), "Negative padding value is resulting in an empty dimension"),
])
def test_pad_cropping_every_dim_to_nothing_raises_as_pytorch(mode, shape, pad, message):
    with pytest.raises(RuntimeError) as e:
        agrad.nn.functional.pad(_x(shape), pad, mode=mode)
    assert str(e.value) == message


# ---- a tuple inside the index tuple is an integer-sequence index (as PyTorch) -----------------

def test_tuple_inside_an_index_is_an_integer_index():
    a = np.arange(60.).reshape(3, 4, 5)
    x = agrad.tensor(a, requires_grad=True)
    b = agrad.tensor([1, 2, 0])
    np.testing.assert_array_equal(x[((0,),)].detach().numpy(), a[[0]])
    np.testing.assert_array_equal(x[(1, 0, -1), b, ...].detach().numpy(), a[[1, 0, -1], [1, 2, 0]])
    np.testing.assert_array_equal(x[:, (0, 2)].detach().numpy(), a[:, [0, 2]])
    np.testing.assert_array_equal(x[0, (1, 2), (3, 4)].detach().numpy(), a[0, [1, 2], [3, 4]])
    np.testing.assert_array_equal(x[(True, False, True),].detach().numpy(), a[[True, False, True]])
    assert tuple(x[(),].shape) == (0, 4, 5)       # an empty sequence indexes as int64
    assert x[:, (0, 2)].grad_fn.name() == "IndexBackward0"
    (g,) = agrad.autograd.grad(x[(0, 0), 1].sum(), [x])
    assert g.numpy()[0, 1].tolist() == [2.0] * 5 and g.numpy().sum() == 10.0
    y = x.detach().clone()
    y[:, (0, 2)] = 7.0
    assert y.sum().item() == 1170.0               # torch 2.13


# ---- logcumsumexp (values from torch 2.13) ---------------------------------------------------

def test_logcumsumexp_is_stable_and_has_pytorchs_gradient():
    x = agrad.tensor([[-1000.0, 0.0, 3.0], [-np.inf, -np.inf, 1.0]], requires_grad=True)
    y = agrad.logcumsumexp(x, 1)
    assert y.grad_fn.name() == "LogcumsumexpBackward0"
    np.testing.assert_allclose(_np(y), [[-1000.0, 0.0, 3.0485873], [-np.inf, -np.inf, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(_np(x.logcumsumexp(0)), [[-1000.0, 0.0, 3.0], [-1000.0, 0.0, 3.126928]], rtol=1e-6)
    with np.errstate(all="ignore"):
        y.backward(agrad.tensor([[1.0, -2.0, 0.5], [1.0, 1.0, 1.0]]))
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, -1.976287, 0.47628704], [np.nan, np.nan, 1.0]], rtol=1e-6)
    big = agrad.tensor([700.0, 710.0, 720.0], dtype=agrad.float64)     # exp() overflows float64 past 709
    np.testing.assert_allclose(_np(agrad.logcumsumexp(big, 0)),
                               [700.0, 710.0 + np.log1p(np.exp(-10.0)),
                                720.0 + np.log1p(np.exp(-10.0) + np.exp(-20.0))])
    assert agrad.logcumsumexp(agrad.tensor(2.0), 0).item() == 2.0
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cpu\" not implemented for 'Long'"):
        agrad.logcumsumexp(agrad.tensor([1, 2]), 0)


# ---- max_unpool2d (shapes and messages from torch 2.13) ----------------------------------------

def test_max_unpool2d_inverts_max_pool2d_and_routes_the_gradient():
    F = agrad.nn.functional
    x = agrad.tensor(np.random.RandomState(1).permutation(32).reshape(1, 2, 4, 4).astype(np.float64),
                     requires_grad=True)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    u = F.max_unpool2d(y, i, 2)
    assert u.grad_fn.name() == "MaxUnpool2DBackward0"
    a = x.detach().numpy()
    keep = a == np.repeat(np.repeat(y.detach().numpy(), 2, 2), 2, 3)      # each window's max, in place
    np.testing.assert_array_equal(u.detach().numpy(), np.where(keep, a, 0.0))
    (g,) = agrad.autograd.grad((u * agrad.tensor(a)).sum(), [y])
    np.testing.assert_array_equal(g.numpy(), y.detach().numpy())
    assert tuple(F.max_unpool2d(y, i, 2, output_size=(1, 2, 5, 5)).shape) == (1, 2, 5, 5)
    assert tuple(F.max_unpool2d(y[0], i[0], 2).shape) == (2, 4, 4)


def test_max_unpool2d_errors_as_pytorch():
    F = agrad.nn.functional
    y, i = F.max_pool2d(_x((2, 3, 4, 4)), 2, return_indices=True)
    with pytest.raises(ValueError, match=r'invalid output_size "\(7, 7\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(y, i, 2, output_size=(7, 7))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 99 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(y, i * 0 + 99, 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Float"):
        F.max_unpool2d(y, i.float(), 2)
    with pytest.raises(NotImplementedError, match="\"max_unpool2d\" not implemented for 'Long'"):
        F.max_unpool2d(y.long(), i, 2)


# ---- interpolate: the nearest modes take uint8, as PyTorch (values from torch 2.13) -----------

def test_interpolate_nearest_on_uint8():
    F = agrad.nn.functional
    x = agrad.tensor(np.arange(12, dtype=np.uint8).reshape(1, 1, 3, 4))
    y = F.interpolate(x, scale_factor=1.5, mode="nearest-exact")
    assert y.dtype == agrad.uint8
    np.testing.assert_array_equal(y.numpy()[0, 0], [[0, 1, 1, 2, 3, 3], [4, 5, 5, 6, 7, 7],
                                                    [4, 5, 5, 6, 7, 7], [8, 9, 9, 10, 11, 11]])
    np.testing.assert_array_equal(F.interpolate(x, size=(6, 8), mode="nearest").numpy()[0, 0],
                                  np.repeat(np.repeat(np.arange(12).reshape(3, 4), 2, 0), 2, 1))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.interpolate(x.long(), size=(6, 8), mode="nearest")


# ---- Tensor.view(dtype): a bitcast with no gradient (values and messages from torch 2.13) -------

def test_view_dtype_reinterprets_the_memory():
    x = agrad.tensor([1.0, -2.0], requires_grad=True)
    v = x.view(agrad.int32)
    assert v.tolist() == [1065353216, -1073741824] and not v.requires_grad and v.grad_fn is None
    assert x.view(dtype=agrad.float64).tolist() == [-2.000000473111868]
    assert tuple(agrad.zeros(4).view(agrad.int16).shape) == (8,)
    assert tuple(agrad.zeros(2, 4, dtype=agrad.int16).view(agrad.float32).shape) == (2, 2)
    assert agrad.tensor([0, 1, 2], dtype=agrad.uint8).view(agrad.bool).tolist() == [False, True, True]
    assert tuple(agrad.zeros(2, 3).view(3, 2).shape) == (3, 2)          # sizes still work
    a = agrad.zeros(2, dtype=agrad.float32)
    a.view(agrad.int32)[0] = 1065353216                                  # shares the memory
    assert a.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("make,dtype,message", [
    (lambda: agrad.zeros(3), "float64", "self.size(-1) must be divisible by 2 to view Float as Double "
                                        "(different element sizes), but got 3"),
    (lambda: agrad.zeros(2, 3).t(), "int16", "self.stride(-1) must be 1 to view Float as Short "
                                             "(different element sizes), but got 3"),
    (lambda: agrad.zeros(()), "int16", "self.dim() cannot be 0 to view Float as Short (different element sizes)"),
])
def test_view_dtype_errors_as_pytorch(make, dtype, message):
    with pytest.raises(RuntimeError) as e:
        make().view(getattr(agrad, dtype))
    assert str(e.value) == message


# ---- torch.nn's parameter-free layers (values from torch 2.13) ---------------------------------

def test_nn_layer_classes_call_their_ops():
    x = agrad.tensor(np.random.RandomState(0).randn(3, 4), requires_grad=True)
    t = agrad.tensor([1, 0, 3])
    np.testing.assert_allclose(agrad.nn.Softmax(dim=1)(x).sum(0).tolist(),
                               [1.044666517852169, 0.30566909565066325, 0.5356367292303216, 1.114027657266846])
    np.testing.assert_allclose(_np(agrad.nn.LogSoftmax(1)(x)), _np(agrad.log_softmax(x, 1)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = agrad.nn.Softmax()(x)                                          # 2-D: dim 1
    np.testing.assert_allclose(_np(y), _np(agrad.softmax(x, 1)))
    np.testing.assert_allclose(agrad.nn.CrossEntropyLoss()(x, t).item(), 1.2114677372589342, rtol=1e-12)
    np.testing.assert_allclose(agrad.nn.CrossEntropyLoss(reduction="sum", label_smoothing=0.1)(x, t).item(),
                               3.782138362689514, rtol=1e-12)
    np.testing.assert_allclose(agrad.nn.CrossEntropyLoss(ignore_index=3)(x, t).item(), 1.5143392503433923,
                               rtol=1e-12)
    w = agrad.tensor([1.0, 2.0, 3.0, 4.0], dtype=agrad.float64)
    np.testing.assert_allclose(agrad.nn.CrossEntropyLoss(weight=w)(x, t).item(), 1.1451750027234218, rtol=1e-12)
    loss = agrad.nn.CrossEntropyLoss()(x, t)
    assert loss.grad_fn.name() == "NllLossBackward0"
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy()[0], [0.10032254585422302, -0.3076845710524239,
                                                   0.04574470704556412, 0.16161731815263683], rtol=1e-10)
    assert agrad.nn.ReLU()(x).min().item() == 0.0
    z = agrad.tensor([-1.0, 2.0])
    assert agrad.nn.ReLU(inplace=True)(z) is z and z.tolist() == [0.0, 2.0]
    assert [repr(m) for m in (agrad.nn.Softmax(dim=1), agrad.nn.LogSoftmax(), agrad.nn.ReLU(),
                              agrad.nn.ReLU(inplace=True), agrad.nn.CrossEntropyLoss())] == \
        ["Softmax(dim=1)", "LogSoftmax(dim=None)", "ReLU()", "ReLU(inplace=True)", "CrossEntropyLoss()"]


# ---- dtype aliases -------------------------------------------------------------------------------

def test_pytorchs_other_names_of_dtypes():
    assert (agrad.half, agrad.float, agrad.double) == (agrad.float16, agrad.float32, agrad.float64)
    assert (agrad.short, agrad.int, agrad.long, agrad.bool) == (agrad.int16, agrad.int32, agrad.int64, agrad.bool_)
    assert agrad.tensor([1, 2], dtype=agrad.int).dtype == agrad.int32
    assert agrad.ones(2, dtype=agrad.float).to(agrad.long).dtype == agrad.int64
    namespace = {}
    exec("from agrad import *", namespace)          # never shadows Python's int and float
    assert "int" not in namespace and "float" not in namespace and "bool" not in namespace


# ---- legacy names still in use: Variable, Tensor.new, the typed constructors, is_tensor ---------------

def test_variable_is_every_tensor_and_makes_a_detached_one():
    from agrad.autograd import Variable

    x = agrad.ones(2) * 3
    v = Variable(x, requires_grad=True)
    assert isinstance(x, Variable) and not isinstance([1.0], Variable)
    assert v is not x and v.requires_grad and v.is_leaf and v.tolist() == [3.0, 3.0]
    assert Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0])
    assert Variable._execution_engine is agrad.autograd.get_default_engine()


def test_tensor_new_and_the_typed_constructors():
    x = agrad.ones(2, dtype=agrad.float64)
    assert x.new([2, 3]).tolist() == [2.0, 3.0] and x.new([2, 3]).dtype == agrad.float64
    assert x.new(2, 3).shape == (2, 3) and x.new(x.new(4, 1).shape).shape == (4, 1) and x.new().shape == (0,)
    assert agrad.LongTensor([1, 2]).dtype == agrad.int64 and agrad.FloatTensor(2, 3).shape == (2, 3)
    assert isinstance(agrad.ones(1), agrad.FloatTensor) and not isinstance(agrad.ones(1), agrad.LongTensor)
    assert agrad.is_tensor(x) and not agrad.is_tensor(np.ones(2))


def test_warn_always_repeats_a_once_per_process_warning():
    import warnings

    x = agrad.ones(1, requires_grad=True)
    agrad.set_warn_always(True)
    try:
        assert agrad.is_warn_always_enabled()
        for _ in range(2):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (x * x).sum().backward(create_graph=True)
            assert any("create_graph=True will create a reference cycle" in str(w.message) for w in caught)
    finally:
        agrad.set_warn_always(False)
    assert not agrad.is_warn_always_enabled()


# ---- pickling and deleting attributes ---------------------------------------------------------------

@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_tensors_pickle_as_leaves_with_their_values_at_any_protocol(protocol):
    import pickle

    x = agrad.randn(3, requires_grad=True)
    x.tag = "mine"                                  # a tensor's own attributes come along
    y = x * 2                                       # a non-leaf: its values, requires_grad, no graph
    for t in (x, y, agrad.nn.Parameter(agrad.ones(2)), agrad.tensor([1, 2]), agrad.ones(2, dtype=agrad.float16)):
        back = pickle.loads(pickle.dumps(t, protocol=protocol))
        assert type(back) is type(t) and back.dtype == t.dtype and back.requires_grad == t.requires_grad
        assert back.is_leaf and np.array_equal(back.detach().numpy(), t.detach().numpy())
    assert pickle.loads(pickle.dumps(x, protocol=protocol)).tag == "mine"


def test_deleting_a_tensors_attributes_is_refused_as_in_pytorch():
    x = agrad.randn(2, requires_grad=True)
    (x * 2).sum().backward()
    for name, message in [("data", "Deleting tensor data is not allowed"), ("requires_grad", "must be a bool"),
                          ("_grad_fn", "Deletion of _grad_fn not allowed"),
                          ("_backward_hooks", "Deletion of _backwards_hooks not allowed")]:
        with pytest.raises(RuntimeError, match=message):
            delattr(x, name)
    del x.grad
    assert x.grad is None


def test_a_view_of_an_inference_tensor_is_an_inference_leaf_in_either_mode():
    # torch 2.13: inference tensors keep neither views nor history
    with agrad.inference_mode():
        c = agrad.ones(2, 3, requires_grad=True)
        v = c.view(-1)
    assert (v.requires_grad, v.is_leaf, v._is_view()) == (False, True, False)
    w = c.view(-1)
    assert (agrad.is_inference(w), w.requires_grad, w._is_view()) == (True, False, False)
    with pytest.raises(RuntimeError, match="does not require grad"):
        w.sum().backward()
    n = c * 2                       # not a view: a normal tensor with its history
    assert not agrad.is_inference(n) and n.grad_fn.name() == "MulBackward0"


def test_empty_strided_lays_elements_out_as_asked_and_its_gradient_is_contiguous():
    c = agrad.empty_strided((2, 2), (4, 2)).copy_(agrad.rand(2, 2))
    assert c.stride() == (4, 2) and c.shape == (2, 2) and c.tolist() != [[0.0, 0.0], [0.0, 0.0]]
    c.requires_grad_()
    (c * agrad.rand(2, 2)).sum().backward()
    assert c.grad.stride() == (2, 1)
    assert agrad.empty_strided((2, 3), (1, 2)).is_contiguous() is False
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        agrad.empty_strided((2, 3), (1,))


def test_resize_and_set_in_place_as_pytorch():
    # test_autograd.py's test_resize_version_bump and test_parameter_resize
    x, y = agrad.rand(1), agrad.randn(3)
    x.resize_((1, 2))
    assert x._version == 1 and x.shape == (1, 2)
    x.resize_as_(y)
    assert x._version == 2 and x.shape == (3,)
    x.resize_((3,))
    x.resize_as_(y)
    assert x._version == 2                      # the shape did not change
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        agrad.ones(2, requires_grad=True).resize_(3)
    p = agrad.nn.Parameter(agrad.ones(16, dtype=agrad.float64))
    for n in (15, 14):
        with agrad.no_grad():
            p.set_(p[1:])
            p.grad = None
        agrad.cat((p, p)).sum().backward()
        assert p.shape == (n,) and p.grad.tolist() == [2.0] * n
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        p.set_(p[1:])


# ---- out= -------------------------------------------------------------------------------------------

def test_out_writes_the_result_into_the_given_tensor():
    import warnings

    a, b = agrad.ones(3), agrad.arange(3.0)
    out = agrad.empty(3)
    assert agrad.mul(a, b, out=out) is out and out.tolist() == [0.0, 1.0, 2.0] and out._version == 1
    empty = agrad.empty(0)
    agrad.add(a, b, out=empty)                          # an empty out takes the result's shape silently
    assert empty.tolist() == [1.0, 2.0, 3.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        small = agrad.zeros(2)
        agrad.add(a, b, out=small)
    assert small.shape == (3,) and "An output with one or more elements was resized" in str(caught[0].message)
    values, indices = agrad.max(agrad.tensor([[1.0, 5.0], [3.0, 2.0]]), 1,
                                out=(agrad.empty(2), agrad.empty(2, dtype=agrad.int64)))
    assert values.tolist() == [5.0, 3.0] and indices.tolist() == [1, 0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        agrad.mul(a, 2.5, out=agrad.empty(3, dtype=agrad.int64))


def test_out_is_refused_where_autograd_would_record():
    x = agrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"mul\(\): functions with out=\.\.\. arguments don't support automatic "
                                           r"differentiation, but one of the arguments requires grad\."):
        agrad.mul(x, 2, out=agrad.empty(2))
    with agrad.no_grad():
        assert agrad.mul(x, 2, out=agrad.empty(2)).tolist() == [2.0, 2.0]


def test_as_subclass_is_an_alias_of_the_same_history():
    # as torch 2.13: THPVariable_NewWithVar(cls, self.alias()), so a view with AliasBackward0
    class Sub(agrad.Tensor):
        pass
    x = agrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.as_subclass(Sub)
    assert type(y) is Sub and y._base is x and y.grad_fn.name() == "AliasBackward0" and not y.is_leaf
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    y.data[0] = 5.0
    assert x[0].item() == 5.0                       # the same memory
    z = agrad.tensor([1.0]).as_subclass(Sub)
    assert type(z) is Sub and not z.requires_grad and z.grad_fn is None
    with pytest.raises(TypeError, match="cls must be a type"):
        x.as_subclass(3)
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)


def test_grad_dtype_as_pytorch():
    # torch 2.13's test_autograd.py::test_grad_dtype, with its messages
    leaf = agrad.tensor([1.0, 2.0], requires_grad=True)
    assert leaf.grad_dtype == agrad.float32
    leaf.grad_dtype = agrad.float16
    assert leaf.grad_dtype == agrad.float16
    leaf.grad_dtype = None
    assert leaf.grad_dtype is None
    non_leaf = leaf * 2
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        non_leaf.grad_dtype
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        non_leaf.grad_dtype = agrad.float16
    with pytest.raises(RuntimeError, match="grad_dtype must be a torch.dtype or None, but got int"):
        leaf.grad_dtype = 3
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    x.grad_dtype = agrad.float16
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float' to a tensor with "
                                           "grad_dtype 'Half'"):
        x.grad = agrad.tensor([1.0, 1.0])
    x.grad_dtype = None
    x.grad = agrad.tensor([1.0, 1.0], dtype=agrad.float64)
    assert x.grad.dtype == agrad.float64
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype to 'Half' because there is already a gradient "
                                           "with dtype 'double'"):
        x.grad_dtype = agrad.float16

    class Mismatched(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.to(agrad.float64)

    def grad_dtype_after_backward(grad_dtype, accumulator_first=False):
        t = agrad.tensor([1.0, 2.0], requires_grad=True)
        if accumulator_first:
            t.clone()           # its AccumulateGrad exists before grad_dtype is set
        if grad_dtype != "default":
            t.grad_dtype = grad_dtype
        Mismatched.apply(t).sum().backward()
        return t.grad.dtype
    assert grad_dtype_after_backward("default") == agrad.float32
    assert grad_dtype_after_backward(None) == agrad.float64
    assert grad_dtype_after_backward(agrad.float16) == agrad.float16
    assert grad_dtype_after_backward(None, accumulator_first=True) == agrad.float64
    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    a.grad_dtype = agrad.float16
    (a * 2).sum().backward()
    (a * 3).sum().backward()
    assert a.grad.dtype == agrad.float16 and a.grad.tolist() == [5.0, 5.0]
    assert agrad.tensor([1, 2]).grad_dtype == agrad.int64


def test_repr_shows_an_invalid_grad_fn_as_pytorch():
    # torch 2.13's test_autograd_print_tensor: reading the grad_fn of a view made and changed in place
    # under no_grad is refused, and the repr says so
    a = agrad.ones(1, requires_grad=True)
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a.clone()) == "tensor([1.], grad_fn=<CloneBackward0>)"
    with agrad.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"


def test_max_pool_with_indices_and_threshold_in_place_as_torch_nn_functional():
    F = agrad.nn.functional
    x = agrad.tensor([[[1.0, 5.0, 2.0, 0.0]]])
    values, indices = F.max_pool1d_with_indices(x, 2)        # the indices whatever return_indices says
    assert values.tolist() == [[[5.0, 2.0]]] and indices.tolist() == [[[1, 2]]]
    values, indices = F.max_pool2d_with_indices(x.reshape(1, 1, 2, 2), 2)
    assert values.tolist() == [[[[5.0]]]] and indices.tolist() == [[[[1]]]]
    assert F.max_pool3d_with_indices(x.reshape(1, 1, 1, 2, 2), (1, 2, 2))[1].tolist() == [[[[[1]]]]]
    y = agrad.tensor([1.0, -1.0, 3.0])
    assert F.threshold_(y, 0.5, 9.0) is y and y.tolist() == [1.0, 9.0, 3.0]


def test_an_empty_tensor_is_written_in_place_whatever_its_strides():
    # NumPy strides a [4, 0] array (0, 0); it holds no element that two could share (as torch: no overlap)
    linear = agrad.nn.Linear(0, 4)
    linear.load_state_dict(agrad.nn.Linear(0, 4).state_dict())
    with agrad.no_grad():
        assert linear.weight.copy_(agrad.zeros(4, 0)).shape == (4, 0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        agrad.zeros(1).expand(3).add_(1.0)


def test_shape_is_a_size_as_torch_size():
    # as torch 2.13's torch.Size: a tuple (equal to one, hashed alike) printed as PyTorch prints it
    x = agrad.zeros(2, 3)
    shape = x.shape
    assert isinstance(shape, agrad.Size) and isinstance(x.size(), agrad.Size) and isinstance(shape, tuple)
    assert shape == (2, 3) and hash(shape) == hash((2, 3)) and x.size(1) == 3 and type(shape[0]) is int
    assert repr(shape) == str(shape) == "agrad.Size([2, 3])" and shape.numel() == 6
    assert repr(shape[1:]) == "agrad.Size([3])" and repr(shape + (4,)) == "agrad.Size([2, 3, 4])"
    assert repr((1,) + shape) == "agrad.Size([1, 2, 3])" and repr(shape * 2) == "agrad.Size([2, 3, 2, 3])"
    with pytest.raises(TypeError):
        shape + [1]
    assert agrad.zeros(agrad.Size([4, 5])).shape == (4, 5)
    assert pickle.loads(pickle.dumps(shape)) == shape and json.dumps(shape) == "[2, 3]"


def test_the_engines_own_nodes_are_named_as_pytorchs_cpp_nodes():
    """name() of AccumulateGrad, CopySlices and GraphRoot is PyTorch's qualified C++ name (code that
    walks a graph compares with it: `fn.name() == 'torch::autograd::AccumulateGrad'`); their class
    names, reprs and a tensor's `grad_fn=<...>` stay the short ones, as PyTorch's (torch 2.13)."""
    x = agrad.ones(3, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and type(acc).__name__ == "AccumulateGrad"
    assert repr(acc).startswith("<AccumulateGrad object at 0x")
    b = x.clone()
    b[:2].mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices" and "grad_fn=<CopySlices>" in repr(b)
    roots = [x * 2, x * 3]
    plan = agrad.autograd.graph.execution_plan(roots, grad_tensors=[agrad.ones(3), agrad.ones(3)])
    assert plan.order[0].name() == "torch::autograd::GraphRoot"


@pytest.mark.parametrize("input_shape, weight_shape, bias", [((4, 3), (2, 3), True), ((4, 3), (2, 3), False),
                                                              ((2, 4, 3), (2, 3), True), ((3,), (3,), False)])
def test_linear_transposes_its_weight_with_t_as_aten(input_shape, weight_shape, bias):
    """ATen's linear reads `weight.t()`: the weight's Node is TBackward0 (torch 2.13), which code
    walking the graph of an nn.Linear by name (test_autograd's hook-order test) expects."""
    weight = agrad.ones(*weight_shape, requires_grad=True)
    out = agrad.nn.functional.linear(agrad.ones(*input_shape), weight, agrad.ones(2) if bias else None)
    fn, seen = out.grad_fn, []
    while fn is not None and not hasattr(fn, "variable"):
        seen.append(type(fn).__name__)
        fn = next((f for f, _ in fn.next_functions if f is not None), None)
    assert seen[-1] == "TBackward0" and fn.variable is weight


def test_a_pure_view_custom_function_output_is_changed_in_place_as_any_view():
    """`ctx._is_pure_view = True` (test_autograd's test_autograd_simple_views_python): the output,
    a view of the one input, may be modified in place; its history is then rebased onto the base
    (CopySlices), past the Function's backward. Without it, or with several outputs, refused."""
    called = []

    class Narrow(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, a, pure):
            ctx._is_pure_view = pure
            return a.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, g):
            called.append(1)
            return agrad.cat([g, agrad.zeros(1, dtype=g.dtype)]), None

    class Two(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx._is_pure_view = True
            return a.narrow(0, 0, 2), a + b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, gb

    x = agrad.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    out = Narrow.apply(x.clone(), True)
    out.mul_(3)
    out.sum().backward()
    assert called == [] and x.grad.tolist() == [3.0, 3.0, 0.0]     # torch 2.13's
    with pytest.raises(RuntimeError, match="Output 0 of Narrow is a view and is being modified inplace. "
                                           "This view was created inside a custom Function"):
        Narrow.apply(x.clone(), False).mul_(3)
    with pytest.raises(RuntimeError, match="Pure view custom Function can only have one input Tensor and one "
                                           "output Tensor"):
        Two.apply(x.clone(), x.clone())


@pytest.mark.parametrize("kind, error", [("view", None), ("unbind", "function that returns multiple views"),
                                         ("custom", "view was created inside a custom Function")])
def test_an_inplace_view_op_under_no_grad_keeps_how_the_view_was_made(kind, error):
    """An in-place view op (t_, squeeze_, ...) run under no_grad leaves the view's creation as it was
    (test_autograd_inplace_views_creation_meta): a view made with grad mode on is not taken for one
    made under no_grad, and a multi-output or custom Function's view is still refused."""
    class Same(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    leaf = agrad.rand(2, 3, dtype="float64", requires_grad=True)
    base = leaf.clone()
    view = {"view": lambda: base.view_as(base), "unbind": lambda: base.unbind()[0],
            "custom": lambda: Same.apply(base)}[kind]()
    with agrad.no_grad():
        view.t_() if view.ndim == 2 else view.unsqueeze_(0)
    if error is not None:
        with pytest.raises(RuntimeError, match=error):
            view.add_(1)
        return
    view.mul_(2)
    base.sum().backward()
    assert leaf.grad.tolist() == [[2.0] * 3] * 2


def test_a_view_made_under_no_grad_stays_refused_after_an_inplace_view_op():
    base = agrad.rand(2, 3, requires_grad=True).clone()
    with agrad.no_grad():
        view = base.view_as(base)
        view.t_()
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        view.add_(1)


def test_anomaly_mode_names_the_backward_that_made_the_failing_node():
    """A Node made during another's backward (create_graph) keeps that Node as metadata["parent_"]:
    an error in it is reported with its own forward trace, then "Previous calculation was induced
    by ..." with its parent's (test_autograd's test_nested_anomaly_detect_nan). The division by zero
    in the backward raises no NumPy warning: PyTorch's backward warns of none."""
    import warnings

    class Outer(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            g = g.clone().expand(4)
            return Inner.apply(g * x)

    class Inner(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y * 2.0

        @staticmethod
        def backward(ctx, g):
            g = g.clone()
            g[0] = 0
            g[0] /= 0               # 0 / 0: nan
            return g

    x = agrad.rand(4, dtype="float64", requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'InnerBackward' returned nan values in its 0th output"):
            with agrad.autograd.detect_anomaly():
                out = Outer.apply(x)
                (grad,) = agrad.autograd.grad(out, (x,), create_graph=True)
                grad.sum().backward()
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("Anomaly Detection has been enabled")
    assert messages[1].startswith("Error detected in InnerBackward. Traceback of forward call that caused the "
                                  "error:") and "Inner.apply" in messages[1]
    assert messages[2].startswith("\n\nPrevious calculation was induced by OuterBackward. Traceback of forward "
                                  "call that induced the previous calculation:") and "Outer.apply" in messages[2]
    assert len(messages) == 3 and not any(w.category is RuntimeWarning for w in caught)
