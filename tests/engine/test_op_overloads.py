"""agrad.ops.aten / agrad.ops.<ns>: PyTorch's OpOverloadPacket and OpOverload over the dispatcher's
registry, dispatch modes (agrad.utils._python_dispatch), the profiler's operators and convolution_backward.
Names, reprs and messages are torch 2.13's (torch/_ops.py)."""
import copy

import numpy as np
import pytest

import agrad
from agrad import library
from agrad.autograd import forward_ad as fwAD
from agrad.autograd.profiler import profile
from agrad.dispatcher.overloads import OpOverload, OpOverloadPacket
from agrad.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

aten = agrad.ops.aten


def test_packets_and_overloads_are_torchs():
    assert isinstance(aten.add, OpOverloadPacket) and isinstance(aten.add.Tensor, OpOverload)
    assert repr(aten.add) == "<OpOverloadPacket(op='aten.add')>" and str(aten.add) == "aten.add"
    assert repr(aten.add.Tensor) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert str(aten.add.Tensor) == "aten.add.Tensor" and aten.add.Tensor.name() == "aten::add.Tensor"
    assert aten.mm.default.name() == "aten::mm" and aten.mm.overloads() == ["default"]
    assert aten.add.overloads() == ["Tensor", "Scalar"] and aten.var_mean.overloads() == ["correction"]
    assert aten.add.Tensor.overloadpacket is aten.add and aten.add.Tensor.namespace == "aten"
    assert aten.view.default._schema is agrad.dispatcher.get_op("view").schema
    # one object per overload: `func is aten.mm.default` and `func in [...]` hold, copies too
    assert aten.mm.default is aten.mm.default and copy.deepcopy([aten.mm.default])[0] is aten.mm.default
    assert aten.mm is agrad.dispatcher.get_op("mm").packet()


def test_overloads_call_the_op():
    x = agrad.tensor([1.0, 2.0])
    np.testing.assert_array_equal(aten.add.Tensor(x, 3).numpy(), [4.0, 5.0])
    np.testing.assert_array_equal(aten.add(x, x, alpha=2).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(aten.mm.default(x.reshape(1, 2), x.reshape(2, 1)).numpy(), [[5.0]])


def test_unknown_names_raise_torchs_attribute_errors():
    with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no overload name 'default'"):
        aten.add.default
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'no_such_op'"):
        aten.no_such_op
    assert getattr(aten, "no_such_op", None) is None
    with pytest.raises(AttributeError):
        agrad.ops.no_such_namespace
    # the op namespaces are agrad.ops's, not agrad's (agrad.profiler is torch.profiler, a module)
    assert not hasattr(agrad, "aten")
    assert agrad.profiler.__name__ == "agrad.profiler" and agrad.ops.profiler is not agrad.profiler


def test_library_namespace_holds_packets():
    f = library.define("overloadtest::twice(Tensor x) -> Tensor")
    library.impl("overloadtest::twice", "CPU", lambda x: agrad.tensor(x.detach().numpy() * 2))
    packet = agrad.ops.overloadtest.twice
    assert isinstance(packet, OpOverloadPacket) and packet.op is f and packet.overloads() == ["default"]
    assert packet.default.name() == "overloadtest::twice"
    np.testing.assert_array_equal(packet.default(agrad.tensor([1.0])).numpy(), [2.0])


class _Log(TorchDispatchMode):
    def __init__(self):
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args, kwargs))
        return func(*args, **(kwargs or {}))


def test_a_mode_sees_the_recorded_ops_below_autograd():
    x = agrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=agrad.float64, requires_grad=True)
    with _Log() as log:
        assert _get_current_dispatch_mode() is log
        y = agrad.nn.functional.linear(x.cos(), x).sum()
        m = agrad.var_mean(x, correction=0)
    assert _get_current_dispatch_mode() is None
    funcs = [f for f, _, _ in log.calls]
    # linear is a composite: the mode sees its parts; keyword-only arguments come as kwargs, those given a
    # value other than their default (torch 2.13 hands var_mean.correction {'correction': 0})
    assert funcs == [aten.cos.default, aten.t.default, aten.mm.default, aten.sum.dim_IntList,
                     aten.var_mean.correction]
    assert log.calls[-1][2] == {"correction": 0}
    # autograd recorded once per op, over what the mode returned
    assert y.grad_fn.name() == "SumBackward0" and m[0].grad_fn is not None
    y.backward()
    xv = np.array([[1.0, 2.0], [3.0, 4.0]])
    # d/dx sum(cos(x) @ x.T) = -sin(x) * (column sums of x broadcast) + column sums of cos(x)
    expected = -np.sin(xv) * xv.sum(0) + np.cos(xv).sum(0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_a_mode_sees_detach_and_detach_still_shares_the_version_counter():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    with _Log() as log:
        d = x.detach()
    assert [f for f, _, _ in log.calls] == [aten.detach.default]
    assert d.grad_fn is None and not d.requires_grad
    d.add_(1.0)                         # a write through the detached tensor counts on x's version counter
    assert x._version == d._version == 1

    class Zeros(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return agrad.zeros(2) if func is aten.detach.default else func(*args, **(kwargs or {}))

    with Zeros():                       # what the mode returns is detach's result, as in torch
        assert x.detach().tolist() == [0.0, 0.0]


def test_a_mode_can_replace_a_result():
    class Twice(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func is aten.sin.default else out

    x = agrad.tensor([0.5], requires_grad=True)
    with Twice():
        y = x.sin()
    np.testing.assert_allclose(y.detach().numpy(), [2 * np.sin(0.5)])
    y.backward()            # SinBackward0 recorded by autograd: the gradient is sin's, not the mode's
    np.testing.assert_allclose(x.grad.numpy(), [np.cos(0.5)])


def test_modes_nest_and_the_mode_stack_is_restored_after_an_error():
    outer, inner = _Log(), _Log()
    x = agrad.tensor([1.0])
    with outer, inner:
        x.exp()
    assert [f for f, _, _ in inner.calls] == [aten.exp.default] == [f for f, _, _ in outer.calls]

    class Fails(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError("no")

    with pytest.raises(ValueError):
        with Fails():
            x.exp()
    assert _get_current_dispatch_mode() is None
    np.testing.assert_allclose(x.exp().numpy(), [np.e])


def test_record_function_ops_open_a_range_in_the_profile():
    x = agrad.randn(10, 10)
    with profile() as p:
        handle = agrad.ops.profiler._record_function_enter("bar", None)
        try:
            x * 2 + 4
        finally:
            agrad.ops.profiler._record_function_exit(handle)
        new = agrad.ops.profiler._record_function_enter_new("baz")
        agrad.ops.profiler._record_function_exit(new)
    names = [e.name for e in p.function_events]
    assert names.count("bar") == 1 and names.count("baz") == 1
    bar = next(e for e in p.function_events if e.name == "bar")
    assert {"aten::mul", "aten::add"} <= {c.name for c in bar.cpu_children}
    with pytest.raises(RuntimeError, match="not that of an open"):
        agrad.ops.profiler._record_function_exit(handle)


def test_convolution_backward_leaves_masked_gradients_undefined():
    # torch's test_codegen_ignores_undefined_outputs: forward AD through the weight, grad_input masked
    weight = agrad.randn(6, 1, 3, 3)
    inp = agrad.rand((1, 1, 5, 5))
    grad_out = agrad.ones_like(agrad.nn.functional.conv2d(inp, weight))
    with fwAD.dual_level():
        dual_weight = fwAD.make_dual(weight, agrad.ones_like(weight))
        grad_input, grad_weight, grad_bias = aten.convolution_backward(
            grad_out, inp, dual_weight, (0,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (False, True, False))
        assert grad_input is None and grad_bias is None
        # grad_weight[o, 0, i, j] = sum of the input's 3x3 windows (grad_output is ones)
        windows = np.lib.stride_tricks.sliding_window_view(inp.numpy()[0, 0], (3, 3)).sum((0, 1))
        np.testing.assert_allclose(grad_weight.numpy()[:, 0], np.broadcast_to(windows, (6, 3, 3)), rtol=1e-5)
