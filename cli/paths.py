"""Which graph files `test PATH...` and `validate PATH...` mean.

Folders are walked as pytest and ruff walk them: dot-folders (`.git`, `.venv`,
`.github`), virtualenvs (any folder with a `pyvenv.cfg`), `node_modules`,
`__pycache__` and `site-packages` are not entered, `--exclude GLOB` leaves out more,
and a YAML file that is not a graph (`agrad.graphs.discovery`) is skipped. A file named
on the command line is always read, and `-` is standard input.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from agrad.cli.app import abort
from agrad.cli.status import ExitStatus

GRAPH_SUFFIXES = (".yaml", ".yml")
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages"})


@dataclass
class Found:
    files: list[str] = field(default_factory=list)
    not_graphs: list[str] = field(default_factory=list)    # walked YAML that is not a graph, skipped


def _excluded(path: str, name: str, patterns: tuple[str, ...]) -> bool:
    """`--exclude GLOB` matches a file's or folder's name, or its path as walked (`graphs/wip/*`)."""
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, f"*/{p}")
               for p in patterns)


def _enters(folder: str, name: str, patterns: tuple[str, ...]) -> bool:
    if name.startswith(".") or name in SKIPPED_FOLDERS or _excluded(folder, name, patterns):
        return False
    return not os.path.exists(os.path.join(folder, "pyvenv.cfg"))        # a virtualenv, whatever its name


def _walk(root: str, patterns: tuple[str, ...]) -> list[str]:
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if _enters(os.path.join(folder, d), d, patterns))
        found += [os.path.join(folder, n) for n in sorted(names)
                  if n.endswith(GRAPH_SUFFIXES) and not _excluded(os.path.join(folder, n), n, patterns)]
    return [str(Path(p)) for p in found]


def graph_files(paths: tuple[str, ...], exclude: tuple[str, ...] = (), skip_named: bool = False) -> Found:
    """Files as given; folders searched recursively for *.yaml / *.yml, each folder's files sorted.
    `skip_named`: a named file that is not a graph is skipped too (pre-commit names every YAML file)."""
    from agrad.graphs.discovery import is_graph_file

    found = Found()
    for given in paths:
        if given == "-" and "-" in found.files:
            abort("- (standard input) is given twice", ExitStatus.INVALID)
        if given == "-" or not Path(given).is_dir():
            if skip_named and given != "-" and not is_graph_file(given):
                found.not_graphs.append(given)
            else:
                found.files.append(given)
            continue
        walked = _walk(given, exclude)
        graphs = [p for p in walked if is_graph_file(p)]
        found.not_graphs += [p for p in walked if p not in set(graphs)]
        if not graphs:
            skipped = f" ({len(walked)} YAML files without `nodes:` or `inputs:`)" if walked else ""
            abort(f"no graph files (*.yaml, *.yml) under {given}{skipped}", ExitStatus.INVALID)
        found.files += graphs
    return found


def not_graphs_note(found: Found) -> str | None:
    """Said once, on stderr: which walked YAML files were skipped as not graphs."""
    if not found.not_graphs:
        return None
    shown = ", ".join(found.not_graphs[:3]) + (f" and {len(found.not_graphs) - 3} more"
                                               if len(found.not_graphs) > 3 else "")
    count = len(found.not_graphs)
    return f"skipped {count} YAML file{'s' if count != 1 else ''} that {'are' if count != 1 else 'is'} " \
           f"not a graph (no `nodes:` or `inputs:`): {shown}"
