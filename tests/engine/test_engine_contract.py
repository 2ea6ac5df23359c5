"""The engine's contract, compared with what PyTorch 2.13.0 did in the same scenarios.

The scenarios (engine_contract_scenarios.py) run here on agrad; their results on torch
are in tests/reference/engine/contract.json, written by
tests/reference/make_engine_reference.py. This file never imports torch.
"""
import json

import pytest

import scenario_fixtures
from engine_contract_scenarios import SCENARIOS
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops

EXPECTED = scenario_fixtures.expected("contract.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    assert _normalise(got) == _normalise(EXPECTED["scenarios"][name])


def _normalise(value):
    """JSON round trip; floats rounded to 6 digits (PyTorch computed some in float32)."""
    value = json.loads(json.dumps(value))

    def walk(v):
        if isinstance(v, float):
            return round(v, 6)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v
    return walk(value)
