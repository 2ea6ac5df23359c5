"""Run PyTorch's own test/test_autograd.py with agrad standing in for torch (a developer tool, not a CI test).

    PYTHONPATH=<agrad on the path> python tests/reference/run_torch_suite.py PATH/TO/test_autograd.py \
        [-k SUBSTRING] [--json OUT.json] [--timeout SECONDS] [--show CATEGORY] [--calibration TORCH.json]
    python tests/reference/run_torch_suite.py PATH/TO/test_autograd.py --library torch --json TORCH.json
        (in a venv with torch: the same harness on PyTorch itself; what fails there is not agrad's)

The test file is not in this repository: take it from a PyTorch source tree of the version agrad follows
(`git show v2.X.0:test/test_autograd.py` in a pytorch clone, or test/ of the release's source tarball);
test/expect/TestAutograd.*.expect beside it serves `assertExpected`. This script never imports torch.

How `torch` becomes agrad: the file is compiled and run with its own `__import__`, which answers every
`torch…` import: `torch` itself is agrad, `torch.X.Y` is `agrad.X.Y` (module or attribute), and the
pieces of torch.testing._internal / torch.utils that a test suite needs are the smallest stand-ins below
(TestCase.assertEqual over tensors, gradcheck with common_utils' defaults, the skip decorators,
parametrize and instantiate_* expansion for the CPU device). A name agrad lacks becomes a `Missing`
placeholder at import time, so one absent name fails only the tests that use it.

Every test ends in one category, printed with counts (most frequent first):
  pass, fail:<bucket> (a real agrad gap or a wrong result, bucketed by exception type and message),
  harness:<why> (what this harness cannot stand in for: torch internals `torch._C`/private names,
  CUDA/multi-device, sparse, jit, dispatch modes / subclasses / __torch_function__, C++ extensions,
  slow tests that torch's CI skips too), timeout.
"""
from __future__ import annotations

import argparse
import builtins
import collections
import contextlib
import gc
import importlib
import itertools
import json
import math
import os
import re
import signal
import sys
import traceback
import types
import unittest
import warnings

import numpy as np

agrad = None  # the library standing for torch: agrad, or torch itself with --library torch (calibration)


class HarnessLimit(Exception):
    """Raised by a stand-in for a torch facility this harness does not provide."""


class Missing:
    """A torch name agrad lacks, bound at import time; using it fails the test that uses it."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if _LOADING:  # a decorator or a skip condition in a class body: fail the test, not the load
            return Missing(f"{self._name}()")
        raise AttributeError(f"agrad has no {self._name}")

    def __mro_entries__(self, bases):  # `class Mode(TorchDispatchMode)` still defines a class
        name = self._name

        class _MissingBase:
            def __init__(self, *a, **k):
                raise AttributeError(f"agrad has no {name}")
        return (_MissingBase,)

    def __repr__(self):
        return f"<Missing {self._name}>"


def _limit(why):
    """A stand-in that fails with HarnessLimit when called (or subclassed and instantiated)."""
    class _Limited:
        def __init__(self, *a, **k):
            raise HarnessLimit(why)

        def __class_getitem__(cls, item):
            return cls
    return _Limited


# ----- torch.testing._internal stand-ins ---------------------------------------------------------------

_TOLERANCES = {  # torch.testing._comparison's defaults, (rtol, atol)
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
}


def _is_tensor(x):
    return isinstance(x, agrad.Tensor)


def _as_array(x):
    if _is_tensor(x):
        return np.asarray(x.detach().numpy())
    return np.asarray(x)


class TestCase(unittest.TestCase):
    """common_utils.TestCase: assertEqual compares tensors by value with dtype-based tolerances."""

    _precision = None
    precision = 1e-5
    rel_tol = 0

    def setUp(self):
        agrad.manual_seed(1234)
        np.random.seed(1234)

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True, exact_dtype=True,
                    exact_device=False, exact_layout=False, exact_stride=False, exact_is_coalesced=False):
        if _is_tensor(x) or _is_tensor(y):
            if not _is_tensor(x):
                x, y = y, x
            if _is_tensor(y):
                if exact_dtype and x.dtype != y.dtype:
                    raise self.failureException(f"dtype mismatch: {x.dtype} != {y.dtype}" + (f" {msg}" if msg else ""))
                if tuple(x.shape) != tuple(y.shape):
                    raise self.failureException(f"shape mismatch: {tuple(x.shape)} != {tuple(y.shape)}")
            elif isinstance(y, (list, tuple)):
                y = np.asarray(y)
                if x.shape != y.shape and not (x.dim() == 0 and y.size == 1):
                    raise self.failureException(f"shape mismatch: {tuple(x.shape)} != {y.shape}")
            a, b = _as_array(x), _as_array(y)
            if x.dtype.is_floating_point or x.dtype.is_complex:
                name = str(x.dtype).split(".")[-1]
                rt, at = _TOLERANCES.get(name, (1e-7, 1e-7))
                rtol = rt if rtol is None else rtol
                atol = at if atol is None else atol
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan, err_msg=msg or "")
            else:
                np.testing.assert_array_equal(a, b, err_msg=msg or "")
            return
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and not (
                isinstance(x, torch_size_types()) and isinstance(y, torch_size_types())):
            if len(x) != len(y):
                raise self.failureException(f"length mismatch: {len(x)} != {len(y)}" + (f" {msg}" if msg else ""))
            for xi, yi in zip(x, y):
                self.assertEqual(xi, yi, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        if isinstance(x, dict) and isinstance(y, dict):
            self.assertEqual(sorted(x), sorted(y), msg)
            for k in x:
                self.assertEqual(x[k], y[k], msg, atol=atol, rtol=rtol)
            return
        if (isinstance(x, float) or isinstance(y, float)) and isinstance(x, (int, float)) and isinstance(y, (int, float)):
            rtol = 1e-7 if rtol is None else rtol
            atol = 1e-7 if atol is None else atol
            if math.isnan(x) and math.isnan(y) and equal_nan:
                return
            if not abs(x - y) <= atol + rtol * abs(y):
                raise self.failureException(f"{x} != {y}" + (f" {msg}" if msg else ""))
            return
        super().assertEqual(x, y, msg)

    def assertNotEqual(self, x, y, msg=None, **kw):
        try:
            self.assertEqual(x, y, msg, **kw)
        except (AssertionError, self.failureException):
            return
        raise self.failureException(f"{x!r} == {y!r}" + (f" {msg}" if msg else ""))

    def assertExpected(self, s, subname=None):
        path = os.path.join(EXPECT_DIR, f"{type(self).__name__}.{self._testMethodName}"
                            + (f"-{subname}" if subname else "") + ".expect")
        if not os.path.exists(path):
            raise unittest.SkipTest(f"harness: no expect file {os.path.basename(path)}")
        with open(path) as f:
            expected = f.read()
        super().assertEqual(s.strip(), expected.strip())

    def assertExpectedInline(self, actual, expect, skip=0):
        super().assertEqual(str(actual).strip(), str(expect).strip())

    def assertWarnsOnceRegex(self, category, regex=""):
        return self.assertWarnsRegex(category, regex)

    @contextlib.contextmanager
    def assertNotWarn(self, callable=None, msg=""):  # noqa: A002 - torch's signature
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            if callable is not None:
                callable()
            yield
        self.assertTrue(len(ws) == 0, msg or f"unexpected warnings {[str(w.message) for w in ws]}")

    def assertLeaksNoCudaTensors(self):
        return contextlib.nullcontext()


def torch_size_types():
    return (agrad.Size,) if hasattr(agrad, "Size") else ()


def gradcheck(fn, inputs, **kwargs):
    """common_utils.gradcheck: batched grads checked and fast mode on unless the caller says otherwise."""
    for key, value in {"check_batched_grad": True, "fast_mode": True}.items():
        if kwargs.get(key) is None:
            kwargs[key] = value
    return agrad.autograd.gradcheck(fn, inputs, **kwargs)


def gradgradcheck(fn, inputs, grad_outputs=None, **kwargs):
    for key, value in {"check_batched_grad": True, "fast_mode": True}.items():
        if kwargs.get(key) is None:
            kwargs[key] = value
    return agrad.autograd.gradgradcheck(fn, inputs, grad_outputs, **kwargs)


def _identity_decorator_factory(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:  # used bare: @skipIfX
        return args[0]
    return lambda fn: fn


def _skip_factory(why):
    def factory(*args, **kwargs):
        skip = unittest.skip(f"harness: {why}")
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return skip(args[0])
        return skip
    return factory


def parametrize(arg_str, arg_values, name_fn=None):
    names = [n.strip() for n in arg_str.split(",")]

    def decorate(fn):
        fn._harness_params = [(names, list(arg_values), name_fn)] + getattr(fn, "_harness_params", [])
        return fn
    return decorate


def _param_name(value):
    if isinstance(value, (list, tuple)):
        return "_".join(_param_name(v) for v in value)
    return str(value).split(".")[-1].replace(" ", "_")


def _expand_params(name, fn):
    """[(test name, bound kwargs)] of every combination of fn's @parametrize marks."""
    cases = [(name, {})]
    for names, values, name_fn in getattr(fn, "_harness_params", []):
        out = []
        for base, kw in cases:
            for value in values:
                vals = value if len(names) > 1 else (value,)
                suffix = name_fn(*vals) if name_fn else "_".join(f"{n}_{_param_name(v)}" for n, v in zip(names, vals))
                out.append((f"{base}_{suffix}", {**kw, **dict(zip(names, vals))}))
        cases = out
    return cases


def _bind(fn, kwargs):
    def test(self):
        return fn(self, **kwargs)
    test.__name__ = fn.__name__
    test.__wrapped__ = fn
    return test


def instantiate_parametrized_tests(cls):
    for name, fn in list(vars(cls).items()):
        if name.startswith("test") and callable(fn) and hasattr(fn, "_harness_params"):
            delattr(cls, name)
            for tname, kw in _expand_params(name, fn):
                setattr(cls, tname, _bind(fn, kw))
    return cls


def dtypes(*types_):
    def decorate(fn):
        fn._harness_dtypes = types_
        return fn
    return decorate


def onlyCUDA(fn):
    return unittest.skip("harness: CUDA only")(fn)


def deviceCountAtLeast(n):
    return unittest.skip("harness: several devices")


def instantiate_device_type_tests(cls, scope, except_for=None, only_for=None):
    """The CPU instantiation: TestXCPU with test_y_cpu(self) calling test_y(self, 'cpu'[, dtype])."""
    import inspect
    generated = type(cls.__name__ + "CPU", (cls,), {"device_type": "cpu"})
    for name, fn in list(vars(cls).items()):
        if not (name.startswith("test") and callable(fn)):
            continue
        params = list(inspect.signature(fn).parameters)[1:]
        for tname, kw in _expand_params(name, fn):
            dts = getattr(fn, "_harness_dtypes", None)
            if params and params[0] == "devices":
                kw = {**kw, "devices": ["cpu"]}
            elif params and params[0] == "device":
                kw = {**kw, "device": "cpu"}
            for dt in (dts or (None,)):
                full = dict(kw)
                suffix = "_cpu"
                if dt is not None:
                    full["dtype"] = dt
                    suffix += "_" + str(dt).split(".")[-1]
                setattr(generated, tname + suffix, _bind(fn, full))
        setattr(generated, name, None)
    generated.__module__ = cls.__module__
    scope[generated.__name__] = generated
    scope.pop(cls.__name__, None)


def mask_not_all_zeros(shape):
    while True:
        result = agrad.randn(shape).gt(0)
        if result.sum() > 0:
            return result


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """torch.testing.make_tensor: values uniform in [low, high) (default [-9, 9)), as the dtype allows."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if dtype == agrad.bool:
        t = agrad.randint(0, 2, shape).to(agrad.bool)
    elif dtype.is_floating_point:
        lo, hi = -9 if low is None else low, 9 if high is None else high
        t = agrad.rand(shape, dtype=dtype) * (hi - lo) + lo
    else:
        t = agrad.randint(-9 if low is None else int(low), 10 if high is None else int(high), shape).to(dtype)
    if exclude_zero:
        t = agrad.where(t == 0, agrad.ones_like(t), t)
    return t.requires_grad_(requires_grad) if requires_grad else t


@contextlib.contextmanager
def disable_gc():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def set_warn_always_context(new_val):
    old = agrad.is_warn_always_enabled()
    agrad.set_warn_always(new_val)
    try:
        yield
    finally:
        agrad.set_warn_always(old)


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


STANDINS = {
    "torch.testing._internal.common_utils": _module(
        "common_utils", TestCase=TestCase, gradcheck=gradcheck, gradgradcheck=gradgradcheck,
        instantiate_parametrized_tests=instantiate_parametrized_tests, parametrize=parametrize,
        IS_MACOS=False, IS_WINDOWS=False, IS_FBCODE=False, TEST_WITH_TORCHDYNAMO=False, TEST_WITH_ROCM=False,
        run_tests=lambda: None, disable_gc=disable_gc, set_warn_always_context=set_warn_always_context,
        scoped_load_inline=_skip_factory("C++ extension (load_inline)"),
        skipIfMPS=_identity_decorator_factory, skipIfNoLapack=_identity_decorator_factory,
        skipIfTorchDynamo=_identity_decorator_factory, skipIfWindows=_identity_decorator_factory,
        skipIfXpu=_identity_decorator_factory, skipIfSlowGradcheckEnv=_identity_decorator_factory,
        skipCUDANonDefaultStreamIf=_identity_decorator_factory, xfailIfS390X=_identity_decorator_factory,
        xfailIfTorchDynamo=_identity_decorator_factory, slowTest=_skip_factory("slow test (torch CI skips it too)"),
        skipIfRocm=_identity_decorator_factory),
    "torch.testing._internal.common_cuda": _module("common_cuda", TEST_CUDA=False, TEST_MULTIGPU=False),
    "torch.testing._internal.common_device_type": _module(
        "common_device_type", deviceCountAtLeast=deviceCountAtLeast, dtypes=dtypes,
        dtypesIfCUDA=lambda *a: (lambda fn: fn), dtypesIfMPS=lambda *a: (lambda fn: fn),
        expectedFailureMPS=lambda fn: fn, instantiate_device_type_tests=instantiate_device_type_tests,
        onlyCPU=lambda fn: fn, onlyCUDA=onlyCUDA, skipMeta=lambda fn: fn,
        skipCUDAIfRocm=lambda fn: fn),
    "torch.testing._internal.common_dtype": _module(
        "common_dtype", floating_types_and=lambda *extra: (agrad.float32, agrad.float64) + tuple(extra)),
    "torch.testing._internal.common_methods_invocations": _module(
        "common_methods_invocations", mask_not_all_zeros=mask_not_all_zeros),
    "torch.testing": _module("testing", make_tensor=make_tensor, assert_close=None),
    "torch.utils.flop_counter": _module("flop_counter", FlopCounterMode=_limit("FlopCounterMode")),
}


class _WeakTensorRef:
    """torch._C._WeakTensorRef: whether a tensor is still alive."""

    def __init__(self, t):
        import weakref
        self._ref = weakref.ref(t)

    def expired(self):
        return self._ref() is None


def _torch_c():
    """`torch._C`, for the few internals the suite calls whose behaviour agrad has under another name;
    anything else is a Missing (a harness limit)."""
    from agrad.autograd.function import Error, delayed_error
    from agrad.autograd.graph import _hooks_disabled
    from agrad.autograd.gradcheck import _UndefinedGrad
    from agrad.autograd.node import AccumulateGrad
    from agrad.autograd.saved_variable import SavedTensor

    class UndefinedGrad:              # torch._C._functions.UndefinedGrad()(t)
        def __call__(self, *tensors):
            outs = tuple(_UndefinedGrad.apply(t) for t in tensors)
            return outs[0] if len(outs) == 1 else outs

    class DelayedError(Error):        # torch._C._functions.DelayedError(msg, num_inputs)(t): a Node
        def __init__(self, msg, num_inputs=1):
            super().__init__(msg)

        def __call__(self, *tensors):
            outs = tuple(delayed_error(self.msg, t) for t in tensors)
            return outs[0] if len(outs) == 1 else outs

    from agrad import overrides
    c = _Lenient(types.ModuleType("torch._C"), "torch._C")
    c.__dict__.update(
        is_grad_enabled=agrad.is_grad_enabled, _WeakTensorRef=_WeakTensorRef,
        # (agrad has no _C: the __torch_function__ guards are agrad.overrides')
        DisableTorchFunction=overrides.DisableTorchFunction,
        DisableTorchFunctionSubclass=overrides.DisableTorchFunctionSubclass,
        _disabled_torch_function_impl=overrides._disabled_torch_function_impl,
        _is_torch_function_enabled=overrides._is_torch_function_enabled,
        _functions=_Lenient(_module("_functions", UndefinedGrad=UndefinedGrad, DelayedError=DelayedError,
                                    AccumulateGrad=AccumulateGrad), "torch._C._functions"),
        _autograd=_Lenient(_module("_autograd", SavedTensor=SavedTensor,
                                   _saved_tensors_hooks_is_enabled=lambda: _hooks_disabled[0] is None),
                           "torch._C._autograd"))
    return c


class _TorchNamespace(types.ModuleType):
    """The test module's `torch` while its tests run: agrad, plus the `_C` stand-in."""

    def __init__(self, lib, c):
        super().__init__(lib.__name__)
        self._lib = lib
        self._C = c

    def __getattr__(self, attr):
        return getattr(self._lib, attr)


def _resolve(name):
    """The object standing for the dotted torch name: a stand-in, an agrad module or attribute, or Missing."""
    if name in STANDINS:
        return STANDINS[name]
    if name == "torch":
        return agrad
    try:
        return importlib.import_module(agrad.__name__ + name[len("torch"):])
    except ImportError:
        pass
    obj = agrad
    for part in name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return Missing(name)
    return obj


class _FromProxy:
    """What `from torch.X import a, b` reads `a` and `b` from: the real attribute or a Missing."""

    def __init__(self, obj, name):
        self._obj, self._name = obj, name

    def __getattr__(self, attr):
        full = f"{self._name}.{attr}"
        if full in STANDINS:
            return STANDINS[full]
        try:
            return getattr(self._obj, attr)
        except AttributeError:
            return _resolve(full)


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - __import__'s signature
    if level == 0 and (name == "torch" or name.startswith("torch.")):
        if fromlist:
            return _FromProxy(_resolve(name), name)
        return agrad
    if level == 0 and name.startswith("autograd."):  # the sibling files test/autograd/*.py: not run here
        return types.SimpleNamespace(**{n: None for n in fromlist or ()})
    return builtins.__import__(name, globals, locals, fromlist, level)


class _Lenient(types.ModuleType):
    """`torch` (and its submodules) while the module body runs: a name agrad lacks is a Missing, not an
    import failure."""

    def __init__(self, obj, name):
        super().__init__(name)
        self._obj = obj

    def __getattr__(self, attr):
        try:
            value = getattr(self._obj, attr)
        except AttributeError:
            return Missing(f"{self.__name__}.{attr}")
        return _Lenient(value, f"{self.__name__}.{attr}") if isinstance(value, types.ModuleType) else value


def load(path):
    source = open(path).read()
    mod = types.ModuleType("test_autograd")
    mod.__file__ = path
    bi = dict(vars(builtins))
    bi["__import__"] = _import
    mod.__dict__["__builtins__"] = bi
    sys.modules["test_autograd"] = mod
    lenient = _Lenient(agrad, "torch")
    real_import = _import

    def import_during_load(name, *a, **k):
        result = real_import(name, *a, **k)
        return lenient if result is agrad else result
    bi["__import__"] = import_during_load
    global _LOADING
    _LOADING = True
    try:
        exec(compile(source, path, "exec"), mod.__dict__)
    finally:
        _LOADING = False
    bi["__import__"] = _import
    mod.__dict__["torch"] = agrad if agrad.__name__ == "torch" else _TorchNamespace(agrad, _torch_c())
    return mod


# ----- running and classifying ---------------------------------------------------------------------------

_HARNESS_PATTERNS = [  # (category, regex over "ExcType: message" and the test name)
    ("harness:torch internals", r"has no (attribute )?'?(torch\.)?(_C|_dynamo|_functorch|_subclasses|_lazy|_prims|"
                                r"_inductor|_higher_order_ops|fx|_ops|_refs|_library|_logging|ops)\b"),
    ("harness:torch internals", r"has no (attribute )?'?(torch\.)?([a-z_.]*\.)?_\w+'?$"),
    ("harness:cuda/devices", r"cuda|CUDA|Stream|mps|xpu|pin_memory"),
    ("harness:sparse", r"[Ss]parse|sparse_coo|to_dense"),
    ("harness:jit", r"\bjit\b|script|trace"),
    # (dispatch modes and __torch_dispatch__ subclasses are agrad's own: torch.utils._python_dispatch is
    # agrad.utils._python_dispatch, no_dispatch agrad.utils._mode_utils', _make_wrapper_subclass Tensor's,
    # LoggingTensor and TwoTensor agrad.testing._internal's; so are __torch_function__, TorchFunctionMode,
    # as_subclass and _make_subclass: agrad.overrides)
    ("harness:subclass/dispatch mode", r"FlopCounterMode|torch\._subclasses"),
    ("harness:symbolic shapes (SymInt)", r"\bsym_(size|stride|numel|storage_offset)\b|SymInt"),
    ("harness:nested tensor", r"nested"),
    ("harness:subprocess running torch", r"CalledProcessError|runWithPytorchAPIUsageStderr"),
    ("harness:mkldnn", r"mkldnn"),
    # (PyTorch 2.13 has no named tensors either: its Tensor lacks refine_names, rename and names)
    ("harness:named tensors", r"'(refine_names|rename|names|align_to)'"),
    ("harness:bfloat16/autocast (NumPy has no bfloat16)", r"bfloat|autocast"),
]


def classify(test_name, exc_type, message, tb=""):
    if "CalledProcessError" in tb:      # the test ran `python -c "import torch ..."`: real torch, not agrad
        return "harness:subprocess running torch"
    first = message.strip().splitlines()[0] if message.strip() else ""
    text = f"{exc_type}: {first}"
    if exc_type == "HarnessLimit":
        return f"harness:{first}"
    for category, pattern in _HARNESS_PATTERNS:
        if re.search(pattern, text):
            return category
    for category, pattern in _HARNESS_PATTERNS[2:]:
        if re.search(pattern, test_name):
            return category
    first = re.sub(r"0x[0-9a-f]+", "0x…", first)
    first = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", first)
    return f"fail:{exc_type}: {first[:110]}"


def _exception_line(tb):
    """The traceback's `Type: message` line (agrad notes a failing Node on a line of its own after it)."""
    lines = [ln for ln in tb.strip().splitlines() if ln and not ln.startswith((" ", "("))]
    for ln in reversed(lines):
        if re.match(r"[A-Za-z_][\w.]*(: |$)", ln):
            return ln
    return lines[-1]


class _Timeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def run(mod, pattern, timeout):
    results = {}
    classes = [obj for obj in vars(mod).values()
               if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and obj.__module__ == mod.__name__]
    signal.signal(signal.SIGALRM, _on_alarm)
    for cls in classes:
        for name in sorted(n for n in dir(cls) if n.startswith("test") and callable(getattr(cls, n, None))):
            full = f"{cls.__name__}.{name}"
            if pattern and pattern not in full:
                continue
            case = cls(name)
            result = unittest.TestResult()
            signal.alarm(timeout)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    case.run(result)
            except _Timeout:
                results[full] = ("timeout", "")
                continue
            finally:
                signal.alarm(0)
            if result.skipped:
                why = result.skipped[0][1]
                results[full] = ("harness:" + why[len("harness: "):] if why.startswith("harness:") else "skip:" + why, "")
            elif result.errors or result.failures:
                tb = (result.errors or result.failures)[0][1]
                if "_Timeout" in tb:
                    results[full] = ("timeout", "")
                    continue
                last = _exception_line(tb)
                exc_type, _, message = last.partition(": ")
                exc_type = exc_type.split(".")[-1]
                if exc_type in ("AssertionError", "failureException"):
                    message = message or tb.strip().splitlines()[-1]
                results[full] = (classify(full, exc_type, message, tb), tb)
            else:
                results[full] = ("pass", "")
            gc.collect()
    return results


def summarize(results):
    counts = collections.Counter(cat for cat, _ in results.values())
    total = len(results)
    passed = counts.get("pass", 0)
    harness = sum(n for c, n in counts.items() if c.startswith("harness:") or c.startswith("skip:"))
    fails = sum(n for c, n in counts.items() if c.startswith("fail:") or c == "timeout")
    print(f"{total} tests: {passed} passed, {fails} failed (agrad), {harness} harness limits/skips")
    for cat, n in counts.most_common():
        print(f"{n:5d}  {cat}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("-k", default="")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--show", default="", help="print the tracebacks of the tests in categories containing this")
    ap.add_argument("--library", default="agrad", choices=("agrad", "torch"),
                    help="torch runs the same harness on PyTorch itself (in a venv that has it): what fails "
                         "there is the harness's or the test file's version, not agrad's")
    ap.add_argument("--calibration", help="the --json of a --library torch run: a test that fails there too "
                                          "counts as harness:fails on torch too (the file's version, or the harness)")
    args = ap.parse_args(argv)
    global agrad
    agrad = importlib.import_module(args.library)
    global EXPECT_DIR
    EXPECT_DIR = os.path.join(os.path.dirname(os.path.abspath(args.path)), "expect")
    mod = load(args.path)
    results = run(mod, args.k, args.timeout)
    if args.calibration:
        with open(args.calibration) as f:
            on_torch = json.load(f)
        for name, (cat, tb) in list(results.items()):
            if (cat.startswith("fail:") or cat == "timeout") and (on_torch.get(name, "").startswith("fail:")
                                                                   or on_torch.get(name) == "timeout"):
                results[name] = ("harness:fails on torch too", tb)
    if args.show:
        for name, (cat, tb) in sorted(results.items()):
            if args.show in cat:
                print(f"=== {name}  [{cat}]\n{tb}")
    summarize(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v[0] for k, v in sorted(results.items())}, f, indent=1, sort_keys=True)
    return 0


EXPECT_DIR = ""
_LOADING = False

if __name__ == "__main__":
    sys.exit(main())
