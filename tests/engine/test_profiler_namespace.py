"""agrad.profiler as torch.profiler: the schedule's actions, profile's cycles (which transitions
start, stop and hand over a trace), on_trace_ready's calls and what they see, the warnings and
errors, the trace files; compared with PyTorch 2.13.0's results in the same scenarios
(profiler_namespace_scenarios.py, recorded by tests/reference/make_profiler_namespace_reference.py).
Then what PyTorch's CPU build cannot show: ITT and NVTX absent, the atomic trace files, the lazy import."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import warnings

import pytest

import agrad
import scenario_fixtures
from agrad import profiler as P
from profiler_namespace_scenarios import SCENARIOS

EXPECTED = scenario_fixtures.expected("profiler_namespace.json")
# what depends on whether CUDA is here: the recording ran without it
_CUDA_DEPENDENT = {"activities"}


def test_fixture_is_from_the_pytorch_version_we_follow():
    scenario_fixtures.check_fixture(EXPECTED, SCENARIOS, "make_profiler_namespace_reference.py")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_pytorch(name):
    if name in _CUDA_DEPENDENT and agrad.cuda.is_available():
        pytest.skip("recorded on a machine without CUDA")
    assert scenario_fixtures.run(SCENARIOS[name]) == EXPECTED["scenarios"][name]
