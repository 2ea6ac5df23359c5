"""A long graph file: time to parse, check and build it on Meta, then to run it.

    python bench/bench_graph_file.py                 # 5,000 nodes
    python bench/bench_graph_file.py --nodes 20000
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from agrad import graphs


def write_chain(path: Path, nodes: int) -> None:
    lines = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, nodes)]
    lines += [f"  loss: sum(n{nodes - 1})", "backward: loss"]
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    nodes = parser.parse_args().nodes
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chain.yaml"
        write_chain(path, nodes)
        graph = graphs.load(path)
        run = graph.run()
    t = run.timings_ms
    print(f"{nodes:,} YAML nodes ({nodes * 3:,} ops): parse {t['parse']:.0f} ms, check+build on Meta "
          f"{t['build']:.0f} ms, forward {t['forward']:.0f} ms, backward {t['backward']:.0f} ms")


if __name__ == "__main__":
    main()
