"""`array_grads`: the backward formulas written on NumPy arrays give exactly what the Tensor
formulas give (the array path is the common backward on the CPU; the Tensor path stays for
create_graph, other devices, mixed dtypes and recording)."""
import numpy as np
import pytest

import agrad
import op_sample_runs
from agrad.ops import registered
from agrad.ops import registry

_OPS_WITH_ARRAY_GRADS = [info for info in registered() if info.array_grads]


def _cases():
    for info in _OPS_WITH_ARRAY_GRADS:
        for sample in info.samples(info.name):
            for dtype in (agrad.float64, agrad.float32):
                yield pytest.param(info, sample, dtype, id=f"{info.name}-{sample.name}-{dtype}")


def _grads(info, sample, dtype, arrays: bool):
    fn, inputs = op_sample_runs.as_function(info, sample)
    leaves = [t.detach().to(dtype).requires_grad_() for t in inputs]
    out = fn(*leaves)
    registry._use_arrays[0] = arrays
    try:
        grads = agrad.autograd.grad(out, leaves, agrad.ones_like(out), allow_unused=True)
    finally:
        registry._use_arrays[0] = True
    return out, grads


def test_the_hot_ops_have_array_formulas():
    names = {info.name for info in _OPS_WITH_ARRAY_GRADS}
    assert {"mul", "sub", "neg", "exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "sqrt"} <= names


@pytest.mark.parametrize("info,sample,dtype", list(_cases()))
def test_array_formulas_equal_tensor_formulas(info, sample, dtype):
    fn, inputs = op_sample_runs.as_function(info, sample)
    if not inputs:
        pytest.skip("no differentiable input in this sample")
    out, by_tensors = _grads(info, sample, dtype, arrays=False)
    _, by_arrays = _grads(info, sample, dtype, arrays=True)
    for a, t in zip(by_arrays, by_tensors):
        assert (a is None) == (t is None)
        if a is None:
            continue
        assert a.dtype == t.dtype and a.shape == t.shape and a.device == t.device
        assert not a.requires_grad
        np.testing.assert_array_equal(a.numpy(), t.numpy())     # bit for bit: the same kernels


def test_the_array_path_is_taken(monkeypatch):
    """Without create_graph, on the CPU, in one dtype, mul's backward multiplies arrays: its Tensor
    formula (`grad * other`, Tensor.__mul__) is not called; with create_graph it is."""
    calls = []
    tensor_mul = agrad.Tensor.__mul__

    def counting_mul(self, other):
        calls.append(1)
        return tensor_mul(self, other)

    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = agrad.tensor([3.0, 4.0], requires_grad=True)
    z = (x * y).sum()
    monkeypatch.setattr(agrad.Tensor, "__mul__", counting_mul)
    (gx,) = agrad.autograd.grad(z, [x], retain_graph=True)
    assert gx.tolist() == [3.0, 4.0] and not gx.requires_grad and calls == []
    (gx2,) = agrad.autograd.grad(z, [x], create_graph=True)
    assert gx2.tolist() == [3.0, 4.0] and gx2.requires_grad and len(calls) == 2     # x's and y's formulas


def test_mixed_dtypes_take_the_tensor_formulas():
    """float32 * a float64 0-d tensor: PyTorch computes the gradient of the float32 input in
    float32 (a 0-d tensor does not promote a dimensioned one); NumPy would promote to float64,
    so the array path is not taken and the result is PyTorch's."""
    x = agrad.tensor(np.array([0.1, 0.2, 0.3], np.float32), requires_grad=True)
    s = agrad.tensor(np.float64(1 / 3), requires_grad=True)
    assert s.dtype == agrad.float64            # a NumPy scalar keeps its dtype (torch.tensor's rule)
    (x * s).sum().backward()
    expected = (np.ones(3, np.float32) * np.float32(1 / 3))
    assert x.grad.dtype == agrad.float32
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert s.grad.dtype == agrad.float64


def test_a_modified_saved_tensor_still_fails_on_the_array_path():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)  # noqa: the saved result is modified
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
