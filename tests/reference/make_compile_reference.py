"""Record what PyTorch does in the scenarios of compile_scenarios.py (torch.compile with backend="eager",
Module.compile, torch.compiler):

    /work/torchvenv/bin/python tests/reference/make_compile_reference.py

writes compile_scenarios.json beside it (deterministic), which tests/engine/test_compile.py compares with agrad's
answers. The tests never import torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compile_scenarios  # noqa: E402

OUT = Path(__file__).resolve().parent / "compile_scenarios.json"


def main() -> None:
    torch.set_default_dtype(torch.float32)
    recorded = {"torch_version": torch.__version__, "scenarios": {}}
    for label, fn in compile_scenarios.SCENARIOS.items():
        torch._dynamo.reset()
        recorded["scenarios"][label] = json.loads(json.dumps(fn(torch)))      # tuples -> lists
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
