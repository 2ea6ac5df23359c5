"""Write tests/reference/nn_utils_fixtures.json: torch.nn.utils' and torch.nn.init's results for
every scenario in tests/engine/nn_utils_scenarios.py (parametrizations, the weight_norm and
spectral_norm hooks, clipping, fusion, functional_call, ...), each with the initial state agrad
starts from. Run with the torch venv (tests/reference/README.md):

    /tmp/torchvenv/bin/python tests/reference/make_nn_utils_reference.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from scenario_recording import write_fixture  # noqa: E402 - beside this script
import nn_utils_scenarios as S  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    out = {"torch_version": torch.__version__,
           "scenarios": {name: scenario(torch, None) for name, scenario in S.SCENARIOS.items()}}
    path = HERE / "nn_utils_fixtures.json"
    write_fixture(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
