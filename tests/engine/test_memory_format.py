"""Memory formats (agrad.channels_last, …) as PyTorch 2.13's: the scenarios of
tests/reference/memory_format_scenarios.py run here with agrad and are compared with what PyTorch
answered in them (memory_format_scenarios.json, written by make_memory_format_reference.py):
strides of copies, *_like factories, pointwise ops, conv2d and gradients, c10's contiguity rules.
This file never imports torch."""
from __future__ import annotations

import pickle

import pytest

import agrad
import scenario_fixtures

SCENARIOS, RECORDED = scenario_fixtures.scenarios_beside("memory_format_scenarios")


def test_the_recording_covers_every_scenario():
    scenario_fixtures.check_fixture(RECORDED, SCENARIOS, "make_memory_format_reference.py")


@pytest.mark.parametrize("label", sorted(SCENARIOS))
def test_scenario_matches_pytorch(label):
    scenario_fixtures.compare(scenario_fixtures.run(SCENARIOS[label]), RECORDED["scenarios"][label], [label],
                              rtol=1e-12)


def test_formats_are_one_object_each():
    assert isinstance(agrad.channels_last, agrad.memory_format)
    assert repr(agrad.channels_last_3d) == "agrad.channels_last_3d"
    assert pickle.loads(pickle.dumps(agrad.preserve_format)) is agrad.preserve_format


def test_names_still_work_where_strings_were_passed():
    x = agrad.randn(2, 3, 4, 5)
    assert x.clone(memory_format="channels_last").stride() == (60, 1, 15, 3)
    assert agrad.randn(3, 2).t().clone(memory_format="contiguous_format").stride() == (3, 1)
    with pytest.raises(ValueError, match="unknown memory format 'nhwc'"):
        x.clone(memory_format="nhwc")


def test_values_and_gradient_survive_a_layout_change():
    x = agrad.randn(2, 3, 4, 5, dtype=agrad.float64, requires_grad=True)
    y = x.contiguous(memory_format=agrad.channels_last)
    assert agrad.equal(y, x)
    (y * agrad.arange(120.0, dtype=agrad.float64).reshape(2, 3, 4, 5)).sum().backward()
    assert agrad.equal(x.grad, agrad.arange(120.0, dtype=agrad.float64).reshape(2, 3, 4, 5))


def test_a_graph_file_names_a_format(tmp_path):
    from agrad.graphs.binding import _fits
    assert _fits("MemoryFormat?", "channels_last") and not _fits("MemoryFormat?", "nhwc")
