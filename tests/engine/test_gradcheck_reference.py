"""`agrad.autograd.gradcheck` compared with what PyTorch 2.13.0's gradcheck did in the same scenarios.

The scenarios (gradcheck_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/gradcheck.json, written by tests/reference/make_gradcheck_reference.py.
This file never imports torch.
"""
import json
import pathlib

import pytest

import agrad
from gradcheck_scenarios import SCENARIOS

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine" / "gradcheck.json"
EXPECTED = json.loads(FIXTURE.read_text())


def test_fixture_is_from_the_pytorch_version_we_follow():
    assert EXPECTED["torch"].startswith("2.13.0")
    assert sorted(EXPECTED["scenarios"]) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    agrad.set_grad_enabled(True)
    try:
        got = SCENARIOS[name](agrad)
    finally:
        agrad.set_grad_enabled(True)
    assert json.loads(json.dumps(got)) == EXPECTED["scenarios"][name]
