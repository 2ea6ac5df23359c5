"""Record what PyTorch does in the scenarios of torch_function_scenarios.py.

    /work/torchvenv/bin/python tests/reference/make_torch_function_reference.py

writes torch_function_scenarios.json beside it (deterministic), which tests/engine/test_torch_function.py compares
with agrad's answers. The tests never import torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_function_scenarios  # noqa: E402

OUT = Path(__file__).resolve().parent / "torch_function_scenarios.json"


def main() -> None:
    torch.set_default_dtype(torch.float32)
    recorded = {"torch_version": torch.__version__, "scenarios": {}}
    for label, fn in torch_function_scenarios.SCENARIOS.items():
        recorded["scenarios"][label] = json.loads(json.dumps(fn(torch)))      # tuples -> lists
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
