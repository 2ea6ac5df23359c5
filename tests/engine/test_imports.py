"""Any public part of agrad can be the first thing imported, and the CLI starts
without loading NumPy or the engine (`agrad --help` stays fast)."""
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

FIRST_IMPORTS = [
    "import agrad; x = agrad.tensor([1., 2.], requires_grad=True); (x * x).sum().backward(); assert x.grad.tolist() == [2., 4.]",
    "from agrad.ops import registered; assert len(registered()) > 90",
    "from agrad.dispatcher import get_op; assert get_op('add').name == 'add'",
    "import agrad.autograd.engine as e; assert e.get_default_engine()",
    "from agrad.autograd import grad; from agrad.creation import tensor; x = tensor(2., requires_grad=True); "
    "assert grad(x * x, x)[0].item() == 4.",
    "from agrad.testing import gradcheck",
    "from agrad.func import grad, vmap; from agrad.creation import tensor; "
    "assert vmap(grad(lambda x: (x * x).sum()))(tensor([[1., 2.]])).tolist() == [[2., 4.]]",
    "from agrad.library import define",
    "from agrad.backends import register_backend",
    "from agrad.grad_mode import no_grad",
    "from agrad.creation import ones; assert (ones(2) + 1).tolist() == [2., 2.]",
    "import agrad.graphs as graphs; assert graphs.load",
    "import agrad; assert agrad.device('cuda:1').index == 1 and agrad.tensor(1.).item() == 1.",
    "from agrad import *; x = tensor([1., 2.], requires_grad=True); sum(x * x).backward(); assert x.grad.tolist() == [2., 4.]",
]


@pytest.mark.parametrize("code", FIRST_IMPORTS)
def test_first_import(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_cli_starts_without_the_engine():
    code = "import sys, agrad.cli.main; assert 'numpy' not in sys.modules, 'numpy'; assert 'agrad._api' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_engine_loops_and_recording_in_c_are_built_where_a_compiler_is():
    # the extension is optional (an install without a compiler succeeds, on the Python loops), so a build
    # that failed would otherwise go unnoticed
    from agrad.autograd import engine
    if os.environ.get("AGRAD_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("AGRAD_PURE_PYTHON is set")
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here")
    assert engine._native is not None, "pip install did not build engine/autograd/_native_engine.c"
    from agrad.autograd import recording
    assert recording.record is not None, "pip install did not build engine/autograd/_native_recording.c"


def test_agrad_pure_python_selects_the_python_loops_and_recording():
    code = ("from agrad.autograd import engine, recording; assert engine._native is None; "
            "assert recording.record is None; import agrad; "
            "x = agrad.tensor([1., 2.], requires_grad=True); (x * x).sum().backward(); assert x.grad.tolist() == [2., 4.]")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AGRAD_PURE_PYTHON": "1"})
    assert done.returncode == 0, done.stderr
