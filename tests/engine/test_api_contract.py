"""PyTorch's API around autograd (api_scenarios.py), compared with what PyTorch 2.13.0 did in the
same scenarios: tests/reference/engine/api.json, written by tests/reference/make_api_reference.py.
This file never imports torch."""
import json
import pathlib

import pytest

import agrad
from api_scenarios import SCENARIOS
from test_engine_contract import _normalise

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine" / "api.json"
EXPECTED = json.loads(FIXTURE.read_text())


def test_fixture_is_from_the_pytorch_version_we_follow():
    assert EXPECTED["torch"].startswith("2.13.0")
    assert sorted(EXPECTED["scenarios"]) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    agrad.set_grad_enabled(True)
    agrad.manual_seed(0)
    try:
        got = SCENARIOS[name](agrad)
    finally:
        agrad.set_grad_enabled(True)
    assert _normalise(got) == _normalise(EXPECTED["scenarios"][name])
