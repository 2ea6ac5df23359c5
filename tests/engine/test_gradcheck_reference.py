"""`agrad.autograd.gradcheck` compared with what PyTorch 2.13.0's gradcheck did in the same scenarios.

The scenarios (gradcheck_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/gradcheck.json, written by tests/reference/make_gradcheck_reference.py.
This file never imports torch.
"""

import pytest

import scenario_fixtures
from gradcheck_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("gradcheck.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    assert got == EXPECTED["scenarios"][name]
