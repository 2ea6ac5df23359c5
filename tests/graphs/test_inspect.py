"""`inspect` builds on Meta only: shapes, dispatch paths, the backward graph and the engine's order."""
import subprocess
import sys
import textwrap
from dataclasses import asdict

from agrad import graphs
from graph_helpers import EXAMPLES, suite_graphs
from inspection_builds import renumbered


def test_seed_node_table_and_backward_graph():
    result = graphs.load(EXAMPLES / "seed.yaml").inspect()
    assert [(n.name, n.op, n.args, n.shape, n.dtype, n.device, n.kernel, n.line) for n in result.nodes] == [
        ("c", "add", ["a", "b"], [], "float32", "cpu", "Autograd -> CPU", 12),
        ("d", "mul", ["a", "c"], [], "float32", "cpu", "Autograd -> CPU", 13)]
    by_id = {b.id: b for b in result.backward}
    names = {b.id: (b.name, b.node) for b in result.backward}
    root = by_id[result.order[0]]
    assert (root.name, root.node, root.dependencies) == ("MulBackward0", "d", 0)
    # d = a * c: MulBackward0's next edges are a's AccumulateGrad and AddBackward0, as PyTorch's.
    assert [names[i] for i, _ in root.next_edges] == [("AccumulateGrad", "a"), ("AddBackward0", "c")]
    acc_a = next(b for b in result.backward if b.node == "a")
    assert acc_a.dependencies == 2                      # a is used twice
    assert root.topological_nr > by_id[root.next_edges[1][0]].topological_nr
    assert sorted(result.order) == sorted(by_id)
    assert ("c", "d", []) in result.edges


def test_intermediates_and_structured_args_in_the_table(graph_file):
    path = graph_file("inputs:\n  x: {shape: [2, 3], init: ones, requires_grad: true}\n"
                      "  W: {shape: [3, 4], init: ones}\nnodes:\n  h: relu(x @ W)\n"
                      "  s: {op: sum, args: [h], dim: 1, keepdim: true}\n  t: {op: sum, args: [s]}\nbackward: t\n")
    nodes = graphs.load(path).inspect().nodes
    assert [(n.name, n.op, n.args, n.shape) for n in nodes] == [
        ("h.1", "matmul", ["x", "W"], [2, 4]), ("h", "relu", ["h.1"], [2, 4]),
        ("s", "sum", ["h", "dim=1", "keepdim=True"], [2, 1]), ("t", "sum", ["s"], [])]


def test_huge_graph_inspects_without_allocating(tmp_path):
    """A [100000, 100000] float32 matmul is 40 GB per tensor; inspect must not touch it."""
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
    script = textwrap.dedent(f"""\
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from agrad import graphs
        result = graphs.load({str(graph)!r}).inspect()
        assert [n.shape for n in result.nodes] == [[100000, 100000]] * 2 + [[]], result.nodes
        print("ok", len(result.backward))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "5"]


def test_without_backward_the_outputs_stand_as_roots(graph_file):
    path = graph_file("inputs: {x: {value: [1.0, 2.0], requires_grad: true}}\nnodes:\n  y: x * x\n")
    result = graphs.load(path).inspect()
    assert [(b.name, b.node) for b in result.backward] == [("MulBackward0", "y"), ("AccumulateGrad", "x")]
    assert result.order == [0, 1]


def test_nodes_built_inside_grad_belong_to_the_grad_node():
    result = graphs.load(EXAMPLES / "hessian_vector.yaml").inspect()
    owners = {b.node for b in result.backward}
    assert owners == {"gv", "gv.1", "g", "x"}
    assert next(n for n in result.nodes if n.name == "gx").kernel == "output selection"


def test_dispatch_path_follows_the_device_even_without_the_device(graph_file):
    result = graphs.load(EXAMPLES / "seed.yaml", device="cuda").inspect()
    assert [(n.device, n.kernel) for n in result.nodes] == [("cuda:0", "Autograd -> CUDA")] * 2


def test_every_graph_inspects_the_same_streamed_as_from_its_kept_build(tmp_path):
    """`agrad inspect --format json` (streamed: each value let go once nothing later reads it, rows
    made as the build goes) says what the build kept by a small file's check says, for every example
    and every graph of the test suite that loads; and every id in the order has its backward row
    (a pass of several roots starts at the GraphRoot the engine makes)."""
    texts = [p.read_text() for p in sorted(EXAMPLES.glob("*.yaml"))] + suite_graphs()
    compared = 0
    for i, text in enumerate(texts):
        path = tmp_path / f"g{i}.yaml"
        path.write_text(text)
        if graphs.validate(path):
            continue
        try:
            graph = graphs.load(path, plugins=())
        except graphs.GraphFileError:
            continue                # refused where it needs a device or data this machine lacks
        kept = graph.inspect(edges=False)
        graph._checked.release_meta()
        streamed = graph.inspect(edges=False, streamed=True)
        nodes, backward, order = list(streamed.nodes), list(streamed.backward), list(streamed.order)
        assert nodes == kept.nodes, text
        assert renumbered(list(map(asdict, backward))) == renumbered(list(map(asdict, kept.backward))), text
        assert order == kept.order, text
        assert set(order) <= {b.id for b in backward}, text
        compared += 1
    assert compared > 80


def test_a_pass_of_several_roots_lists_the_graph_root_it_starts_from(graph_file):
    """The engine starts a pass of several roots at a GraphRoot whose edges are the roots (PyTorch's
    GraphRoot): it is a backward row too, first in the order, so every id of the order has a row."""
    result = graphs.load(graph_file("""\
        inputs: {x: {value: [1.0, 2.0], requires_grad: true}}
        nodes:
          y: sum(tanh(x))
          z: sum(x * x)
        backward: [{of: [y, z]}]
        """)).inspect()
    by_id = {b.id: b for b in result.backward}
    root = by_id[result.order[0]]
    assert (root.name, root.node, root.dependencies) == ("GraphRoot", None, 0)
    assert [(by_id[i].name, by_id[i].node) for i, _ in root.next_edges] == [("SumBackward0", "y"),
                                                                            ("SumBackward0", "z")]
    assert set(result.order) == set(by_id)
