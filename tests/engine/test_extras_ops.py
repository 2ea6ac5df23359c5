"""true_divide, float_power, logit, heaviside, sinc, … nansum, trace, cross, kron, take, nonzero,
bincount, unique, allclose, equal (engine/ops/pointwise/, reduce/, linalg.py, shape/) and the
in-place random initialisers (engine/ops/_random_inplace.py) beyond what
the generated tests cover: the non-differentiable ones (values checked against PyTorch 2.13's,
recorded here), bad-input messages (PyTorch's), the in-place variants, and the random
initialisers (shapes, dtypes, ranges, determinism under manual_seed, version bumps, the
leaf check)."""
import math
import warnings

import numpy as np
import pytest

import agrad

f64 = agrad.float64


def t(values, dtype=f64, requires_grad=False):
    return agrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def ints(values):
    return agrad.tensor(values, dtype=agrad.int64)


# ---- elementwise -------------------------------------------------------------------------------------

def test_heaviside_records_not_implemented_and_backward_raises():
    x = t([-1.0, 0.0, 2.0], requires_grad=True)
    out = agrad.heaviside(x, t([7.0]))
    assert out.tolist() == [0.0, 7.0, 1.0]
    assert out.requires_grad and type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match=r"^derivative for aten::heaviside is not implemented"):
        out.sum().backward()


def test_heaviside_needs_equal_dtypes():
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes."):
        agrad.heaviside(ints([1, 0]), t([0.5]))
    assert agrad.heaviside(ints([-2, 0, 3]), ints([0, 1, 1])).tolist() == [0, 1, 1]


def test_elementwise_dtypes_as_pytorch():
    i = ints([1, 2, 3])
    assert agrad.true_divide(i, 2).tolist() == [0.5, 1.0, 1.5] and agrad.true_divide(i, 2).dtype == agrad.float32
    assert agrad.float_power(i, 2).dtype == f64 and agrad.float_power(i, 2).tolist() == [1.0, 4.0, 9.0]
    assert agrad.float_power(2, i).tolist() == [2.0, 4.0, 8.0]
    assert agrad.clamp_max(i, 2).dtype == agrad.int64 and agrad.clamp_max(i, 2).tolist() == [1, 2, 2]
    assert agrad.clamp_max(i, 2.5).dtype == agrad.float32
    assert agrad.deg2rad(ints([180])).dtype == agrad.float32
    # logit of integers: float; 1 -> inf, 2 and 3 (outside [0, 1]) -> nan
    out = agrad.logit(i).tolist()
    assert out[0] == math.inf and math.isnan(out[1]) and math.isnan(out[2])
    np.testing.assert_allclose(agrad.logit(t([0.0, 0.05, 0.5, 1.2]), eps=0.1).tolist(),
                               [-2.1972246, -2.1972246, 0.0, 2.1972246], rtol=1e-6)
    assert agrad.sinc(t([0.0])).tolist() == [1.0]
    assert agrad.fmax(i, t([2.0, math.nan, 1.0], dtype=agrad.float32)).tolist() == [2.0, 2.0, 3.0]


def test_grad_fn_names():
    x = t([0.2, 0.4], requires_grad=True)
    y = t([0.3, 0.1], requires_grad=True)
    names = {"true_divide": agrad.true_divide(x, y), "true_divide scalar": agrad.true_divide(x, 2),
             "float_power": agrad.float_power(x.float(), 2), "float_power tt": agrad.float_power(x, y),
             "float_power st": agrad.float_power(2, y), "clamp_max": agrad.clamp_max(x, 0.3),
             "clamp_max t": agrad.clamp_max(x, y), "nanmean": agrad.nanmean(x), "kron": agrad.kron(x, y)}
    got = {k: type(v.grad_fn).__name__ for k, v in names.items()}
    assert got == {"true_divide": "DivBackward0", "true_divide scalar": "DivBackward0",
                   "float_power": "PowBackward0", "float_power tt": "PowBackward1",
                   "float_power st": "PowBackward2", "clamp_max": "ClampMaxBackward0",
                   "clamp_max t": "ClampMaxBackward1", "nanmean": "DivBackward0", "kron": "UnsafeViewBackward0"}
    assert type(names["float_power"].grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"


def test_inplace_variants_are_bound():
    x = t([0.5, 2.0, 3.0])
    assert x.clamp_max_(2.5) is x and x.tolist() == [0.5, 2.0, 2.5] and x._version == 1
    p = t([0.5])
    p.logit_()
    assert p.tolist() == [0.0]
    q = t([3.0])
    q.true_divide_(2)
    assert q.tolist() == [1.5]
    w = t([0.5, 3.0], requires_grad=True)
    y = w * 1
    y.clamp_max_(1.0)
    assert type(y.grad_fn).__name__ == "ClampMaxBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 0.0]


# ---- reductions and other ops: bad input ------------------------------------------------------------------

@pytest.mark.parametrize("call,error,message", [
    (lambda: agrad.trace(t([1.0, 2.0])), RuntimeError, "trace: expected a matrix, but got tensor with dim 1"),
    (lambda: agrad.trace(agrad.tensor([[True, False]])), NotImplementedError, "\"trace\" not implemented for 'Bool'"),
    (lambda: agrad.take(t([1.0, 2.0, 3.0]), agrad.tensor([0, 1], dtype=agrad.int32)), RuntimeError,
     "take(): Expected a long tensor for index, but got Int"),
    (lambda: agrad.take(t([1.0, 2.0, 3.0]), ints([5])), IndexError,
     "out of range: tried to access index 5 on a tensor of 3 elements."),
    (lambda: agrad.take(t([1.0, 2.0, 3.0]), ints([0, -4])), IndexError,
     "out of range: tried to access index -4 on a tensor of 3 elements."),
    (lambda: agrad.linalg_cross(agrad.rand(2, 2), agrad.rand(2, 2)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda: agrad.linalg_cross(agrad.rand(2, 3), agrad.rand(3)), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions."),
    (lambda: agrad.linalg_cross(agrad.rand(2, 3), agrad.rand(2, 3), dim=2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: agrad.linalg_cross(agrad.rand(2, 3), agrad.rand(4, 3)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"),
    (lambda: agrad.linalg_cross(agrad.rand(2, 3), agrad.rand(2, 3, dtype=f64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: agrad.cross(agrad.rand(2, 2), agrad.rand(2, 2)), RuntimeError, "no dimension of size 3 in input"),
    (lambda: agrad.nanmean(ints([1, 2])), RuntimeError,
     "nanmean(): expected input to have floating point or complex dtype but got Long"),
    (lambda: agrad.nansum(agrad.rand(3), dim=3), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    (lambda: agrad.bincount(ints([-1])), RuntimeError, "bincount only supports 1-d non-negative integral inputs."),
    (lambda: agrad.bincount(ints([[1, 1], [1, 1]])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda: agrad.bincount(agrad.rand(3)), NotImplementedError, "\"bincount_cpu\" not implemented for 'Float'"),
    (lambda: agrad.bincount(ints([1, 2, 3]), agrad.rand(2)), RuntimeError,
     "weights should be 1-d and have the same length as input"),
    (lambda: agrad.bincount(ints([1, 2, 3]), minlength=-1), RuntimeError, "minlength should be >= 0"),
    (lambda: agrad.allclose(agrad.rand(3), agrad.rand(2)), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    (lambda: agrad.allclose(agrad.rand(3), ints([1, 2, 3])), RuntimeError, "Float did not match Long"),
])
def test_bad_input_messages(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_cross_without_dim_warns_and_uses_the_first_size_3_dim():
    a, b = agrad.rand(3, 2, dtype=f64), agrad.rand(3, 2, dtype=f64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = agrad.cross(a, b)
    assert any("Using torch.cross without specifying the dim arg is deprecated" in str(w.message) for w in caught)
    np.testing.assert_allclose(out.numpy(), np.cross(a.numpy(), b.numpy(), axis=0))


def test_take_gradient_accumulates_repeats_and_negative_indices():
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    agrad.take(x, ints([0, -1, 3, 0])).sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_trace_values_and_dtype():
    assert agrad.trace(ints([[1, 2, 3]])).dtype == agrad.int64 and agrad.trace(ints([[1, 2, 3]])).item() == 1
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    agrad.trace(x).backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_nansum_nanmean_values():
    x = t([1.0, math.nan, 3.0], requires_grad=True)
    assert agrad.nansum(x).item() == 4.0 and agrad.nanmean(x).item() == 2.0
    agrad.nanmean(x).backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]
    assert agrad.nansum(ints([1, 2, 3])).dtype == agrad.int64
    assert math.isnan(agrad.nanmean(t([math.nan])).item())


# ---- allclose, equal, nonzero, bincount, unique: values from PyTorch 2.13 -------------------------------------

def test_allclose_and_equal_return_python_bools():
    x = t([1.0, 2.0])
    assert agrad.allclose(x, x + 1e-9) is True
    assert agrad.allclose(x, t([1.0, 2.1])) is False
    assert agrad.allclose(x, t([1.0, 2.1]), rtol=0.1) is True
    nan = t([math.nan])
    assert agrad.allclose(nan, nan) is False and agrad.allclose(nan, nan, equal_nan=True) is True
    assert x.allclose(x) is True and agrad.allclose(ints([1, 2]), ints([1, 2])) is True
    assert agrad.equal(x, x.clone()) is True and x.equal(t([1.0, 3.0])) is False
    assert agrad.equal(x, t([1.0])) is False                     # shapes differ: False, not an error
    assert agrad.equal(ints([1, 2, 3]), ints([1, 2, 3]).float()) is True
    assert agrad.equal(nan, nan) is False
    r = agrad.rand(2, requires_grad=True)
    assert agrad.equal(r, r) is True and agrad.allclose(r * 2, r + r) is True


def test_nonzero():
    x = t([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    out = agrad.nonzero(x)
    assert out.dtype == agrad.int64 and out.tolist() == [[0, 1], [1, 0], [1, 2]]
    assert x.nonzero().tolist() == [[0, 1], [1, 0], [1, 2]]
    assert tuple(agrad.nonzero(t(3.0)).shape) == (1, 0) and tuple(agrad.nonzero(t(0.0)).shape) == (0, 0)
    with pytest.raises(NotImplementedError):
        agrad.nonzero(x.to("meta"))


def test_nonzero_as_tuple_and_where_of_a_condition_alone():
    # torch 2.13: one int64 index tensor per dim (torch.where(cond) is nonzero(cond, as_tuple=True)); a 0-d
    # tensor counts as 1-D
    x = t([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for rows, cols in (agrad.nonzero(x, as_tuple=True), x.nonzero(as_tuple=True), agrad.where(x != 0)):
        assert rows.dtype == cols.dtype == agrad.int64
        assert (rows.tolist(), cols.tolist()) == ([0, 1, 1], [1, 0, 2])
    assert [i.tolist() for i in agrad.where(t(3.0))] == [[0]] and [i.tolist() for i in agrad.where(t(0.0))] == [[]]
    assert agrad.where(x > 0, x, 0.0).tolist() == [[0.0, 1.5, 0.0], [2.0, 0.0, 0.0]]


def test_bincount():
    assert agrad.bincount(ints([1, 2, 3])).tolist() == [0, 1, 1, 1]
    assert agrad.bincount(ints([1, 2, 3]), minlength=6).tolist() == [0, 1, 1, 1, 0, 0]
    w = agrad.bincount(ints([1, 1, 3]), t([0.5, 0.25, 2.0], dtype=agrad.float32))
    assert w.dtype == agrad.float32 and w.tolist() == [0.0, 0.75, 0.0, 2.0]
    assert agrad.bincount(ints([0, 2]), ints([3, 4])).dtype == f64        # integer weights: double
    assert agrad.bincount(agrad.tensor([1, 2], dtype=agrad.uint8), minlength=4).tolist() == [0, 1, 1, 0]
    empty = agrad.bincount(agrad.tensor(np.zeros(0, dtype=np.int64)))
    assert empty.dtype == agrad.int64 and tuple(empty.shape) == (0,)


def test_unique():
    x = ints([3, 1, 2, 3, 1])
    assert agrad.unique(x).tolist() == [1, 2, 3]
    values, inverse, counts = agrad.unique(x, return_inverse=True, return_counts=True)
    assert (values.tolist(), inverse.tolist(), counts.tolist()) == ([1, 2, 3], [2, 0, 1, 2, 0], [2, 1, 2])
    values, inverse = x.unique(return_inverse=True)
    assert inverse.dtype == agrad.int64 and inverse.tolist() == [2, 0, 1, 2, 0]
    values, counts = x.unique(sorted=True, return_counts=True)
    assert counts.tolist() == [2, 1, 2]
    v, inv = agrad.unique(t([[3.0, 1.0], [2.0, 3.0]]), return_inverse=True)
    assert v.tolist() == [1.0, 2.0, 3.0] and inv.tolist() == [[2, 0], [1, 2]]
    nan = agrad.unique(t([3.0, math.nan, math.nan])).tolist()          # NaNs stay distinct, as in PyTorch
    assert nan[0] == 3.0 and len(nan) == 3 and all(math.isnan(v) for v in nan[1:])
    r = agrad.rand(4, requires_grad=True)
    u, inv, counts = agrad.unique(r, return_inverse=True, return_counts=True)     # as PyTorch: a Node that refuses
    assert u.requires_grad and u.grad_fn.name() == "Unique2Backward0" and not inv.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not implemented."):
        u.sum().backward()


# ---- random in-place initialisers ---------------------------------------------------------------------------

RANDOM = [("uniform_", (), {}), ("uniform_", (-2.0, 3.0), {}), ("normal_", (), {}), ("normal_", (1.0, 0.5), {}),
          ("bernoulli_", (), {}), ("bernoulli_", (0.3,), {}), ("exponential_", (), {}), ("exponential_", (2.0,), {}),
          ("random_", (), {}), ("random_", (10,), {}), ("random_", (-5, 5), {})]


@pytest.mark.parametrize("name,args,kwargs", RANDOM, ids=[f"{n}{a}" for n, a, _ in RANDOM])
def test_random_methods_write_in_place_deterministically(name, args, kwargs):
    x = agrad.zeros(4, 5, dtype=agrad.float32)
    agrad.manual_seed(7)
    out = getattr(x, name)(*args, **kwargs)
    assert out is x and tuple(x.shape) == (4, 5) and x.dtype == agrad.float32 and x._version == 1
    first = x.numpy().copy()
    agrad.manual_seed(7)
    getattr(x, name)(*args, **kwargs)
    assert x._version == 2
    np.testing.assert_array_equal(x.numpy(), first)
    assert len(np.unique(first)) > 1                                      # not a constant fill


def test_random_ranges():
    agrad.manual_seed(0)
    n = 4000
    u = agrad.empty(n).uniform_(-2.0, 3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    g = agrad.empty(n, dtype=f64).normal_(1.0, 0.5).numpy()
    assert abs(g.mean() - 1.0) < 0.05 and abs(g.std() - 0.5) < 0.05
    b = agrad.empty(n).bernoulli_(0.3).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.05
    e = agrad.empty(n).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.05
    r = agrad.empty(n).random_(-5, 5).numpy()
    assert set(np.unique(r)) == set(range(-5, 5))
    assert set(np.unique(agrad.empty(n).random_(3).numpy())) == {0.0, 1.0, 2.0}
    big = agrad.empty(n).random_().numpy()
    assert big.min() >= 0 and big.max() <= 2 ** 24 and big.max() > 2 ** 20
    assert set(np.unique(agrad.zeros(n, dtype=agrad.bool_).random_().numpy())) == {False, True}
    u8 = agrad.zeros(n, dtype=agrad.uint8).random_().numpy()
    assert u8.min() >= 0 and u8.max() <= 255 and u8.max() > 200
    i = agrad.zeros(n, dtype=agrad.int64).random_(2, None).numpy()
    assert i.min() >= 2 and i.max() > 2 ** 60
    assert set(np.unique(agrad.zeros(n, dtype=agrad.int64).bernoulli_().numpy())) == {0, 1}
    assert agrad.zeros(3).uniform_(2.0, 2.0).tolist() == [2.0, 2.0, 2.0]


def test_random_draws_from_the_global_generator():
    agrad.manual_seed(3)
    a = agrad.empty(6).uniform_().numpy().copy()
    b = agrad.empty(6).uniform_().numpy()
    assert not np.array_equal(a, b)                                     # the generator moves on
    agrad.manual_seed(3)
    np.testing.assert_array_equal(agrad.rand(6).numpy(), a)            # the same stream as agrad.rand


@pytest.mark.parametrize("call,error,message", [
    (lambda: agrad.zeros(3, dtype=agrad.int64).uniform_(), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda: agrad.zeros(3, dtype=agrad.int64).normal_(), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda: agrad.zeros(3, dtype=agrad.int64).exponential_(), RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you "
     "specified Long"),
    (lambda: agrad.zeros(3).uniform_(1, 0), RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    (lambda: agrad.zeros(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda: agrad.zeros(3).bernoulli_(2), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=2"),
    (lambda: agrad.zeros(3).bernoulli_(-0.1), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=-0.1"),
    (lambda: agrad.zeros(3).bernoulli_(agrad.rand(3)), TypeError,
     "bernoulli_(): agrad takes p as a float (PyTorch's bernoulli_(Tensor p) is not supported)"),
    (lambda: agrad.zeros(3).exponential_(0), RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: agrad.zeros(3).random_(5, 3), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda: agrad.zeros(3).random_(0), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
    (lambda: agrad.zeros(3, dtype=agrad.uint8).random_(-1, 3), RuntimeError,
     "from is out of bounds for unsigned char"),
    (lambda: agrad.zeros(3, dtype=agrad.uint8).random_(0, 300), RuntimeError,
     "to - 1 is out of bounds for unsigned char"),
    (lambda: agrad.zeros(3, dtype=agrad.int16).random_(0, 2 ** 40), RuntimeError,
     "to - 1 is out of bounds for short int"),
    (lambda: agrad.zeros(3, dtype=agrad.bool_).random_(0, 3), RuntimeError, "to - 1 is out of bounds for bool"),
    (lambda: agrad.zeros(3).fill_diagonal_(1), RuntimeError, "dimensions must larger than 1"),
    (lambda: agrad.zeros(2, 3, 4).fill_diagonal_(1), RuntimeError, "all dimensions of input must be of equal length"),
])
def test_random_bad_input(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("name,args,node", [("uniform_", (), "UniformBackward0"), ("normal_", (), "NormalBackward0"),
                                            ("bernoulli_", (0.5,), "BernoulliBackward2"),
                                            ("exponential_", (), "ExponentialBackward0"),
                                            ("random_", (), "RandomBackward2"), ("random_", (5,), "RandomBackward1"),
                                            ("random_", (1, 5), "RandomBackward0")])
def test_random_methods_and_autograd(name, args, node):
    w = agrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^a leaf Variable that requires grad is being used in an in-place "
                                           r"operation\.$"):
        getattr(w, name)(*args)
    assert w._version == 0 and w.tolist() == [0.0, 0.0, 0.0]
    with agrad.no_grad():
        getattr(w, name)(*args)                     # allowed under no_grad, as in PyTorch
    assert w._version == 1 and w.is_leaf
    y = w * 2
    getattr(y, name)(*args)
    assert type(y.grad_fn).__name__ == node and y._version == 1
    (y * 3).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]        # the values no longer depend on w


def test_fill_diagonal():
    assert agrad.zeros(2, 3).fill_diagonal_(1).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert agrad.zeros(3, 7).fill_diagonal_(1, wrap=True).numpy().sum() == 3
    tall = agrad.zeros(7, 3).fill_diagonal_(1, wrap=True).tolist()
    assert tall == [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert agrad.zeros(7, 3).fill_diagonal_(1).numpy().sum() == 3
    cube = agrad.zeros(2, 2, 2, dtype=agrad.int64).fill_diagonal_(5)
    assert cube.tolist() == [[[5, 0], [0, 0]], [[0, 0], [0, 5]]]
    x = agrad.zeros(3, 3)
    x.fill_diagonal_(2.0)
    assert x._version == 1
    w = agrad.ones(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        w.fill_diagonal_(1)
    y = w * 1
    y.fill_diagonal_(0.5)
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    assert w.grad.tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def test_float_power_inplace_needs_a_double_self():
    for dtype, name in ((agrad.float32, "Float"), (agrad.int64, "Long")):
        with pytest.raises(RuntimeError) as info:
            agrad.zeros(2, dtype=dtype).float_power_(2)
        assert str(info.value) == (f"the base given to float_power_ has dtype {name} but the operation's result "
                                   f"requires dtype Double")
    x = t([2.0, 3.0])
    assert x.float_power_(ints([1, 2])) is x and x.tolist() == [2.0, 9.0] and x._version == 1
    y = t([2.0], requires_grad=True) * 1
    y.float_power_(2)
    assert type(y.grad_fn).__name__ == "PowBackward0"


def test_random_methods_and_bool_ops_on_standin_cuda(standin_cuda):
    x = agrad.zeros(3, 4, device="cuda")
    agrad.manual_seed(5)
    x.uniform_(-1.0, 1.0)
    agrad.manual_seed(5)
    cpu = agrad.zeros(3, 4).uniform_(-1.0, 1.0)
    assert x.device.type == "cuda" and x._version == 1
    np.testing.assert_array_equal(x.cpu().numpy(), cpu.numpy())      # the same numbers on every device
    x.fill_diagonal_(7.0)
    x.random_(0, 3)
    assert x.device.type == "cuda" and set(np.unique(x.cpu().numpy())) <= {0.0, 1.0, 2.0}
    assert agrad.allclose(x, x) is True and agrad.equal(x, x.clone()) is True
    values, counts = agrad.unique(x.long(), return_counts=True)
    assert values.device.type == "cuda" and int(counts.sum().item()) == 12


def test_random_past_a_floats_exact_integers_warns():
    with pytest.warns(UserWarning, match=r"^to - 1 is out of bounds \[-\(2\^24\), 2\^24\]. Due to precision "
                                         r"limitations float can support"):
        agrad.zeros(3).random_(0, 2 ** 25)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for c10::Half$"):
        agrad.zeros(3, dtype=agrad.float16).random_(0, 70000)


def test_random_keyword_forms():
    w = agrad.zeros(50, requires_grad=True) * 1
    assert type(w.random_(to=5).grad_fn).__name__ == "RandomBackward1" and w.detach().numpy().max() < 5
    assert type(w.random_(**{"from": 3, "to": 5}).grad_fn).__name__ == "RandomBackward0"
    assert set(np.unique(w.detach().numpy())) <= {3.0, 4.0}
    x = agrad.zeros(50).uniform_(**{"from": 4.0, "to": 5.0}).numpy()
    assert x.min() >= 4.0 and x.max() < 5.0


def test_more_inplace_variants():
    w = t([0.5, 90.0], requires_grad=True)
    y = w * 1
    y.deg2rad_()
    assert type(y.grad_fn).__name__ == "Deg2RadBackward0" and y._version == 1
    np.testing.assert_allclose(y.tolist(), [math.pi / 360, math.pi / 2])
    y.rad2deg_()
    y.sinc_()
    assert type(y.grad_fn).__name__ == "SincBackward0"
    h = t([-1.0, 0.0, 3.0])
    assert h.heaviside_(t([0.5])) is h and h.tolist() == [0.0, 0.5, 1.0] and h._version == 1


def test_unique_along_a_dim():
    x = t([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]]).requires_grad_()
    values, inverse, counts = agrad.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert values.tolist() == [[0.0, 5.0], [1.0, 2.0]] and inverse.tolist() == [1, 1, 0] and counts.tolist() == [1, 2]
    assert values.grad_fn.name() == "UniqueDimBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_dim' is not implemented."):
        values.sum().backward()
    assert x.unique(dim=1).tolist() == [[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]]


def test_segment_reduce_ties_messages_and_no_double_backward():
    # torch 2.13's values: tied maxima share a positive gradient and each keep a negative one (ATen's kernel)
    x = t([3.0, 3.0, 1.0, 3.0, -2.0, -2.0], dtype=f64, requires_grad=True)
    out = agrad.segment_reduce(x, "max", lengths=ints([4, 2]))
    assert out.tolist() == [3.0, -2.0] and out.grad_fn.name() == "SegmentReduceBackward0"
    up, = agrad.autograd.grad(out, x, t([1.0, 1.0], dtype=f64), retain_graph=True)
    np.testing.assert_allclose(up.tolist(), [1 / 3, 1 / 3, 0.0, 1 / 3, 0.5, 0.5])
    down, = agrad.autograd.grad(out, x, t([-1.0, -1.0], dtype=f64))
    assert down.tolist() == [-1.0, -1.0, 0.0, -1.0, -1.0, -1.0]
    y = t([2.0, 0.0, 3.0, 0.0, 0.0, 5.0], dtype=f64, requires_grad=True)
    prod = agrad.segment_reduce(y, "prod", lengths=ints([3, 2, 1]), initial=2.0)
    assert prod.tolist() == [0.0, 0.0, 10.0]
    assert agrad.autograd.grad(prod.sum(), y)[0].tolist() == [0.0, 12.0, 0.0, 0.0, 0.0, 2.0]
    data = t([[1.0, 5.0], [3.0, 5.0]], dtype=f64, requires_grad=True)
    for kwargs, message in (({}, "Either lengths or offsets must be defined"),
                            ({"lengths": ints([1, 1]), "indices": ints([0, 1])}, "indices based reduction"),
                            ({"lengths": ints([1, 2])}, "Expected all rows of lengths along axis"),
                            ({"lengths": ints([[1, 1], [2, 0]])}, "Expected axis to be the last dimension of lengths")):
        with pytest.raises(RuntimeError, match=message):
            agrad.segment_reduce(data, "sum", **kwargs)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got foo"):
        agrad.segment_reduce(data, "foo", lengths=ints([1, 1]))
    first, = agrad.autograd.grad(agrad.segment_reduce(data, "sum", lengths=ints([1, 1])).sum(), data, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_segment_reduce_backward is not implemented"):
        agrad.autograd.grad(first.sum(), data)


def test_slice_inverse_views_the_slices_base():
    # torch 2.13: a view of the slice's storage (its base's) with src's geometry; self's gradient is grad's
    # slice, src's grad with the slice's positions zeroed
    x = agrad.arange(10.0, requires_grad=True)
    base = x * 1
    part = base[2:8:2]
    src = agrad.arange(100.0, 110.0, requires_grad=True)
    inv = agrad.slice_inverse(part, src, 0, 2, 8, 2)
    assert inv.tolist() == list(range(10)) and inv._base is base and inv.grad_fn.name() == "SliceInverseBackward0"
    gx, gsrc = agrad.autograd.grad(inv, [x, src], agrad.arange(10.0))
    assert gx.tolist() == [0, 0, 2, 0, 4, 0, 6, 0, 0, 0] and gsrc.tolist() == [0, 1, 0, 3, 0, 5, 0, 7, 8, 9]
    assert tuple(part.slice_inverse(src, 0, 2, 8, 2).shape) == (10,)
