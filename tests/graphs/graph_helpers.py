"""Helpers shared by the graphs tests (a uniquely named module: tests/ has several conftest.py)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from agrad.graphs.diagnostics import Collector, TooManyProblems
from agrad.graphs.document import read_document
from agrad.graphs.yaml_loader import load_yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "graphs" / "examples"
TESTS = Path(__file__).resolve().parents[1]


def suite_graphs() -> list[str]:
    """Every graph file written in the test suite: the YAML string constants of tests/**/test_*.py."""
    texts = []
    for module in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "nodes:" in node.value:
                texts.append(textwrap.dedent(node.value))
    return list(dict.fromkeys(texts))


def read_text(text: str):
    """(spec, diagnostics) of a graph file's text, format checks only (no ops)."""
    collector = Collector("g.yaml")
    try:
        doc = load_yaml(textwrap.dedent(text), collector)
        spec = read_document(doc, "g.yaml", "g", collector) if doc is not None else None
    except TooManyProblems:          # the collector stops the pass at its limit
        spec = None
    return spec, collector.diagnostics


def where(diagnostics) -> list[tuple[str, int, int]]:
    """(code, line, col) of each diagnostic, the part of an error a test pins down."""
    return [(d.code, d.location.line, d.location.col) for d in diagnostics]
