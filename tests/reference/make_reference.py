"""Record PyTorch's values for every registered agrad op as test fixtures.

    /tmp/torchvenv/bin/python tests/reference/make_reference.py          # all ops
    /tmp/torchvenv/bin/python tests/reference/make_reference.py add mul  # only these (others kept)

(the venv: `python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch==2.13.0 numpy
&& /tmp/torchvenv/bin/pip install -e .`)

For every op in `agrad.ops.registered()` with a `.torch` string and samples, each sample
is rebuilt by agrad, converted to torch (float64, same values, layout and requires_grad),
run forward and backward with the fixed grad_output of reference_common.py, and the
outputs (shape, dtype, values, grad_fn name), the leaves' gradients, the same for a
float32 variant and (ops with `gradgrad`) second-order values are written to
fixtures/<op>.json; fixtures/manifest.json holds the torch version, the conventions and
what was skipped and why. Deterministic: running it twice writes the same bytes.
tests/engine/test_reference.py compares agrad against these files without torch.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

import numpy as np
import torch

import agrad
import reference_common as rc

TORCH_DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
                "int32": torch.int32, "int64": torch.int64, "bool": torch.bool}


def _dtype_name(dt) -> str:
    return str(dt).removeprefix("torch.")


def _error(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {' | '.join(lines[:3])}"[:300]


# ---- agrad sample -> torch arguments ------------------------------------------------------

class Converter:
    """agrad values -> torch values; one torch leaf per distinct agrad tensor."""

    def __init__(self, cast_float32: bool):
        self.cast = cast_float32
        self.memo: dict[int, torch.Tensor] = {}
        self.leaves: list[torch.Tensor] = []      # tensors requiring grad, in first-seen order

    def __call__(self, value):
        if isinstance(value, agrad.Tensor):
            t = self.memo.get(id(value))
            if t is None:
                arr = np.asarray(value.detach())
                if self.cast and arr.dtype == np.float64:
                    arr = arr.astype(np.float32, order="K")
                else:
                    arr = np.array(arr, copy=True, order="K")
                t = torch.from_numpy(arr)
                if value.requires_grad:
                    t.requires_grad_(True)
                    self.leaves.append(t)
                self.memo[id(value)] = t
            return t
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        if isinstance(value, agrad.dtypes.dtype):
            return TORCH_DTYPES[value.name]
        if isinstance(value, agrad.device):
            return torch.device(str(value))
        if isinstance(value, agrad.memory_format):
            return getattr(torch, value.name)
        return value


def _outputs(out, sample) -> list:
    if sample.output_process_fn_grad is not None:     # a gauge-invariant part (svd's, eigh's signs)
        out = sample.output_process_fn_grad(out)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise TypeError(f"the torch expression returned a {type(o).__name__}, not a Tensor")
    return outs


def _record(t: torch.Tensor | None) -> dict | None:
    if t is None:
        return None
    t = t.detach()
    if t._is_zerotensor():      # PyTorch's efficient zeros (abs's double backward): no storage to read
        t = torch.zeros(t.shape, dtype=t.dtype)
    return {"shape": list(t.shape), "dtype": _dtype_name(t.dtype), "values": t.reshape(-1).tolist()}


def _grad_outputs(outs):
    diff = [o for o in outs if o.requires_grad]
    gos = [torch.from_numpy(rc.grad_output_values(o.numel())).to(o.dtype).reshape(o.shape) for o in diff]
    return diff, gos


def run_variant(fn, sample, cast_float32: bool) -> dict:
    conv = Converter(cast_float32)
    args = [conv(a) for a in sample.args]
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    try:
        outs = _outputs(fn(*args, **kwargs), sample)
    except Exception as exc:  # noqa: BLE001 — any failure of torch is recorded, not raised
        return {"skipped": f"forward: {_error(exc)}"}
    rec = {"outputs": [dict(_record(o), requires_grad=o.requires_grad,
                            grad_fn=type(o.grad_fn).__name__ if o.grad_fn is not None else None)
                       for o in outs],
           "grads": None}
    diff, gos = _grad_outputs(outs)
    if diff and conv.leaves:
        try:
            torch.autograd.backward(diff, gos)
        except Exception as exc:  # noqa: BLE001
            return {"skipped": f"backward: {_error(exc)}"}
        # one entry per tensor requiring grad in depth-first argument order (repeats share a leaf)
        rec["grads"] = [_record(conv.memo[id(t)].grad) for t in rc.sample_leaves(sample)]
    return rec


def run_second_order(fn, sample) -> dict | None:
    conv = Converter(False)
    args = [conv(a) for a in sample.args]
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    try:
        outs = _outputs(fn(*args, **kwargs), sample)
        diff, gos = _grad_outputs(outs)
        if not diff or not conv.leaves:
            return None
        leaves = [conv.memo[id(t)] for t in rc.sample_leaves(sample)]
        g = torch.autograd.grad(diff, leaves, gos, create_graph=True, allow_unused=True)
        s = None
        for gi in g:
            if gi is not None:
                v = torch.from_numpy(rc.second_order_values(gi.numel())).to(gi.dtype).reshape(gi.shape)
                term = (gi * v).sum()
                s = term if s is None else s + term
        if s is None or not s.requires_grad:
            return {"grads": [None] * len(leaves)}
        gg = torch.autograd.grad(s, leaves, allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        return {"skipped": _error(exc)}
    return {"grads": [_record(x) for x in gg]}


# ---- one op -------------------------------------------------------------------------------

def make_op(info) -> dict:
    entry = {"format": rc.FORMAT_VERSION, "op": info.name, "torch": info.torch, "torch_version": torch.__version__,
             "backward_names": info.backward_names, "skipped": None, "samples": []}
    try:
        fn = eval(info.torch, {"torch": torch, "F": torch.nn.functional})  # noqa: S307 — the registry's own string
        samples = info.samples(info.name)
    except Exception as exc:  # noqa: BLE001
        entry["skipped"] = _error(exc)
        return entry
    for key, sample in zip(rc.sample_keys(samples), samples):
        rec = {"name": key, "fingerprint": rc.fingerprint(sample)}
        rec["float64"] = run_variant(fn, sample, False)
        rec["float32"] = run_variant(fn, sample, True)
        rec["second_order"] = run_second_order(fn, sample) if info.gradgrad and info.differentiable else None
        entry["samples"].append(rec)
    return entry


def dump(entry: dict) -> str:
    """Stable JSON: header fields one per line, one line per sample (small diffs)."""
    head = {k: v for k, v in entry.items() if k != "samples"}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines.append('  "samples": [')
    samples = [json.dumps(s, separators=(",", ":")) for s in entry["samples"]]
    lines.append(",\n".join("    " + s for s in samples))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _problems(entry: dict) -> list[str]:
    out = []
    if entry["skipped"]:
        out.append(f"{entry['op']}: skipped ({entry['skipped']})")
    for s in entry["samples"]:
        for variant in ("float64", "float32"):
            if "skipped" in s[variant]:
                out.append(f"{entry['op']} [{s['name']}] {variant}: {s[variant]['skipped']}")
        so = s["second_order"]
        if so is not None and "skipped" in so:
            out.append(f"{entry['op']} [{s['name']}] second order: {so['skipped']}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops", nargs="*", help="regenerate only these ops (default: every registered op)")
    opts = parser.parse_args(argv)
    torch.set_grad_enabled(True)
    t0 = time.perf_counter()
    infos = {i.name: i for i in agrad.ops.registered() if i.torch and i.samples is not None}
    unknown = [o for o in opts.ops if o not in infos]
    if unknown:
        parser.error(f"not registered (or no .torch / samples): {', '.join(unknown)}")
    todo = opts.ops or sorted(infos)
    rc.FIXTURES.mkdir(parents=True, exist_ok=True)
    old = rc.load_manifest() or {}
    problems: list[str] = []
    counts = {}
    for name in todo:
        try:
            entry = make_op(infos[name])
        except Exception as exc:  # noqa: BLE001 — never crash on one op
            traceback.print_exc()
            entry = {"format": rc.FORMAT_VERSION, "op": name, "torch": infos[name].torch,
                     "torch_version": torch.__version__, "backward_names": infos[name].backward_names,
                     "skipped": f"generator: {_error(exc)}", "samples": []}
        text = dump(entry)
        path = rc.op_file(name)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        problems += _problems(entry)
        counts[name] = len(entry["samples"])
    ops = dict(old.get("ops", {})) if opts.ops else {}
    ops.update(counts)
    # full runs own the folder: fixtures of ops that are no longer registered are removed
    if not opts.ops:
        keep = {rc.op_file(n).name for n in ops} | {rc.MANIFEST.name}
        for p in rc.FIXTURES.glob("*.json"):
            if p.name not in keep:
                p.unlink()
                print(f"removed stale fixture {p.name}")
    ops = {k: ops[k] for k in sorted(ops) if k in infos}
    all_problems = problems if not opts.ops else \
        [p for p in old.get("skipped", []) if p.split(" ", 1)[0].rstrip(":") not in counts] + problems
    manifest = {"format": rc.FORMAT_VERSION, "torch_version": torch.__version__, "numpy_version": np.__version__,
                "conventions": rc.CONVENTIONS, "ops": ops, "skipped": sorted(all_problems),
                "regenerate": "/tmp/torchvenv/bin/python tests/reference/make_reference.py"}
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    if not rc.MANIFEST.exists() or rc.MANIFEST.read_text() != text:
        rc.MANIFEST.write_text(text)
    no_torch = sorted(i.name for i in agrad.ops.registered() if not i.torch)
    size = sum(p.stat().st_size for p in rc.FIXTURES.glob("*.json"))
    print(f"torch {torch.__version__}: {len(counts)} ops, {sum(counts.values())} samples written "
          f"({len(ops)} ops in fixtures, {size / 1024:.0f} KiB) in {time.perf_counter() - t0:.1f}s")
    if no_torch:
        print(f"no .torch string (not referenced): {', '.join(no_torch)}")
    if problems:
        print(f"{len(problems)} skipped:")
        for p in problems:
            print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
