"""What the make_*_reference.py scripts of the engine scenarios share: run every scenario of a
`tests/engine/*_scenarios.py` file with `torch` as the library and write the results, with the
torch version, to tests/reference/engine/NAME.json — deterministic (sorted keys), so running a
script twice writes the same bytes. Imported only by those scripts (they import torch);
tests/engine/scenario_fixtures.py reads what this writes. `write_fixture` is the JSON writer of the other
make_*_reference.py scripts too.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))      # where the scenario files live


def write_fixture(path: pathlib.Path, data: dict) -> None:
    """`data` as the fixtures' JSON (sorted keys, one-space indent, a final newline: the same bytes for
    the same data), written whole: a script stopped half-way leaves the old fixture."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def record(torch, scenarios: dict, filename: str, *, seed: int | None = None, **extra) -> int:
    """Each scenario run in grad mode (reseeded when `seed` is given); `extra` adds top-level keys."""
    results = {}
    for name, run in scenarios.items():
        torch.set_grad_enabled(True)
        if seed is not None:
            torch.manual_seed(seed)
        results[name] = run(torch)
    out = HERE / "engine" / filename
    out.parent.mkdir(exist_ok=True)
    write_fixture(out, {"torch": torch.__version__, "scenarios": results, **extra})
    counts = "".join(f", {len(v)} {k}" for k, v in extra.items())
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(results)} scenarios{counts}, torch {torch.__version__}")
    return 0
