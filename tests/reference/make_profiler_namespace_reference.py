"""Record what torch.profiler (schedule, profile's cycles and on_trace_ready, its warnings and
errors, its trace files) gives in every scenario of tests/engine/profiler_namespace_scenarios.py,
for tests/engine/test_profiler_namespace.py (which never imports torch):
tests/reference/engine/profiler_namespace.json. Run on a CPU-only torch (no CUDA: the scenarios
of CUDA activity record its absence). Deterministic: running it twice writes the same bytes.

    /work/torchvenv/bin/python tests/reference/make_profiler_namespace_reference.py
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from profiler_namespace_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    assert not torch.cuda.is_available(), "record on a machine without CUDA"
    torch.set_num_threads(1)
    return record(torch, SCENARIOS, "profiler_namespace.json")


if __name__ == "__main__":
    sys.exit(main())
