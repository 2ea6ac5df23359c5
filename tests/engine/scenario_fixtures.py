"""Scenarios run here on agrad against what PyTorch 2.13.0 did in the same scenarios: each
`*_scenarios.py` runs with either library, a script in tests/reference/ (make_*_reference.py)
recorded its results on torch into tests/reference/engine/*.json, and the tests compare with
that file. Nothing here imports torch."""
import json
import pathlib

import agrad

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine"


def expected(filename: str) -> dict:
    """The recorded fixture: {"torch": version, "scenarios": {name: result}}."""
    return json.loads((FIXTURES / filename).read_text())


def check_fixture(recorded: dict, scenarios: dict) -> None:
    """The fixture is from the PyTorch version agrad follows, and records exactly these scenarios."""
    assert recorded["torch"].startswith("2.13.0")
    assert sorted(recorded["scenarios"]) == sorted(scenarios)


def run(scenario, *, seed: int | None = None):
    """A scenario's result on agrad, in grad mode (as the recording ran), as JSON reads it back;
    grad mode is restored whatever the scenario did."""
    agrad.set_grad_enabled(True)
    if seed is not None:
        agrad.manual_seed(seed)
    try:
        return json.loads(json.dumps(scenario(agrad)))
    finally:
        agrad.set_grad_enabled(True)
