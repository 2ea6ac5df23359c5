"""The C recording (engine/autograd/_native_recording.c) records what each op's generated Python
Autograd kernel records, Node for Node: for every sample of every op, with its tensor inputs as
leaves and as outputs of another op, the same Node class, edges, topological_nr, input_metadata and
saved values, the same history on the output, and bit-identical gradients; and the calls it leaves
to Python (anomaly mode, saved-tensor hooks, an input changed in place or a view) are recorded by
Python, and a Parameter or another Tensor subclass is saved as Python saves it."""
import numpy as np
import pytest

import agrad
from agrad.autograd import recording
from agrad.ops import registered

pytestmark = pytest.mark.skipif(recording.record is None,
                                reason="the C recording is not here (no compiler at install, or AGRAD_PURE_PYTHON)")

_MISSING = object()


def _cases():
    for info in registered():
        if info.samples is None or not info.differentiable:
            continue
        for sample in info.samples(info.name):
            yield pytest.param(info, sample.name, id=f"{info.name}-{sample.name}")


def _sample(info, name):
    """A fresh copy of the op's sample `name` (each run records its own graph)."""
    return next(s for s in info.samples(info.name) if s.name == name)


def _inputs(sample, through_op: bool):
    """The sample's arguments; `through_op`: each tensor that requires grad as the output of an op
    (an edge to a grad_fn, not to an AccumulateGrad)."""
    def one(a):
        if isinstance(a, agrad.Tensor) and a.requires_grad and through_op and a.dtype.is_floating_point:
            return a * 1
        if isinstance(a, list) and a and isinstance(a[0], agrad.Tensor):
            return [one(t) for t in a]
        return a
    return [one(a) for a in sample.args], {k: one(v) for k, v in sample.kwargs.items()}


def _tensors_of(args, kwargs) -> list:
    found = []
    for a in list(args) + list(kwargs.values()):
        for t in a if isinstance(a, (list, tuple)) else [a]:
            if isinstance(t, agrad.Tensor):
                found.append(t)
    return found


def _describe(value, inputs, out, node):
    """What a saved value or an edge is, in terms of the call (which input, the output, ...)."""
    if value is None or isinstance(value, (bool, int, float, str, tuple)) and not isinstance(value, agrad.Tensor):
        return ("value", value if not isinstance(value, tuple) else repr(value))
    if isinstance(value, agrad.Tensor):
        for i, t in enumerate(inputs):
            if value is t:
                return ("input", i)
        if out is not None and value is out:
            return ("output",)
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, np.ndarray):
        return ("array", tuple(value.shape), str(value.dtype), out is not None and value is out._data)
    if isinstance(value, list):
        return ("list", [_describe(v, inputs, out, node) for v in value])
    if isinstance(value, agrad.autograd.graph.Node.__mro__[0]) or hasattr(value, "next_functions"):
        for i, t in enumerate(inputs):
            if t.grad_fn is value:
                return ("grad_fn of input", i)
            if t.grad_fn is None and t.requires_grad and value.name() == "AccumulateGrad" and value.variable is t:
                return ("accumulator of input", i)
        return ("node", value.name())
    return (type(value).__name__,)


def _snapshot(info, out, args, kwargs):
    inputs = _tensors_of(args, kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    shot = []
    for o in outs:
        if not isinstance(o, agrad.Tensor):
            shot.append(("not a tensor", repr(o)))
            continue
        fn = o.grad_fn
        row = [o.requires_grad, o.is_leaf, o.output_nr if fn is not None else None, o._keys, o._version]
        if fn is not None:
            row += [fn.name(), [(_describe(f, inputs, o, fn), nr) for f, nr in fn.next_functions],
                    fn.topological_nr, fn.input_metadata, fn.hooks, fn._metadata,
                    all(fn.sequence_nr > t.grad_fn.sequence_nr for t in inputs if t.grad_fn is not None)]
            for name in getattr(fn, "saved_names", ()):
                row.append((name, _describe(getattr(fn, "saved_" + name, _MISSING), inputs, o, fn)))
            if "result" in getattr(fn, "saved_names", ()):
                vc = getattr(fn, "saved_result_vc", None)
                row.append(("saved_result_vc", vc is None, vc is o._version_counter))
        shot.append(row)
    return shot


def _record(info, name, through_op, native: bool, monkeypatch):
    monkeypatch.setattr(recording, "record", recording._native.record if native else None)
    np.random.seed(0)
    agrad.manual_seed(0)
    args, kwargs = _inputs(_sample(info, name), through_op)
    try:
        out = info.entry.function(*args, **kwargs)
    except Exception as exc:        # noqa: BLE001 - a sample that raises raises the same either way
        return ("raised", type(exc).__name__, str(exc)), None
    shot = _snapshot(info, out, args, kwargs)
    grads = None
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, agrad.Tensor) and o.requires_grad]
    leaves = [t for t in _tensors_of(args, kwargs) if t.requires_grad]
    if outs and leaves:
        try:
            grads = agrad.autograd.grad(outs, leaves, [agrad.ones_like(o) for o in outs], allow_unused=True)
            grads = [None if g is None else g.detach().numpy() for g in grads]
        except Exception as exc:    # noqa: BLE001
            grads = ("raised", type(exc).__name__, str(exc))
    return shot, grads


@pytest.mark.parametrize("through_op", [False, True], ids=["leaves", "non-leaves"])
@pytest.mark.parametrize("info, name", list(_cases()))
def test_c_records_what_python_records(info, name, through_op, monkeypatch):
    shot_c, grads_c = _record(info, name, through_op, True, monkeypatch)
    shot_py, grads_py = _record(info, name, through_op, False, monkeypatch)
    assert shot_c == shot_py
    if isinstance(grads_py, list):
        assert len(grads_c) == len(grads_py)
        for a, b in zip(grads_c, grads_py):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)         # bit for bit (NaNs in the same places)
    else:
        assert grads_c == grads_py


def test_most_ops_record_in_c():
    """The C path is taken, not silently skipped: W1's ops record without the Python lines."""
    x = agrad.randn(4, requires_grad=True)
    calls = []
    native = recording._native.record

    def counting(plan, out, args):
        taken = native(plan, out, args)
        calls.append(taken)
        return taken
    recording.record = counting
    try:
        y = agrad.tanh(x * 2.0 + x)
    finally:
        recording.record = native
    assert calls == [True, True, True]
    assert y.grad_fn.name() == "TanhBackward0"


@pytest.mark.parametrize("case", ["anomaly", "hooks", "parameter", "subclass", "changed in place", "view"])
def test_calls_left_to_python_record_as_python_does(case, monkeypatch):
    class Sub(agrad.Tensor):
        pass

    def run(native):
        monkeypatch.setattr(recording, "record", recording._native.record if native else None)
        x = agrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = agrad.tensor([0.5, 0.25, 2.0], requires_grad=True)
        a = x * 1
        if case == "changed in place":
            a.add_(1.0)
        if case == "view":
            a = a[1:]
            w = w[1:]
        if case == "parameter":
            w = agrad.nn.Parameter(w.detach())
        if case == "subclass":
            a = a.as_subclass(Sub)
        if case == "anomaly":
            with agrad.autograd.detect_anomaly():
                y = agrad.tanh(a * w)
        elif case == "hooks":
            packed = []
            with agrad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
                y = agrad.tanh(a * w)
            assert packed
        else:
            y = agrad.tanh(a * w)
        mul = y.grad_fn.next_functions[0][0]
        kinds = sorted(type(getattr(mul, "saved_" + n)).__name__ for n in mul.saved_names)
        y.sum().backward()
        return (y.grad_fn.name(), mul.name(), kinds, type(y).__name__, x.grad.numpy().tolist(),
                w.grad is None if case == "view" else w.grad.numpy().tolist())
    assert run(True) == run(False)
