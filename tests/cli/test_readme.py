"""The README states facts the code decides; these keep the two from drifting apart."""
from __future__ import annotations

import re
from pathlib import Path

from agrad.graphs.diagnostics import CODES

from agrad.cli.status import ExitStatus

README = (Path(__file__).parents[2] / "README.md").read_text()


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"README has no section '## {title}'"
    return match.group(1)


def test_install_section_has_the_commands_ci_runs():
    commands = re.findall(r"```sh\n(.*?)```", section("Install and run an example"), re.S)[0].splitlines()
    assert commands == ["pip install -e '.[test]'", "agrad run graphs/examples/seed.yaml"]


def test_tests_section_has_the_commands_ci_runs():
    commands = re.findall(r"```sh\n(.*?)```", section("Run the tests"), re.S)[0].splitlines()
    assert commands == ["python -m pytest", "agrad test graphs/examples"]


def test_error_code_table_lists_every_code_with_its_description():
    rows = dict(re.findall(r"^\| (AG\d{3}) \| (.*) \|$", section("Errors in a graph file"), re.M))
    assert rows == CODES


def test_exit_status_table_lists_every_status():
    statuses = re.findall(r"^\| (\d) \|", section("Exit status"), re.M)
    assert [int(s) for s in statuses] == [int(s) for s in ExitStatus]


def test_plugin_example_runs_verbatim(tmp_path):
    """The README's plugin file and graph file, written out as the comments on their first
    lines name them, and its command, run in a fresh interpreter (the op is registered globally)."""
    import shlex
    import subprocess
    import sys

    text = section("Ops from a plugin")
    for block in re.findall(r"```(?:python|yaml)\n(.*?)```", text, re.S):
        name = re.match(r"# (\S+)\n", block).group(1)
        (tmp_path / name).write_text(block)
    (command,) = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    words = shlex.split(command)
    assert words[0] == "agrad"
    main = "import sys; from agrad.cli.main import main; sys.argv[0] = 'agrad'; main()"
    done = subprocess.run([sys.executable, "-c", main, *words[1:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "expect: passed" in done.stdout + done.stderr
    assert '{op: "myops::scale", args: [' in text and "`Meta` kernel" in text
    # and `agrad schema` (an editor's check) accepts the namespaced op
    import jsonschema
    import yaml
    from agrad.graphs import json_schema
    jsonschema.validate(yaml.safe_load((tmp_path / "scale.yaml").read_text()), json_schema())
