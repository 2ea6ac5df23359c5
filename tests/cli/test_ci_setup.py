"""What a project needs to put agrad in its CI (issue 19 §5): the pre-commit hook this repository
declares runs as pre-commit runs it, and the README's GitHub Actions job uses options that exist."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from agrad.cli.main import cli

ROOT = Path(__file__).parents[2]
SEED = ROOT / "graphs" / "examples" / "seed.yaml"


def _hook() -> dict:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return hook


def test_the_pre_commit_hook_has_what_pre_commit_requires():
    hook = _hook()
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["language"] == "python" and hook["types"] == ["yaml"]


def test_the_hook_checks_changed_graphs_and_skips_other_yaml(runner, tmp_path, monkeypatch):
    """pre-commit appends every changed file that matches `types` to `entry`."""
    monkeypatch.chdir(tmp_path)
    Path("ci.yml").write_text("on: push\njobs: {}\n")
    Path(".pre-commit-config.yaml").write_text("repos: []\n")
    Path("good.yaml").write_text(SEED.read_text())
    words = shlex.split(_hook()["entry"])
    assert words[0] == "agrad"
    clean = runner.invoke(cli, words[1:] + ["ci.yml", ".pre-commit-config.yaml", "good.yaml"])
    assert (clean.exit_code, clean.stdout, clean.stderr) == (0, "", "")
    Path("bad.yaml").write_text(SEED.read_text().replace("add(a, b)", "add(a, nope)"))
    failed = runner.invoke(cli, words[1:] + ["ci.yml", "bad.yaml"])
    assert failed.exit_code == 2 and "bad.yaml:" in failed.stderr and "AG020" in failed.stderr


def test_the_readme_github_actions_job_uses_real_options(runner):
    text = re.search(r"^## In CI\n(.*?)(?=^## )", (ROOT / "README.md").read_text(), re.S | re.M).group(1)
    job = yaml.safe_load(re.search(r"```yaml\n(# \.github/workflows/graphs\.yml.*?)```", text, re.S).group(1))
    runs = [step["run"] for step in job["jobs"]["agrad"]["steps"] if "run" in step]
    agrad = [shlex.split(r) for r in runs if r.startswith("agrad ")]
    assert [words[1] for words in agrad] == ["validate", "test", "check"]
    for words in agrad:       # every option the job names is one the command takes
        command = cli.get_command(None, words[1])      # (commands load when first asked for)
        known = {opt for p in command.params for opt in getattr(p, "opts", [])}
        assert {w for w in words[2:] if w.startswith("-")} <= known, words
    assert "agrad-validate" in text
