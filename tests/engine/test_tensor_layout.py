"""Tensor's layout and size methods, as PyTorch 2.13 answers them (values printed by PyTorch for the
same calls): strides in elements, the storage offset of a view, contiguity, sizes in bytes."""
import pytest

import agrad
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops


def test_a_transposed_view():
    x = agrad.randn(3, 4).t()
    assert not x.is_contiguous()
    assert x.stride() == (1, 4) and x.stride(0) == 1 and x.stride(-1) == 4
    assert x.storage_offset() == 0 and x[1:].storage_offset() == 1
    assert x.contiguous().is_contiguous() and x.contiguous().stride() == (3, 1)


def test_sizes():
    x = agrad.randn(3, 4)
    assert (x.element_size(), x.itemsize, x.nbytes, x.nelement(), x.ndimension()) == (4, 4, 48, 12, 2)
    assert agrad.zeros(3, dtype=agrad.float16).element_size() == 2
    assert agrad.zeros(3, dtype=agrad.float64).nbytes == 24


def test_strides_of_slices_expands_and_scalars():
    assert agrad.zeros(2, 3)[:, 1].stride() == (3,)
    assert agrad.zeros(2, 3).expand(4, 2, 3).stride() == (0, 3, 1)
    assert agrad.zeros(()).stride() == ()


def test_a_dim_out_of_range_is_pytorchs_index_error():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        agrad.zeros(2, 3).stride(5)


def test_device_facts():
    x = agrad.zeros(2)
    assert x.is_cpu and not x.is_cuda and x.get_device() == -1
    assert not x.is_complex() and x.is_same_size(agrad.ones(2)) and not x.is_same_size(agrad.ones(3))


def test_meta_tensors_are_contiguous():
    m = agrad.zeros(2, 3, device="meta")
    assert m.is_contiguous() and m.stride() == (3, 1) and m.storage_offset() == 0 and m.get_device() == -1


def test_data_ptr_is_shared_by_views():
    x = agrad.zeros(4, 4)
    assert x.data_ptr() == x.view(16).data_ptr() == x[0].data_ptr()
    assert x[1].data_ptr() == x.data_ptr() + 4 * x.element_size()


# ---- the gradient layout contract (AccumulateGrad: `.grad` has its leaf's strides) ---------------
# Each expected stride below is what PyTorch 2.13 printed for the same calls.

def _leaf(t):
    return t.detach().requires_grad_()


@pytest.mark.parametrize("make, strides", [
    (lambda: agrad.rand(3, 4, dtype=agrad.float64).t(), (1, 4)),                   # column-major
    (lambda: agrad.rand(2, 3, 4, dtype=agrad.float64).permute(2, 0, 1), (1, 12, 4)),  # a permuted dense leaf
    (lambda: agrad.rand(4, 6, dtype=agrad.float64)[:, ::2], (3, 1)),              # not dense: contiguous
], ids=["column-major", "permuted", "not-dense"])
def test_grad_has_the_strides_of_its_dense_leaf(make, strides):
    leaf = _leaf(make())
    (leaf * 2).sum().backward()
    assert leaf.grad.stride() == strides
    assert leaf.grad._base is None                      # a tensor of its own, not a view
    assert agrad.equal(leaf.grad, agrad.full_like(leaf.grad, 2.0))


def test_mm_gradients_of_column_major_matrices_are_column_major():
    # PyTorch's mm_mat1_backward / mm_mat2_backward: a weight used as weight.t() gets a gradient
    # laid out as the weight is, so AccumulateGrad keeps it with no copy
    x = agrad.rand(5, 3, dtype=agrad.float64)
    w = agrad.rand(4, 3, dtype=agrad.float64, requires_grad=True)
    b = agrad.rand(4, dtype=agrad.float64, requires_grad=True)
    agrad.nn.functional.linear(x, w, b).pow(2).sum().backward()
    assert w.grad.stride() == (3, 1)
    y = x.numpy() @ w.detach().numpy().T + b.detach().numpy()
    assert abs(w.grad.numpy() - (2 * y).T @ x.numpy()).max() < 1e-12
    m1 = _leaf(agrad.rand(3, 5, dtype=agrad.float64).t())
    m2 = agrad.rand(3, 4, dtype=agrad.float64, requires_grad=True)
    agrad.mm(m1, m2).pow(2).sum().backward()
    assert (m1.grad.stride(), m2.grad.stride()) == ((1, 5), (4, 1))
    prod = m1.detach().numpy() @ m2.detach().numpy()
    assert abs(m1.grad.numpy() - 2 * prod @ m2.detach().numpy().T).max() < 1e-12


def test_a_gradient_nobody_else_holds_becomes_grad_without_a_copy():
    # the weight's gradient is the transpose of a fresh matmul result (a view whose base only it
    # holds): kept as .grad itself, as PyTorch keeps a tensor whose use count is one
    x = agrad.rand(5, 3, dtype=agrad.float64)
    w = agrad.rand(4, 3, dtype=agrad.float64, requires_grad=True)
    agrad.nn.functional.linear(x, w, agrad.zeros(4, dtype=agrad.float64, requires_grad=True)).sum().backward()
    assert w.grad._data.base is not None and w.grad._base is None     # the matmul's own memory, no view
    g = agrad.rand(6, 4, dtype=agrad.float64)
    y = agrad.rand(6, 4, dtype=agrad.float64, requires_grad=True)
    y.backward(g)
    assert y.grad.data_ptr() != g.data_ptr()            # a gradient the caller holds is copied


@pytest.mark.parametrize("make, strides", [
    (lambda: agrad.rand(3, 4, dtype=agrad.float64).t(), (1, 4)),
    (lambda: agrad.rand(2, 3, 4, dtype=agrad.float64).permute(2, 0, 1), (1, 12, 4)),
], ids=["column-major", "permuted"])
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")    # warned once a process
def test_with_create_graph_grad_is_a_differentiable_copy_with_its_leafs_strides(make, strides):
    leaf = _leaf(make())
    (leaf * leaf).sum().backward(create_graph=True)
    assert leaf.grad.stride() == strides and type(leaf.grad.grad_fn).__name__ == "CopyBackwards"
    assert agrad.equal(leaf.grad.detach(), 2 * leaf.detach())


def test_every_tensor_is_strided_and_dense():
    import pickle
    x = agrad.randn(3, 4).t()
    assert x.layout is agrad.strided and isinstance(agrad.strided, agrad.layout)
    assert repr(agrad.strided) == "agrad.strided" and pickle.loads(pickle.dumps(agrad.strided)) is agrad.strided
    assert x.is_sparse is False


def test_storage_is_the_whole_allocation_a_view_shares():
    # PyTorch 2.13: len(torch.randn(5)[1:4].storage()) == 5, its nbytes 20, its data_ptr the allocation's start
    x = agrad.randn(5)
    v = x[1:4]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        agrad.set_warn_always(True)
        try:
            s = v.storage()
        finally:
            agrad.set_warn_always(False)
    assert len(s) == s.size() == 5 and s.nbytes() == 20 and s.element_size() == 4
    assert s.dtype == agrad.float32 and s.device == v.device
    assert s.data_ptr() == x.data_ptr() == v.data_ptr() - 4
    assert s.tolist() == x.tolist()
    u = v.untyped_storage()
    assert len(u) == u.nbytes() == 20 and u.element_size() == 1 and u.data_ptr() == x.data_ptr()
    assert v.clone().untyped_storage().data_ptr() != x.data_ptr()     # a copy has its own
    assert len(agrad.randn(4, 4, device="meta").untyped_storage()) == 64


def test_a_dual_tensor_and_its_primal_share_the_storage():
    import agrad.autograd.forward_ad as fwAD
    foo, bar = agrad.rand(2), agrad.ones(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        primal, tangent = fwAD.unpack_dual(dual)
        assert dual.untyped_storage().data_ptr() == primal.untyped_storage().data_ptr() == foo.data_ptr()
        assert tangent.untyped_storage().data_ptr() == bar.untyped_storage().data_ptr()
