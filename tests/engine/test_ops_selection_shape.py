"""Selection (engine/ops/reduce/selection.py) and rearranging ops (engine/ops/shape/rearrange.py): what the
generated tests cannot see — named results, argument forms, tie rules, errors, dtypes."""
import numpy as np
import pytest

import agrad
from agrad.errors import DimensionError


def _t(values, dtype=agrad.float64, requires_grad=False):
    return agrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


# ---- named results ---------------------------------------------------------------------------

@pytest.mark.parametrize("call", [lambda x: agrad.max(x, 1), lambda x: x.min(dim=0), lambda x: agrad.sort(x),
                                  lambda x: agrad.topk(x, 1), lambda x: agrad.kthvalue(x, 2, 1),
                                  lambda x: agrad.median(x, 0), lambda x: agrad.cummax(x, 1),
                                  lambda x: agrad.cummin(x, 0)])
def test_value_index_pairs_are_named_tuples(call):
    out = call(_t([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True))
    values, indices = out
    assert out.values is values and out.indices is indices
    assert indices.dtype == agrad.int64 and not indices.requires_grad and values.requires_grad
    assert type(out).__module__ == "agrad.return_types"


def test_full_reductions_return_one_tensor():
    x = _t([[1.0, 5.0], [7.0, 0.0]], requires_grad=True)
    for out, name in ((agrad.max(x), "MaxBackward1"), (x.min(), "MinBackward1"), (agrad.median(x), "MedianBackward0")):
        assert isinstance(out, agrad.Tensor) and out.shape == () and out.grad_fn.name() == name
    assert agrad.max(x, 0).values.grad_fn.name() == "MaxBackward0"


def test_max_ties_share_the_gradient_and_nan_propagates():
    x = _t([3.0, 1.0, 3.0], requires_grad=True)
    agrad.max(x).backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]
    y = _t([1.0, float("nan"), 2.0], requires_grad=True)
    out = agrad.max(y)
    out.backward()
    assert np.isnan(out.item()) and y.grad.tolist() == [0.0, 1.0, 0.0]
    values, indices = agrad.max(_t([[1.0, float("nan"), 2.0]]), 1)
    assert np.isnan(values.item()) and indices.item() == 1


def test_max_dim_gradient_goes_to_the_index_and_twice_differentiable():
    x = _t([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    values = agrad.max(x, 1, keepdim=True).values
    assert values.shape == (2, 1)
    (g,) = agrad.autograd.grad((values * values).sum(), [x], create_graph=True)
    assert g.tolist() == [[0.0, 10.0, 0.0], [14.0, 0.0, 0.0]]
    (gg,) = agrad.autograd.grad(g.sum(), [x])
    assert gg.tolist() == [[0.0, 2.0, 0.0], [2.0, 0.0, 0.0]]


def test_max_min_of_two_tensors_are_maximum_minimum():
    a, b = _t([1.0, 5.0], requires_grad=True), _t([3.0, 2.0])
    out = agrad.max(a, b)
    assert out.tolist() == [3.0, 5.0] and out.grad_fn.name() == "MaximumBackward0"
    assert a.min(other=b).tolist() == [1.0, 2.0]


def test_argmax_forms():
    x = _t([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    assert agrad.argmax(x).item() == 3 and agrad.argmin(x).item() == 4
    assert agrad.argmax(x, keepdim=True).shape == (1, 1)
    assert agrad.argmax(x, 1).tolist() == [1, 0] and x.argmin(dim=0, keepdim=True).tolist() == [[0, 1, 0]]
    assert agrad.argmax(x).dtype == agrad.int64


@pytest.mark.parametrize("fn", [agrad.max, agrad.argmax, agrad.min])
def test_empty_reductions_say_which_dim(fn):
    with pytest.raises(DimensionError, match="Expected reduction dim to be specified"):
        fn(agrad.zeros(0, 3))
    with pytest.raises(DimensionError, match="Expected reduction dim 0 to have non-zero size"):
        fn(agrad.zeros(0, 3), 0)
    out = fn(agrad.zeros(0, 3), 1)
    assert (out if fn is agrad.argmax else out.values).shape == (0,)


def test_sort_is_stable_both_ways_and_puts_nan_last():
    x = _t([2, 1, 2, 0, 1, 2], dtype=agrad.int64)
    assert agrad.sort(x).indices.tolist() == [3, 1, 4, 0, 2, 5]
    assert agrad.sort(x, descending=True).indices.tolist() == [0, 2, 5, 1, 4, 3]
    assert agrad.argsort(x, descending=True, stable=True).tolist() == [0, 2, 5, 1, 4, 3]
    values, indices = agrad.sort(_t([1.0, float("nan"), -1.0]), descending=True)
    assert np.isnan(values[0].item()) and indices.tolist() == [1, 0, 2]
    assert agrad.sort(x, stable=True).values.tolist() == [0, 1, 1, 2, 2, 2]


def test_sort_stable_keyword_selects_the_stable_overload():
    x = _t([3.0, 1.0], requires_grad=True)
    assert agrad.sort(x).values.grad_fn.name() == "SortBackward0"
    assert agrad.sort(x, stable=False).values.grad_fn.name() == "SortBackward1"


def test_topk_and_kthvalue():
    x = _t([[4.0, 1.0, 3.0, 2.0]], requires_grad=True)
    values, indices = agrad.topk(x, 2)
    assert values.tolist() == [[4.0, 3.0]] and indices.tolist() == [[0, 2]]
    assert agrad.topk(x, 2, largest=False).indices.tolist() == [[1, 3]]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0, 0.0]]
    assert agrad.kthvalue(x, 3).values.tolist() == [3.0]
    with pytest.raises(RuntimeError, match="selected index k out of range"):       # RuntimeError, as PyTorch
        agrad.topk(x, 5)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension -1"):
        agrad.kthvalue(x, 0)


def test_median_is_the_lower_median_and_propagates_nan():
    assert agrad.median(_t([4.0, 1.0, 3.0, 2.0])).item() == 2.0
    values, indices = agrad.median(_t([[4.0, float("nan"), 3.0, float("nan")], [1.0, 2.0, 3.0, 4.0]]), 1)
    assert np.isnan(values[0].item()) and values[1].item() == 2.0 and indices.tolist() == [1, 1]


def test_cummax_keeps_the_latest_index_among_ties():
    values, indices = agrad.cummax(_t([1.0, 3.0, 3.0, 2.0, 3.0]), 0)
    assert values.tolist() == [1.0, 3.0, 3.0, 3.0, 3.0] and indices.tolist() == [0, 1, 2, 2, 4]
    values, indices = agrad.cummin(_t([2, 1, 1, 5], dtype=agrad.int64), 0)
    assert values.tolist() == [2, 1, 1, 1] and indices.tolist() == [0, 1, 2, 2]


def test_all_any_count_nonzero_dtypes():
    x = _t([[0.0, 1.0], [2.0, 3.0]])
    assert agrad.all(x).dtype == agrad.bool_ and not agrad.all(x).item() and agrad.any(x).item()
    assert agrad.all(x, 1).tolist() == [False, True] and agrad.any(x, [0, 1], keepdim=True).shape == (1, 1)
    assert agrad.count_nonzero(x).item() == 3 and agrad.count_nonzero(x, 0).tolist() == [1, 2]
    assert agrad.count_nonzero(x).dtype == agrad.int64


def test_isclose_and_classifiers():
    a = _t([1.0, float("nan"), float("inf"), 1.0])
    b = _t([1.0 + 1e-9, float("nan"), float("inf"), 1.1])
    assert agrad.isclose(a, b).tolist() == [True, False, True, False]
    assert agrad.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False]
    assert agrad.isclose(a, b, rtol=0.2).tolist()[3]
    with pytest.raises(agrad.errors.DtypeError, match="Double did not match Float"):
        agrad.isclose(a, _t([1.0, 2.0, 3.0, 4.0], dtype=agrad.float32))
    assert agrad.isnan(a).tolist() == [False, True, False, False]
    assert agrad.isinf(a).tolist() == [False, False, True, False]
    assert agrad.isfinite(a).tolist() == [True, False, False, True]
    ints = _t([1, 2], dtype=agrad.int64)
    assert agrad.isfinite(ints).tolist() == [True, True] and agrad.isnan(ints).tolist() == [False, False]


# ---- rearranging -------------------------------------------------------------------------------

def test_methods_take_sizes_as_arguments():
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    assert x.repeat(2, 1).shape == (4, 2) and x.repeat([1, 1, 2]).shape == (1, 2, 4)
    assert x.tile(2).shape == (2, 4) and x.flip([0]).tolist() == [[3.0, 4.0], [1.0, 2.0]]


def test_roll_flip_repeat_values():
    x = _t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert agrad.roll(x, 1).tolist() == [[6.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert agrad.roll(x, [1, -1], [0, 1]).tolist() == [[5.0, 6.0, 4.0], [2.0, 3.0, 1.0]]
    assert agrad.flip(x, [0, 1]).tolist() == [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        agrad.roll(x, [1, 2], [0])
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        agrad.flip(x, [0, -2])
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        agrad.repeat(x, [2])


def test_repeat_gradient_sums_the_copies():
    x = _t([1.0, 2.0], requires_grad=True)
    (agrad.repeat(x, [3, 2]) * _t([[1.0, 2.0, 3.0, 4.0]] * 3)).sum().backward()
    assert x.grad.tolist() == [12.0, 18.0]


def test_repeat_interleave_forms():
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    assert agrad.repeat_interleave(x, 2).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    assert agrad.repeat_interleave(x, _t([1, 2], dtype=agrad.int64), 0).tolist() == [[1.0, 2.0], [3.0, 4.0],
                                                                                      [3.0, 4.0]]
    assert agrad.repeat_interleave(_t([2, 0, 1], dtype=agrad.int64)).tolist() == [0, 0, 2]
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        agrad.repeat_interleave(x, _t([1, 2, 3], dtype=agrad.int64), 1)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        agrad.repeat_interleave(x, -1)
    with pytest.raises(TypeError, match="argument 'repeats' must be Tensor or int, not float"):
        agrad.repeat_interleave(x, 2.0)


def test_movedim_swapaxes_unflatten_broadcast_to():
    x = agrad.zeros(2, 3, 4)
    assert agrad.movedim(x, 0, -1).shape == (3, 4, 2)
    assert agrad.movedim(x, [0, 2], [2, 0]).shape == (4, 3, 2)
    assert agrad.swapaxes(x, 0, 1).shape == (3, 2, 4) and x.swapdims(-1, 0).shape == (4, 3, 2)
    assert agrad.unflatten(x, 2, [2, -1]).shape == (2, 3, 2, 2)
    assert agrad.broadcast_to(_t([1.0, 2.0]), [3, 2]).tolist() == [[1.0, 2.0]] * 3
    with pytest.raises(RuntimeError, match="movedim: repeated dim in `source`"):
        agrad.movedim(x, [0, 0], [1, 2])
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[2, 3\] don't multiply up"):
        agrad.unflatten(x, 2, [2, 3])


def test_meshgrid_varargs_and_indexing():
    a, b = _t([1.0, 2.0, 3.0]), _t([4.0, 5.0])
    gx, gy = agrad.meshgrid(a, b, indexing="ij")
    assert gx.shape == (3, 2) and gx[:, 0].tolist() == [1.0, 2.0, 3.0] and gy[0].tolist() == [4.0, 5.0]
    gx, gy = agrad.meshgrid([a, b], indexing="xy")
    assert gx.shape == (2, 3) and gx[0].tolist() == [1.0, 2.0, 3.0] and gy[:, 0].tolist() == [4.0, 5.0]
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        agrad.meshgrid(a, b, indexing="yx")


def test_running_extreme_without_ufunc_accumulate_equals_numpys():
    # CuPy and dask.array have no maximum/minimum.accumulate: cummax/cummin scan by doubling there
    from agrad.ops.reduce.selection import _running

    class ArrayModuleWithoutAccumulate:       # NumPy under another name takes the scan path
        def __getattr__(self, name):
            return getattr(np, name)

    rng = np.random.default_rng(0)
    for shape, axis in [((5,), 0), ((3, 7), 1), ((9, 2, 4), 0), ((2, 1, 3), 1), ((4, 16), -1)]:
        a = rng.standard_normal(shape)
        a.flat[3] = np.nan
        for ufunc in ("maximum", "minimum"):
            np.testing.assert_array_equal(_running(ArrayModuleWithoutAccumulate(), ufunc, a, axis),
                                          getattr(np, ufunc).accumulate(a, axis=axis))
