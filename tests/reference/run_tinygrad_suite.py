"""Run tinygrad's own op suite (test/backend/test_ops.py) with agrad in tinygrad's place (a developer
tool, not a CI test: it needs torch, which the suite compares with, and the suite's file).

    /work/torchvenv/bin/python tests/reference/run_tinygrad_suite.py PATH/TO/test_ops.py \
        --agrad-site /work/main/.venv/lib/python3.11/site-packages [-k SUBSTRING] [--json OUT.json]

(`git show HEAD:test/backend/test_ops.py` in a tinygrad clone; the interpreter is one with torch, and
`--agrad-site` the site-packages where agrad and its dependencies are installed.)

Every case of the suite is a `helper_test_op(shapes, torch_fxn, tinygrad_fxn)` call: the inputs drawn
as the suite draws them (NumPy seed 0), `torch_fxn` run on torch tensors, `tinygrad_fxn` (or
`torch_fxn` itself) on tinygrad's. Here the second side is `torch_fxn` with `torch` bound to agrad in
its globals (a builtin such as `torch.abs` or `F.logsigmoid` becomes agrad's function of that name, a
torch module instance such as `nn.Softmax(dim=1)` agrad's module made with the same arguments): the
suite's question, whether each function gives torch's values and gradients, asked of agrad's
PyTorch API. The comparison is the suite's own: shape, dtype, values (its atol/rtol), then the
gradients of the sum of the output (its grad_atol/grad_rtol), and for `helper_test_exception`, the
exception type. tinygrad itself is a stand-in module (its names the suite reads at import and in
decorators); a test that calls tinygrad's own API outside the helpers ends in `harness`.

Prints the counts (pass / fail-forward / fail-backward / fail-exception / harness) and each failing
call with its test, message and the function's source.
"""
from __future__ import annotations

import argparse
import collections
import functools
import importlib.util
import inspect
import json
import signal
import site
import sys
import tempfile
import types
import unittest
from pathlib import Path

import numpy as np

TINYGRAD_STANDIN = {
    "tinygrad/__init__.py": '''
class _Anything:
    """Whatever the suite asks of tinygrad's devices and flags at import: false, empty, never equal."""
    def __init__(self, **attrs): self.__dict__.update(attrs)
    def __getattr__(self, name): return _Anything()
    def __call__(self, *args, **kwargs): return _Anything()
    def __getitem__(self, key): return _Anything(renderer=_Anything(supported_dtypes=lambda: list(vars(_Dtypes))))
    def __eq__(self, other): return False
    def __hash__(self): return 0
    def __bool__(self): return False
    def __gt__(self, other): return False
    def startswith(self, *prefixes): return False
class _Dtypes:
    default_float = "float32"
    def __getattr__(self, name): return name
dtypes = _Dtypes()
class _Device:
    DEFAULT = "CPU"
    def __getitem__(self, key): return _Anything(renderer=_Anything(supported_dtypes=lambda: ["half", "float64"]))
Device = _Device()
class _TensorClass(type):
    def __getattr__(cls, name): return _Anything()
class Tensor(metaclass=_TensorClass):
    def __init__(self, *args, **kwargs): raise NotImplementedError("tinygrad's own Tensor (not stood in)")
''',
    "tinygrad/helpers.py": '''
import contextlib, os
from tinygrad import _Anything
def getenv(key, default=0): return type(default)(os.environ.get(key, default))
DEBUG = 0
IMAGE = 0
DEV = _Anything(interface="", renderer="")
@contextlib.contextmanager
def Context(**flags): yield
''',
    "tinygrad/tensor.py": "import numpy as np\ndef _to_np_dtype(dtype): return np.dtype(dtype)\n",
    "tinygrad/renderer/__init__.py": "",
    "tinygrad/renderer/nir.py": "class NIRRenderer: pass\n",
    "tinygrad/nn/__init__.py": "",
    "tinygrad/nn/torch.py": "",
}


class Suite:
    def __init__(self, module, torch, agrad):
        self.module, self.torch, self.agrad = module, torch, agrad
        self.records: list[dict] = []
        self._globals = None
        self.current = "?"

    # ---- torch's functions as agrad's -------------------------------------------------------

    def agrad_globals(self) -> dict:
        if self._globals is None:
            self._globals = dict(vars(self.module), torch=self.agrad)
            for name, value in list(self._globals.items()):
                if isinstance(value, types.FunctionType) and value.__globals__ is vars(self.module):
                    self._globals[name] = self.as_agrad(value)
        return self._globals

    def as_agrad(self, fn):
        """`fn` (the suite's lambda, a torch builtin, a partial, a torch module instance) as agrad's."""
        agrad, torch = self.agrad, self.torch
        if isinstance(fn, functools.partial):
            return functools.partial(self.as_agrad(fn.func), *fn.args, **fn.keywords)
        if isinstance(fn, torch.nn.Module):
            cls = getattr(agrad.nn, type(fn).__name__)
            accepted = inspect.signature(cls).parameters
            return cls(**{k: v for k, v in vars(fn).items() if k in accepted})
        if isinstance(fn, types.FunctionType) and fn.__globals__ is vars(self.module):
            closure = fn.__closure__
            if closure:
                closure = tuple(types.CellType(self.as_agrad(c.cell_contents))
                                if isinstance(c.cell_contents, (types.FunctionType, functools.partial)) else c
                                for c in closure)
            return types.FunctionType(fn.__code__, self.agrad_globals(), fn.__name__, fn.__defaults__, closure)
        name = getattr(fn, "__name__", None)
        qualname = getattr(fn, "__qualname__", "") or ""
        module = getattr(fn, "__module__", "") or ""
        if qualname.split(".")[0] in ("Tensor", "TensorBase"):
            return getattr(agrad.Tensor, name)
        if module in ("torch.nn.functional", "torch._C._nn"):
            return getattr(agrad.nn.functional, {"log_sigmoid": "logsigmoid"}.get(name, name))
        if module.startswith("torch") or type(fn).__name__ == "builtin_function_or_method":
            return getattr(agrad, name)
        return fn

    # ---- the suite's helpers, asked of agrad -------------------------------------------------

    def inputs(self, low, high, shapes, vals, forward_only):
        torch = self.torch
        if shapes is None:
            ts = [torch.tensor(x, requires_grad=not forward_only) for x in vals]
        else:
            np.random.seed(0)
            ts = [torch.tensor(np.random.uniform(low=low, high=high, size=size).astype(np.float32),
                               requires_grad=not forward_only) for size in shapes]
        ts = [t.type(torch.int32) if t.dtype == torch.int64 else t for t in ts]
        mine = [self.agrad.tensor(t.detach().numpy(), requires_grad=t.requires_grad) for t in ts]
        return ts, mine

    def record(self, outcome, message="", fn=None):
        try:
            source = inspect.getsource(fn).strip() if fn is not None else ""
        except (OSError, TypeError):
            source = repr(fn)
        self.records.append({"test": self.current, "outcome": outcome, "message": message, "source": source[:300]})

    def helper_test_op(self, shps, torch_fxn, tinygrad_fxn=None, atol=1e-6, rtol=1e-3, grad_atol=1e-4,
                       grad_rtol=1e-3, forward_only=False, vals=None, low=-2, high=2):
        ts, mine = self.inputs(low, high, shps, vals, forward_only)
        try:
            expected = torch_fxn(*ts)
        except Exception:       # noqa: BLE001 - torch refuses it too: the suite's case is of another library
            return
        stage = "forward"
        try:
            fn = self.as_agrad(torch_fxn)
            got = np.asarray(fn(*mine).detach().numpy())
            want = expected.detach().numpy()
            assert got.shape == want.shape, f"shape {got.shape}, torch {want.shape}"
            assert got.dtype == want.dtype, f"dtype {got.dtype}, torch {want.dtype}"
            if np.issubdtype(want.dtype, np.floating):
                np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
            else:
                np.testing.assert_equal(got, want)
            if not forward_only and ts:
                stage = "backward"
                want_grads = self.torch.autograd.grad(torch_fxn(*ts).sum(), ts)
                got_grads = self.agrad.autograd.grad(fn(*mine).sum(), mine)
                for i, (g, w) in enumerate(zip(got_grads, want_grads)):
                    np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), atol=grad_atol, rtol=grad_rtol,
                                               err_msg=f"gradient {i}")
        except Exception as exc:    # noqa: BLE001 - every failure is the finding
            text = str(exc).strip().splitlines()
            self.record(f"fail-{stage}", f"{type(exc).__name__}: {text[0] if text else ''}"[:300], torch_fxn)
            return
        self.record("pass")

    def helper_test_exception(self, shps, torch_fxn, tinygrad_fxn=None, expected=None, forward_only=False,
                              exact=False, vals=None, low=-1.5, high=1.5):
        ts, mine = self.inputs(low, high, shps, vals, forward_only)
        try:
            torch_fxn(*ts)
            return              # torch does not raise it either
        except Exception:       # noqa: BLE001
            pass
        try:
            self.as_agrad(torch_fxn)(*mine)
        except Exception as exc:    # noqa: BLE001
            if expected is None or isinstance(exc, expected):
                self.record("pass")
            else:
                self.record("fail-exception", f"{type(exc).__name__} where torch raises {expected}: {exc}"[:300],
                            torch_fxn)
            return
        self.record("fail-exception", f"no exception where torch raises {expected}", torch_fxn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", type=Path, help="tinygrad's test/backend/test_ops.py")
    parser.add_argument("--agrad-site", help="site-packages holding agrad and its dependencies")
    parser.add_argument("-k", default="", help="only the tests whose id contains this")
    parser.add_argument("--json", type=Path, help="write every record here")
    parser.add_argument("--timeout", type=int, default=60, help="seconds a test may take")
    args = parser.parse_args()
    if args.agrad_site:
        site.addsitedir(args.agrad_site)
    import torch

    import agrad

    standin = Path(tempfile.mkdtemp(prefix="tinygrad-standin-"))
    for path, text in TINYGRAD_STANDIN.items():
        (standin / path).parent.mkdir(parents=True, exist_ok=True)
        (standin / path).write_text(text)
    sys.path.insert(0, str(standin))
    spec = importlib.util.spec_from_file_location("test_ops", args.suite)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    suite = Suite(module, torch, agrad)
    module.helper_test_op = suite.helper_test_op
    # (a bound method as the class's attribute: a test's self.helper_test_exception(...) calls it as it is)
    module.TestOps.helper_test_exception = suite.helper_test_exception

    def flat(tests):
        for test in tests:
            yield from flat(test) if isinstance(test, unittest.TestSuite) else (test,)

    result = unittest.TestResult()

    def timed_out(*_):
        raise TimeoutError(f"over {args.timeout} s")

    signal.signal(signal.SIGALRM, timed_out)
    for test in flat(unittest.defaultTestLoader.loadTestsFromModule(module)):
        if args.k not in test.id():
            continue
        suite.current = test.id().rsplit(".", 1)[-1]
        before = len(result.errors) + len(result.failures)
        signal.alarm(args.timeout)
        try:
            test(result)
        finally:
            signal.alarm(0)
        for _, text in (result.errors + result.failures)[before:]:
            # the test's own code used tinygrad's API (or asserted on it): not a helper case
            suite.records.append({"test": suite.current, "outcome": "harness",
                                  "message": text.strip().splitlines()[-1][:300], "source": ""})
    counts = collections.Counter(r["outcome"] for r in suite.records)
    print(", ".join(f"{k} {v}" for k, v in counts.most_common()), f"(in {len({r['test'] for r in suite.records})} tests)")
    for r in suite.records:
        if r["outcome"].startswith("fail"):
            print(f"{r['test']}: {r['outcome']}: {r['message']}\n    {r['source'].splitlines()[0] if r['source'] else ''}")
    if args.json:
        args.json.write_text(json.dumps(suite.records, indent=1))


if __name__ == "__main__":
    main()
