"""stft and istft, the short-time Fourier transform and its inverse (torch/functional.py's stft,
which pads a centred signal, over ATen's SpectralOps.cpp stft and istft).

Both are composites over the FFT primitives of spectral.py, so their gradients (to the signal and
to the window) are those ops': stft frames the signal (unfold: frames `hop_length` apart, `n_fft`
long), multiplies each by the window (zero-padded to n_fft in the middle when win_length is
shorter) and transforms it (_fft_r2c, one-sided by default for a real signal and window; _fft_c2c
for a complex one); istft transforms back, multiplies by the window again, overlap-adds the frames
(unfold_backward) and divides by the overlap-added squared window, refusing where that envelope
vanishes (the NOLA condition). Checks, messages (with ATen's REPR of the call) and warnings are
PyTorch's, in PyTorch's order.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import DtypeError, ShapeError
from ..messages import scalar_type_name, sizes, tensor_type_name
from ..shapes import normalize_dim
from ..warn_once import warn_once
from .pointwise.complex import view_as_real
from .registry import defop
from .samples import SampleInput, make_arg
from .shape.pad import constant_pad_nd, pad
from .shape.view import unfold, unfold_backward
from .spectral import _BY_N, _BY_ROOT_N, _NONE, _fft_c2c, _fft_c2r, _fft_r2c

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as agrad.hann_window or agrad.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=agrad.ones(n_fft, device=<device>)`.")
_NO_WINDOW_ISTFT = ("A window was not provided. A rectangular window will be applied.Please provide the same window "
                    "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                    "window, explicitly set `window=agrad.ones(n_fft, device=<device>)`.")


def _type_string(t) -> str:
    """at::Tensor::toString(): the legacy type name where the dtype has one, else backend + ScalarType."""
    if t.is_complex():
        return f"{'CPU' if t.device.type == 'cpu' else t.device.type.upper()}{scalar_type_name(t.dtype.np)}Type"
    return tensor_type_name(t.dtype.np)


def _opt(value) -> str:
    return "None" if value is None else str(int(value))


def _window_repr(window) -> str:
    return "None" if window is None else f"{_type_string(window)}{{{sizes(window.shape)}}}"


def _check_window_device(name, self, window):
    if window is not None and window.device != self.device:
        raise RuntimeError(f"{name} input and window must be on the same device but got self on {self.device} and "
                           f"window on {window.device}")


# ---- stft ---------------------------------------------------------------------------------------

def _stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex,
          align_to_window):
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:                  # torch/functional.py's padding, before ATen sees the signal
        signal_dim = self.dim()
        extended = [1] * (3 - signal_dim) + list(self.shape)
        half = n_fft // 2
        self = pad(self.view(extended), [half, half], pad_mode)
        self = self.view(list(self.shape[-signal_dim:]) if signal_dim else [])
    _check_window_device("stft", self, window)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_out = return_complex if return_complex is not None else \
        self.is_complex() or (window is not None and window.is_complex())
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        warn_once("stft_return_real", "stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                  "Note: you can still call agrad.view_as_real on the complex output to recover the old return "
                  "format.", at_user=True)
    if window is None:
        warn_once("stft_no_window", _NO_WINDOW, at_user=True)
    call = (f"stft({_type_string(self)}{sizes(self.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_repr(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) ")
    if not (self.is_floating_point() or self.is_complex()):
        raise DtypeError(call + ": expected a tensor of floating point or complex values")
    if not 1 <= self.dim() <= 2:
        raise ShapeError(call + ": expected a 1D or 2D tensor")
    frames = self if self.dim() == 2 else self.unsqueeze(0)
    length = frames.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise ShapeError(call + f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(call + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(call + f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise ShapeError(call + f": expected a 1D window tensor of size equal to win_length={win}, but got window "
                         f"with size {sizes(window.shape)}")
    left = (n_fft - win) // 2
    if win < n_fft:             # the window in the middle of each n_fft-long frame
        window = self.new_ones(win) if window is None else window
        window = constant_pad_nd(window, [left, n_fft - win - left])
        # frames start where the window does, not where its zero padding does. NOTE: PyTorch 2.13's frames
        # here read past the signal's storage where n_fft - win_length is odd or the last frame overhangs
        # (setStorage ... out of bounds); agrad reads zeros there, and elsewhere gives PyTorch's values
        if align_to_window:
            frames = constant_pad_nd(frames, [left, n_fft - win - left])
    frames = unfold(frames, -1, n_fft, hop)                     # (batch, n_frames, n_fft)
    if window is not None:
        frames = frames * window
    mode = _BY_ROOT_N if normalized else _NONE
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft_c2c(frames, [2], mode, True)
    else:
        out = _fft_r2c(frames, [2], mode, True if onesided is None else onesided)
    out.transpose_(1, 2)                                        # (batch, frequencies, n_frames)
    if self.dim() == 1:
        out.squeeze_(0)
    return out if complex_out else view_as_real(out)


def _stft_samples(op):
    def signal(shape, k, **kw):
        return make_arg(shape, key=(op, k), **kw)
    def window(n, k):
        return make_arg((n,), key=(op, "w", k), low=0.5, high=1.0)
    return [SampleInput("(12,) n_fft 4, hann-like window", signal((12,), 0), 4, window=window(4, 0),
                        return_complex=True),
            SampleInput("(2,10) n_fft 6, hop 2, win 4, not centred", signal((2, 10), 1), 6, 2, 4, window(4, 1),
                        center=False, return_complex=True),
            SampleInput("(9,) two-sided, normalized, constant pad", signal((9,), 2), 4, 3, window=window(4, 2),
                        pad_mode="constant", normalized=True, onesided=False, return_complex=True),
            SampleInput("(8,) complex", signal((8,), 3, dtype=dtypes.complex128), 4, 2, window=window(4, 3)),
            SampleInput("(11,) real output, window aligned", signal((11,), 4), 6, 2, 4, window(4, 4), center=False,
                        return_complex=False, align_to_window=True)]


stft = defop(
    "stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, "
    "str pad_mode=\"reflect\", bool normalized=False, bool? onesided=None, bool? return_complex=None, "
    "bool? align_to_window=None) -> Tensor",
    composite=_stft, samples=_stft_samples,
    doc="The short-time Fourier transform: (batch?, frequencies, frames) of the windowed frames, n_fft long and "
        "hop_length (default n_fft // 4) apart, of a 1-D or 2-D signal (padded by n_fft // 2 on each side with "
        "`pad_mode` when `center`); complex (return_complex=True) or its view_as_real.")


# ---- istft --------------------------------------------------------------------------------------

def _istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex):
    _check_window_device("istft", self, window)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not self.is_complex():
        raise DtypeError("istft requires a complex-valued input tensor matching the output from stft with "
                         "return_complex=True.")
    ndim = self.dim() + 1                       # ATen reads the input through view_as_real
    shape = tuple(self.shape) + (2,)
    n_frames = shape[normalize_dim(-2, ndim)]
    fft_size = shape[normalize_dim(-3, ndim)]
    expected_len = n_fft + hop * (n_frames - 1)
    call = (f"istft({_type_string(self)}{sizes(self.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_repr(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) ")
    if self.numel() == 0:
        raise ShapeError(call + ": input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise ShapeError(call + f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    one_sided = fft_size != n_fft if onesided is None else onesided
    if one_sided and n_fft // 2 + 1 != fft_size:
        raise ShapeError(call + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                         f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one_sided and n_fft != fft_size:
        raise ShapeError(call + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                         f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(call + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(call + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise ShapeError(call + ": Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        warn_once("istft_no_window", _NO_WINDOW_ISTFT, at_user=True)
        window = self.new_ones(win, dtype=self.dtype.to_real())
    if win != n_fft:
        left = (n_fft - win) // 2
        window = constant_pad_nd(window, [left, n_fft - win - left])
    spectra = self if ndim == 4 else self.unsqueeze(0)
    spectra = spectra.transpose(1, 2)                            # (channel, n_frames, fft_size)
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft_c2c(spectra, [2], mode, False)
    else:
        if window.is_complex():
            raise DtypeError("Complex windows are incompatible with return_complex=False")
        if not one_sided:
            spectra = spectra.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft_c2r(spectra, [2], mode, n_fft)             # (channel, n_frames, n_fft)
    y = unfold_backward(frames * window.view(1, 1, n_fft), [frames.shape[0], expected_len], 1, n_fft, hop)
    envelope = unfold_backward(window.pow(2).expand(1, n_frames, n_fft), [1, expected_len], 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected_len
    y, envelope = y[:, start:end], envelope[:, start:end]
    # (a Meta tensor has no values to check: the real run checks them)
    if envelope.device.type != "meta" and bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(call + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > expected_len:
        warn_once("istft_length", "The length of signal is shorter than the length parameter. Result is being padded "
                  "with zeros in the tail. Please check your center and hop_length settings.", at_user=True)
        y = constant_pad_nd(y, [0, end - expected_len])
    return y


def _istft_samples(op):
    def spectrum(shape, k):
        return make_arg(shape, key=(op, k), dtype=dtypes.complex128)
    def window(k):
        return make_arg((4,), key=(op, "w", k), low=0.5, high=1.0)
    return [SampleInput("(3,5) n_fft 4", spectrum((3, 5), 0), 4, window=window(0)),
            SampleInput("(2,4,4) n_fft 6 hop 2 win 4, length 7", spectrum((2, 4, 4), 1), 6, 2, 4, window(1),
                        length=7),
            SampleInput("(4,6) two-sided, normalized, complex output", spectrum((4, 6), 2), 4, 2, window=window(2),
                        normalized=True, onesided=False, return_complex=True),
            SampleInput("(3,4) length past the signal", spectrum((3, 4), 3), 4, 2, window=window(3), length=9)]


istft = defop(
    "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
    "bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) "
    "-> Tensor",
    composite=_istft, samples=_istft_samples,
    doc="The inverse short-time Fourier transform: the least-squares signal whose stft is `self` (complex, "
        "(batch?, frequencies, frames)), by overlap-add of the inverse transforms of the windowed frames.")
