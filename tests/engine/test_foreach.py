"""The _foreach_* functions (engine/foreach.py) as PyTorch 2.13's: the scenarios of
tests/reference/foreach_scenarios.py run here with agrad and are compared with what PyTorch answered
(foreach_scenarios.json, written by make_foreach_reference.py): every overload's values, the lists
in-place forms return, gradients through chains of them, PyTorch's list checks, and
TestAllowMutationOnSaved.test_inplace_foreach. Gradients are also checked against finite
differences in float64. This file never imports torch."""
from __future__ import annotations

import pytest

import agrad
import scenario_fixtures
from agrad.testing import gradcheck

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("foreach_scenarios")


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_foreach_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    # (PyTorch's test_inplace_foreach is in float32, whose exp differs from NumPy's in the last bit)
    rtol = 1e-6 if label == "inplace_foreach_allow_mutation_on_saved" else 1e-12
    scenario_fixtures.compare(scenario_fixtures.run(SCENARIOS[label]), RECORDED["scenarios"][label], [label],
                              rtol=rtol)


def _leaves(*shapes):
    agrad.manual_seed(0)
    return [agrad.rand(*s, dtype=agrad.float64, requires_grad=True) + 0.5 for s in shapes]


@pytest.mark.parametrize("name,call", [
    ("mul list", lambda a, b: agrad._foreach_mul(a, b)),
    ("add alpha", lambda a, b: agrad._foreach_add(a, b, alpha=-1.5)),
    ("div scalars", lambda a, b: agrad._foreach_div(a, [2.0, -3.0])),
    ("addcdiv", lambda a, b: agrad._foreach_addcdiv(a, b, a, [0.5, 2.0])),
    ("lerp list", lambda a, b: agrad._foreach_lerp(a, b, b)),
    ("norm", lambda a, b: agrad._foreach_norm(a)),
    ("pow scalar base", lambda a, b: agrad._foreach_pow(1.5, b)),
])
def test_gradients_match_finite_differences(name, call):
    a, b = _leaves((2, 3), (4,)), _leaves((2, 3), (4,))
    a, b = [t.detach().requires_grad_() for t in a], [t.detach().requires_grad_() for t in b]
    assert gradcheck(lambda *ts: call(list(ts[:2]), list(ts[2:])), (*a, *b))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        agrad._foreach_frobnicate  # noqa: B018
