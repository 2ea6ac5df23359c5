"""Op and tensor edge cases, compared with what PyTorch 2.13.0 did in the same scenarios.

The scenarios (edge_case_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/edge_cases.json, written by tests/reference/make_edge_case_reference.py.
This file never imports torch. Numbers agree to a relative 1e-6 (float32 values computed the
way PyTorch computes them agree to the bit; the cancellation this guards against was 1e-4),
strings (messages, signed zeros as repr) exactly.
"""

import pytest

import scenario_fixtures
from edge_case_scenarios import SCENARIOS
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops
from recordings import recording  # noqa: F401 — and with the C and the Python recording of each op

EXPECTED = scenario_fixtures.expected("edge_cases.json")


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    got = scenario_fixtures.run(SCENARIOS[name])
    assert_matches(got, EXPECTED["scenarios"][name])


def assert_matches(got, expected, where="result"):
    if isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected), where
        for key in expected:
            assert_matches(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(got, bool):
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-30), where
    else:
        assert got == expected, where
