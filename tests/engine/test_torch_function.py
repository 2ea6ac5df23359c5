"""The __torch_function__ protocol against torch 2.13's (tests/reference/torch_function_scenarios.json, made by
make_torch_function_reference.py): which calls reach a subclass's handler or a TorchFunctionMode and with what,
the results' classes, the handlers' order and errors, the Disable guards, nn.Parameter, subclasses through nn
layers and autograd; and what the dispatcher keeps: a plain call never reaches the handlers' key."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import agrad
from agrad.dispatch_keys import TORCH_FUNCTION
from agrad.grad_mode import tls

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
sys.path.insert(0, str(REFERENCE))
import torch_function_scenarios  # noqa: E402

RECORDED = json.loads((REFERENCE / "torch_function_scenarios.json").read_text())


def _rounded(value):
    """Floats to 5 significant places (float32 sums in a different order)."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", sorted(torch_function_scenarios.SCENARIOS))
def test_scenario_matches_torch(name):
    got = json.loads(json.dumps(torch_function_scenarios.SCENARIOS[name](agrad)))
    assert _rounded(got) == _rounded(RECORDED["scenarios"][name])
    assert not tls.included & TORCH_FUNCTION and tls.torch_function == 0       # (nothing left pushed or disabled)


def test_the_key_is_included_only_while_a_mode_is_pushed():
    """Plain tensors' calls outside a mode keep the fast path: the handlers' key is in no key set of theirs."""
    assert not tls.included & TORCH_FUNCTION
    with agrad.overrides.BaseTorchFunctionMode():
        assert tls.included & TORCH_FUNCTION
        with agrad.overrides.DisableTorchFunction():
            assert not tls.included & TORCH_FUNCTION
        assert tls.included & TORCH_FUNCTION
    assert not tls.included & TORCH_FUNCTION


def test_mode_left_by_an_exception_is_popped():
    class Boom(agrad.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        with Boom():
            agrad.ones(1) + 1
    assert agrad.overrides._get_current_function_mode_stack() == []
    assert not tls.included & TORCH_FUNCTION
    assert (agrad.ones(1) + 1).tolist() == [2.0]


def test_plain_method_handler_is_deprecated():
    class Sub(agrad.Tensor):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return "marker"
    with pytest.warns(DeprecationWarning, match="as a plain method is deprecated"):
        assert agrad.neg(agrad.ones(1).as_subclass(Sub)) == "marker"


def test_uninitialized_buffer_converts_as_torch():
    """An UninitializedBuffer's `to` gives an UninitializedBuffer (Tensor.__torch_function__), other ops refuse."""
    b = agrad.nn.UninitializedBuffer()
    assert type(b.to(agrad.float64)) is agrad.nn.UninitializedBuffer
    assert b.to(agrad.float64).dtype == agrad.float64
    with pytest.raises(ValueError, match="uninitialized parameter"):
        agrad.add(b, 1)


def test_enable_reentrant_dispatch_reenters_autograd_inside_a_dispatch_mode():
    from agrad.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            with agrad.overrides.enable_reentrant_dispatch():
                seen.append(agrad.ones(1, requires_grad=True).mul(2).requires_grad)
            return func(*args, **(kwargs or {}))
    with Mode():
        agrad.ones(1).neg()
    assert seen and all(seen)
