"""Record what PyTorch does in the API scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_api_reference.py

Runs every scenario of tests/engine/api_scenarios.py (inference tensors, as_strided, bernoulli,
unsafe_split, nanmedian, increment_version, batched grads, anomaly mode without NaN checks,
saved_variables, _backward_cls, nn.functional's inplace flags, uint32/uint64, interpolate's
bicubic and area, avg_pool3d) with `torch` as the library and writes
tests/reference/engine/api.json. Deterministic: running it twice writes the same bytes.
tests/engine/test_api_contract.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from api_scenarios import SCENARIOS  # noqa: E402


def main() -> int:
    results = {}
    for name, run in SCENARIOS.items():
        torch.set_grad_enabled(True)
        torch.manual_seed(0)
        results[name] = run(torch)
    out = HERE / "engine" / "api.json"
    text = json.dumps({"torch": torch.__version__, "scenarios": results}, indent=1, sort_keys=True)
    out.write_text(text + "\n")
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(results)} scenarios, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
