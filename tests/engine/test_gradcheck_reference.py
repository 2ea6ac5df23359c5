"""`agrad.autograd.gradcheck` compared with what PyTorch 2.13.0's gradcheck did in the same scenarios.

The scenarios (gradcheck_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/gradcheck.json, written by tests/reference/make_gradcheck_reference.py.
This file never imports torch.
"""

import pytest

import agrad
import scenario_fixtures
from gradcheck_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("gradcheck.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    assert got == EXPECTED["scenarios"][name]


# ---- PyTorch's checks besides the Jacobians (test_autograd.py's cases) ---------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_checks_undefined_output_gradients_and_overlapping_inputs(fast_mode):
    from agrad.autograd import gradcheck

    def refuses_undefined(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")
        y = x.clone()
        y.register_hook(hook)
        return y

    x = agrad.ones(1, dtype=agrad.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking"):
        with pytest.raises(RuntimeError, match="Expected backward function to handle undefined output grads"):
            gradcheck(refuses_undefined, (x,), fast_mode=fast_mode)
    with pytest.warns(UserWarning):
        assert not gradcheck(refuses_undefined, (x,), raise_exception=False, fast_mode=fast_mode)
    assert gradcheck(refuses_undefined, (x,), check_undefined_grad=False, fast_mode=fast_mode)
    expanded = agrad.ones(1, dtype=agrad.float64, requires_grad=True).expand((2, 2))
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda t: t, (expanded,), raise_exception=False, fast_mode=fast_mode)


def test_gradcheck_checks_batched_gradients_backward_and_forward():
    from agrad.autograd import Function, gradcheck

    y = agrad.randn(3, dtype=agrad.float64, requires_grad=True)
    assert gradcheck(lambda t: (t * t).sin(), (y,), check_batched_grad=True)
    assert gradcheck(lambda t, n: ((t * t).sin(), t + n), (y, 1), check_forward_ad=True,
                     check_batched_forward_grad=True)

    def with_jvp(jvp):
        class Fn(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        Fn.jvp = staticmethod(jvp)
        return Fn.apply

    # a tangent given as a row of a batch is a view: a jvp that answers differently for one is caught
    views_differ = with_jvp(lambda ctx, g: g * (2 if g._base is None else 3))
    assert gradcheck(views_differ, (y,), check_forward_ad=True)
    with pytest.raises(RuntimeError, match=r"(?s)For output 0 and input 0:.*check_batched_forward_grad=False"):
        gradcheck(views_differ, (y,), check_forward_ad=True, check_batched_forward_grad=True)
    # the default generator refuses to draw while the batch is mapped, with torch's message
    draws = with_jvp(lambda ctx, g: agrad.randn_like(g) * 0 + g * 2)
    with pytest.raises(RuntimeError, match="vmap: We do not yet support calling random operations inside of vmap"):
        gradcheck(draws, (y,), check_forward_ad=True, check_batched_forward_grad=True)
    agrad.randn(1)              # and draws again once it is done
