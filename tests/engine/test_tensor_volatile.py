"""Tensor.volatile, removed from PyTorch with Variable: reading it gives False, setting it does nothing,
each with PyTorch's UserWarning (test_volatile_deprecated in PyTorch's test/test_autograd.py)."""
import warnings

import pytest

import agrad


def test_reading_volatile_warns_and_gives_false():
    v = agrad.randn(3, 3)
    with pytest.warns(UserWarning, match=r"^volatile was removed \(Variable.volatile is always False\)$"):
        assert v.volatile is False


def test_setting_volatile_warns_and_changes_nothing():
    v = agrad.randn(3, 3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v.volatile = True
    assert [str(w.message) for w in caught] == [
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."]
    assert caught[0].filename == __file__             # pointed at the caller
    assert v.requires_grad and (v * 2).grad_fn is not None
