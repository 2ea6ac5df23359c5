from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from cli_results import WIDTH
from click.testing import CliRunner

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def golden():
    """Compare text with tests/cli/golden/NAME.txt; AGRAD_UPDATE_GOLDEN=1 rewrites the file instead."""
    def compare(name: str, text: str) -> None:
        path = GOLDEN / f"{name}.txt"
        if os.environ.get("AGRAD_UPDATE_GOLDEN") == "1":
            path.write_text(text)
        assert path.exists(), f"no golden file {path}; run with AGRAD_UPDATE_GOLDEN=1 to create it"
        assert text == path.read_text()
    return compare


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"})


@pytest.fixture
def write(tmp_path):
    """Write a graph file into the test's folder; returns its path."""
    def write_file(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return str(path)
    return write_file
