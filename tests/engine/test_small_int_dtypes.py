"""int8, uint8 and int16 (engine/dtypes.py): PyTorch's promotion table, wrapped Python ints, .npy
files and graph-file dtype names."""
import numpy as np
import pytest

import agrad
from agrad import graphs

NAMES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool"]
# torch.promote_types(row, column), from PyTorch 2.13.0, in the order of NAMES
TORCH_PROMOTE = {
    "uint8": ["uint8", "int16", "int16", "int32", "int64", "float16", "float32", "float64", "uint8"],
    "int8": ["int16", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "int8"],
    "int16": ["int16", "int16", "int16", "int32", "int64", "float16", "float32", "float64", "int16"],
    "int32": ["int32", "int32", "int32", "int32", "int64", "float16", "float32", "float64", "int32"],
    "int64": ["int64", "int64", "int64", "int64", "int64", "float16", "float32", "float64", "int64"],
    "float16": ["float16"] * 6 + ["float32", "float64", "float16"],
    "float32": ["float32"] * 7 + ["float64", "float32"],
    "float64": ["float64"] * 9,
    "bool": ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool"],
}


@pytest.mark.parametrize("a", NAMES)
def test_promotion_table_is_pytorchs(a):
    x = agrad.ones(2, dtype=getattr(agrad, a if a != "bool" else "bool_"))
    got = [(x + agrad.ones(2, dtype=getattr(agrad, b if b != "bool" else "bool_"))).dtype.name for b in NAMES]
    assert got == TORCH_PROMOTE[a]


def test_dimensioned_tensors_win_over_zero_dim_and_numbers_of_one_category():
    u8 = agrad.tensor([1, 200], dtype=agrad.uint8)
    assert (u8 + agrad.tensor(3, dtype=agrad.int8)).dtype == agrad.uint8
    assert (u8 + 1000).dtype == agrad.uint8 and (u8 * 1.5).dtype == agrad.float32
    assert (agrad.tensor([1], dtype=agrad.int16) + agrad.tensor(2.5)).dtype == agrad.float32


def test_a_python_int_wraps_into_a_narrow_dtype_as_in_pytorch():
    u8 = agrad.tensor([1, 200], dtype=agrad.uint8)
    assert (u8 + -1).tolist() == [0, 199]
    assert (u8 * 300).tolist() == [44, 96]          # 300 is 44 as uint8; 200 * 44 wraps to 96
    assert (agrad.tensor([1], dtype=agrad.int8) + 200).tolist() == [-55]


def test_reductions_and_names():
    u8 = agrad.tensor([1, 200], dtype=agrad.uint8)
    assert agrad.sum(u8).dtype == agrad.int64 and agrad.sum(u8).item() == 201
    assert agrad.all(u8).dtype == agrad.uint8 and agrad.any(agrad.tensor([0, 1], dtype=agrad.int8)).dtype == agrad.bool_
    assert agrad.dtypes.from_name("int16") is agrad.int16 and agrad.int8.itemsize == 1
    assert agrad.from_numpy(np.array([1, -2], dtype=np.int8)).dtype == agrad.int8


def test_graph_files_accept_the_new_dtype_names(tmp_path):
    def graph_file(text, name="g.yaml"):
        (tmp_path / name).write_text(text)
        return tmp_path / name

    path = graph_file("inputs:\n  a: {value: [1, 200], dtype: uint8}\n  b: {value: [1, -2], dtype: int8}\n"
                      "nodes: {c: a + b}\noutputs: [c]\n")
    assert graphs.validate(path) == []
    out = graphs.load(path).run().result().outputs["c"]
    assert out.value == [2, 198] and out.dtype == "int16"
    bad = graph_file("inputs:\n  a: {value: [1, 300], dtype: uint8}\nnodes: {c: neg(a)}\n", name="bad.yaml")
    assert [d.code for d in graphs.validate(bad)] == ["AG012"]
