"""Record what PyTorch does in the engine-contract scenarios, for tests that never import torch.

    /tmp/torchvenv/bin/python tests/reference/make_engine_reference.py

Runs every scenario of tests/engine/engine_contract_scenarios.py with `torch` as the
library and writes tests/reference/engine/contract.json (torch version, then one entry
per scenario: what it returned, or the error it raised). Deterministic: running it twice
writes the same bytes. tests/engine/test_engine_contract.py runs the same scenarios on
agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from engine_contract_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "contract.json")


if __name__ == "__main__":
    sys.exit(main())
