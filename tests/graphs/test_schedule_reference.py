"""`schedule:` against PyTorch's lr_scheduler classes, run by tests/reference/make_edge_case_reference.py
(torch 2.13.0): cosine is CosineAnnealingLR's closed form past t_max too, and `warmup: W` is
SequentialLR([LinearLR(start_factor=1/W, total_iters=W-1), schedule], milestones=[W]).
This file never imports torch."""
import json
import pathlib

import pytest

from agrad.graphs.training import schedule_factor

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "reference" / "engine" / "edge_cases.json"
SCHEDULES = json.loads(FIXTURE.read_text())["schedules"]


@pytest.mark.parametrize("case", SCHEDULES, ids=lambda c: json.dumps(c["spec"], sort_keys=True))
def test_schedule_is_pytorchs(case):
    factor = schedule_factor(case["spec"], case["total_steps"])
    assert [factor(t) for t in range(len(case["lrs"]))] == pytest.approx(case["lrs"], rel=1e-12, abs=1e-15)
