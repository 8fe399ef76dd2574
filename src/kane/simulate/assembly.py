"""Consistent configurations: Newton's method on the holonomic constraints C(q) = 0 (seed 003's assembly).

Corrections are taken through the speeds, dq = W(q) du with A_C(q) du = -C(q) (A_C = dC/dq W are the velocity
rows of the same constraints), so every joint kind is handled alike and quaternions stay on their sphere after
renormalization. ``project_positions`` moves all coordinates (minimum-norm step, the drift correction used
during a run); ``assemble`` moves only the coordinates of the dependent speeds' joints (given the independent
coordinates, solve for the dependent ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import KaneError

__all__ = ["AssemblyError", "AssemblyResult", "project_positions", "assemble", "make_projection"]


class AssemblyError(KaneError):
    """Newton's method on C(q) = 0 did not converge (the message gives the residual and the configuration)."""


@dataclass(frozen=True)
class AssemblyResult:
    """q: the corrected configuration (n_q,); residual: max |C(q)| [m]; iterations: Newton steps taken;
    changed: name -> (given, new) for every coordinate that moved by more than 1e-12; distance: max |q - q_given|."""

    q: np.ndarray
    residual: float
    iterations: int
    changed: dict = field(default_factory=dict)
    distance: float = 0.0


def _rows(dyn) -> tuple[list | None, list]:
    """(the C rows to solve, or None for all; the constraint's name of each of them): rows dropped as redundant at
    derivation (``derive(..., redundant="drop")``) are left out, so the Newton steps solve independent rows."""
    eqs = getattr(dyn, "equations", None)
    layout = getattr(eqs, "constraint_layout", {}) or {}
    names = [name for name, block in layout.items() if block.holonomic is not None
             for _ in range(block.holonomic.start, block.holonomic.stop)]
    kept = getattr(eqs, "kept_holonomic", None)
    if kept is None or len(kept) == len(names):
        return None, names
    return list(kept), [names[k] for k in kept]


def _holonomic(dyn, t, q, params, kept):
    """(C, A_C, W) of :meth:`kane.Dynamics.holonomic_rows`, C and A_C restricted to the rows ``kept``."""
    C, A_C, W = dyn.holonomic_rows(t, q, params)
    return (C, A_C, W) if kept is None else (C[kept], A_C[kept], W)


def _violated(names, C) -> str:
    """The names of the constraints whose residuals are largest, for messages (``names``: one per row of C)."""
    worst = [] if len(names) != len(C) or not C.size else \
        [n for n, c in zip(names, np.abs(C)) if c > 0.5 * np.max(np.abs(C))]
    return ", ".join(map(repr, dict.fromkeys(worst))) or "holonomic"


def _newton(dyn, t, q, columns, tol, max_iter, params, max_change=None):
    """Damped Newton with minimum-norm steps: each step is halved until |C| decreases, so the iteration stays in
    the basin of the solution nearest the given q instead of jumping to another root (a disk below its floor)."""
    q_given = np.array(q, dtype=float)
    q = q_given.copy()
    kept, names = _rows(dyn)
    C, A_C, W = _holonomic(dyn, t, q, params, kept)
    res0 = res = float(np.max(np.abs(C))) if C.size else 0.0
    for it in range(max_iter + 1):
        if res <= tol:
            break
        if it == max_iter:
            names = ", ".join(f"{n}={v:.6g}" for n, v in zip(dyn.q_names, q))
            raise AssemblyError(f"the {_violated(names, C)} constraint(s) could not be satisfied: max |C(q)| = "
                                f"{res:.3g} after {max_iter} Newton steps at t = {t:g} (q: {names})")
        du, *_ = np.linalg.lstsq(A_C[:, columns], -C, rcond=None)
        step = W[:, columns] @ du
        for _ in range(30):
            trial = dyn.model.normalize_quaternions(q + step)
            C_t, A_t, W_t = _holonomic(dyn, t, trial, params, kept)
            res_t = float(np.max(np.abs(C_t)))
            if res_t < res or res_t <= tol:
                break
            step = step / 2
        q, C, A_C, W, res = trial, C_t, A_t, W_t, res_t
    moved = np.abs(q - q_given)
    distance = float(np.max(moved)) if moved.size else 0.0
    if max_change is not None and distance > max_change:
        k = int(np.argmax(moved))
        which = _violated(names, _holonomic(dyn, t, q_given, params, kept)[0])
        raise AssemblyError(f"the nearest configuration satisfying the {which} "
                            f"constraint(s) is {distance:.3g} away from the given one (more than max_change = "
                            f"{max_change:g}: {dyn.q_names[k]} {q_given[k]:.6g} -> {q[k]:.6g}); the given q has "
                            f"max |C| = {res0:.3g}")
    changed = {n: (float(a), float(b)) for n, a, b, m in zip(dyn.q_names, q_given, q, moved) if m > 1e-12}
    return AssemblyResult(q, res, it, changed, distance)


def project_positions(dyn, t, q, *, tol: float = 1e-12, max_iter: int = 20, params=None) -> AssemblyResult:
    """Correct q onto C(q) = 0 with minimum-norm Newton steps through all the speeds."""
    return _newton(dyn, t, q, list(range(dyn.model.n_u)), tol, max_iter, params)


def assemble(dyn, t, q=None, *, tol: float = 1e-12, max_iter: int = 50, params=None,
             max_change: float | None = None) -> AssemblyResult:
    """Given the independent coordinates in ``q`` (n_q,) at time ``t`` [s], solve C(q) = 0 for the coordinates
    of the joints whose speeds are dependent (the independent ones are kept as given).

    The solution nearest the given q is taken (damped Newton); ``result.changed`` lists what moved. With
    ``max_change`` [m or rad], a solution farther than that from the given q is refused with an
    :class:`AssemblyError` that gives the residual. Arguments are ``(dyn, t, q)`` as everywhere in kane."""
    if q is None:
        raise AssemblyError("assemble takes (dyn, t, q) like every kane function, e.g. assemble(dyn, 0.0, q); "
                            "it was given no q (the old order was assemble(dyn, q, t=...))")
    if np.ndim(t) != 0:
        raise AssemblyError(f"assemble(dyn, t, q): t must be a number [s], got an array of shape {np.shape(t)}")
    dep = list(dyn.dependent_indices) or list(range(dyn.model.n_u))
    return _newton(dyn, float(t), q, dep, tol, max_iter, params, max_change)


def make_projection(dyn, *, tol: float = 1e-12, params=None):
    """A ``projection(t, q, u) -> (q, u)`` hook for the Simulator: positions corrected onto C(q) = 0; the embedded
    equations recompute the dependent speeds from u, so u is kept."""

    def projection(t, q, u):
        return project_positions(dyn, t, q, tol=tol, params=params).q, u

    return projection
