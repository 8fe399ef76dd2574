"""B-spline basis functions and their derivatives (Piegl & Tiller, The NURBS Book, 2nd ed., A2.1 and A2.2):
the Cox-de Boor recurrence run once per knot span on polynomials, then evaluation of those polynomials,
vectorized over parameter values with numpy."""

from __future__ import annotations

import numpy as np

__all__ = ["basis_derivatives", "find_span", "span_polynomials"]


def find_span(knots: np.ndarray, degree: int, n_points: int, u: np.ndarray) -> np.ndarray:
    """The knot span index i (n,) with knots[i] <= u < knots[i + 1] for each u (n,) in [knots[p], knots[n_points]]
    (A2.1); the last span's right end is included, so u = knots[n_points] lies in span n_points - 1."""
    end = knots[n_points]
    last = np.searchsorted(knots, end, side="left") - 1  # the last non-empty span, ending at knots[n_points]
    span = np.where(u >= end, last, np.searchsorted(knots, u, side="right") - 1)
    return np.clip(span, degree, last)


def span_polynomials(knots: np.ndarray, degree: int, n_points: int, order: int) -> np.ndarray:
    """C (len(knots) - 1, order + 1, degree + 1, degree + 1): on each non-empty span i (knots[i] < knots[i + 1])
    the k-th derivative of N_{i - degree + j, degree} is sum_m C[i, k, j, m] tau^m, tau = (u - knots[i]) / h,
    h = knots[i + 1] - knots[i]. Built once by the Cox-de Boor recurrence (A2.2) on polynomials in tau: each
    factor (u - knots[a]) / (knots[a + d] - knots[a]) is linear in tau; 0 / 0 terms of repeated knots count as 0.
    Empty spans stay zero (find_span never returns them)."""
    p = degree
    C = np.zeros((len(knots) - 1, order + 1, p + 1, p + 1))
    for i in range(p, n_points):
        h = knots[i + 1] - knots[i]
        if h <= 0:
            continue
        lower = [np.eye(1, p + 1)[0]]  # the degree-0 function N_i = 1 on the span
        for d in range(1, p + 1):
            funcs = []
            for r in range(d + 1):
                a = i - d + r
                f = np.zeros(p + 1)
                den = knots[a + d] - knots[a]
                if r >= 1 and den > 0:  # (u - U_a) / den * N_{a, d-1}, with u - U_a = (U_i - U_a) + h tau
                    f += ((knots[i] - knots[a]) * lower[r - 1] + h * np.roll(lower[r - 1], 1)) / den
                den = knots[a + d + 1] - knots[a + 1]
                if r <= d - 1 and den > 0:  # (U_{a+d+1} - u) / den * N_{a+1, d-1}
                    f += ((knots[a + d + 1] - knots[i]) * lower[r] - h * np.roll(lower[r], 1)) / den
                funcs.append(f)
            lower = funcs
        coeffs = np.array(lower)  # (p + 1 functions, p + 1 powers)
        for k in range(order + 1):
            C[i, k] = coeffs
            coeffs = np.concatenate([coeffs[:, 1:] * np.arange(1, p + 1), np.zeros((p + 1, 1))], axis=1) / h
    return C


def basis_derivatives(polynomials: np.ndarray, knots: np.ndarray, span: np.ndarray, u: np.ndarray) -> np.ndarray:
    """ders (n, order + 1, degree + 1): ders[:, k, j] is the k-th derivative of N_{span - degree + j, degree} at
    u (n,), from the span polynomials of :func:`span_polynomials` (the content of A2.3, vectorized over u)."""
    tau = (u - knots[span]) / (knots[span + 1] - knots[span])
    powers = tau[:, None] ** np.arange(polynomials.shape[-1])
    return np.einsum("nkjm,nm->nkj", polynomials[span], powers)
