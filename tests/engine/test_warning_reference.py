"""The warnings of agrad's autograd compared with PyTorch 2.13.0's in the same scenarios.

The scenarios (warning_scenarios.py) run here on agrad; their results on torch are in
tests/reference/engine/warnings.json, written by tests/reference/make_warning_reference.py
(each scenario in a fresh process). This file never imports torch.
"""
import json
import pathlib

import pytest

import agrad
from agrad.autograd import engine
from warning_scenarios import SCENARIOS

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine" / "warnings.json"
EXPECTED = json.loads(FIXTURE.read_text())


def test_fixture_is_from_the_pytorch_version_we_follow():
    assert EXPECTED["torch"].startswith("2.13.0")
    assert sorted(EXPECTED["scenarios"]) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name, monkeypatch):
    # as in a fresh process: the create_graph warning is given once per process
    monkeypatch.setattr(engine, "_reference_cycle_warned", False)
    agrad.set_grad_enabled(True)
    try:
        got = SCENARIOS[name](agrad)
    finally:
        agrad.set_grad_enabled(True)
    assert json.loads(json.dumps(got)) == EXPECTED["scenarios"][name]
