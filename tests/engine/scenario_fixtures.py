"""Scenarios run here on agrad against what PyTorch 2.13.0 did in the same scenarios: each
`*_scenarios.py` runs with either library, a script in tests/reference/ (make_*_reference.py)
recorded its results on torch into tests/reference/engine/*.json, and the tests compare with
that file. Nothing here imports torch."""
import importlib.util
import json
import pathlib
import sys

import numpy as np

import agrad

REFERENCE = pathlib.Path(__file__).resolve().parents[1] / "reference"
FIXTURES = REFERENCE / "engine"


def expected(filename: str) -> dict:
    """The recorded fixture: {"torch": version, "scenarios": {name: result}}."""
    return json.loads((FIXTURES / filename).read_text())


def check_fixture(recorded: dict, scenarios: dict, script: str = "") -> None:
    """The fixture is from the PyTorch version agrad follows, and records exactly these scenarios
    (the recordings beside their scenario files name the version `torch_version`); `script`
    names what regenerates it."""
    assert recorded.get("torch", recorded.get("torch_version", "")).startswith("2.13.0")
    assert sorted(recorded["scenarios"]) == sorted(scenarios), f"regenerate: tests/reference/{script}"


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


def scenarios_beside(stem: str) -> tuple[dict, dict]:
    """(SCENARIOS, the recording) of a scenarios file that lives beside its recording script in
    tests/reference/ (STEM.py, no package; STEM.json)."""
    spec = importlib.util.spec_from_file_location(f"agrad_reference_{stem}", REFERENCE / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.SCENARIOS, json.loads((REFERENCE / f"{stem}.json").read_text())


def compare(got, want, path: list, rtol: float, atol: float = 1e-12) -> None:
    """`got` equals PyTorch's `want` (JSON values): floats to `rtol` and `atol`, the rest exactly;
    `path` names the place in messages."""
    if isinstance(want, float) or isinstance(got, float):
        assert got is not None and want is not None, f"{path}: {got!r} vs PyTorch {want!r}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=str(path))
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} vs PyTorch {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, path + [i], rtol, atol)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: {got!r} vs PyTorch {want!r}"
        for k in want:
            compare(got[k], want[k], path + [k], rtol, atol)
    else:
        assert got == want, f"{path}: {got!r} vs PyTorch {want!r}"
