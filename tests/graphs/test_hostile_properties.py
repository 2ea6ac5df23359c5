"""Property tests for the open-ended classes of hostile input (issue 8), each bounded
to a few seconds: nesting depth, alias expansion, numbers against dtypes, and the
number of outputs an op is asked for."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrad import graphs
from agrad.graphs.diagnostics import Collector
from agrad.graphs.values import dtype_range
from agrad.graphs.yaml_loader import MAX_ALIAS_VALUES, MAX_DEPTH, load_yaml
from agrad.ops.shape import join as joining

FIXTURES = [HealthCheck.function_scoped_fixture]


def _load(text):
    collector = Collector("f.yaml")
    doc = load_yaml(text, collector)
    return doc, [d.code for d in collector.diagnostics]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["[", "{k: "]), min_size=1, max_size=3 * MAX_DEPTH))
def test_any_nesting_loads_or_is_refused_at_the_depth_limit(openers):
    closers = "".join("]" if o == "[" else "}" for o in reversed(openers))
    doc, codes = _load("a: " + "".join(openers) + "1" + closers + "\n")
    if len(openers) + 1 > MAX_DEPTH:          # the top mapping is one level
        assert codes == ["AG001"] and doc is None
    else:
        assert codes == [] and doc is not None


@settings(max_examples=40, deadline=None)
@given(levels=st.integers(1, 12), width=st.integers(1, 12))
def test_alias_expansion_is_refused_exactly_when_it_passes_the_limit(levels, width):
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    size, charged = 1 + width, 0                # values in the anchor at each level, values repeated by aliases
    for _ in range(1, levels):
        charged += width * size
        size = 1 + width * size
    _, codes = _load("\n".join(lines) + "\n")
    assert codes == (["AG001"] if charged > MAX_ALIAS_VALUES else [])


NUMBERS = st.one_of(st.integers(-2 ** 80, 2 ** 80), st.integers(-2 ** 33, 2 ** 33),
                    st.floats(allow_nan=True, allow_infinity=True), st.booleans())


def _yaml_number(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value)


def _representable(value, dtype: str) -> bool:
    bounds = dtype_range(dtype)
    if bounds is None or isinstance(value, bool):
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return dtype.startswith("float")
    return bounds[0] <= value <= bounds[1]


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(values=st.lists(NUMBERS, min_size=1, max_size=4),
       dtype=st.sampled_from(["float16", "float32", "float64", "int32", "int64", "bool"]))
def test_every_literal_is_exact_or_refused_naming_its_dtype(graph_file, values, dtype):
    path = graph_file(f"inputs:\n  x: {{dtype: {dtype}, value: [{', '.join(map(_yaml_number, values))}]}}\n"
                      "nodes: {a: 'x[0:1]'}\noutputs: [x]\n")
    diagnostics = graphs.validate(path)
    if all(_representable(v, dtype) for v in values):
        assert diagnostics == []
        got = graphs.load(path).run().outputs["x"].numpy()
        want = np.array(values, dtype=np.bool_ if dtype == "bool" else dtype)
        np.testing.assert_array_equal(got, want)
    else:
        assert [(d.code, d.location.line) for d in diagnostics] == [("AG012", 2)]
        assert f"does not fit {dtype}" in diagnostics[0].message


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(size=st.integers(0, 10 ** 12), arg=st.integers(1, 10 ** 12),
       call=st.sampled_from(["split(x, {arg})", "chunk(x, {arg})", "unbind(x, 0)"]))
def test_asking_for_any_number_of_outputs_is_answered_on_meta(graph_file, monkeypatch, size, arg, call):
    monkeypatch.setattr(joining, "MAX_PIECES", 1000)       # the same rule, with fewer pieces to make
    path = graph_file(f"inputs: {{x: {{shape: [{size}, 0], init: zeros}}}}\n"
                      f"nodes:\n  a: {call.format(arg=arg)}\noutputs: [x]\n")
    if call.startswith("split"):
        pieces = max(-(-size // arg), 1)
    elif call.startswith("chunk"):
        pieces = arg if size == 0 else -(-size // -(-size // arg))
    else:
        pieces = size
    diagnostics = graphs.validate(path)
    assert [d.code for d in diagnostics] == (["AG025"] if pieces > joining.MAX_PIECES else [])
