"""The program as a user starts it: `python -m agrad.cli`, `--version`, `--help`."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version


def agrad(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agrad.cli", *arguments], capture_output=True, text=True,
                          timeout=60, env={"NO_COLOR": "1", "COLUMNS": "100", "PATH": ""})


def test_python_dash_m_prints_the_version():
    result = agrad("--version")
    assert result.returncode == 0
    assert result.stdout == f"agrad {version('agrad')}\n"


def test_help_lists_every_command_in_order():
    result = agrad("--help")
    assert result.returncode == 0
    listed = [line.split()[0] for line in result.stdout.split("Commands:\n")[1].splitlines() if line.strip()]
    assert listed == ["run", "inspect", "check", "train", "test", "validate", "import", "export", "ops", "schema",
                      "examples"]


def test_help_does_not_load_the_graph_layer():
    # Heavy imports live inside the commands, so `agrad --help` stays fast.
    probe = ("import sys; from agrad.cli.main import cli; "
             "print(sorted(m for m in ('agrad.graphs', 'yaml', 'rich.progress') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]"


def test_unknown_command_is_usage_error_2():
    result = agrad("frobnicate")
    assert result.returncode == 2
    assert "No such command" in result.stderr and "Traceback" not in result.stderr
