"""agrad's nn.Buffer, nn.attention (and .bias), nn.grad, linear_cross_entropy, SyncBatchNorm,
Container and autograd's is_tensor_like / NestedIOFunction / enforce_grad_layout_policy /
set_anomaly_enabled against PyTorch's: the scenarios of nn_namespace_scenarios.py compared with what
PyTorch 2.13.0 did in them (tests/reference/engine/nn_namespace.json, written by
tests/reference/make_nn_namespace_reference.py). This file never imports torch."""
import numpy as np
import pytest

import agrad
import scenario_fixtures
from nn_namespace_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("nn_namespace.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_nn_namespace_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    _compare(got, EXPECTED["scenarios"][name], [name])


def _compare(got, want, path):
    """Equal to PyTorch's, floats to float32's precision (its kernels are not agrad's: PyTorch's CPU flash
    attention sums in another order than its math path), the rest exactly."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(want, (int, float)), f"{path}: {got!r} vs {want!r}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(path))
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} vs PyTorch {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, path + [i])
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: {sorted(got)} vs PyTorch {sorted(want)}"
        for k in want:
            _compare(got[k], want[k], path + [k])
    else:
        assert got == want, f"{path}: {got!r} vs PyTorch {want!r}"


def test_sdpa_kernel_restores_the_flags_a_failing_attention_left():
    q = agrad.ones(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match="No viable backend"):
        with agrad.nn.attention.sdpa_kernel([]):
            agrad.nn.functional.scaled_dot_product_attention(q, q, q)
    assert agrad.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 1, 2, 2)


def test_linear_cross_entropy_refuses_the_chunked_options_it_does_not_have():
    x, w, t = agrad.ones(2, 3), agrad.ones(4, 3), agrad.tensor([0, 1])
    with pytest.raises(NotImplementedError, match="no chunked implementation; pass options=None"):
        agrad.nn.functional.linear_cross_entropy(x, w, t, options=object())
    with pytest.raises(NotImplementedError, match="no chunked implementation"):
        agrad.nn.LinearCrossEntropyLoss(3, 4, options=object())(x, t)
