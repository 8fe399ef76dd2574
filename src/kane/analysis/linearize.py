"""Linearization of the embedded equations of motion by exact forward-mode derivatives (Griewank & Walther,
*Evaluating Derivatives*, ch. 3; the constrained reduction follows Peterson, Gede & Hubbard, "Symbolic
linearization of equations of motion of constrained multibody systems", Multibody Syst. Dyn. 33, 2015).

The state is x = (q_i, u), the independent coordinates and the independent speeds. The holonomic constraints
C(q) = 0 eliminate the dependent coordinates q_d (dq_d/dq_i = -C_d^-1 C_i at the operating point); the motion
constraints are already embedded in :class:`kane.Equations` (u_dep = D u + E inside its program). With
g = M^-1 f the accelerations,

    A = [[dq_i'/dq P, dq_i'/du], [dg/dq P, dg/du]],   B = [[dq_i'/dr], [dg/dr]],   P = dq/dq_i,
    dg/dq = M^-1 (df/dq - dM/dq g),

every derivative evaluated exactly from :func:`kane.codegen.forward.jacobian_program`, at any speeds.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from ..codegen.forward import jacobian_name, jacobian_program
from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError, KaneError
from ..mechanics.arguments import real_array

__all__ = ["Linearization", "Linearizer", "MechanicalForm", "Modes", "NotSteadyWarning", "linearize", "linearizer"]


class NotSteadyWarning(UserWarning):
    """The operating point is not a steady motion: A and B describe the tangent of one passing trajectory."""


@dataclass(frozen=True)
class Modes:
    """Eigenvalues [1/s] (n,), sorted by decreasing real part, and eigenvectors as columns of ``vectors``
    (n, n), each scaled so that its largest component is 1; rows named by ``state_names``."""

    eigenvalues: np.ndarray
    vectors: np.ndarray
    state_names: tuple

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Damped frequencies |Im(lambda)| / (2 pi) [Hz] (n,)."""
        return np.abs(self.eigenvalues.imag) / (2 * np.pi)

    @property
    def damping_ratios(self) -> np.ndarray:
        """-Re(lambda) / |lambda| (n,); nan for a zero eigenvalue."""
        mag = np.abs(self.eigenvalues)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mag > 0, -self.eigenvalues.real / mag, np.nan)


@dataclass(frozen=True)
class MechanicalForm:
    """M x'' + C x' + K x = B r for x = the independent coordinates' deviations: M, C, K (n, n), B (n, n_r)."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    B: np.ndarray
    coordinate_names: tuple
    input_names: tuple


@dataclass(frozen=True)
class Linearization:
    """x' = A x + B r about an operating point, x = (independent coordinates, independent speeds).

    A (n_x, n_x) and B (n_x, n_r) in SI units of the state and inputs; ``rates`` (n_x,) is x' at the operating
    point; ``residual`` (named by ``residual_names``) is x' of the states the dynamics depends on, i.e. every state
    but the ``cyclic`` coordinates (those that no speed's rate depends on, even through other coordinates, such
    as position and heading on a plane): it is zero exactly at a steady motion (an equilibrium when the cyclic
    coordinates are at rest too). ``q`` (n_q,) holds every coordinate of the model, the dependent ones included;
    ``u`` (p,) the independent speeds.
    """

    A: np.ndarray
    B: np.ndarray
    state_names: tuple
    input_names: tuple
    coordinate_names: tuple
    speed_names: tuple
    dependent_coordinates: tuple
    cyclic: tuple
    rates: np.ndarray
    residual: np.ndarray
    residual_names: tuple
    steady: bool
    t: float
    q: np.ndarray
    u: np.ndarray
    params: np.ndarray
    inputs: np.ndarray
    mass_matrix: np.ndarray = field(repr=False)

    @property
    def n_coordinates(self) -> int:
        return len(self.coordinate_names)

    def eigenvalues(self, reduced: bool = False) -> np.ndarray:
        """Eigenvalues of A [1/s] (n_x,), by decreasing real part; ``reduced``: of :meth:`reduced`'s A."""
        lin = self.reduced() if reduced else self
        lam = np.linalg.eigvals(lin.A)
        return lam[np.lexsort((-lam.imag, -lam.real))]

    def modes(self, reduced: bool = False) -> Modes:
        """Eigenvalues and eigenvectors of A (or of :meth:`reduced`'s A) as :class:`Modes`."""
        lin = self.reduced() if reduced else self
        lam, vec = np.linalg.eig(lin.A)
        order = np.lexsort((-lam.imag, -lam.real))
        lam, vec = lam[order], vec[:, order]
        if vec.size:
            big = vec[np.argmax(np.abs(vec), axis=0), np.arange(vec.shape[1])]
            vec = vec / big
        return Modes(lam, vec, lin.state_names)

    def reduced(self) -> "Linearization":
        """The linearization without the cyclic coordinates: their rows and columns removed (A's remaining block
        does not depend on them, so it is the same all along a steady motion)."""
        if not self.cyclic:
            return self
        keep = [k for k, n in enumerate(self.state_names) if n not in self.cyclic]
        coords = tuple(n for n in self.coordinate_names if n not in self.cyclic)
        return Linearization(self.A[np.ix_(keep, keep)], self.B[keep], tuple(self.state_names[k] for k in keep),
                             self.input_names, coords, self.speed_names, self.dependent_coordinates, (),
                             self.rates[keep], self.residual, self.residual_names, self.steady, self.t, self.q,
                             self.u, self.params, self.inputs, self.mass_matrix)

    def mechanical(self) -> MechanicalForm:
        """M x'' + C x' + K x = B r with x the independent coordinates.

        From q_i' = W u + (terms in q_i): u = W^-1 (x' - A_qq x), M = M_u W^-1, C = -M_u (W^-1 A_qq + A_uu W^-1),
        K = -M_u (A_uq - A_uu W^-1 A_qq), B = M_u B_u with M_u the mass matrix of the embedded equations. Needs as
        many independent coordinates as speeds, W = dq_i'/du invertible and inputs that do not enter q'."""
        n, p = self.n_coordinates, len(self.speed_names)
        if n != p:
            raise KaneError(f"mechanical form: {n} independent coordinates ({', '.join(self.coordinate_names)}) but "
                            f"{p} independent speeds ({', '.join(self.speed_names)}): a nonholonomic or quaternion "
                            "model has no second-order form in its coordinates; use A and B")
        Aqq, W, Auq, Auu = self.A[:n, :n], self.A[:n, n:], self.A[n:, :n], self.A[n:, n:]
        if np.any(self.B[:n] != 0):
            raise KaneError("mechanical form: the inputs enter the kinematic equations q' (B has nonzero rows "
                            f"for {', '.join(self.state_names[k] for k in range(n) if np.any(self.B[k]))})")
        if np.linalg.cond(W) > 1e12:
            raise KaneError(f"mechanical form: dq'/du is singular at this configuration (condition "
                            f"{np.linalg.cond(W):.3g}); the speeds do not determine the coordinate rates here")
        Wi = np.linalg.inv(W)
        Mu = self.mass_matrix
        return MechanicalForm(Mu @ Wi, -Mu @ (Wi @ Aqq + Auu @ Wi), -Mu @ (Auq - Auu @ Wi @ Aqq),
                              Mu @ self.B[n:], self.coordinate_names, self.input_names)

    def state_space(self):
        """``scipy.signal.StateSpace(A, B, I, 0)``: every state an output (n_x outputs, n_r inputs)."""
        from scipy.signal import StateSpace

        n, m = self.A.shape[0], self.B.shape[1]
        return StateSpace(self.A, self.B, np.eye(n), np.zeros((n, m)))

    def to_control(self):
        """A python-control ``StateSpace`` (A, B, I, 0) with the state and input names, when python-control is
        installed (else a :class:`KaneError` saying so)."""
        try:
            import control
        except ImportError:
            raise KaneError("to_control needs python-control (pip install control); state_space() gives "
                            "scipy.signal's form") from None
        n, m = self.A.shape[0], self.B.shape[1]
        return control.ss(self.A, self.B, np.eye(n), np.zeros((n, m)), states=list(self.state_names),
                          inputs=list(self.input_names) or None, outputs=list(self.state_names))

    def __str__(self) -> str:
        lines = [f"linearization: {len(self.state_names)} states ({', '.join(self.state_names)}), "
                 f"{len(self.input_names)} inputs"]
        if self.steady:
            lines.append("operating point: a steady motion (residual "
                         f"{np.max(np.abs(self.residual), initial=0.0):.3g})")
        else:
            lines.append(_not_steady_text(self))
        lam = self.eigenvalues(reduced=True)
        lines.append("eigenvalues [1/s]: " + ", ".join(f"{z.real:.6g}{z.imag:+.6g}j" for z in lam))
        return "\n".join(lines)


def _not_steady_text(lin: Linearization) -> str:
    k = int(np.argmax(np.abs(lin.residual)))
    return (f"operating point: not a steady motion: {lin.residual_names[k]}' = {lin.residual[k]:.6g} (the largest "
            "rate of a state the dynamics depends on); A and B describe the tangent of the trajectory through it")


def _values_by_name(value, names, defaults, what) -> np.ndarray:
    """An array in model order from an array or a mapping name -> value (others from ``defaults``)."""
    if isinstance(value, Mapping):
        out = np.array(defaults, dtype=float)
        for key, v in value.items():
            if str(key) not in names:
                raise ArgumentError(f"unknown {what} {str(key)!r}; known: {', '.join(names) or '(none)'}")
            out[names.index(str(key))] = float(v)
        return out
    return real_array(value, what).reshape(-1)


class Linearizer:
    """Linearizations of one :class:`kane.Equations` at any number of operating points: the Jacobian program
    (M, f, q', C and their derivatives with respect to q, u, inputs and, with ``parameters=True``, the
    parameters) is formed and compiled once."""

    def __init__(self, equations, parameters: bool = False):
        self.equations = eqs = equations
        model = eqs.model
        self.model = model
        self.q_names = tuple(str(s) for s in model.q)
        self.u_names = tuple(str(s) for s in eqs.u_independent)
        self.model_u_names = tuple(str(s) for s in model.u)
        self.param_names = tuple(str(s) for s in model.parameters)
        self.input_names = tuple(str(s) for s in model.inputs)
        holo = []  # (row in C, constraint name) of the permanent holonomic constraints
        for name, block in eqs.constraint_layout.items():
            if block.holonomic is not None and not block.transient:
                holo += [(r, name) for r in range(block.holonomic.start, block.holonomic.stop)]
        self.holonomic_rows = tuple(r for r, _ in holo)
        self.holonomic_names = tuple(n for _, n in holo)
        outs = ["M", "f", "qdot"] + (["C"] if holo else [])
        self.groups = ("q", "u", "inputs") + (("params",) if parameters else ())
        self._program = jacobian_program(eqs.program, outs, wrt=self.groups)
        self._names = outs + [jacobian_name(o, g) for o in outs for g in self.groups]
        self._fn = compile_program(self._program, self._names)
        self._full = self._batch = None

    # ---- arguments -----------------------------------------------------------------------------------------
    def arguments(self, q, u, params=None, inputs=None):
        """(q (n_q,), u (p,), params, inputs) as arrays; q and u may be mappings name -> value (the rest from the
        model's q0, u0); u may hold every speed of the model, then the dependent ones must satisfy the motion
        constraints (else a :class:`KaneError` names the constraint and its residual)."""
        m = self.model
        q = _values_by_name(q, self.q_names, m.q0, "coordinate")
        if q.shape != (m.n_q,):
            raise ArgumentError(f"q: expected {m.n_q} values ({', '.join(self.q_names)}), got shape {q.shape}")
        p = m.parameter_values(params)
        w = m.input_values(inputs)
        known_u = self.model_u_names
        u0 = np.array(m.u0, dtype=float)
        if isinstance(u, Mapping) and all(str(k) in self.u_names for k in u):
            u = _values_by_name(u, self.u_names, u0[[known_u.index(n) for n in self.u_names]], "speed")
        elif isinstance(u, Mapping):
            u = _values_by_name(u, known_u, u0, "speed")
        else:
            u = real_array(u, "u").reshape(-1)
        if u.shape == (len(known_u),) and len(known_u) != len(self.u_names):
            u = self._independent(q, u, p, w)
        elif u.shape != (len(self.u_names),):
            raise ArgumentError(f"u: expected the {len(self.u_names)} independent speeds ({', '.join(self.u_names)}) "
                                f"or all {len(known_u)} speeds of the model, got shape {u.shape}")
        return q, u, p, w

    def _permanent_rows(self) -> list[int]:
        return [r for b in self.equations.constraint_layout.values() if not b.transient
                for r in range(b.rows.start, b.rows.stop)]

    def check_dependent_block(self, t, q, p, w) -> None:
        """Raise a :class:`KaneError` naming the dependent speeds when the embedded constraints cannot be solved
        for them at q (their block of the constraint rows is singular there)."""
        if not self.equations.u_dependent:
            return
        if self._full is None:
            self._full = compile_program(self.equations.full_program, ["A", "b"])
        A = self._full(float(t), q, np.zeros(len(self.model_u_names)), p, w)[0][self._permanent_rows()]
        dep = [self.model_u_names.index(str(s)) for s in self.equations.u_dependent]
        sv = np.linalg.svd(A[:, dep], compute_uv=False)
        if not sv[-1] > 1e-10 * max(1.0, sv[0]):
            raise KaneError(f"operating point: the constraints cannot be solved for the dependent speeds "
                            f"{', '.join(self._dependent_names())} here (their block of the constraint rows is "
                            f"singular: smallest singular value {sv[-1]:.3g}); derive with other dependent speeds "
                            "(kane.derive(..., dependent=[...])) to linearize at this point")

    def _dependent_names(self):
        return [str(s) for s in self.equations.u_dependent]

    def _independent(self, q, u_full, p, w):
        """The independent speeds of a full speed vector, after checking the embedded motion constraints."""
        eqs = self.equations
        if self._full is None:
            self._full = compile_program(eqs.full_program, ["A", "b"])
        A, b = self._full(0.0, q, u_full, p, w)
        res = A @ u_full + b
        worst = (0.0, None, None)
        for name, block in eqs.constraint_layout.items():
            if block.transient:
                continue
            for r in range(block.rows.start, block.rows.stop):
                if abs(res[r]) > worst[0]:
                    worst = (abs(res[r]), name, r - block.rows.start)
        if worst[0] > 1e-9 * max(1.0, float(np.max(np.abs(u_full)))):
            raise KaneError(f"operating point: the speeds violate motion constraint {worst[1]!r} (row {worst[2]}): "
                            f"residual {worst[0]:.3g}; give the independent speeds ({', '.join(self.u_names)}) alone "
                            "or speeds that satisfy the constraints")
        idx = [self.model_u_names.index(n) for n in self.u_names]
        return u_full[idx]

    # ---- evaluation ----------------------------------------------------------------------------------------
    def evaluate(self, t, q, u, p, w) -> dict:
        """Every output and Jacobian of the program at one point (arrays by name; see :func:`jacobian_name`)."""
        return dict(zip(self._names, self._fn(float(t), q, u, p, w)))

    def evaluate_batch(self, t, q, u, p, w) -> list[dict]:
        """:meth:`evaluate` at B points at once (numpy, vectorized): q (B, n_q), u (B, p); p and w in model order,
        (n,) shared or (B, n) per point. Returns one dict per point."""
        if self._batch is None:
            self._batch = compile_program(self._program, self._names, batch=True)
        out = self._batch(float(t), q, u, p, w)
        n = q.shape[0]
        arrays = [np.broadcast_to(o, (n,) + np.shape(o)[-(np.ndim(o) - 1):] if np.ndim(o) > 1 else (n,))
                  if np.ndim(o) and np.shape(o)[0] == n else np.broadcast_to(o, (n,) + np.shape(o)) for o in out]
        return [{name: a[k] for name, a in zip(self._names, arrays)} for k in range(n)]

    def check_configuration(self, values, tol: float) -> None:
        """Raise a :class:`KaneError` naming the holonomic constraint with the largest residual above ``tol``."""
        if not self.holonomic_rows:
            return
        C = values["C"][list(self.holonomic_rows)]
        k = int(np.argmax(np.abs(C)))
        if abs(C[k]) > tol:
            raise KaneError(f"operating point: the coordinates violate configuration constraint "
                            f"{self.holonomic_names[k]!r}: residual {C[k]:.6g} (tolerance {tol:g}); assemble a "
                            "consistent configuration first (kane.assemble)")

    def dependent_coordinates(self, values, dependent_q=None) -> list[int]:
        """Indices of the coordinates the holonomic constraints determine: the named ones, or those of the
        largest pivots of dC/dq (QR with column pivoting) at the operating point."""
        m = len(self.holonomic_rows)
        if not m:
            if dependent_q:
                raise ArgumentError(f"dependent coordinates {', '.join(dependent_q)} given, but the model has no "
                                    "permanent configuration constraint")
            return []
        Cq = values[jacobian_name("C", "q")][list(self.holonomic_rows)]
        if dependent_q is not None:
            names = list(dependent_q)
            unknown = [n for n in names if n not in self.q_names]
            if unknown:
                raise ArgumentError(f"unknown coordinate(s) {', '.join(unknown)}; known: {', '.join(self.q_names)}")
            if len(names) != m:
                raise ArgumentError(f"{len(names)} dependent coordinates given ({', '.join(names)}); the "
                                    f"configuration constraints determine {m}")
            return [self.q_names.index(n) for n in names]
        _, R, piv = sla.qr(Cq, pivoting=True, mode="economic")
        if abs(R[m - 1, m - 1]) <= 1e-10 * max(1.0, abs(R[0, 0])):
            raise KaneError(f"operating point: the configuration constraints {', '.join(set(self.holonomic_names))} "
                            "are singular here (dC/dq loses rank); choose another operating point")
        return sorted(int(k) for k in piv[:m])

    def at(self, q, u, t: float = 0.0, params=None, inputs=None, *, dependent_q=None, tol: float = 1e-9,
           warn: bool = True) -> Linearization:
        """The :class:`Linearization` at (t, q, u): see :func:`linearize`."""
        q, u, p, w = self.arguments(q, u, params, inputs)
        return self.from_arrays(t, q, u, p, w, dependent_q=dependent_q, tol=tol, warn=warn)

    def from_arrays(self, t, q, u, p, w, *, dependent_q=None, tol=1e-9, warn=True, values=None) -> Linearization:
        """As :meth:`at` for checked arrays (q (n_q,), u (p,), params, inputs in model order)."""
        self.check_dependent_block(t, q, p, w)
        v = self.evaluate(t, q, u, p, w) if values is None else values
        self.check_configuration(v, tol * max(1.0, float(np.max(np.abs(q), initial=0.0))))
        dep = self.dependent_coordinates(v, dependent_q)
        ind = [k for k in range(len(q)) if k not in dep]
        P = np.zeros((len(q), len(ind)))
        P[ind, np.arange(len(ind))] = 1.0
        if dep:
            Cq = v[jacobian_name("C", "q")][list(self.holonomic_rows)]
            Cd, Ci = Cq[:, dep], Cq[:, ind]
            if np.linalg.cond(Cd) > 1e12:
                raise KaneError(f"operating point: the configuration constraints do not determine the coordinates "
                                f"{', '.join(self.q_names[k] for k in dep)} here (dC/dq_dep is singular); name other "
                                "dependent coordinates")
            P[dep] = -np.linalg.solve(Cd, Ci)
        M, f = v["M"], v["f"]
        n_p = len(u)
        udot = np.linalg.solve(M, f)
        dM = v[jacobian_name("M", "q")].reshape(n_p, n_p, len(q))
        g_q = np.linalg.solve(M, v[jacobian_name("f", "q")] - np.einsum("ijk,j->ik", dM, udot))
        g_u = np.linalg.solve(M, v[jacobian_name("f", "u")])
        g_r = np.linalg.solve(M, v[jacobian_name("f", "inputs")]).reshape(n_p, -1)
        h_q, h_u = v[jacobian_name("qdot", "q")][ind], v[jacobian_name("qdot", "u")][ind]
        h_r = v[jacobian_name("qdot", "inputs")][ind].reshape(len(ind), -1)
        A = np.block([[h_q @ P, h_u], [g_q @ P, g_u]])
        B = np.vstack([h_r, g_r])
        coords = tuple(self.q_names[k] for k in ind)
        states = coords + self.u_names
        rates = np.concatenate([v["qdot"][ind], udot])
        relevant = _relevant_states(A, len(ind))
        cyclic = tuple(states[k] for k in range(len(ind)) if k not in relevant)
        keep = sorted(relevant)
        residual = rates[keep]
        scale = max(1.0, float(np.max(np.abs(rates), initial=0.0)))
        lin = Linearization(A, B, states, self.input_names, coords, self.u_names,
                            tuple(self.q_names[k] for k in dep), cyclic, rates, residual,
                            tuple(states[k] for k in keep), bool(np.max(np.abs(residual), initial=0.0) <= tol * scale),
                            float(t), q, u, p, w, M)
        if warn and not lin.steady:
            warnings.warn(_not_steady_text(lin), NotSteadyWarning, stacklevel=3)
        return lin


    def parameter_jacobian(self, values, lin: Linearization) -> np.ndarray:
        """d x'/d params (n_x, n_params) at the point of ``lin`` (``values`` from :meth:`evaluate` there), the
        dependent coordinates following the parameters through C(q, params) = 0. Needs ``parameters=True``."""
        if "params" not in self.groups:
            raise KaneError("parameter derivatives need Linearizer(equations, parameters=True)")
        v, nq, n_p = values, len(lin.q), len(lin.u)
        dep = [self.q_names.index(n) for n in lin.dependent_coordinates]
        ind = [self.q_names.index(n) for n in lin.coordinate_names]
        n_par = len(lin.params)
        dq = np.zeros((nq, n_par))
        if dep:
            rows = list(self.holonomic_rows)
            Cq = v[jacobian_name("C", "q")][rows]
            dq[dep] = -np.linalg.solve(Cq[:, dep], v[jacobian_name("C", "params")][rows])
        M = v["M"]
        udot = np.linalg.solve(M, v["f"])
        dMq = v[jacobian_name("M", "q")].reshape(n_p, n_p, nq)
        dMp = v[jacobian_name("M", "params")].reshape(n_p, n_p, n_par)
        g_q = np.linalg.solve(M, v[jacobian_name("f", "q")] - np.einsum("ijk,j->ik", dMq, udot))
        g_p = np.linalg.solve(M, v[jacobian_name("f", "params")] - np.einsum("ijk,j->ik", dMp, udot))
        h = v[jacobian_name("qdot", "q")][ind] @ dq + v[jacobian_name("qdot", "params")][ind]
        return np.vstack([h, g_q @ dq + g_p])


def _relevant_states(A, n_coords) -> set:
    """The states the speeds' rates depend on, directly or through other states (the speeds themselves
    included); the coordinates outside are cyclic."""
    tol = 1e-12 * max(1.0, float(np.max(np.abs(A), initial=0.0)))
    dep = np.abs(A) > tol
    relevant = set(range(n_coords, A.shape[0]))
    frontier = list(relevant)
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(dep[i]):
            if int(j) not in relevant:
                relevant.add(int(j))
                frontier.append(int(j))
    return relevant


def linearize(equations, q, u, t: float = 0.0, params=None, inputs=None, *, dependent_q=None, tol: float = 1e-9,
              warn: bool = True) -> Linearization:
    """Linearize the equations of motion about (t, q, u): x' = A x + B r, x = (independent q, independent u).

    q: every coordinate of the model (n_q,) or a mapping name -> value (the rest from q0); it must satisfy the
    permanent configuration constraints to ``tol`` (else a :class:`KaneError` names the constraint and its
    residual). u: the independent speeds (p,), every speed of the model (checked against the motion constraints),
    or a mapping. params, inputs: as for :class:`kane.Dynamics`. dependent_q: names of the coordinates the
    configuration constraints eliminate (default: chosen by pivoting at the operating point). A point that is not a
    steady motion gives a :class:`NotSteadyWarning` (``warn=False`` silences it) and ``steady=False``. For many
    points of one model, keep a :class:`Linearizer`: it compiles the derivatives once.
    """
    return linearizer(equations).at(q, u, t, params, inputs, dependent_q=dependent_q, tol=tol, warn=warn)


_LINEARIZERS: dict = {}  # id(equations) -> (weak reference to the equations, Linearizer)


def linearizer(equations, parameters: bool = False) -> Linearizer:
    """The :class:`Linearizer` of ``equations`` (with parameter derivatives when ``parameters``), compiled once
    and kept as long as the equations live."""
    key = (id(equations), parameters)
    hit = _LINEARIZERS.get(key)
    if hit is not None and hit[0]() is equations:
        return hit[1]
    lin = Linearizer(equations, parameters)
    _LINEARIZERS[key] = (weakref.ref(equations), lin)
    weakref.finalize(equations, _LINEARIZERS.pop, key, None)
    return lin
