"""Consistent configurations: Newton's method on the holonomic constraints C(q) = 0 (seed 003's assembly).

Corrections are taken through the speeds, dq = W(q) du with A_C(q) du = -C(q) (A_C = dC/dq W are the velocity
rows of the same constraints), so every joint kind is handled alike and quaternions stay on their sphere after
renormalization. ``project_positions`` moves all coordinates (minimum-norm step, the drift correction used
during a run); ``assemble`` moves only the coordinates of the dependent speeds' joints (given the independent
coordinates, solve for the dependent ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KaneError
from ..model import joints as J

__all__ = ["AssemblyError", "AssemblyResult", "project_positions", "assemble", "make_projection"]


class AssemblyError(KaneError):
    """Newton's method on C(q) = 0 did not converge (the message gives the residual and the configuration)."""


@dataclass(frozen=True)
class AssemblyResult:
    """q: the corrected configuration (n_q,); residual: max |C(q)| [m]; iterations: Newton steps taken."""

    q: np.ndarray
    residual: float
    iterations: int


def _normalize_quaternions(model, q):
    for pj in model.joints:
        if isinstance(pj.joint, (J.Spherical, J.Free)):
            idx = list(range(model.n_q)[pj.q_slice])[-4:]
            q[idx] /= np.linalg.norm(q[idx])
    return q


def _newton(dyn, t, q, columns, tol, max_iter, params):
    q = np.array(q, dtype=float)
    for it in range(max_iter + 1):
        C, A_C, W = dyn.holonomic_rows(t, q, params)
        res = float(np.max(np.abs(C))) if C.size else 0.0
        if res <= tol:
            return AssemblyResult(q, res, it)
        if it == max_iter:
            break
        A = A_C[:, columns]
        du, *_ = np.linalg.lstsq(A, -C, rcond=None)
        q = _normalize_quaternions(dyn.model, q + W[:, columns] @ du)
    names = ", ".join(f"{n}={v:.6g}" for n, v in zip(dyn.q_names, q))
    raise AssemblyError(f"the holonomic constraints could not be satisfied: max |C(q)| = {res:.3g} after "
                        f"{max_iter} Newton steps at t = {t:g} (q: {names})")


def project_positions(dyn, t, q, *, tol: float = 1e-12, max_iter: int = 20, params=None) -> AssemblyResult:
    """Correct q onto C(q) = 0 with minimum-norm Newton steps through all the speeds."""
    return _newton(dyn, t, q, list(range(dyn.model.n_u)), tol, max_iter, params)


def assemble(dyn, q, *, t: float = 0.0, tol: float = 1e-12, max_iter: int = 50, params=None) -> AssemblyResult:
    """Given the independent coordinates in ``q``, solve C(q) = 0 for the coordinates of the joints whose speeds
    are dependent (the independent ones are kept as given)."""
    dep = list(dyn.dependent_indices) or list(range(dyn.model.n_u))
    return _newton(dyn, t, q, dep, tol, max_iter, params)


def make_projection(dyn, *, tol: float = 1e-12, params=None):
    """A ``projection(t, q, u) -> (q, u)`` hook for the Simulator: positions corrected onto C(q) = 0; the embedded
    equations recompute the dependent speeds from u, so u is kept."""

    def projection(t, q, u):
        return project_positions(dyn, t, q, tol=tol, params=params).q, u

    return projection
