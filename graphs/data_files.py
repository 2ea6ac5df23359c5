"""The data files a graph file reads: every `file:` of its inputs, `train.data` and `train.eval.data`.

`agrad examples NAME --to DIR` copies them beside the graph, and the printed form of
an example points at them where they are installed, so an example runs wherever it is
written out.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

import yaml


def referenced_files(text: str) -> list[str]:
    """The relative paths under any `file:` key, in the order written, each once."""
    found: list[str] = []

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "file" and isinstance(item, str):
                    if item not in found:
                        found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    try:
        walk(yaml.safe_load(text))
    except yaml.YAMLError:
        return []
    return [f for f in found if not PurePosixPath(f).is_absolute() and ".." not in PurePosixPath(f).parts]


def with_files_at(text: str, locations: dict[str, str]) -> str:
    """`text` with each `file: RELATIVE` replaced by `file: "LOCATION"` (the installed copy)."""
    for relative, location in locations.items():
        pattern = re.compile(r"(\bfile:\s*)([\"']?)" + re.escape(relative) + r"\2(?=[\s,}\]]|$)", re.M)
        quoted = '"' + location.replace("\\", "\\\\").replace('"', '\\"') + '"'
        text = pattern.sub(lambda m: m.group(1) + quoted, text)
    return text
