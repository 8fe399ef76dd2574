"""Linearization about relative equilibria: the structure of the state (which coordinates are cyclic, which
rotations are symmetries; :class:`Structure`, decided at random generic states and parameters) and the quotient
of a linearization by the motion along the symmetries (:func:`quotient`).

A relative equilibrium is a motion x(t) = exp(t sum_k c_k eta_k) x0 along symmetry generators eta_k (a spin, a
heading, a translation): in the frame that moves with it, y = exp(-t sum c eta) x obeys y' = F(y) - sum c_k eta_k(y),
autonomous, with y0 = x0 an equilibrium, so its linearization A_rel = A - sum c_k d eta_k/dx is constant along the
motion (Marsden & Ratiu, *Introduction to Mechanics and Symmetry*, ch. 9). A_rel maps the orbit directions
eta_k(x0) into themselves; its action on the remaining (kept) states modulo the orbit is the reduced linearization
whose eigenvalues decide stability. Coordinates that no speed's rate depends on, directly or through other
coordinates (positions on a plane, Euler-angle heading and spin), are dropped first: they form no part of the
closed subsystem of the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["Quotient", "Structure", "named_structure", "quotient", "relevant_states"]


@dataclass(frozen=True)
class Structure:
    """What does not change from point to point of one model and choice of dependent coordinates: ``relevant``
    (the indices of the states of the closed subsystem: every speed and the coordinates they depend on at random
    generic points), ``symmetries`` (:class:`kane.analysis.manifold.Symmetry` of the quaternion joints) and
    their ``generators`` (from :func:`kane.analysis.manifold.chart_generator`); ``pattern`` (n_x, n_x) whether
    x_i' depends on x_j at any of the random generic points (None when none could be evaluated)."""

    relevant: tuple
    symmetries: tuple
    generators: tuple
    pattern: object = None

    @cached_property
    def descriptions(self) -> tuple:
        """``"<label>: <what it turns>"`` per symmetry (formed once)."""
        return tuple(f"{s.label}: {s}" for s in self.symmetries)

    @cached_property
    def labels(self) -> tuple:
        """The symmetries' labels (formed once)."""
        return tuple(s.label for s in self.symmetries)


def relevant_states(pattern, n_coords) -> set:
    """The states the speeds' rates depend on, directly or through other states (the speeds themselves included),
    from a boolean dependence pattern (n_x, n_x): pattern[i, j] when x_i' depends on x_j."""
    relevant = set(range(n_coords, pattern.shape[0]))
    frontier = list(relevant)
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(pattern[i]):
            if int(j) not in relevant:
                relevant.add(int(j))
                frontier.append(int(j))
    return relevant


def named_structure(st: Structure, names, coordinates, dependent, n_x) -> Structure:
    """The :class:`Structure` with only the cyclic coordinates and symmetries ``names`` taken out (named by the user
    instead of all those found); ``coordinates`` the independent coordinates' names (the first states), ``dependent``
    the dependent ones. A name that is neither, a coordinate that the speeds' rates depend on, a symmetry the
    equations do not have, and a kept coordinate whose rate depends on a named one are refused by name."""
    from ..errors import ArgumentError, KaneError

    labels = [s.label for s in st.symmetries]
    n_i = len(coordinates)
    drop, keep_sym = set(), []
    for name in names:
        if name in labels:
            keep_sym.append(labels.index(name))
        elif ".turn_" in name or ".spin_" in name:
            raise KaneError(f"ignorable {name!r}: not a symmetry of these equations (at random generic states); the "
                            f"symmetries found: {', '.join(labels) or 'none'}")
        elif name in dependent:
            raise KaneError(f"ignorable {name!r}: it follows from the configuration constraints here (a dependent "
                            "coordinate); name an independent coordinate")
        elif name in coordinates:
            k = coordinates.index(name)
            if k in st.relevant:
                raise KaneError(f"ignorable {name!r}: the speeds' rates depend on it (directly or through other "
                                "coordinates, at random generic states): it is no cyclic coordinate")
            drop.add(k)
        else:
            raise ArgumentError(f"ignorable {name!r}: unknown; expected a coordinate ({', '.join(coordinates)}) or a "
                                f"symmetry ({', '.join(labels) or 'none found'})")
    relevant = tuple(k for k in range(n_x) if k not in drop)
    if st.pattern is not None:
        for i in (k for k in relevant if k < n_i):  # the speeds' rates depend on no cyclic coordinate
            for j in sorted(drop):
                if st.pattern[i, j]:
                    raise KaneError(f"ignorable {coordinates[j]!r}: the rate of {coordinates[i]!r}, which is kept, "
                                    f"depends on it; name {coordinates[i]!r} ignorable too")
    keep_sym.sort()
    return Structure(relevant, tuple(st.symmetries[k] for k in keep_sym), tuple(st.generators[k] for k in keep_sym),
                     st.pattern)


@dataclass(frozen=True)
class Quotient:
    """The reduced linearization: :attr:`A` (n_r, n_r) and :attr:`B` (n_r, n_u) on the ``states`` (indices into the full
    state) left after dropping ``dropped`` (indices: the cyclic coordinates and one coordinate per symmetry, the
    orbit's direction); ``frame_rates`` (m,) the rates c_k of the symmetries at the point; ``residual`` (n_r,) the
    kept states' rates after the motion along the symmetries is taken out (zero at a relative equilibrium);
    ``residual_map`` (n_r, n_x) with residual = residual_map @ rates and :attr:`residual_jacobian` (n_r, n_x) its
    derivative along the states; ``A_full`` the full A in the frame moving with the symmetries (A_rel) at a
    relative equilibrium, else the plain A; ``A_rel`` always the former; ``used`` the indices of the symmetries
    that move the point."""

    states: tuple
    dropped: tuple
    frame_rates: np.ndarray
    residual: np.ndarray
    residual_map: np.ndarray
    A_rel: np.ndarray
    A_full: np.ndarray
    B_full: np.ndarray
    steady: bool
    used: tuple

    @property
    def A(self) -> np.ndarray:
        """(n_r, n_r): the kept states' rows of A_full taken modulo the orbit (residual_map), on the kept states."""
        return (self.residual_map @ self.A_full)[:, list(self.states)]

    @property
    def B(self) -> np.ndarray:
        """(n_r, n_u): residual_map @ B."""
        return self.residual_map @ self.B_full

    @property
    def residual_jacobian(self) -> np.ndarray:
        """d residual / d state (n_r, n_x): residual_map @ A_rel (exact at a relative equilibrium)."""
        return self.residual_map @ self.A_rel


def _pivots(V, candidates, tol):
    """(pivot rows, kept generator columns): one row per generator by elimination, largest entry first among
    ``candidates`` rows; a generator with nothing left is dependent on the earlier ones here and left out."""
    W = np.array(V, dtype=float)
    n = W.shape[1]
    limits = (tol * np.maximum(1.0, np.abs(V).max(axis=0, initial=0.0))).tolist()  # per generator
    rows, cols = [], []
    for k in range(n):
        free = [r for r in candidates if r not in rows]
        if not free:
            break
        size = np.abs(W[free, k])
        i = int(size.argmax())
        if float(size[i]) <= limits[k]:
            continue
        r = free[i]
        rows.append(r)
        cols.append(k)
        if k + 1 < n:
            col = W[:, k]
            W[:, k + 1:] -= (col / col[r])[:, None] * W[r, k + 1:]
    return rows, cols


def quotient(A, B, rates, keep, n_coords, generators, tol, scale) -> Quotient:
    """Reduce (A, B) at a point with state rates ``rates`` (n_x,) to the closed subsystem ``keep`` (sorted state
    indices) modulo the orbits of ``generators`` (value (n_x,), derivative (n_x, n_x) on the state). The point is a
    (relative) equilibrium when the kept rates lie in the span of the generators' values to ``tol`` * ``scale``."""
    n_x = A.shape[0]
    keep = list(keep)
    n_k = len(keep)
    if not generators:  # the closed subsystem alone: a selection
        b = rates[keep]
        steady = bool(np.abs(b).max(initial=0.0) <= tol * scale)
        Pi = np.zeros((n_k, n_x))
        Pi[np.arange(n_k), keep] = 1.0
        return Quotient(tuple(keep), tuple(k for k in range(n_x) if k not in keep), np.zeros(0), b, Pi, A, A, B, steady,
                        ())
    rows = np.array(keep, dtype=np.intp)
    V = np.empty((n_k, len(generators)))
    for j, g in enumerate(generators):
        V[:, j] = g[0][rows]
    piv, used = _pivots(V, [i for i, s in enumerate(keep) if s < n_coords], 1e-9)
    m = len(used)
    rest = [i for i in range(n_k) if i not in piv]
    Q = np.zeros((n_k, n_k))
    Q[:, :m] = V if m == V.shape[1] else V[:, used]
    for j, r in enumerate(rest, m):
        Q[r, j] = 1.0
    Qi = np.linalg.inv(Q) if used else np.eye(n_k)
    sol = Qi @ rates[rows]
    c, b = sol[:m], sol[m:]
    A_rel = A.copy()
    for ck, k in zip(c, used):
        A_rel -= ck * generators[k][1]
    steady = bool(np.abs(b).max(initial=0.0) <= tol * scale)
    A_full = A_rel if steady else A
    Pi = np.zeros((n_k - m, n_x))
    Pi[:, rows] = Qi[m:]
    kept = tuple(keep[i] for i in rest)
    return Quotient(kept, tuple(k for k in range(n_x) if k not in kept), c, b, Pi, A_rel, A_full, B, steady,
                    tuple(used))
