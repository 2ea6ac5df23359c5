"""Steps per second of `graphs/examples/train_digits.yaml` in agrad, beside the same loop
written in PyTorch (CPU, the same thread count), measured in one run.

    python bench/bench_train.py --torch-python /work/torchvenv/bin/python --threads 1 --rounds 3
    python bench/bench_train.py --steps 300            # agrad only, where no interpreter has torch

Each cell runs in a fresh process (`--one FRAMEWORK` runs one and prints its steps/s), and
rounds alternate the frameworks so each sees the same machine: `agrad` (`Graph.train`, the
steps replayed after the second), `agrad-engine` (`Graph.train(replay=False)`: every step
through the engine) and `torch`. The table gives each one's median steps/s over rounds and
its ratio to PyTorch.

Every loop does the same work per step: gather a shuffled batch of 64 digits, forward the
MLP (64-64-10, relu, cross-entropy), backward, Adam (weight_decay 1e-4) and a cosine
learning rate. agrad's loop is `Graph.train` on the file itself.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[1] / "graphs" / "examples" / "train_digits.yaml"


def bench_agrad(steps: int, replay: bool = True) -> tuple[float, float]:
    from agrad import graphs
    from agrad.graphs.train_section import train_spec

    graph = graphs.load(EXAMPLE)
    spec = train_spec(graph)
    options = dict(spec.options(), eval_every=None)
    run = graph.train(steps=steps, replay=replay, **options)
    return run.session_steps / run.seconds, run.evals[-1].get("accuracy", float("nan"))


def bench_torch(steps: int, threads: int) -> tuple[float, float]:
    import math

    import torch

    torch.set_num_threads(threads)
    data = EXAMPLE.parent / "data"
    with np.load(data / "digits.npz") as d, np.load(data / "digits_test.npz") as t:
        x, y = torch.tensor(d["x"], dtype=torch.float32), torch.tensor(d["y"])
        tx, ty = torch.tensor(t["x"], dtype=torch.float32), torch.tensor(t["y"])
    rng = np.random.default_rng(0)
    W1 = torch.tensor(rng.normal(0, 0.18, (64, 64)), dtype=torch.float32, requires_grad=True)
    b1 = torch.zeros(64, requires_grad=True)
    W2 = torch.tensor(rng.normal(0, 0.125, (64, 10)), dtype=torch.float32, requires_grad=True)
    b2 = torch.zeros(10, requires_grad=True)
    params = [W1, b1, W2, b2]
    opt = torch.optim.Adam(params, lr=0.01, weight_decay=1e-4)
    warmup = 20
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda t: (t + 1) / warmup if t < warmup else (1 + math.cos(math.pi * min(t - warmup, steps - warmup)
                                                                          / (steps - warmup))) / 2)

    def forward(xb, yb):
        h = torch.relu((xb / 16.0) @ W1 + b1)
        logits = h @ W2 + b2
        return logits, torch.nn.functional.cross_entropy(logits, yb)

    per_epoch = len(x) // 64
    start = time.perf_counter()
    for k in range(steps):
        epoch, i = divmod(k, per_epoch)
        if i == 0:
            order = torch.from_numpy(np.random.default_rng([0, epoch]).permutation(len(x)))
        index = order[i * 64:(i + 1) * 64]
        opt.zero_grad()
        _, loss = forward(x[index], y[index])
        loss.backward()
        opt.step()
        sched.step()
    seconds = time.perf_counter() - start
    with torch.no_grad():
        logits, _ = forward(tx, ty)
    return steps / seconds, (logits.argmax(-1) == ty).float().mean().item()


FRAMEWORKS = ("agrad", "agrad-engine", "torch")


def one(framework: str, steps: int, threads: int) -> tuple[float, float]:
    if framework == "torch":
        return bench_torch(steps, threads)
    return bench_agrad(steps, replay=framework == "agrad")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=660, help="steps (default: the example's 30 epochs)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--torch-python", default=sys.executable, help="an interpreter where `import torch` works")
    parser.add_argument("--one", choices=FRAMEWORKS, help=argparse.SUPPRESS)    # a cell, in its own process
    args = parser.parse_args()
    if args.one:
        rate, accuracy = one(args.one, args.steps, args.threads)
        print(json.dumps({"rate": rate, "accuracy": accuracy}))
        return
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads),
               MKL_NUM_THREADS=str(args.threads))
    has_torch = subprocess.run([args.torch_python, "-c", "import torch"], capture_output=True).returncode == 0
    frameworks = FRAMEWORKS if has_torch else FRAMEWORKS[:2]
    if not has_torch:
        print(f"note: torch is not importable in {args.torch_python}; pass --torch-python", file=sys.stderr)
    results: dict = {f: [] for f in frameworks}
    for _ in range(args.rounds):
        for framework in frameworks:
            python = args.torch_python if framework == "torch" else sys.executable
            out = subprocess.run([python, __file__, "--one", framework, "--steps", str(args.steps),
                                  "--threads", str(args.threads)], capture_output=True, text=True, env=env, check=True)
            results[framework].append(json.loads(out.stdout.strip().splitlines()[-1]))
    torch_rate = statistics.median(r["rate"] for r in results["torch"]) if has_torch else None
    print(f"{args.steps} steps, {args.threads} thread(s), median of {args.rounds} rounds")
    for framework, runs in results.items():
        rate = statistics.median(r["rate"] for r in runs)
        ratio = f"{rate / torch_rate:6.2f}x torch" if torch_rate else ""
        print(f"{framework:<13}{rate:9.1f} steps/s  test accuracy {runs[-1]['accuracy']:.4f}  {ratio}")


if __name__ == "__main__":
    main()
