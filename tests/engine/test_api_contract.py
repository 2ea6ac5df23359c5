"""PyTorch's API around autograd (api_scenarios.py), compared with what PyTorch 2.13.0 did in the
same scenarios: tests/reference/engine/api.json, written by tests/reference/make_api_reference.py.
This file never imports torch."""

import pytest

import scenario_fixtures
from api_scenarios import SCENARIOS
from test_engine_contract import _normalise
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops

EXPECTED = scenario_fixtures.expected("api.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    assert _normalise(got) == _normalise(EXPECTED["scenarios"][name])
