"""Which graph files `test PATH...` and `validate PATH...` mean."""
from __future__ import annotations

from pathlib import Path

from agrad.cli.app import abort
from agrad.cli.status import ExitStatus

GRAPH_SUFFIXES = (".yaml", ".yml")


def graph_files(paths: tuple[str, ...]) -> list[str]:
    """Files as given; folders searched recursively for *.yaml / *.yml, each folder's files sorted."""
    found: list[str] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            matches = sorted(p for p in path.rglob("*") if p.suffix in GRAPH_SUFFIXES and p.is_file())
            if not matches:
                abort(f"no graph files (*.yaml) under {given}", ExitStatus.INVALID)
            found += [str(p) for p in matches]
        else:
            found.append(given)
    return found
