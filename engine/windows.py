"""torch's window functions (ATen's TensorFactories.cpp): hann_window, hamming_window,
blackman_window, bartlett_window and kaiser_window.

Each computes, as ATen does, the symmetric window of length N (N = window_length + 1 when
`periodic`, the periodic window being that one without its last value) from arange(N) in the
result's dtype, with ATen's order of operations so that float32 windows round as PyTorch's do;
a window of length 0 is empty, of length 1 is [1]. Like arange they are factories: their results
are leaves (`requires_grad` makes one a leaf that requires grad), no gradient flows into them.
"""
from __future__ import annotations

import math

import numpy as np

from . import creation, dtypes
from .messages import c_type_name

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _checked(name, window_length, dtype, device):
    """ATen's window_function_checks; the device and numpy dtype the window is made with."""
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dev, _, np_dtype = creation._resolve(dtype or dtypes.get_default_dtype(), device)
    if np_dtype.kind != "f":
        default = " (default)" if dtype is None else ""
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={c_type_name(np_dtype)}"
                           f"{default}, device={dev}, layout=Strided (default), requires_grad=false (default), "
                           f"pinned_memory=false, memory_format=(nullopt))")
    return dev, np_dtype


def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """The window `values(n, np_dtype)` gives for n = arange(N), ATen's short cuts and periodic trim around it."""
    dev, np_dtype = _checked(name, window_length, dtype, device)
    if window_length <= 1:
        out = np.ones(window_length, dtype=np_dtype)
    else:
        length = window_length + 1 if periodic else window_length
        out = values(np.arange(length, dtype=np_dtype), length, np_dtype.type)
        out = out[:window_length] if periodic else out
    return creation.tensor(np.ascontiguousarray(out, dtype=np_dtype), dtype=dtypes.from_numpy(np_dtype),
                           device=dev, requires_grad=requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """alpha - beta cos(2πn / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N, f: np.cos(n * f(math.pi * 2.0 / (N - 1))) * f(-beta) + f(alpha))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """½ (1 - cos(2πn / (N - 1))): hamming_window with alpha = beta = 0.5, as ATen computes it."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N, f: np.cos(n * f(math.pi * 2.0 / (N - 1))) * f(-0.5) + f(0.5))


def _blackman(n, N, f):
    x = n * f(math.pi / (N - 1))
    return np.cos(x * f(4)) * f(0.08) - np.cos(x * f(2)) * f(0.5) + f(0.42)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """0.42 - 0.5 cos(2πn / (N - 1)) + 0.08 cos(4πn / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, _blackman)


def _bartlett(n, N, f):
    w = n * f(2.0 / (N - 1))
    first_half = ((N - 1) >> 1) + 1
    w[first_half:] = w[first_half:] * f(-1) + f(2)
    return w


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangle 2n / (N - 1) up to the middle, 2 - 2n / (N - 1) after it."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def _kaiser(beta):
    def values(n, N, f):
        # ATen's kaiser_window kernel, in the opmath type (float for float16): the abs keeps the root real
        # where rounding leaves 1 - r² just below 0 at the ends
        from scipy.special import i0     # SciPy is imported on first use, as the CPU backend imports it
        work = np.float32 if f is np.float16 else f
        alpha, beta_ = work((N - 1) / 2.0), work(beta)
        r = (n.astype(work) - alpha) / alpha
        return i0(beta_ * np.sqrt(np.abs(work(1) - r * r))).astype(work) / work(i0(beta_))
    return values


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """I₀(β √(1 - ((n - α) / α)²)) / I₀(β), α = (N - 1) / 2, I₀ the modified Bessel function of
    order 0."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, _kaiser(beta))
