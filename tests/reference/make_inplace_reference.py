"""Record what PyTorch does in the view / in-place scenarios of inplace_scenarios.py.

    /tmp/torchvenv/bin/python tests/reference/make_inplace_reference.py

writes inplace_scenarios.json beside it (deterministic); tests/engine/test_views_inplace.py
runs the same scenarios with agrad and compares, without torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inplace_scenarios  # noqa: E402

OUT = Path(__file__).resolve().parent / "inplace_scenarios.json"     # not in fixtures/: make_reference.py owns that


def main() -> None:
    torch.set_default_dtype(torch.float32)
    recorded = {"torch_version": torch.__version__, "scenarios": {}}
    for label, fn in inplace_scenarios.SCENARIOS.items():
        recorded["scenarios"][label] = fn(torch)
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
