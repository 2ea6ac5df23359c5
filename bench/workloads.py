"""The benchmark workloads W1–W5, each written once per framework.

One call of `python bench/workloads.py WORKLOAD FRAMEWORK --reps N` runs in a fresh
process (so no framework warms another's caches), does one untimed warm-up pass,
then N timed passes, and prints one JSON line: the pass times in seconds (wall clock and
this process's CPU time), the
number of ops a pass counts, and the peak resident memory above the process's
baseline just before the first pass. `bench/run.py` drives it.

Frameworks: `numpy` (hand-written forward and backward: the floor), `numpy-file` (W2/W4: the
floor reading its parameters from the same .npy files as `agrad-file`, memory-mapped in each
pass, so that the file pages a pass reads count for both), `agrad`
(the library, `import agrad`), `agrad-file` (the same workload as a graph file,
through `agrad.graphs`), `torch` (PyTorch eager, CPU; only where importable),
`hips` (HIPS autograd, the `autograd` package; only where importable).
TRAIN (ms per training step of train_digits.yaml) and CHECK (ms per `check` of a conv
net) run `agrad-file` (steps and passes replayed, as `agrad train`/`check` do),
`agrad-engine` (`replay=False`: all through the engine) and, for TRAIN, `torch`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

W1_STEPS = 1000            # W1: y = tanh(y * w + x), 3 ops a step, 16 elements
W1_SIZE = 16
W3_TERMS = 1000            # W3: sum_i sin(x * c_i), 2 ops a term (+ the adds), 256 elements
W3_SIZE = 256
W2_SHAPES = (512, 1024, 1024, 1024, 10)    # W2: MLP, batch 512
W4_DEPTH, W4_WIDTH, W4_BATCH = 16, 2048, 16  # W4: deep MLP, memory-bound
W5_NODES = (10_000, 100_000)
TRAIN_STEPS = 660          # TRAIN: graphs/examples/train_digits.yaml, its 30 epochs (bench_train.py's loop)
CHECK_EXAMPLE = "resnet_block.yaml"     # CHECK: `check` of a conv net (2 convs, batch norm), every element
EXAMPLES = Path(__file__).resolve().parents[1] / "graphs" / "examples"
# the workloads that not every framework has (the rest: W1-W4 for all, W5 for agrad-cli and its pyyaml anchor);
# agrad-file is a graph file replayed after its first passes, agrad-engine the same file through the engine
_MLP_FRAMEWORKS = ("numpy", "numpy-file", "agrad", "agrad-file", "agrad-engine", "torch", "hips")
FRAMEWORKS = {"TRAIN": ("agrad-file", "agrad-engine", "torch"), "CHECK": ("agrad-file", "agrad-engine"),
              "W2": _MLP_FRAMEWORKS, "W4": _MLP_FRAMEWORKS}


def _rng():
    return np.random.default_rng(0)


# ---- data shared by every framework (same values, so results can be compared) ------------

def w1_data():
    r = _rng()
    return [r.uniform(-0.5, 0.5, W1_SIZE).astype(np.float32) for _ in range(3)]


def w3_data():
    r = _rng()
    return r.uniform(-1, 1, W3_SIZE).astype(np.float32), r.uniform(-1, 1, W3_TERMS).astype(np.float32)


def mlp_data(shapes, batch):
    r = _rng()
    x = r.standard_normal((batch, shapes[0])).astype(np.float32)
    ws = [(r.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32) for i, o in zip(shapes, shapes[1:])]
    bs = [np.zeros(o, np.float32) for o in shapes[1:]]
    return x, ws, bs


def w2_data():
    return mlp_data(W2_SHAPES, 512)


def w4_data():
    return mlp_data((W4_WIDTH,) * (W4_DEPTH + 1), W4_BATCH)


# ---- NumPy: the floor -------------------------------------------------------------------

def numpy_w1(x, w, y0):
    ys = [y0]
    y = y0
    for _ in range(W1_STEPS):
        y = np.tanh(y * w + x)
        ys.append(y)
    gx, gw, gy = np.zeros_like(x), np.zeros_like(w), np.ones_like(y)
    for i in range(W1_STEPS, 0, -1):
        gz = gy * (1 - ys[i] * ys[i])
        gx += gz
        gw += gz * ys[i - 1]
        gy = gz * w
    return y, gx, gw


def numpy_w3(x, c):
    total = np.zeros_like(x)
    for ci in c:
        total = total + np.sin(x * ci)
    gx = np.zeros_like(x)
    for ci in c:
        gx += np.cos(x * ci) * ci
    return total.sum(), gx


def numpy_mlp(x, ws, bs):
    acts = [x]
    h = x
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = h @ w.T + b
        if i < len(ws) - 1:
            h = np.maximum(h, 0)
        acts.append(h)
    g = np.ones_like(h)
    grads = []
    for i in range(len(ws) - 1, -1, -1):
        if i < len(ws) - 1:
            g = g * (acts[i + 1] > 0)
        grads.append((g.T @ acts[i], g.sum(0)))
        g = g @ ws[i]
    return grads


# ---- agrad, the library -----------------------------------------------------------------

def agrad_w1(x0, w0, y0):
    import agrad
    x = agrad.tensor(x0, requires_grad=True)
    w = agrad.tensor(w0, requires_grad=True)
    y = agrad.tensor(y0)
    for _ in range(W1_STEPS):
        y = agrad.tanh(y * w + x)
    y.sum().backward()
    return y, x.grad, w.grad


def agrad_w3(x0, c):
    import agrad
    x = agrad.tensor(x0, requires_grad=True)
    total = agrad.zeros(x0.shape)
    for ci in c.tolist():
        total = total + agrad.sin(x * ci)
    total.sum().backward()
    return x.grad


def agrad_mlp(x0, ws0, bs0):
    import agrad
    x = agrad.tensor(x0)
    ws = [agrad.tensor(w, requires_grad=True) for w in ws0]
    bs = [agrad.tensor(b, requires_grad=True) for b in bs0]
    h = x
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = agrad.linear(h, w, b)
        if i < len(ws) - 1:
            h = agrad.relu(h)
    h.sum().backward()
    return [w.grad for w in ws]


# ---- PyTorch eager ----------------------------------------------------------------------

def torch_w1(x0, w0, y0):
    import torch
    x = torch.tensor(x0, requires_grad=True)
    w = torch.tensor(w0, requires_grad=True)
    y = torch.tensor(y0)
    for _ in range(W1_STEPS):
        y = torch.tanh(y * w + x)
    y.sum().backward()
    return x.grad, w.grad


def torch_w3(x0, c):
    import torch
    x = torch.tensor(x0, requires_grad=True)
    total = torch.zeros(x0.shape)
    for ci in c.tolist():
        total = total + torch.sin(x * ci)
    total.sum().backward()
    return x.grad


def torch_mlp(x0, ws0, bs0):
    import torch
    import torch.nn.functional as F
    x = torch.tensor(x0)
    ws = [torch.tensor(w, requires_grad=True) for w in ws0]
    bs = [torch.tensor(b, requires_grad=True) for b in bs0]
    h = x
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = F.linear(h, w, b)
        if i < len(ws) - 1:
            h = torch.relu(h)
    h.sum().backward()
    return [w.grad for w in ws]


# ---- HIPS autograd (the `autograd` package: a tape over NumPy calls) ---------------------

def hips_w1(x0, w0, y0):
    import autograd
    import autograd.numpy as anp

    def loss(x, w):
        y = y0
        for _ in range(W1_STEPS):
            y = anp.tanh(y * w + x)
        return anp.sum(y)
    return autograd.grad(loss, (0, 1))(x0, w0)


def hips_w3(x0, c):
    import autograd
    import autograd.numpy as anp

    def loss(x):
        total = anp.zeros(x0.shape, x0.dtype)      # float32, as torch.zeros and agrad.zeros
        for ci in c.tolist():
            total = total + anp.sin(x * ci)
        return anp.sum(total)
    return autograd.grad(loss)(x0)


def hips_mlp(x0, ws0, bs0):
    import autograd
    import autograd.numpy as anp

    def loss(ws, bs):
        h = x0
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = anp.dot(h, w.T) + b
            if i < len(ws) - 1:
                h = anp.maximum(h, 0)
        return anp.sum(h)
    return autograd.grad(loss, (0, 1))(ws0, bs0)      # ([dW0, dW1, ...], [db0, db1, ...])


# ---- graph files ------------------------------------------------------------------------

def _write(path: Path, lines) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _arr(path: Path, name: str, array) -> str:
    np.save(path / f"{name}.npy", array)
    return f"{name}.npy"


def w1_file(folder: Path) -> Path:
    x, w, y0 = w1_data()
    lines = ["inputs:",
             f"  x: {{file: {_arr(folder, 'x', x)}, requires_grad: true}}",
             f"  w: {{file: {_arr(folder, 'w', w)}, requires_grad: true}}",
             f"  y0: {{file: {_arr(folder, 'y0', y0)}}}",
             "nodes:", "  y1: tanh(y0 * w + x)"]
    lines += [f"  y{i}: tanh(y{i - 1} * w + x)" for i in range(2, W1_STEPS + 1)]
    lines += [f"  loss: sum(y{W1_STEPS})", "backward: loss", "outputs: [loss]"]
    return _write(folder / "w1.yaml", lines)


def w3_file(folder: Path) -> Path:
    x, c = w3_data()
    lines = ["inputs:", f"  x: {{file: {_arr(folder, 'x', x)}, requires_grad: true}}", "nodes:",
             f"  t0: sin(x * {float(c[0])!r})"]
    lines += [f"  t{i}: t{i - 1} + sin(x * {float(ci)!r})" for i, ci in enumerate(c[1:].tolist(), 1)]
    lines += [f"  loss: sum(t{W3_TERMS - 1})", "backward: loss", "outputs: [loss]"]
    return _write(folder / "w3.yaml", lines)


def mlp_file(folder: Path, data, name: str) -> Path:
    x, ws, bs = data
    lines = ["inputs:", f"  x: {{file: {_arr(folder, 'x', x)}}}"]
    for i, (w, b) in enumerate(zip(ws, bs)):
        lines.append(f"  W{i}: {{file: {_arr(folder, f'W{i}', w)}, requires_grad: true}}")
        lines.append(f"  b{i}: {{file: {_arr(folder, f'b{i}', b)}, requires_grad: true}}")
    lines.append("nodes:")
    prev = "x"
    for i in range(len(ws)):
        expr = f"linear({prev}, W{i}, b{i})"
        lines.append(f"  h{i}: {expr if i == len(ws) - 1 else f'relu({expr})'}")
        prev = f"h{i}"
    lines += [f"  loss: sum({prev})", "backward: loss", "outputs: [loss]"]
    return _write(folder / f"{name}.yaml", lines)


def chain_file(folder: Path, nodes: int) -> Path:
    lines = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, nodes)]
    lines += [f"  loss: sum(n{nodes - 1})", "backward: loss", "outputs: [loss]"]
    return _write(folder / f"chain{nodes}.yaml", lines)


def _graph_pass(path: Path, replay: bool = True):
    """A pass of a graph file: the graph is loaded once, each pass runs it (as --repeat does);
    `replay=False`: every pass through the engine (forward recorded, backward walked)."""
    from agrad import graphs
    graph = graphs.load(path)
    return lambda: graph.run(replay=replay)


# ---- the table of workloads -------------------------------------------------------------

def _library(fn, data, n_ops):
    return (lambda: fn(*data)), n_ops


def setup(workload: str, framework: str, folder: Path):
    """(a zero-argument pass, the ops it counts)."""
    w1_ops, w3_ops = 3 * W1_STEPS, 2 * W3_TERMS + W3_TERMS - 1
    lib = {
        ("W1", "numpy"): (numpy_w1, w1_data, w1_ops), ("W1", "agrad"): (agrad_w1, w1_data, w1_ops),
        ("W1", "torch"): (torch_w1, w1_data, w1_ops), ("W1", "hips"): (hips_w1, w1_data, w1_ops),
        ("W3", "numpy"): (numpy_w3, w3_data, w3_ops), ("W3", "agrad"): (agrad_w3, w3_data, w3_ops),
        ("W3", "torch"): (torch_w3, w3_data, w3_ops), ("W3", "hips"): (hips_w3, w3_data, w3_ops),
        ("W2", "numpy"): (numpy_mlp, w2_data, 1), ("W2", "agrad"): (agrad_mlp, w2_data, 1),
        ("W2", "torch"): (torch_mlp, w2_data, 1), ("W2", "hips"): (hips_mlp, w2_data, 1),
        ("W4", "numpy"): (numpy_mlp, w4_data, 1), ("W4", "agrad"): (agrad_mlp, w4_data, 1),
        ("W4", "torch"): (torch_mlp, w4_data, 1), ("W4", "hips"): (hips_mlp, w4_data, 1),
    }
    if workload == "TRAIN":
        return _train_pass(framework), TRAIN_STEPS
    if workload == "CHECK":
        from agrad import graphs
        graph = graphs.load(EXAMPLES / CHECK_EXAMPLE)
        return (lambda: graph.check(replay=framework == "agrad-file")), 1
    if (workload, framework) in lib:
        fn, data, n_ops = lib[workload, framework]
        return _library(fn, data(), n_ops)
    if framework == "numpy-file" and workload in ("W2", "W4"):
        data = w2_data() if workload == "W2" else w4_data()
        mlp_file(folder, data, workload.lower())
        del data
        return (lambda: numpy_mlp(*_mapped_mlp_data(folder, len(W2_SHAPES if workload == "W2" else
                                                                   (0,) * (W4_DEPTH + 1)) - 1))), 1
    if framework in ("agrad-file", "agrad-engine"):
        files = {"W1": (w1_file, w1_ops), "W3": (w3_file, w3_ops),
                 "W2": (lambda f: mlp_file(f, w2_data(), "w2"), 1),
                 "W4": (lambda f: mlp_file(f, w4_data(), "w4"), 1)}
        make, n_ops = files[workload]
        return _graph_pass(make(folder), replay=framework == "agrad-file"), n_ops
    raise SystemExit(f"no workload {workload} for {framework}")


def _mapped_mlp_data(folder: Path, layers: int):
    """`mlp_data` read back from the files `mlp_file` wrote, as a graph file's leaves are: mapped."""
    def load(name):
        return np.load(folder / f"{name}.npy", mmap_mode="r")
    return load("x"), [load(f"W{i}") for i in range(layers)], [load(f"b{i}") for i in range(layers)]


def _train_pass(framework: str):
    """One training run of TRAIN_STEPS steps (the parameters, optimizer and schedule made afresh;
    agrad's graph loaded once, as torch's model is written once)."""
    import bench_train
    if framework == "torch":
        return lambda: bench_train.bench_torch(TRAIN_STEPS, 1)
    from agrad import graphs
    from agrad.graphs.train_section import train_spec
    graph = graphs.load(bench_train.EXAMPLE)
    options = dict(train_spec(graph).options(), eval_every=None, replay=framework == "agrad-file")
    return lambda: graph.train(steps=TRAIN_STEPS, **options)


def torch_chain(nodes: int) -> None:
    """W5-run's other anchor: the chain `chain_file` writes, computed by PyTorch's eager engine (forward
    and backward, one thread, float32 as the file's default): what the ops alone cost in a C++ engine,
    with no file to read. Timed in its own process after `import torch` (main)."""
    import torch
    torch.set_num_threads(1)
    x = torch.tensor([0.5, -0.25, 1.0], requires_grad=True)
    h = x * 1.0
    for _ in range(1, nodes):
        h = torch.tanh(h) * 0.999 + x
    h.sum().backward()


def w5(phase: str, nodes: int, folder: Path, framework: str = "agrad-cli"):
    """W5: one phase of the CLI on a generated chain file, as a user runs it (a subprocess);
    framework "pyyaml" is its anchor, PyYAML's C loader reading the same file (issue #21's)."""
    path = chain_file(folder, nodes)
    if framework == "pyyaml":
        cmd = [sys.executable, "-c", "import sys, yaml; yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader)",
               str(path)]
    else:
        cmd = [sys.executable, "-m", "agrad.cli", phase, str(path)] + (["--format", "json"] if phase != "validate"
                                                                       else [])
    return cmd, nodes


def child_cpu_seconds(cmd) -> float:
    """User + system CPU seconds of one run of `cmd` in a child process (the W5 rows compare CPU time:
    this machine is shared, and a wall clock would charge agrad for its neighbours)."""
    import subprocess
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


_OPTIONAL = {"torch": "torch", "hips": "autograd.numpy"}     # framework: the module it needs


def _preload(framework: str) -> None:
    """Import the framework before the memory baseline is read: its import is not the workload."""
    if framework in _OPTIONAL:
        try:
            importlib.import_module(_OPTIONAL[framework])
        except ImportError as e:
            raise SystemExit(f"{framework}: {e} in {sys.executable}") from None
    elif framework.startswith("agrad"):
        import agrad
        agrad.ops.registered()          # the op library loads on first use
        if framework != "agrad":
            import agrad.graphs  # noqa: F401


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("workload")          # W1..W4, or W5-validate-10000 / W5-inspect-100000 / W5-run-10000
    # W5 frameworks: agrad-cli (the command), pyyaml (its anchor: the same file through CSafeLoader),
    # torch (W5-run only: the same chain computed by PyTorch in this process, torch_chain)
    p.add_argument("framework")
    p.add_argument("--reps", type=int, default=5)
    opts = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cli = opts.workload.startswith("W5-")
        times, cpu_times = [], []          # wall and CPU seconds per pass (W5: CPU seconds only)
        if cli and opts.framework == "torch":      # after torch's import, which is no part of the chain's cost
            nodes = int(opts.workload.rsplit("-", 1)[1])
            _preload("torch")
            base, n_ops, cli = _rss_mb(), nodes, False
            for _ in range(opts.reps):
                c0 = time.process_time()
                torch_chain(nodes)
                times.append(time.process_time() - c0)
        elif cli:       # a whole command in a subprocess: its own start-up is part of what is measured
            _, phase, nodes = opts.workload.split("-")
            cmd, n_ops = w5(phase, int(nodes), folder, opts.framework)
            base = 0.0
            times = [child_cpu_seconds(cmd) for _ in range(opts.reps)]
        else:
            run_pass, n_ops = setup(opts.workload, opts.framework, folder)
            _preload(opts.framework)
            base = _rss_mb()
            run_pass()            # warm-up, not counted
            for _ in range(opts.reps):
                t0, c0 = time.perf_counter(), time.process_time()
                run_pass()
                times.append(time.perf_counter() - t0)
                cpu_times.append(time.process_time() - c0)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN if cli else resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times": times, "cpu_times": cpu_times or times, "ops": n_ops,
                      "peak_above_baseline_mb": max(0.0, peak - base)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
