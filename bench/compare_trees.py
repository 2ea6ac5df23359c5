"""Two checkouts of agrad side by side: the same workloads (bench/workloads.py) run in fresh
processes, alternating between the trees every round, so that both see the same machine
(this kind of machine is shared and noisy). Prints, per workload and framework, the median
over rounds of each process's median pass for each tree, and their ratio.

    python bench/compare_trees.py BEFORE_DIR AFTER_DIR                 # W1-W4, agrad and agrad-file
    python bench/compare_trees.py /tmp/base . --workloads W1 W3 --rounds 7

Each tree runs with its own interpreter, `TREE/.venv/bin/python` (an editable install of that
tree), and its own bench/workloads.py.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

UNITS = {"W1": ("µs/op", 1e6, True), "W3": ("µs/op", 1e6, True), "W2": ("ms", 1e3, False),
         "W4": ("ms", 1e3, False)}


def one_process(tree: Path, workload: str, framework: str, reps: int) -> float:
    python = tree / ".venv" / "bin" / "python"
    done = subprocess.run([str(python), str(tree / "bench" / "workloads.py"), workload, framework, "--reps", str(reps)],
                          capture_output=True, text=True, timeout=1800, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    unit, scale, per_op = UNITS[workload]
    return statistics.median(result["times"]) * scale / (result["ops"] if per_op else 1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--workloads", nargs="+", default=["W1", "W3", "W2", "W4"])
    p.add_argument("--frameworks", nargs="+", default=["agrad", "agrad-file"])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5)
    opts = p.parse_args(argv)
    trees = {"before": opts.before.resolve(), "after": opts.after.resolve()}
    cells: dict = {}
    for _ in range(opts.rounds):
        for workload in opts.workloads:
            for framework in opts.frameworks:
                for name, tree in trees.items():
                    cells.setdefault((workload, framework, name), []).append(
                        one_process(tree, workload, framework, opts.reps))
    print(f"{'workload':<9}{'framework':<12}{'before':>12}{'after':>12}{'after/before':>14}")
    for workload in opts.workloads:
        unit = UNITS[workload][0]
        for framework in opts.frameworks:
            before = statistics.median(cells[(workload, framework, "before")])
            after = statistics.median(cells[(workload, framework, "after")])
            print(f"{workload:<9}{framework:<12}{before:>9.2f} {unit:<3}{after:>8.2f} {unit:<3}{after / before:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
