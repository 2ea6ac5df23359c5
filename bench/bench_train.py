"""Steps per second of `graphs/examples/train_digits.yaml` in agrad, beside the same loop
written in PyTorch (CPU, the same thread count), measured in one run.

    python bench/bench_train.py                    # agrad only (this venv has no torch)
    /tmp/torchvenv/bin/python bench/bench_train.py # both, side by side
    python bench/bench_train.py --steps 300 --threads 1

Both loops do the same work per step: gather a shuffled batch of 64 digits, forward the
MLP (64-64-10, relu, cross-entropy), backward, Adam (weight_decay 1e-4) and a cosine
learning rate. agrad's loop is `Graph.train` on the file itself.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[1] / "graphs" / "examples" / "train_digits.yaml"


def bench_agrad(steps: int) -> tuple[float, float]:
    from agrad import graphs
    from agrad.graphs.train_section import train_spec

    graph = graphs.load(EXAMPLE)
    spec = train_spec(graph)
    options = dict(spec.options(), eval_every=None)
    run = graph.train(steps=steps, **options)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=660, help="steps (default: the example's 30 epochs)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)))
    args = parser.parse_args()
    rate, accuracy = bench_agrad(args.steps)
    print(f"agrad    {rate:8.1f} steps/s   test accuracy {accuracy:.4f}   ({args.steps} steps)")
    try:
        import torch  # noqa: F401
    except ImportError:
        print("pytorch  (not installed in this Python; run with /tmp/torchvenv/bin/python to compare)")
        return
    rate_t, accuracy_t = bench_torch(args.steps, args.threads)
    print(f"pytorch  {rate_t:8.1f} steps/s   test accuracy {accuracy_t:.4f}   ({args.threads} threads)")
    print(f"agrad / pytorch: {rate / rate_t:.2f}x")


if __name__ == "__main__":
    main()
