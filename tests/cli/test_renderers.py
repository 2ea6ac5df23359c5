"""Golden tables: the renderers at a fixed width (100 columns, no colour)."""
from __future__ import annotations

from agrad.graphs.results import ExpectResult, TensorSummary
from cli_results import failed_expect, render_text, scalar, seed_check, seed_inspect, seed_profile, seed_run

from agrad.cli.inspect_tables import inspect_view
from agrad.cli.profile_table import profile_view
from agrad.cli.tables import check_view, closing_line, ops_view, run_view
from agrad.cli.tensor_text import value_text


def test_run_table_seed(golden):
    golden("run_seed", render_text(run_view(seed_run())))


def test_run_table_marks_failed_expect_and_unreached_grad(golden):
    result = seed_run(expect=failed_expect(), grads={"a": seed_run().grads["a"], "b": None})
    golden("run_failed_expect", render_text(run_view(result)))


def test_run_table_with_repeat_shows_min_and_median(golden):
    repeat = {phase: {"min": ms, "median": ms * 2} for phase, ms in seed_run().timings_ms.items()}
    golden("run_repeat", render_text(run_view(seed_run(repeat=repeat), passes=5)))


def test_profile_table_pairs_forward_and_backward_per_node(golden):
    golden("profile_seed", render_text(profile_view(seed_profile(), repeat=1, warmup=1)))


def test_inspect_tables_seed(golden):
    golden("inspect_seed", render_text(inspect_view(seed_inspect())))


def test_check_table_failed_leaf(golden):
    golden("check_failed", render_text(check_view(seed_check(passed=False), eps=1e-6, atol=1e-5, rtol=1e-3)))


def test_large_tensor_prints_one_compact_line_by_default_and_everything_with_full():
    big = TensorSummary(shape=[10, 10], dtype="float32", device="cpu", value=[[0.5] * 10] * 10,
                        summary={"min": -1.25, "max": 3.5, "mean": 0.123456, "norm": 12.0}, numel=100)
    assert value_text(big) == "min -1.25  max 3.5  mean 0.1235  norm 12.0"     # 4 significant digits
    lines = value_text(big, values="full").splitlines()
    assert lines[0] == "shape [10, 10]  min -1.25  max 3.5  mean 0.123456  norm 12.0"
    assert lines[1] == "[[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],"
    assert len(lines) == 1 + 10 and "..." not in "".join(lines)          # every value


def test_compact_prints_up_to_eight_values_to_four_digits():
    eight = TensorSummary(shape=[8], dtype="float32", device="cpu", value=[1 / 3] * 7 + [2.0], numel=8)
    assert value_text(eight, width=200) == "[0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 2.0]"
    ints = TensorSummary(shape=[9], dtype="int64", device="cpu", value=list(range(9)), numel=9)
    assert value_text(ints) == "shape [9]"          # no statistics for integers: the shape, not an empty cell


def test_tensor_over_the_json_limit_prints_its_summary_only():
    huge = TensorSummary(shape=[1000, 1000], dtype="float32", device="cpu", value=None,
                         summary={"min": 0.0, "max": 1.0, "mean": 0.5, "norm": 577.0}, numel=10**6)
    assert value_text(huge, values="full") == "shape [1000, 1000]  min 0.0  max 1.0  mean 0.5  norm 577.0"


def test_small_tensor_prints_values_as_numpy_does():
    floats = TensorSummary(shape=[2, 2], dtype="float64", device="cpu", value=[[1.0, 2.5], [3.0, 1e-9]], numel=4)
    ints = TensorSummary(shape=[3], dtype="int64", device="cpu", value=[1, 2, 3], numel=3)
    flags = TensorSummary(shape=[2], dtype="bool", device="cpu", value=[True, False], numel=2)
    assert value_text(floats, values="full") == "[[1.0e+00, 2.5e+00],\n [3.0e+00, 1.0e-09]]"
    assert value_text(ints) == "[1, 2, 3]"
    assert value_text(flags) == "[ True, False]"
    assert value_text(scalar(4.0)) == "4.0"             # a 0-d tensor as Python prints its item


def test_values_wrap_between_items_in_aligned_columns():
    t = TensorSummary(shape=[12], dtype="float32", device="cpu", value=[-1.5, 2.25] * 6, numel=12)
    lines = value_text(t, width=30, values="full").splitlines()
    assert all(len(line) <= 30 for line in lines) and len(lines) > 1
    assert lines[1].startswith(" ") and lines[1].split(",")[0].strip() in ("-1.5 ", "-1.5", "2.25")


def test_sixty_four_elements_still_print_in_full():
    t = TensorSummary(shape=[64], dtype="int32", device="cpu", value=list(range(64)), numel=64)
    text = value_text(t, values="full")
    assert text.startswith("[ 0,  1,  2") and text.endswith("63]") and "..." not in text


def test_closing_line_is_exact():
    assert closing_line(3, 0) == "3 passed, 0 failed"
    assert closing_line(1, 1) == "1 passed, 1 failed"


def test_no_expect_means_no_expect_line():
    text = render_text(run_view(seed_run(expect=ExpectResult(passed=True, checked=False))))
    assert "expect" not in text


class StandInOp:
    """The registry entry's fields `agrad ops` reads (agrad.dispatcher.OperatorEntry)."""

    def __init__(self, name, schema, keys, has_backward, doc=""):
        self.name, self.schema, self._keys, self.has_backward, self.doc = name, schema, keys, has_backward, doc

    def keys(self):
        return self._keys


def test_ops_table(golden):
    entries = [StandInOp("add", "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                         ["CPU", "CUDA", "Meta", "Autograd"], True),
               StandInOp("eq", "eq(Tensor self, Tensor other) -> Tensor", ["CPU", "CUDA", "Meta"], False)]
    golden("ops", render_text(ops_view(entries)))
