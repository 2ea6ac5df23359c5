"""Record what PyTorch does in the namespace scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_namespace_reference.py

Runs every scenario of tests/engine/namespace_scenarios.py (constants, dtype, finfo/iinfo, type
promotion, the is_* predicates, default dtype and device, typename, the thread/determinism/matmul
settings, Generator and seeds, normal/multinomial/randperm/poisson/binomial/randint_like and the
in-place samplers, the Tensor casts and memory predicates) with `torch` as the library and writes
tests/reference/engine/namespace.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_torch_namespace_basics.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from namespace_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "namespace.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
