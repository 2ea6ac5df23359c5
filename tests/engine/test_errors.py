"""The engine's typed errors: PyTorch's message and base class, plus a type that says
what kind of problem it is (graphs/ classifies by it, never by the text)."""
import pytest

import agrad
from agrad.errors import DimensionError, DtypeError, DtypeNotImplementedError, FreedGraphError, ShapeError
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op


def test_shape_errors():
    with pytest.raises(ShapeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                         r"non-singleton dimension 0$"):
        agrad.add(agrad.ones(3), agrad.ones(4))
    with pytest.raises(ShapeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        agrad.matmul(agrad.ones(2, 3), agrad.ones(4, 5))
    with pytest.raises(ShapeError, match="is invalid for input of size 6"):
        agrad.reshape(agrad.ones(2, 3), [4])
    with pytest.raises(ShapeError, match="Sizes of tensors must match except in dimension 0"):
        agrad.cat([agrad.ones(2, 3), agrad.ones(2, 4)])
    # on Meta too: the checker sees the same types
    with pytest.raises(ShapeError):
        agrad.add(agrad.ones(3).to("meta"), agrad.ones(4).to("meta"))


def test_dimension_errors_are_pytorchs_index_errors():
    with pytest.raises(DimensionError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], "
                                             r"but got 2\)") as info:
        agrad.sum(agrad.ones(2, 3), 2)
    assert isinstance(info.value, IndexError) and not isinstance(info.value, RuntimeError)


def test_dtype_errors():
    with pytest.raises(DtypeNotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'") as info:
        agrad.gelu(agrad.tensor([1, 2]))
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, DtypeError)
    with pytest.raises(DtypeError, match="where expected condition to be a boolean tensor"):
        agrad.where(agrad.ones(2), agrad.ones(2), agrad.ones(2))
    with pytest.raises(DtypeError, match="expected m1 and m2 to have the same dtype"):
        agrad.mm(agrad.ones(2, 2), agrad.ones(2, 2, dtype=agrad.float64))


def test_freed_graph_error():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(FreedGraphError, match="^Trying to backward through the graph a second time") as info:
        y.backward()
    assert isinstance(info.value, RuntimeError)
