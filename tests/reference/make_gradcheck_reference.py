"""Record what PyTorch's gradcheck does in the gradcheck scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_gradcheck_reference.py

Runs every scenario of tests/engine/gradcheck_scenarios.py with `torch` as the library
and writes tests/reference/engine/gradcheck.json (torch version, then one entry per
scenario: what gradcheck returned or raised, and the warnings it gave). Deterministic:
running it twice writes the same bytes. tests/engine/test_gradcheck_reference.py runs
the same scenarios on agrad and compares.
"""
from __future__ import annotations

import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from gradcheck_scenarios import SCENARIOS  # noqa: E402


def main() -> int:
    results = {}
    for name, run in SCENARIOS.items():
        torch.set_grad_enabled(True)
        results[name] = run(torch)
    out = HERE / "engine" / "gradcheck.json"
    out.parent.mkdir(exist_ok=True)
    text = json.dumps({"torch": torch.__version__, "scenarios": results}, indent=1, sort_keys=True)
    out.write_text(text + "\n")
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(results)} scenarios, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
