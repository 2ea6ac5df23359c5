"""ONNX import conformance: models through `agrad import`'s importer, outputs against the expected ones.

    PYTHONPATH=... python bench/onnx_conformance.py [--only node,data,fixtures] [--op Conv] [--case NAME]
                                                     [--verbose] [--json OUT.json]

Cases, each a model, its inputs and the outputs it should give:
- `data`: the model folders the onnx wheel ships (onnx/backend/test/data/{pytorch-converted,
  pytorch-operator,simple,light}): model.onnx and test_data_set_*/{input,output}_*.pb; `light` models
  have their output only, their inputs made as onnx's runner makes them (arange / size, float32);
  `real` models are URLs, skipped;
- `node`: onnx's node test cases (`onnx.backend.test.case.node.collect_testcases()`, their expanded
  function bodies too), for the ops PyTorch's exporters write (`TORCH_OPS`). An input that the op
  takes as a shape, axes, sizes or bound (`IMPORT_TIME_INPUTS`, by its name in the op's schema) is
  given as an initializer, as the exporters write it: agrad needs it at import time. A sequence input
  or output (a list of arrays) becomes its elements, made static as an exporter makes it: one input
  each and a SequenceConstruct of them, or a SequenceAt of each (`_sequences_as_tensors`);
- `fixtures`: tests/onnx/fixtures/NAME.EXPORTER.onnx, torch modules exported by torch's two exporters
  (tests/onnx/make_onnx_fixtures.py), against onnxruntime's outputs kept beside them.

Each case is imported with `import_model` (what `agrad import` runs), the graph loaded and run with
the case's inputs, and every output compared (rtol 1e-3, atol 1e-5, or the case's own looser ones,
as onnx's backend runner does). A case passes, fails (wrong output, or an error that is a bug), or is
refused (ModelError: agrad says it cannot express a node). The non-passes are listed by op.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "onnx" / "fixtures"
RTOL, ATOL = 1e-3, 1e-5
TIMEOUT_S = 180         # (light_densenet121 takes ~40 s on a free core)

# The ops torch.onnx.export writes (torch/onnx/_internal/exporter/_torchlib and the TorchScript
# symbolic_opset* functions), so the node cases worth passing.
TORCH_OPS = frozenset("""
Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool BatchNormalization BitShift BitwiseAnd
BitwiseNot BitwiseOr BitwiseXor Cast CastLike Ceil Celu Clip Concat Constant ConstantOfShape Conv ConvTranspose
Cos Cosh CumSum DepthToSpace Div Dropout Einsum Elu Equal Erf Exp Expand EyeLike Flatten Floor Gather
GatherElements GatherND Gelu Gemm GlobalAveragePool GlobalMaxPool Greater GreaterOrEqual GridSample GroupNormalization GRU
HardSigmoid HardSwish Hardmax Identity InstanceNormalization IsInf IsNaN LayerNormalization LeakyRelu Less LessOrEqual
Log LogSoftmax LpNormalization LSTM MatMul Max MaxPool Mean Min Mish Mod Mul Neg NonZero Not OneHot Or Pad Pow PRelu
Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum
ReduceSumSquare Relu Reshape Resize RNN Round ScatterElements ScatterND Selu Shape Sigmoid Sign Sin Sinh Size Slice
Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Trilu
Unsqueeze Where Xor NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss Upsample Col2Im STFT DFT Loop SequenceAt SequenceConstruct
SequenceEmpty SequenceErase SequenceInsert SequenceLength SplitToSequence ConcatFromSequence
""".split())

# Inputs (by their name in the op's schema) that exporters write as constants and agrad needs at
# import time: shapes, axes, sizes, bounds.
IMPORT_TIME_INPUTS = frozenset({"shape", "axes", "starts", "ends", "steps", "pads", "constant_value", "roi", "scales",
                                "sizes", "split", "repeats", "K", "k", "axis", "depth", "values", "min", "max", "start",
                                "limit", "delta", "ratio", "training_mode", "image_shape", "block_shape",
                                "output_shape", "sequence_lens", "frame_step", "frame_length", "M", "cond",
                                "position", "dft_length"})

DATA_KINDS = ("pytorch-converted", "pytorch-operator", "simple", "light")


@dataclass
class Case:
    name: str
    source: str                   # node | data | fixtures
    op: str                       # the op under test (node cases), else "model"
    model: object                 # a ModelProto
    inputs: dict                  # graph input name -> array
    outputs: list                 # expected arrays, in graph output order
    rtol: float = RTOL
    atol: float = ATOL


@dataclass
class Outcome:
    case: Case
    status: str                   # pass | fail | refused
    op: str                       # where it went wrong: the refused node's op, or the case's op
    reason: str = ""
    seconds: float = 0.0
    problems: list = field(default_factory=list)


# ---- the cases -----------------------------------------------------------------------------------

def _array(tensor):
    from onnx import numpy_helper

    return numpy_helper.to_array(tensor) if not isinstance(tensor, np.ndarray) else tensor


def _read_pb(path: Path):
    import onnx
    from onnx import numpy_helper

    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def _data_inputs(model) -> list:
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def data_cases(kinds=DATA_KINDS) -> list[Case]:
    import onnx
    from onnx.backend.test.loader import DATA_DIR
    from onnx.backend.test.runner import Runner

    cases = []
    for kind in kinds:
        folder = Path(DATA_DIR) / kind
        if kind == "light":
            for path in sorted(folder.glob("*.onnx")):
                model = onnx.load(str(path))
                outputs = [path.with_name(f"{path.stem}_output_{i}.pb") for i in range(len(model.graph.output))]
                if not all(o.exists() for o in outputs):
                    continue
                inputs = {x.name: Runner.generate_dummy_data(x, name=path.stem) for x in _data_inputs(model)}
                cases.append(Case(f"light/{path.stem}", "data", "model", model, inputs,
                                  [_read_pb(o) for o in outputs]))
            continue
        for case_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            if not (case_dir / "model.onnx").exists():
                continue
            model = onnx.load(str(case_dir / "model.onnx"))
            rtol, atol = RTOL, ATOL
            if (case_dir / "data.json").exists():
                data = json.loads((case_dir / "data.json").read_text())
                rtol, atol = max(rtol, data.get("rtol", rtol)), max(atol, data.get("atol", atol))
            names = [x.name for x in _data_inputs(model)]
            for data_dir in sorted(case_dir.glob("test_data_set_*")):
                ins = sorted(data_dir.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
                outs = sorted(data_dir.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
                if not outs:
                    continue
                cases.append(Case(f"{kind}/{case_dir.name}/{data_dir.name}", "data", "model", model,
                                  dict(zip(names, (_read_pb(p) for p in ins))), [_read_pb(p) for p in outs],
                                  rtol, atol))
    return cases


def _constant_inputs(model, inputs: dict) -> tuple[object, dict]:
    """The model with its import-time inputs (IMPORT_TIME_INPUTS) as initializers, and the rest of
    its inputs."""
    import onnx
    from onnx import numpy_helper

    wanted = set()
    for node in model.graph.node:
        try:
            schema = onnx.defs.get_schema(node.op_type, max(o.version for o in model.opset_import
                                                            if o.domain in ("", "ai.onnx")), node.domain)
        except Exception:            # noqa: BLE001 - an op onnx does not know: nothing to move
            continue
        formal = [i.name for i in schema.inputs]
        for i, name in enumerate(node.input):
            position = min(i, len(formal) - 1)
            wanted_here = formal and (formal[position] in IMPORT_TIME_INPUTS or node.op_type == "ConstantOfShape")
            if name and wanted_here and name in inputs:
                wanted.add(name)
    if not wanted:
        return model, inputs
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for name in wanted:
        model.graph.initializer.append(numpy_helper.from_array(np.asarray(inputs[name]), name))
    kept = [i for i in model.graph.input if i.name not in wanted]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model, {k: v for k, v in inputs.items() if k not in wanted}


def _tensors(value) -> bool:
    """An array, or a sequence of them."""
    return isinstance(value, np.ndarray) or isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value)


def _sequences_as_tensors(model, ins: list, outs: list) -> tuple[object, list, list] | None:
    """A case whose inputs or outputs are sequences (lists of arrays), its lengths made static as an
    exporter's would be: a sequence input is one input per element and a SequenceConstruct of them
    (SequenceEmpty for none), a sequence output a SequenceAt per element, its expected list flattened.
    None for an optional one."""
    import onnx
    from onnx import helper, numpy_helper

    if all(isinstance(v, np.ndarray) for v in ins + outs):
        return model, ins, outs
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inputs, feeds, first = [], [], []
    for value, given in zip(list(graph.input), ins):
        if not isinstance(given, list):
            inputs.append(value)
            feeds.append(given)
            continue
        if not value.type.HasField("sequence_type"):
            return None
        elem = value.type.sequence_type.elem_type.tensor_type.elem_type
        names = [f"{value.name}_{i}" for i in range(len(given))]
        inputs += [helper.make_tensor_value_info(n, elem, list(v.shape)) for n, v in zip(names, given)]
        feeds += given
        first.append(helper.make_node("SequenceConstruct", names, [value.name]) if names else
                     helper.make_node("SequenceEmpty", [], [value.name], dtype=elem))
    outputs, expected, last = [], [], []
    for value, want in zip(list(graph.output), outs):
        if not isinstance(want, list):
            outputs.append(value)
            expected.append(want)
            continue
        if not value.type.HasField("sequence_type"):
            return None
        for i, v in enumerate(want):
            name = f"{value.name}_{i}"
            last += [helper.make_node("Constant", [], [f"{name}_at"], value=numpy_helper.from_array(np.array(i))),
                     helper.make_node("SequenceAt", [value.name, f"{name}_at"], [name])]
            outputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)))
            expected.append(v)
    nodes = first + list(graph.node) + last
    del graph.node[:], graph.input[:], graph.output[:]
    graph.node.extend(nodes)
    graph.input.extend(inputs)
    graph.output.extend(outputs)
    return model, feeds, expected


def node_cases(ops=TORCH_OPS) -> list[Case]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        found = collect_testcases()
    op_of = {}
    for test in found:
        kinds = {n.op_type for n in test.model.graph.node}
        if len(kinds) == 1 and len(test.model.graph.node) == 1:
            op_of[test.name] = kinds.pop()
    cases = []
    for test in found:
        op = op_of.get(test.name) or op_of.get(test.name.split("_expanded")[0])
        if op not in ops or test.model is None:
            continue
        for k, (ins, outs) in enumerate(test.data_sets or []):
            if not all(_tensors(x) for x in ins) or not all(_tensors(y) for y in outs):
                continue          # optionals, float8 protos: not what torch exports
            made = _sequences_as_tensors(test.model, list(ins), list(outs))
            if made is None:
                continue          # an optional sequence
            model, ins, outs = made
            present = [n for n in model.graph.input]
            model, inputs = _constant_inputs(model, {x.name: v for x, v in zip(present, ins)})
            cases.append(Case(test.name + (f"/{k}" if k else ""), "node", op, model, inputs, list(outs),
                              max(RTOL, test.rtol), max(ATOL, test.atol)))
    return cases


def fixture_cases(folder: Path = FIXTURES) -> list[Case]:
    """NAME.onnx with NAME.npz (`in:<input>`, `out:<output>`) in `folder`."""
    import onnx

    cases = []
    for path in sorted(Path(folder).glob("*.onnx")):
        data = path.with_suffix(".npz")
        if not data.exists():
            continue
        model = onnx.load(str(path))
        with np.load(data) as npz:
            inputs = {k[3:]: npz[k] for k in npz.files if k.startswith("in:")}
            outputs = [npz[f"out:{o.name}"] for o in model.graph.output if f"out:{o.name}" in npz.files]
        if len(outputs) != len(model.graph.output):
            continue
        cases.append(Case(f"{Path(folder).name}/{path.stem}", "fixtures", "model", model, inputs, outputs))
    return cases


# ---- one case ---------------------------------------------------------------------------------------

_WHERE = re.compile(r"\(([A-Za-z0-9_]+), opset \d+\)")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def run_case(case: Case, folder: Path, grads: bool = False) -> Outcome:
    """`case` imported, run and compared, in `folder` (emptied by the caller); `grads`: a passing case's
    gradients (of the sum of its float outputs) against float64 central differences too (`check --fast`)."""
    import onnx

    from agrad import graphs
    from agrad.graphs.onnx.importing import ImportOptions, import_model
    from agrad.graphs.onnx.problems import ModelError

    path = folder / "model.onnx"
    onnx.save(case.model, str(path))
    # an input with a dim of no size (a dynamic axis) gets the case's, as `agrad import --shape` would give it
    shapes = {i.name: tuple(case.inputs[i.name].shape) for i in case.model.graph.input if i.name in case.inputs
              and any(not d.HasField("dim_value") for d in i.type.tensor_type.shape.dim)}
    try:
        result = import_model(path, folder / "graph.yaml", ImportOptions(shapes=shapes))
    except ModelError as exc:
        ops = [m.group(1) for m in map(_WHERE.search, exc.problems) if m]
        op = ops[0] if ops else case.op
        return Outcome(case, "refused", op, _short(exc.problems[0]), problems=list(exc.problems))
    except _Timeout:
        raise
    except Exception as exc:      # noqa: BLE001 - a crash of the importer is the finding
        return Outcome(case, "fail", case.op, f"import crashed: {type(exc).__name__}: {_short(str(exc))}")
    agrad_name = {onnx_name: name for name, onnx_name in result.names.items()}
    files = {}
    for i, (name, value) in enumerate(case.inputs.items()):
        if name in agrad_name:
            np.save(folder / f"in{i}.npy", value)
            files[agrad_name[name]] = str(folder / f"in{i}.npy")
    try:
        graph = graphs.load(result.graph_path, inputs=files)
        got = [v.detach().numpy() if hasattr(v, "detach") else np.asarray(v) for v in graph.run().outputs.values()]
    except _Timeout:
        raise
    except Exception as exc:      # noqa: BLE001
        return Outcome(case, "fail", case.op, f"run failed: {type(exc).__name__}: {_short(str(exc))}")
    if len(got) != len(case.outputs):
        return Outcome(case, "fail", case.op, f"{len(got)} outputs, expected {len(case.outputs)}")
    for i, (value, want) in enumerate(zip(got, case.outputs)):
        want = np.asarray(want)
        if value.shape != want.shape:
            return Outcome(case, "fail", case.op, f"output {i}: shape {list(value.shape)}, expected {list(want.shape)}")
        if value.dtype != want.dtype:
            return Outcome(case, "fail", case.op, f"output {i}: dtype {value.dtype}, expected {want.dtype}")
        if want.dtype.kind in "fc":
            close = np.isclose(value, want, rtol=case.rtol, atol=case.atol, equal_nan=True)
        else:
            close = value == want
        if not np.all(close):
            bad = np.argwhere(~close)[0] if want.ndim else ()
            err = np.nanmax(np.abs(value.astype(np.float64) - want.astype(np.float64))) if want.size else 0
            return Outcome(case, "fail", case.op, f"output {i}: wrong values ({int((~close).sum())}/{close.size}, "
                                                  f"max abs err {err:.3g}; at {list(bad)}: {value[tuple(bad)]!r} "
                                                  f"vs {want[tuple(bad)]!r})")
    if grads:
        try:
            check = graph.check(fast=True)
        except Exception as exc:  # noqa: BLE001
            return Outcome(case, "fail", case.op, f"gradient check failed: {type(exc).__name__}: {_short(str(exc))}")
        if not check.passed:
            bad = [f"{name} (max abs err {leaf.max_abs_err:.3g})" for name, leaf in check.leaves.items() if not leaf.passed]
            return Outcome(case, "fail", case.op, f"gradients differ from finite differences: {', '.join(bad)}")
    return Outcome(case, "pass", case.op)


def _short(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def run_cases(cases: list[Case], verbose: bool = False, grads: bool = False) -> list[Outcome]:
    outcomes = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        with tempfile.TemporaryDirectory(prefix="agrad-conformance.") as tmp:
            for n, case in enumerate(cases):
                folder = Path(tmp) / str(n)
                folder.mkdir()
                start = time.perf_counter()
                signal.alarm(TIMEOUT_S)
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        outcome = run_case(case, folder, grads)
                except _Timeout:
                    outcome = Outcome(case, "fail", case.op, f"took longer than {TIMEOUT_S} s")
                finally:
                    signal.alarm(0)
                outcome.seconds = time.perf_counter() - start
                outcomes.append(outcome)
                if verbose:
                    print(f"{outcome.status:8} {outcome.seconds:6.2f}s {case.name}  {outcome.reason}", flush=True)
                for f in folder.iterdir():
                    f.unlink()
                folder.rmdir()
    finally:
        signal.signal(signal.SIGALRM, old)
    return outcomes


def report(outcomes: list[Outcome]) -> str:
    lines = []
    by_source = collections.defaultdict(collections.Counter)
    for o in outcomes:
        by_source[o.case.source][o.status] += 1
        by_source["total"][o.status] += 1
    for source, counts in by_source.items():
        lines.append(f"{source:9} pass {counts['pass']:4}  fail {counts['fail']:4}  refused {counts['refused']:4}  "
                     f"(of {sum(counts.values())})")
    groups = collections.defaultdict(list)
    for o in outcomes:
        if o.status != "pass":
            groups[o.op].append(o)
    for op in sorted(groups, key=lambda k: (-len(groups[k]), k)):
        lines.append(f"\n{op}: {len(groups[op])}")
        for o in groups[op]:
            lines.append(f"  {o.status:7} {o.case.name}: {o.reason}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="node,data,fixtures", help="comma-separated: node, data, fixtures")
    parser.add_argument("--op", help="node cases of these ops only (comma-separated)")
    parser.add_argument("--case", help="cases whose name contains this")
    parser.add_argument("--fixtures", default=str(FIXTURES), help="the folder of NAME.onnx + NAME.npz cases")
    parser.add_argument("--grads", action="store_true", help="check a passing case's gradients against finite "
                                                                  "differences too (slower)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", help="write {case: [status, op, reason]} here")
    args = parser.parse_args(argv)
    sources = set(args.only.split(","))
    cases = []
    if "data" in sources:
        cases += data_cases()
    if "node" in sources:
        cases += node_cases(frozenset(args.op.split(",")) if args.op else TORCH_OPS)
    if "fixtures" in sources:
        cases += fixture_cases(Path(args.fixtures))
    if args.case:
        cases = [c for c in cases if args.case in c.name]
    start = time.perf_counter()
    outcomes = run_cases(cases, args.verbose, args.grads)
    print(report(outcomes))
    print(f"\n{len(cases)} cases in {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({o.case.name: [o.status, o.op, o.reason] for o in outcomes}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
