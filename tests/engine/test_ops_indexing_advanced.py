"""Indexing with integer tensors (engine/ops/shape/advanced_indexing.py), beyond the generated
tests: what gradcheck cannot confirm (embedding's padding row, scale_grad_by_freq,
amax/amin ties), PyTorch's errors, deterministic repeats, and `x[idx]` subscripts.
Expected values were computed with PyTorch 2.13.0."""
import numpy as np
import pytest

import agrad


def f64(values, requires_grad=False):
    return agrad.tensor(values, dtype=agrad.float64, requires_grad=requires_grad)


def long(values):
    return agrad.tensor(values, dtype=agrad.int64)


# ---- embedding ---------------------------------------------------------------------------------

def test_embedding_padding_row_gets_no_gradient_and_rows_scale_by_frequency():
    w = agrad.tensor(np.arange(8.0).reshape(4, 2), dtype=agrad.float64, requires_grad=True)
    out = agrad.embedding(long([[3, 0], [3, 1]]), w, padding_idx=3, scale_grad_by_freq=True)
    assert out.grad_fn.name() == "EmbeddingBackward0"
    np.testing.assert_array_equal(out.detach().numpy()[0, 0], [6.0, 7.0])     # the padding row is still read
    out.backward(f64([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]))
    np.testing.assert_array_equal(w.grad.numpy(), [[3, 4], [7, 8], [0, 0], [0, 0]])


def test_embedding_scale_grad_by_freq_divides_by_count():
    w = f64(np.ones((4, 2)), requires_grad=True)
    agrad.embedding(long([0, 2, 0, 0]), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [1, 1], [0, 0]])


def test_embedding_double_backward_zeroes_the_padding_row():
    w = f64(np.ones((3, 2)), requires_grad=True)
    idx = long([2, 1, 2])
    out = agrad.embedding(idx, w, padding_idx=-1)
    go = f64(np.arange(6.0).reshape(3, 2), requires_grad=True)
    (g,) = agrad.autograd.grad([out], [w], [go], create_graph=True)
    (gg,) = agrad.autograd.grad([(g * f64([[1, 1], [10, 10], [100, 100]])).sum()], [go])
    np.testing.assert_array_equal(gg.numpy(), [[0, 0], [10, 10], [0, 0]])


@pytest.mark.parametrize("call,error,message", [
    (lambda w: agrad.embedding(long([4]), w), IndexError, "index out of range in self"),
    (lambda w: agrad.embedding(f64([1.0]), w), RuntimeError, "to have one of the following scalar types: Long, Int"),
    (lambda w: agrad.embedding(long([1]), w, padding_idx=4), AssertionError, "Padding_idx must be within"),
    (lambda w: agrad.embedding(long([1]), w[0]), RuntimeError, "'weight' must be 2-D"),
    (lambda w: agrad.embedding(long([1]), w, max_norm=1.0), NotImplementedError, "renormalises rows of weight"),
    (lambda w: agrad.embedding(long([1]), w, sparse=True), NotImplementedError, "no sparse gradients"),
])
def test_embedding_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(f64(np.ones((4, 2))))


# ---- gather / scatter ----------------------------------------------------------------------------

@pytest.mark.parametrize("call,message", [
    (lambda x: agrad.gather(x, 1, long([[5]])), "index 5 is out of bounds for dimension 1 with size 4"),
    (lambda x: agrad.gather(x, 1, long([[-1]])), "index -1 is out of bounds for dimension 1 with size 4"),
    (lambda x: agrad.gather(x, 1, f64([[1.0]])), r"gather\(\): Expected dtype int32/int64 for index"),
    (lambda x: agrad.gather(x, 1, long([1])), "Index tensor must have the same number of dimensions"),
    (lambda x: agrad.gather(x, 1, agrad.zeros(4, 1, dtype=agrad.int64)),
     r"Size does not match at dimension 0 expected index \[4, 1\] to be no larger than self \[3, 4\]"),
    (lambda x: agrad.scatter_add(x, 1, agrad.zeros(4, 1, dtype=agrad.int64), f64(np.ones((4, 1)))),
     r"Expected index \[4, 1\] to be no larger than self \[3, 4\] apart from dimension 1 and to be no larger "
     r"size than src \[4, 1\]"),
    (lambda x: agrad.scatter_add(x, 1, long([[0]]), agrad.ones(1, 1)),
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda x: agrad.scatter_add(x, 1, long([[7]]), f64([[1.0]])), "index 7 is out of bounds for dimension 1"),
    (lambda x: agrad.scatter_reduce(x, 1, long([[0]]), f64([[1.0]]), "foo"),
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda x: agrad.scatter(x, 1, long([[0]]), f64([[1.0]]), reduce="foo"),
     "reduce argument must be either add or multiply."),
])
def test_gather_scatter_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(f64(np.zeros((3, 4))))


def test_scatter_with_repeated_indices_is_deterministic():
    x = f64(np.zeros(4))
    outs = {tuple(agrad.scatter(x, 0, long([1, 1, 1]), f64([1.0, 2.0, 3.0])).numpy()) for _ in range(5)}
    assert outs == {(0.0, 3.0, 0.0, 0.0)}            # the last write wins, every time


def test_scatter_value_overload_and_legacy_reduce():
    x = f64(np.ones((2, 3)), requires_grad=True)
    out = agrad.scatter(x, 1, long([[2], [0]]), 5.0)
    assert out.grad_fn.name() == "ScatterBackward1"
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 1, 5], [5, 1, 1]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1, 0], [0, 1, 1]])
    summed = agrad.scatter(x.detach(), 1, long([[2, 2]]), f64([[2.0, 3.0]]), reduce="add")
    np.testing.assert_array_equal(summed.numpy(), [[1, 1, 6], [1, 1, 1]])
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        agrad.scatter(x, 1, long([[2]]), 2.0, reduce="multiply").sum().backward()


@pytest.mark.parametrize("reduce,include_self,result,grad_self,grad_src", [
    ("amax", True, [1, 3, 3, 0], [1, 0.5, 0.5, 1], [0.5, 0, 0.5]),       # ties share the gradient
    ("amin", False, [1, 2, 3, 0], [1, 0, 0, 1], [0, 1, 0.5]),
])
def test_scatter_reduce_ties_as_pytorch(reduce, include_self, result, grad_self, grad_src):
    x = f64([[1.0, 3.0, 3.0, 0.0]], requires_grad=True)
    src = f64([[3.0, 2.0, 3.0]], requires_grad=True)
    out = agrad.scatter_reduce(x, 1, long([[1, 1, 2]]), src, reduce, include_self=include_self)
    out.backward(agrad.ones_like(out))
    np.testing.assert_array_equal(out.detach().numpy(), [result])
    np.testing.assert_array_equal(x.grad.numpy(), [grad_self])
    np.testing.assert_array_equal(src.grad.numpy(), [grad_src])


def test_scatter_reduce_prod_with_a_zero():
    x = f64([[1.0, 3.0, 3.0, 0.0]], requires_grad=True)
    src = f64([[3.0, 2.0, 3.0]], requires_grad=True)
    out = agrad.scatter_reduce(x, 1, long([[1, 1, 3]]), src, "prod")
    out.backward(f64([[1.0, 2.0, 3.0, 4.0]]))
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 18, 3, 0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 12, 3, 12]])
    np.testing.assert_array_equal(src.grad.numpy(), [[12, 18, 0]])


@pytest.mark.parametrize("include_self,expected", [(True, [3, 7, 6]), (False, [3, 7, 4])])
def test_scatter_reduce_integer_mean_floors(include_self, expected):
    out = agrad.scatter_reduce(long([5, 7, 9]), 0, long([0, 0, 2]), long([2, 4, 4]), "mean",
                               include_self=include_self)
    assert out.dtype == agrad.int64
    np.testing.assert_array_equal(out.numpy(), expected)


def test_integer_index_gets_no_gradient():
    x = f64(np.ones((2, 3)), requires_grad=True)
    out = agrad.gather(x, 1, long([[0, 0], [2, 1]]))
    assert len(out.grad_fn.next_functions) == 1        # an edge to x only
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2, 0, 0], [0, 1, 1]])


# ---- index_select / index_add / one_hot / masked_select / take_along_dim -------------------------

@pytest.mark.parametrize("call,error,message", [
    (lambda x: agrad.index_select(x, 1, long([7])), RuntimeError,
     "INDICES element is out of DATA bounds, id=7 axis_dim=4"),
    (lambda x: agrad.index_select(x, 0, long([5])), IndexError, "index out of range in self"),   # PyTorch's dim-0 path
    (lambda x: agrad.index_select(x, 1, long([[1]])), IndexError, "Index is supposed to be a vector"),
    (lambda x: agrad.index_select(x, 1, f64([1.0])), RuntimeError, "Expected dtype int32 or int64 for index"),
    (lambda x: agrad.index_add(x, 1, long([1]), f64(np.ones((3, 2)))), RuntimeError,
     r"Number of indices \(1\) should be equal to source.size\(dim\): \(2\), for dim: 1"),
    (lambda x: agrad.index_add(x, 1, long([1]), agrad.ones(3, 1)), RuntimeError,
     r"self \(Double\) and source \(Float\) must have the same scalar type"),
    (lambda x: agrad.index_add(x, 1, long([9]), f64(np.ones((3, 1)))), RuntimeError,
     "index 9 is out of bounds for dimension 1 with size 4"),
    (lambda x: agrad.one_hot(long([1, 5]), 3), RuntimeError, "Class values must be smaller than num_classes."),
    (lambda x: agrad.one_hot(long([-1]), 3), RuntimeError, "Class values must be non-negative."),
    (lambda x: agrad.one_hot(f64([1.0])), RuntimeError, "one_hot is only applicable to index tensor of type Long"),
    (lambda x: agrad.masked_select(x, long([1, 0, 1, 0])), RuntimeError, "expected BoolTensor for mask"),
    (lambda x: agrad.take_along_dim(x, agrad.tensor([[1]], dtype=agrad.int32), 1), RuntimeError,
     "dtype of indices should be Long but got Int"),
    (lambda x: agrad.take_along_dim(x, long([1]), 1), RuntimeError,
     "input and indices should have the same number of dimensions"),
])
def test_index_op_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(f64(np.zeros((3, 4))))


def test_one_hot_infers_num_classes():
    out = agrad.one_hot(long([[0, 3], [1, 1]]))
    assert out.dtype == agrad.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out.numpy()[0, 1], [0, 0, 0, 1])


def test_index_add_accumulates_repeats():
    out = agrad.index_add(f64(np.zeros((3, 2))), 0, long([2, 0, 2]), f64([[1, 2], [3, 4], [5, 6]]), alpha=2)
    np.testing.assert_array_equal(out.numpy(), [[6, 8], [0, 0], [12, 16]])


# ---- subscripts with tensors, lists and masks -----------------------------------------------------

def test_subscripts_match_numpy_and_record_index_backward():
    data = np.arange(24.0).reshape(2, 3, 4)
    x = f64(data, requires_grad=True)
    cases = [
        (lambda t: t[long([1, 0, 1])], lambda a: a[[1, 0, 1]]),
        (lambda t: t[:, [0, 2]], lambda a: a[:, [0, 2]]),
        (lambda t: t[..., [-1]], lambda a: a[..., [-1]]),
        (lambda t: t[1, [0, 2], 1:3], lambda a: a[1][[0, 2], 1:3]),
        (lambda t: t[long([[0], [1]]), :, long([3, 0])], lambda a: a[[[0], [1]], :, [3, 0]]),
        (lambda t: t[[True, False]], lambda a: a[[True, False]]),
        (lambda t: t[t > 20], lambda a: a[a > 20]),
        (lambda t: t[:, agrad.tensor([[True, False, True, False]] * 3)], lambda a: a[:, np.array([[1, 0, 1, 0]] * 3,
                                                                                                 dtype=bool)]),
    ]
    for index, expected in cases:
        out = index(x)
        np.testing.assert_array_equal(out.detach().numpy(), expected(data))
        assert out.grad_fn.name() == "IndexBackward0"


def test_subscript_gradient_accumulates_repeated_indices():
    x = f64(np.zeros((3, 2)), requires_grad=True)
    x[long([2, 0, 2])].backward(f64([[1, 2], [3, 4], [5, 6]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[3, 4], [0, 0], [6, 8]])


@pytest.mark.parametrize("index,error,message", [
    (lambda: long([5]), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: (slice(None), long([-5])), IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
    (lambda: f64([1.0]), IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: agrad.tensor([True, False]), IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3, 4\] at index 0"),
    (lambda: (long([0]), long([0]), long([0])), IndexError, "too many indices for tensor of dimension 2"),
])
def test_subscript_errors(index, error, message):
    with pytest.raises(error, match=message):
        f64(np.zeros((3, 4)))[index()]


def test_subscripts_on_meta():
    x = agrad.empty(3, 4, 5, device="meta")
    assert x[long([0, 2]), :, long([1, 1])].shape == (2, 4)
    assert x[:, [[0], [1]], long([1, 2, 3])].shape == (3, 2, 3)
    with pytest.raises(NotImplementedError, match="bool mask"):
        x[agrad.empty(3, dtype=agrad.bool_, device="meta")]


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_scatter_without_ufunc_at_matches_numpy(name, dtype):
    """The form CuPy takes (no `ufunc.at`; a float sum is a bincount): as NumPy's ufunc.at."""
    import types

    from agrad.ops.shape.advanced_indexing import _at
    fake = types.SimpleNamespace(**{n: getattr(np, n) for n in
                                    ("add", "multiply", "maximum", "minimum", "argsort", "empty_like", "arange",
                                     "searchsorted", "bincount", "broadcast_to")})
    rng = np.random.default_rng(3)
    positions = rng.integers(0, 5, size=40)
    for shape in [(5,), (5, 3)]:
        values = rng.integers(1, 4, size=(40,) + shape[1:]).astype(dtype) if dtype == np.int64 else \
            rng.uniform(0.5, 1.5, size=(40,) + shape[1:])
        expected, got = np.ones(shape, dtype), np.ones(shape, dtype)
        getattr(np, name).at(expected, positions, values)
        _at(fake, name, got, positions, values)
        np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_zero_dim_integer_tensor_index_is_an_integer():
    x = f64(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = x[long(1), long([2, 0])]
    np.testing.assert_array_equal(out.detach().numpy(), [5, 3])
    assert x[long(1)].grad_fn.name() == "SelectBackward0"      # as PyTorch


@pytest.mark.skipif(not hasattr(agrad, "uint8"), reason="needs the uint8 dtype")
def test_byte_tensor_indexes_as_a_mask():
    x = f64(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x[agrad.tensor([0, 1], dtype=agrad.uint8)].numpy(), [[3, 4, 5]])


# ---- index_reduce (engine/ops/shape/index_reduce.py) ----------------------------------------------

@pytest.mark.parametrize("call,error,message", [
    (lambda x: agrad.index_reduce(x, 1, long([0]), f64([[1.0]] * 3), "sum"), RuntimeError,
     r"index_reduce\(\): Expected reduce to be one of prod, mean, amax or amin but got sum."),
    (lambda x: agrad.index_reduce(x, 1, long([0]), agrad.ones(3, 1), "prod"), RuntimeError,
     r"index_reduce_\(\): self \(Double\) and source \(Float\) must have the same scalar type"),
    (lambda x: agrad.index_reduce(x, 1, f64([0.0]), f64([[1.0]] * 3), "prod"), RuntimeError,
     r"index_reduce_\(\): Expected dtype int32/int64 for index but got: Double"),
    (lambda x: agrad.index_reduce(x, 1, long([0, 1, 2]), f64([[1.0]] * 3), "prod"), RuntimeError,
     r"index_reduce_\(\): Number of indices \(3\) should be equal to source.size\(dim\): \(1\), for dim: 1"),
    (lambda x: agrad.index_reduce(x, 1, long([-1]), f64([[1.0]] * 3), "prod"), IndexError,
     "index out of range in self"),
    (lambda x: agrad.index_reduce(x, 1, long([[0]]), f64([[1.0]] * 3), "prod"), IndexError,
     r"index_reduce_\(\): Index is supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 1\]"),
])
def test_index_reduce_errors_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call(f64(np.zeros((3, 4))))


def test_index_reduce_amin_without_self_and_integer_mean_as_pytorch():
    x = f64([[1.0, 3.0, 3.0, 0.0]], requires_grad=True)
    src = f64([[3.0, 2.0, 3.0]], requires_grad=True)
    out = x.index_reduce(1, long([1, 1, 2]), src, "amin", include_self=False)
    out.backward(agrad.ones_like(out))
    assert out.grad_fn.name() == "IndexReduceBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 2, 3, 0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 0, 1]])
    np.testing.assert_array_equal(src.grad.numpy(), [[0, 1, 0.5]])
    mean = agrad.index_reduce(long([5, 7, 9]), 0, long([0, 0, 2]), long([2, 3, 4]), "mean", include_self=False)
    np.testing.assert_array_equal(mean.numpy(), [2, 7, 4])


def test_index_reduce_prod_two_zeros_in_one_slot_fails_only_in_double_backward():
    src = f64([[0.0, 2.0, 0.0]], requires_grad=True)
    x = f64(np.ones((1, 2)), requires_grad=True)
    out = x.index_reduce(1, long([0, 1, 0]), src, "prod")
    g, = agrad.autograd.grad(out.sum(), src, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [[0, 1, 0]])      # PyTorch's values
    with pytest.raises(RuntimeError, match=r"index_reduce\(\): Double backward is unsupported for source when >1 "
                                           r"zeros in source are scattered to the same position in self"):
        g.sum().backward()


def test_index_reduce_in_place():
    x = f64([[1.0, 2.0], [3.0, 4.0]])
    assert x.index_reduce_(0, long([1]), f64([[5.0, 0.5]]), "amax") is x
    np.testing.assert_array_equal(x.numpy(), [[1, 2], [5, 4]])


def test_as_strided_scatter_gradient_of_self_is_grad_off_the_written_positions():
    # PyTorch 2.13's own formula gives grad on the written positions instead (it fails torch's gradcheck),
    # so the reference fixtures record src's gradient only; self's is checked against finite differences
    x = agrad.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=agrad.float64, requires_grad=True)
    src = agrad.tensor([0.5, -1.0], dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(lambda a, b: agrad.as_strided_scatter(a, b, [2], [3], 1), (x, src))
    grad = agrad.arange(6.0, dtype=agrad.float64).reshape(2, 3)
    gx, gsrc = agrad.autograd.grad(agrad.as_strided_scatter(x, src, [2], [3], 1), (x, src), grad)
    assert gx.tolist() == [[0.0, 0.0, 2.0], [3.0, 0.0, 5.0]] and gsrc.tolist() == [1.0, 4.0]


def test_0d_bool_tensor_indexes_as_a_python_bool():
    # PyTorch: a 0-d bool tensor is a 0-d mask, a new dimension of size 1 (True) or 0 (False), read or written
    x = agrad.arange(6.0).reshape(2, 3)
    assert x[agrad.tensor(True)].shape == (1, 2, 3)
    assert x[agrad.tensor(False), 0].shape == (0, 3)
    assert x[..., agrad.tensor(True)].shape == (2, 3, 1)
    y = agrad.tensor(-2.0, requires_grad=True) * 1
    y[y <= 0] = float("nan")                       # torch.distributions.Wishart.mode of an unbatched Wishart
    assert y.isnan().item() and type(y.grad_fn).__name__ == "CopySlices"


# ---- a list holding slices or sequences indexes as a tuple (PyTorch's treatSequenceAsTuple) ------

_SEQUENCE_WARNING = "Using a non-tuple sequence for multidimensional indexing is deprecated"


@pytest.mark.parametrize("index, shape", [
    ([slice(None), [2, 3]], (4, 2)),          # x[:, [2, 3]]
    ([[2, 3], slice(None)], (2, 4)),
    ([[0, 1], [1, 0]], (2,)),                 # x[[0, 1], [1, 0]]: two index lists, not one 2-d index
    ([[0, 1]], (2, 4)),
    ([None, 1], (1, 4)),
    ([Ellipsis, 1], (4,)),
])
def test_a_list_holding_slices_or_sequences_indexes_as_a_tuple(index, shape):
    x = agrad.arange(16.0, dtype=agrad.float64).view(4, 4).requires_grad_()
    with pytest.warns(UserWarning, match=_SEQUENCE_WARNING):
        y = x[index]
    assert tuple(y.shape) == shape
    np.testing.assert_array_equal(y.detach().numpy(), np.arange(16.0).reshape(4, 4)[tuple(index)])
    y.sum().backward()
    expected = np.zeros((4, 4))
    np.add.at(expected, tuple(index), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_a_list_of_integers_or_of_32_sequences_is_one_index_tensor():
    x = agrad.arange(16.0).view(4, 4)
    assert tuple(x[[0, 1]].shape) == (2, 4)                   # no warning: one index tensor
    assert tuple(x[[[0, 1]] * 32].shape) == (32, 2, 4)        # 32 elements or more: never a tuple
    assert tuple(x[np.array([[0, 1], [1, 0]])].shape) == (2, 2, 4)   # an ndarray is one index tensor


def test_setitem_with_a_list_holding_a_slice_writes_the_tuple_index():
    x = agrad.zeros(5, 5, 5, dtype=agrad.float64)
    with pytest.warns(UserWarning, match=_SEQUENCE_WARNING):
        x[[slice(None), [2, 4], [1, 3]]] = 1.0
    expected = np.zeros((5, 5, 5))
    expected[:, [2, 4], [1, 3]] = 1.0
    np.testing.assert_array_equal(x.numpy(), expected)
