"""PyTorch spellings that other frameworks' op suites call on tensors: NumPy's argument
names (`axis`, `keepdims`), `Tensor.type`, method forms with positional arguments after a
size list (`t.roll(1, 0)`), the `// % & | ^ ~` operators. Expected values are NumPy's (the
same semantics: floor division, remainder with the divisor's sign)."""
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
    assert F.relu is agrad.relu and F.conv2d is agrad.conv2d and F.cross_entropy is agrad.cross_entropy
    assert "unfold" not in F.__all__          # F.unfold is im2col, not Tensor.unfold
    x = agrad.tensor([[-1.0, 0.5, 2.0]], dtype=agrad.float64)
    np.testing.assert_allclose(F.leaky_relu(x, 0.01).numpy(), [[-0.01, 0.5, 2.0]])
    np.testing.assert_allclose(F.pad(x, (1, 0), value=3.0).numpy(), [[3.0, -1.0, 0.5, 2.0]])
