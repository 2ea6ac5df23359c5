"""onnx's own conformance cases through agrad import: the node cases of the ops PyTorch's exporters
write and the model folders the onnx wheel ships (pytorch-converted, pytorch-operator, simple; not
`light`, whose CNNs take minutes), each imported, run and compared with its expected outputs by
bench/onnx_conformance.py. The cases agrad does not pass are listed in NOT_PASSING with why; the
tests check that every other case passes and that each listed one still does not (a listed case
that starts passing must leave the list), so the list cannot rot.
"""
from __future__ import annotations

import fnmatch
import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")

_PATH = Path(__file__).resolve().parents[2] / "bench" / "onnx_conformance.py"
_spec = importlib.util.spec_from_file_location("onnx_conformance", _PATH)
conformance = sys.modules.setdefault("onnx_conformance", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(conformance)

_NO_DTYPE = "agrad has no dtype {} (torch's exporters do not write it either)"

# case name (an fnmatch pattern) -> why agrad does not pass it
NOT_PASSING = {
    "test_*uint16*": _NO_DTYPE.format("uint16"),
    "test_*uint32*": _NO_DTYPE.format("uint32"),
    "test_*uint64*": _NO_DTYPE.format("uint64"),
    "test_bitwise_*_ui64_*": _NO_DTYPE.format("uint64"),
    "test_bitwise_not_3d": _NO_DTYPE.format("uint16"),
    "test_*bfloat16*": _NO_DTYPE.format("bfloat16"),
    "test_equal_string*": "string tensors",
    "simple/test_strnorm_*": "string tensors (StringNormalizer)",
    "test_nonzero_example": "NonZero: an output whose shape depends on the data",
    "simple/test_expand_shape_model*": "an Expand to a shape computed from the data",
    # onnxruntime maps align_corners through the whole output size, onnx's reference through the unrounded
    # input size * scale; agrad follows onnxruntime, which exporters' users check their models with
    "test_resize_downsample_scales_*_align_corners": "align_corners on inexact scales: onnxruntime's, not the reference's",
}


def _listed(name: str) -> str | None:
    return next((why for pattern, why in NOT_PASSING.items() if fnmatch.fnmatchcase(name, pattern)), None)


@pytest.fixture(scope="module")
def outcomes():
    cases = conformance.node_cases() + conformance.data_cases(("pytorch-converted", "pytorch-operator", "simple"))
    return {o.case.name: o for o in conformance.run_cases(cases)}


def test_every_case_not_listed_passes(outcomes):
    assert len(outcomes) > 900
    wrong = [f"{name}: {o.status}: {o.reason}" for name, o in outcomes.items() if o.status != "pass" and not _listed(name)]
    assert not wrong, "\n".join(wrong)


def test_every_listed_case_still_does_not_pass(outcomes):
    for pattern in NOT_PASSING:
        matched = [name for name in outcomes if fnmatch.fnmatchcase(name, pattern)]
        assert matched, f"{pattern} names no case any more"
        passing = [name for name in matched if outcomes[name].status == "pass"]
        assert not passing, f"{passing} pass now: take them off NOT_PASSING"


def test_what_is_not_imported_is_refused_with_a_located_reason(outcomes):
    # a model agrad cannot translate is a ModelError naming the node and why, never a crash of the importer
    crashed = [f"{name}: {o.reason}" for name, o in outcomes.items() if "crashed" in o.reason]
    assert not crashed, "\n".join(crashed)
    for name, o in outcomes.items():
        if o.status == "refused":
            assert all(p.startswith("model.onnx: ") for p in o.problems), (name, o.problems)
