"""What recording an op keeps alive, and the shortcuts that keep it small, behave as the long way.

A recorded op keeps its Node (edges as two flat tuples, no Edge objects), shares an interned
metadata tuple per shape, and saves an input nobody has modified as the Tensor itself (its
version is 0); these tests check that each shortcut gives the answers the general path gives.
Object counts, not timings: speed is measured in bench/ (bench_eager.py).
"""
from __future__ import annotations

import collections
import gc

import numpy as np
import pytest

import agrad
from agrad.autograd.edge import Edge
from agrad.autograd.saved_variable import SavedVariable, saved_variables


def _chain(x, w, y, steps):
    for _ in range(steps):
        y = agrad.tanh(y * w + x)
    return y


def test_a_recorded_op_keeps_no_edge_list_saved_variable_or_dict_alive():
    x = agrad.tensor(np.linspace(-0.5, 0.5, 16), requires_grad=True)
    w = agrad.tensor(np.linspace(0.1, 0.9, 16), requires_grad=True)
    y0 = agrad.tensor(np.zeros(16))
    _chain(x, w, y0, 3)                           # generated kernels and savers exist
    steps = 200
    gc.collect()
    gc.disable()
    try:
        before = collections.Counter(type(o).__name__ for o in gc.get_objects())
        y = _chain(x, w, y0, steps)
        after = collections.Counter(type(o).__name__ for o in gc.get_objects())
    finally:
        gc.enable()
    kept = after - before
    assert kept["Edge"] == 0 and kept["list"] == 0
    # mul's inputs are saved as themselves, tanh's result as its array in the Node's slots (with the
    # version counter the output needs anyway): no SavedVariable, no weak reference, no dict of saved values
    assert kept["SavedVariable"] == 0 and kept["ReferenceType"] < steps and kept["dict"] == 0, kept
    assert kept["VariableVersion"] == steps
    assert sum(kept.values()) / (3 * steps) < 3.2, kept
    y.sum().backward()
    ref_x, ref_w = _reference_grads(x, w, y0, steps)
    np.testing.assert_allclose(x.grad.numpy(), ref_x, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), ref_w, rtol=1e-12)


def _reference_grads(x, w, y0, steps):
    xs, ws, y = x.detach().numpy(), w.detach().numpy(), y0.numpy()
    ys = [y]
    for _ in range(steps):
        y = np.tanh(y * ws + xs)
        ys.append(y)
    gy, gx, gw = np.ones_like(y), np.zeros_like(xs), np.zeros_like(ws)
    for i in range(steps, 0, -1):
        gz = gy * (1 - ys[i] ** 2)
        gx += gz
        gw += gz * ys[i - 1]
        gy = gz * ws
    return gx, gw


def test_next_edges_and_next_functions_read_the_flat_tuples():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    a, b = y.unbind(0)
    z = a * x[0]
    fn = z.grad_fn
    assert fn.next_fns[0] is a.grad_fn and fn.next_nrs[0] == 0
    assert fn.next_edges == (Edge(a.grad_fn, 0), Edge(fn.next_fns[1], 0))
    assert fn.next_functions == tuple((f, n) for f, n in zip(fn.next_fns, fn.next_nrs))
    c = b * 2
    assert c.grad_fn.next_functions[0] == (b.grad_fn, 1)         # unbind's second output
    fn.next_edges = [Edge(None, 0), Edge(a.grad_fn, 0)]            # the setter keeps topological_nr right
    assert fn.next_fns == (None, a.grad_fn) and fn.topological_nr == a.grad_fn.topological_nr + 1


def test_shared_metadata_tells_apart_dtypes_of_one_shape():
    a = agrad.tensor(np.ones(3, np.float32), requires_grad=True)
    b = agrad.tensor(np.ones(3, np.float64), requires_grad=True)
    ya, yb = a * 2, b * 2
    assert ya.grad_fn.input_metadata[0][1] == np.float32 and yb.grad_fn.input_metadata[0][1] == np.float64
    (ya.sum() + yb.sum()).backward()
    assert a.grad.dtype == agrad.float32 and b.grad.dtype == agrad.float64


def test_an_input_saved_as_itself_still_catches_an_in_place_change():
    w = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3
    z = y * y                       # saves y, unmodified: as the Tensor itself
    assert z.grad_fn.saved["self"] is y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; expected version 0"):
        z.sum().backward()


def test_saved_inputs_are_described_and_released_like_saved_variables():
    w = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3
    z = y * w
    names = [name for name, sv in saved_variables(z.grad_fn)]
    assert sorted(names) == ["other", "self"]
    assert all(sv.__class__ is SavedVariable and sv._version == 0 for _, sv in saved_variables(z.grad_fn))
    z.sum().backward()
    assert saved_variables(z.grad_fn) == []             # released with the pass
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.sum().backward()


def test_a_second_pass_through_a_node_that_saved_only_numbers_succeeds():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = agrad.add(x, 1, alpha=2)
    y.sum().backward()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_read_only_gradient_in_a_buffer_is_summed_out_of_place():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 1, x * 1
    made = []

    def read_only(grad_inputs, grad_outputs):
        arr = np.array([10.0, 20.0], np.float32)
        arr.setflags(write=False)
        made.append(arr.ctypes.data)
        return (agrad.from_numpy(arr), grad_inputs[1])

    b.grad_fn.register_hook(read_only)       # b's Node runs first: its gradient is the one summed into
    (a + b).sum().backward()
    assert x.grad.tolist() == [11.0, 21.0]
    assert made and x.grad.numpy().ctypes.data != made[0]
