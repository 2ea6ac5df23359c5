"""What the reference generator (make_reference.py, imports torch) and the reference
test (tests/engine/test_reference.py, never imports torch) share: where the fixtures
live, the fixed grad_output and second-order vectors, and the sample fingerprint.
agrad and NumPy only — no torch here.

Conventions (also written into fixtures/manifest.json):
- grad_output of an output with n elements (C order): go[k] = (-1)**k * (1 + (k % 3) / 4),
  i.e. 1, -1.25, 1.5, -1, 1.25, -1.5, ... (exact in float32); one per output that
  requires grad, in the output's dtype.
- first order: fresh leaf copies of the sample's tensors (same values, layout and
  requires_grad; one leaf per distinct sample tensor), forward, `backward(outputs,
  grad_outputs)`, record each leaf's `.grad` (null when nothing reached it).
- second order (float64 only, ops with `gradgrad`): g = grad(outputs, leaves,
  grad_outputs, create_graph=True); s = sum_i sum_k g_i[k] * v_i[k] with
  v[k] = 0.5 + (k % 4) / 4 (0.5, 0.75, 1, 1.25, ...) over each g_i; record
  grad(s, leaves, allow_unused=True); null (= zeros) when s does not require grad.
- float32 variant: every float64 tensor of the sample cast to float32 (same
  requires_grad); Python numbers and non-float tensors unchanged.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

import agrad

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
MANIFEST = FIXTURES / "manifest.json"
FORMAT_VERSION = 1

CONVENTIONS = {
    "grad_output": "go[k] = (-1)**k * (1 + (k % 3) / 4) over the output's elements in C order",
    "first_order": "fresh leaf copies of the sample tensors; backward(outputs, grad_outputs); leaf .grad",
    "second_order": "g = grad(outputs, leaves, grad_outputs, create_graph=True); "
                    "s = sum_i sum_k g_i[k] * v_i[k], v[k] = 0.5 + (k % 4) / 4; grad(s, leaves); float64 only; "
                    "null means zeros",
    "float32": "every float64 tensor of the sample cast to float32, same requires_grad",
}


def grad_output_values(n: int) -> np.ndarray:
    k = np.arange(n)
    return np.where(k % 2 == 0, 1.0, -1.0) * (1.0 + (k % 3) / 4.0)


def second_order_values(n: int) -> np.ndarray:
    k = np.arange(n)
    return 0.5 + (k % 4) / 4.0


def sample_keys(samples) -> list[str]:
    """A unique key per sample: its name, with `#i` added to repeated names."""
    seen: dict[str, int] = {}
    keys = []
    for s in samples:
        n = seen.get(s.name, 0)
        seen[s.name] = n + 1
        keys.append(s.name if n == 0 else f"{s.name}#{n}")
    return keys


def _describe(value, h) -> None:
    if isinstance(value, agrad.Tensor):
        arr = np.ascontiguousarray(np.asarray(value.detach()))
        h.update(f"T({value.dtype.name},{tuple(arr.shape)},{value.requires_grad})".encode())
        h.update(arr.tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}{len(value)}[".encode())
        for v in value:
            _describe(v, h)
        h.update(b"]")
    elif isinstance(value, agrad.dtypes.dtype):
        h.update(f"dtype({value.name})".encode())
    else:
        h.update(repr(value).encode())
    h.update(b";")


def fingerprint(sample) -> str:
    """sha256 of the sample's arguments (tensor values, shapes, dtypes, requires_grad, other args)."""
    h = hashlib.sha256()
    _describe(list(sample.args), h)
    for k in sorted(sample.kwargs):
        h.update(k.encode() + b"=")
        _describe(sample.kwargs[k], h)
    return h.hexdigest()[:16]


def tensors_in(value):
    """The agrad tensors in an argument, depth first (tensor lists as in cat/stack)."""
    if isinstance(value, agrad.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)


def sample_leaves(sample) -> list:
    """The sample's tensors that require grad, in argument order (a repeated tensor appears again):
    the order of the recorded gradients."""
    items = list(sample.args) + [sample.kwargs[k] for k in sorted(sample.kwargs)]
    return [t for a in items for t in tensors_in(a) if t.requires_grad]


def load_manifest() -> dict | None:
    if not MANIFEST.exists():
        return None
    return json.loads(MANIFEST.read_text())


def op_file(op: str) -> Path:
    return FIXTURES / (re.sub(r"[^A-Za-z0-9_.-]", "_", op) + ".json")


def load_op(op: str) -> dict:
    return json.loads(op_file(op).read_text())
