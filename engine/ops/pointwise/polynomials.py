"""The orthogonal polynomials of torch.special (ATen's Math.h): Chebyshev's of the first to fourth
kinds (T, U, V, W) and their shifted forms on [0, 1], the physicists' and probabilists' Hermite
polynomials (H, He), Laguerre's (L) and Legendre's (P), each evaluated at x for degree n.

As ATen computes them, element by element: n is truncated to an integer; a negative n gives 0;
the values at the interval's ends (|x| = 1, or x = 0 and 1 for the shifted ones) are exact; Chebyshev
polynomials of high degree inside the interval use their trigonometric forms (cos(n acos x) …), where
the recurrence would lose accuracy; otherwise the three-term recurrence from degrees 0 and 1, which
outside the interval (|x| > 1) simply grows. Both arguments are tensors or numbers, promoted to a float
dtype. PyTorch gives these no derivative (derivatives.yaml): their results never require grad.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...creation import tensor
from ...shapes import pointwise_meta
from .._common import host
from ..registry import defop
from ..samples import SampleInput, make_arg

_meta = pointwise_meta()


def _evaluate(x, n, cases, first, step):
    """ATen's forward for every element: `cases(x, n, f)` the (condition, value) pairs it tests in order
    before the recurrence; then degree 0 is 1, degree 1 `first(x)`, and degree k + 1 `step(x, q, p, k)` from
    degrees k and k - 1 (k = 1 … n - 1), in x's float dtype `f`."""
    f = x.dtype.type
    conditions, values = [], []
    with np.errstate(all="ignore"):
        for condition, value in cases(x, n, f):
            conditions.append(condition)
            values.append(value)
        taken = np.zeros(np.broadcast(x, n).shape, dtype=bool)
        for condition in conditions:
            taken |= condition
        recurring = ~taken & (n >= 2)
        p, q = np.ones_like(x), first(x)
        for k in range(1, int(n[recurring].max()) if recurring.any() else 1):
            r = step(x, q, p, f(k))
            live = k < n
            p, q = np.where(live, q, p), np.where(live, r, q)
        conditions += [n == 0, n == 1]
        values += [f(1), first(x)]
        return np.select(conditions, values, q).astype(x.dtype, copy=False)


def _polynomial(name, cases, first, step, doc):
    def kernel(xp, x, n):
        dtype = (n if isinstance(x, (int, float)) else x).dtype
        # (evaluated on the host: the loop runs to the largest degree among the elements)
        x = host(x).astype(dtype, copy=False)
        # degree: ATen's static_cast<int64_t>(n) (a fraction truncated)
        n = np.trunc(host(n).astype(dtype, copy=False)).astype(np.int64)
        x, n = np.broadcast_arrays(x, n)
        return xp.asarray(_evaluate(x, n, cases, first, step))

    def samples(op):
        x = make_arg((2, 5), key=(op, "x"), low=-1.2, high=1.2, requires_grad=False)
        degrees = tensor([0.0, 1.0, 3.7, 9.0, -2.0], dtype=dtypes.float64)
        ends = tensor([[-1.0], [1.0], [0.0], [0.5], [3.0]], dtype=dtypes.float64)
        return [SampleInput("(2,5) degree 3", x, 3), SampleInput("(2,5) degrees 0, 1, 3.7, 9, -2", x, degrees),
                SampleInput("-1, 1, 0, 0.5, 3 at degrees 2, 5, 7, 10", ends,
                            tensor([2.0, 5.0, 7.0, 10.0], dtype=dtypes.float64)),
                SampleInput("high degree 12", x, 12), SampleInput("number x", 0.3, degrees),
                SampleInput("int64 x", tensor([[-2, 0, 1, 2]]), tensor([[1], [4]]))]

    return defop(f"{name}(Tensor x, Tensor n) -> Tensor", kernel=kernel, meta=_meta, promote="float",
                 wraps_numbers=True, samples=samples, torch=f"torch.special.{name[len('special_'):]}", doc=doc)


def _ends(at_minus_one_odd, at_minus_one_even, at_one):
    """The |x| = 1 case of the Chebyshev polynomials: x = 1, and x = -1 by n's parity."""
    def case(x, n, f):
        even = n % 2 == 0
        return np.abs(x) == 1, np.where(x > 0, at_one(n, f), np.where(even, at_minus_one_even(n, f),
                                                                          at_minus_one_odd(n, f)))
    return case


def _chebyshev(ends, threshold, trig):
    def cases(x, n, f):
        return [(n < 0, f(0)), ends(x, n, f), ((n > threshold) & (np.abs(x) < 1), trig(x, n.astype(x.dtype), f))]
    return cases


def _u_trig(x, n, f):
    theta = np.arccos(x)
    return np.where(np.sin(theta) != 0, np.sin((n + 1) * theta) / np.sin(theta), (n + 1) * np.cos((n + 1) * theta) / x)


def _v_trig(x, n, f):
    theta = np.arccos(x)
    return np.where(np.sin(theta / f(2)) != 1, np.cos((n + f(0.5)) * theta) / np.cos(theta / f(2)),
                    np.where(n % 2 == 0, n + n + 1, -(n + n + 1)))


def _w_trig(x, n, f):
    theta = np.arccos(x)
    return np.where(np.cos(theta / f(2)) != 1, np.sin((n + f(0.5)) * theta) / np.sin(theta / f(2)),
                    np.where(x > 0, n + n + 1, np.where(n % 2 == 0, f(1), f(-1))))


def _chebyshev_step(x, q, p, k):
    return (x + x) * q - p


special_chebyshev_polynomial_t = _polynomial(
    "special_chebyshev_polynomial_t",
    _chebyshev(_ends(lambda n, f: f(-1), lambda n, f: f(1), lambda n, f: f(1)), 6,
               lambda x, n, f: np.cos(n * np.arccos(x))),
    lambda x: x, _chebyshev_step, "Tₙ(x), the Chebyshev polynomial of the first kind.")
special_chebyshev_polynomial_u = _polynomial(
    "special_chebyshev_polynomial_u",
    _chebyshev(_ends(lambda n, f: -(n + 1), lambda n, f: n + 1, lambda n, f: n + 1), 8, _u_trig),
    lambda x: x + x, _chebyshev_step, "Uₙ(x), the Chebyshev polynomial of the second kind.")
special_chebyshev_polynomial_v = _polynomial(
    "special_chebyshev_polynomial_v",
    _chebyshev(_ends(lambda n, f: -(n + n + 1), lambda n, f: n + n + 1, lambda n, f: f(1)), 8, _v_trig),
    lambda x: x + x - 1, _chebyshev_step, "Vₙ(x), the Chebyshev polynomial of the third kind.")
special_chebyshev_polynomial_w = _polynomial(
    "special_chebyshev_polynomial_w",
    _chebyshev(_ends(lambda n, f: f(-1), lambda n, f: f(1), lambda n, f: n + n + 1), 8, _w_trig),
    lambda x: x + x + 1, _chebyshev_step, "Wₙ(x), the Chebyshev polynomial of the fourth kind.")


def _shifted(at_one, at_zero_even, at_zero_odd, threshold, trig, first):
    """The shifted Chebyshev polynomial: the unshifted one's at 2x - 1 (as ATen spells it, x + x - 1)."""
    def cases(x, n, f):
        even = n % 2 == 0
        y = x + x - f(1)
        return [(n < 0, f(0)), (x == 1, at_one(n, f)),
                (x == 0, np.where(even, at_zero_even(n, f), at_zero_odd(n, f))),
                ((n > threshold) & (np.abs(y) < 1), trig(y, n.astype(x.dtype), f))]

    def step(x, q, p, k):
        return (x + x - 1 + (x + x - 1)) * q - p
    return cases, first, step


def _shifted_w_trig(y, n, f):
    theta = np.arccos(y)
    return np.where(np.cos(theta / f(2)) != 1, np.sin((n + f(0.5)) * theta) / np.sin(theta / f(2)),
                    np.where(n % 2 == 0, f(1), f(-1)))


special_shifted_chebyshev_polynomial_t = _polynomial(
    "special_shifted_chebyshev_polynomial_t",
    *_shifted(lambda n, f: f(1), lambda n, f: f(1), lambda n, f: f(-1), 6,
              lambda y, n, f: np.cos(n * np.arccos(y)), lambda x: x + x - 1),
    "Tₙ*(x) = Tₙ(2x - 1), the shifted Chebyshev polynomial of the first kind.")
special_shifted_chebyshev_polynomial_u = _polynomial(
    "special_shifted_chebyshev_polynomial_u",
    *_shifted(lambda n, f: n + 1, lambda n, f: n + 1, lambda n, f: -(n + 1), 6, _u_trig,
              lambda x: x + x - 1 + (x + x - 1)),
    "Uₙ*(x) = Uₙ(2x - 1), the shifted Chebyshev polynomial of the second kind.")
special_shifted_chebyshev_polynomial_v = _polynomial(
    "special_shifted_chebyshev_polynomial_v",
    *_shifted(lambda n, f: f(1), lambda n, f: n + n + 1, lambda n, f: -(n + n + 1), 6, _v_trig,
              lambda x: x + x - 1 + (x + x - 1) - 1),
    "Vₙ*(x) = Vₙ(2x - 1), the shifted Chebyshev polynomial of the third kind.")
special_shifted_chebyshev_polynomial_w = _polynomial(
    "special_shifted_chebyshev_polynomial_w",
    *_shifted(lambda n, f: n + n + 1, lambda n, f: f(1), lambda n, f: f(-1), 4, _shifted_w_trig,
              lambda x: x + x - 1 + (x + x - 1) + 1),
    "Wₙ*(x) = Wₙ(2x - 1), the shifted Chebyshev polynomial of the fourth kind.")


def _negative_degree(x, n, f):
    return [(n < 0, f(0))]


special_hermite_polynomial_h = _polynomial(
    "special_hermite_polynomial_h", _negative_degree, lambda x: x + x,
    # ATen's loop over k = 2, 4, …, 2n - 2: H_{j+1} = 2x H_j - 2j H_{j-1}
    lambda x, q, p, k: (x + x) * q - (k + k) * p,
    "Hₙ(x), the physicists' Hermite polynomial.")
special_hermite_polynomial_he = _polynomial(
    "special_hermite_polynomial_he", _negative_degree, lambda x: x, lambda x, q, p, k: x * q - k * p,
    "Heₙ(x), the probabilists' Hermite polynomial.")
special_laguerre_polynomial_l = _polynomial(
    "special_laguerre_polynomial_l",
    lambda x, n, f: [(n < 0, f(0)), (np.abs(x) == 0, f(1))], lambda x: 1 - x,
    lambda x, q, p, k: (((k + k) + (1 - x)) * q - k * p) / (k + 1),
    "Lₙ(x), the Laguerre polynomial.")
special_legendre_polynomial_p = _polynomial(
    "special_legendre_polynomial_p",
    lambda x, n, f: [(n < 0, f(0)), (np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), f(1), f(-1)))],
    lambda x: x, lambda x, q, p, k: ((k + k + 1) * x * q - k * p) / (k + 1),
    "Pₙ(x), the Legendre polynomial.")
