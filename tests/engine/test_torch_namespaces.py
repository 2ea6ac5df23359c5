"""Names PyTorch users call outside agrad's own modules: agrad.cuda.is_available() and
agrad.autograd.gradcheck / gradgradcheck."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import agrad


def test_cuda_is_available_imports_cupy_only_when_asked_and_says_false_without_a_gpu(tmp_path):
    """A CuPy that finds no GPU (as on a machine without a driver): importing agrad, making
    tensors and modules never imports it; is_available() does, and answers False."""
    fake = tmp_path / "cupy"
    fake.mkdir()
    (fake / "__init__.py").write_text(textwrap.dedent("""
        import os
        open(os.environ["CUPY_MARKER"], "w").close()

        class _Runtime:
            @staticmethod
            def getDeviceCount():
                raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

        class cuda:
            runtime = _Runtime
    """))
    marker = tmp_path / "imported"
    script = textwrap.dedent("""
        import os, sys
        import agrad, agrad.nn
        agrad.nn.Linear(2, 2)(agrad.ones(1, 2)).sum().backward()
        print("before", os.path.exists(os.environ["CUPY_MARKER"]), "cupy" in sys.modules)
        print("available", agrad.cuda.is_available())
        print("after", os.path.exists(os.environ["CUPY_MARKER"]))
    """)
    env = {"PYTHONPATH": str(tmp_path), "CUPY_MARKER": str(marker), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split("\n")[:3] == ["before False False", "available False", "after True"]


def test_cuda_is_available_with_a_gpu_backend(standin_cuda):
    assert agrad.cuda.is_available() is True


def test_gradcheck_is_agrads_checker_under_autograd():
    assert agrad.autograd.gradcheck is agrad.testing.gradcheck
    assert agrad.autograd.gradgradcheck is agrad.testing.gradgradcheck
    x = agrad.randn(3, dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(agrad.tanh, (x,)) and agrad.autograd.gradgradcheck(agrad.tanh, (x,))
