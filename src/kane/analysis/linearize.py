"""Linearization of the embedded equations of motion by exact forward-mode derivatives (Griewank & Walther,
*Evaluating Derivatives*, ch. 3; the constrained reduction follows Peterson, Gede & Hubbard, "Symbolic
linearization of equations of motion of constrained multibody systems", Multibody Syst. Dyn. 33, 2015).

The state is x = (q_i, u), the independent coordinates and the independent speeds. The holonomic constraints
C(q) = 0 eliminate the dependent coordinates q_d (dq_d/dq_i = -C_d^-1 C_i at the operating point); the motion
constraints are already embedded in :class:`kane.Equations` (u_dep = D u + E inside its program). With
g = M^-1 f the accelerations,

    A = [[dq_i'/dq P, dq_i'/du], [dg/dq P, dg/du]],   B = [[dq_i'/dr], [dg/dr]],   P = dq/dq_i,
    dg/dq = M^-1 (df/dq - dM/dq g),

every derivative evaluated exactly from :func:`kane.codegen.forward.jacobian_program`, at any speeds. The
coordinates are those of :mod:`kane.analysis.manifold`: each unit quaternion is perturbed in its tangent space (a
3-component rotation vector in body axes), never in its 4 components. At a relative equilibrium (a steady motion
along symmetries: cyclic coordinates, spins and headings), A is taken in the frame moving with the symmetries and
:meth:`Linearization.reduced` is the quotient by them (:mod:`kane.analysis.relative`).
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Mapping

import numpy as np

from ..codegen.forward import jacobian_name, jacobian_program
from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError, KaneError
from ..mechanics.arguments import real_array
from ..symbolic.derive import Equations
from .manifold import chart_generator, chart_of, rotation_symmetries
from .mechanical import MechanicalForm
from .pointwise import (StateLayout, ill_conditioned, lu_factors, lu_solve, pivoted_qr, singular_values,
                        state_matrix)
from .result import Linearization, Modes, NotSteadyWarning, not_steady_text
from .relative import Structure, named_structure, quotient, relevant_states

__all__ = ["Linearization", "Linearizer", "MechanicalForm", "Modes", "NotSteadyWarning", "linearize", "linearizer"]

_CQ, _MQ, _FQ, _FU, _FR = (jacobian_name(o, g) for o, g in (("C", "q"), ("M", "q"), ("f", "q"), ("f", "u"),
                                                               ("f", "inputs")))
_QDQ, _QDU, _QDR = (jacobian_name("qdot", g) for g in ("q", "u", "inputs"))


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
        _check_equations(equations)
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
        self.chart = chart_of(model)
        self._perm_rows = self._permanent_rows()
        self.dropped_rows: tuple = ()  # "'name' configuration row k": holonomic rows dropped as redundant
        kept = None if eqs.embedding is None else list(eqs.embedding.rows)
        if kept is not None and len(kept) < len(self._perm_rows):
            self._perm_rows = [self._perm_rows[k] for k in kept]
            self._drop_redundant_holonomic(eqs)
        self._dep_cols = [self.model_u_names.index(str(s)) for s in eqs.u_dependent]
        self._dep_block = np.ix_(self._perm_rows, self._dep_cols)
        self._u_ind = [self.model_u_names.index(n) for n in self.u_names]
        self._holo_array = np.array(self.holonomic_rows, dtype=np.intp)
        # the quaternions' 4 consecutive components (chart_of refuses others)
        self._quaternions = tuple(slice(idx[0], idx[0] + 4) for _, idx in model.quaternion_indices())
        self._lock = threading.Lock()
        self._layouts: dict = {}  # dependent chart indices -> StateLayout (each published by one assignment)
        self._relevant: dict = {}  # dependent chart indices -> (relevant states, dependence pattern)
        self._structures: dict = {}  # (dependent chart indices, parameters, inputs) -> Structure

    def _drop_redundant_holonomic(self, eqs) -> None:
        """Where ``derive(..., redundant="drop")`` dropped constraint rows, keep the holonomic rows that the
        equations keep (:attr:`Equations.kept_holonomic`, the rows assembly and projection solve) and record the
        others in :attr:`dropped_rows`: the linearizer no longer sees them."""
        kept = set(eqs.kept_holonomic)
        rows, names = list(self.holonomic_rows), list(self.holonomic_names)
        keep = [k for k in range(len(rows)) if rows[k] in kept]
        block_start = {n: b.holonomic.start for n, b in eqs.constraint_layout.items() if b.holonomic is not None}
        self.dropped_rows = tuple(f"{names[k]!r} configuration row {rows[k] - block_start[names[k]]}"
                                  for k in range(len(rows)) if k not in keep)
        self.holonomic_rows = tuple(rows[k] for k in keep)
        self.holonomic_names = tuple(names[k] for k in keep)

    # ---- arguments -----------------------------------------------------------------------------------------
    def arguments(self, q, u, params=None, inputs=None):
        """(q (n_q,), u (p,), params, inputs) as arrays; q and u may be mappings name -> value (the rest from the
        model's q0, u0); u may hold every speed of the model, then the dependent ones must satisfy the motion
        constraints (else a :class:`KaneError` names the constraint and its residual)."""
        m = self.model
        q = _values_by_name(q, self.q_names, m.q0, "coordinate")
        if q.shape != (m.n_q,):
            raise ArgumentError(f"q: expected {m.n_q} values ({', '.join(self.q_names)}), got shape {q.shape}")
        if self.chart.tangent:
            q = self._unit_quaternions(q)
        p = m.parameter_values(params)
        w = m.input_values(inputs)
        known_u = self.model_u_names
        u0 = np.array(m.u0, dtype=float)
        if isinstance(u, Mapping) and all(str(k) in self.u_names for k in u):
            u = _values_by_name(u, self.u_names, u0[self._u_ind], "speed")
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

    def _unit_quaternions(self, q) -> np.ndarray:
        """A copy of q with its quaternions scaled to unit norm, after the model's check that they are unit
        quaternions (its refusal names the joint); the check's norms are reused when they pass."""
        norms = [float(np.sqrt(q[k].dot(q[k]))) for k in self._quaternions]
        if not all(abs(n - 1.0) <= 1e-6 for n in norms):
            self.model.check_quaternions(q, "the operating point")
            return self.model.normalize_quaternions(q.copy())
        q = q.copy()
        for k, n in zip(self._quaternions, norms):
            q[k] /= n
        return q

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
        A = self._full(float(t), q, np.zeros(len(self.model_u_names)), p, w)[0]
        sv = singular_values(A[self._dep_block])
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
        return u_full[self._u_ind]

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
        C = values["C"][self._holo_array]
        k = int(np.argmax(np.abs(C)))
        if abs(C[k]) > tol:
            raise KaneError(f"operating point: the coordinates violate configuration constraint "
                            f"{self.holonomic_names[k]!r}: residual {C[k]:.6g} (tolerance {tol:g}); assemble a "
                            "consistent configuration first (kane.assemble)")

    def dependent_coordinates(self, Cq, dependent_q=None) -> list[int]:
        """Indices in the chart (:attr:`chart`) of the coordinates the holonomic constraints determine: the named
        ones, or those of the largest pivots of dC/dx (QR with column pivoting) at the operating point; ``Cq`` the
        holonomic rows' dC/dx (m, n_c)."""
        m = len(self.holonomic_rows)
        names = self.chart.names
        if not m:
            if dependent_q:
                raise ArgumentError(f"dependent coordinates {', '.join(dependent_q)} given, but the model has no "
                                    "permanent configuration constraint")
            return []
        if dependent_q is not None:
            given = list(dependent_q)
            unknown = [n for n in given if n not in names]
            if unknown:
                raise ArgumentError(f"unknown coordinate(s) {', '.join(unknown)}; known: {', '.join(names)}")
            if len(given) != m:
                raise ArgumentError(f"{len(given)} dependent coordinates given ({', '.join(given)}); the "
                                    f"configuration constraints determine {m}")
            return [names.index(n) for n in given]
        R, piv = pivoted_qr(Cq)
        if abs(R[m - 1]) <= 1e-10 * max(1.0, abs(R[0])):
            raise KaneError(f"operating point: the configuration constraints {', '.join(set(self.holonomic_names))} "
                            "are singular here (dC/dq loses rank); choose another operating point")
        return sorted(int(k) for k in piv[:m])

    def at(self, q, u, t: float = 0.0, params=None, inputs=None, *, dependent_q=None, tol: float = 1e-9,
           warn: bool = True, ignorable=None) -> Linearization:
        """The :class:`Linearization` at (t, q, u): see :func:`linearize`."""
        q, u, p, w = self.arguments(q, u, params, inputs)
        return self.from_arrays(t, q, u, p, w, dependent_q=dependent_q, tol=tol, warn=warn, ignorable=ignorable)

    def _layout(self, dep) -> StateLayout:
        """The :class:`StateLayout` of these dependent chart coordinates, formed once (published by one assignment)."""
        key = tuple(dep)
        lay = self._layouts.get(key)
        if lay is None:
            lay = self._layouts[key] = StateLayout.of(self.chart.names, key, self.u_names)
        return lay

    def _parts(self, q, v, dep, E=None, Cx=None):
        """(layout, P (n_c, n_i), udot, g_x (p, n_c), x' (n_c,), dx'/dx, dx'/du, E, LU factors of M, dx'/dq' at
        fixed q (n_c, n_q) or None) at an evaluated point (E the chart's dq/dx there and Cx the holonomic rows'
        dC/dx when known)."""
        ch, lay = self.chart, self._layout(dep)
        if E is None and ch.tangent:
            E = ch.E(q)
        P = lay.P0
        if dep:
            if Cx is None:
                Cx = v[_CQ][self._holo_array]
                Cx = Cx @ E if E is not None else Cx
            Cd, Ci = Cx[:, dep], Cx[:, lay.ind_array]
            if ill_conditioned(Cd, 1e12):
                raise KaneError(f"operating point: the configuration constraints do not determine the coordinates "
                                f"{', '.join(ch.names[k] for k in dep)} here (dC/dq_dep is singular); name other "
                                "dependent coordinates")
            P = P.copy()
            P[dep] = -lu_solve(lu_factors(Cd), Ci)
        lu = lu_factors(v["M"])
        udot = lu_solve(lu, v["f"])
        n_p = len(udot)
        dM = v[_MQ].reshape(n_p, n_p, len(q))
        g_x = lu_solve(lu, v[_FQ] - np.einsum("ijk,j->ik", dM, udot))
        qd, qd_q, qd_u = v["qdot"], v[_QDQ], v[_QDU]
        if E is None:
            return lay, P, udot, g_x, qd, qd_q, qd_u, E, lu, None
        xdot, h_x, h_u, S = ch.tangent_rates(q, qd, qd_q, qd_u, E)
        return lay, P, udot, g_x @ E, xdot, h_x, h_u, E, lu, S

    def _random_points(self, q, u, p, w, vary_parameters: bool):
        """Two random generic states around (q, u) (random quaternions), with the parameters and inputs perturbed
        when ``vary_parameters``: [(q, u, p, w, evaluated program)]."""
        rng = np.random.default_rng(20260)
        out = []
        for _ in range(2):
            qr = q + 0.3 * rng.standard_normal(len(q))
            for _, idx in self.model.quaternion_indices():
                e = rng.standard_normal(4)
                qr[idx] = e / np.linalg.norm(e)
            ur = u + rng.standard_normal(len(u))
            pr, wr = p, w
            if vary_parameters:
                pr = p * (1 + 0.2 * rng.standard_normal(len(p))) + 0.2 * rng.standard_normal(len(p)) * (p == 0)
                wr = w + 0.2 * rng.standard_normal(len(w))
            out.append((qr, ur, pr, wr, self.evaluate(0.7, qr, ur, pr, wr)))
        return out

    def structure(self, dep, q, u, p, w) -> Structure:
        """The :class:`Structure` for these dependent chart coordinates: the cyclic coordinates found once at two
        random generic states with random parameters and inputs (they do not depend on the parameters' values);
        the rotational symmetries at two random generic states with these parameters and inputs (a symmetry may
        hold at some values only: an axisymmetric body, no gravity), found once per parameter set."""
        key = tuple(dep)
        with self._lock:
            relevant = self._relevant.get(key)
            if relevant is None:
                pattern = None
                for qr, ur, _, _, v in self._random_points(q, u, p, w, True):
                    try:
                        lay, P, _, g_x, _, h_x, h_u, _, lu, _ = self._parts(qr, v, dep)
                        g_u = lu_solve(lu, v[_FU])
                    except (KaneError, np.linalg.LinAlgError):
                        continue
                    A = state_matrix(h_x, h_u, g_x, g_u, P, lay.ind_array)
                    big = np.abs(A) > 1e-12 * max(1.0, float(np.max(np.abs(A), initial=0.0)))
                    pattern = big if pattern is None else pattern | big
                n_i = len(self.chart.names) - len(dep)
                rel = relevant_states(pattern, n_i) if pattern is not None else set(range(n_i + len(u)))
                relevant = self._relevant[key] = (tuple(sorted(rel)), pattern)
            skey = (key, p.tobytes(), w.tobytes())
            hit = self._structures.get(skey)
            if hit is None:
                syms = ()
                if self.chart.tangent:
                    syms = rotation_symmetries(self, [(qr, ur, v) for qr, ur, _, _, v in
                                                      self._random_points(q, u, p, w, False)])
                gens = tuple(chart_generator(self.model, self.chart, s, self.u_names, self.model_u_names)
                             for s in syms)
                if len(self._structures) > 256:  # a long parameter sweep: forget the older parameter sets
                    self._structures = {}
                hit = self._structures[skey] = Structure(relevant[0], syms, gens, relevant[1])
            return hit

    def from_arrays(self, t, q, u, p, w, *, dependent_q=None, tol=1e-9, warn=True, values=None,
                    ignorable=None) -> Linearization:
        """As :meth:`at` for checked arrays (q (n_q,), u (p,), params, inputs in model order)."""
        self.check_dependent_block(t, q, p, w)
        v = self.evaluate(t, q, u, p, w) if values is None else values
        self.check_configuration(v, tol * max(1.0, float(np.abs(q).max(initial=0.0))))
        ch = self.chart
        E = ch.E(q) if ch.tangent else None
        Cx = None
        if self.holonomic_rows:
            Cx = v[_CQ][self._holo_array]
            Cx = Cx @ E if E is not None else Cx
        dep = self.dependent_coordinates(Cx, dependent_q)
        lay, P, udot, g_x, xdot, h_x, h_u, E, lu, S = self._parts(q, v, dep, E, Cx)
        n_p, ind = len(u), lay.ind_array
        n_i = len(ind)
        f_r = v[_FR].reshape(n_p, -1)
        g_ur = lu_solve(lu, np.hstack([v[_FU], f_r]))  # one solve for the speeds' and the inputs' columns
        qd_r = v[_QDR].reshape(len(q), -1)
        A = state_matrix(h_x, h_u, g_x, g_ur[:, :n_p], P, ind)
        B = np.empty((n_i + n_p, f_r.shape[1]))
        B[:n_i] = (S @ qd_r)[ind] if S is not None else qd_r[ind]
        B[n_i:] = g_ur[:, n_p:]
        rates = np.concatenate([xdot[ind], udot])
        st = self.structure(dep, q, u, p, w)
        if ignorable is not None:
            st = named_structure(st, ignorable, lay.coords, lay.dep_names, len(lay.states))
        gens = []
        if st.generators:
            Pfull = lay.Pfull0.copy()
            Pfull[:len(ch.names), :n_i] = P
            for at in st.generators:
                val, D = at(q, u)
                gens.append((val[lay.sel], D[lay.sel] @ Pfull))
        scale = max(1.0, float(np.abs(rates).max(initial=0.0)))
        qt = quotient(A, B, rates, st.relevant, n_i, gens, tol, scale)
        states = lay.states
        lin = Linearization(qt.A_full, B, states, self.input_names, lay.coords, self.u_names, lay.dep_names,
                            tuple(states[k] for k in qt.dropped), rates, qt.residual,
                            tuple(states[k] for k in qt.states), qt.steady, float(t), q, u, p, w, v["M"],
                            st.descriptions, tuple((st.labels[k], float(c)) for k, c in zip(qt.used, qt.frame_rates)),
                            qt)
        if warn and not lin.steady:
            warnings.warn(not_steady_text(lin), NotSteadyWarning, stacklevel=3)
        return lin

    def parameter_jacobian(self, values, lin: Linearization) -> np.ndarray:
        """d x'/d params (n_x, n_params) at the point of ``lin`` (``values`` from :meth:`evaluate` there), the
        dependent coordinates following the parameters through C(q, params) = 0. Needs ``parameters=True``."""
        if "params" not in self.groups:
            raise KaneError("parameter derivatives need Linearizer(equations, parameters=True)")
        v, ch = values, self.chart
        n_c, n_p, n_par = len(ch.names), len(lin.u), len(lin.params)
        dep = [ch.names.index(n) for n in lin.dependent_coordinates]
        lay, _, udot, g_x, _, h_x, _, _, lu, S = self._parts(lin.q, v, dep)
        dx = np.zeros((n_c, n_par))
        if dep:
            rows = list(self.holonomic_rows)
            Cq = v[jacobian_name("C", "q")][rows]
            Cq = Cq @ ch.E(lin.q) if ch.tangent else Cq
            dx[dep] = -np.linalg.solve(Cq[:, dep], v[jacobian_name("C", "params")][rows])
        dMp = v[jacobian_name("M", "params")].reshape(n_p, n_p, n_par)
        g_p = lu_solve(lu, v[jacobian_name("f", "params")] - np.einsum("ijk,j->ik", dMp, udot))
        qd_p = v[jacobian_name("qdot", "params")]
        h = h_x @ dx + (S @ qd_p if S is not None else qd_p)
        return np.vstack([h[lay.ind_array], g_x @ dx + g_p])


def _check_equations(equations) -> None:
    """Refuse anything but derived :class:`kane.Equations`, naming it and why."""
    if isinstance(equations, Equations):
        return
    kind = type(equations).__name__
    if hasattr(equations, "contacts") or "Terrain" in kind:
        raise KaneError(f"linearize: {kind} holds surface contacts whose contact points are solved numerically at "
                        "every step (Newton on the surfaces' parameters, Baumgarte-stabilized), so it has no "
                        "program of M, f and the constraints to differentiate exactly; linearize kane.derive(...) "
                        "equations (a contact on a plane as a rolling constraint), or difference its rhs numerically")
    raise KaneError(f"linearize: expected derived equations (kane.derive(...), a kane.Equations), got {kind}")


def linearize(equations, q, u, t: float = 0.0, params=None, inputs=None, *, dependent_q=None, tol: float = 1e-9,
              warn: bool = True, ignorable=None) -> Linearization:
    """Linearize the equations of motion about (t, q, u): x' = A x + B r, x = (independent q, independent u).

    q: every coordinate of the model (n_q,) or a mapping name -> value (the rest from q0); it must satisfy the
    permanent configuration constraints to ``tol`` (else a :class:`KaneError` names the constraint and its
    residual). u: the independent speeds (p,), every speed of the model (checked against the motion constraints),
    or a mapping. params, inputs: as for :class:`kane.Dynamics`. dependent_q: names of the coordinates the
    configuration constraints eliminate (default: chosen by pivoting at the operating point). A point that is not a
    steady motion gives a :class:`NotSteadyWarning` (``warn=False`` silences it) and ``steady=False``.
    ignorable: the names of the cyclic coordinates and symmetries (``<joint>.turn_<axis>``, ``<joint>.spin_<axis>``)
    to take out, instead of all those found (each is checked: a :class:`KaneError` names one the equations do
    depend on). For many points of one model, keep a :class:`Linearizer`: it compiles the derivatives once.
    """
    return linearizer(equations).at(q, u, t, params, inputs, dependent_q=dependent_q, tol=tol, warn=warn,
                                    ignorable=ignorable)


_LINEARIZERS: dict = {}  # id(equations) -> (weak reference to the equations, Linearizer)


def linearizer(equations, parameters: bool = False) -> Linearizer:
    """The :class:`Linearizer` of ``equations`` (with parameter derivatives when ``parameters``), compiled once
    and kept as long as the equations live."""
    _check_equations(equations)
    key = (id(equations), parameters)
    hit = _LINEARIZERS.get(key)
    if hit is not None and hit[0]() is equations:
        return hit[1]
    lin = Linearizer(equations, parameters)
    _LINEARIZERS[key] = (weakref.ref(equations), lin)
    weakref.finalize(equations, _LINEARIZERS.pop, key, None)
    return lin
