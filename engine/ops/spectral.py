"""torch.fft's transforms and the three primitives they are made of (ATen's SpectralOps.cpp).

The primitives are aten's, with aten's schemas: `_fft_r2c(self, dim, normalization, onesided)`
(real to complex; `onesided` keeps the last dim of `dim` to n // 2 + 1), `_fft_c2r(self, dim,
normalization, last_dim_size)` (a one-sided Hermitian spectrum back to a real signal whose last dim
of `dim` has last_dim_size points) and `_fft_c2c(self, dim, normalization, forward)`. `normalization`
is aten's fft_norm_mode: 0 none, 1 times 1/sqrt(n), 2 times 1/n, n the product of the signal's sizes
over `dim` (the real signal's for r2c and c2r). Their kernels run the backend's unnormalized fft
(numpy.fft, cupy.fft, dask.array.fft with the transformed dims in one chunk) and scale once. Their
gradients are derivatives.yaml's (FunctionsManual.cpp's fft_r2c_backward and fft_c2r_backward),
written with the primitives, so that they are differentiable again; forward AD comes from them.

Every torch.fft function is a composite over the primitives, as SpectralOps.cpp's are, so its
grad_fn is PyTorch's (FftR2CBackward0 for fft of a real tensor, ConjBackward0 for ifft of one):
dtype promotion (`_promoted`: integers to the default float, float16 refused, complex where the
transform needs it), `n` / `s` met by slicing or constant_pad_nd (`_resized`), the norm strings
(`_norm_mode`), dims and sizes checked (`_shape_and_dims`), each with PyTorch's message.
stft and istft live in short_time_fourier.py; fftfreq and rfftfreq, factories, in agrad.fft.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..backends.meta import MetaArray
from ..creation import tensor
from ..errors import DimensionError, DtypeError, ShapeError
from ..messages import scalar_type_name
from ..shapes import normalize_dim
from .pointwise.complex import conj, conj_physical, real
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.indexing import narrow
from .shape.pad import constant_pad_nd
from .shape.rearrange import roll

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2       # aten's fft_norm_mode


# ---- the primitives -------------------------------------------------------------------------------

def _complex_of(np_dtype):
    return np.result_type(np_dtype, np.complex64)


def _real_of(np_dtype):
    return np.empty(0, np_dtype).real.dtype


def _scaled(out, normalization, signal_sizes, dtype):
    """`out` times fft_norm_mode's factor over the signal's sizes, in `dtype`."""
    n = math.prod(signal_sizes)
    if normalization == _BY_ROOT_N:
        out = out * (1.0 / math.sqrt(n))
    elif normalization == _BY_N:
        out = out * (1.0 / n)
    return out.astype(dtype, copy=False)


def _one_chunk(x, dim):
    # dask.array.fft transforms along dims that are a single chunk each (agrad's chunks cut dim 0)
    return x.rechunk({d: -1 for d in dim}) if hasattr(x, "rechunk") else x


def _c2c_kernel(xp, self, dim, normalization, forward):
    dim = [normalize_dim(d, self.ndim) for d in dim]
    if not dim:
        return self.copy()
    x = _one_chunk(self, dim)
    # NOTE: norm="forward" leaves the inverse unscaled; the one scaling is _scaled's
    out = xp.fft.fftn(x, axes=dim) if forward else xp.fft.ifftn(x, axes=dim, norm="forward")
    return _scaled(out, normalization, [self.shape[d] for d in dim], self.dtype)


def _check_real(self):
    if self.dtype.kind != "f":
        raise DtypeError(f"Only supports floating-point dtypes, but found: {scalar_type_name(self.dtype)}")


def _r2c_kernel(xp, self, dim, normalization, onesided):
    _check_real(self)
    x = _one_chunk(self, dim)
    out = xp.fft.rfftn(x, axes=dim) if onesided else xp.fft.fftn(x, axes=dim)
    return _scaled(out, normalization, [self.shape[d] for d in dim], _complex_of(self.dtype))


def _c2r_kernel(xp, self, dim, normalization, last_dim_size):
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = xp.fft.irfftn(_one_chunk(self, dim), s=sizes, axes=dim, norm="forward")
    return _scaled(out, normalization, sizes, _real_of(self.dtype))


def _r2c_meta(self, dim, normalization, onesided):
    _check_real(self)
    shape = list(self.shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    return MetaArray(tuple(shape), _complex_of(self.dtype))


def _c2r_meta(self, dim, normalization, last_dim_size):
    shape = list(self.shape)
    shape[dim[-1]] = last_dim_size
    return MetaArray(tuple(shape), _real_of(self.dtype))


def _r2c_backward(grad, self_shape, dim, normalization, onesided):
    """fft_r2c_backward: the adjoint of the full transform, the one-sided half zero-padded to it."""
    if onesided:
        last = normalize_dim(dim[-1], grad.dim())
        missing = self_shape[last] - grad.shape[last]
        if missing > 0:
            grad = constant_pad_nd(grad, [0, 0] * (grad.dim() - 1 - last) + [0, missing])
    return real(_fft_c2c(grad, dim, normalization, False))


def _c2r_backward(grad, dim, normalization):
    """fft_c2r_backward: r2c of the gradient, the entries whose mirror image the one-sided input
    stands for (1 .. n - (n // 2 + 1)) counted twice."""
    g = _fft_r2c(grad, dim, normalization, True)
    last = normalize_dim(dim[-1], grad.dim())
    double = grad.shape[last] - g.shape[last]
    if double <= 0:
        return g
    weights = np.ones(g.shape[last])
    weights[1:1 + double] = 2
    weights = tensor(weights.reshape((-1,) + (1,) * (g.dim() - 1 - last)), dtype=grad.dtype, device=grad.device)
    return g * weights


def _spectrum_samples(dtype, shapes):
    def samples(op):
        return [SampleInput(name, make_arg(shape, key=(op, i), dtype=dtype), *args)
                for i, (name, shape, args) in enumerate(shapes)]
    return samples


_fft_r2c = defop(
    "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
    kernel=_r2c_kernel, meta=_r2c_meta, backward_name="FftR2CBackward0",
    supports_complex=True,      # (to refuse a complex tensor with PyTorch's message: _check_real)
    grads={"self": _r2c_backward},
    samples=_spectrum_samples(dtypes.float64, [
        ("(6,) onesided", (6,), ([0], _NONE, True)), ("(5,) full, by 1/n", (5,), ([0], _BY_N, False)),
        ("(3,4) dims 0,1 onesided, by 1/sqrt(n)", (3, 4), ([0, 1], _BY_ROOT_N, True)),
        ("(4,5,2) dims 2,0 onesided", (4, 5, 2), ([2, 0], _NONE, True))]),
    doc="The n-dimensional FFT of a real tensor over `dim` (the last of them one-sided when `onesided`).")
_fft_c2r = defop(
    "_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
    kernel=_c2r_kernel, meta=_c2r_meta, supports_complex=True, backward_name="FftC2RBackward0",
    grads={"self": lambda grad, dim, normalization: _c2r_backward(grad, dim, normalization)},
    samples=_spectrum_samples(dtypes.complex128, [
        ("(4,) -> 6, by 1/n", (4,), ([0], _BY_N, 6)), ("(4,) -> 7", (4,), ([0], _NONE, 7)),
        ("(3,3) dims 0,1 -> 4, by 1/sqrt(n)", (3, 3), ([0, 1], _BY_ROOT_N, 4)),
        ("(2,3) dim 0 -> 2", (2, 3), ([0], _BY_N, 2))]),
    doc="The inverse of a one-sided real FFT over `dim`: a Hermitian half spectrum to a real signal whose last "
        "dim of `dim` has last_dim_size points.")
_fft_c2c = defop(
    "_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
    kernel=_c2c_kernel, meta=lambda self, dim, normalization, forward: MetaArray(tuple(self.shape), self.dtype),
    supports_complex=True, backward_name="FftC2CBackward0",
    grads={"self": lambda grad, dim, normalization, forward: _fft_c2c(grad, dim, normalization, not forward)},
    samples=_spectrum_samples(dtypes.complex128, [
        ("(5,) forward", (5,), ([0], _NONE, True)), ("(4,) inverse by 1/n", (4,), ([0], _BY_N, False)),
        ("(3,4) dims 1,0 by 1/sqrt(n)", (3, 4), ([1, 0], _BY_ROOT_N, True)),
        ("(2,3) no dims", (2, 3), ([], _NONE, True))]),
    doc="The n-dimensional complex FFT over `dim` (`forward`, or the inverse's exponent sign).")


# ---- what every transform checks (SpectralOps.cpp's helpers) ---------------------------------------

def _wrapped(dim, ndim):
    """maybe_wrap_dim with wrap_scalar=false: a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise DimensionError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(dim, ndim)


def _promoted(x, require_complex=False):
    """promote_type_fft: integers and bool to the default float, float16 refused, complex when asked."""
    dt = x.dtype
    if dt.is_complex:
        return x
    target = dt if dt.is_floating_point else dtypes.get_default_dtype()
    if target not in (dtypes.float32, dtypes.float64):
        raise DtypeError(f"Unsupported dtype {dtypes.SCALAR_TYPE_NAMES[target.name]}")
    if require_complex:
        target = target.to_complex()
    return x if target == dt else x.to(target)


def _norm_mode(norm, forward):
    """norm_from_string: NumPy's names, whose meaning depends on the direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_points(n):
    if n < 1:
        raise ShapeError(f"Invalid number of data points ({n}) specified")


def _resized(x, dims, sizes):
    """resize_fft_input: each dim sliced or zero-padded (constant_pad_nd) to its size; -1 keeps it."""
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] < n:
            pad[len(pad) - 2 * d - 1] = n - x.shape[d]
        elif x.shape[d] > n:
            x = narrow(x, d, 0, n)
    return constant_pad_nd(x, pad) if any(pad) else x


def _as_list(v):
    return None if v is None else [v] if isinstance(v, int) else list(v)


def _shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args: (sizes, dims) of an n-dimensional transform."""
    s, dim = _as_list(s), _as_list(dim)
    ndim, sizes = x.dim(), tuple(x.shape)
    if dim is not None:
        dim = [_wrapped(d, ndim) for d in dim]
        if len(set(dim)) != len(dim):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dim = list(range(ndim - len(s), ndim))
        shape = [sizes[d] if n == -1 else n for d, n in zip(dim, s)]
    elif dim is None:
        dim, shape = list(range(ndim)), list(sizes)
    else:
        shape = [sizes[d] for d in dim]
    for n in shape:
        _check_points(n)
    return shape, dim


def _c2r_shape_and_dims(name, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: also the real output's last size (2 * (m - 1) unless
    `s` says), the Hermitian input's last size being half of it plus one."""
    shape, dim = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s = _as_list(s)
    last_dim_size = 2 * (x.shape[dim[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last_dim_size)
    shape[-1] = last_dim_size // 2 + 1
    return shape, dim, last_dim_size


# ---- the one-dimensional transforms -----------------------------------------------------------------

def _r2c(name, x, n, dim, norm, forward, onesided):
    if x.is_complex():
        raise DtypeError(f"{name} expects a real input tensor, but got {scalar_type_name(x.dtype.np)}")
    x = _promoted(x)
    dim = _wrapped(dim, x.dim())
    _check_points(x.shape[dim] if n is None else n)
    if n is not None:
        x = _resized(x, [dim], [n])
    out = _fft_r2c(x, [dim], _norm_mode(norm, forward), onesided)
    return out if forward else conj(out)            # (aten has no r2c with the inverse's sign)


def _c2r(x, n, dim, norm, forward):
    x = _promoted(x, require_complex=True)
    dim = _wrapped(dim, x.dim())
    last_dim_size = 2 * (x.shape[dim] - 1) if n is None else n
    _check_points(last_dim_size)
    if n is not None:
        x = _resized(x, [dim], [n // 2 + 1])
    if forward:
        x = conj(x)                                 # (nor a c2r with the forward sign)
    return _fft_c2r(x, [dim], _norm_mode(norm, forward), last_dim_size)


def _c2c(x, n, dim, norm, forward):
    dim = _wrapped(dim, x.dim())
    _check_points(x.shape[dim] if n is None else n)
    if n is not None:
        x = _resized(x, [dim], [n])
    return _fft_c2c(x, [dim], _norm_mode(norm, forward), forward)


def _samples_1d(dtype, lengths=(6, 5)):
    def samples(op):
        a, b = lengths
        return [SampleInput(f"({a},)", make_arg((a,), key=(op, 0), dtype=dtype)),
                SampleInput(f"({b},) n=7 ortho", make_arg((b,), key=(op, 1), dtype=dtype), 7, -1, "ortho"),
                SampleInput("(3,4) dim 0 n=2 forward", make_arg((3, 4), key=(op, 2), dtype=dtype), 2, 0, "forward"),
                SampleInput("(4,3)T", make_arg((4, 3), key=(op, 3), dtype=dtype, transposed=True))]
    return samples


def _fft_1d(name, composite, doc, dtype=dtypes.float64, **kw):
    return defop(f"fft_{name}(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor",
                 composite=composite, samples=_samples_1d(dtype, **kw), doc=doc)


fft_fft = _fft_1d("fft", lambda self, n, dim, norm: _c2c(self, n, dim, norm, True) if self.is_complex()
                  else _r2c("fft", self, n, dim, norm, True, False),
                  "torch.fft.fft: the discrete Fourier transform along `dim`, of `n` points (sliced or "
                  "zero-padded).")
fft_ifft = _fft_1d("ifft", lambda self, n, dim, norm: _c2c(self, n, dim, norm, False) if self.is_complex()
                   else _r2c("ifft", self, n, dim, norm, False, False),
                   "torch.fft.ifft: the inverse discrete Fourier transform along `dim`.", dtype=dtypes.complex128)
fft_rfft = _fft_1d("rfft", lambda self, n, dim, norm: _r2c("rfft", self, n, dim, norm, True, True),
                   "torch.fft.rfft: the one-sided FFT of a real signal (n // 2 + 1 frequencies).")
fft_irfft = _fft_1d("irfft", lambda self, n, dim, norm: _c2r(self, n, dim, norm, False),
                    "torch.fft.irfft: the inverse of rfft, a real signal of n points (default 2 * (m - 1)).",
                    dtype=dtypes.complex128, lengths=(4, 3))
fft_hfft = _fft_1d("hfft", lambda self, n, dim, norm: _c2r(self, n, dim, norm, True),
                   "torch.fft.hfft: the FFT of a Hermitian-symmetric signal given by its one-sided half (real).",
                   dtype=dtypes.complex128, lengths=(4, 3))
fft_ihfft = _fft_1d("ihfft", lambda self, n, dim, norm: _r2c("ihfft", self, n, dim, norm, False, True),
                    "torch.fft.ihfft: the inverse of hfft, the one-sided half of a real signal's inverse FFT.")


# ---- the n-dimensional transforms ---------------------------------------------------------------------

def _fftn(name, x, s, dim, norm, forward):
    shape, dim = _shape_and_dims(x, s, dim)
    x = _promoted(x, require_complex=True)
    return _fft_c2c(_resized(x, dim, shape), dim, _norm_mode(norm, forward), forward)


def _rfftn(x, s, dim, norm):
    if x.is_complex():
        raise DtypeError(f"rfftn expects a real-valued input tensor, but got {scalar_type_name(x.dtype.np)}")
    shape, dim = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resized(_promoted(x), dim, shape)
    return _fft_r2c(x, dim, _norm_mode(norm, True), True)


def _irfftn(x, s, dim, norm):
    shape, dim, last_dim_size = _c2r_shape_and_dims("irfftn", x, s, dim)
    x = _resized(_promoted(x, require_complex=True), dim, shape)
    return _fft_c2r(x, dim, _norm_mode(norm, False), last_dim_size)


def _hfftn(x, s, dim, norm):
    shape, dim, last_dim_size = _c2r_shape_and_dims("hfftn", x, s, dim)
    x = _resized(_promoted(x, require_complex=True), dim, shape)
    mode = _norm_mode(norm, True)
    if len(dim) > 1:
        x = _fft_c2c(x, dim[:-1], mode, True)
    return _fft_c2r(conj(x), dim[-1:], mode, last_dim_size)


def _ihfftn(x, s, dim, norm):
    shape, dim = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resized(_promoted(x), dim, shape)
    mode = _norm_mode(norm, False)
    out = _fft_r2c(x, dim[-1:], mode, True)
    if len(dim) == 1:
        return conj(out)
    return _fft_c2c(conj_physical(out), dim[:-1], mode, False)


def _samples_nd(dtype, two_d):
    def samples(op):
        arg = lambda shape, k, **kw: make_arg(shape, key=(op, k), dtype=dtype, **kw)  # noqa: E731
        out = [SampleInput("(3,4)", arg((3, 4), 0)),
               SampleInput("(2,3,4) s=[4,3] ortho", arg((2, 3, 4), 1), [4, 3], norm="ortho"),
               SampleInput("(4,3)T dim [0,1] s=[-1,2] forward", arg((4, 3), 2, transposed=True), [-1, 2], [0, 1],
                           "forward")]
        if not two_d:
            out.append(SampleInput("(2,3,2) dim [2,0]", arg((2, 3, 2), 3), None, [2, 0]))
        return out
    return samples


def _fft_nd(name, composite, what, dtype=dtypes.float64):
    two_d = name.endswith("2")
    dims = "int[] dim=[-2,-1]" if two_d else "int[]? dim=None"
    default = "the last two" if two_d else "every dim, or the last len(s)"
    return defop(f"fft_{name}(Tensor self, SymInt[]? s=None, {dims}, str? norm=None) -> Tensor",
                 composite=composite, samples=_samples_nd(dtype, two_d),
                 doc=f"torch.fft.{name}: {what} over `dim` (default: {default}), of `s` points each.")


def _forward_fftn(self, s, dim, norm):
    return _fftn("fftn", self, s, dim, norm, True)


def _inverse_fftn(self, s, dim, norm):
    return _fftn("ifftn", self, s, dim, norm, False)


_C = dtypes.complex128
fft_fftn = _fft_nd("fftn", _forward_fftn, "the FFT")
fft_fft2 = _fft_nd("fft2", _forward_fftn, "the FFT")
fft_ifftn = _fft_nd("ifftn", _inverse_fftn, "the inverse FFT", _C)
fft_ifft2 = _fft_nd("ifft2", _inverse_fftn, "the inverse FFT", _C)
fft_rfftn = _fft_nd("rfftn", _rfftn, "the FFT of a real signal, one-sided in the last dim")
fft_rfft2 = _fft_nd("rfft2", _rfftn, "the FFT of a real signal, one-sided in the last dim")
fft_irfftn = _fft_nd("irfftn", _irfftn, "the inverse of rfftn", _C)
fft_irfft2 = _fft_nd("irfft2", _irfftn, "the inverse of rfft2", _C)
fft_hfftn = _fft_nd("hfftn", _hfftn, "the FFT of a Hermitian signal given by its one-sided half", _C)
fft_hfft2 = _fft_nd("hfft2", _hfftn, "the FFT of a Hermitian signal given by its one-sided half", _C)
fft_ihfftn = _fft_nd("ihfftn", _ihfftn, "the inverse of hfftn")
fft_ihfft2 = _fft_nd("ihfft2", _ihfftn, "the inverse of hfft2")


# ---- fftshift, ifftshift --------------------------------------------------------------------------------

def _shifted(x, dim, half):
    dims = list(range(x.dim())) if dim is None else [_wrapped(d, x.dim()) for d in _as_list(dim)]
    return roll(x, [half(x.shape[d]) for d in dims], dims)


_shift_samples = lambda op: [  # noqa: E731
    SampleInput("(5,)", make_arg((5,), key=(op, 0))), SampleInput("(3,4)", make_arg((3, 4), key=(op, 1))),
    SampleInput("(3,5) dim 1", make_arg((3, 5), key=(op, 2)), 1),
    SampleInput("(2,3,5) dim [0,-1]", make_arg((2, 3, 5), key=(op, 3)), [0, -1])]
fft_fftshift = defop("fft_fftshift(Tensor self, int[]? dim=None) -> Tensor",
                     composite=lambda self, dim: _shifted(self, dim, lambda n: n // 2), samples=_shift_samples,
                     torch="torch.fft.fftshift",
                     doc="torch.fft.fftshift: the zero frequency moved to the middle (roll by size // 2 over `dim`, "
                         "default every dim).")
fft_ifftshift = defop("fft_ifftshift(Tensor self, int[]? dim=None) -> Tensor",
                      composite=lambda self, dim: _shifted(self, dim, lambda n: (n + 1) // 2),
                      samples=_shift_samples, torch="torch.fft.ifftshift",
                      doc="torch.fft.ifftshift: the inverse of fftshift (roll by (size + 1) // 2).")
