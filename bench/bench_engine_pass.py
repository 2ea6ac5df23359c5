"""Forward of an engine pass of a graph file against the same forward through the library.

Issue #21's row "graph file, forward of an engine pass": W1 (a chain of small ops) and W3
(a fan-in) written as graph files, run through the engine (`run(replay=False)`, no replay),
their forward time per op beside the library's forward of the same ops (grad mode: the
backward graph is recorded in both); and as `agrad run` runs it (`keep_values=False`). Alternated in one process, medians of the rounds.

    python bench/bench_engine_pass.py                 # 7 rounds
    python bench/bench_engine_pass.py --rounds 11
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import workloads as w


def library_forward(workload: str):
    """The library's forward of the workload, in seconds (the graph it records freed after)."""
    import agrad
    if workload == "W1":
        x0, w0, y0 = w.w1_data()
        x, wt, y = agrad.tensor(x0, requires_grad=True), agrad.tensor(w0, requires_grad=True), agrad.tensor(y0)
        t0 = time.perf_counter()
        for _ in range(w.W1_STEPS):
            y = agrad.tanh(y * wt + x)
        return time.perf_counter() - t0
    x0, c = w.w3_data()
    x = agrad.tensor(x0, requires_grad=True)
    cs = c.tolist()
    t0 = time.perf_counter()
    total = agrad.sin(x * cs[0])
    for ci in cs[1:]:
        total = total + agrad.sin(x * ci)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    from agrad import graphs
    ops = {"W1": 3 * w.W1_STEPS, "W3": 3 * w.W3_TERMS - 1}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "W1").mkdir()
        (Path(tmp) / "W3").mkdir()       # each file's arrays in its own folder (both have an x.npy)
        files = {"W1": w.w1_file(Path(tmp) / "W1"), "W3": w.w3_file(Path(tmp) / "W3")}
        loaded = {name: graphs.load(path) for name, path in files.items()}
        for name in ops:                       # warm-up: first calls of every op
            library_forward(name)
            loaded[name].run(replay=False)
        kinds = ("library", "engine pass", "as agrad run")
        times = {(name, kind): [] for name in ops for kind in kinds}
        for _ in range(rounds):
            for name in ops:
                times[name, "library"].append(library_forward(name))
                times[name, "engine pass"].append(loaded[name].run(replay=False).timings_ms["forward"] / 1e3)
                # as `agrad run` runs it: each value let go once its last reader has run
                times[name, "as agrad run"].append(
                    loaded[name].run(replay=False, keep_values=False).timings_ms["forward"] / 1e3)
    for name, n in ops.items():
        lib, eng, cli = (statistics.median(times[name, kind]) / n * 1e6 for kind in kinds)
        print(f"{name} forward, µs/op (median of {rounds}): library {lib:.2f}, graph file engine pass {eng:.2f} "
              f"({eng / lib:.2f}x the library), values let go as agrad run does {cli:.2f} ({cli / lib:.2f}x)")


if __name__ == "__main__":
    main()
