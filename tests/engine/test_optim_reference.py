"""agrad.optim, agrad.optim.lr_scheduler and agrad.nn.utils against torch 2.13.0's values
(tests/reference/optim_fixtures.json, written by make_optim_reference.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.nn.utils  # noqa: F401
import agrad.optim  # noqa: F401

import optim_scenarios as S

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "reference" / "optim_fixtures.json").read_text())


def _close(actual, expected, rtol=2e-5, atol=2e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def test_fixtures_cover_every_scenario():
    assert set(FIXTURES["optimizers"]) == set(S.OPTIMIZERS)
    assert set(FIXTURES["schedulers"]) == set(S.SCHEDULERS)
    assert set(FIXTURES["clips"]) == set(S.CLIPS)
    assert set(FIXTURES["errors"]) == set(S.ERRORS)
    assert set(FIXTURES["fixed_gradients"]) == {n for n, (cls, _) in S.OPTIMIZERS.items() if cls != "LBFGS"}
    assert S.BIT_EXACT <= set(FIXTURES["fixed_gradients"])
    assert set(FIXTURES["swa"]) == set(S.SWA)
    assert set(FIXTURES["swa_errors"]) == set(S.SWA_ERRORS)


@pytest.mark.parametrize("name", sorted(S.ERRORS))
def test_refusal_matches_torch(name):
    want = FIXTURES["errors"][name]
    assert want[0] != "no error"
    assert S.run_error(agrad, name) == want


@pytest.mark.parametrize("name", sorted(S.OPTIMIZERS))
def test_optimizer_matches_torch(name):
    got, want = S.run_optimizer(agrad, name), FIXTURES["optimizers"][name]
    _close(got["losses"], want["losses"])
    _close(got["W"], want["W"])
    _close(got["b"], want["b"])
    if name in S.FLOAT64_EXACT:
        for key in ("losses", "W", "b"):
            _close(got[key], want[key], rtol=1e-13, atol=1e-13)
    assert got["state_keys"] == want["state_keys"]         # torch's names for the buffers
    # NOTE: the parameters moved: a no-op step would fail here, not only in the losses
    assert not np.allclose(want["W"], S._data()["W"])


@pytest.mark.parametrize("name", sorted(S.OPTIMIZERS))
def test_optimizer_resumed_from_its_state_dict_goes_on_as_torch(name):
    got, want = S.run_optimizer(agrad, name, resume=True), FIXTURES["optimizers"][name]
    _close(got["losses"], want["losses"])
    _close(got["W"], want["W"])
    _close(got["b"], want["b"])


@pytest.mark.parametrize("name", sorted(FIXTURES["fixed_gradients"]))
def test_optimizer_arithmetic_on_torchs_gradients(name):
    got, want = S.run_fixed_gradients(agrad, name), FIXTURES["fixed_gradients"][name]
    for key in ("W", "b"):
        if name in S.BIT_EXACT:
            np.testing.assert_array_equal(np.float32(got[key]), np.float32(want[key]))
        else:
            _close(got[key], want[key], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(S.CLIPS))
def test_clip_matches_torch(name):
    got, want = S.run_clip(agrad, name), FIXTURES["clips"][name]
    _close(got["norms"], want["norms"])
    _close(got["W"], want["W"])
    _close(got["b"], want["b"])


@pytest.mark.parametrize("name", sorted(S.SCHEDULERS))
def test_scheduler_matches_torch(name):
    got, want = S.run_scheduler(agrad, name), FIXTURES["schedulers"][name]
    _close(got["lrs"], want["lrs"], rtol=1e-12, atol=0)
    assert set(got) == set(want)
    if "momentums" in want:         # OneCycleLR and CyclicLR cycle momentum (SGD) or beta1 (Adam)
        _close(got["momentums"], want["momentums"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", sorted(S.SCHEDULERS))
def test_scheduler_resumed_from_state_dicts_goes_on_as_torch(name):
    got, want = S.run_scheduler(agrad, name, resume=True), FIXTURES["schedulers"][name]
    _close(got["lrs"], want["lrs"], rtol=1e-12, atol=0)
    if "momentums" in want:
        _close(got["momentums"], want["momentums"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", sorted(S.SWA))
def test_averaged_model_and_update_bn_match_torch(name):
    got, want = S.run_swa(agrad, name), FIXTURES["swa"][name]
    assert len(got["states"]) == len(want["states"]) == S.SWA_STEPS
    for got_state, want_state in zip(got["states"] + [got["after_update_bn"]],
                                     want["states"] + [want["after_update_bn"]]):
        assert set(got_state) == set(want_state)
        for key in want_state:
            _close(got_state[key], want_state[key], rtol=1e-13, atol=1e-13)
    assert got["training"] is want["training"] is False     # update_bn puts the eval mode back
    _close(got["output"], want["output"], rtol=1e-12, atol=1e-13)
    # NOTE: the average moved away from the first copy: a no-op update would fail here
    assert not np.allclose(want["states"][-1]["module.0.weight"], want["states"][0]["module.0.weight"])


@pytest.mark.parametrize("name", sorted(S.SWA_ERRORS))
def test_swa_refusal_matches_torch(name):
    want = FIXTURES["swa_errors"][name]
    assert want[0] != "no error"
    assert S.run_swa_error(agrad, name) == want
