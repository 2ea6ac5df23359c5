"""repr of tensors against PyTorch 2.13's (tests/reference/engine/tensor_str.json, written by
tests/reference/make_tensor_str_reference.py; the cases are tests/reference/tensor_str_cases.py).

The one deliberate difference: a dtype prints as agrad's (`dtype=agrad.float64`, PyTorch's
`dtype=torch.float64`), as `repr(agrad.float64)` does.
"""
from __future__ import annotations

import json
import pathlib
import sys

import pytest

import agrad
from agrad import _tensor_str

REFERENCE = pathlib.Path(__file__).resolve().parents[1] / "reference"
sys.path.insert(0, str(REFERENCE))

from tensor_str_cases import CASES, build_array  # noqa: E402

FIXTURE = json.loads((REFERENCE / "engine" / "tensor_str.json").read_text())["cases"]


def build(spec: dict):
    arr = build_array(spec)
    if spec.get("device") == "meta":
        t = agrad.empty(arr.shape, dtype=agrad.dtypes.from_name(str(arr.dtype)), device="meta")
    else:
        t = agrad.from_numpy(arr.copy())
    if spec.get("requires_grad"):
        t.requires_grad_(True)
    if spec.get("parameter"):
        t = agrad.nn.Parameter(t)
    if "method" in spec:
        name, *args = spec["method"]
        t = getattr(t, name)(*args)
    return t


def test_fixture_has_every_case():
    assert set(FIXTURE) == set(CASES), "rerun tests/reference/make_tensor_str_reference.py"
    for name, spec in CASES.items():
        assert FIXTURE[name]["spec"] == json.loads(json.dumps(spec)), name


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_repr_matches_pytorch(name):
    case = FIXTURE[name]
    t = build(case["spec"])
    expected = case["repr"].replace("dtype=torch.", "dtype=agrad.")
    with _tensor_str.printoptions(**case["spec"].get("printoptions", {})):
        assert repr(t) == expected
    assert str(t) == repr(t)


def test_printoptions_restores_and_get_printoptions():
    before = _tensor_str.get_printoptions()
    assert before == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    with _tensor_str.printoptions(precision=2, sci_mode=True):
        assert repr(agrad.tensor([1.5])) == "tensor([1.50e+00])"
        assert _tensor_str.get_printoptions()["precision"] == 2
    assert _tensor_str.get_printoptions() == before
    assert repr(agrad.tensor([1.5])) == "tensor([1.5000])"


def test_set_printoptions_is_agrads():
    try:
        agrad.set_printoptions(threshold=3)
        assert repr(agrad.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    finally:
        agrad.set_printoptions(profile="default")
    assert repr(agrad.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_subclass_prints_its_name():
    class Sub(agrad.Tensor):
        __slots__ = ()

    # PyTorch's rule: a subclass is named; Tensor and Parameter print as `tensor(`
    assert repr(agrad.tensor([1.0, 2.0]).as_subclass(Sub)) == "Sub([1., 2.])"


def test_format_of_a_0d_tensor_is_its_number():
    # torch.Tensor.__format__: a 0-d tensor formats as its Python number; others (and Parameters) as their repr
    assert f"{agrad.tensor(0.5, requires_grad=True):.3f}" == "0.500"
    assert f"{agrad.tensor(3)}" == "3"
    assert f"{agrad.tensor([0.5, 1.0])}" == repr(agrad.tensor([0.5, 1.0]))
    assert f"{agrad.nn.Parameter(agrad.tensor(1.0))}" == repr(agrad.nn.Parameter(agrad.tensor(1.0)))
    with pytest.raises(TypeError):
        f"{agrad.tensor([0.5]):.3f}"
