"""torch.fft, stft and istft scenarios, each a function of the library (torch or agrad) returning plain
data: outputs (complex ones as view_as_real's pairs), dtypes, grad_fn names, the leaves' gradients for
a fixed grad_output (complex for a complex output), forward-mode tangents, PyTorch's errors (the
exception's base class and message) and warnings. make_fft_reference.py records PyTorch's answers in
fft_scenarios.json; tests/engine/test_fft.py runs the same functions with agrad and compares. Labels
starting with f32_ hold float32 values (compared to float32's precision)."""
from __future__ import annotations

import math
import warnings

_BASES = (IndexError, TypeError, NotImplementedError, ValueError, RuntimeError)


def _values(shape, k, scale=1.0):
    """Deterministic values: a nested list of `shape`."""
    n = math.prod(shape)
    flat = [scale * (math.sin(1.3 * i + 0.7 * k + 0.2) + 0.05 * ((i * 7 + k) % 5)) for i in range(n)]

    def nest(values, dims):
        if not dims:
            return values[0]
        step = len(values) // dims[0] if dims[0] else 0
        return [nest(values[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]
    return nest(flat, list(shape))


def _leaf(lib, shape, k=0, dtype="float64", grad=True):
    if dtype.startswith("complex"):
        real = "float64" if dtype == "complex128" else "float32"
        t = lib.view_as_complex(lib.tensor(_values(tuple(shape) + (2,), k), dtype=getattr(lib, real)))
        t = t.detach().clone()
    else:
        t = lib.tensor(_values(shape, k), dtype=getattr(lib, dtype))
    return t.requires_grad_(grad) if t.is_floating_point() or t.is_complex() else t


def _name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _data(lib, t):
    if t is None:
        return None
    t = t.detach()
    values = lib.view_as_real(t.resolve_conj()).tolist() if t.is_complex() else t.tolist()
    return {"shape": list(t.shape), "dtype": _name(t.dtype), "values": values}


def _grad_output(lib, out, k=9):
    if out.is_complex():
        real = lib.float64 if out.dtype == lib.complex128 else lib.float32
        return lib.view_as_complex(lib.tensor(_values(tuple(out.shape) + (2,), k), dtype=real))
    return lib.tensor(_values(out.shape, k), dtype=out.dtype)


def _run(lib, fn, *leaves):
    """fn(*leaves): its output, grad_fn, and each leaf's gradient for a fixed grad_output."""
    out = fn(*leaves)
    rec = {"out": _data(lib, out), "grad_fn": None if out.grad_fn is None else type(out.grad_fn).__name__}
    if out.requires_grad:
        out.backward(_grad_output(lib, out))
        rec["grads"] = [_data(lib, t.grad) for t in leaves]
    return rec


def _error(lib, fn) -> dict:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as exc:  # noqa: BLE001 — what each library raises is the point
        base = next(b.__name__ for b in _BASES if isinstance(exc, b))
        return {"error": base, "message": str(exc).replace(f"{lib.__name__}.", "LIB.")}
    return {"ok": _data(lib, out)}


# ---- the one-dimensional transforms -------------------------------------------------------------

def one_dimensional(lib):
    F = lib.fft
    out = {}
    for name, dtype in (("fft", "float64"), ("fft", "complex128"), ("ifft", "float64"), ("ifft", "complex128"),
                        ("rfft", "float64"), ("irfft", "complex128"), ("hfft", "complex128"), ("ihfft", "float64")):
        f = getattr(F, name)
        for case, shape, kw in (("default", (6,), {}), ("odd", (5,), {}), ("n shorter", (7,), {"n": 4}),
                                ("n longer", (4,), {"n": 9}), ("dim 0", (4, 3), {"dim": 0}),
                                ("ortho", (3, 5), {"norm": "ortho"}), ("forward", (5,), {"norm": "forward", "n": 6}),
                                ("backward", (2, 4), {"norm": "backward", "dim": -2})):
            x = _leaf(lib, shape, len(out), dtype)
            out[f"{name} {dtype} {case}"] = _run(lib, lambda x: f(x, **kw), x)
    return out


def n_dimensional(lib):
    F = lib.fft
    out = {}
    for name, dtype in (("fftn", "float64"), ("fftn", "complex128"), ("ifftn", "complex128"), ("rfftn", "float64"),
                        ("irfftn", "complex128"), ("hfftn", "complex128"), ("ihfftn", "float64")):
        f = getattr(F, name)
        for case, shape, kw in (("default", (3, 4), {}), ("3-d", (2, 3, 4), {}), ("s", (3, 4), {"s": [4, 5]}),
                                ("s with -1", (2, 3, 4), {"s": [-1, 2]}), ("dim", (2, 3, 4), {"dim": [2, 0]}),
                                ("s and dim", (3, 5), {"s": [3, 2], "dim": [1, 0], "norm": "ortho"}),
                                ("one dim", (3, 4), {"dim": [0], "norm": "forward"})):
            x = _leaf(lib, shape, len(out), dtype)
            out[f"{name} {dtype} {case}"] = _run(lib, lambda x: f(x, **kw), x)
        two = getattr(F, name[:-1] + "2")
        x = _leaf(lib, (2, 3, 4), len(out), dtype)
        out[f"{name[:-1]}2 {dtype}"] = _run(lib, lambda x: two(x, norm="ortho"), x)
        x = _leaf(lib, (3, 4), len(out), dtype)
        out[f"{name[:-1]}2 {dtype} s, dim"] = _run(lib, lambda x: two(x, s=[5, 3], dim=[1, 0]), x)
    x = _leaf(lib, (), 0, "float64")
    out["fftn of a 0-d tensor"] = _run(lib, lambda x: F.fftn(x), x)
    x = _leaf(lib, (3, 4), 1, "complex128")
    out["fftn over no dims"] = _run(lib, lambda x: F.fftn(x, dim=[]), x)
    return out


def promotion(lib):
    F = lib.fft
    ints = lib.tensor([[1, -2, 3, 4], [0, 5, -1, 2]])
    out = {"fft int64": _run(lib, lambda: F.fft(ints)), "rfft bool": _run(lib, lambda: F.rfft(ints > 0)),
           "irfft int64": _run(lib, lambda: F.irfft(ints)), "ihfft2 int64": _run(lib, lambda: F.ihfft2(ints)),
           "fftn int64": _run(lib, lambda: F.fftn(ints))}
    lib.set_default_dtype(lib.float64)
    try:
        out["fft int64 under default float64"] = _run(lib, lambda: F.fft(ints))
    finally:
        lib.set_default_dtype(lib.float32)
    return out


def f32_transforms(lib):
    F = lib.fft
    x = _leaf(lib, (3, 8), 1, "float32")
    c = _leaf(lib, (3, 5), 2, "complex64")
    return {"fft": _run(lib, lambda x: F.fft(x), x), "rfft2": _run(lib, lambda x: F.rfft2(x, norm="ortho"), x),
            "ifft complex64": _run(lib, lambda c: F.ifft(c), c),
            "irfftn complex64": _run(lib, lambda c: F.irfftn(c), c),
            "hfft complex64": _run(lib, lambda c: F.hfft(c, n=7), c),
            "fftfreq": _data(lib, F.fftfreq(7, 0.3)), "rfftfreq": _data(lib, F.rfftfreq(8, 1.7)),
            "stft": _run(lib, lambda x: lib.stft(x, 4, window=lib.hann_window(4), return_complex=True), x)}


def shifts_and_frequencies(lib):
    F = lib.fft
    out = {}
    for name in ("fftshift", "ifftshift"):
        f = getattr(F, name)
        for case, shape, dim in (("all", (5,), None), ("2-d", (3, 4), None), ("dim 1", (3, 5), 1),
                                 ("dims", (2, 3, 5), [0, -1])):
            x = _leaf(lib, shape, len(out))
            out[f"{name} {case}"] = _run(lib, lambda x: f(x, dim=dim), x)
    for n, d in ((5, 1.0), (6, 0.5), (1, 2.0), (0, 1.0)):
        out[f"fftfreq {n} {d}"] = _data(lib, F.fftfreq(n, d, dtype=lib.float64))
        out[f"rfftfreq {n} {d}"] = _data(lib, F.rfftfreq(n, d, dtype=lib.float64))
    r = F.fftfreq(4, requires_grad=True)
    out["fftfreq requires_grad"] = [_data(lib, r), r.requires_grad, r.is_leaf]
    return out


# ---- stft, istft ---------------------------------------------------------------------------------

def short_time(lib):
    out = {}
    hann = lambda n: lib.hann_window(n, dtype=lib.float64).requires_grad_()  # noqa: E731
    for case, shape, n_fft, kw in (
            ("centred reflect", (16,), 4, {}), ("constant", (2, 13), 6, {"hop_length": 2, "pad_mode": "constant"}),
            ("replicate", (12,), 5, {"pad_mode": "replicate", "hop_length": 3}),
            ("circular", (11,), 4, {"pad_mode": "circular", "onesided": False}),
            ("not centred", (2, 14), 6, {"center": False, "hop_length": 3, "normalized": True}),
            ("short window", (15,), 8, {"win_length": 5, "hop_length": 2}),
            ("aligned window", (10,), 4, {"center": False, "hop_length": 2, "win_length": 2,
                                          "align_to_window": True})):
        x = _leaf(lib, shape, len(out))
        w = hann(kw.get("win_length", n_fft))
        out[f"stft {case}"] = _run(lib, lambda x, w: lib.stft(x, n_fft, window=w, return_complex=True, **kw), x, w)
    x = _leaf(lib, (12,), 20)
    out["stft no window, short win_length"] = _run(lib, lambda x: lib.stft(x, 6, 2, 3, return_complex=True), x)
    c = _leaf(lib, (12,), 21, "complex128")
    w = hann(4)
    out["stft complex"] = _run(lib, lambda c, w: c.stft(4, 2, window=w), c, w)
    x = _leaf(lib, (12,), 22)
    wc = _leaf(lib, (4,), 23, "complex128")
    out["stft complex window"] = _run(lib, lambda x, wc: lib.stft(x, 4, 3, window=wc), x, wc)
    x = _leaf(lib, (2, 12), 24)
    w = hann(4)
    out["stft real output"] = _run(lib, lambda x, w: lib.stft(x, 4, window=w, return_complex=False), x, w)
    return out


def inverse_short_time(lib):
    out = {}
    hann = lambda n: lib.hamming_window(n, dtype=lib.float64).requires_grad_()  # noqa: E731
    for case, shape, n_fft, kw in (
            ("round trip", (3, 9), 4, {"hop_length": 1}), ("length", (3, 7), 4, {"hop_length": 2, "length": 11}),
            ("length past the signal", (3, 5), 4, {"hop_length": 2, "length": 12}),
            ("not centred", (4, 6), 6, {"hop_length": 2, "center": False}),
            ("short window", (5, 8), 8, {"hop_length": 2, "win_length": 6}),
            ("normalized batch", (2, 3, 6), 4, {"hop_length": 2, "normalized": True}),
            ("two-sided", (4, 6), 4, {"hop_length": 2, "onesided": False}),
            ("complex output", (4, 6), 4, {"hop_length": 2, "onesided": False, "return_complex": True})):
        s = _leaf(lib, shape, len(out), "complex128")
        w = hann(kw.get("win_length", n_fft))
        out[f"istft {case}"] = _run(lib, lambda s, w: lib.istft(s, n_fft, window=w, **kw), s, w)
    x = _leaf(lib, (2, 20), 30)
    w = hann(8)
    out["stft then istft"] = _run(lib, lambda x, w: lib.istft(lib.stft(x, 8, 2, window=w, return_complex=True), 8, 2,
                                                               window=w, length=20), x, w)
    return out


# ---- forward mode --------------------------------------------------------------------------------

def forward_mode(lib):
    fwAD = lib.autograd.forward_ad
    out = {}
    for case, fn, dtype in (("rfft", lambda x: lib.fft.rfft(x, norm="ortho"), "float64"),
                            ("irfft", lambda x: lib.fft.irfft(x, n=7), "complex128"),
                            ("fft2 complex", lambda x: lib.fft.fft2(x), "complex128"),
                            ("hfft", lambda x: lib.fft.hfft(x), "complex128"),
                            ("ihfftn", lambda x: lib.fft.ihfftn(x), "float64"),
                            ("stft", lambda x: lib.stft(x, 4, window=lib.ones(4, dtype=lib.float64),
                                                        return_complex=True), "float64")):
        shape = (3, 4) if case in ("fft2 complex", "ihfftn") else (8,)
        x = _leaf(lib, shape, len(out), dtype, grad=False)
        t = _leaf(lib, shape, 50 + len(out), dtype, grad=False)
        with fwAD.dual_level():
            y = fn(fwAD.make_dual(x, t))
            out[case] = _data(lib, fwAD.unpack_dual(y).tangent)
    return out


# ---- errors and warnings --------------------------------------------------------------------------

def errors(lib):
    F = lib.fft
    x = _leaf(lib, (10,), 0, grad=False)
    c = _leaf(lib, (10,), 1, "complex128", grad=False)
    m = x.view(2, 5)
    S = lib.stft(x, 4, window=lib.ones(4, dtype=lib.float64), return_complex=True)
    ones = lambda n, dt=lib.float64: lib.ones(n, dtype=dt)  # noqa: E731
    cases = {
        "fft float16": lambda: F.fft(lib.ones(4, dtype=lib.float16)),
        "fft 0-d": lambda: F.fft(lib.tensor(1.0)), "hfft 0-d": lambda: F.hfft(lib.tensor(1.0)),
        "fft n=0": lambda: F.fft(x, n=0), "irfft of one point": lambda: F.irfft(c[:1]),
        "fft bad norm": lambda: F.fft(x, norm="bad"), "fft dim out of range": lambda: F.fft(x, dim=3),
        "rfft complex": lambda: F.rfft(c), "ihfft complex": lambda: F.ihfft(c),
        "rfftn complex": lambda: F.rfftn(c), "ihfft2 complex": lambda: F.ihfft2(c.view(2, 5)),
        "fftn repeated dims": lambda: F.fftn(m, dim=(0, 0)),
        "fftn repeated wrapped dims": lambda: F.fftn(m, dim=(1, -1)),
        "fftn s and dim lengths": lambda: F.fftn(m, s=(2,), dim=(0, 1)),
        "fftn s too long": lambda: F.fftn(x, s=(2, 2)), "fftn s=0": lambda: F.fftn(m, s=(0, 2)),
        "rfftn no dims": lambda: F.rfftn(x, dim=()), "irfftn no dims": lambda: F.irfftn(c, dim=()),
        "hfftn no dims": lambda: F.hfftn(c, dim=()), "ihfftn no dims": lambda: F.ihfftn(x, dim=()),
        "irfftn s=1 last": lambda: F.irfftn(c.view(2, 5), s=(2, 0)),
        "fft2 of 1-d": lambda: F.fft2(x), "fftshift dim out of range": lambda: F.fftshift(m, dim=2),
        "fftfreq int64": lambda: F.fftfreq(4, dtype=lib.int64),
        "rfftfreq int64": lambda: F.rfftfreq(4, dtype=lib.int64),
        "fftfreq negative": lambda: F.fftfreq(-1),
        "stft no return_complex": lambda: lib.stft(x, 4, window=ones(4)),
        "stft 3-d": lambda: lib.stft(x.view(1, 2, 5), 4, window=ones(4), return_complex=True),
        "stft int64": lambda: lib.stft(lib.arange(10), 4, window=ones(4), return_complex=True),
        "stft n_fft too big": lambda: lib.stft(x, 40, center=False, return_complex=True),
        "stft complex n_fft too big": lambda: lib.stft(c, 40, center=False),
        "stft hop 0": lambda: lib.stft(x, 4, hop_length=0, window=ones(4), return_complex=True),
        "stft win_length too big": lambda: lib.stft(x, 4, win_length=5, return_complex=True),
        "stft window size": lambda: lib.stft(x, 4, window=ones(3), return_complex=True),
        "stft 2-d window": lambda: lib.stft(x, 4, window=lib.ones(2, 2, dtype=lib.float32), return_complex=True),
        "stft onesided complex": lambda: lib.stft(c, 4, window=ones(4), onesided=True, return_complex=True),
        "stft bad pad_mode": lambda: lib.stft(x, 4, pad_mode="bogus", window=ones(4), return_complex=True),
        "stft align_to_window centred": lambda: lib.stft(x, 4, align_to_window=True, return_complex=True),
        "istft real": lambda: lib.istft(m, 4),
        "istft 1-d": lambda: lib.istft(c, 4),
        "istft 2-d": lambda: lib.istft(c.view(2, 5), 4),
        "istft 4-d": lambda: lib.istft(S.view(1, 1, 3, 11), 4, window=ones(4)),
        "istft empty": lambda: lib.istft(lib.ones(3, 0, dtype=lib.complex128), 4),
        "istft two-sided size": lambda: lib.istft(S, 4, window=ones(4), onesided=False),
        "istft hop > win": lambda: lib.istft(S, 4, hop_length=5, window=ones(4)),
        "istft win > n_fft": lambda: lib.istft(S, 4, win_length=5),
        "istft window shape": lambda: lib.istft(S, 4, window=lib.ones(3)),
        "istft onesided complex output": lambda: lib.istft(S, 4, return_complex=True, window=ones(4)),
        "istft complex window, real output": lambda: lib.istft(S, 4, window=ones(4, lib.complex128), onesided=True),
        "istft zero window": lambda: lib.istft(lib.ones(3, 5, dtype=lib.complex128), 4, window=lib.zeros(4)),
    }
    return {name: _error(lib, fn) for name, fn in cases.items()}


def warnings_given(lib):
    lib.set_warn_always(True)
    x = _leaf(lib, (10,), 0, grad=False)
    S = lib.stft(x, 4, window=lib.ones(4, dtype=lib.float64), return_complex=True)
    out = {}
    try:
        for name, fn in (("stft without a window", lambda: lib.stft(x, 4, return_complex=True)),
                         ("stft real output", lambda: lib.stft(x, 4, window=lib.ones(4, dtype=lib.float64),
                                                                return_complex=False)),
                         ("istft without a window", lambda: lib.istft(S, 4)),
                         ("istft length past the signal", lambda: lib.istft(S, 4, window=lib.ones(4, dtype=lib.float64),
                                                                             length=20))):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fn()
            out[name] = [[w.category.__name__, str(w.message).split(" (Triggered internally")[0]
                          .replace(f"{lib.__name__}.", "LIB.")] for w in caught]
    finally:
        lib.set_warn_always(False)
    return out


SCENARIOS = {f.__name__: f for f in (one_dimensional, n_dimensional, promotion, f32_transforms, shifts_and_frequencies,
                                     short_time, inverse_short_time, forward_mode, errors, warnings_given)}
