"""How agrad ends when the reader of its help goes away, when a plugin raises
KeyboardInterrupt, when NumPy warns, and when `run --repeat` is asked for forever."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agrad.cli.main import cli

ENV = {"PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"}


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["train", "-h"]])
def test_help_to_a_closed_pipe_exits_0(args):
    """`agrad --help | head -1`: the reader wanted less than all of it, which is no failure
    (a command's data to a closed pipe stays 141, test_cli_experience)."""
    process = subprocess.Popen([sys.executable, "-m", "agrad", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ENV)
    try:
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=120) == 0
        assert stderr == ""
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full is Linux's")
@pytest.mark.parametrize("args", [["inspect", "--format", "json"], ["run"], ["inspect", "--format", "dot"]])
def test_a_full_disk_under_stdout_is_said_as_such(args, write):
    """Output that cannot be written (a full disk: /dev/full) ends the command with status 3 and the
    reason on stderr, not as an "internal error": `inspect --format json` writes its rows as it makes
    them, so the failure comes midway through the document."""
    lines = ["inputs:", "  x: {value: [0.5, -0.25], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) + x" for i in range(1, 3000)]
    graph = write("long.yaml", "\n".join(lines + ["  loss: sum(n2999)", "backward: loss", ""]))
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "agrad", args[0], graph, *args[1:]], stdout=full,
                                stderr=subprocess.PIPE, text=True, env=ENV, timeout=300)
    assert result.returncode == 3
    assert result.stderr == "error: cannot write the output: No space left on device\n"


def test_a_plugin_raising_keyboard_interrupt_is_an_interrupt(runner, write, tmp_path):
    plugin = tmp_path / "slow_plugin.py"
    plugin.write_text("raise KeyboardInterrupt\n")
    graph = write("g.yaml", "inputs: {x: {value: 1.0}}\nnodes: {y: neg(x)}\n")
    result = runner.invoke(cli, ["run", graph, "--plugin", str(plugin)])
    assert result.exit_code == 130 and result.stderr == "error: interrupted\n"
    assert "Aborted" not in result.output


def test_ctrl_c_while_the_command_line_is_read_is_an_interrupt(runner, monkeypatch):
    # click turns a KeyboardInterrupt out of its parsing into "Aborted!" and status 1, a failed check to a CI
    def interrupted(self, ctx, args):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(cli), "parse_args", interrupted)
    result = runner.invoke(cli, ["run", "g.yaml"])
    assert result.exit_code == 130 and result.stderr == "error: interrupted\n"


_ODD_KERNEL = """
import agrad
from agrad import library

class Odd(BaseException):
    pass

def kernel(x):
    raise {raised}

library.define("odd_{tag}::f(Tensor x) -> Tensor")
library.impl("odd_{tag}::f", "CPU", kernel)
library.impl("odd_{tag}::f", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
"""


@pytest.mark.parametrize("tag, raised, said", [("gen", "GeneratorExit", "stopped by GeneratorExit, which"),
                                               ("own", "Odd('mine')", "stopped by Odd: mine, which")])
def test_a_plugin_kernel_raising_a_base_exception_is_one_line_and_status_3(runner, write, tmp_path, tag, raised, said):
    # no `except Exception` stops it: the CLI's last resort does, where it once ended in a traceback
    plugin = tmp_path / f"odd_{tag}.py"
    plugin.write_text(_ODD_KERNEL.format(tag=tag, raised=raised))
    graph = write("g.yaml", f"inputs: {{x: {{value: [1.0]}}}}\nnodes: {{a: {{op: 'odd_{tag}::f', args: [x]}}}}\n")
    result = runner.invoke(cli, ["run", graph, "--plugin", str(plugin)])
    assert result.exit_code == 3 and result.stderr.startswith(f"error: {said} is not an Exception"), result.stderr
    assert "Traceback" not in result.stderr


def test_the_mean_of_nothing_is_nan_without_numpys_warning(write):
    # PyTorch gives the nan quietly; NumPy's mean warns "Mean of empty slice" (engine/fp_warnings.py)
    graph = write("g.yaml", "inputs:\n  e: {shape: [0], init: zeros}\nnodes:\n  m: mean(e)\noutputs: [m]\n")
    result = subprocess.run([sys.executable, "-m", "agrad", "run", graph, "--format", "json"], capture_output=True,
                            text=True, env=ENV, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["outputs"]["m"]["value"] is None       # nan, as the JSON documents write it


def test_numpy_warnings_read_as_agrads_own(capsys):
    from agrad.cli.main import _show_warning

    _show_warning("Degrees of freedom <= 0 for slice", RuntimeWarning,
                  os.path.join(os.sep, "lib", "numpy", "_core", "_methods.py"), 1)
    _show_warning("an agrad warning", UserWarning, os.path.join(os.sep, "lib", "agrad", "x.py"), 1)
    assert capsys.readouterr().err == ("warning: NumPy: Degrees of freedom <= 0 for slice\n"
                                       "warning: an agrad warning\n")


def test_run_repeat_has_an_upper_bound(runner, write):
    graph = write("g.yaml", "inputs: {x: {value: 1.0}}\nnodes: {y: neg(x)}\n")
    result = runner.invoke(cli, ["run", graph, "--repeat", str(10 ** 26)])
    assert result.exit_code == 2 and "is not in the range 1<=x<=100000" in result.stderr
    assert runner.invoke(cli, ["run", graph, "--repeat", "3"]).exit_code == 0
