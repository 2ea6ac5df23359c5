"""`agrad inspect` of a graph with 40 GB tensors, in a process that cannot map 1 GiB."""
import json
import resource
import subprocess
import sys
import textwrap


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_inspect_of_a_huge_graph_allocates_nothing(tmp_path):
    graph = tmp_path / "huge.yaml"
    graph.write_text(textwrap.dedent("""\
        inputs:
          x: {shape: [100000, 100000], init: normal, requires_grad: true}
          w: {shape: [100000, 100000], init: normal, requires_grad: true}
        nodes:
          y: x @ w
          s: sum(relu(y))
        backward: s
        """))
    proc = subprocess.run([sys.executable, "-m", "agrad.cli", "inspect", str(graph), "--format", "json"],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limit_address_space)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [n["shape"] for n in doc["nodes"]] == [[100000, 100000], [100000, 100000], []]
    assert [b["name"] for b in doc["backward"]][0] == "SumBackward0"
