"""Where W1's per-op time goes, through the library: forward and backward separately, the
cyclic GC's share, the objects a recorded op keeps alive (what the GC visits; PyTorch keeps 0.33
per op: the one Python tensor a step leaves), and a cProfile of each half (the functions with the
most time of their own).

    python bench/profile_w1.py            # the split, then the top 12 of each profile
    python bench/profile_w1.py --top 25

Figures are per op (W1 has 3,000 ops), fastest of `--passes` passes; the machine is shared,
so compare them with each other, not across runs.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads as W  # noqa: E402

import agrad  # noqa: E402


def _pass(data):
    """(forward seconds, backward seconds) of one W1 pass."""
    x = agrad.tensor(data[0], requires_grad=True)
    w = agrad.tensor(data[1], requires_grad=True)
    y = agrad.tensor(data[2])
    t0 = time.perf_counter()
    for _ in range(W.W1_STEPS):
        y = agrad.tanh(y * w + x)
    t1 = time.perf_counter()
    y.sum().backward()
    return t1 - t0, time.perf_counter() - t1


def _no_grad_forward(data):
    with agrad.no_grad():
        x, w, y = (agrad.tensor(a) for a in data)
        t0 = time.perf_counter()
        for _ in range(W.W1_STEPS):
            y = agrad.tanh(y * w + x)
        return time.perf_counter() - t0


def _kept_alive(data) -> tuple[float, list]:
    """Objects the cyclic GC tracks that a recorded W1 op keeps alive (the graph, before backward),
    and the commonest kinds."""
    x = agrad.tensor(data[0], requires_grad=True)
    w = agrad.tensor(data[1], requires_grad=True)
    y = agrad.tensor(data[2])
    gc.collect()
    gc.disable()
    try:
        before = collections.Counter(type(o).__name__ for o in gc.get_objects())
        for _ in range(W.W1_STEPS):
            y = agrad.tanh(y * w + x)
        kept = collections.Counter(type(o).__name__ for o in gc.get_objects()) - before
    finally:
        gc.enable()
    return sum(kept.values()) / (3 * W.W1_STEPS), kept.most_common(6)


def _best(fn, passes):
    runs = [fn() for _ in range(passes)]
    return tuple(min(r[i] for r in runs) for i in range(len(runs[0]))) if isinstance(runs[0], tuple) else min(runs)


def _profile(stmt, env, top) -> str:
    profiler = cProfile.Profile()
    profiler.runctx(stmt, env, env)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    return "\n".join(lines[start:start + top + 1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--passes", type=int, default=15)
    p.add_argument("--top", type=int, default=12)
    opts = p.parse_args(argv)
    data = W.w1_data()
    ops = 3 * W.W1_STEPS
    _pass(data)                                   # warm-up: op library, generated kernels
    fwd, bwd = _best(lambda: _pass(data), opts.passes)
    gc.disable()
    try:
        fwd_nogc, bwd_nogc = _best(lambda: _pass(data), opts.passes)
    finally:
        gc.enable()
    plain = _best(lambda: _no_grad_forward(data), opts.passes)
    us = 1e6 / ops
    print(f"W1 per op (µs), best of {opts.passes} passes:")
    print(f"  forward  {fwd * us:6.2f}   (GC off {fwd_nogc * us:5.2f}; the same ops under no_grad {plain * us:5.2f})")
    print(f"  backward {bwd * us:6.2f}   (GC off {bwd_nogc * us:5.2f})")
    print(f"  total    {(fwd + bwd) * us:6.2f}")
    per_op, kinds = _kept_alive(data)
    print(f"objects kept alive per op: {per_op:.2f} (" + ", ".join(f"{k} {n / (3 * W.W1_STEPS):.2f}"
                                                            for k, n in kinds) + ")")
    x = agrad.tensor(data[0], requires_grad=True)
    w = agrad.tensor(data[1], requires_grad=True)
    env = {"agrad": agrad, "x": x, "w": w, "y": agrad.tensor(data[2]), "steps": W.W1_STEPS}
    print("\nforward, by own time:")
    print(_profile("for _ in range(steps):\n    y = agrad.tanh(y * w + x)\nloss = y.sum()", env, opts.top))
    print("\nbackward, by own time:")
    print(_profile("loss.backward()", env, opts.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
