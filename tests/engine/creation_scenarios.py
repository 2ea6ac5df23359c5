"""torch's factories that take no tensor (the window functions) and the functions that make a
tensor from other data, as scenarios that run on PyTorch and on agrad alike: values, dtypes,
requires_grad and the messages of bad arguments.

`tests/reference/make_creation_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/creation.json`; `test_creation_reference.py` runs them on agrad and
compares (floats to 1e-6 relative: float32 windows may differ from PyTorch's in the last bit of
a cosine).
"""
from __future__ import annotations

from api_scenarios import _error

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _described(t):
    return {"values": t.tolist(), "dtype": str(t.dtype).split(".")[-1], "shape": list(t.shape),
            "requires_grad": t.requires_grad, "is_leaf": t.is_leaf}


_WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@scenario
def window_functions(T):
    out = {}
    for name in _WINDOWS:
        fn = getattr(T, name)
        out[name] = {
            "default": _described(fn(7)),
            "symmetric_float64": _described(fn(6, False, dtype=T.float64)),
            "periodic_even_float64": _described(fn(8, True, dtype=T.float64)),
            "length_0": _described(fn(0)), "length_1": _described(fn(1, dtype=T.float64)),
            "length_2_symmetric": _described(fn(2, periodic=False, dtype=T.float64)),
            "float16": _described(fn(5, dtype=T.float16)),
            "requires_grad": _described(fn(4, requires_grad=True)),
            "negative": _error(lambda: fn(-2)),
            "integer_dtype": _error(lambda: fn(4, dtype=T.int64)),
            "int32_dtype": _error(lambda: fn(4, dtype=T.int32)),
        }
    out["hamming_alpha_beta"] = [_described(T.hamming_window(5, False, 0.6, dtype=T.float64)),
                                 _described(T.hamming_window(6, True, 0.6, 0.3, dtype=T.float64))]
    out["kaiser_beta"] = [_described(T.kaiser_window(6, False, 5.0, dtype=T.float64)),
                          _described(T.kaiser_window(9, True, 0.5, dtype=T.float64)),
                          _described(T.kaiser_window(5, True, 30.0))]
    return out
