"""Which YAML files found by walking a folder are graph files.

A folder holds other YAML too (CI workflows, docker-compose, pre-commit configs): a
file whose top-level mapping has neither `nodes:` nor `inputs:` is not a graph, and
`validate .` / `test .` skip it instead of failing on it. A file named on the command
line is always read as a graph.
"""
from __future__ import annotations

import re

import yaml

# The common case, found without parsing: a top-level `nodes:` or `inputs:` key in block style.
_TOP_LEVEL_KEY = re.compile(r"^[\"']?(nodes|inputs)[\"']?\s*:", re.MULTILINE)
GRAPH_KEYS = ("nodes", "inputs")


def is_graph_text(text: str) -> bool:
    """True for a YAML document whose top level has `nodes:` or `inputs:`, and for text that is not
    valid YAML at all (a broken graph file must be reported, not skipped)."""
    if _TOP_LEVEL_KEY.search(text):
        return True
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        # compose, not load: the node tree only, so no tag (`!Ref`, `!!python/...`) is resolved or refused
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return True
    if not isinstance(root, yaml.MappingNode):
        return False
    return any(isinstance(key, yaml.ScalarNode) and key.value in GRAPH_KEYS for key, _ in root.value)


def is_graph_file(path) -> bool:
    """`is_graph_text` of the file; a file that cannot be read is left for the loader to report."""
    try:
        with open(path, encoding="utf-8") as f:
            return is_graph_text(f.read())
    except (OSError, UnicodeDecodeError):
        return True
