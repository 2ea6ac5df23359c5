"""A graph a million Nodes deep: forward and backward time, and peak memory.

    python bench/bench_deep_chain.py            # 1,000,000 x (y = y + 1.0)
    python bench/bench_deep_chain.py --depth 100000
"""
from __future__ import annotations

import argparse
import resource
import time

import agrad


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=1_000_000)
    depth = parser.parse_args().depth
    x = agrad.tensor(0.0, dtype=agrad.float64, requires_grad=True)
    y = x
    t0 = time.perf_counter()
    for _ in range(depth):
        y = y + 1.0
    t1 = time.perf_counter()
    y.backward()
    t2 = time.perf_counter()
    assert x.grad.item() == 1.0 and y.item() == depth
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{depth:,} nodes deep: forward {t1 - t0:.1f} s ({(t1 - t0) / depth * 1e6:.1f} us/op), "
          f"backward {t2 - t1:.1f} s ({(t2 - t1) / depth * 1e6:.1f} us/node), peak RSS {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
