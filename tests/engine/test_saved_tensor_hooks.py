"""Hooks on the tensors saved for backward (torch.autograd.graph.saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks) and what a Node saved as PyTorch's attributes show it
(`grad_fn._saved_<name>`, `_raw_saved_<name>`, a custom Function's `_raw_saved_tensors`). The
cases are PyTorch's own, from test/test_autograd.py, whose expected values are PyTorch's semantics
(each saved tensor packed and unpacked on its own; the innermost pair of hooks; Python numbers never
packed; a backward's tensors packed by the hooks set while it runs)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import agrad
from agrad.autograd import Function
from agrad.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from recordings import recording  # noqa: F401 — every test here runs with the C and the Python recording


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_each_saved_tensor_is_packed_and_unpacked_by_the_innermost_hooks():
    with saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
        b = agrad.randn(5, dtype=agrad.float64, requires_grad=True)
        with saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
            a = agrad.randn(5, dtype=agrad.float64, requires_grad=True)
            y = a * a                   # saves a twice: each copy 5 * 5 * a
        z = b * b
    y.sum().backward()
    z.sum().backward()
    _close(a.grad, 2 * 5 * 5 * a)
    _close(b.grad, 2 * 3 * 3 * b)


def test_an_output_saved_through_identity_hooks_gives_the_same_gradient():
    with saved_tensors_hooks(lambda x: x, lambda x: x):
        a = agrad.randn(5, dtype=agrad.float64, requires_grad=True)
        y = agrad.exp(a)
        _close(y, y.grad_fn._saved_result)
        y.sum().backward()
    _close(a.grad, y)


def test_hooks_count_one_pack_per_saved_tensor_and_one_unpack_per_use():
    counts = {"pack": 0, "unpack": 0}

    def pack(x):
        counts["pack"] += 1
        return x

    def unpack(x):
        counts["unpack"] += 1
        return x

    x, y = agrad.ones(4, requires_grad=True), agrad.ones(4)
    with saved_tensors_hooks(pack, unpack):
        out = x * y                     # only y is needed (for x's gradient)
        assert counts == {"pack": 1, "unpack": 0}
        out.sum().backward()
    assert counts == {"pack": 1, "unpack": 1}


def test_a_double_backward_packs_what_the_backward_saves_under_the_hooks_then_set():
    def grad_twice():
        a = agrad.randn(5, dtype=agrad.float64, requires_grad=True)
        return a, agrad.sum(a ** 3)

    with saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a, s = grad_twice()
    (g,) = agrad.autograd.grad(s, (a,), create_graph=True)
    g.sum().backward()
    _close(a.grad, 6 * 2 * a)
    a, s = grad_twice()
    with saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        (g,) = agrad.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
    _close(a.grad, 6 * 4 * a)
    with saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a, s = grad_twice()
        (g,) = agrad.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
    _close(a.grad, 6 * 8 * a)


def test_hook_errors_python_numbers_and_in_place_packing():
    class Custom(Exception):
        pass

    def boom(x):
        raise Custom("hook")

    a = agrad.tensor(1.0, requires_grad=True)
    with saved_tensors_hooks(boom, lambda x: x), pytest.raises(Custom):
        agrad.sin(a)
    with saved_tensors_hooks(lambda x: x, boom):
        out = agrad.sin(a)
    with pytest.raises(Custom):
        out.backward()
    with saved_tensors_hooks(boom, boom):         # `a * 3` saves the number 3, which no hook sees
        agrad.autograd.grad((a * 3).sum(), (a,))

    def increment(x):
        x += 1
        return x

    with saved_tensors_hooks(increment, lambda x: x), pytest.raises(
            RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
        agrad.exp(agrad.randn(5, requires_grad=True))
    with saved_tensors_hooks(lambda x: x, lambda x: 1.0):
        out = agrad.exp(a)
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type float"):
        out.backward()


def test_custom_function_saves_go_through_the_hooks():
    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x

    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda x: x * 10, lambda x: x):
        Func.apply(a).sum().backward()
    assert a.grad.tolist() == [10.0, 20.0]


def test_save_on_cpu_and_disabled_hooks():
    a = agrad.randn(3, dtype=agrad.float64, requires_grad=True)
    with save_on_cpu():
        y = (a * a).sum()
    y.backward()
    _close(a.grad, 2 * a)
    with disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    with saved_tensors_hooks(lambda x: x, lambda x: x):      # enabled again after the block
        pass


def test_hooks_entered_or_left_during_backward_end_with_it():
    def unpack(x):
        holder[0].__enter__()           # entered during backward, never left
        return x

    holder = [saved_tensors_hooks(lambda x: x, unpack)]
    x = agrad.randn(3, 3, requires_grad=True)
    with holder[0]:
        x.sin().sum().backward()
    ref = weakref.ref(unpack)
    del unpack, holder
    gc.collect()
    assert ref() is None                # the stack the backward left is not the caller's


def test_saved_attributes_of_a_node():
    a = agrad.randn(5, requires_grad=True)
    b, d = a * a, agrad.exp(a)
    c = a * b
    assert b.grad_fn._saved_self is a and b.grad_fn._saved_other is a and c.grad_fn._saved_other is b
    _close(d.grad_fn._saved_result, d)
    assert d.grad_fn._saved_result is not d
    assert agrad.stack([a, a]).grad_fn._saved_dim == 0
    assert a.mean().grad_fn._saved_self_sym_sizes == (5,)
    c.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        c.grad_fn._saved_self
    with pytest.raises(AttributeError):
        c.grad_fn._saved_nothing_of_that_name


def test_an_unpacked_output_shares_the_outputs_version():
    b = agrad.exp(agrad.rand(2, requires_grad=True))
    unpacked = b.grad_fn._saved_result
    with agrad.no_grad():
        b += 1
    _close(b, unpacked)
    assert b._version == unpacked._version == 1


def test_raw_saved_tensors_take_hooks_once():
    a = agrad.tensor(2.0, requires_grad=True)

    def pack(t):
        return t

    def unpack(t):
        return t

    with saved_tensors_hooks(pack, unpack):
        b = a ** 2
    c = b.exp()
    d = c ** 2
    assert b.grad_fn._raw_saved_self.data is a and b.grad_fn._raw_saved_self.unpack_hook is unpack
    assert c.grad_fn._raw_saved_result.data is not c and c.grad_fn._raw_saved_result.unpack_hook is None
    assert d.grad_fn._raw_saved_self.data is c
    out = a * a
    out.grad_fn._raw_saved_self.register_hooks(lambda x: x * 2, lambda x: x)
    with pytest.raises(RuntimeError, match="already been set"):
        out.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
    out.backward()
    assert a.grad.item() == 2.0 * 2 + 2.0       # self packed doubled: grad * other + grad * (2 * self)
    with pytest.raises(RuntimeError, match="after it has been freed"):
        out.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)


def test_a_custom_functions_raw_saved_tensors():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = agrad.randn(5, requires_grad=True)
    y = Keep.apply(a)
    saved = y.grad_fn._raw_saved_tensors
    with pytest.raises(RuntimeError, match="None is forbidden"):
        saved[1].register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        saved[0].register_hooks(lambda x: x)
    saved[0].register_hooks(lambda x: x, lambda x: x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._raw_saved_tensors


def test_every_grad_fn_is_a_graph_node_without_inheriting_it():
    from agrad.autograd.graph import Node

    b = agrad.ones(2, requires_grad=True) * 2
    assert isinstance(b.grad_fn, Node) and issubclass(type(b.grad_fn), Node) and issubclass(Node, Node)
    assert Node not in type(b.grad_fn).mro() and not isinstance(b, Node)


def test_clear_saved_tensors_on_access_frees_them_after_the_first_look():
    class Once(Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            ref = weakref.ref(x)
            del x
            assert ref() is None            # nothing but the backward held it
            return grad

    class Twice(Once):
        @staticmethod
        def backward(ctx, grad):
            ctx.saved_tensors
            ctx.saved_tensors
            return grad

    x = agrad.randn(3, requires_grad=True)
    Once.apply(x.clone()).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="can only be accessed once"):
        Twice.apply(x).sum().backward()


def test_an_in_place_op_hands_a_pack_hook_a_copy_of_the_old_self():
    # PyTorch hands the hook original_self, a clone: a hook that keeps the tensor it gets (identity here)
    # must still see the values before the write
    a = agrad.tensor([1.0, 2.0], dtype=agrad.float64, requires_grad=True)
    with saved_tensors_hooks(lambda x: x, lambda x: x):
        b = a.clone()
        b.sin_()
    b.sum().backward()
    _close(a.grad, agrad.cos(a))


def test_a_raw_saved_tensor_is_a_SavedTensor_which_python_cannot_make():
    a = agrad.randn(3, requires_grad=True)
    y = a * a
    assert isinstance(y.grad_fn._raw_saved_self, agrad.autograd.SavedTensor)
    with pytest.raises(RuntimeError, match=r"^Trying to create a SavedTensor object from Python is forbidden\.$"):
        agrad.autograd.SavedTensor()


def test_a_nodes_saved_attributes_are_only_what_it_saved():
    # as PyTorch 2.13's dir(grad_fn): graph printers (torchviz's show_attrs) read every `_saved_*` name
    x = agrad.ones(2, 2, requires_grad=True)
    assert [n for n in dir((x * x).grad_fn) if n.startswith("_saved_")] == ["_saved_other", "_saved_self"]
    assert [n for n in dir(x.exp().grad_fn) if n.startswith("_saved_")] == ["_saved_result"]
