"""The scenarios of torch functions that are not ops (torch_functions_scenarios.py) compared with what
PyTorch 2.13.0 did in them:
tests/reference/engine/torch_functions.json, written by tests/reference/make_torch_functions_reference.py.
This file never imports torch."""

import pytest

import scenario_fixtures
from torch_functions_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("torch_functions.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_torch_functions_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name], seed=0)
    scenario_fixtures.compare(got, EXPECTED["scenarios"][name], [name], rtol=1e-6)
