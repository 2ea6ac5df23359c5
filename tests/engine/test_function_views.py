"""Custom Functions on views, retain_grad through in-place ops, mark_dirty's errors, backward
and vjp, detach_() of saved tensors, reference cycles: against PyTorch 2.13 (issue 20).

The scenarios of tests/reference/function_views_scenarios.py run here with agrad and are
compared with what PyTorch did in them (tests/reference/function_views_scenarios.json, written
by make_function_views_reference.py). This file never imports torch; it also checks with
gradcheck what the recordings cannot: a Function that modifies a view in place gives the
gradients finite differences give.
"""
from __future__ import annotations

import numpy as np
import pytest

import agrad
import scenario_fixtures
from agrad.testing import gradcheck
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("function_views_scenarios")


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_function_views_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    scenario_fixtures.compare(scenario_fixtures.run(SCENARIOS[label]), RECORDED["scenarios"][label], [label],
                              rtol=1e-6)


class _ScaleInPlace(agrad.autograd.Function):
    """x *= w in place, x marked dirty: d/dx = w, d/dw = old x (saved before the write)."""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x.clone(), w)
        x.mul_(w)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        old, w = ctx.saved_tensors
        return g * w, g * old


def test_a_function_modifying_a_view_in_place_passes_gradcheck():
    rng = np.random.default_rng(0)
    a = agrad.tensor(rng.standard_normal((3, 4)), dtype=agrad.float64, requires_grad=True)
    w = agrad.tensor(rng.standard_normal(4), dtype=agrad.float64, requires_grad=True)

    def through_the_base(a, w):
        base = a * 1
        _ScaleInPlace.apply(base[1], w)
        return base.sin()

    def through_the_output(a, w):
        base = a.sin()        # saves `a`, which the Function does not modify
        return _ScaleInPlace.apply(base[:, 1:3].t()[0], w[1:]) * 2

    assert gradcheck(through_the_base, (a, w))
    assert gradcheck(through_the_output, (a, w))
