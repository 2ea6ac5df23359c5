"""The tensors whose repr tests/engine/test_tensor_str.py compares with PyTorch's (torch-free: the
fixture script, make_tensor_str_reference.py, and the test both build each case's values here).

A case is data: values (a nested list) or `arange` n with `mul`/`mod`/`sub`/`div` applied in
float64 (IEEE operations only, so NumPy gives the same bits everywhere), `shape`, `dtype`;
`requires_grad`; `method` [name, *args] called after (a grad_fn); `device` 'meta';
`parameter` (nn.Parameter); `printoptions` set for that case only.
"""
from __future__ import annotations

import numpy as np

INF, NAN = float("inf"), float("nan")


def build_array(spec: dict) -> np.ndarray:
    """The case's values as a NumPy array of its dtype (what both libraries are given)."""
    if "values" in spec:
        arr = np.array(spec["values"], dtype=np.float64 if spec.get("dtype", "float32").startswith("float")
                       else None)
    else:
        arr = np.arange(spec["arange"], dtype=np.float64)
        for step, operand in spec.get("ops", []):
            arr = {"mul": np.multiply, "mod": np.mod, "sub": np.subtract, "div": np.divide,
                   "add": np.add}[step](arr, operand)
    if "shape" in spec:
        arr = arr.reshape(spec["shape"])
    return arr.astype(spec.get("dtype", "float32"))


def _mixed(n, shape=None, dtype="float32", div=137.0, **extra):
    """n values spread over about [-3.6, 3.6], no two neighbours alike."""
    spec = {"arange": n, "ops": [["mul", 7919], ["mod", 1000], ["sub", 500], ["div", div]], "dtype": dtype}
    if shape is not None:
        spec["shape"] = shape
    spec.update(extra)
    return spec


CASES: dict[str, dict] = {}


def _case(name, **spec):
    assert name not in CASES, name
    CASES[name] = spec


# 0-d
for dt in ("float32", "float64", "float16"):
    _case(f"0-d {dt}", values=0.5403023, dtype=dt)
    _case(f"0-d {dt} integral", values=3.0, dtype=dt)
_case("0-d zero", values=0.0)
_case("0-d negative zero", values=-0.0)
_case("0-d nan", values=NAN)
_case("0-d -inf", values=-INF)
_case("0-d tiny", values=1e-7)
_case("0-d huge", values=3e9, dtype="float64")
_case("0-d int64", values=-42, dtype="int64")
_case("0-d int32", values=7, dtype="int32")
_case("0-d bool", values=True, dtype="bool")
_case("0-d uint8", values=200, dtype="uint8")
_case("0-d requires_grad", values=1.25, requires_grad=True)
_case("0-d grad_fn sum", values=[1.5, 2.25, -0.125], requires_grad=True, method=["sum"])
_case("0-d grad_fn float64 mean", values=[1.5, 2.25, -0.125], dtype="float64", requires_grad=True, method=["mean"])

# 1-d floats
_case("1-d cos values", values=[0.5403023, -0.4161468])
_case("1-d sin values", values=[0.841471, 0.9092974])
_case("1-d float64", values=[0.5403023058681398, -0.4161468365471424], dtype="float64")
_case("1-d float16", values=[0.5403023, -0.4161468, 3.0], dtype="float16")
_case("1-d mixed signs", values=[-1.0, 2.5, -3.25, 4.125])
_case("1-d integral floats", values=[1.0, 2.0, 3.0])
_case("1-d integral floats negative", values=[-1.0, 20.0, -300.0])
_case("1-d integral floats float64", values=[10.0, -2.0], dtype="float64")
_case("1-d integral floats float16", values=[1.0, 2048.0], dtype="float16")
_case("1-d zeros", values=[0.0, 0.0, 0.0])
_case("1-d zeros and negative zero", values=[0.0, -0.0])
_case("1-d with nan", values=[1.5, NAN, -2.25])
_case("1-d with inf", values=[1.5, INF, -INF])
_case("1-d integral with nan", values=[1.0, NAN, 3.0])
_case("1-d integral with inf", values=[1.0, -INF, 300.0])
_case("1-d all nan", values=[NAN, NAN])
_case("1-d all inf", values=[INF, -INF])
_case("1-d nan inf zero", values=[NAN, INF, 0.0])
_case("1-d tiny", values=[1e-5, 2e-5])
_case("1-d tiny and one", values=[1e-5, 1.0])
_case("1-d huge", values=[1e9, 2e9], dtype="float64")
_case("1-d huge float32", values=[1.5e10, -2.5e8])
_case("1-d wide range", values=[0.001, 2.0])
_case("1-d range just 1000", values=[0.01, 10.0])
_case("1-d range over 1000", values=[0.01, 10.5])
_case("1-d 1e8 boundary", values=[1e8, 1.0], dtype="float64")
_case("1-d 1e-4 boundary", values=[1e-4, 0.05])
_case("1-d sci with nan", values=[1e-7, NAN, 3e3])
_case("1-d sci with inf and zero", values=[1e10, INF, 0.0], dtype="float64")
_case("1-d sci integral", values=[1.0, 1e9], dtype="float64")
_case("1-d sci negative", values=[-1e-6, 2.5e-3])
_case("1-d float16 sci", values=[0.0001, 60000.0], dtype="float16")
_case("1-d float16 tiny", values=[6e-8, 1.0], dtype="float16")
_case("1-d rounding half", values=[0.00005, 0.12345, 0.99995])
_case("1-d large integral float", values=[123456789.0, 1.0], dtype="float64")
_case("1-d float64 max", values=[1.7976931348623157e308, -1.0], dtype="float64")
_case("1-d single", values=[2.5])
_case("1-d single integral", values=[7.0])
for n in (8, 9, 10, 12, 13, 16, 20, 25):
    _case(f"1-d wrap {n}", **_mixed(n))
_case("1-d wrap float64 30", **_mixed(30, dtype="float64"))
_case("1-d wrap integral 40", arange=40, ops=[["mul", 37], ["sub", 700]])
_case("1-d wrap sci 20", arange=20, ops=[["mul", 13], ["add", 1], ["div", 1e6]])
_case("1-d wrap requires_grad", **_mixed(12, requires_grad=True))
_case("1-d wrap grad_fn", **_mixed(16, requires_grad=True, method=["sin"]))
_case("1-d suffix wraps", **_mixed(11, requires_grad=True, method=["mul", 2.0]))
_case("1-d suffix wraps dtype", **_mixed(11, dtype="float64", requires_grad=True, method=["exp"]))
_case("1-d summarized 1001", arange=1001, ops=[["div", 7.0]])
_case("1-d summarized 2000 arange", arange=2000)
_case("1-d summarized 1000 not", arange=1000, ops=[["div", 7.0]])
_case("1-d summarized mixed", **_mixed(5000))
_case("1-d summarized float64", **_mixed(1500, dtype="float64"))
_case("1-d summarized float16", **_mixed(1200, dtype="float16"))
_case("1-d summarized middle nan only", arange=1100, ops=[["div", 4.0]])

# ints and bools
_case("1-d int64", values=[1, 2, 3], dtype="int64")
_case("1-d int64 negative", values=[-1, 20, -300], dtype="int64")
_case("1-d int64 large", values=[9223372036854775807, -9223372036854775807, 0], dtype="int64")
_case("1-d int32", values=[5, -6, 70000], dtype="int32")
_case("1-d int16", values=[5, -6, 700], dtype="int16")
_case("1-d int8", values=[-128, 127], dtype="int8")
_case("1-d uint8", values=[0, 255, 17], dtype="uint8")
_case("1-d bool", values=[True, False, True], dtype="bool")
_case("1-d bool all false", values=[False, False], dtype="bool")
_case("1-d int wrap", arange=30, ops=[["mul", 1234567], ["sub", 9999999]], dtype="int64")
_case("1-d int summarized", arange=3000, dtype="int64")
_case("1-d int32 summarized", arange=1500, ops=[["sub", 800]], dtype="int32")
_case("1-d bool summarized", arange=1200, ops=[["mod", 3]], dtype="bool")
_case("2-d int64", values=[[1, -2, 3], [40, 5, -600]], dtype="int64")
_case("2-d bool", values=[[True, False], [False, True]], dtype="bool")
_case("3-d int32", arange=24, ops=[["sub", 12]], shape=[2, 3, 4], dtype="int32")
_case("2-d uint8 wrap", arange=60, ops=[["mul", 7], ["mod", 256]], shape=[2, 30], dtype="uint8")

# empty
_case("empty 1-d", values=[])
_case("empty 1-d float64", values=[], dtype="float64")
_case("empty 1-d int64", values=[], dtype="int64")
_case("empty 1-d bool", values=[], dtype="bool")
_case("empty 0x3", arange=0, shape=[0, 3])
_case("empty 0x3 int64", arange=0, shape=[0, 3], dtype="int64")
_case("empty 2x0", arange=0, shape=[2, 0])
_case("empty 2x0x4 float16", arange=0, shape=[2, 0, 4], dtype="float16")
_case("empty requires_grad", values=[], requires_grad=True)
_case("empty 0x3 requires_grad float64", arange=0, shape=[0, 3], dtype="float64", requires_grad=True)

# 2-d .. 4-d
_case("2-d small", values=[[1.5, -2.0], [3.25, 4.0]])
_case("2-d integral", values=[[1.0, 2.0], [3.0, 4.0]])
_case("2-d float64", **_mixed(6, shape=[2, 3], dtype="float64"))
_case("2-d column", **_mixed(5, shape=[5, 1]))
_case("2-d row", **_mixed(5, shape=[1, 5]))
_case("2-d wide wraps", **_mixed(60, shape=[3, 20]))
_case("2-d wide wraps float64", **_mixed(40, shape=[2, 20], dtype="float64"))
_case("2-d sci", arange=6, ops=[["add", 1], ["mul", 1e5]], shape=[2, 3])
_case("2-d with nan inf", values=[[1.0, NAN], [-INF, 2.5]])
_case("2-d requires_grad", **_mixed(6, shape=[2, 3], requires_grad=True))
_case("2-d grad_fn", **_mixed(6, shape=[2, 3], requires_grad=True, method=["sin"]))
_case("2-d grad_fn float16", **_mixed(6, shape=[2, 3], dtype="float16", requires_grad=True, method=["mul", 3.0]))
_case("2-d summarized rows", **_mixed(1200, shape=[400, 3]))
_case("2-d summarized cols", **_mixed(1200, shape=[3, 400]))
_case("2-d summarized both", **_mixed(10000, shape=[100, 100]))
_case("2-d summarized int", arange=4000, shape=[40, 100], dtype="int64")
_case("2-d summarized grad_fn", **_mixed(2000, shape=[50, 40], requires_grad=True, method=["exp"]))
_case("3-d small", **_mixed(24, shape=[2, 3, 4]))
_case("3-d integral", arange=24, shape=[2, 3, 4])
_case("3-d float64", **_mixed(12, shape=[3, 2, 2], dtype="float64"))
_case("3-d wide", **_mixed(60, shape=[2, 2, 15]))
_case("3-d summarized", **_mixed(3000, shape=[10, 15, 20]))
_case("3-d summarized int", arange=2000, shape=[20, 10, 10], dtype="int32")
_case("3-d singleton", **_mixed(4, shape=[1, 1, 4]))
_case("3-d requires_grad", **_mixed(8, shape=[2, 2, 2], requires_grad=True))
_case("4-d small", **_mixed(16, shape=[2, 2, 2, 2]))
_case("4-d bool", arange=16, ops=[["mod", 2]], shape=[2, 2, 2, 2], dtype="bool")
_case("4-d summarized", **_mixed(4096, shape=[8, 8, 8, 8]))
_case("4-d grad_fn", **_mixed(16, shape=[2, 2, 2, 2], requires_grad=True, method=["mul", 0.5]))
_case("4-d sci", arange=16, ops=[["add", 1], ["mul", 3e-6]], shape=[1, 2, 2, 4])

# meta
_case("meta float32", arange=6, shape=[2, 3], device="meta")
_case("meta int64", arange=6, shape=[2, 3], device="meta", dtype="int64")
_case("meta float64 requires_grad", arange=3, device="meta", dtype="float64", requires_grad=True)
_case("meta 0-d", values=1.0, device="meta")

# Parameter
_case("parameter", values=[0.5, -1.25], parameter=True)
_case("parameter float64 2-d", **_mixed(4, shape=[2, 2], dtype="float64", parameter=True))

# print options
_case("precision 2", values=[0.5403023, -0.4161468], printoptions={"precision": 2})
_case("precision 8", values=[0.5403023, -0.4161468], printoptions={"precision": 8})
_case("precision 8 float64", values=[0.5403023058681398, -0.4161468365471424], dtype="float64",
      printoptions={"precision": 8})
_case("precision 0", values=[0.5403023, -1.4161468], printoptions={"precision": 0})
_case("precision 2 sci", values=[1e-6, 1.0], printoptions={"precision": 2})
_case("threshold 5", arange=10, dtype="int64", printoptions={"threshold": 5})
_case("threshold 5 floats", **_mixed(10, printoptions={"threshold": 5}))
_case("threshold 5 2-d", **_mixed(24, shape=[4, 6], printoptions={"threshold": 5}))
_case("edgeitems 1", **_mixed(2000, printoptions={"edgeitems": 1}))
_case("edgeitems 1 2-d", **_mixed(3000, shape=[30, 100], printoptions={"edgeitems": 1}))
_case("edgeitems 5", **_mixed(2000, printoptions={"edgeitems": 5}))
_case("edgeitems 0 1-d", **_mixed(2000, printoptions={"edgeitems": 0}))
_case("edgeitems 0 2-d", **_mixed(2000, shape=[40, 50], printoptions={"edgeitems": 0}))
_case("edgeitems 0 small", values=[1.5, 2.5], printoptions={"edgeitems": 0})
_case("linewidth 40", **_mixed(20, printoptions={"linewidth": 40}))
_case("linewidth 40 2-d", **_mixed(24, shape=[2, 12], printoptions={"linewidth": 40}))
_case("linewidth 40 suffix", **_mixed(6, dtype="float64", requires_grad=True, printoptions={"linewidth": 40}))
_case("linewidth 120", **_mixed(30, printoptions={"linewidth": 120}))
_case("linewidth 10", **_mixed(5, printoptions={"linewidth": 10}))
_case("sci_mode True", values=[0.5403023, -0.4161468], printoptions={"sci_mode": True})
_case("sci_mode True integral", values=[1.0, 20.0], printoptions={"sci_mode": True})
_case("sci_mode True with nan", values=[1.0, NAN, 0.0], printoptions={"sci_mode": True})
_case("sci_mode False tiny", values=[1e-7, 1.0], printoptions={"sci_mode": False})
_case("sci_mode False huge", values=[1e10, 1.0], dtype="float64", printoptions={"sci_mode": False})
_case("sci_mode False integral huge", values=[1e10, 1.0], printoptions={"sci_mode": False})
_case("sci_mode True int64", values=[1, 2], dtype="int64", printoptions={"sci_mode": True})
_case("profile short", **_mixed(2000, printoptions={"profile": "short"}))
_case("profile short 2-d", **_mixed(20, shape=[4, 5], printoptions={"profile": "short"}))
_case("profile full", arange=1200, dtype="int64", printoptions={"profile": "full"})
_case("profile full floats", arange=1100, ops=[["div", 8.0]], printoptions={"profile": "full"})
_case("profile default after precision", values=[0.5403023], printoptions={"precision": 6, "profile": "default"})
