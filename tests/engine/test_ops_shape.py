"""squeeze/unsqueeze/flatten, cat/stack/split/chunk/unbind and basic slicing:
values against NumPy, PyTorch's grad_fn names and error messages, gradients of
Tensor[] inputs and outputs (which the generated tests cannot perturb), and the
select/slice backward ops differentiated again."""
import numpy as np
import pytest

import agrad
from agrad.testing import gradcheck, gradgradcheck


def arange(*shape, requires_grad=True):
    t = agrad.tensor(np.arange(float(np.prod(shape))).reshape(shape), dtype="float64")
    return t.requires_grad_(requires_grad)


def rand(*shape, seed=0):
    values = np.random.default_rng(seed).uniform(-2, 2, size=shape)
    return agrad.tensor(values, dtype="float64", requires_grad=True)


def chain(t):
    """grad_fn names from `t` back to the leaf, following input 0."""
    names, fn = [], t.grad_fn
    while fn is not None and fn.name() != "torch::autograd::AccumulateGrad":
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    return names


def raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == message


# ---- squeeze / unsqueeze / flatten ---------------------------------------------------------

def test_squeeze_values_and_names():
    x = arange(1, 3, 1, 2)
    ref = np.arange(6.0).reshape(1, 3, 1, 2)
    assert x.squeeze().shape == (3, 2) and chain(x.squeeze()) == ["SqueezeBackward0"]
    assert agrad.squeeze(x, 2).shape == (1, 3, 2) and chain(agrad.squeeze(x, 2)) == ["SqueezeBackward1"]
    assert agrad.squeeze(x, 1).shape == (1, 3, 1, 2)          # not of size 1: unchanged
    y = agrad.squeeze(x, [0, -2, 1])
    assert y.shape == (3, 2) and chain(y) == ["SqueezeBackward2"]
    np.testing.assert_array_equal(y.detach().numpy(), np.squeeze(ref, (0, 2)))
    assert agrad.squeeze(x, []).shape == (1, 3, 1, 2)
    assert agrad.squeeze(arange(), 0).shape == ()
    (g,) = agrad.autograd.grad(y, [x], agrad.ones(3, 2, dtype="float64"))
    assert g.shape == (1, 3, 1, 2)


def test_squeeze_errors():
    x = arange(1, 3)
    raises(RuntimeError, "dim 0 appears multiple times in the list of dims", agrad.squeeze, x, [0, -2])
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)", agrad.squeeze, x, 2)


def test_unsqueeze():
    x = arange(2, 3)
    for dim, shape in [(0, (1, 2, 3)), (2, (2, 3, 1)), (-1, (2, 3, 1)), (-3, (1, 2, 3))]:
        y = x.unsqueeze(dim)
        assert y.shape == shape and chain(y) == ["UnsqueezeBackward0"]
        np.testing.assert_array_equal(y.detach().numpy(), np.expand_dims(np.arange(6.0).reshape(2, 3), dim))
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)", x.unsqueeze, 3)
    (g,) = agrad.autograd.grad(x.unsqueeze(1).sum(), [x], create_graph=True)
    assert g.shape == (2, 3)


def test_flatten():
    x = arange(2, 3, 4)
    ref = np.arange(24.0).reshape(2, 3, 4)
    assert x.flatten().shape == (24,) and chain(x.flatten()) == ["ViewBackward0"]
    np.testing.assert_array_equal(x.flatten(1).detach().numpy(), ref.reshape(2, 12))
    assert agrad.flatten(x, 0, 1).shape == (6, 4)
    assert x.flatten(1, 1) is x               # PyTorch returns the input itself
    assert agrad.flatten(arange()).shape == (1,)
    assert agrad.flatten(agrad.zeros(2, 0, 3), 0, 1).shape == (0, 3)
    raises(RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim", x.flatten, 2, 1)
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)", x.flatten, 3)


# ---- cat / stack ---------------------------------------------------------------------------

def test_cat_values_grads_and_dtype():
    a, b = rand(2, 3, seed=1), rand(2, 1, seed=2)
    y = agrad.cat([a, b], -1)
    assert chain(y) == ["CatBackward0"]
    np.testing.assert_array_equal(y.detach().numpy(), np.concatenate([a.detach().numpy(), b.detach().numpy()], 1))
    weights = np.arange(8.0).reshape(2, 4)
    ga, gb = agrad.autograd.grad(y, [a, b], agrad.tensor(weights, dtype="float64"))
    np.testing.assert_array_equal(ga.numpy(), weights[:, :3])
    np.testing.assert_array_equal(gb.numpy(), weights[:, 3:])
    f32 = agrad.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    mixed = agrad.cat([f32, agrad.tensor([3.0], dtype="float64")])
    assert mixed.dtype == agrad.float64
    mixed.sum().backward()
    assert f32.grad.dtype == agrad.float32
    assert agrad.cat([agrad.tensor([1, 2]), agrad.tensor([0.5], dtype="float32")]).dtype == agrad.float32


def test_cat_skips_legacy_empty_tensors():
    empty = agrad.tensor(np.zeros(0), dtype="float64", requires_grad=True)
    x = rand(2, 3)
    y = agrad.cat([empty, x, empty], 1)
    assert y.shape == (2, 3)
    y.sum().backward()
    assert empty.grad.shape == (0,)
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))
    assert agrad.cat([agrad.zeros(0), agrad.zeros(0)]).shape == (0,)


def test_cat_errors():
    x = arange(2, 3, 4)
    s = arange()
    raises(RuntimeError, "zero-dimensional tensor (at position 1) cannot be concatenated", agrad.cat, [x, s])
    raises(RuntimeError, "Tensors must have same number of dimensions: got 3 and 2", agrad.cat, [x, x[0]])
    raises(RuntimeError, "Sizes of tensors must match except in dimension 2. Expected size 3 but got size 2 for "
                         "tensor number 1 in the list.", agrad.cat, [x, x[:, :2]], 2)
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)", agrad.cat, [x, x], 3)


def test_cat_and_stack_gradcheck_through_lists():
    a, b, c = rand(2, 3, seed=3), rand(1, 3, seed=4), rand(2, 3, seed=5)
    assert gradcheck(lambda a, b: agrad.cat([a, b, a], 0), [a, b])
    assert gradgradcheck(lambda a, b: agrad.cat([a, b], 0) ** 2, [a, b])
    assert gradcheck(lambda a, c: agrad.stack([a, c], 1), [a, c])
    assert gradgradcheck(lambda a, c: agrad.stack([a, c], -1) ** 2, [a, c])


def test_stack():
    a, b = rand(2, 3, seed=6), rand(2, 3, seed=7)
    y = agrad.stack([a, b], 1)
    assert y.shape == (2, 2, 3) and chain(y) == ["StackBackward0"]
    np.testing.assert_array_equal(y.detach().numpy(), np.stack([a.detach().numpy(), b.detach().numpy()], 1))
    assert agrad.stack([arange(), arange()]).shape == (2,)
    ga, gb = agrad.autograd.grad(y, [a, b], agrad.tensor(np.arange(12.0).reshape(2, 2, 3), dtype="float64"))
    np.testing.assert_array_equal(ga.numpy(), np.arange(12.0).reshape(2, 2, 3)[:, 0])
    np.testing.assert_array_equal(gb.numpy(), np.arange(12.0).reshape(2, 2, 3)[:, 1])
    raises(RuntimeError, "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 2] at entry 1",
           agrad.stack, [a, b[:, :2]])
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)", agrad.stack, [a, b], 3)


# ---- split / chunk / unbind ----------------------------------------------------------------

def sizes(parts, dim=0):
    return [p.shape[dim] for p in parts]


def test_split_by_size_and_by_sections():
    x = arange(5, 4)
    ref = np.arange(20.0).reshape(5, 4)
    parts = agrad.split(x, 2)
    assert sizes(parts) == [2, 2, 1] and all(chain(p) == ["SplitBackward0"] for p in parts)
    for p, r in zip(parts, np.split(ref, [2, 4])):
        np.testing.assert_array_equal(p.detach().numpy(), r)
    assert parts[0].grad_fn is parts[2].grad_fn                # one node, three outputs
    assert sizes(x.split(3, 1), 1) == [3, 1]                  # the method: split_size, then dim
    assert sizes(x.split(7)) == [5]
    sections = agrad.split(x, [1, 0, 4])
    assert sizes(sections) == [1, 0, 4] and chain(sections[0]) == ["SplitWithSizesBackward0"]
    assert sizes(x.split([4], dim=1), 1) == [4] and chain(x.split([4], 1)[0]) == ["SplitWithSizesBackward0"]
    assert sizes(agrad.split(agrad.zeros(0), 0)) == [0]


def test_split_unused_outputs_get_zero_gradients():
    x = arange(5, 2)
    parts = agrad.split(x, 2)
    (g,) = agrad.autograd.grad(parts[1].sum() * 3, [x])
    expected = np.zeros((5, 2))
    expected[2:4] = 3
    np.testing.assert_array_equal(g.numpy(), expected)
    assert gradcheck(lambda x: agrad.split(x, [2, 3])[1], [rand(5, 2)])
    assert gradgradcheck(lambda x: [p ** 2 for p in agrad.split(x, 2, 1)], [rand(3, 5)])


def test_split_errors():
    x = arange(2, 3)
    raises(RuntimeError, "split expects at least a 1-dimensional tensor", agrad.split, arange(), 1)
    raises(RuntimeError, "split expects split_size be non-negative, but got split_size=-1", agrad.split, x, -1)
    raises(RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 2",
           agrad.split, x, 0)
    raises(RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at dimension "
                         "0), but got split_sizes=[1, 2]", agrad.split, x, [1, 2])
    raises(RuntimeError, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                         "split_sizes=[4, -1]", agrad.split, x, [4, -1], 1)
    # a one-element list is a list of sizes, not a split size (as torch.split)
    raises(RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at dimension "
                         "0), but got split_sizes=[1]", agrad.split, x, [1])


@pytest.mark.parametrize("n,chunks,expected", [(6, 3, [2, 2, 2]), (6, 4, [2, 2, 2]), (5, 4, [2, 2, 1]),
                                               (5, 3, [2, 2, 1]), (2, 5, [1, 1]), (0, 3, [0, 0, 0])])
def test_chunk_sizes_as_pytorch(n, chunks, expected):
    x = agrad.zeros(2, n)
    parts = agrad.chunk(x, chunks, -1)
    assert sizes(parts, 1) == expected


def test_chunk_names_and_errors():
    x = arange(5, 2)
    parts = x.chunk(2)
    assert chain(parts[0]) == ["SplitBackward0"]
    np.testing.assert_array_equal(parts[1].detach().numpy(), np.arange(10.0).reshape(5, 2)[3:])
    raises(RuntimeError, "chunk expects at least a 1-dimensional tensor", agrad.chunk, arange(), 1)
    raises(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0", agrad.chunk, x, 0)


def test_unbind_and_iteration():
    x = arange(3, 2)
    rows = agrad.unbind(x)
    assert len(rows) == 3 and rows[0].shape == (2,) and chain(rows[0]) == ["UnbindBackward0"]
    cols = agrad.unbind(x, -1)
    np.testing.assert_array_equal(cols[1].detach().numpy(), np.arange(6.0).reshape(3, 2)[:, 1])
    assert [r.grad_fn.name() for r in x] == ["UnbindBackward0"] * 3
    (g,) = agrad.autograd.grad(rows[1].sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [[0, 0], [1, 1], [0, 0]])
    raises(IndexError, "Dimension specified as 0 but tensor has no dimensions", agrad.unbind, arange())


# ---- slicing -------------------------------------------------------------------------------

INDICES = [
    0, -1, 1, slice(None), slice(1, None), slice(None, None, 2), slice(-10, 10), slice(2, 1), slice(-2, None),
    (0, 1), (slice(0, 2), slice(None), 1), (None, Ellipsis, -1), Ellipsis, (Ellipsis, None), (1, Ellipsis, 0),
    (slice(None), 0), (0, slice(1, None, 2)), (None, 0, None, slice(1, 3), None), (slice(None),), (slice(None),) * 3,
    (np.int64(1), slice(np.int64(0), 2)), (slice(1, 2), -1, slice(None, None, 3)),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_values_and_gradient_match_numpy(index):
    ref = np.arange(24.0).reshape(2, 3, 4)
    x = arange(2, 3, 4)
    y = x[index]
    expected = ref[index]
    assert y.shape == expected.shape
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    seed = np.random.default_rng(0).standard_normal(expected.shape)
    (g,) = agrad.autograd.grad(y, [x], agrad.tensor(seed, dtype="float64"))
    want = np.zeros_like(ref)
    np.add.at(want, index, seed)            # scatter the gradient back, independently of agrad
    np.testing.assert_array_equal(g.numpy(), want)


@pytest.mark.parametrize("index,names", [
    (0, ["SelectBackward0"]),
    ((slice(0, 2), slice(None), 1), ["SelectBackward0"]),      # 0:2 and : keep dims 0, 1 whole: no node
    ((None, Ellipsis, -1), ["SelectBackward0", "UnsqueezeBackward0"]),
    ((0, slice(1, None, 2)), ["SliceBackward0", "SelectBackward0"]),
    ((Ellipsis, None), ["UnsqueezeBackward0"]),
    (Ellipsis, ["AliasBackward0"]),
    ((slice(None), slice(None)), ["AliasBackward0"]),
    (slice(None), ["SliceBackward0"]),                        # a bare slice always slices, as in PyTorch
    (slice(0, 5), ["SliceBackward0"]),
], ids=repr)
def test_getitem_chains_nodes_as_pytorch(index, names):
    assert chain(arange(2, 3, 4)[index]) == names


def test_getitem_on_0d():
    s = arange()
    assert s[...].shape == () and chain(s[...]) == ["AliasBackward0"]
    assert s[None].shape == (1,)
    raises(IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                       "to convert a 0-dim tensor to a number", lambda: s[0])


def test_getitem_errors():
    x = arange(2, 3, 4)
    raises(IndexError, "too many indices for tensor of dimension 3", lambda: x[0, 0, 0, 0])
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x[5])
    raises(IndexError, "index -4 is out of bounds for dimension 1 with size 3", lambda: x[:, -4])
    # PyTorch names the index's position in the tuple, whatever came before it
    raises(IndexError, "index 5 is out of bounds for dimension 1 with size 3", lambda: x[0, 5])
    raises(IndexError, "index 5 is out of bounds for dimension 2 with size 3", lambda: x[None, 0, 5])
    raises(IndexError, "index 9 is out of bounds for dimension 1 with size 4", lambda: x[..., 9])
    raises(ValueError, "step must be greater than zero", lambda: x[::-1])
    raises(ValueError, "slice step cannot be zero", lambda: x[::0])
    raises(TypeError, "slice indices must be integers or None or have an __index__ method", lambda: x[0:1.5])
    raises(IndexError, "an index can only have a single ellipsis ('...')", lambda: x[..., ...])
    with pytest.raises(IndexError, match=r"valid indices \(got float\)"):
        x[1.5]
    assert x[[0, 1]].shape == (2, 3, 4) and x[True].shape == (1, 2, 3, 4)     # advanced indexing, as PyTorch
    assert x[False].shape == (0, 2, 3, 4) and x[0, True].shape == (1, 3, 4)


def test_select_and_slice_ops():
    x = arange(3, 5)
    ref = np.arange(15.0).reshape(3, 5)
    np.testing.assert_array_equal(agrad.select(x, 1, -2).detach().numpy(), ref[:, -2])
    np.testing.assert_array_equal(agrad.slice(x, 1, 1, None, 2).detach().numpy(), ref[:, 1::2])
    np.testing.assert_array_equal(x.slice(0, -2).detach().numpy(), ref[-2:])
    assert agrad.slice(x, 0, 3, 1).shape == (0, 5)
    raises(IndexError, "select(): index 3 out of range for tensor of size [3, 5] at dimension 0", agrad.select, x, 0, 3)
    raises(IndexError, "select() cannot be applied to a 0-dim tensor.", agrad.select, arange(), 0, 0)
    raises(IndexError, "slice() cannot be applied to a 0-dim tensor.", agrad.slice, arange(), 0, 0, 1)
    raises(RuntimeError, "slice step must be positive", agrad.slice, x, 0, 0, 1, 0)


def test_backward_ops_write_into_zeros_and_differentiate_again():
    x = rand(3, 4)
    y = x[1:, 2]
    (g,) = agrad.autograd.grad(y, [x], agrad.tensor([5.0, 7.0], dtype="float64", requires_grad=True),
                               create_graph=True)
    assert chain(g) == ["SliceBackwardBackward0", "SelectBackwardBackward0"]
    np.testing.assert_array_equal(g.detach().numpy(), [[0, 0, 0, 0], [0, 0, 5, 0], [0, 0, 7, 0]])
    grad = agrad.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    out = agrad.slice_backward(grad, [5], 0, 1, 5, 2)
    np.testing.assert_array_equal(out.detach().numpy(), [0, 1, 0, 2, 0])
    assert gradgradcheck(lambda x: x[1:, ::2][:, 0] ** 2, [x])
    assert gradgradcheck(lambda x: x[None, ..., 1] * x[:, 0], [x])


def test_meta_shapes_and_errors_without_data():
    x = agrad.zeros(2, 3, 4).to("meta").requires_grad_(True)
    y = x[0, 1:, None]
    assert y.shape == (2, 1, 4) and y.device.type == "meta"
    parts = agrad.split(x, [1, 2], 1)
    assert [p.shape for p in parts] == [(2, 1, 4), (2, 2, 4)]
    z = agrad.cat([parts[1], parts[0]], 1)
    (g,) = agrad.autograd.grad(z, [x], agrad.ones(2, 3, 4).to("meta"))
    assert g.shape == (2, 3, 4) and g.device.type == "meta"
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        agrad.cat([x, x[:, :1]])
    with pytest.raises(IndexError, match="index 2 is out of bounds"):
        x[2]


def test_view_copies_own_their_memory():
    x = agrad.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    for out in (agrad.permute_copy(x, [2, 0, 1]), agrad.expand_copy(x[:1], [3, 3, 4]), agrad.select_copy(x, 1, 2),
                agrad.split_copy(x, 2, 2)[1], agrad.unbind_copy(x, 1)[0], agrad.unfold_copy(x, 2, 2, 1),
                agrad.as_strided_copy(x, [2, 2], [1, 2], 1), agrad.narrow_copy(x, -1, -2, 2), agrad.alias_copy(x)):
        assert out._base is None and out.is_contiguous() and not np.shares_memory(out._data, x._data)
    with pytest.raises(RuntimeError, match=r"start \(3\) \+ length \(2\) exceeds dimension size \(4\)."):
        agrad.narrow_copy(x, 2, 3, 2)


def test_detach_copy_records_a_node_whose_backward_is_not_implemented():
    # PyTorch's detach_copy has no derivative: its result requires grad, its backward raises
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = agrad.detach_copy(x)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::detach_copy is not implemented"):
        y.sum().backward()
