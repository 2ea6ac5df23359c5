from agrad.graphs.diagnostics import Collector
from agrad.graphs.yaml_loader import load_yaml, position_in_scalar


def load(text):
    collector = Collector("f.yaml")
    return load_yaml(text, collector), collector.diagnostics


def test_values_and_positions_are_kept():
    doc, problems = load("inputs:\n  x: [1, 2]\n  y: {value: 2.0}\n")
    assert problems == []
    assert doc.data == {"inputs": {"x": [1, 2], "y": {"value": 2.0}}}
    assert (doc.key_pos(("inputs", "y")).line, doc.key_pos(("inputs", "y")).col) == (3, 3)
    assert (doc.pos(("inputs", "x", 1)).line, doc.pos(("inputs", "x", 1)).col) == (2, 10)
    assert (doc.pos(("inputs", "y", "value")).line, doc.pos(("inputs", "y", "value")).col) == (3, 14)


def test_duplicate_keys_are_errors_at_the_second_key():
    doc, problems = load("nodes:\n  c: a + b\n  d: a\n  c: a * b\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG002", 4, 3)]
    assert "line 2" in problems[0].message
    assert doc.data["nodes"]["c"] == "a + b"


def test_duplicate_keys_in_flow_mappings_too():
    _, problems = load("x: {value: 1, value: 2}\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG002", 1, 15)]


def test_python_tags_are_rejected_and_nothing_is_constructed():
    doc, problems = load("a: !!python/object/apply:os.system ['echo hacked']\n"
                         "b: !!python/name:os.system x\n")
    assert [(d.code, d.location.line) for d in problems] == [("AG003", 1), ("AG003", 2)]
    assert "python/object/apply:os.system" in problems[0].message
    assert doc.data["b"] == "x"


def test_syntax_error_points_at_the_problem():
    doc, problems = load("a: [1, 2\nb: 3\n")
    assert doc is None
    assert [(d.code, d.location.line) for d in problems] == [("AG001", 2)]


def test_tab_indentation_is_a_syntax_error_with_position():
    _, problems = load("a:\n\tb: 1\n")
    assert problems[0].code == "AG001" and problems[0].location.line == 2


def test_keys_stay_text_not_yaml11_booleans():
    doc, _ = load("on: 1\nno: 2\n1: 3\n")
    assert list(doc.data) == ["on", "no", "1"]


def test_recursive_alias_is_an_error_not_a_hang():
    _, problems = load("a: &x [*x]\n")
    assert [d.code for d in problems] == ["AG005"]


def test_merge_keys_are_rejected():
    _, problems = load("base: &b {x: 1}\nc:\n  <<: *b\n")
    assert [(d.code, d.location.line, d.location.col) for d in problems] == [("AG003", 3, 3)]


def test_column_inside_plain_single_and_double_quoted_scalars():
    text = "a: relu(x @ W1)\nb: 'it''s @ x'\nc: \"q\\x41 @ y\"\n"
    doc, _ = load(text)
    at = lambda key, off: (position_in_scalar(doc, (key,), off).line, position_in_scalar(doc, (key,), off).col)
    assert at("a", 7) == (1, 11)          # the '@'
    assert at("b", 5) == (2, 11)          # '' counts as one character of the value
    assert at("c", 5) == (3, 13)          # \x41 is four source characters for one value character


def test_column_inside_multiline_and_block_scalars():
    doc, _ = load("d:   foo(a,\n      b)\ne: |\n  foo(\n    x)\n")
    pos = position_in_scalar(doc, ("d",), doc.data["d"].index("b"))
    assert (pos.line, pos.col) == (2, 7)
    pos = position_in_scalar(doc, ("e",), doc.data["e"].index("x"))
    assert (pos.line, pos.col) == (5, 5)


# ---- the `nodes:` block read in bulk: the same Document and diagnostics as PyYAML's ----

_BULK_CASES = {
    # read in bulk
    "plain": ("inputs:\n  x: 1.0\nnodes:\n  a: x * 2\n  b: tanh(a)\noutputs: [b]\n", True),
    "deeper indent, blank lines after, no final newline":
        ("inputs:\n  x: 1.0\nnodes:\n    a: x * 2\n    b: tanh(a)\n\n\noutputs: [b]", True),
    "subscripts and flow after": ("nodes:\n  a: x[0]\n  b: a[1] + 2\nq: &a [1]\nr: *a\n", True),
    "a tag elsewhere is reported": ("inputs: !!python/object x\nnodes:\n  a: x\n", True),
    "a syntax error elsewhere is PyYAML's": ("inputs: {x: 1.0\nnodes:\n  a: x\n", True),
    "`nodes:` inside a quoted scalar": ('description: "abc\nnodes:\n  a: x\nz: 1"\n', True),
    "block scalar before": ("a: |\n  t\nnodes:\n  a: x\n", True),
    # anything unusual: PyYAML reads the whole document
    "duplicate key": ("nodes:\n  a: x * 2\n  a: tanh(a)\noutputs: [b]\n", False),
    "values that are not text": ("nodes:\n  a: true\n  b: 1e3\n  c: ~\n  d: 0x1F\n  e: 2001-12-14\n", False),
    "a tag in the block": ("nodes:\n  a: x\n  b: !!str y\n", False),
    "a comment": ("nodes:\n  a: x\n  # c\nbackward: a\n", False),
    "a continuation line": ("nodes:\n  a: x\n    + 1\nbackward: a\n", False),
    "two `nodes:`": ("nodes:\n  a: x\nnodes:\n  b: x\n", False),
    "document markers": ("---\nnodes:\n  a: x\n...\n", False),
    "a sequence after": ("x: 1\nnodes:\n  a: x\n  b: y\n- 1\n", False),
    "trailing blank": ("nodes:\n  a: x\n  b: y \n", False),
    "CRLF": ("nodes:\r\n  a: x\r\n", False),
    "quotes": ("nodes:\n  a: \"x\"\n  b: c + 'd'\n", False),
    "a flow list inside a flow list": ("inputs: [\nnodes:\n  a: x\n]\n", False),
}


def _as_compared(doc, paths):
    """The data, and every position a reader can ask `doc` for at `paths` (those PyYAML's
    reading keeps: a value's, its key's, its scalar's extent)."""
    if doc is None:
        return None
    values, keys, scalars = paths
    scalar = lambda p: (lambda s: s and (s.start, s.end, s.style))(doc.scalar(p))
    return (doc.data, {p: doc.pos(p) for p in values}, {p: doc.key_pos(p) for p in keys},
            {p: scalar(p) for p in scalars})


def test_nodes_block_read_in_bulk_equals_pyyaml_reading():
    from agrad.graphs.yaml_loader import Document, _bulk_nodes, _load_whole
    for name, (text, bulk) in _BULK_CASES.items():
        assert (_bulk_nodes(text) is not None) is bulk, name
        fast, slow = Collector("f.yaml"), Collector("f.yaml")
        got = load_yaml(text, fast)
        want = _load_whole(text, slow, Document(data=None, source=text))
        if want is not None:
            # positions asked for where nothing is written fall back alike: a missing node, one level deeper
            extra = [("nodes", "missing"), ("nodes", "a", "op"), ("nodes",)]
            paths = (list(want.values) + extra, list(want.keys) + extra, list(want.scalars) + extra)
            assert _as_compared(got, paths) == _as_compared(want, paths), name
        else:
            assert got is None, name
        assert [(d.code, d.message, d.location) for d in fast.diagnostics] == \
               [(d.code, d.message, d.location) for d in slow.diagnostics], name


def test_generated_chain_is_read_in_bulk():
    lines = ["inputs:", "  x: {value: [0.5, -0.25, 1.0], requires_grad: true}", "nodes:", "  n0: x * 1.0"]
    lines += [f"  n{i}: tanh(n{i - 1}) * 0.999 + x" for i in range(1, 300)]
    text = "\n".join(lines + ["  loss: sum(n299)", "backward: loss", "outputs: [loss]"]) + "\n"
    from agrad.graphs.yaml_loader import _bulk_nodes
    assert _bulk_nodes(text) is not None
    doc, problems = load(text)
    assert problems == []
    assert doc.data["nodes"]["n7"] == "tanh(n6) * 0.999 + x"
    assert (doc.key_pos(("nodes", "n7")).line, doc.key_pos(("nodes", "n7")).col) == (11, 3)
    assert (doc.pos(("nodes", "n7")).line, doc.pos(("nodes", "n7")).col) == (11, 7)
    assert list(doc.data) == ["inputs", "nodes", "backward", "outputs"]
