"""Complex numbers as PyTorch has them, as scenarios that run on PyTorch and on agrad alike.

Each scenario takes the library module `T` (torch, or agrad) and returns what can be observed:
dtypes (by name), values (a complex tensor as view_as_real's [re, im] pairs), grad_fn names, the
gradients of a backward with a fixed complex grad_output, printed tensors, errors (type and message)
and warnings. `tests/reference/make_complex_reference.py` runs them on torch 2.13.0 and writes
`tests/reference/engine/complex.json`; `test_complex.py` runs them on agrad and compares (never
importing torch). The library's name reads LIB. Where agrad differs on purpose the scenario records
only what both share: a refusal's kernel name (PyTorch's "erf_vml_cpu", agrad's "erf_cpu") is left
out, and is_conj (agrad has no lazy conjugate bit) is not asked.
"""
from __future__ import annotations

import warnings

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _name(d) -> str:
    return str(d).split(".")[-1]


def _values(T, t):
    t = t.detach()
    if t.is_complex():
        t = T.view_as_real(t.resolve_conj())
    return t.tolist()


def _seen(T, t) -> dict:
    """A tensor as the fixture records it: dtype, shape, values, grad_fn's name."""
    fn = t.grad_fn
    return {"dtype": _name(t.dtype), "shape": list(t.shape), "values": _values(T, t),
            "grad_fn": None if fn is None else type(fn).__name__}


def _raised(call) -> list:
    """[the exception's Python class (agrad's typed errors subclass it), its message]."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 — the scenario records whatever was raised
        builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return [builtin.__name__, str(exc).replace("torch", "LIB").replace("agrad", "LIB")]
    return ["nothing raised", ""]


def _c(T, values, dtype=None, requires_grad=True):
    return T.tensor(values, dtype=dtype or T.complex128, requires_grad=requires_grad)


_Z = [[1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j], [0.75 - 2.0j, -1.5 - 0.5j, 0.25 + 1.25j]]
_W = [[0.5 - 1.0j, 2.0 + 1.0j, -1.0 + 0.5j], [1.25 + 0.75j, -0.25 - 1.5j, 2.0 + 0.0j]]
_R = [[0.7, -1.2, 2.0], [0.3, 1.1, -0.4]]
_G = [[0.5 + 1.0j, -1.0 + 0.25j, 2.0 - 0.5j], [1.0 - 1.0j, 0.25 + 0.5j, -0.75 + 2.0j]]


def _grad_output(T, out):
    """A fixed grad_output of out's shape and dtype (complex values for a complex output)."""
    flat = [v for row in _G for v in row]
    n = out.numel()
    values = [flat[i % len(flat)] * (1 + 0.1 * i) for i in range(n)]
    if not out.is_complex():
        values = [v.real for v in values]
    return T.tensor(values, dtype=out.dtype).reshape(out.shape)


def _backward(T, fn, *inputs) -> dict:
    """fn's outputs and the gradients of its inputs for a fixed grad_output."""
    outs = fn(*inputs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    outs = [o for o in outs if o.requires_grad]
    grads = T.autograd.grad(outs, list(inputs), [_grad_output(T, o) for o in outs], allow_unused=True)
    return {"outputs": [_seen(T, o) for o in outs],
            "grads": [None if g is None else _seen(T, g) for g in grads]}


# ---- dtypes and promotion ------------------------------------------------------------------------

@scenario
def promote_types_table(T):
    names = ["bool", "uint8", "int64", "float16", "float32", "float64", "complex64", "complex128"]
    dts = [getattr(T, n) for n in names]
    return [[_name(T.promote_types(a, b)) for b in dts] for a in dts]


@scenario
def can_cast_table(T):
    names = ["bool", "int64", "float32", "float64", "complex64", "complex128"]
    dts = [getattr(T, n) for n in names]
    return [[T.can_cast(a, b) for b in dts] for a in dts]


@scenario
def dtype_properties(T):
    out = {}
    for n in ["complex64", "complex128", "float32", "float64"]:
        d = getattr(T, n)
        out[n] = [d.is_complex, d.is_floating_point, d.is_signed, d.itemsize, _name(d.to_real()),
                  _name(d.to_complex())]
    out["aliases"] = [T.cfloat is T.complex64, T.cdouble is T.complex128]
    out["int to_complex"] = _raised(lambda: T.int32.to_complex())
    return out


@scenario
def result_types_with_python_complex(T):
    f32, f64 = T.ones(2), T.ones(2, dtype=T.float64)
    i64, c64 = T.ones(2, dtype=T.int64), T.ones(2, dtype=T.complex64)
    zero_d_c128 = T.tensor(1j, dtype=T.complex128)
    return {"f32*1j": _name((f32 * 1j).dtype), "f64*1j": _name((f64 * 1j).dtype), "i64+1j": _name((i64 + 1j).dtype),
            "c64*2.5": _name((c64 * 2.5).dtype), "c64+f64": _name((c64 + f64).dtype),
            "f32+0d c128": _name((f32 + zero_d_c128).dtype), "c64+0d c128": _name((c64 + zero_d_c128).dtype),
            "result_type": _name(T.result_type(f32, 1j)), "values f32*1j": _values(T, f32 * (2 - 1j))}


@scenario
def default_dtype_decides_the_complex_default(T):
    before = T.get_default_dtype()
    try:
        T.set_default_dtype(T.float64)
        under_double = [_name(T.tensor([1j]).dtype), _name((T.ones(2) * 1j).dtype), repr(T.tensor([1 + 2j]))]
    finally:
        T.set_default_dtype(before)
    return {"float64 default": [s.replace("torch", "LIB").replace("agrad", "LIB") for s in under_double],
            "float32 default": _name(T.tensor([1j]).dtype),
            "refused as default": _raised(lambda: T.set_default_dtype(T.complex64))}


# ---- creation, printing, conversion ---------------------------------------------------------------

@scenario
def creation(T):
    import numpy as np
    made = {"tensor": T.tensor([1 + 2j, 3.5]), "zeros": T.zeros(2, 2, dtype=T.cfloat),
            "ones": T.ones(3, dtype=T.cdouble), "full": T.full((2,), 1 - 2j), "empty": T.empty(0, dtype=T.complex64),
            "zeros_like": T.zeros_like(T.tensor([1j, 2j])), "ones_like": T.ones_like(T.tensor([1j])),
            "full_like": T.full_like(T.tensor([1j, 2j]), 3 + 1j),
            "from_numpy": T.from_numpy(np.array([1 + 1j, -2j], dtype=np.complex64)),
            "as_tensor": T.as_tensor([0.5j], dtype=T.complex128), "eye": T.eye(2, dtype=T.complex64),
            "linspace of complex ends": T.linspace(0, 1j, 5), "linspace complex128": T.linspace(1 + 1j, 3 - 1j, 4,
                                                                                              dtype=T.cdouble),
            "linspace of real ends": T.linspace(0, 1, 3, dtype=T.cfloat)}
    return {k: _seen(T, v) for k, v in made.items()}


@scenario
def printing(T):
    tensors = [T.tensor([1 + 2j, 3.5 - 1j]), T.tensor([[1 + 2j, 3.5 - 1j]], dtype=T.cdouble),
               T.tensor(2 - 0.5j), T.tensor([0j, -0.0 - 0.0j]), T.tensor([1e-5 + 1e5j, 2 + 3j]),
               T.tensor([1 + 1j, 2 + 2j]), T.zeros(0, dtype=T.complex128),
               T.tensor([float("nan") + 1j, complex(float("inf"), -1)]),
               T.arange(12, dtype=T.float64).reshape(3, 4).to(T.complex128) * (1 - 1j),
               T.tensor([1 + 2j, 3 - 1j], dtype=T.cdouble, requires_grad=True),
               T.exp(T.tensor([1 + 2j, 3 - 1j], dtype=T.cdouble, requires_grad=True) ** 2)]
    return [repr(t).replace("torch", "LIB").replace("agrad", "LIB") for t in tensors]


@scenario
def item_tolist_numpy(T):
    z = T.tensor([[1 + 2j, -3j]], dtype=T.complex64)
    return {"item": [z[0, 1].item().real, z[0, 1].item().imag, type(z[0, 0].item()).__name__],
            "tolist": [[[v.real, v.imag] for v in row] for row in z.tolist()],
            "numpy": str(z.numpy().dtype), "is_complex": [z.is_complex(), T.is_complex(z), z.is_floating_point()]}


@scenario
def casts_between_real_and_complex(T):
    z = _c(T, _Z)
    x = T.tensor(_R, dtype=T.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        T.set_warn_always(True)
        try:
            down = z.to(T.float32)
            down_c64 = z.to(T.complex64).real
        finally:
            T.set_warn_always(False)
    up = x.to(T.complex128)
    return {"to float32": _seen(T, down), "to complex64 real": _seen(T, down_c64), "to complex128": _seen(T, up),
            "warnings": [[w.category.__name__, str(w.message).split(" (Triggered")[0]] for w in caught],
            "grads": _backward(T, lambda a, b: (a.to(T.float64), b.to(T.complex128) * 1j), z, x)}


# ---- complex-specific ops -------------------------------------------------------------------------

@scenario
def real_imag_are_views(T):
    z = T.tensor([1 + 2j, 3 - 4j], dtype=T.complex128)
    re, im = z.real, z.imag
    re.mul_(10)
    im[1] = 7
    pairs = T.view_as_real(z)
    pairs[0, 1] = -1
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = T.view_as_complex(x)
    c[0] = 5j
    real_of_real = T.ones(2)
    return {"z": _values(T, z), "re": _values(T, re), "im": _values(T, im), "x": _values(T, x),
            "strides": [list(pairs.stride()), list(re.stride())],
            "real of real is self": T.real(real_of_real) is real_of_real,
            "conj of real is self": real_of_real.conj() is real_of_real,
            "is_neg": z.is_neg()}


@scenario
def view_errors(T):
    return {"imag of real": _raised(lambda: T.ones(2).imag),
            "view_as_real of real": _raised(lambda: T.view_as_real(T.ones(2))),
            "view_as_complex int": _raised(lambda: T.view_as_complex(T.ones(2, dtype=T.int32))),
            "last dim not 2": _raised(lambda: T.view_as_complex(T.ones(3))),
            "last stride": _raised(lambda: T.view_as_complex(T.ones(2, 4)[:, ::2])),
            "offset": _raised(lambda: T.view_as_complex(T.ones(6)[1:5].view(2, 2))),
            "complex of mixed": _raised(lambda: T.complex(T.ones(2), T.ones(2, dtype=T.float64))),
            "complex of ints": _raised(lambda: T.complex(T.ones(2, dtype=T.int32), T.ones(2, dtype=T.int32)))}


@scenario
def complex_specific_ops(T):
    z = _c(T, _Z)
    x = T.tensor(_R, dtype=T.float64, requires_grad=True)
    y = T.tensor([[0.2, -0.7, 1.4], [2.1, -1.3, 0.6]], dtype=T.float64, requires_grad=True)
    cases = {"real": (T.real, z), "imag": (T.imag, z), "conj": (T.conj, z), "conj_physical": (T.conj_physical, z),
             "resolve_conj": (T.resolve_conj, z), "resolve_neg": (T.resolve_neg, z),
             "view_as_real": (T.view_as_real, z), "view_as_complex": (lambda a: T.view_as_complex(a.reshape(3, 2)), x),
             "abs": (T.abs, z), "sgn": (T.sgn, z), "angle": (T.angle, z), "angle of real": (T.angle, x),
             "complex": (T.complex, x, y), "polar": (lambda a, b: T.polar(a.abs(), b), x, y),
             "mH": (lambda a: a.mH, z), "adjoint": (lambda a: a.adjoint(), z), "method conj": (lambda a: a.conj(), z)}
    return {name: _backward(T, fn, *args) for name, (fn, *args) in cases.items()}


@scenario
def conjugate_and_negative_bits(T):
    """Which results carry PyTorch's conjugate and negative bits (is_conj, is_neg), their values and
    grad_fns: conj, _neg_view, imag of a conjugate, views and copies of them, resolve_conj/resolve_neg."""
    z = _c(T, _Z)
    x = T.tensor(_R, dtype=T.float64)
    cases = {"conj": lambda: z.conj(), "conj conj": lambda: z.conj().conj(), "neg_view": lambda: z._neg_view(),
             "neg_view twice": lambda: z._neg_view()._neg_view(), "conj neg_view": lambda: z.conj()._neg_view(),
             "imag of conj": lambda: z.conj().imag, "real of conj": lambda: z.conj().real,
             "imag of neg_view": lambda: z._neg_view().imag, "slice of conj": lambda: z.conj()[1:],
             "transpose of conj": lambda: z.conj().t(), "detach of conj": lambda: z.conj().detach(),
             "clone of conj": lambda: z.conj().clone(), "mul of conj": lambda: z.conj() * 2,
             "resolve_conj": lambda: z.conj().resolve_conj(), "resolve_neg": lambda: z._neg_view().resolve_neg(),
             "rand_like of conj": lambda: T.zeros_like(z.conj()), "conj of real": lambda: x.conj(),
             "neg_view of real": lambda: x._neg_view(), "conj_physical": lambda: z.conj_physical()}
    out = {}
    for name, make in cases.items():
        t = make()
        out[name] = {"bits": [t.is_conj(), t.is_neg()], **_seen(T, t)}
    out["torch.is_conj"] = [T.is_conj(z.conj()), T.is_neg(z.conj().imag)]
    out["resolve of no bit is self"] = [z.resolve_conj() is z, z.resolve_neg() is z]
    out["grads"] = {"neg_view": _backward(T, lambda a: a._neg_view(), z),
                    "imag of conj": _backward(T, lambda a: a.conj().imag, z)}
    return out


@scenario
def forward_ad_tangent_keeps_the_primals_bits(T):
    """set_fw_grad's has_same_meta compares the bits: a tangent whose bits differ from its primal's is
    copied into one laid out, and marked, as the primal (the same values); one with the same bits is kept."""
    fw = T.autograd.forward_ad
    keys = {"neither": lambda a: a, "conj": lambda a: a.conj(), "neg": lambda a: a._neg_view()}
    z = _c(T, _Z, requires_grad=False)
    w = _c(T, _W, requires_grad=False)
    out = {}
    for p in keys:
        for k in keys:
            with fw.dual_level():
                primal, tangent = keys[p](z), keys[k](w)
                dual = fw.make_dual(primal, tangent)
                got = fw.unpack_dual(dual).tangent
                out[f"{p}/{k}"] = {"kept": got is tangent, "bits": [got.is_conj(), got.is_neg()],
                                   "values": _values(T, got),
                                   "imag tangent": _values(T, fw.unpack_dual(T.imag(dual)).tangent),
                                   "slice bits": [dual[1:].is_conj(), fw.unpack_dual(dual[1:]).tangent.is_conj()]}
    with fw.dual_level():       # a negative-bit float primal (imag of a conjugate) and a plain tangent
        a, b = z.conj().imag, w.imag
        dual = fw.make_dual(a, b)
        out["neg float"] = {"bits": [fw.unpack_dual(dual).tangent.is_neg()],
                            "slice tangent": _values(T, fw.unpack_dual(dual[1:]).tangent)}
    return out


@scenario
def grad_outputs_of_another_kind(T):
    """_make_grads: a complex grad_output for a real output (and a real one for a complex output) is refused;
    one of another float dtype is not."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    real_out = (x * 2).sum()
    complex_out = (x * (1 + 1j)).sum()
    return {"complex for real": _raised(lambda: T.autograd.grad(real_out, x, T.tensor(1j), retain_graph=True)),
            "real for complex": _raised(lambda: T.autograd.grad(complex_out, x, T.tensor(1.0), retain_graph=True)),
            "float64 for float32": _values(T, T.autograd.grad(real_out, x, T.tensor(1.0, dtype=T.float64))[0]),
            "backward(complex)": _raised(lambda: (x * 3).sum().backward(T.tensor(1j)))}


@scenario
def inplace_view_op_on_a_view_of_another_dtype(T):
    """A view of another dtype than its base (view_as_real) is rebuilt by replaying its view_fn, which an
    in-place view op (transpose_) does not extend: test_autograd_inplace_views_cross_dtype's recorded
    behaviour (a transposed gradient), and the shape error where the view is not square. (Out of place,
    PyTorch's chained view_fn ends in an as_strided (AsStridedBackward0) where agrad replays transpose: the
    same gradient, another grad_fn, not recorded.)"""
    def run(shape, inplace):
        a0 = T.tensor([[complex(i, -i) for i in range(shape[1] * r, shape[1] * (r + 1))] for r in range(shape[0])],
                      dtype=T.complex128, requires_grad=True)
        b = T.view_as_real(a0.clone())
        b = b.transpose(0, 1) if not inplace else b.transpose_(0, 1)
        b += 1
        g = T.arange(0.0, b.numel(), dtype=T.float64).view(b.shape)
        b.backward(g)
        return {"grad_fn": type(b.grad_fn).__name__ if inplace else None, "grad": _values(T, a0.grad)}
    return {"out of place": run((3, 3), False), "in place": run((3, 3), True),
            "in place, 2x3": _raised(lambda: run((2, 3), True))}


# ---- the common ops with their conjugates -----------------------------------------------------------

@scenario
def pointwise_ops(T):
    z, w = _c(T, _Z), _c(T, _W)
    unary = {"neg": T.neg, "reciprocal": T.reciprocal, "exp": T.exp, "log": T.log, "sqrt": T.sqrt, "rsqrt": T.rsqrt,
             "sin": T.sin, "cos": T.cos, "tan": T.tan, "sinh": T.sinh, "cosh": T.cosh, "tanh": T.tanh,
             "square": T.square, "pow 3": lambda a: a ** 3, "pow 0.5": lambda a: a ** 0.5,
             "pow complex scalar": lambda a: a ** (1.5 - 0.5j), "scalar ** z": lambda a: 2 ** a,
             "times 1j": lambda a: a * 1j, "plus 1j": lambda a: a + (1 - 1j), "div by 2j": lambda a: a / 2j,
             "log1p": T.log1p, "expm1": T.expm1, "log2": T.log2, "log10": T.log10, "exp2": T.exp2,
             "asin": T.asin, "acos": T.acos, "atan": T.atan, "asinh": T.asinh, "acosh": T.acosh, "atanh": T.atanh,
             "sigmoid": T.sigmoid}
    binary = {"add": T.add, "sub": T.sub, "mul": T.mul, "div": T.div, "pow": T.pow,
              "add alpha": lambda a, b: T.add(a, b, alpha=2 - 1j), "sub alpha": lambda a, b: T.sub(a, b, alpha=0.5j),
              "where": lambda a, b: T.where(T.tensor([[True, False, True], [False, True, False]]), a, b),
              "addcmul": lambda a, b: T.addcmul(a, b, a, value=0.5 - 2j),
              "addcdiv": lambda a, b: T.addcdiv(b, a, b, value=1.5j)}
    out = {name: _backward(T, fn, z) for name, fn in unary.items()}
    out.update({name: _backward(T, fn, z, w) for name, fn in binary.items()})
    return out


@scenario
def lerp_sinc_logsumexp_cumprod_diag_isreal(T):
    z, w = _c(T, _Z), _c(T, _W)
    weight = _c(T, [[0.25 + 0.5j, 0.75 - 0.25j, -0.5j], [1.25 + 0.0j, 0.5 + 0.5j, 0.1 - 0.9j]])
    return {"lerp tensor weight": _backward(T, T.lerp, z, w, weight),
            "lerp complex scalar weight": _backward(T, lambda a, b: T.lerp(a, b, 0.3 - 0.6j), z, w),
            "lerp real scalar weight": _backward(T, lambda a, b: T.lerp(a, b, 0.8), z, w),
            "sinc": _backward(T, T.sinc, z), "sinc at 0": _values(T, T.sinc(T.zeros(2, dtype=T.complex128))),
            "dtype mismatches": [_raised(lambda: T.lerp(z, w.real, 0.5)), _raised(lambda: T.lerp(w.real, z, 0.5)),
                                 _raised(lambda: T.lerp(z, w, weight.real)),
                                 _raised(lambda: T.lerp(z.to(T.complex64), w.to(T.complex64), weight))],
            "logsumexp dim 1": _backward(T, lambda a: T.logsumexp(a, 1), z),
            "logsumexp all, keepdim": _backward(T, lambda a: T.logsumexp(a, [0, 1], keepdim=True), z),
            "logsumexp large": _values(T, T.logsumexp(T.tensor([800 + 1j, 799 - 2j], dtype=T.complex128), 0)),
            "cumprod": _backward(T, lambda a: T.cumprod(a, 1), z),
            "cumprod with zeros": _backward(T, lambda a: T.cumprod(a * T.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]],
                                                                                dtype=T.float64), 1), z),
            "diag of a matrix": _backward(T, lambda a: T.diag(a, 1), z),
            "diag of a vector": _backward(T, lambda a: T.diag(a[0], -1), z),
            "isreal": T.isreal(T.tensor([1 + 0j, 1j, complex(float("nan"), 0.0), -0.0j])).tolist()}


@scenario
def addmv_and_baddbmm(T):
    z, w = _c(T, _Z), _c(T, _W)
    v, s = _c(T, [1 - 1j, 0.5 + 2j, -1.5 + 0.5j]), _c(T, [0.25 + 0.5j, -1.0 - 1.0j])
    return {"addmv": _backward(T, T.addmv, s, z, v),
            "addmv beta alpha": _backward(T, lambda a, b, c: T.addmv(a, b, c, beta=0.5 - 1j, alpha=2 + 1j), s, z, v),
            "baddbmm": _backward(T, lambda a, b: T.baddbmm(a.reshape(1, 2, 3)[:, :, :2], b.reshape(1, 2, 3),
                                                          a.reshape(1, 3, 2) * 1j + b.reshape(1, 3, 2)), z, w),
            "baddbmm beta alpha": _backward(T, lambda a, b: T.baddbmm(b.reshape(2, 3, 1) * a.reshape(2, 1, 3),
                                                                     a.reshape(2, 3, 1), b.reshape(2, 1, 3),
                                                                     beta=0.5j, alpha=1 - 1j), z, w)}


@scenario
def cross_vander_dist(T):
    z, w = _c(T, _Z), _c(T, _W)
    return {"linalg.cross": _backward(T, T.linalg.cross, z, w),
            "cross dim 0": _backward(T, lambda a, b: T.cross(a.T, b.T, dim=0), z, w),
            "linalg.vander": _backward(T, lambda a: T.linalg.vander(a[0]), z),
            "linalg.vander N=4": _backward(T, lambda a: T.linalg.vander(a, N=4), z),
            **{f"dist p={p}": _backward(T, lambda a, b: T.dist(a, b, p), z, w) for p in (2, 1, 3.5, float("inf"))},
            "dist broadcast": _backward(T, lambda a, b: T.dist(a, b[0]), z, w)}


@scenario
def real_and_complex_operands(T):
    """A real input meeting a complex one: its gradient is the real part (handle_r_to_c)."""
    z, x = _c(T, _Z), T.tensor(_R, dtype=T.float64, requires_grad=True)
    cases = {"mul": lambda a, b: a * b, "div": lambda a, b: b / a, "add": lambda a, b: a + b,
             "sub": lambda a, b: b - a, "pow": lambda a, b: a ** b, "rpow": lambda a, b: b.abs() ** a,
             "cat": lambda a, b: T.cat([a, b]), "stack": lambda a, b: T.stack([a, b])}
    return {name: _backward(T, fn, z, x) for name, fn in cases.items()}


@scenario
def reductions_and_products(T):
    z, w = _c(T, _Z), _c(T, _W)
    v, u = _c(T, [1 + 1j, -2 + 0.5j, 0.5 - 3j]), _c(T, [2 - 1j, 1j, -1 + 0.25j])
    s = _c(T, [[1 + 1j, 2, -1j], [0.5, 1 - 2j, 3j], [2 + 2j, -1, 1]])
    b3 = _c(T, [[[1 + 1j, 2], [0.5j, -1]], [[2, 1 - 1j], [3j, 0.5]]])
    cases = {"sum": (lambda a: a.sum(), z), "sum dim": (lambda a: a.sum(1), z), "mean": (lambda a: a.mean(0), z),
             "prod": (lambda a: a.prod(1), z), "prod all": (lambda a: a.prod(), z), "cumsum": (lambda a: a.cumsum(1), z),
             "mm": (lambda a, b: T.mm(a, b.mT), z, w), "matmul": (T.matmul, z, s), "bmm": (T.bmm, b3, b3),
             "mv": (T.mv, z, v), "dot": (T.dot, v, u), "vdot": (T.vdot, v, u), "outer": (T.outer, v, u),
             "addmm": (lambda a, b, c: T.addmm(a, b, c, beta=0.5 + 1j, alpha=2 - 1j), s, z.mT, z),
             "linear": (lambda a, b, c: T.nn.functional.linear(a, b, c), z, w, v[:2]),
             "einsum": (lambda a, b: T.einsum("ij,kj->ik", a, b), z, w), "trace": (T.trace, s),
             "vector_norm": (lambda a: T.linalg.vector_norm(a), z), "vector_norm 1 dim": (
                 lambda a: T.linalg.vector_norm(a, 1, 1), z), "vector_norm 3": (lambda a: T.linalg.vector_norm(a, 3), z),
             "vector_norm inf": (lambda a: T.linalg.vector_norm(a, float("inf"), 0), z),
             "var": (lambda a: a.var(), z), "var dim": (lambda a: a.var(1), z),
             "std correction 0": (lambda a: a.std(0, correction=0), z), "var_mean": (lambda a: T.var_mean(a, 1), z),
             "std_mean": (T.std_mean, z)}
    out = {name: _backward(T, fn, *args) for name, (fn, *args) in cases.items()}
    # (PyTorch's einsum of two operands is a bmm between views, ViewBackward0; agrad's is EinsumBackward0)
    out["einsum"]["outputs"][0]["grad_fn"] = "(not compared)"
    return out


@scenario
def shape_and_indexing_ops(T):
    z, w = _c(T, _Z), _c(T, _W)
    idx = T.tensor([[0, 2], [1, 1]])
    mask = T.tensor([[True, False, True], [False, True, False]])
    cases = {"reshape": lambda a: a.reshape(3, 2), "view": lambda a: a.view(6), "permute": lambda a: a.permute(1, 0),
             "transpose": lambda a: a.transpose(0, 1), "squeeze": lambda a: a[:1].squeeze(0),
             "unsqueeze": lambda a: a.unsqueeze(1), "expand": lambda a: a[:, :1].expand(2, 4),
             "split": lambda a: a.split(2, 1), "index": lambda a: a[[0, 1, 1], [2, 0, 2]],
             "getitem": lambda a: a[1, 1:], "gather": lambda a: a.gather(1, idx),
             "scatter": lambda a: a.detach().clone().scatter(1, idx, a[:, :2]),
             "masked_fill": lambda a: a.masked_fill(mask, 2 - 1j), "flip": lambda a: a.flip(1),
             "roll": lambda a: a.roll(1, 1), "clone": lambda a: a.clone(), "contiguous": lambda a: a.T.contiguous(),
             "zeros_like": lambda a: T.zeros_like(a) + a, "index_put": lambda a: a.index_put((T.tensor([0]),), a[1:] * 2)}
    out = {name: _backward(T, fn, z) for name, fn in cases.items()}
    out["cat"] = _backward(T, lambda a, b: T.cat([a, b], 1), z, w)
    out["stack"] = _backward(T, lambda a, b: T.stack([a, b]), z, w)
    return out


@scenario
def classifying_and_comparing(T):
    nan, inf = float("nan"), float("inf")
    z = T.tensor([complex(nan, 1), complex(1, inf), 1 + 1j, complex(inf, nan), 0j])
    w = T.tensor([1 + 1j, 2j, 3.0000001j])
    return {"isnan": _values(T, T.isnan(z)), "isinf": _values(T, T.isinf(z)), "isfinite": _values(T, T.isfinite(z)),
            "isclose": _values(T, T.isclose(w, w * (1 + 1e-6j))),
            "isclose equal_nan": _values(T, T.isclose(z, z, equal_nan=True)),
            "allclose": T.allclose(w, w + 1e-9), "equal": T.equal(w, w.clone()),
            "count_nonzero": _values(T, T.count_nonzero(z)), "nonzero": _values(T, T.nonzero(T.tensor([0j, 1j, 0j, 2])))}


# ---- the engine ---------------------------------------------------------------------------------

@scenario
def backward_of_complex_outputs(T):
    z = _c(T, _Z)
    implicit = _raised(lambda: (z * z).sum().backward())
    z.grad = None
    (z * z).sum().backward(T.tensor(1 - 1j, dtype=T.complex128))
    real_loss = _c(T, _Z)
    (real_loss * real_loss.conj()).real.sum().backward()
    f32 = T.tensor([1.0, -2.0], requires_grad=True)
    (f32 * T.tensor([1j, 2 + 1j], dtype=T.complex64)).abs().sum().backward()
    return {"implicit": implicit, "explicit grad": _values(T, z.grad), "|z|^2": _values(T, real_loss.grad),
            "real input grad": [_name(f32.grad.dtype), _values(T, f32.grad)]}


@scenario
def custom_function_complex_gradients(T):
    """A custom Function's complex gradient of a complex input. (PyTorch's engine refuses one for a real
    input, validate_outputs' check; agrad takes its real part: test_complex.py says so.)"""
    class Twice(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    z = _c(T, _Z)
    Twice.apply(z).sum().backward(T.tensor(0.5 + 1j, dtype=T.complex128))
    return _values(T, z.grad)


@scenario
def forward_ad_tangents(T):
    fw = T.autograd.forward_ad
    z = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex128)
    t = T.tensor([0.5 - 0.25j, -1 + 2j], dtype=T.complex128)
    ops = {"exp": T.exp, "abs": T.abs, "sgn": T.sgn, "angle": T.angle, "conj": T.conj, "real": T.real,
           "imag": T.imag, "z conj z": lambda a: a * a.conj(), "reciprocal": lambda a: 1 / a,
           "view_as_real": T.view_as_real, "to real": lambda a: a.abs().to(T.complex128)}
    out = {}
    for name, fn in ops.items():
        with fw.dual_level():
            tangent = fw.unpack_dual(fn(fw.make_dual(z, t))).tangent
            out[name] = None if tangent is None else _values(T, tangent)
    return out


# ---- gradcheck ----------------------------------------------------------------------------------

@scenario
def gradcheck_complex(T):
    from_lib = T.autograd.gradcheck

    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 * a            # missing conj(): wrong for complex inputs

    z = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex128, requires_grad=True)
    x = T.tensor([0.5, -1.5], dtype=T.float64, requires_grad=True)
    out = {"passes": [from_lib(lambda a: (a * a).exp(), (z,)), from_lib(lambda a: a.abs(), (z,), fast_mode=True),
                      from_lib(lambda a: a * (1 + 1j), (x,)),
                      from_lib(lambda a: a.sin(), (z,), check_forward_ad=True),
                      T.autograd.gradgradcheck(lambda a, b: a * b.conj(), (z, z.detach().clone().requires_grad_()))]}
    for fast in (False, True):
        try:
            from_lib(Square.apply, (z,), fast_mode=fast)
            out[f"fast={fast}"] = "passed"
        except Exception as exc:  # noqa: BLE001
            out[f"fast={fast}"] = [type(exc).__name__, str(exc).split("\n")[0]]
    out["no raise"] = from_lib(Square.apply, (z,), raise_exception=False)
    return out


# ---- refusals ----------------------------------------------------------------------------------

@scenario
def ops_without_complex_kernels_refuse(T):
    """The kernel name in the message differs (PyTorch's vectorised kernels have their own names): the
    type and what follows the name are compared. (Some of PyTorch's ops say it their own way, "maximum not
    implemented for complex tensors."; agrad's refusal is the one message for every op.)"""
    z = T.tensor([1 + 2j], dtype=T.complex64)
    calls = {"erf": lambda: T.erf(z), "lt": lambda: z < 1, "gt with a complex number": lambda: T.ones(2) > 1j,
             "erfinv double": lambda: T.erfinv(z.to(T.complex128)), "arange": lambda: T.arange(3, dtype=T.complex64)}
    out = {}
    for name, call in calls.items():
        kind, message = _raised(call)
        out[name] = [kind, message.split('"')[-1] if message.startswith('"') else message]
    return out


@scenario
def complex_numbers_meeting_real_tensors(T):
    """c10's checked_convert of a complex number into a real dtype, in-place results that cannot be written,
    and Python's conversions of a one-element tensor."""
    x, z = T.ones(2), T.tensor([1 + 1j, 2j])
    mask = T.tensor([True, False])
    return {"fill_": _raised(lambda: x.clone().fill_(1j)), "full": _raised(lambda: T.full((2,), 1j, dtype=T.float32)),
            "masked_fill": _raised(lambda: x.masked_fill(mask, 1j)),
            "fill_ of a real complex number": _values(T, x.clone().fill_(2 + 0j)),
            "add_": _raised(lambda: x.clone().add_(1j)), "mul_": _raised(lambda: x.clone().mul_(z)),
            "abs_": _raised(lambda: z.clone().abs_()), "complex()": [complex(T.tensor([1 + 2j])).imag],
            "float()": _raised(lambda: float(T.tensor([1 + 2j]))), "int() of 3+0j": int(T.tensor([3 + 0j])),
            "bool()": bool(T.tensor([1j])), "z == z": _values(T, z == z), "z != 1j": _values(T, z != 2j),
            "sum(dtype=float64) of z": _values(T, T.tensor([1 + 1j, 2j]).sum(dtype=T.float64))}
