"""`agrad import` of a ResNet-18-sized ONNX model, and forward+backward of the imported graph
beside PyTorch eager on the same model (same threads, same batch).

Two steps, two interpreters (agrad never needs torch):

    # 1. with torch (a separate venv): ResNet-18 (torchvision's layout, random weights, eval
    #    mode) exported by the legacy exporter, and torch's own forward+backward time
    /tmp/torchvenv17/bin/python bench/bench_onnx.py make /tmp/resnet18.onnx --batch 8
    # 2. with agrad: import time, then forward+backward of the imported graph
    python bench/bench_onnx.py run /tmp/resnet18.onnx --batch 8

Step 1 writes /tmp/resnet18.onnx and /tmp/resnet18.torch.json (torch's times); step 2 reads
that file and prints both. The loss is the sum of the logits in both.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _threads() -> int:
    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))


def make(path: Path, batch: int, reps: int) -> None:
    import torch
    from torch import nn

    torch.set_num_threads(_threads())

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return torch.relu(out + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))

    torch.manual_seed(0)
    model = ResNet18().eval()
    x = torch.randn(batch, 3, 224, 224)
    torch.onnx.export(model, (x,), str(path), dynamo=False, input_names=["x"], opset_version=17,
                      dynamic_axes={"x": {0: "batch"}})
    times = []
    for _ in range(reps + 1):
        model.zero_grad(set_to_none=True)
        xi = x.clone().requires_grad_(True)
        t0 = time.perf_counter()
        model(xi).sum().backward()
        times.append(time.perf_counter() - t0)
    params = sum(p.numel() for p in model.parameters())
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "batch": batch,
              "params": params, "seconds": times[1:]}
    path.with_suffix(".torch.json").write_text(json.dumps(result))
    print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MB, {params / 1e6:.1f}M parameters); torch "
          f"forward+backward at batch {batch}: median {statistics.median(times[1:]):.3f} s")


def run(path: Path, batch: int, reps: int) -> None:
    import numpy as np

    from agrad import graphs
    from agrad.graphs.onnx.importing import ImportOptions, import_model

    from agrad.graphs.graph import load_engine      # the engine loaded before the clock, as `agrad run` does
    load_engine()
    folder = Path(tempfile.mkdtemp(prefix="agrad-onnx-bench."))
    t0 = time.perf_counter()
    result = import_model(path, folder / "resnet18.yaml", ImportOptions(shapes={"x": (batch, 3, 224, 224)}))
    import_s = time.perf_counter() - t0
    x = np.random.default_rng(0).normal(size=(batch, 3, 224, 224)).astype(np.float32)
    np.save(folder / "x.npy", x)
    graph = graphs.load(result.graph_path, inputs={"x": str(folder / "x.npy")})
    times = []
    for _ in range(reps + 1):
        timings = graph.run(replay=False).timings_ms          # the passes, not reading the weights
        times.append((timings["forward"] + timings["backward"]) / 1e3)
    agrad_s = statistics.median(times[1:])
    print(f"import: {import_s:.2f} s ({result.nodes} nodes, {result.parameters} parameters, "
          f"{path.stat().st_size / 2**20:.1f} MB)")
    print(f"agrad forward+backward at batch {batch} ({_threads()} threads): median {agrad_s:.3f} s "
          f"of {reps} (min {min(times[1:]):.3f})")
    reference = path.with_suffix(".torch.json")
    if reference.exists():
        torch_times = json.loads(reference.read_text())
        torch_s = statistics.median(torch_times["seconds"])
        print(f"torch {torch_times['torch']} eager ({torch_times['threads']} threads): median {torch_s:.3f} s; "
              f"agrad / torch = {agrad_s / torch_s:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["make", "run"])
    parser.add_argument("model", type=Path)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    (make if args.step == "make" else run)(args.model, args.batch, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
