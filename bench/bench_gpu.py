"""agrad on a GPU (CuPy) against agrad on the CPU (NumPy) and PyTorch on the same GPU.

Three workloads, forward and backward each pass, float32:

- `chain`: W1 of bench/workloads.py (y = tanh(y * w + x), 3 small ops a step): the
  per-op overhead, which on a GPU is the host's work plus the kernel launches;
- `mlp`: W2's MLP, batch 512, 1024 wide (the size bench/run.py uses on the CPU);
- `wide`: an MLP of batch 4096 and width 4096, 4 layers: the GPU's arithmetic.

Frameworks are alternated round by round in one process (the machine's load moves),
each pass ends with a device synchronisation, and the table prints medians and the
ratios from the same run. PyTorch is used only where `import torch` works with CUDA.

    python bench/bench_gpu.py                    # 7 rounds
    python bench/bench_gpu.py --rounds 15 --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import W1_STEPS, mlp_data, w1_data, w2_data     # noqa: E402 — the shared data, one definition

WIDE = (4096, 4096, 4096, 4096, 4096)


def wide_data():
    return mlp_data(WIDE, 4096)


def agrad_frameworks():
    import cupy

    import agrad

    def sync():
        cupy.cuda.Device().synchronize()

    def make(device):
        def chain(x0, w0, y0):
            x = agrad.tensor(x0, device=device, requires_grad=True)
            w = agrad.tensor(w0, device=device, requires_grad=True)
            y = agrad.tensor(y0, device=device)

            def one_pass():
                yy = y
                for _ in range(W1_STEPS):
                    yy = agrad.tanh(yy * w + x)
                x.grad = w.grad = None
                yy.sum().backward()
            return one_pass

        def mlp(x0, ws0, bs0):
            x = agrad.tensor(x0, device=device)
            ws = [agrad.tensor(w, device=device, requires_grad=True) for w in ws0]
            bs = [agrad.tensor(b, device=device, requires_grad=True) for b in bs0]

            def one_pass():
                h = x
                for i, (w, b) in enumerate(zip(ws, bs)):
                    h = agrad.linear(h, w, b)
                    if i < len(ws) - 1:
                        h = agrad.relu(h)
                for p in ws + bs:
                    p.grad = None
                h.sum().backward()
            return one_pass
        return {"chain": chain, "mlp": mlp, "wide": mlp}

    return {"agrad-cuda": (make("cuda"), sync), "agrad-cpu": (make("cpu"), lambda: None)}


def torch_framework():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    dev = "cuda"

    def chain(x0, w0, y0):
        x = torch.tensor(x0, device=dev, requires_grad=True)
        w = torch.tensor(w0, device=dev, requires_grad=True)
        y = torch.tensor(y0, device=dev)

        def one_pass():
            yy = y
            for _ in range(W1_STEPS):
                yy = torch.tanh(yy * w + x)
            x.grad = w.grad = None
            yy.sum().backward()
        return one_pass

    def mlp(x0, ws0, bs0):
        x = torch.tensor(x0, device=dev)
        ws = [torch.tensor(w, device=dev, requires_grad=True) for w in ws0]
        bs = [torch.tensor(b, device=dev, requires_grad=True) for b in bs0]

        def one_pass():
            h = x
            for i, (w, b) in enumerate(zip(ws, bs)):
                h = F.linear(h, w, b)
                if i < len(ws) - 1:
                    h = torch.relu(h)
            for p in ws + bs:
                p.grad = None
            h.sum().backward()
        return one_pass
    return {"torch-cuda": ({"chain": chain, "mlp": mlp, "wide": mlp}, torch.cuda.synchronize)}


DATA = {"chain": w1_data, "mlp": w2_data, "wide": wide_data}
UNIT = {"chain": ("µs/op", 1e6 / (3 * W1_STEPS)), "mlp": ("ms", 1e3), "wide": ("ms", 1e3)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--workloads", nargs="+", default=list(DATA))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)

    frameworks = {**agrad_frameworks(), **torch_framework()}
    times = {}
    for workload in args.workloads:
        data = DATA[workload]()
        passes = {}
        for name, (builders, sync) in frameworks.items():
            if name == "agrad-cpu" and workload == "wide":
                continue                # seconds a pass on a CPU, and no one runs it there
            one = builders[workload](*data)
            one()
            sync()                      # the warm-up: kernels compiled, memory pools filled
            passes[name] = (one, sync)
        for _ in range(args.rounds):
            for name, (one, sync) in passes.items():
                t0 = time.perf_counter()
                one()
                sync()
                times.setdefault((workload, name), []).append(time.perf_counter() - t0)

    rows = []
    for workload in args.workloads:
        unit, scale = UNIT[workload]
        med = {name: statistics.median(ts) * scale for (w, name), ts in times.items() if w == workload}
        row = {"workload": workload, "unit": unit, **{k: round(v, 3) for k, v in med.items()}}
        if "agrad-cpu" in med:
            row["cuda/cpu"] = round(med["agrad-cuda"] / med["agrad-cpu"], 3)
        if "torch-cuda" in med:
            row["agrad/torch (cuda)"] = round(med["agrad-cuda"] / med["torch-cuda"], 3)
        rows.append(row)
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
