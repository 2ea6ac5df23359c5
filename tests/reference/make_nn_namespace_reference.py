"""Record what PyTorch does in the nn/autograd namespace scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_nn_namespace_reference.py

Runs every scenario of tests/engine/nn_namespace_scenarios.py (nn.Buffer, nn.attention's backends,
sdpa_kernel and SDPAParams, nn.attention.bias, nn.grad, linear_cross_entropy and
LinearCrossEntropyLoss, SyncBatchNorm, Container, autograd's is_tensor_like, NestedIOFunction,
enforce_grad_layout_policy, set_anomaly_enabled) with `torch` as the library and writes
tests/reference/engine/nn_namespace.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_nn_namespace.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import sys

import torch

from scenario_recording import record
from nn_namespace_scenarios import SCENARIOS  # noqa: E402 - on the path scenario_recording puts


def main() -> int:
    return record(torch, SCENARIOS, "nn_namespace.json", seed=0)


if __name__ == "__main__":
    sys.exit(main())
