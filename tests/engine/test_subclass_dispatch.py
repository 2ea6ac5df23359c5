"""Tensor subclasses with a `__torch_dispatch__` of their own, as PyTorch 2.13 runs them (its
test_python_dispatch.py and test_autograd's test_make_dual_torch_dispatch).

The scenarios of tests/reference/subclass_dispatch_scenarios.py (LoggingTensor's logs: which ops the handler
sees, in which order, forward and backward; TwoTensor; the errors) run here with agrad and are compared with
what PyTorch did in them (subclass_dispatch_scenarios.json, written by make_subclass_dispatch_reference.py).
The tests below them check what the recording cannot: the keys of plain tensors, the order of handlers,
no_dispatch, gradients through in-place ops on a wrapper.
"""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import scenario_fixtures
from agrad.dispatch_keys import PYTHON
from agrad.testing._internal.logging_tensor import LoggingTensor, capture_logs
from agrad.testing._internal.two_tensor import TwoTensor
from agrad.utils._mode_utils import no_dispatch
from agrad.utils._python_dispatch import TorchDispatchMode, is_traceable_wrapper_subclass, transform_subclass
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("subclass_dispatch_scenarios")
aten = agrad.ops.aten


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_subclass_dispatch_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    scenario_fixtures.compare(scenario_fixtures.run(SCENARIOS[label], seed=0), RECORDED["scenarios"][label],
                              [label], rtol=1e-6)


class _Wrapper(agrad.Tensor):
    """The smallest wrapper: every op on the tensor it holds, each call recorded."""
    calls: list = []

    @staticmethod
    def __new__(cls, elem, requires_grad=False):
        r = agrad.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, requires_grad=requires_grad)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func, types))
        unwrap = agrad.utils._pytree.tree_map_only
        out = func(*unwrap(cls, lambda t: t.elem, args), **unwrap(cls, lambda t: t.elem, kwargs or {}))
        return unwrap(agrad.Tensor, cls, out)


def test_a_plain_tensor_keeps_its_keys_and_a_subclass_has_the_python_key_exactly_with_a_handler():
    x, y = agrad.ones(2), agrad.ones(2)
    assert not (x * y)._keys & PYTHON and not x._keys & PYTHON
    w = _Wrapper(agrad.ones(2))
    assert w._keys & PYTHON and w._data.__class__.__name__ == "StridedMetaArray"
    p = agrad.nn.Parameter(agrad.ones(2))               # a subclass without a handler
    assert not p._keys & PYTHON
    assert agrad.Tensor.__torch_dispatch__ is agrad._tensor._disabled_torch_dispatch_impl


def test_the_handler_sees_the_op_overload_and_the_subclass_types():
    _Wrapper.calls = []
    w = _Wrapper(agrad.tensor([1.0, 2.0]))
    out = agrad.add(w, agrad.tensor([3.0, 4.0]), alpha=2)
    assert type(out) is _Wrapper and out.elem.tolist() == [7.0, 10.0]
    assert _Wrapper.calls == [(aten.add.Tensor, (_Wrapper,))]


def test_a_subclass_is_tried_before_its_base_and_no_dispatch_skips_every_handler():
    order = []

    class Base(_Wrapper):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append(("Base", types))
            return NotImplemented

    class Derived(Base):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append(("Derived", types))
            return NotImplemented

    b, d = Base(agrad.ones(1)), Derived(agrad.ones(1))
    with pytest.raises(TypeError, match=r"all __torch_dispatch__ handlers returned NotImplemented:\n\n"
                                        r"  - tensor subclass .*Derived.*\n  - tensor subclass .*Base"):
        agrad.mul(b, d)
    assert order == [("Derived", (Derived, Base)), ("Base", (Derived, Base))]

    class Counting(agrad.Tensor):
        seen = 0

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.seen += 1
            with no_dispatch():
                return func(*args, **(kwargs or {}))

    c = agrad.Tensor._make_subclass(Counting, agrad.tensor([1.0, 2.0]))
    assert (c * 2).tolist() == [2.0, 4.0] and Counting.seen == 1
    with no_dispatch():
        assert type(c * 2) is agrad.Tensor        # runs on the data, below the Python key
    assert Counting.seen == 1


def test_a_mode_declining_passes_the_call_to_the_subclass_and_both_declining_name_both():
    class Declining(TorchDispatchMode):
        """Declines a call on a subclass; the handler's own calls on plain tensors reach it too (as torch's)."""
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented if types else func(*args, **(kwargs or {}))

    class Refusing(_Wrapper):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    w, r = _Wrapper(agrad.ones(2)), Refusing(agrad.ones(2))
    with Declining():
        out = w * 3
    assert type(out) is _Wrapper and out.elem.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match=r"Multiple dispatch failed for 'agrad\.ops\.aten\.mul\.Tensor'.*\n\n"
                                        r"  - mode object .*Declining.*\n  - tensor subclass .*Refusing"):
        with Declining():
            r * 3


def test_gradients_flow_through_a_wrapper_and_through_in_place_ops_on_it():
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal(3), rng.standard_normal(3)
    a = TwoTensor(agrad.tensor(av), agrad.tensor(bv))
    a.requires_grad_()
    y = a * 1
    y.mul_(a)            # y = a * a, recorded on the wrapper, the values written into y's two tensors
    y.add_(a.sin())
    (ga,) = agrad.autograd.grad((y,), (a,), (TwoTensor(agrad.ones(3, dtype=agrad.float64),
                                                        agrad.ones(3, dtype=agrad.float64)),))
    np.testing.assert_allclose(y.a.tolist(), av * av + np.sin(av), rtol=1e-12)
    np.testing.assert_allclose(ga.a.tolist(), 2 * av + np.cos(av), rtol=1e-12)
    np.testing.assert_allclose(ga.b.tolist(), 2 * bv + np.cos(bv), rtol=1e-12)
    assert y._version == 2 and y.grad_fn.name() == "AddBackward0"


def test_flattening_a_traceable_wrapper_and_printing_its_contents():
    t = TwoTensor(agrad.tensor([1.0, 2.0]), agrad.tensor([3.0, 4.0]))
    assert is_traceable_wrapper_subclass(t) and not is_traceable_wrapper_subclass(_Wrapper(agrad.ones(1)))
    doubled = transform_subclass(t, lambda name, inner: inner * 2)
    assert type(doubled) is TwoTensor and doubled.b.tolist() == [6.0, 8.0]
    with capture_logs() as logs:
        x = LoggingTensor(agrad.tensor([1.5]), requires_grad=True)
    assert repr(x) == "LoggingTensor(tensor([1.5000]), requires_grad=True)" and logs == []


def test_a_wrapper_holds_no_values_to_read():
    t = TwoTensor(agrad.tensor([1.0, 2.0]), agrad.tensor([3.0, 4.0]))
    assert agrad.Tensor.__repr__(t) == "TwoTensor(..., size=(2,))"
    with pytest.raises(RuntimeError, match=r"^\.numpy\(\) is not supported for tensor subclasses\.$"):
        t.numpy()
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor subclasses, got TwoTensor$"):
        t.tolist()
    with pytest.raises(RuntimeError, match="holds no data"):
        TwoTensor(agrad.tensor(1.0), agrad.tensor(2.0)).item()


def test_an_explicit_composite_serves_the_backends_so_the_handler_sees_the_op():
    entry = aten.zeros_like.default._entry
    assert entry.keys() == ["CompositeExplicitAutograd", "Autograd[fallthrough]"]
    cpu, autograd = agrad.dispatch_keys.DispatchKey.CPU, agrad.dispatch_keys.DispatchKey.Autograd
    assert entry.explain(cpu | autograd) == "CompositeExplicitAutograd"
    _Wrapper.calls = []
    out = agrad.zeros_like(_Wrapper(agrad.ones(2)), dtype=agrad.float64)
    assert type(out) is _Wrapper and out.elem.dtype is agrad.float64
    assert _Wrapper.calls == [(aten.zeros_like.default, (_Wrapper,))]
    assert type(agrad.zeros_like(agrad.ones(2))) is agrad.Tensor


def test_pickling_and_deep_copying_a_wrapper_rebuild_its_layout_and_what_it_wraps():
    import copy
    import pickle

    t = TwoTensor(agrad.tensor([[1.0, 2.0], [3.0, 4.0]]).t(), agrad.tensor([[5.0, 6.0], [7.0, 8.0]]).t(),
                  requires_grad=True)
    for other in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert type(other) is TwoTensor and other.shape == t.shape and other.stride() == (1, 2)
        assert other.requires_grad and other.is_leaf and other.a is not t.a
        assert other.a.tolist() == t.a.tolist() and other.b.tolist() == t.b.tolist()
    logged = copy.deepcopy(LoggingTensor(agrad.tensor([1.0, 2.0])))       # (elem is a slot)
    assert logged.elem.tolist() == [1.0, 2.0]


_THROUGH = {
    "cat": lambda x: agrad.cat([x, x * 2], 0).sum(),
    "stack": lambda x: agrad.stack([x, x]).pow(2).sum(),
    "index": lambda x: x[1:, ::2].exp().sum(),
    "matmul": lambda x: (x @ x.t()).tanh().sum(),
    "linear": lambda x: agrad.nn.functional.linear(x, x).sum(),
    "softmax": lambda x: agrad.softmax(x, 1).log().mean(),
    "where": lambda x: agrad.where(x > 0, x, -x).sum(),
    "views": lambda x: x.reshape(2, 6).transpose(0, 1).contiguous().view(-1).cumsum(0).sum(),
}


@pytest.mark.parametrize("name", sorted(_THROUGH))
def test_a_two_tensor_gets_each_of_its_tensors_gradient(name):
    """Every op of the forward and of the backward runs on both tensors: the gradients are those of each alone
    (Tensor[] arguments, views and their strides, composites, a scalar root)."""
    fn = _THROUGH[name]
    rng = np.random.default_rng(1)
    a, b = (agrad.tensor(rng.standard_normal((3, 4))) for _ in range(2))
    t = TwoTensor(a.clone(), b.clone())
    t.requires_grad_()
    fn(t).backward()
    assert type(t.grad) is TwoTensor
    for inner, plain in ((t.grad.a, a), (t.grad.b, b)):
        p = plain.clone().requires_grad_()
        fn(p).backward()
        np.testing.assert_allclose(inner.tolist(), p.grad.tolist(), rtol=1e-12, atol=1e-15)
