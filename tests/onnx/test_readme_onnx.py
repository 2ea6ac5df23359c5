"""README's "Gradients of an ONNX model": its commands run verbatim, its op list is the table's."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from agrad.graphs.onnx.import_table import COMPOSED, TABLE  # noqa: E402

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
SECTION = re.search(r"^## Gradients of an ONNX model\n(.*?)(?=^## )", README, re.S | re.M).group(1)
MAIN = "import sys; from agrad.cli.main import main; sys.argv[0] = 'agrad'; main()"


def test_commands_run_verbatim_and_onnxruntime_gives_the_gradients(tmp_path, monkeypatch):
    (tmp_path / "graphs").symlink_to(ROOT / "graphs")
    commands = re.findall(r"```sh\n(.*?)```", SECTION, re.S)[0].splitlines()
    assert [c.split()[1] for c in commands] == ["import", "run", "check", "export"]
    for command in commands:
        words = shlex.split(command)
        done = subprocess.run([sys.executable, "-c", MAIN, *words[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr)
    shown = re.findall(r"^\$ (agrad import .*)\n(.*)$", SECTION, re.M)[0]
    assert shown[1] in subprocess.run([sys.executable, "-c", MAIN, *shlex.split(shown[0])[1:]], cwd=tmp_path,
                                      capture_output=True, text=True, timeout=300).stderr
    lines = [line for line in (tmp_path / "resnet_block.yaml").read_text().splitlines() if "Conv" in line][:2]
    assert "\n".join(lines) in SECTION
    code = re.findall(r"```python\n(.*?)```", SECTION, re.S)[0]
    scope: dict = {}
    monkeypatch.chdir(tmp_path)
    exec(compile(code.replace('outputs["loss"], ', 'result = outputs["loss"], '), "readme", "exec"),
         scope)   # noqa: S102 - the README's own snippet
    loss, shape = scope["result"]
    assert np.isfinite(loss) and shape == (8, 3, 3, 3)


def _listed(text: str) -> set[str]:
    names = set()
    for prefix, first, rest in re.findall(r"\b([A-Z][a-z]+)([A-Z0-9]\w*)((?:/\w+)+)", text):
        names |= {prefix + first} | {prefix + p for p in rest.strip("/").split("/")}
    return names | set(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", text))


def test_op_list_is_the_import_table():
    supported = SECTION.split("Supported ONNX ops")[1].split("Refused with a located message")[0]
    listed = _listed(supported)
    missing = [op for op in TABLE if op not in listed]
    assert not missing, f"README does not list {missing}"
    for op in COMPOSED:
        assert re.search(rf"{op}[^A-Za-z].{{0,40}}\*composed\*", supported, re.S) or \
            re.search(rf"{op[:6]}\w*/[\w/]*{op[6:] if op.startswith('Reduce') else op}.{{0,30}}\*composed\*",
                      supported, re.S), op


def test_help_does_not_import_onnx():
    probe = "import sys; from agrad.cli.main import cli; print('onnx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60).stdout.strip() == "False"
