"""The warnings of agrad's autograd compared with PyTorch 2.13.0's in the same scenarios.

The scenarios (warning_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/warnings.json, written by tests/reference/make_warning_reference.py
(each scenario in a fresh process). This file never imports torch.
"""

import pytest

import scenario_fixtures
from agrad import warn_once
from warning_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("warnings.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name, monkeypatch):
    # as in a fresh process: the create_graph warning is given once per process
    monkeypatch.setattr(warn_once, "_given", set())
    got = scenario_fixtures.run(SCENARIOS[name])
    assert got == EXPECTED["scenarios"][name]
