"""W1 and W3 through the eager library beside PyTorch eager, frameworks alternated in ONE process.

`run.py` runs every cell in its own process; here agrad and PyTorch passes alternate in one
interpreter, so both see the same machine moment by moment (this one is shared and noisy) and
the ratio is what the engine costs against PyTorch's, per op, forward and backward.

    python bench/bench_eager.py --torch-path /work/torchvenv/lib/python3.11/site-packages
    python bench/bench_eager.py --workloads W1 --rounds 15 --torch-path ...

`--torch-path` is appended to sys.path (after this interpreter's own packages) when `import torch`
fails here; the interpreter must be the same Python version as that site-packages'. PyTorch is
never an agrad dependency: without it only agrad and the NumPy floor are timed.
Each round times one pass of each framework (after one warm-up pass each); the table gives the
median over rounds and the ratio of the medians, and the median of the per-round ratios, for the
wall-clock time and for this thread's CPU time (`time.thread_time`: what other processes on a
loaded machine take from us is not in it; PyTorch runs a CPU-only backward on the calling thread,
and its intra-op threads are set to one).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads as W  # noqa: E402

_CASES = {
    "W1": (W.w1_data, 3 * W.W1_STEPS, {"numpy": W.numpy_w1, "agrad": W.agrad_w1, "torch": W.torch_w1}),
    "W3": (W.w3_data, 3 * W.W3_TERMS - 1, {"numpy": W.numpy_w3, "agrad": W.agrad_w3, "torch": W.torch_w3}),
}


def _torch_available(path: str | None) -> bool:
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        if path is None:
            return False
    sys.path.append(path)
    try:
        import torch  # noqa: F401,F811
        return True
    except ImportError as e:
        print(f"note: PyTorch not importable ({e}); timing agrad and NumPy only", file=sys.stderr)
        return False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", nargs="+", default=["W1", "W3"], choices=sorted(_CASES))
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--torch-path", default=None, help="a site-packages holding torch (appended to sys.path)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch's intra-op threads (default 1)")
    opts = p.parse_args(argv)
    has_torch = _torch_available(opts.torch_path)
    if has_torch:
        import torch
        torch.set_num_threads(opts.threads)
    import agrad
    print(f"agrad from {Path(agrad.__file__).parent}" + (f", torch {torch.__version__}" if has_torch else ""))
    print(f"{'workload':<9}{'framework':<10}{'wall µs/op':>11}{'/torch':>8}{'per-round /torch':>20}"
          f"{'cpu µs/op':>11}{'/torch':>8}{'per-round /torch':>20}")
    for workload in opts.workloads:
        make_data, n_ops, fns = _CASES[workload]
        frameworks = [f for f in ("numpy", "agrad", "torch") if f != "torch" or has_torch]
        data = make_data()
        wall = {f: [] for f in frameworks}
        cpu = {f: [] for f in frameworks}
        for f in frameworks:
            fns[f](*data)                     # warm-up: generated kernels, caches
        for _ in range(opts.rounds):
            for f in frameworks:
                t0, c0 = time.perf_counter(), time.thread_time()
                fns[f](*data)
                cpu[f].append((time.thread_time() - c0) / n_ops * 1e6)
                wall[f].append((time.perf_counter() - t0) / n_ops * 1e6)
        for f in frameworks:
            cells = []
            for times in (wall, cpu):
                med = statistics.median(times[f])
                ratio = per_round = ""
                if has_torch and f != "torch":
                    ratio = f"{med / statistics.median(times['torch']):.2f}x"
                    rs = sorted(a / b for a, b in zip(times[f], times["torch"]))
                    per_round = f"{statistics.median(rs):.2f}x [{rs[0]:.2f}-{rs[-1]:.2f}]"
                cells.append(f"{med:>11.2f}{ratio:>8}{per_round:>20}")
            print(f"{workload:<9}{f:<10}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
