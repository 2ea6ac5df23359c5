"""Record the warnings PyTorch's autograd gives in the warning scenarios, for tests that never import torch.

    /work/torchvenv/bin/python tests/reference/make_warning_reference.py

Runs every scenario of tests/engine/warning_scenarios.py with `torch` as the library, each
in a fresh process (Engine::execute's create_graph warning is TORCH_WARN_ONCE: once per
process), and writes tests/reference/engine/warnings.json (torch version, then one entry
per scenario). Deterministic: running it twice writes the same bytes.
tests/engine/test_warning_reference.py runs the same scenarios on agrad and compares.
"""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))


def one(name: str) -> None:
    import torch
    from warning_scenarios import SCENARIOS

    print(json.dumps({"torch": torch.__version__, "result": SCENARIOS[name](torch)}))


def main() -> int:
    from warning_scenarios import SCENARIOS

    results, version = {}, None
    for name in SCENARIOS:
        done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=True)
        got = json.loads(done.stdout)
        results[name], version = got["result"], got["torch"]
    out = HERE / "engine" / "warnings.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"torch": version, "scenarios": results}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(results)} scenarios, torch {version}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 2:
        one(sys.argv[1])
        sys.exit(0)
    sys.exit(main())
