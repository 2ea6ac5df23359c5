"""Start-up proportional to what a program uses: an op family is imported when one of its ops
is first asked for, and an op's function and kernels are generated on their first call
(ops/contents.py, codegen.deferred, dispatcher.Deferred). Each check runs in a fresh process,
where nothing has loaded yet."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agrad.ops.contents import FAMILIES, collect

SEED = Path(__file__).resolve().parents[2] / "graphs" / "examples" / "seed.yaml"

# what a process reports after its code ran: the op families it imported, the ops it generated code for
_REPORT = """
import json, sys
from agrad import codegen
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("agrad.ops.")),
                  "generated": {owner: sorted(files) for owner, files in codegen._by_owner.items()}}))
"""


def _report(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code + _REPORT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cli(*args: str) -> str:
    """Code that runs `agrad ARGS` in the process, its output discarded, its exit tolerated."""
    return ("import contextlib, io, sys\nfrom agrad.cli.main import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        cli.main({list(args)!r}, prog_name='agrad')\n"
            "    except SystemExit:\n        pass\n")


def test_the_table_of_contents_matches_the_declarations():
    assert collect() == FAMILIES, "ops/contents.py is out of date: run `python -m agrad.ops`"


def test_a_seed_run_imports_only_the_families_of_its_ops():
    report = _report(_cli("run", str(SEED)))
    modules = set(report["modules"])
    assert "agrad.ops.pointwise.binary" in modules          # add and mul
    unused = ["agrad.ops.linalg", "agrad.ops.nn.convolution", "agrad.ops.nn.attention", "agrad.ops.nn.loss",
              "agrad.ops.nn.pooling", "agrad.ops.reduce.selection", "agrad.ops.shape.advanced_indexing",
              "agrad.ops.pointwise.special", "agrad.ops.pointwise.activation"]
    assert [m for m in unused if m in modules] == []
    generated = report["generated"]
    assert "conv2d" not in generated and "matmul" not in generated
    mul = generated["mul"]
    assert "<agrad op mul>" in mul and "<agrad cpu kernel mul>" in mul and "<agrad autograd kernel mul>" in mul
    assert "<agrad cuda kernel mul>" not in mul          # a kernel is made for the key it runs on


@pytest.mark.parametrize("args", [["--help"], ["examples"], ["schema"], ["ops"], ["ops", "--all"],
                                  ["ops", "--formulas"], ["ops", "--format", "json"]])
def test_listing_commands_generate_no_kernel(args):
    assert _report(_cli(*args))["generated"] == {}


def test_source_generates_the_code_of_an_op_that_has_not_run():
    done = subprocess.run([sys.executable, "-c", _cli("ops", "mul", "--source").replace(
        "contextlib.redirect_stdout(io.StringIO())", "contextlib.nullcontext()")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in ("op", "cpu kernel", "autograd kernel", "backward"):
        assert f"# <agrad {name} mul>" in done.stdout


def test_tensor_methods_bind_on_first_use():
    report = _report(
        "import sys, agrad\n"
        "t = agrad.tensor([[1., 2.], [3., 4.]])\n"
        "assert 'agrad.ops.linalg' not in sys.modules\n"
        "assert not hasattr(t, 'no_such_method') and 'agrad.ops.linalg' not in sys.modules\n"
        "assert (t @ t).tolist() == [[7., 10.], [15., 22.]] and t.matmul(t).tolist() == [[7., 10.], [15., 22.]]\n"
        "assert t.sum().item() == 10. and t.reshape(4).tolist() == [1., 2., 3., 4.] and t.reshape(1, 4).shape == (1, 4)\n"
        "assert t.view(agrad.int64).dtype == agrad.int64 and t.view(4).shape == (4,)\n"
        "u = t.clone(); u.exp_(); u.zero_(); assert u.tolist() == [[0., 0.], [0., 0.]]\n"
        "assert t[0].tolist() == [1., 2.] and t.T.tolist() == [[1., 3.], [2., 4.]]\n"
        "assert type(t).sum is agrad.Tensor.sum\n")
    assert "agrad.ops.linalg" in report["modules"]


def test_an_op_function_is_one_object_before_and_after_its_first_call():
    report = _report(
        "import inspect, agrad\n"
        "from agrad.ops.pointwise.binary import mul\n"
        "from agrad import codegen\n"
        "assert agrad.mul is mul and agrad.ops.mul is mul and mul.op.function is mul\n"
        "assert 'mul' not in codegen._by_owner\n"
        "assert mul(agrad.tensor(2.), 3.).item() == 6. and agrad.Tensor.__mul__ is not mul\n"
        "assert (agrad.tensor(2.) * 3.).item() == 6. and agrad.Tensor.__mul__ is mul\n"
        "assert list(inspect.signature(mul).parameters) == ['self', 'other', 'out']\n"
        "assert agrad.zeros_like is agrad.ops.zeros_like\n")
    assert "<agrad op mul>" in report["generated"]["mul"]
