"""Record what PyTorch does in the scenarios of subclass_dispatch_scenarios.py.

    /work/torchvenv/bin/python tests/reference/make_subclass_dispatch_reference.py

writes subclass_dispatch_scenarios.json beside it (deterministic); tests/engine/test_subclass_dispatch.py runs
the same scenarios with agrad and compares, without torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import subclass_dispatch_scenarios  # noqa: E402

OUT = Path(__file__).resolve().parent / "subclass_dispatch_scenarios.json"


def main() -> None:
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(0)
    recorded = {"torch_version": torch.__version__, "scenarios": {}}
    for label, fn in subclass_dispatch_scenarios.SCENARIOS.items():
        recorded["scenarios"][label] = json.loads(json.dumps(fn(torch)))      # tuples -> lists
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
