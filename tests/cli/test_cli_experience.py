"""What a user meets first (issue 7 §2, §5, §6) and terminal safety (issue 8): timings, layout at
80 columns, `agrad test` for CI, stdin, `python -m agrad`, examples, escapes, encodings, broken pipes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_results import render_text, seed_inspect, seed_profile
from rich.text import Text

from agrad.cli import library
from agrad.cli.app import App
from agrad.cli.main import cli
from agrad.cli.terminal import printable

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "graphs" / "examples"
SEED = str(EXAMPLES / "seed.yaml")
HESSIAN = str(EXAMPLES / "hessian_vector.yaml")

NO_EXPECT = """\
inputs:
  a: {value: 1.0, requires_grad: true}
nodes:
  b: a * a
backward: b
"""

# A graph named with OSC (retitle the window) and CSI (clear the screen) sequences.
HOSTILE = """\
name: "evil\\e]0;pwned\\a\\e[2J"
inputs:
  "x\\e[31m": {value: 1.0, requires_grad: true}
nodes:
  y: sum(x\\e[31m)
"""


def agrad(*arguments: str, env: dict | None = None, stdin: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agrad", *arguments], capture_output=True, text=True, timeout=120,
                          input=stdin, cwd=cwd,
                          env={"PATH": os.environ.get("PATH", ""), "NO_COLOR": "1", **(env or {})})



# ---- terminal safety (issue 8) -------------------------------------------------------------------

def test_printable_escapes_controls_but_keeps_newlines_and_tabs():
    assert printable("a\x1b[2Jb\x07c\r\x9b\u202e\td\ne") == "a\\x1b[2Jb\\x07c\\x0d\\x9b\\u202e\td\ne"
    assert printable("ŷ café") == "ŷ café"
    assert printable("g\udcff.yaml") == "g\\udcff.yaml"      # a file name's byte 0xff that is not UTF-8


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="file names there are Unicode text")
def test_file_names_that_are_not_utf8_are_printed_escaped_and_written(runner, tmp_path):
    # Python decodes the bytes as lone surrogates, which a UTF-8 writer refuses: the JUnit report and the
    # plugin's module name, each once an internal error
    graph = tmp_path / os.fsdecode(b"g\xff.yaml")
    graph.write_text(Path(SEED).read_text())
    plugin = tmp_path / os.fsdecode(b"p\xff.py")
    plugin.write_text("raise ValueError('from the plugin')\n")
    junit = tmp_path / "j.xml"
    result = runner.invoke(cli, ["test", str(graph), "--junit-xml", str(junit)])
    assert result.exit_code == 0, result.output
    assert 'file="' + str(tmp_path) + '/g\\udcff.yaml"' in junit.read_text()
    result = runner.invoke(cli, ["run", str(graph), "--plugin", str(plugin)])
    assert result.exit_code == 2 and "p\\udcff.py:1:1: error[AG032]: plugin raised ValueError" in result.stderr


def test_every_console_line_is_escaped_whatever_the_renderable():
    app = App()
    for console in (app.out, app.err):
        with console.capture() as captured:
            console.print(Text.assemble(("name\x1b]0;x\x1b\\", "bold red")))
            console.print("plain \x1b[2J")
        assert "\x1b]" not in captured.get() and "\x1b[2J" not in captured.get()
        assert "\\x1b]0;x\\x1b\\" in captured.get() and "\\x1b[2J" in captured.get()


def test_hostile_names_reach_no_terminal_raw(runner, write):
    path = write("hostile.yaml", HOSTILE)
    for arguments in (["run", path], ["inspect", path], ["validate", path, "--format", "github"],
                      ["run", path, "--format", "github"], ["test", path]):
        result = runner.invoke(cli, arguments)
        text = result.stdout + result.stderr
        assert "\x1b" not in text and "\x07" not in text, arguments
        assert "\\x1b" in text, arguments


def test_non_ascii_names_under_an_ascii_stdout(write):
    path = write("uni.yaml", "name: ŷ_graph\ninputs:\n  α: {value: 1.0, requires_grad: true}\nnodes:\n  β: α * α\n"
                             "backward: β\n")
    for env in ({"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C"}):
        result = agrad("run", path, env=env)
        assert result.returncode == 0, result.stderr
        assert "UnicodeEncodeError" not in result.stderr and "Traceback" not in result.stderr
        assert "_graph" in result.stdout


def test_a_closed_pipe_ends_quietly():
    process = subprocess.Popen([sys.executable, "-m", "agrad", "ops", "--all"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"})
    process.stdout.close()          # the reader goes away before agrad writes: `agrad ops | head -0`
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert stderr == ""


def test_a_closed_stdout_ends_quietly():
    result = subprocess.run(["sh", "-c", f'"{sys.executable}" -m agrad run "{SEED}" >&-'], capture_output=True,
                            text=True, timeout=120)
    assert "Traceback" not in result.stderr and "Error" not in result.stderr


def test_click_usage_messages_are_escaped_too(runner):
    result = runner.invoke(cli, ["run", "no\x1b[2Jsuch.yaml"])
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "no\\x1b[2Jsuch.yaml" in result.stderr


# ---- timings (issue 7 §2) ----------------------------------------------------------------------

def test_loading_the_op_library_is_not_billed_to_parse_or_build():
    probe = textwrap.dedent(f"""
        import sys, time
        import agrad.graphs
        clock, loaded = time.perf_counter, []
        def watched():
            loaded.append("agrad._api" in sys.modules)
            return clock()
        time.perf_counter = watched
        agrad.graphs.load({SEED!r})
        print(loaded[0])
    """)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True", result.stderr


def test_profile_runs_an_uncounted_warm_up_pass(monkeypatch):
    from agrad import graphs
    from agrad.graphs.runner import Runner

    passes = []
    run_once = Runner.run_once
    monkeypatch.setattr(Runner, "run_once", lambda self, leaves: passes.append(1) or run_once(self, leaves))
    result = graphs.load(SEED).run(profile=True).result()
    assert len(passes) == 2
    assert {r.calls for r in result.profile} == {1}
    passes.clear()
    graphs.load(SEED).run(profile=True, repeat=3)
    assert len(passes) == 4
    passes.clear()
    graphs.load(SEED).run()
    assert len(passes) == 1          # without --profile, nothing extra runs


def test_profile_output_says_how_many_passes_were_averaged(runner):
    result = runner.invoke(cli, ["run", SEED, "--profile", "--repeat", "3"])
    assert result.exit_code == 0
    assert "Time per node (average of 3 passes, after 1 warm-up pass not counted)" in result.stdout
    assert "Average Forward pass:" in result.stdout


# ---- output at 80 columns, DOT (issue 7 §5) -------------------------------------------------------

def test_nothing_is_lost_at_80_columns(runner):
    for arguments in (["ops"], ["run", HESSIAN, "--profile"], ["inspect", HESSIAN], ["run", str(EXAMPLES / "mlp.yaml")]):
        result = runner.invoke(cli, arguments)
        assert result.exit_code == 0, result.stderr
        assert max(len(line.rstrip()) for line in result.stdout.splitlines()) <= 80, arguments
    ops = runner.invoke(cli, ["ops"]).stdout
    assert "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in ops
    profile = runner.invoke(cli, ["run", HESSIAN, "--profile"]).stdout
    assert "AccumulateGrad" in profile and "MulBackward0" in profile and "PowBackward0" in profile
    inspect = runner.invoke(cli, ["inspect", HESSIAN]).stdout
    assert "(AccumulateGrad #5, 0)" in inspect and "PowBackward0 #4" in inspect
    assert "CompositeImplicitAutograd" in inspect


def test_a_narrow_terminal_gets_records_not_folded_cells():
    from agrad.cli.inspect_tables import inspect_view

    text = render_text(inspect_view(seed_inspect()), width=40)
    # the node table drops its kernel column first (issue 19 §7) and says where it went
    assert "(AccumulateGrad #2, 0)" in text and "kernels: --format json" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 40


def test_profile_table_keeps_grad_fn_names_when_narrow():
    from agrad.cli.profile_table import profile_view

    text = render_text(profile_view(seed_profile(), 1, 1), width=50)
    assert "MulBackward0" in text and "AddBackward0" in text


def test_a_summary_wraps_between_items_never_inside_one():
    from agrad.graphs.results import TensorSummary

    from agrad.cli.tables import tensor_table

    big = TensorSummary(shape=[1000, 1000], dtype="float32", device="cpu", value=None, numel=10**6,
                        summary={"min": -123.456789, "max": 987.654321, "mean": 0.00012345, "norm": 12345.6789})
    text = render_text(tensor_table("Outputs", {"a_rather_long_output_name": big}, values="full"), width=60)
    words = " ".join(line.split("float32")[-1] for line in text.splitlines()).split()
    assert ["min", "-123.457", "max", "987.654", "mean", "0.00012345", "norm", "12345.7"] == words[-8:]
    for line in text.splitlines():
        assert not line.rstrip().endswith(("min", "max", "mean", "norm", "shape")), line


def test_tensor_values_print_as_numpy_does(runner):
    result = runner.invoke(cli, ["run", str(EXAMPLES / "mlp.yaml"), "--values", "full"])
    assert "[[ 0.     ,  0.     , -0.163  , -0.0815 ]," in result.stdout


def test_dot_marks_selected_outputs_parameters_and_outputs(runner):
    dot = runner.invoke(cli, ["inspect", HESSIAN, "--format", "dot"]).stdout
    assert '"fwd:g" -> "fwd:gx" [label="output 0\\n[3]"];' in dot
    assert '"fwd:x" [label="x\\n[3] float64", shape=ellipse, style=filled, fillcolor=lightblue];' in dot
    assert '"fwd:v" [label="v", shape=ellipse, style=filled, fillcolor=lightgrey];' in dot
    assert '"fwd:gv" [label="gv\\nsum\\n[] float64", shape=box, style=filled, fillcolor=darkolivegreen1];' in dot


def test_ops_lists_public_ops_unless_all(runner):
    public = json.loads(runner.invoke(cli, ["ops", "--format", "json"]).stdout)["ops"]
    every = json.loads(runner.invoke(cli, ["ops", "--all", "--format", "json"]).stdout)["ops"]
    names = {op["name"] for op in public}
    hidden = {op["name"] for op in every} - names
    assert "add" in names and hidden
    assert all(n.startswith("_") or n.endswith("_backward") for n in hidden)
    assert not any(n.startswith("_") or n.endswith("_backward") for n in names)
    assert runner.invoke(cli, ["ops", sorted(hidden)[0]]).exit_code == 0     # still shown when named


def test_ops_completes_op_names(runner):
    result = runner.invoke(cli, [], prog_name="agrad",
                           env={"_AGRAD_COMPLETE": "bash_complete", "COMP_WORDS": "agrad ops tan", "COMP_CWORD": "2"})
    assert set(result.stdout.split()) >= {"plain,tanh"}
    assert not any(line.endswith(",_") for line in result.stdout.split())


# ---- agrad test for CI (issue 7 §6) ---------------------------------------------------------------

def test_a_graph_without_expect_is_its_own_status(runner, write):
    path = write("noexp.yaml", NO_EXPECT)
    result = runner.invoke(cli, ["test", path, SEED])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith("SKIP")
    assert result.stdout.splitlines()[-1] == "1 passed, 0 failed, 1 without expectations"
    doc = json.loads(runner.invoke(cli, ["test", path, "--format", "json"]).stdout)
    assert (doc["files"][0]["passed"], doc["files"][0]["status"], doc["no_expectations"]) == (False, "no expectations", 1)
    strict = runner.invoke(cli, ["test", path, SEED, "--strict"])
    assert strict.exit_code == 1
    assert strict.stdout.splitlines()[-1] == "1 passed, 1 failed"


def test_k_selects_and_x_stops_at_the_first_failure(runner, monkeypatch, write):
    from cli_results import failed_expect, outcome

    ran = []

    def fake(path, **_):
        ran.append(Path(path).name)
        return outcome(path, passed=False, failures=failed_expect().failures)
    for name in ("a_one.yaml", "b_two.yaml", "c_one.yaml"):
        write(name, NO_EXPECT)
    folder = str(Path(write("x.yaml", NO_EXPECT)).parent)
    monkeypatch.setattr(library, "test_file", fake)
    result = runner.invoke(cli, ["test", folder, "-k", "ONE"])
    assert ran == ["a_one.yaml", "c_one.yaml"]
    assert result.stdout.splitlines()[-1] == "0 passed, 2 failed, 2 deselected"
    ran.clear()
    assert runner.invoke(cli, ["test", folder, "-x"]).exit_code == 1
    assert ran == ["a_one.yaml"]
    assert runner.invoke(cli, ["test", folder, "-k", "nothing"]).exit_code == 2


def test_junit_xml_report(runner, write, tmp_path):
    bad = write("bad.yaml", NO_EXPECT.replace("a * a", "a * nope"))
    path = write("noexp.yaml", NO_EXPECT)
    report = tmp_path / "report.xml"
    result = runner.invoke(cli, ["test", SEED, path, bad, "--junit-xml", str(report)])
    assert result.exit_code == 2
    suite = ET.parse(report).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "0", "1", "1")
    cases = {case.get("file"): case for case in suite.iter("testcase")}
    assert list(cases[SEED]) == []
    assert cases[path].find("skipped") is not None
    assert "AG020" in cases[bad].find("error").text
    assert not list(tmp_path.glob(".report.xml.*"))        # written atomically: no temporary left
    nested = tmp_path / "no" / "such" / "r.xml"          # missing folders are made, as pytest makes them
    assert runner.invoke(cli, ["test", SEED, "--junit-xml", str(nested)]).exit_code == 0
    assert ET.parse(nested).getroot().find("testsuite").get("tests") == "1"


def test_run_and_check_speak_github(runner, write):
    wrong = write("wrong.yaml", NO_EXPECT + "expect:\n  outputs: {b: 5.0}\n")
    result = runner.invoke(cli, ["run", wrong, "--format", "github"])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"::error file={wrong},line=7,col=")
    assert "title=expect::outputs.b" in result.stdout
    assert "::error" not in runner.invoke(cli, ["check", SEED, "--format", "github"]).stdout
    invalid = runner.invoke(cli, ["check", write("bad.yaml", NO_EXPECT.replace("a * a", "a * nope")),
                                  "--format", "github"])
    assert invalid.exit_code == 2 and ",title=AG020::undefined name 'nope'" in invalid.stdout


def test_check_github_annotates_a_failing_leaf():
    from cli_results import seed_check

    from agrad.cli import github

    lines = github.check_commands(seed_check(passed=False), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert lines == ["::error file=graphs/examples/seed.yaml,line=11,col=3,title=gradcheck::gradient of 'b' disagrees "
                     "with float64 central differences: b: analytic 1.5, numeric 1; max abs err 5.000e-01, "
                     "max rel err 5.000e-01 (eps=1e-06, atol=1e-05, rtol=0.001)"]


# ---- entry points: stdin, python -m agrad, examples ---------------------------------------------

def test_run_reads_the_graph_from_stdin(runner):
    result = runner.invoke(cli, ["run", "-", "--format", "json"], input=Path(SEED).read_text())
    assert result.exit_code == 0
    assert json.loads(result.stdout)["file"] == "<stdin>"
    bad = runner.invoke(cli, ["run", "-"], input="inputs:\n  a: 1.0\nnodes:\n  b: nope(a)\n")
    assert bad.exit_code == 2 and bad.stderr.startswith("<stdin>:4:6: error[AG016]")


def test_python_dash_m_agrad():
    result = agrad("examples", "seed")
    assert result.returncode == 0
    piped = agrad("run", "-", stdin=result.stdout)
    assert piped.returncode == 0 and "expect: passed" in piped.stdout


def test_examples_lists_and_prints_the_bundled_graphs(runner):
    listed = runner.invoke(cli, ["examples"]).stdout
    bundled = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
    assert [line.split()[0] for line in listed.splitlines() if not line.startswith(" ")] == bundled
    assert runner.invoke(cli, ["examples", "mlp"]).stdout == (EXAMPLES / "mlp.yaml").read_text()
    missing = runner.invoke(cli, ["examples", "sed"])
    assert missing.exit_code == 2 and "did you mean 'seed'" in missing.stderr


BUILD_PY = """
import sys, warnings
from setuptools.dist import Distribution
from setuptools.config.pyprojecttoml import apply_configuration
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist = Distribution()
    dist.script_name = "setup.py"
    apply_configuration(dist, "pyproject.toml")
    command = dist.get_command_obj("build_py")
    command.build_lib = sys.argv[1]
    command.ensure_finalized()
    command.run()
for w in caught:
    print(w.category.__name__, str(w.message).splitlines()[0], file=sys.stderr)
"""


def test_examples_work_from_an_installed_copy(tmp_path):
    # What a wheel installs (setuptools' build_py, as `pip install agrad` runs it), away from the checkout.
    pytest.importorskip("setuptools.config.pyprojecttoml")     # a venv of Python >= 3.12 may lack setuptools
    built = tmp_path / "lib"
    build = subprocess.run([sys.executable, "-c", BUILD_PY, str(built)], cwd=ROOT, check=True, capture_output=True,
                           text=True, timeout=120)
    # the example folders are declared (what `pip install` would otherwise warn of, a screenful per folder)
    assert "absent from the `packages` configuration" not in build.stderr, build.stderr
    # and every package of the checkout is in it: one left out of `packages` is left out silently
    # (an editable install hides it), to fail on import only where agrad was installed
    roots = {"engine": built / "agrad", "graphs": built / "agrad" / "graphs", "cli": built / "agrad" / "cli"}
    missing = [str(init.parent.relative_to(ROOT)) for folder, target in roots.items()
               for init in (ROOT / folder).rglob("__init__.py")
               if not (target / init.relative_to(ROOT / folder)).exists()]
    assert missing == [], f"packages missing from pyproject.toml's `packages`: {missing}"
    env = {"PYTHONPATH": str(built)}
    where = subprocess.run([sys.executable, "-c", "import agrad; print(agrad.__file__)"], capture_output=True,
                           text=True, timeout=60, env={**os.environ, **env}, cwd=tmp_path)
    assert where.stdout.startswith(str(built))
    listed = agrad("examples", env=env, cwd=tmp_path)
    assert listed.returncode == 0 and "hessian_vector" in listed.stdout
    assert agrad("examples", "seed", env=env, cwd=tmp_path).stdout == Path(SEED).read_text()
