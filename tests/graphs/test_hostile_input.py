"""Hostile and absurd graph files (issue 8): refused before the work, with a located
error; every value checked against the dtype it will become."""
from __future__ import annotations

import io
import json
import os
import threading
import zipfile

import numpy as np
import pytest

from agrad import graphs
from agrad import _npy_headers as npy_headers
from agrad.graphs.yaml_loader import MAX_ALIAS_VALUES, MAX_DEPTH
from graph_helpers import read_text, where


def problems(path):
    return [(d.code, d.location.line if d.location else None) for d in graphs.validate(path)]


def only_error(path):
    diagnostics = graphs.validate(path)
    assert len(diagnostics) == 1, diagnostics
    return diagnostics[0]


# ---- YAML: aliases, depth, numbers ----------------------------------------------------------

def test_billion_laughs_is_refused_at_the_alias_that_crosses_the_limit():
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    _, diagnostics = read_text("\n".join(lines) + "\nnodes: {}\n")
    # the aliases of a4 (line 5) repeat about 9**5 values: past the limit, long before 9**9
    assert 9 ** 4 < MAX_ALIAS_VALUES < 9 ** 5
    assert [(d.code, d.location.line) for d in diagnostics] == [("AG001", 5)]
    assert "aliases" in diagnostics[0].message


def test_a_few_aliases_still_work():
    spec, diagnostics = read_text("""\
        base: &b {shape: [2], init: ones, requires_grad: true}
        inputs: {x: *b, y: *b}
        nodes: {z: x + y}
        """)
    assert [d.code for d in diagnostics] == ["AG004"]           # only `base`, an unknown top key
    assert spec.inputs["x"].shape == spec.inputs["y"].shape == (2,)


@pytest.mark.parametrize("open_, close", [("[", "]"), ("{a: ", "}")])
def test_yaml_nested_600_deep_is_a_located_error(graph_file, open_, close):
    path = graph_file("nodes: {}\nd: " + open_ * 600 + close * 600 + "\n")
    error = only_error(path)
    assert (error.code, error.location.line) == ("AG001", 2)
    assert f"{MAX_DEPTH} levels" in error.message


@pytest.mark.parametrize("expression", ["neg(" * 3000 + "x" + ")" * 3000, "-" * 5000 + "x", "x" + " + x" * 5000,
                                        "[" * 3000 + "x" + "]" * 3000])
def test_expressions_nested_thousands_deep_are_located_errors(graph_file, expression):
    path = graph_file(f"inputs: {{x: 1.0}}\nnodes:\n  a: '{expression}'\n")
    error = only_error(path)
    assert error.code in ("AG014", "AG015") and error.location.line == 3


def test_exponent_without_a_dot_is_a_number():
    spec, diagnostics = read_text("inputs: {x: {shape: [2], init: uniform, low: -1e-3, high: 1E3}}\nnodes: {}\n")
    assert diagnostics == []
    assert spec.inputs["x"].params == {"low": -0.001, "high": 1000.0}


def test_a_float_beyond_float64_is_an_error_not_inf():
    _, diagnostics = read_text("inputs: {x: 1e400, y: .inf, z: -2.5e-400}\nnodes: {}\n")
    assert where(diagnostics) == [("AG005", 1, 13)]


def test_yaml_12_floats_are_numbers():
    spec, diagnostics = read_text("inputs: {x: [1.0e39, .5e1, 1e-3, 2E+2]}\nnodes: {}\n")
    assert diagnostics == [] and spec.inputs["x"].value == [1e39, 5.0, 0.001, 200.0]


# ---- sizes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", ["split(x, 1)", "unbind(x, 0)", "chunk(x, 100000000)", "chunk(y, 100000000)",
                                  ])
def test_ops_asked_for_millions_of_outputs_are_refused_on_meta(graph_file, call):
    path = graph_file(f"inputs: {{x: {{shape: [100000000, 0], init: zeros}}, y: {{shape: [0], init: zeros}}}}\n"
                      f"nodes:\n  a: {call}\noutputs: [a]\n")
    error = only_error(path)
    assert (error.code, error.location.line) == ("AG025", 3)
    assert "100,000,000 tensors" in error.message


@pytest.mark.parametrize("shape, words", [("[100000000000000000000, 1]", "int64"),
                                          ("[4000000000, 4000000000, 4000000000]", "int64"),
                                          (str([1] * 65), "dimensions")])
def test_shapes_beyond_int64_or_numpy_are_located_errors(graph_file, shape, words):
    error = only_error(graph_file(f"inputs:\n  x: {{shape: {shape}, init: zeros}}\nnodes: {{a: neg(x)}}\n"))
    assert (error.code, error.location.line) == ("AG012", 2) and words in error.message


def test_a_70_dimensional_literal_is_a_located_error(graph_file):
    value = 0.0
    for _ in range(70):
        value = [value]
    error = only_error(graph_file(f"inputs:\n  x: {json.dumps(value)}\nnodes: {{a: neg(x)}}\n"))
    assert (error.code, error.location.line) == ("AG012", 2) and "70 dimensions" in error.message


def test_a_huge_dimension_with_zero_elements_runs(graph_file):
    path = graph_file("inputs: {x: {shape: [1000000000000, 0], init: zeros}}\nnodes: {a: neg(x)}\n")
    out = graphs.load(path).run().result().outputs["a"]
    assert out.shape == [10 ** 12, 0] and out.numel == 0 and out.value is None


# ---- input files -------------------------------------------------------------------------------

def _npz_graph(graph_file, name="a.npz"):
    return graph_file(f"inputs: {{x: {{file: {name}, key: a, requires_grad: true}}}}\n"
                      "nodes: {s: sum(x * x)}\nbackward: s\n")


def test_a_compressed_npz_bomb_is_refused_from_its_header(graph_file, monkeypatch):
    path = _npz_graph(graph_file)
    np.savez_compressed(path.parent / "a.npz", a=np.zeros(2 ** 18))      # 2 MiB of zeros in ~2 KiB
    monkeypatch.setattr(npy_headers, "BOMB_BYTES", 2 ** 20)
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("the data was read"))
    error = only_error(path)
    assert (error.code, error.location.line) == ("AG013", 1) and "zip bomb" in error.message


def test_validate_reads_only_the_npz_header_and_run_reads_the_data(graph_file, monkeypatch):
    path = _npz_graph(graph_file)
    np.savez_compressed(path.parent / "a.npz", a=np.array([1.0, 2.0]))
    real_load = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("the data was read"))
    assert graphs.validate(path) == []
    monkeypatch.setattr(np, "load", real_load)
    run = graphs.load(path).run().result()
    assert run.grads["x"].value == [2.0, 4.0]


def test_an_npz_whose_header_disagrees_with_its_size_is_refused(graph_file):
    path = _npz_graph(graph_file)
    member = io.BytesIO()
    np.save(member, np.arange(4.0))
    with zipfile.ZipFile(path.parent / "a.npz", "w") as archive:     # a header for 9 values over data for 4
        archive.writestr("a.npy", member.getvalue().replace(b"(4,)", b"(9,)", 1))
    error = only_error(path)
    assert error.code == "AG013" and "72 bytes" in error.message


# NumPy parses an .npy header's text with tokenize, literal_eval and descr_to_dtype, which raise what a
# hostile text makes them: each is a file that cannot be read, never an internal error
_HOSTILE_HEADERS = {
    "unbalanced": ((b"(2, 3)", b"(2, 3 "), "TokenError"),
    "descr a tuple": ((b"'<f8'", b"('<f8',)"), "IndexError"),
    "descr a list": ((b"'<f8'", b"[1, 'a']"), "not a valid dtype"),
    "size past int64": ((b"(2, 3), }    ", b"(4294967296, 4294967296, 16), }"), "declares"),
    "data cut short": ((b"(2, 3)", b"(9, 3)"), "declares 216 bytes of data but holds 48"),
    "a bool dimension": ((b"(2, 3), }   ", b"(True, 3), }"), "is not sizes >= 0"),
    "a negative dimension": ((b"(2, 3), } ", b"(-2, 3), }"), "is not sizes >= 0"),
}


@pytest.mark.parametrize("case", sorted(_HOSTILE_HEADERS))
def test_an_npy_header_numpy_cannot_parse_is_a_file_that_cannot_be_read(graph_file, case):
    (old, new), needle = _HOSTILE_HEADERS[case]
    member = io.BytesIO()
    np.save(member, np.ones((2, 3)))
    path = graph_file("inputs: {x: {file: x.npy, requires_grad: true}}\nnodes: {s: sum(x * x)}\nbackward: s\n")
    (path.parent / "x.npy").write_bytes(member.getvalue().replace(old, new, 1))
    error = only_error(path)
    assert error.code == "AG013" and "cannot read x.npy" in error.message and needle in error.message
    # training data is read through the same header check
    from agrad.graphs.data_sources import read_array
    with pytest.raises(ValueError, match="not an .npy array header|not a valid dtype|declares"):
        read_array(path.parent / "x.npy", None)


def test_an_encrypted_npz_member_is_refused(graph_file):
    path = _npz_graph(graph_file)
    member = io.BytesIO()
    np.save(member, np.arange(4.0))
    with zipfile.ZipFile(path.parent / "a.npz", "w") as archive:
        archive.writestr("a.npy", member.getvalue())
    raw = bytearray((path.parent / "a.npz").read_bytes())
    for at in (6, raw.rindex(b"PK\x01\x02") + 8):      # the encrypted flag of the local header and of the directory
        raw[at] |= 1
    (path.parent / "a.npz").write_bytes(bytes(raw))
    error = only_error(path)
    assert error.code == "AG013" and "encrypted" in error.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_device_as_input_file_does_not_block(graph_file):
    path = graph_file("inputs: {x: {file: pipe.npy}, y: {file: zero.npy}}\nnodes: {a: x + y}\n")
    os.mkfifo(path.parent / "pipe.npy")
    os.symlink("/dev/zero", path.parent / "zero.npy")
    found = []
    worker = threading.Thread(target=lambda: found.extend(graphs.validate(path)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "validate blocked on a FIFO"
    assert [(d.code, "regular file" in d.message) for d in found] == [("AG013", True)] * 2


@pytest.mark.parametrize("order", [">", "<"])
def test_npy_and_npz_in_either_byte_order_load_correctly(graph_file, order):
    path = graph_file("inputs:\n  x: {file: x.npy, requires_grad: true}\n  k: {file: k.npz, key: a}\n"
                      "nodes: {s: sum(x * x * k)}\nbackward: s\n")
    np.save(path.parent / "x.npy", np.array([1.0, -2.0], dtype=f"{order}f8"))
    np.savez_compressed(path.parent / "k.npz", a=np.array([3, 4], dtype=f"{order}i4"))
    result = graphs.load(path).run().result()
    assert result.outputs["s"].value == 19.0
    assert result.grads["x"].value == [6.0, -16.0]


# ---- values against their dtypes ----------------------------------------------------------------

@pytest.mark.parametrize("entry, words", [
    ("{dtype: float64, value: [1.0, 1" + "0" * 400 + "]}", "float64"),
    ("{value: [[1, 2], [3, 4294967296]], dtype: int32}", "int32"),
    ("{value: 70000.0, dtype: float16}", "float16"),
    ("{shape: [2], init: full, fill: 4294967296, dtype: int32}", "int32"),
    ("{shape: [2], init: full, fill: .nan, dtype: int64}", "int64"),
])
def test_input_values_must_fit_their_dtype(graph_file, entry, words):
    error = only_error(graph_file(f"inputs:\n  x: {entry}\nnodes: {{a: neg(x)}}\n"))
    assert (error.code, error.location.line) == ("AG012", 2)
    assert f"does not fit {words}" in error.message and "range is" in error.message


def test_the_out_of_range_element_is_pointed_at(graph_file):
    error = only_error(graph_file("inputs:\n  x: {dtype: int32, value: [[1, 2],\n     [3, 4294967296]]}\n"
                                  "nodes: {a: neg(x)}\n"))
    assert (error.location.line, error.location.col) == (3, 10)


def test_the_command_line_dtype_is_the_one_checked(graph_file):
    path = graph_file("inputs: {x: [1, 40000]}\nnodes: {a: neg(x)}\n")
    assert graphs.validate(path) == []
    assert [d.code for d in graphs.validate(path, dtype="float16")] == []
    assert [d.code for d in graphs.validate(path, dtype="int32")] == []
    path.write_text("inputs: {x: [1, 70000]}\nnodes: {a: neg(x)}\n")
    assert [d.code for d in graphs.validate(path, dtype="float16")] == ["AG012"]


@pytest.mark.parametrize("expect, code", [
    ("{outputs: {a: 100000000000000000000000000000}}", "AG030"),
    ("{atol: 1e400, outputs: {a: -1}}", "AG005"),
    ("{atol: " + "1" * 400 + ", outputs: {a: -1}}", "AG005"),
    ("{atol: .nan, outputs: {a: -1}}", "AG005"),
    ("{rtol: -1.0, outputs: {a: -1}}", "AG005"),
])
def test_expected_values_and_tolerances_are_checked(graph_file, expect, code):
    path = graph_file(f"inputs: {{x: {{value: 1, dtype: int64}}}}\nnodes: {{a: neg(x)}}\nexpect: {expect}\n")
    assert {(d.code, d.location.line) for d in graphs.validate(path)} == {(code, 3)}


def test_grad_tensors_literals_must_fit_the_roots_dtype(graph_file):
    path = graph_file("inputs: {x: {value: [1.0], dtype: float32, requires_grad: true}}\nnodes: {a: x * 2}\n"
                      "backward: {of: a, grad_tensors: [[1.0e39]]}\n")
    assert problems(path) == [("AG028", 3)]


@pytest.mark.parametrize("call, code", [("add(x, 100000000000000000000000000000)", "AG019"),
                                        ("clamp(x, max=-1e999)", "AG019"),
                                        ('to(x, device="meta")', "AG009"), ('to(x, "meta")', "AG009")])
def test_op_arguments_are_checked_where_written(graph_file, call, code):
    error = only_error(graph_file(f"inputs: {{x: [1.0]}}\nnodes:\n  a: '{call}'\n"))
    assert (error.code, error.location.line) == (code, 3)


@pytest.mark.parametrize("entry", ["{low: .nan}", "{high: .inf}", "{low: -.inf}"])
def test_uniform_bounds_must_be_finite(graph_file, entry):
    path = graph_file(f"inputs:\n  x: {{shape: [2], init: uniform, {entry[1:-1]}}}\nnodes: {{a: neg(x)}}\n")
    assert problems(path) == [("AG005", 2)]


def test_normal_parameters_must_be_finite(graph_file):
    path = graph_file("inputs:\n  x: {shape: [2], init: normal, std: .nan}\nnodes: {a: neg(x)}\n")
    assert problems(path) == [("AG005", 2)]


@pytest.mark.parametrize("call", ["dropout(x, 0.5, True, seed=-1)", "bernoulli(sigmoid(x), seed=-1)",
                                  "normal(x, 1.0, seed=-1)", "poisson(abs(x), seed=-1)",
                                  "binomial(abs(x), sigmoid(x), seed=-1)", "multinomial(abs(x), 1, seed=-1)",
                                  "randint_like(x, 5, seed=-1)", "rrelu(x, training=True, seed=-1)",
                                  "rand_like(x, seed=-1)", "randn_like(x, seed=-1)"])
def test_a_negative_seed_of_a_random_op_is_found_on_meta(graph_file, call):
    # (NumPy's default_rng raised "expected non-negative integer" from the kernel: exit 3, not the file's error)
    path = graph_file(f"inputs: {{x: {{shape: [2], init: ones}}}}\nnodes:\n  a: {call}\n")
    error = only_error(path)
    assert (error.code, error.location.line) == ("AG025", 3)
    assert f"{call.split('(')[0]} seed must be a non-negative integer, but got -1" in error.message


@pytest.mark.parametrize("call", ["multinomial(abs(x), 1000000000000, True)",
                                  "multinomial(abs(x), 9223372036854775807, True)",
                                  "normal(expand(x, [1000000000, 1000000000]), 1.0)",
                                  "poisson(expand(abs(x), [1000000000, 1000000000]))"])
def test_a_sampling_result_larger_than_memory_is_refused_before_running(graph_file, call):
    path = graph_file(f"inputs: {{x: {{shape: [1], init: ones}}}}\nnodes:\n  a: {call}\n")
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graphs.load(path).run()
    d = info.value.diagnostic
    assert (d.code, d.location.line) == ("AG044", 3) and "nothing was run" in d.message


@pytest.mark.parametrize("call, message", [
    ("binomial(x * 1e30, sigmoid(x))", "invalid binomial count, agrad samples counts below 9.22337e+18, got 1e+30"),
    ("normal(x, log(x - 2))", "normal expects all elements of std >= 0.0"),       # a NaN std, as ATen's check
    ("poisson(x * 1e300 * 1e300)", "invalid Poisson rate")])
def test_a_sampling_parameter_out_of_range_is_a_located_runtime_error(graph_file, call, message):
    path = graph_file(f"inputs: {{x: {{shape: [2], init: ones}}}}\nnodes:\n  a: {call}\n")
    with pytest.raises(graphs.GraphRuntimeError) as info:
        graphs.load(path).run()
    d = info.value.diagnostic
    assert (d.code, d.location.line) == ("AG041", 3) and message in d.message and "Error:" not in d.message


def test_a_generator_in_a_graph_file_points_at_seed(graph_file):
    error = only_error(graph_file("inputs: {x: [1.0]}\nnodes:\n  a: normal(x, 1.0, generator=None)\n"))
    assert (error.code, error.location.line) == ("AG017", 3)
    assert "unexpected keyword argument 'generator'" in error.message and error.hint == "'seed'"


@pytest.mark.parametrize("text", ["device: meta\ninputs: {x: 1.0}\nnodes: {a: neg(x)}\n",
                                  "inputs: {x: {value: 1.0, device: meta}}\nnodes: {a: neg(x)}\n"])
def test_device_meta_is_rejected_where_written(graph_file, text):
    error = only_error(graph_file(text))
    assert (error.code, error.location.line) == ("AG009", 1) and "meta" in error.message


# ---- misuses -----------------------------------------------------------------------------------

@pytest.mark.parametrize("node", ["'getitem(x, 0)'", "'neg(getitem(x, 0))'", "{op: getitem, args: [x, 0]}"])
def test_the_subscript_op_cannot_be_called_by_name(graph_file, node):
    error = only_error(graph_file(f"inputs: {{x: [1.0, 2.0]}}\nnodes:\n  a: {node}\n"))
    assert (error.code, error.location.line) == ("AG016", 3) and "x[0]" in error.message


def test_a_multi_output_node_as_the_last_node_is_a_located_error(graph_file):
    error = only_error(graph_file("inputs: {x: {shape: [4], init: ones}}\nnodes:\n  a: split(x, 2)\n"))
    assert (error.code, error.location.line) == ("AG022", 3) and "outputs:" in error.message


def test_transpose_of_a_0d_tensor_is_found_on_meta(graph_file):
    error = only_error(graph_file("inputs: {x: 1.0}\nnodes:\n  a: transpose(x, 0, 1)\n"))
    assert (error.code, error.location.line) == ("AG023", 3) and "Dimension out of range" in error.message
    assert graphs.validate(graph_file("inputs: {x: 1.0}\nnodes:\n  a: transpose(x, 0, -1)\n")) == []


def test_an_integer_input_that_requires_grad_is_a_located_error(graph_file):
    error = only_error(graph_file("inputs:\n  x: {value: [1, 2], dtype: int64, requires_grad: true}\n"
                                  "nodes: {a: sum(x)}\nbackward: a\n"))
    assert (error.code, error.location.line) == ("AG012", 2) and "floating point" in error.message


_EXITING_PLUGIN = '''
import sys
import agrad
from agrad import library

library.define("hostile_{tag}::f(Tensor x) -> Tensor")
library.impl("hostile_{tag}::f", "CPU", lambda x: {forward})
library.impl("hostile_{tag}::f", "Meta", lambda x: agrad.empty(x.shape, dtype=x.dtype, device="meta"))
library.register_autograd("hostile_{tag}::f", lambda ctx, grad: sys.exit(5))
'''


@pytest.mark.parametrize("tag, forward, line", [("fwd", "sys.exit(7)", 3), ("bwd", "x * 3", 3)])
def test_a_plugin_kernel_that_exits_is_a_located_runtime_failure(tmp_path, graph_file, tag, forward, line):
    plugin = tmp_path / f"exiting_{tag}.py"
    plugin.write_text(_EXITING_PLUGIN.format(tag=tag, forward=forward))
    path = graph_file(f"inputs: {{x: {{value: [1.0], requires_grad: true}}}}\n"
                      f"nodes:\n  a: {{op: 'hostile_{tag}::f', args: [x]}}\n  s: sum(a)\nbackward: s\n")
    graph = graphs.load(path, plugins=[plugin])
    for attempt in (graph.run, graph.check):
        with pytest.raises(graphs.GraphRuntimeError) as caught:
            attempt()
        assert (caught.value.code, caught.value.location.line) == ("AG045", line)
        assert "SystemExit" in str(caught.value)


@pytest.mark.parametrize("body, said", [("raise GeneratorExit\n", "raised GeneratorExit"),
                                        ("\nclass Odd(BaseException):\n    pass\nraise Odd('odd')\n",
                                         "raised Odd: odd")])
def test_a_plugin_raising_a_base_exception_is_a_diagnostic_at_its_line(tmp_path, graph_file, body, said):
    # not an Exception, and not the Ctrl-C that KeyboardInterrupt is: the plugin's failure, not a traceback
    plugin = tmp_path / f"odd_{len(body)}.py"
    plugin.write_text(body)
    [found] = graphs.validate(graph_file("inputs: {x: 1.0}\nnodes: {a: neg(x)}\n"), plugins=[plugin])
    assert (found.code, found.location.line) == ("AG032", body.count("\n")) and said in found.message


def test_what_a_plugin_prints_as_it_loads_goes_to_stderr(tmp_path, capsys):
    # stdout holds the command's own output: a JSON document under --format json, which a
    # plugin's print would have spoiled
    plugin = tmp_path / "chatty.py"
    plugin.write_text("print('registered my ops')\n")
    graphs.load_plugin(plugin)
    assert capsys.readouterr() == ("", "registered my ops\n")
