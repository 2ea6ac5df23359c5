"""Per-op cost of agrad's engine against hand-written NumPy, measured in one run.

The chain is 1,000 repetitions of `y = tanh(y * w + x)` (3,000 ops), forward and
backward (gradients of sum(y) w.r.t. x and w). The NumPy version computes the same
values and gradients by hand, with no autograd: the ratio is what the engine costs.

    python bench/bench_chain.py                 # x, w of shape [16]
    python bench/bench_chain.py --size 16 4096 65536
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from workloads import W1_STEPS, agrad_w1, numpy_w1

STEPS = W1_STEPS
OPS_PER_STEP = 3


def agrad_chain(x0, w0, y0):
    """W1 through the library, as NumPy arrays to compare with the floor's."""
    return tuple(t.detach().numpy() for t in agrad_w1(x0, w0, y0))


numpy_chain = numpy_w1       # hand-written forward and backward: (y, grad x, grad w)


def measure_interleaved(a, b, args, repeat):
    """Time `a` and `b` alternately, so both see the same machine (this one is shared and noisy)."""
    times_a, times_b = [], []
    for _ in range(repeat):
        for fn, times in ((a, times_a), (b, times_b)):
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
    return (min(times_a), statistics.median(times_a)), (min(times_b), statistics.median(times_b))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs="+", default=[16])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n_ops = STEPS * OPS_PER_STEP
    print(f"chain of {STEPS} x tanh(y * w + x) = {n_ops} ops, forward + backward, float32; "
          f"min (median) of {args.repeat} runs")
    print(f"{'size':>8} {'agrad us/op':>14} {'numpy us/op':>14} {'ratio':>8}")
    for size in args.size:
        x, w, y0 = (rng.uniform(-0.5, 0.5, size).astype(np.float32) for _ in range(3))
        ours, theirs = agrad_chain(x, w, y0), numpy_chain(x, w, y0)
        for a, b in zip(ours, theirs):          # same numbers, or the comparison means nothing
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        (a_min, a_med), (n_min, n_med) = measure_interleaved(agrad_chain, numpy_chain, (x, w, y0), args.repeat)
        print(f"{size:>8} {a_min / n_ops * 1e6:>7.2f} ({a_med / n_ops * 1e6:>5.2f})"
              f" {n_min / n_ops * 1e6:>7.2f} ({n_med / n_ops * 1e6:>5.2f}) {a_min / n_min:>7.1f}x")


if __name__ == "__main__":
    main()
