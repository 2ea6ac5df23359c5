"""Record what PyTorch does in the API scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_api_reference.py

Runs every scenario of tests/engine/api_scenarios.py (inference tensors, as_strided, bernoulli,
unsafe_split, nanmedian, increment_version, batched grads, anomaly mode without NaN checks,
saved_variables, _backward_cls, nn.functional's inplace flags, uint32/uint64, interpolate's
bicubic and area, avg_pool3d, max_pool3d, pixel_shuffle, fold/unfold, grid_sample and affine_grid) with
`torch` as the library and writes
tests/reference/engine/api.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_api_contract.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from api_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "api.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
