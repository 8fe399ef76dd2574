"""On-line embedding of transient constraints by recombination (seed 000 Eqs. 43-46, Figure 2 Blocks 2-4).

``OnlineDynamics`` integrates the state (q (n_q,), u (n_u,)) over *all* the model's speeds. At every evaluation
it forms, from the unconstrained equations M u' = f of :func:`kane.derive`'s ``full_program``, the rows
A_S u + b_S = 0 of the active constraints S (every permanent one plus the active transient ones) and

* partitions the speeds into independent and dependent ones (Block 2, Eq. 43: rank by SVD, rows and columns by
  QR with column pivoting, Reckdahl's choice); the choice is kept for the mode and re-made when the condition
  number of the dependent block, ||A_r||_F / sigma_min(A_d) (A_r: the independent rows of A_S), exceeds
  ``cond_max`` (singularity avoidance);
* solves the dependent block (Cramer's rule up to 3 x 3, LU above) for u_d = D u_i + E, D = -A_d^-1 A_i, and the
  acceleration offset c_d = -A_d^-1 (A' u + b') so that u' = C u_i' + c with C = [I; D] (rows re-ordered);
* recombines M~ = C^T M C, f~ = C^T (f - M c) (Eqs. 44-45), solves M~ u_i' = f~ by Cholesky (Eq. 46) and returns
  u' = C u_i' + c.

Because u' is the unique solution of the constrained equations, it does not depend on which speeds are chosen
independent; the choice only governs the conditioning. The multipliers lambda of the kinetostatic equations
A_S^T lambda = M u' - f (the constrained-subspace projection) are the constraint forces, in N for rows that are
velocities in m/s and N m for rows in rad/s. A kinetic Coulomb force along a one-row transient constraint that
is not active (``SlipForce``) enters f as -mu_k N s a^T; N may be the multiplier of another active constraint,
in which case u', lambda and N are solved together (they are linear in N).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..codegen.numpy_backend import compile_program
from ..errors import KaneError, ModelError
from ..mechanics.constraints import select_dependent
from ..protocol import Capabilities, model_quaternion_check, unsupported
from .rules import ImpulseResult, _Cholesky, project_positions, resolve_impulse

__all__ = ["OnlineDynamics", "SlipForce", "ImpulseResult", "constraint_layout"]


def constraint_layout(equations) -> dict:
    """Row blocks of every declared constraint, name -> :class:`kane.symbolic.derive.RowBlock`, in declaration
    order, as laid out by the derivation."""
    return dict(equations.constraint_layout)


@dataclass(frozen=True)
class SlipForce:
    """Kinetic Coulomb friction along the one-row transient constraint ``constraint`` (not active while it slips):
    generalized force -mu_k N sign a^T, where a u + b is the slip velocity [m/s] and ``sign`` (+1 or -1) its sign
    during the slip. ``normal``: the name of an active constraint whose multiplier in row ``normal_row`` is N [N],
    a callable N(t, q, u) [N], or a constant [N]."""

    constraint: str
    mu_k: float
    sign: float
    normal: str | Callable | float
    normal_row: int = 0


def _cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


class _Block:
    """Solves with a small square dependent block A_d (m x m) and its transpose: Cramer's rule for m <= 3 (the
    adjugate over the determinant; its columns for m = 3 are cross products of the rows), LAPACK's LU (numpy)
    above."""

    def __init__(self, A_d: np.ndarray):
        self.A, self.m = A_d, A_d.shape[0]
        if self.m <= 3:
            rows = A_d.tolist()
            if self.m == 1:
                self.det, adj = rows[0][0], [[1.0]]
            elif self.m == 2:
                (a, b), (c, d) = rows
                self.det, adj = a * d - b * c, [[d, -b], [-c, a]]
            else:
                r0, r1, r2 = rows
                cof = [_cross(r1, r2), _cross(r2, r0), _cross(r0, r1)]  # the columns of the adjugate
                self.det = r0[0] * cof[0][0] + r0[1] * cof[0][1] + r0[2] * cof[0][2]
                adj = [[cof[0][i], cof[1][i], cof[2][i]] for i in range(3)]
            if self.det == 0.0:
                raise np.linalg.LinAlgError("singular dependent block")
            self.K = np.array(adj) / self.det  # X = K rhs

    def solve(self, rhs: np.ndarray, transposed: bool = False) -> np.ndarray:
        """X with A_d X = rhs, or A_d^T X = rhs when ``transposed``; rhs (m,) or (m, k)."""
        if self.m <= 3:
            return (self.K.T if transposed else self.K) @ rhs
        return np.linalg.solve(self.A.T if transposed else self.A, rhs)


def _sigma_min(B: np.ndarray) -> float:
    """Smallest singular value of a square block (closed forms for 1 x 1 and 2 x 2)."""
    if B.shape[0] == 1:
        return abs(float(B[0, 0]))
    if B.shape[0] == 2:
        (a, b), (c, d) = B.tolist()
        T = a * a + b * b + c * c + d * d
        det = abs(a * d - b * c)
        # sigma_max +- sigma_min = sqrt(T +- 2 det)
        return 2.0 * det / (math.sqrt(T + 2.0 * det) + math.sqrt(max(T - 2.0 * det, 0.0))) if T > 0 else 0.0
    return float(np.linalg.svd(B, compute_uv=False)[-1])


@dataclass
class _Partition:
    rows: np.ndarray  # independent rows of A_S
    dep: np.ndarray  # dependent speed columns
    ind: np.ndarray  # independent speed columns
    cond0: float  # condition number when chosen
    C0: np.ndarray = None  # (n, p): ones at (ind[k], k), the template of C = [I; D]

    def __post_init__(self):
        n = self.dep.size + self.ind.size
        self.C0 = np.zeros((n, self.ind.size))
        self.C0[self.ind, np.arange(self.ind.size)] = 1.0
        base = (self.rows * n)[:, None]  # flat indices into A_S (m_S, n) of A_r, A_d and A_r[:, ind]
        self.flat_rows = (base + np.arange(n)).ravel()
        self.flat_dep = (base + self.dep).ravel()
        self.flat_ind = (base + self.ind).ravel()


class OnlineDynamics:
    """Unconstrained equations of ``equations`` (from :func:`kane.derive`) with the permanent constraints and the
    transient ones named in ``active`` embedded on line; a Dynamics for :class:`kane.simulate.Simulator`.

    State q (n_q,), u (n_u,) = all the model's speeds. ``slips``: :class:`SlipForce` terms. ``cond_max``: the
    condition number of the dependent block that triggers a new choice of independent speeds. ``params`` and
    ``inputs`` of every method: dict name -> value, array in model order, or None for the defaults.
    ``dependent``: names of preferred dependent speeds (an analyst's choice), used in every mode where they have
    the right number and a block conditioned within ``cond_max``; elsewhere the choice is automatic.
    """

    def __init__(self, equations, active=(), *, slips=(), cond_max: float = 1e6, rank_tol: float = 1e-9,
                 dependent=None):
        self.equations = equations
        self.model = model = equations.model
        self.n_q, self.n_u = model.n_q, model.n_u
        self.q_names = tuple(str(s) for s in model.q)
        self.u_names = tuple(str(s) for s in model.u)
        self.layout = constraint_layout(equations)
        fp = equations.full_program
        self.permanent = tuple(n for n, blk in self.layout.items() if not blk.transient)
        self.transient = tuple(n for n, blk in self.layout.items() if blk.transient)
        if not float(cond_max) > 1:
            raise ModelError(f"cond_max must be a number > 1, got {cond_max!r}")
        self.cond_max = float(cond_max)
        self.rank_tol = float(rank_tol)
        if dependent is not None:
            unknown = [d for d in dependent if d not in self.u_names]
            if unknown:
                raise ModelError(f"dependent speeds {unknown} are not speeds of the model: {', '.join(self.u_names)}")
        self.dependent = None if dependent is None else tuple(dependent)
        self._fn = compile_program(fp, ["M", "f", "A", "b", "A_bias", "qdot"])
        self._fn_Ab = compile_program(fp, ["M", "A", "b"])
        energy_outputs = ["kinetic"] + (["potential"] if equations.has_potential else [])
        self._fn_energy = compile_program(fp, energy_outputs)
        self._fn_power = compile_program(fp, ["power"]) if equations.has_potential else None
        self._fn_holo = compile_program(fp, ["C", "A_C", "W"])
        self._p0, self._w0 = model.parameter_values(), model.input_values()
        self.selections: list = []  # (t [s], independent speed names, condition number, "mode" | "condition")
        self._cache_key, self._cache = None, None
        self._raw_key, self._raw_out, self._lam_later = None, None, None
        self._parts: dict = {}  # active transient constraints -> the partition last chosen in that mode
        self.set_mode(active, slips)

    # ---- modes ---------------------------------------------------------------------------------------------
    def set_mode(self, active=(), slips=()) -> None:
        """Make the transient constraints ``active`` (names; permanent ones are always active) and the kinetic
        friction terms ``slips`` the current mode; independent speeds are chosen at the next evaluation."""
        active = set(active)
        for name in active:
            if name not in self.layout:
                raise ModelError(f"active constraint {name!r} is not declared; constraints: "
                                 f"{', '.join(self.layout) or '(none)'}")
        self.active = tuple(n for n in self.transient if n in active)
        names = self.permanent + self.active
        self.active_all = tuple(n for n in self.layout if n in names)
        self._idx = np.array([r for n in self.active_all for r in range(self.layout[n].rows.start,
                                                                           self.layout[n].rows.stop)], dtype=int)
        slips = tuple(slips)
        for s in slips:
            blk = self.layout.get(s.constraint)
            if blk is None or not blk.transient or s.constraint in self.active:
                raise ModelError(f"slip force along {s.constraint!r}: expected a declared transient constraint "
                                 "that is not active")
            if blk.rows.stop - blk.rows.start != 1:
                raise ModelError(f"slip force along {s.constraint!r}: only one-row constraints are supported")
            if isinstance(s.normal, str) and s.normal not in self.layout:
                raise ModelError(f"slip force along {s.constraint!r}: normal constraint {s.normal!r} not declared")
        self.slips = slips
        self._part = None
        self._cache_key = None

    @property
    def mode_name(self) -> str:
        """A readable name of the mode: active transient constraints and slips, or "free"."""
        parts = list(self.active) + [f"slip({s.constraint}{'+' if s.sign > 0 else '-'})" for s in self.slips]
        return "+".join(parts) or "free"

    @property
    def independent_speeds(self) -> tuple:
        """Names of the independent speeds of the current partition (all speeds before the first evaluation)."""
        if self._part is None:
            return self.u_names
        return tuple(self.u_names[i] for i in self._part.ind)

    # ---- arguments -----------------------------------------------------------------------------------------
    def _pw(self, params, inputs):
        p = self._p0 if params is None else self.model.parameter_values(params)
        if inputs is None:
            return p, self._w0
        if type(inputs) is np.ndarray and inputs.dtype == np.float64 and inputs.shape == self._w0.shape \
                and math.isfinite(float(inputs.sum())):  # already in model order (the per-evaluation path)
            return p, inputs
        return p, self.model.input_values(inputs)

    @staticmethod
    def _state(q, u):
        return np.asarray(q, dtype=float), np.asarray(u, dtype=float)

    # ---- Block 2: choice of independent speeds -------------------------------------------------------------
    def _choose(self, A_S: np.ndarray) -> _Partition:
        """The preferred dependent speeds where they fit this mode and are well conditioned, else Reckdahl's."""
        if self.dependent is not None:
            try:
                part = self._partition_of(A_S, select_dependent(A_S, self.u_names, self.dependent, tol=self.rank_tol))
                if part.cond0 <= self.cond_max:
                    return part
            except KaneError:
                pass
        return self._partition_of(A_S, select_dependent(A_S, self.u_names, tol=self.rank_tol))

    def _partition_of(self, A_S, ch) -> _Partition:
        part = _Partition(np.array(ch.rows, dtype=int), np.array(ch.dependent, dtype=int),
                          np.array(ch.independent, dtype=int), 1.0)
        part.cond0 = self._cond(A_S, part)
        return part

    @staticmethod
    def _cond(A_S, part) -> float:
        """||A_r||_F / sigma_min(A_d) of the kept rows A_r and their dependent block A_d: near 1 for a good
        choice, infinite where the dependent block is singular."""
        if part.dep.size == 0:
            return 1.0
        A_r = A_S[part.rows]
        s_min = _sigma_min(A_r[:, part.dep])
        top = math.sqrt(float(np.dot(A_r.ravel(), A_r.ravel())))
        return top / s_min if s_min > 0 else math.inf

    @classmethod
    def _cond_exceeds(cls, A_S, part, limit: float) -> bool:
        """Whether :meth:`_cond` exceeds ``limit``; a 3 x 3 block is first bounded without an SVD: sigma_min >=
        |det| / (sigma_1 sigma_2) >= 2 |det| / ||A_d||_F^2."""
        if part.dep.size == 3:
            a, b, c, d, e, f, g, h, i = A_S.take(part.flat_dep).tolist()
            det = abs(a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g))
            nb = a * a + b * b + c * c + d * d + e * e + f * f + g * g + h * h + i * i
            A_r = A_S.take(part.flat_rows)
            top = math.sqrt(float(np.dot(A_r, A_r)))
            if det > 0.0 and top * nb <= 2.0 * det * limit * (1.0 - 1e-9):
                return False
        return cls._cond(A_S, part) > limit

    def _partition(self, t: float, A_S: np.ndarray) -> _Partition:
        part = self._part
        if part is None:  # a mode seen before keeps its choice while that stays conditioned within bounds
            part = self._parts.get(self.active)
            if part is None or self._cond_exceeds(A_S, part, max(self.cond_max, 10.0 * part.cond0)):
                part = self._parts[self.active] = self._choose(A_S)
            self._part = part
            self.selections.append((float(t), self.independent_speeds, part.cond0, "mode"))
            return part
        if part.dep.size and self._cond_exceeds(A_S, part, max(self.cond_max, 10.0 * part.cond0)):
            cond = self._cond(A_S, part)
            new = self._choose(A_S)
            if not np.array_equal(new.dep, part.dep) or not np.array_equal(new.rows, part.rows):
                self._part = self._parts[self.active] = new
                self.selections.append((float(t), self.independent_speeds, cond, "condition"))
                return new
            part.cond0 = cond  # the best choice is itself this ill conditioned: do not re-choose each call
        return part

    # ---- Blocks 3-4: embedding and recombination -----------------------------------------------------------
    def _embed(self, part, A_S, rhs):
        """C (n, p) with u = C u_i + (particular solutions): the columns of X solve A_r[:, dep] X = rhs."""
        C = part.C0.copy()
        parts = np.zeros((self.n_u, rhs.shape[1]))
        block = None
        if part.dep.size:
            m, p = part.dep.size, part.ind.size
            block = _Block(A_S.take(part.flat_dep).reshape(m, m))
            C[part.dep] = block.solve(-A_S.take(part.flat_ind).reshape(m, p))
            parts[part.dep] = block.solve(rhs)
        return C, parts, block

    @staticmethod
    def _multipliers(part, block, A_S, residual):
        """lambda (m_S,) with A_S^T lambda = residual (M u' - f); redundant rows get zero."""
        lam = np.zeros(A_S.shape[0])
        if block is not None:
            lam[part.rows] = block.solve(residual[part.dep], transposed=True)
        return lam

    def _evaluate(self, t, q, u, params, inputs, forces: bool = False):
        """(u', lambda, friction, M, f, C, c) at one state, kept for the last one; lambda is None until
        ``forces`` asks for it where no slip needs it (the integrator's stages only need u')."""
        q, u = self._state(q, u)
        p, w = self._pw(params, inputs)
        key = (float(t), q.tobytes(), u.tobytes(), p.tobytes(), w.tobytes())
        if key == self._cache_key:
            if forces and self._cache[1] is None:
                self._cache = (self._cache[0], self._lam_later(), *self._cache[2:])
            return self._cache
        M, f, A, b, bias, _ = self._raw(key, t, q, u, p, w)
        A_S = A[self._idx]
        part = self._partition(t, A_S)
        C, c_part, lu = self._embed(part, A_S, bias[self._idx][part.rows, None] * -1.0)
        c = c_part[:, 0]
        f0 = f.copy() if self.slips else f
        coupled, G = [], []
        for s in self.slips:
            a = A[self.layout[s.constraint].rows.start]
            if isinstance(s.normal, str):
                if s.normal in self.active_all:
                    coupled.append(self._row_of(s.normal) + s.normal_row)
                    G.append(-s.mu_k * s.sign * a)
            else:
                N = float(s.normal(t, q, u)) if callable(s.normal) else float(s.normal)
                f0 -= s.mu_k * s.sign * N * a
        chol = _Cholesky(C.T @ M @ C) if C.shape[1] else None
        if not self.slips:
            ud = C @ chol.solve(C.T @ (f0 - M @ c)) + c if chol else c.copy()
            self._lam_later = lambda: self._multipliers(part, lu, A_S, M @ ud - f0)
            self._cache_key, self._cache = key, (ud, self._lam_later() if forces else None, np.zeros(0), M, f0, C, c)
            return self._cache

        def solve(F, c_vec):
            ud = C @ chol.solve(C.T @ (F - M @ c_vec)) + c_vec if chol else c_vec.copy()
            return ud, self._multipliers(part, lu, A_S, M @ ud - F)

        udot, lam = solve(f0, c)
        friction = np.zeros(len(self.slips))
        if coupled:
            zero = np.zeros(self.n_u)
            resp = [solve(g, zero) for g in G]
            rows = np.array(coupled)
            L = np.column_stack([r[1][rows] for r in resp])
            N = np.linalg.solve(np.eye(len(rows)) - L, lam[rows])
            for k, (ud_g, lam_g) in enumerate(resp):
                udot, lam = udot + N[k] * ud_g, lam + N[k] * lam_g
        for k, s in enumerate(self.slips):
            if isinstance(s.normal, str):
                N_k = lam[self._row_of(s.normal) + s.normal_row] if s.normal in self.active_all else 0.0
            else:
                N_k = float(s.normal(t, q, u)) if callable(s.normal) else float(s.normal)
            friction[k] = -s.mu_k * s.sign * N_k
        self._cache_key, self._cache = key, (udot, lam, friction, M, f0, C, c)
        return self._cache

    def _raw(self, key, t, q, u, p, w) -> tuple:
        """(M, f, A, b, A_bias, qdot) of the unconstrained equations at ``key`` = (t, q, u, p, w as bytes), kept
        for the last key: the integrator asks for q' and then u' at the same state, one evaluation serves both."""
        if key != self._raw_key:
            self._raw_key, self._raw_out = key, self._fn(t, q, u, p, w)
        return self._raw_out

    def _row_of(self, name: str) -> int:
        """Index in A_S of the first row of the active constraint ``name``."""
        k = 0
        for n in self.active_all:
            if n == name:
                return k
            blk = self.layout[n].rows
            k += blk.stop - blk.start
        raise KeyError(name)

    # ---- Dynamics interface --------------------------------------------------------------------------------
    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (n_q,) = W(q) u + X."""
        q, u = self._state(q, u)
        p, w = self._pw(params, inputs)
        return self._raw((float(t), q.tobytes(), u.tobytes(), p.tobytes(), w.tobytes()), t, q, u, p, w)[5].copy()

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """u' (n_u,) = C u_i' + c of the current mode (units of u per second)."""
        return self._evaluate(t, q, u, params, inputs)[0].copy()

    def kinetic_energy(self, t, q, u, params=None):
        """Kinetic energy [J]: a float at one state, (N,) at N states (q (N, n_q), u (N, n_u), t a float or (N,))."""
        q, u = self._state(q, u)
        p = self._pw(params, None)[0]
        if q.ndim == 2:
            times = np.broadcast_to(np.asarray(t, dtype=float), q.shape[:1])
            return np.array([float(self._fn_energy(ti, qi, ui, p, self._w0)[0][0]) for ti, qi, ui in zip(times, q, u)])
        return float(self._fn_energy(t, q, u, p, self._w0)[0][0])

    def potential_energy(self, t, q, params=None) -> float:
        """Potential energy [J] of gravity and springs (NotImplementedError if a load's potential is unknown)."""
        if not self.equations.has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        q = np.asarray(q, dtype=float)
        return float(self._fn_energy(t, q, np.zeros(self.n_u), self._pw(params, None)[0], self._w0)[1][0])

    def energy(self, t, q, u, params=None) -> float:
        """Total mechanical energy [J] (kinetic + potential)."""
        return self.kinetic_energy(t, q, u, params) + self.potential_energy(t, q, params)

    def power(self, t, q, u, params=None, inputs=None) -> float:
        """Power [W] of the loads without a potential (as :meth:`kane.Dynamics.power`) plus that of kinetic friction
        in the slipping constraints (its force times a u, a the constraint's row): along a motion of the current
        mode E' equals it. The active constraints count as workless (a moving constraint's work is left out).
        Raises NotImplementedError where a load's potential is unknown."""
        if self._fn_power is None:
            raise NotImplementedError("a spring or joint load has no known potential: the power of the loads "
                                      "without one is not defined")
        q, u = self._state(q, u)
        p, w = self._pw(params, inputs)
        total = float(self._fn_power(t, q, u, p, w)[0][0])
        if self.slips:
            friction = self._evaluate(t, q, u, params, inputs)[2]
            A = self._raw((float(t), q.tobytes(), u.tobytes(), p.tobytes(), w.tobytes()), t, q, u, p, w)[2]
            total += sum(float(F) * float(A[self.layout[s.constraint].rows.start] @ u)
                         for s, F in zip(self.slips, friction))
        return total

    def constraint_forces(self, t, q, u, params=None, inputs=None) -> dict:
        """Multipliers of the kinetostatic equations A_S^T lambda = M u' - f: name -> (rows,) for every active
        constraint; for a slipping constraint, name -> (1,) its kinetic friction force -mu_k N sign."""
        _, lam, friction, *_ = self._evaluate(t, q, u, params, inputs, forces=True)
        out, k = {}, 0
        for n in self.active_all:
            blk = self.layout[n].rows
            m = blk.stop - blk.start
            out[n] = lam[k:k + m].copy()
            k += m
        for s, F in zip(self.slips, friction):
            out[s.constraint] = np.array([F])
        return out

    def embedded_equations(self, t, q, u, params=None, inputs=None):
        """(M~ (p, p), f~ (p,), C (n_u, p), c (n_u,)) of the current mode at (t, q, u): Eqs. 44-46."""
        _, _, _, M, f0, C, c = self._evaluate(t, q, u, params, inputs)
        return C.T @ M @ C, C.T @ (f0 - M @ c), C.copy(), c.copy()

    def constraint_rows(self, t, q, names=None, params=None):
        """(A (m, n_u), b (m,)) of the constraints ``names`` (default: the active ones) at (t, q)."""
        q = np.asarray(q, dtype=float)
        _, A, b = self._fn_Ab(t, q, np.zeros(self.n_u), self._pw(params, None)[0], self._w0)
        idx = self._rows(self.active_all if names is None else names)
        return A[idx], b[idx]

    def constraint_residual(self, t, q, u, names=None, params=None) -> np.ndarray:
        """A u + b of the constraints ``names`` (default: the active ones)."""
        A, b = self.constraint_rows(t, q, names, params)
        return A @ np.asarray(u, dtype=float) + b

    def _rows(self, names) -> np.ndarray:
        rows = []
        for n in self.layout:
            if n in names:
                rows += list(range(self.layout[n].rows.start, self.layout[n].rows.stop))
        unknown = [n for n in names if n not in self.layout]
        if unknown:
            raise ModelError(f"constraints {unknown} are not declared; constraints: {', '.join(self.layout)}")
        return np.array(rows, dtype=int)

    # ---- impulses and projections (kane.switching.rules) ---------------------------------------------------
    def resolve_impulse(self, q, u_minus, names=(), restitution=0.0, *, t: float = 0.0,
                        params=None) -> ImpulseResult:
        """Velocity jump onto the active constraints and ``names``: u+ = u- + M^-1 A^T Lambda with
        A u+ + b = -e (A u- + b), e = ``restitution`` (a number or name -> e) for the rows of ``names`` and 0 for
        the others; generalized momentum is unchanged in the permitted directions (C^T M (u+ - u-) = 0)."""
        return resolve_impulse(self, q, u_minus, names, restitution, t=t, params=params)

    def impulse(self, q, u_minus, names=(), restitution=0.0, *, t: float = 0.0, params=None) -> np.ndarray:
        """u+ (n_u,) of :meth:`resolve_impulse`."""
        return self.resolve_impulse(q, u_minus, names, restitution, t=t, params=params).u_plus

    def project_velocity(self, q, u, *, t: float = 0.0, params=None) -> np.ndarray:
        """The speeds nearest u in kinetic energy that satisfy the active constraints A_S u + b_S = 0."""
        return resolve_impulse(self, q, u, (), 0.0, t=t, params=params, details=False).u_plus

    def project_positions(self, t, q, *, params=None, tol: float = 1e-12, max_iter: int = 20) -> np.ndarray:
        """q corrected onto C(q) = 0 of the active holonomic constraints (minimum-norm Newton steps through the
        speeds, dq = W du with A_C du = -C)."""
        return project_positions(self, t, q, params=params, tol=tol, max_iter=max_iter)

    def projection(self, t, q, u, params=None):
        """(q, u) put back on the active constraints: positions (holonomic rows), then speeds. A hook for the
        Simulator's ``projection``."""
        q = self.project_positions(t, q, params=params)
        return q, self.project_velocity(q, u, t=t, params=params)

    # ---- the rest of the kane.protocol.Dynamics interface ------------------------------------------------------
    description = ""
    parameter_names = property(lambda self: tuple(str(s) for s in self.model.parameters), doc="In model order.")
    input_names = property(lambda self: tuple(str(s) for s in self.model.inputs), doc="In model order.")
    mass_matrix = unsupported("mass_matrix", "the embedded M changes with the mode (see embedded_equations)")
    forcing = unsupported("forcing", "the embedded f changes with the mode (see embedded_equations)")
    loop_function = unsupported("loop_function", "the mode and the independent speeds change during the run")

    holonomic_rows = unsupported("holonomic_rows", "its positions are projected by kane.switching.rules")
    capabilities = property(lambda self: Capabilities(
        energy=bool(self.equations.has_potential), constraint_forces=True, motion_constraints=True, projection=True,
        compiled_loop_reason="the mode and the independent speeds change during the run"),
        doc="Energy where every load has a potential; constraint forces and rows, a projection; no single M, f.")

    def motion_rows(self, t, q, params=None):
        """(A (m, n_u), b (m,)) of the active constraints (:meth:`constraint_rows`)."""
        return self.constraint_rows(t, q, None, params)

    def make_projection(self, params=None):
        """The hook (t, q, u) -> (q, u) of :meth:`projection` at these parameters."""
        return lambda t, q, u: self.projection(t, q, u, params)

    check_quaternions = model_quaternion_check
