"""Run the benchmark workloads W1–W5 and print one table of medians and ratios.

Every (workload, framework) cell runs in a fresh subprocess (`bench/workloads.py`);
rounds are interleaved — W1 numpy, W1 agrad, W1 torch, W2 numpy, … then again — so
every framework sees the same machine (this kind of machine is shared and noisy).
The table gives, per workload, the median over rounds of each process's median
pass, the ratios agrad/floor and agrad/PyTorch from the same run, and peak memory
above the process's baseline.

    python bench/run.py                          # start-up and W1-W4, 5 rounds
    python bench/run.py --workloads startup --rounds 9
    python bench/run.py --w5                     # also validate/inspect/run of 10k and 100k-node files
    python bench/run.py --workloads --w5-nodes 100000 1000000   # W5 alone, against PyYAML reading each file
                                                                # (and `run` against PyTorch computing the chain)
    python bench/run.py --workloads TRAIN CHECK  # train steps and `check`, replayed vs the engine (and torch)
    python bench/run.py --torch-python /tmp/torchvenv/bin/python --hips-python /tmp/torchvenv/bin/python

The start-up row is the CPU time (user + system) of a cold `agrad run graphs/examples/seed.yaml`
(the console script beside this interpreter, output discarded) against its floor, `python -c
"import numpy"`: each run `--startup-reps` times a round (rounds interleaved, as every
workload's), each time in a fresh process, with the bytecode caches written (PYTHONDONTWRITEBYTECODE is dropped for them, and each is run once
untimed first, as on a machine where `pip install` compiled them); "peak MB" is its whole
resident size.

PyTorch and HIPS autograd are optional: each is used when `import torch` works in
`--torch-python`, `import autograd` in `--hips-python` (default: this interpreter);
neither is ever a dependency of agrad.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "workloads.py"
sys.path.insert(0, str(HERE))
from workloads import FRAMEWORKS  # noqa: E402 - bench/ is no package

LIBRARY_FRAMEWORKS = ("numpy", "agrad", "agrad-file", "agrad-engine", "torch", "hips")     # W1-W4's
# workload -> (unit, scale, whether a pass's time is divided by the ops it counts); W5 cells: seconds a command
# W1/W3 (one thread's small ops) in this process's CPU time: on a shared machine the wall clock of a whole
# process can double with its neighbours' load; the rest in wall time (BLAS may use every core, and a
# spinning BLAS thread's CPU time is no work done)
CPU_TIMED = {"W1", "W3"}
UNITS = {"W1": ("µs/op", 1e6, True), "W3": ("µs/op", 1e6, True), "W2": ("ms", 1e3, True), "W4": ("ms", 1e3, True),
         "startup": ("s CPU", 1.0, False), "TRAIN": ("ms/st", 1e3, True), "CHECK": ("ms", 1e3, True)}
_W5_UNIT = ("s CPU", 1.0, False)         # W5: CPU seconds of the whole command


OPTIONAL = {"torch": ("torch", "PyTorch"), "hips": ("autograd", "HIPS autograd")}   # framework: (module, name)


def importable(python: str, module: str) -> bool:
    try:
        probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    except OSError:                     # no such interpreter
        return False
    return probe.returncode == 0


def run_cell(python: str, workload: str, framework: str, reps: int) -> dict:
    out = subprocess.run([python, str(WORKER), workload, framework, "--reps", str(reps)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


SEED = HERE.parent / "graphs" / "examples" / "seed.yaml"


def startup_commands() -> dict:
    """framework -> the command whose start-up is measured: the floor imports NumPy, agrad runs seed.yaml."""
    script = Path(sys.executable).with_name("agrad")
    agrad = [str(script)] if script.exists() else [sys.executable, "-m", "agrad.cli"]
    return {"numpy": [sys.executable, "-c", "import numpy"], "agrad": agrad + ["run", str(SEED)]}


def _cpu_seconds(command, env) -> tuple[float, float]:
    """(user + system CPU seconds, peak resident MB) of one run of `command` in a fresh process."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if process.returncode != 0:
        raise RuntimeError(stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {process.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def run_startup_cell(framework: str, reps: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = startup_commands()[framework]
    try:
        times, peaks = [], []
        for _ in range(reps):
            cpu, peak = _cpu_seconds(command, env)
            times.append(cpu)
            peaks.append(peak)
    except RuntimeError as exc:
        return {"error": str(exc)}
    return {"times": times, "ops": 1, "peak_above_baseline_mb": max(peaks)}


def warm_startup_caches() -> None:
    """One untimed run of each start-up command: the bytecode caches exist before any is timed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for command in startup_commands().values():
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def cells(workloads, frameworks, w5_nodes):
    for w in workloads:
        for f in (("numpy", "agrad") if w == "startup" else frameworks):
            if w == "startup" or f in FRAMEWORKS.get(w, LIBRARY_FRAMEWORKS):
                yield w, f
    for nodes in w5_nodes:
        yield f"W5-load-{nodes}", "pyyaml"          # the anchor of the three rows below
        for phase in ("validate", "inspect", "run"):
            yield f"W5-{phase}-{nodes}", "agrad-cli"
        if "torch" in frameworks:
            yield f"W5-run-{nodes}", "torch"        # the run row's other anchor: the same chain in PyTorch


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", nargs="*", default=["startup", "W1", "W3", "W2", "W4", "TRAIN", "CHECK"])
    p.add_argument("--frameworks", nargs="+",
                   default=["numpy", "numpy-file", "agrad", "agrad-file", "agrad-engine", "torch", "hips"])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="timed passes per process (after one warm-up)")
    p.add_argument("--startup-reps", type=int, default=3,
                   help="start-up: processes per framework and round (alternated), the median kept")
    p.add_argument("--w5", action="store_true", help="also W5: the CLI on generated 10k/100k-node files")
    p.add_argument("--w5-nodes", type=int, nargs="+", metavar="N",
                   help="W5 on chains of these many nodes instead (e.g. 100000 1000000)")
    p.add_argument("--torch-python", default=sys.executable)
    p.add_argument("--hips-python", default=sys.executable,
                   help="interpreter where `import autograd` (HIPS autograd) works")
    p.add_argument("--json", action="store_true", help="print the raw results as JSON")
    opts = p.parse_args(argv)

    frameworks = list(opts.frameworks)
    pythons = {"torch": opts.torch_python, "hips": opts.hips_python}
    for framework, (module, name) in OPTIONAL.items():
        if framework in frameworks and not importable(pythons[framework], module):
            print(f"note: {name} is not importable in {pythons[framework]}; leaving it out", file=sys.stderr)
            frameworks.remove(framework)
    w5_nodes = tuple(opts.w5_nodes or ((10_000, 100_000) if opts.w5 else ()))
    results: dict = {}
    if "startup" in opts.workloads:
        warm_startup_caches()
    for r in range(opts.rounds):
        for workload, framework in cells(opts.workloads, frameworks, w5_nodes):
            reps = 1 if workload.startswith("W5-") else opts.reps
            python = pythons.get(framework, sys.executable)
            if workload == "startup":
                cell = run_startup_cell(framework, opts.startup_reps)
            else:
                cell = run_cell(python, workload, framework, reps)
            results.setdefault((workload, framework), []).append(cell)
        print(f"round {r + 1}/{opts.rounds} done", file=sys.stderr)

    if opts.json:
        print(json.dumps({f"{w}/{f}": v for (w, f), v in results.items()}, indent=1))
        return 0
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{opts.rounds} rounds x {opts.reps} passes, median of per-process medians; "
          f"{', '.join(sorted(CPU_TIMED))} in CPU time, W2/W4/TRAIN/CHECK in wall time")
    header = f"{'workload':<22}{'framework':<13}{'median':>14}{'peak MB':>10}{'/floor':>9}{'/torch':>9}{'/engine':>9}"
    print(header)
    print("-" * len(header))
    for (workload, framework), runs in results.items():
        errors = [c["error"] for c in runs if "error" in c]
        if errors:
            print(f"{workload:<22}{framework:<13}  failed: {errors[0]}")
            continue
        unit, scale, per_op = UNITS.get(workload, _W5_UNIT)

        def per(c):
            times = c["cpu_times" if workload in CPU_TIMED else "times"]
            return statistics.median(times) / (c["ops"] if per_op else 1)
        med = statistics.median(per(c) for c in runs) * scale
        peak = statistics.median(c["peak_above_baseline_mb"] for c in runs)

        def ratio(other):
            key = (workload, other)
            if workload.startswith("W5-") and other == "numpy":     # W5's floor: PyYAML reading the file
                key = (f"W5-load-{workload.rsplit('-', 1)[1]}", "pyyaml")
            ref = results.get(key)
            if key == (workload, framework):
                return ""
            if not ref or any("error" in c for c in ref):
                return ""
            ref_med = statistics.median(per(c) for c in ref) * scale
            return f"{med / ref_med:.2f}x"
        print(f"{workload:<22}{framework:<13}{med:>9.2f} {unit:<5}{peak:>9.0f}{ratio('numpy'):>9}{ratio('torch'):>9}"
              f"{ratio('agrad-engine'):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
