"""agrad.nn against torch 2.13.0 (tests/reference/nn_fixtures.json, written by
make_nn_reference.py): module structures and reprs, forwards from torch's initial state,
losses, initialisation distributions, load_state_dict's messages, a short training run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.nn  # noqa: F401

import nn_scenarios as S

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "reference" / "nn_fixtures.json").read_text())


def _close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol)


def _close_nested(actual, expected):
    if isinstance(expected, dict):          # a tuple of outputs (nn_scenarios._output_values)
        assert isinstance(actual, dict) and len(actual["items"]) == len(expected["items"])
        for a, e in zip(actual["items"], expected["items"]):
            _close_nested(a, e)
    elif expected is None:
        assert actual is None
    else:
        _close(actual, expected)


def test_fixtures_cover_every_scenario():
    assert set(FIXTURES["structures"]) == set(S.STRUCTURES)
    assert set(FIXTURES["forwards"]) == set(S.FORWARDS)
    assert set(FIXTURES["inits"]) == set(S.INITS)
    assert set(FIXTURES["load_errors"]) == set(S.LOAD_ERRORS)


@pytest.mark.parametrize("name", sorted(S.STRUCTURES))
def test_structure_matches_torch(name):
    got, want = S.structure(agrad, name), FIXTURES["structures"][name]
    for field in ("keys", "shapes", "dtypes", "parameters", "buffers", "modules", "children"):
        assert got[field] == want[field], field
    # NOTE: ParameterList and ParameterDict print dtypes and tensor types, which agrad names agrad.float32,
    # agrad.FloatTensor where torch has torch.float32, torch.FloatTensor
    assert got["repr"] == want["repr"].replace("torch.", "agrad.")


@pytest.mark.parametrize("name", sorted(S.FORWARDS))
def test_forward_from_torch_state_matches_torch(name):
    want = FIXTURES["forwards"][name]
    got = S.forward(agrad, name, want["initial"])
    assert len(got["outputs"]) == len(want["outputs"])
    for out, expected in zip(got["outputs"], want["outputs"]):
        _close_nested(out, expected)
    assert sorted(got["grads"]) == sorted(want["grads"])
    for key, expected in want["grads"].items():
        if key == "raises":
            assert got["grads"][key] == expected
        else:
            _close(got["grads"][key], expected, rtol=1e-4, atol=1e-5)
    # running statistics and num_batches_tracked after two training calls and one eval call
    assert set(got["final"]) == set(want["final"])
    for key, expected in want["final"].items():
        _close(got["final"][key], expected)


@pytest.mark.parametrize("name", ["layernorm", "layernorm_nobias", "batchnorm1d", "batchnorm2d_cma"])
def test_deterministic_initial_state_equals_torch(name):
    module = S.STRUCTURES[S.FORWARDS[name][0]](agrad)
    assert S.state_values(module) == FIXTURES["forwards"][name]["initial"]


def test_embedding_padding_row_starts_at_zero_and_gets_no_gradient():
    emb = S.STRUCTURES["embedding"](agrad)
    assert emb.padding_idx == 5 and emb.weight[5].tolist() == [0.0] * 4
    emb(agrad.tensor([[5, 1], [5, 5]])).sum().backward()
    assert emb.weight.grad[5].tolist() == [0.0] * 4 and emb.weight.grad[1].tolist() == [1.0] * 4


def test_losses_match_torch():
    got, want = S.losses(agrad), FIXTURES["losses"]
    assert set(got) == set(want)
    for key in want:
        _close(got[key], want[key])


@pytest.mark.parametrize("name", sorted(S.INITS))
def test_init_distribution_matches_torch(name):
    """A seeded large sample: inside the bounds, reaching them, with the distribution's mean
    and spread, and the spread of torch's own sample."""
    agrad.manual_seed(1234)
    sample = S.init_sample(agrad, name).ravel()
    dist, torch_stats = FIXTURES["inits"][name]["distribution"], FIXTURES["inits"][name]["torch"]
    n = sample.size
    assert n == torch_stats["n"]
    if dist["kind"] == "uniform":
        lo, hi = dist["low"], dist["high"]
        assert sample.min() >= lo - 1e-6 * abs(lo) and sample.max() <= hi + 1e-6 * abs(hi)
        assert sample.min() < lo + 20 * (hi - lo) / n and sample.max() > hi - 20 * (hi - lo) / n
        mean, std = (lo + hi) / 2, (hi - lo) / np.sqrt(12)
    elif dist["kind"] == "normal":
        mean, std = dist["mean"], dist["std"]
    else:      # truncated normal: the bounds, and torch's sample for the moments
        assert sample.min() >= dist["low"] and sample.max() <= dist["high"]
        mean, std = torch_stats["mean"], torch_stats["std"]
    assert abs(sample.mean() - mean) < 8 * std / np.sqrt(n)
    assert sample.std() == pytest.approx(std, rel=0.02)
    assert sample.std() == pytest.approx(torch_stats["std"], rel=0.02)


def test_gains_and_fans_equal_torch():
    got, want = S.gains_and_fans(agrad), FIXTURES["gains_and_fans"]
    assert got["fans"] == want["fans"]
    _close(got["gains"], want["gains"], rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(S.LOAD_ERRORS))
def test_load_state_dict_messages_equal_torch(name):
    got, want = S.load_error(agrad, name), FIXTURES["load_errors"][name]
    # NOTE: agrad prints torch.Size as agrad.Size, as its other messages do
    assert got["strict"] == want["strict"].replace("torch.Size(", "agrad.Size(")
    assert got["not_strict"] == want["not_strict"]


def test_training_from_torch_state_matches_torch():
    want = FIXTURES["train"]
    got = S.train(agrad, want["initial"])
    _close(got["losses"], want["losses"])
    for key, expected in want["final"].items():
        _close(got["final"][key], expected, rtol=2e-5, atol=2e-6)
    assert got["losses"][-1] < got["losses"][0]
