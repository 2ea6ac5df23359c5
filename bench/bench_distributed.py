"""`--workers N` on dask.distributed, measured side by side in one run: the speed-up of
`agrad check` (finite differences split across workers) and `agrad train` steps/s
(data-parallel replicas), for 1 and 2 worker processes on a LocalCluster on 127.0.0.1.

    python bench/bench_distributed.py                   # both, defaults below
    python bench/bench_distributed.py --check-rows 200 --train-steps 40 --rounds 2

check: a float64 graph with one input of ROWS x 100 elements that requires grad
(>= 20,000 at the default 200 rows: 40,001 forward passes), `sum(tanh(x @ W))`.
The one-process figure is `Graph.check`'s own loop (agrad.testing.gradcheck), without
dask. Each configuration runs --rounds times, alternating; the best round is kept.

train: an MLP 256-512-512-10 (relu, cross-entropy), float64, batch 256 of 4,096 rows,
Adam: a step costs >= 50 ms on one core. Reported: steps/s, and per step the wall time
beyond the slowest replica's own work (the cost of data parallelism: sending the
gradients to the client, summing them, sending the sum back).

Workers run one thread each (dask sets OMP_NUM_THREADS=1); the one-process figures are
taken with the same single BLAS thread (set before NumPy loads) so the ratios compare
like with like.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CHECK_GRAPH = """\
dtype: float64
inputs:
  x: {{shape: [{rows}, 100], init: normal, seed: 1, requires_grad: true}}
  W: {{shape: [100, 10], init: normal, seed: 2}}
nodes:
  loss: sum(tanh(x @ W))
backward: loss
"""

TRAIN_GRAPH = """\
dtype: float64
seed: 0
inputs:
  x: {shape: [256, 256], init: normal}
  y: {shape: [256], init: zeros, dtype: int64}
  W1: {shape: [256, 512], init: normal, std: 0.06, requires_grad: true}
  b1: {shape: [512], init: zeros, requires_grad: true}
  W2: {shape: [512, 512], init: normal, std: 0.06, requires_grad: true}
  b2: {shape: [512], init: zeros, requires_grad: true}
  W3: {shape: [512, 10], init: normal, std: 0.04, requires_grad: true}
nodes:
  h1: relu(x @ W1 + b1)
  h2: relu(h1 @ W2 + b2)
  logits: h2 @ W3
  loss: cross_entropy(logits, y)
backward: loss
train:
  loss: loss
  optimizer: {type: adam, lr: 0.001}
  steps: 1000
  data: {source: {file: data.npz}, batch_size: 256, shuffle: true}
"""


def process_cpu_seconds() -> float:
    """User + system CPU time of this process (run on each worker through `client.run`)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def busiest_worker_cpu(session, before: dict) -> float:
    after = session.client.run(process_cpu_seconds)
    return max(after[w] - before.get(w, 0.0) for w in after)


def bench_check(folder: Path, rows: int, rounds: int) -> None:
    import agrad
    from agrad.graphs.distributed.check import check_on_cluster
    from agrad.graphs.distributed.cluster import ClusterOptions, open_cluster
    from agrad.graphs.distributed.graph_source import GraphSource
    from agrad.graphs.gradcheck import check_result, check_setup

    path = folder / "check.yaml"
    path.write_text(CHECK_GRAPH.format(rows=rows))
    source = GraphSource.read(str(path))
    graph = source.load()
    elements = rows * 100
    best: dict[str, float] = {}
    busiest: dict[str, float] = {}       # CPU seconds of the busiest process (one worker, or the one process)
    results = {}
    sessions = {}
    try:
        for n in (1, 2):
            sessions[n] = open_cluster(ClusterOptions(workers=n))
        live = {n: cm.__enter__() for n, cm in sessions.items()}
        warm = GraphSource.read(str(folder / "warm.yaml"), CHECK_GRAPH.format(rows=2))
        for session in live.values():            # agrad imported and a graph built on every worker first
            check_on_cluster(session, warm)
        for _ in range(rounds):
            start, cpu = time.perf_counter(), process_cpu_seconds()
            setup = check_setup(graph._checked, graph.file, max_passes=math.inf)
            reports = agrad.testing.gradcheck_report(setup.fn, setup.inputs)
            results["one process"] = check_result(graph._checked, graph.file, setup, reports)
            if time.perf_counter() - start < best.get("one process", math.inf):
                best["one process"] = time.perf_counter() - start
                busiest["one process"] = process_cpu_seconds() - cpu
            for n, session in live.items():
                name = f"{n} worker(s)"
                start, cpu = time.perf_counter(), session.client.run(process_cpu_seconds)
                results[name] = check_on_cluster(session, source, graph, max_passes=math.inf)
                if time.perf_counter() - start < best.get(name, math.inf):
                    best[name] = time.perf_counter() - start
                    busiest[name] = busiest_worker_cpu(session, cpu)
    finally:
        for cm in sessions.values():
            cm.__exit__(None, None, None)
    same = all(r == results["one process"] for r in results.values())
    print(f"check: {elements:,} input elements, {2 * elements + 1:,} passes; best of {rounds}; "
          f"results identical: {same}")
    for name, seconds in best.items():
        print(f"  {name:<13} {seconds:8.2f} s   {2 * elements / seconds:8.0f} passes/s   "
              f"busiest process's CPU {busiest[name]:7.2f} s")
    print(f"  speed-up 2 workers / 1 worker: {best['1 worker(s)'] / best['2 worker(s)']:.2f}x (wall)  "
          f"{busiest['1 worker(s)'] / busiest['2 worker(s)']:.2f}x (busiest worker's CPU: the wall-time "
          f"speed-up on two idle cores)   2 workers / one process: {best['one process'] / best['2 worker(s)']:.2f}x")


def bench_train(folder: Path, steps: int, rounds: int) -> None:
    from agrad import graphs
    from agrad.graphs.distributed.cluster import ClusterOptions, open_cluster
    from agrad.graphs.distributed.graph_source import GraphSource
    from agrad.graphs.distributed.training import train_on_cluster
    from agrad.graphs.train_section import train_spec
    from agrad.graphs.training import Trainer, run_trainer

    rng = np.random.default_rng(0)
    np.savez(folder / "data.npz", x=rng.standard_normal((4096, 256)), y=rng.integers(0, 10, 4096))
    path = folder / "train.yaml"
    path.write_text(TRAIN_GRAPH)
    source = GraphSource.read(str(path))

    def trainer():
        graph = graphs.load(str(path))
        spec = train_spec(graph)
        options = dict(steps=spec.steps, **{k: v for k, v in spec.options().items() if k != "eval_every"})
        return Trainer(graph, **options), options

    rates: dict[str, float] = {}
    overheads: dict[str, float] = {}
    sessions = {n: open_cluster(ClusterOptions(workers=n)) for n in (1, 2)}
    try:
        live = {n: cm.__enter__() for n, cm in sessions.items()}
        for session in live.values():            # agrad imported and the data read on every worker first
            t, options = trainer()
            train_on_cluster(session, source, t, options, steps=1000, stop_after=1)
        for _ in range(rounds):
            t, _options = trainer()
            run = run_trainer(t, steps=1000, stop_after=steps)
            rates["one process"] = max(rates.get("one process", 0), run.session_steps / run.seconds)
            for n, session in live.items():
                t, options = trainer()
                timing: dict = {}
                train_on_cluster(session, source, t, options, steps=1000, stop_after=steps, timing=timing)
                rate = timing["rounds"] / timing["seconds"]
                name = f"{n} worker(s)"
                if rate > rates.get(name, 0):
                    rates[name] = rate
                    overheads[name] = (timing["seconds"] - timing["busiest_worker_seconds"]) / timing["rounds"]
    finally:
        for cm in sessions.values():
            cm.__exit__(None, None, None)
    params = 256 * 512 + 512 + 512 * 512 + 512 + 512 * 10
    print(f"train: MLP 256-512-512-10, float64, batch 256, {params:,} parameters "
          f"({params * 8 / 1e6:.1f} MB of gradients per replica per step); {steps} steps, best of {rounds}")
    for name, rate in rates.items():
        extra = f"   beyond the slowest replica: {overheads[name] * 1e3:6.1f} ms/step" if name in overheads else ""
        print(f"  {name:<13} {rate:7.2f} steps/s  ({1e3 / rate:6.1f} ms/step){extra}")
    print(f"  speed-up 2 workers / 1 worker: {rates['2 worker(s)'] / rates['1 worker(s)']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-rows", type=int, default=200, help="rows of the checked input (x 100 elements)")
    parser.add_argument("--train-steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=("check", "train"))
    args = parser.parse_args()
    np.seterr(all="ignore")
    with tempfile.TemporaryDirectory() as folder:
        if args.only != "train":
            bench_check(Path(folder), args.check_rows, args.rounds)
        if args.only != "check":
            bench_train(Path(folder), args.train_steps, args.rounds)


if __name__ == "__main__":
    main()
