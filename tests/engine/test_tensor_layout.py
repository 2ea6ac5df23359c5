"""Tensor's layout and size methods, as PyTorch 2.13 answers them (values printed by PyTorch for the
same calls): strides in elements, the storage offset of a view, contiguity, sizes in bytes."""
import pytest

import agrad


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
