"""agrad.compile, Module.compile and agrad.compiler against torch 2.13's with backend="eager"
(tests/reference/compile_scenarios.json, made by make_compile_reference.py): results, gradients and state_dict keys
equal to the eager ones, OptimizedModule's forwarding and copies, disable, stances, and every argument check's
exception and message; then what agrad does where torch would trace or call a backend."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import agrad
from agrad.compiler import backends, stance

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
sys.path.insert(0, str(REFERENCE))
import compile_scenarios  # noqa: E402

RECORDED = json.loads((REFERENCE / "compile_scenarios.json").read_text())


@pytest.fixture(autouse=True)
def _compiler_state_restored():
    yield
    stance._stance = stance.DynamoStance()
    backends.set_default_backend(None)


def test_fixture_is_from_the_pytorch_version_we_follow():
    assert RECORDED["torch_version"].startswith("2.13.")
    assert sorted(RECORDED["scenarios"]) == sorted(compile_scenarios.SCENARIOS)


@pytest.mark.parametrize("name", sorted(compile_scenarios.SCENARIOS))
def test_scenario_matches_torch(name):
    got = json.loads(json.dumps(compile_scenarios.SCENARIOS[name](agrad)))
    assert got == RECORDED["scenarios"][name]


def test_backend_table_is_torchs_registry():
    recorded = RECORDED["scenarios"]["compiler_functions"]
    assert sorted(backends.BACKENDS) == recorded["list_backends_all"]


def test_a_callable_backend_is_refused_at_the_call_never_called():
    called = []

    def backend(gm, example_inputs):
        called.append(gm)
        return gm.forward

    f = agrad.compile(lambda t: t + 1, backend=backend)      # as torch's, nothing is consulted yet
    with pytest.raises(NotImplementedError, match="'backend'.*agrad has no FX graphs"):
        f(agrad.ones(2))
    net = agrad.nn.Linear(2, 2)
    net.compile(backend=backend)
    assert list(net.state_dict()) == ["weight", "bias"]
    with pytest.raises(NotImplementedError, match="callable backend"):
        net(agrad.ones(1, 2))
    with agrad.compiler.set_stance("force_eager"):            # a stance that asks no backend runs it
        assert net(agrad.ones(1, 2)).shape == (1, 2)
    assert called == []


def test_is_compiling_is_false_inside_a_compiled_function_too():
    # torch's is True while Dynamo traces the function; agrad traces nothing and runs it as written
    seen = []
    agrad.compile(lambda t: seen.append((agrad.compiler.is_compiling(), agrad.compiler.is_dynamo_compiling())) or t,
                  backend="eager")(agrad.ones(1))
    assert seen == [(False, False)]


def test_set_stance_inside_a_compiled_region_is_refused_but_not_inside_a_disabled_one():
    def inside(t):
        agrad.compiler.set_stance("force_eager")
        return t

    with pytest.raises(RuntimeError, match="attempted to set_stance in an agrad.compile region"):
        agrad.compile(inside, backend="eager")(agrad.ones(1))
    assert stance.current().stance == "default"
    assert not stance.in_region()
    agrad.compile(lambda t: agrad.compiler.disable(inside)(t), backend="eager")(agrad.ones(1))
    assert stance.current().stance == "force_eager"


def test_a_context_used_as_a_context_manager_is_refused():
    with pytest.raises(RuntimeError, match="annotation/decorator"):
        with agrad.compiler.disable():
            pass


def test_compile_is_not_in_star_import():
    # as agrad.int and agrad.float: `from agrad import *` leaves Python's builtin compile alone
    assert "compile" not in agrad.__all__
    assert agrad.compile is agrad.compiler.compile


def test_module_call_uses_the_compiled_impl_and_hooks_still_run():
    net = agrad.nn.Linear(2, 2)
    calls = []
    net.register_forward_hook(lambda m, i, o: calls.append("hook"))
    net.compile(backend="eager")
    net(agrad.ones(1, 2))
    compiled = agrad.compile(net, backend="eager")
    compiled(agrad.ones(1, 2))
    assert calls == ["hook", "hook"]
