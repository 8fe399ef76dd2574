"""Checking the numeric arguments every formulation's ``Dynamics`` takes: states q (n_q,) and u (n_u,), or batches
(B, n_q) and (B, n_u), in real arithmetic. Errors name the argument and the expected shape."""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, ComplexArgumentError

__all__ = ["real_array", "state_arrays"]


def real_array(value, name: str) -> np.ndarray:
    """``value`` as a float array; complex or non-numeric values are refused with the argument's name."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"{name}: expected an array of real numbers, got {value!r} ({exc})") from None
    if np.iscomplexobj(arr):
        raise ComplexArgumentError(f"{name}: complex values are not supported here (they would be cast to real, "
                                   "dropping the imaginary part); pass real numbers")
    if arr.dtype.kind not in "biuf":
        raise ArgumentError(f"{name}: expected an array of real numbers, got {value!r} (dtype {arr.dtype})")
    return arr.astype(float, copy=False)


def state_arrays(q, u, n_q: int, n_u: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(q, u, batch): q of shape (n_q,) or (B, n_q), u of shape (n_u,) or (B, n_u) (broadcast over a batch of q;
    None gives zeros). Anything else raises :class:`kane.errors.ArgumentError` naming the expected shapes."""
    q = real_array(q, "q")
    u = np.zeros(q.shape[:-1] + (n_u,)) if u is None else real_array(u, "u")
    ok_q = q.ndim in (1, 2) and q.shape[-1] == n_q
    ok_u = u.ndim in (1, 2) and u.shape[-1] == n_u
    batch = q.ndim == 2
    if not (ok_q and ok_u) or (u.ndim == 2 and not batch) or (batch and u.ndim == 2 and u.shape[0] != q.shape[0]):
        raise ArgumentError(f"expected q of shape ({n_q},) or (B, {n_q}) and u of shape ({n_u},) or (B, {n_u}) "
                            f"with the same B; got q {q.shape} and u {u.shape}")
    if batch and u.ndim == 1:
        u = np.broadcast_to(u, (q.shape[0], n_u))
    return q, u, batch
