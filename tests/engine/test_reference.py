"""agrad against PyTorch's recorded values (tests/reference/fixtures, written by
tests/reference/make_reference.py). This file never imports torch.

For every op sample in the fixtures: the same sample rebuilt by agrad, the same
forward and backward (the grad_output and second-order conventions of
tests/reference/reference_common.py), compared with PyTorch's outputs (shape, dtype,
values), leaf gradients and second-order values, and the output's grad_fn name.
float64 to rtol 1e-10 / atol 1e-12, float32 to rtol 1e-5 / atol 1e-6; a gradient
PyTorch leaves as None may be None or zeros in agrad (and the other way round).
A fixture for an op that is no longer registered, or whose samples changed, and a
registered op with no fixture all fail: regenerate with the command in
tests/reference/README.md.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import agrad
from engine_loops import engine_loop  # noqa: F401 — every test here runs on the C and the Python loops

def _load(module: str):
    """A module of tests/reference/ (shared with the generator, which runs under torch's venv)."""
    path = Path(__file__).resolve().parents[1] / "reference" / f"{module}.py"
    spec = importlib.util.spec_from_file_location(f"agrad_reference_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


rc = _load("reference_common")
NAME_DEVIATIONS = _load("name_deviations").NAME_DEVIATIONS

REGENERATE = "regenerate: /tmp/torchvenv/bin/python tests/reference/make_reference.py (see tests/reference/README.md)"
TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}     # (rtol, atol)
# Ops where PyTorch's own float64 kernel is less accurate than TOL: op -> float64 rtol.
# PyTorch's trigamma (calc_trigamma: 6 recurrence steps, then a 4-term asymptotic series) is off
# by up to ~6e-10 relative; agrad's (SciPy's) is within ~1e-15 (tests/engine/test_ops_special.py):
# polygamma(1, x), and every gradient that uses it (digamma's, polygamma(0, ·)'s, lgamma's and mvlgamma's
# second order)
LOOSER_FLOAT64 = {"digamma": 1e-8, "polygamma": 1e-8, "lgamma": 1e-8, "mvlgamma": 1e-8}
# Ops whose float32 values are sums of terms much larger than the sum (the grid's gradient of grid_sample:
# 4 or 16 taps times the channels, at up to size/2 per unit of the grid, mostly cancelling): PyTorch's
# float32 kernel and agrad's both err by a few float32 ulps of the terms, in other orders of summation, so
# an element near zero is compared to an atol of float32's rtol times the tensor's largest magnitude.
SCALED_ATOL_FLOAT32 = {"grid_sampler_2d_backward", "grid_sampler_2d_double_backward"}


# ---- what is registered, what is recorded --------------------------------------------------

def _infos() -> dict:
    return {i.name: i for i in agrad.ops.registered()}


def _referenced(info) -> bool:
    return bool(info.torch) and info.samples is not None


@functools.lru_cache(maxsize=None)
def _fixture(op: str) -> dict:
    return rc.load_op(op)


@functools.lru_cache(maxsize=None)
def _fixture_ops() -> tuple[str, ...]:
    """Every op with a fixture file (and any the manifest lists, so a lost file fails)."""
    manifest = rc.load_manifest() or {}
    ops = set(manifest.get("ops", {}))
    for p in rc.FIXTURES.glob("*.json"):
        if p != rc.MANIFEST:
            try:
                ops.add(json.loads(p.read_text())["op"])
            except Exception:               # noqa: BLE001 — an unreadable file fails under its stem
                ops.add(p.stem)
    return tuple(sorted(ops))


def _cases(variant: str):
    for op in _fixture_ops():
        try:
            entry = _fixture(op)
        except Exception:                           # noqa: BLE001 — reported by test_fixture_is_current
            continue
        for s in entry["samples"]:
            if s.get(variant) is not None:
                yield pytest.param(op, s["name"], id=f"{op}-{s['name']}")


def _sample(op: str, key: str):
    """The agrad sample for a fixture entry, checked to be the one PyTorch saw."""
    infos = _infos()
    if op not in infos:
        pytest.fail(f"stale fixture: {op!r} is no longer a registered op; {REGENERATE}")
    entry = _fixture(op)
    rec = next(s for s in entry["samples"] if s["name"] == key)
    samples = infos[op].samples(op)
    by_key = dict(zip(rc.sample_keys(samples), samples))
    if key not in by_key:
        pytest.fail(f"stale fixture: {op} has no sample {key!r} any more; {REGENERATE}")
    sample = by_key[key]
    if rc.fingerprint(sample) != rec["fingerprint"]:
        pytest.fail(f"stale fixture: the inputs of {op} [{key}] changed since PyTorch's values were recorded; "
                    f"{REGENERATE}")
    return infos[op], sample, rec


# ---- running a sample in agrad (mirrors make_reference.py) ----------------------------------

class _Leaves:
    """Fresh leaf copies of a sample's tensors (float64, or cast to float32); one per distinct tensor."""

    def __init__(self, cast_float32: bool):
        self.cast = cast_float32
        self.memo: dict[int, agrad.Tensor] = {}

    def __call__(self, value):
        if isinstance(value, agrad.Tensor):
            t = self.memo.get(id(value))
            if t is None:
                t = value.detach()
                if self.cast and t.dtype == agrad.float64:
                    t = t.to(dtype=agrad.float32)
                if value.requires_grad:
                    t.requires_grad_(True)
                t = self.memo[id(value)] = t
            return t
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        return value


def _forward(info, sample, cast_float32: bool):
    leaves = _Leaves(cast_float32)
    args = [leaves(a) for a in sample.args]
    kwargs = {k: leaves(v) for k, v in sample.kwargs.items()}
    out = info.entry.function(*args, **kwargs)
    if sample.output_process_fn_grad is not None:     # a gauge-invariant part (svd's, eigh's signs)
        out = sample.output_process_fn_grad(out)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return outs, [leaves.memo[id(t)] for t in rc.sample_leaves(sample)]


def _grad_outputs(outs):
    diff = [o for o in outs if o.requires_grad]
    gos = [agrad.tensor(rc.grad_output_values(o.numel()).reshape(o.shape), dtype=o.dtype) for o in diff]
    return diff, gos


# ---- comparing ----------------------------------------------------------------------------

def _compare(what: str, got, ref: dict | None, dtype_name: str, problems: list, none_is_zero: bool = True,
             op: str | None = None):
    rtol, atol = TOL.get(dtype_name, TOL["float64"])
    if ref is None and got is None:
        return
    if ref is None or got is None:
        present = got if ref is None else ref
        values = np.asarray(present.detach() if ref is None else present["values"], dtype=np.float64)
        if none_is_zero and np.all(np.abs(values) <= atol):
            return
        problems.append(f"{what}: PyTorch gives {'None' if ref is None else 'a tensor'}, "
                        f"agrad {'None' if got is None else 'a nonzero tensor'}")
        return
    shape = tuple(ref["shape"])
    if tuple(got.shape) != shape:
        problems.append(f"{what}: shape {tuple(got.shape)}, PyTorch {shape}")
        return
    if got.dtype.name != ref["dtype"]:
        problems.append(f"{what}: dtype {got.dtype.name}, PyTorch {ref['dtype']}")
    g = np.asarray(got.detach()).reshape(-1)
    if ref["dtype"] not in ("float16", "float32", "float64"):
        r = np.asarray(ref["values"], dtype=np.dtype(ref["dtype"])).reshape(-1)
        if g.dtype != r.dtype or not np.array_equal(g, r):
            bad = np.flatnonzero(g.astype(r.dtype) != r) if g.shape == r.shape else [0]
            problems.append(f"{what}: values differ at flat index {int(bad[0])}: {g[bad[0]]!r} "
                            f"vs PyTorch {r[bad[0]]!r}")
        return
    r = np.asarray(ref["values"], dtype=np.float64).reshape(-1)
    rtol, atol = TOL.get(got.dtype.name, TOL["float64"])
    if got.dtype.name == "float64":
        rtol = LOOSER_FLOAT64.get(op, rtol)
    elif op in SCALED_ATOL_FLOAT32 and r.size:
        atol = max(atol, rtol * float(np.nanmax(np.abs(r))))
    g = g.astype(np.float64)
    r = r.astype(np.float64)
    nan_g, nan_r = np.isnan(g), np.isnan(r)
    if not np.array_equal(nan_g, nan_r):
        problems.append(f"{what}: NaN at flat indices {np.flatnonzero(nan_g).tolist()}, "
                        f"PyTorch {np.flatnonzero(nan_r).tolist()}")
        return
    ok = ~nan_r
    g, r = g[ok], r[ok]
    inf = np.isinf(r) | np.isinf(g)
    if np.any(g[inf] != r[inf]):
        problems.append(f"{what}: infinities differ")
        return
    g, r = g[~inf], r[~inf]
    err = np.abs(g - r)
    bad = err > atol + rtol * np.abs(r)
    if np.any(bad):
        rel = err / np.maximum(np.abs(r), np.finfo(np.float64).tiny)
        i = int(np.argmax(err))
        problems.append(f"{what}: {int(bad.sum())}/{r.size} values off; max abs err {err.max():.3g}, "
                        f"max rel err {rel[bad].max():.3g} (agrad {float(g[i])!r} vs PyTorch {float(r[i])!r})")


def _check(problems: list, op: str, key: str):
    if problems:
        pytest.fail(f"{op} [{key}] differs from PyTorch:\n  " + "\n  ".join(problems), pytrace=False)


def _run_first_order(op: str, key: str, variant: str):
    info, sample, rec = _sample(op, key)
    ref = rec[variant]
    if "skipped" in ref:
        pytest.skip(f"no PyTorch reference: {ref['skipped']}")
    outs, leaves = _forward(info, sample, variant == "float32")
    problems = []
    if len(outs) != len(ref["outputs"]):
        _check([f"{len(outs)} outputs, PyTorch {len(ref['outputs'])}"], op, key)
    for i, (o, r) in enumerate(zip(outs, ref["outputs"])):
        _compare(f"output {i}", o, r, variant, problems, none_is_zero=False, op=op)
        if o.requires_grad != r["requires_grad"]:
            problems.append(f"output {i}: requires_grad {o.requires_grad}, PyTorch {r['requires_grad']}")
        # the output's grad_fn is named as PyTorch names it
        name = o.grad_fn.name() if o.grad_fn is not None else None
        if name != r["grad_fn"] and (op, name, r["grad_fn"]) not in NAME_DEVIATIONS:
            problems.append(f"output {i}: grad_fn {name}, PyTorch {r['grad_fn']}")
    if ref["grads"] is not None:
        diff, gos = _grad_outputs(outs)
        if diff:
            agrad.autograd.backward(diff, gos)
        for j, (leaf, r) in enumerate(zip(leaves, ref["grads"])):
            _compare(f"grad of input {j}", leaf.grad, r, variant, problems, op=op)
    _check(problems, op, key)


# values, gradients, requires_grad and the grad_fn's name of each output, in float64 and in float32
@pytest.mark.parametrize("op,key", list(_cases("float64")))
def test_float64(op, key):
    _run_first_order(op, key, "float64")


@pytest.mark.parametrize("op,key", list(_cases("float32")))
def test_float32(op, key):
    _run_first_order(op, key, "float32")


@pytest.mark.parametrize("op,key", list(_cases("second_order")))
def test_second_order(op, key):
    info, sample, rec = _sample(op, key)
    ref = rec["second_order"]
    if "skipped" in ref:
        pytest.skip(f"no PyTorch reference: {ref['skipped']}")
    outs, leaves = _forward(info, sample, False)
    diff, gos = _grad_outputs(outs)
    g = agrad.autograd.grad(diff, leaves, gos, create_graph=True, allow_unused=True)
    s = None
    for gi in g:
        if gi is not None:
            v = agrad.tensor(rc.second_order_values(gi.numel()).reshape(gi.shape), dtype=gi.dtype)
            term = (gi * v).sum()
            s = term if s is None else s + term
    if s is None or not s.requires_grad:
        gg = [None] * len(leaves)
    else:
        gg = agrad.autograd.grad(s, leaves, allow_unused=True)
    problems = []
    for j, (x, r) in enumerate(zip(gg, ref["grads"])):
        _compare(f"second-order grad of input {j}", x, r, "float64", problems, op=op)
    _check(problems, op, key)


# ---- the fixtures match the registry ------------------------------------------------------

def _stale(op, infos) -> str | None:
    """Why op's fixture is stale (an op that is gone, or whose torch string or samples changed), or None."""
    if op not in infos:
        return f"{op!r} is no longer a registered op"
    info = infos[op]
    if not _referenced(info):
        return f"{op!r} has no .torch string or samples now"
    entry = _fixture(op)
    if entry["format"] != rc.FORMAT_VERSION:
        return f"{op!r} was recorded in format {entry['format']}"
    if entry["torch"] != info.torch:
        return f"{op}: .torch changed to {info.torch!r} since recording"
    if entry["skipped"]:            # PyTorch could not run it: nothing recorded to compare
        return None
    samples = info.samples(op)
    now = dict(zip(rc.sample_keys(samples), (rc.fingerprint(s) for s in samples)))
    then = {s["name"]: s["fingerprint"] for s in entry["samples"]}
    if now != then:
        return (f"{op}: samples changed (added {sorted(set(now) - set(then))}, removed "
                f"{sorted(set(then) - set(now))}, inputs changed "
                f"{sorted(k for k in set(now) & set(then) if now[k] != then[k])})")
    return None


# (one test for every op, as for the next: a test per op was 2,400 tests of a few ms, most of it pytest's)
def test_fixtures_are_current():
    infos = _infos()
    stale = [why for why in (_stale(op, infos) for op in _fixture_ops()) if why is not None]
    assert stale == [], f"stale fixtures: {stale}; {REGENERATE}"


def test_every_op_has_reference():
    """A registered op with a .torch string and samples has PyTorch's values recorded."""
    missing = sorted(n for n, i in _infos().items() if _referenced(i) and n not in _fixture_ops())
    assert missing == [], f"no PyTorch reference for {missing} (forgotten regeneration); {REGENERATE}"


def test_fixtures_record_the_torch_version():
    manifest = rc.load_manifest()
    assert manifest is not None, f"no fixtures; {REGENERATE}"
    assert manifest["torch_version"].startswith("2.13.0")
    for op in _fixture_ops():
        assert _fixture(op)["torch_version"] == manifest["torch_version"], f"{op}: recorded with another torch"


def test_torch_is_never_imported():
    """These tests run where torch is not installed: neither this file nor its helper imports it."""
    import ast
    for path in (Path(__file__), Path(rc.__file__)):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n == "torch" or n.startswith("torch.") for n in names), f"{path.name} imports torch"
