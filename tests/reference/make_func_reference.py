"""Write tests/reference/func_fixtures.json: what torch.func (grad, vjp, jvp, jacrev, jacfwd,
hessian, linearize, vmap, functional_call, ...) returns and raises in every scenario of tests/engine/func_scenarios.py, for
tests/engine/test_func.py (which never imports torch). Run with the torch venv
(tests/reference/README.md); deterministic, so running it twice writes the same bytes:

    /work/torchvenv/bin/python tests/reference/make_func_reference.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))     # where the scenario files live
from func_scenarios import SCENARIOS


def main() -> int:
    torch.set_num_threads(1)
    results = {}
    for name, run in SCENARIOS.items():
        torch.set_grad_enabled(True)
        torch.manual_seed(0)
        results[name] = run(torch)
    out = HERE / "func_fixtures.json"
    out.write_text(json.dumps({"torch": torch.__version__, "scenarios": results}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(results)} scenarios, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
