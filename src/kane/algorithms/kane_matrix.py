"""Kane's equations in matrix form for trees (Stoneking 2014, seed 004), with constraint forces after the fact.

(Omega^T I Omega + V^T m V) u' = Omega^T (T - I alpha_r - omega x H) + V^T (F - m a_r) ("Equations of Motion"),
and the generalized constraint forces of every constrained joint axis from the solved u' ("Equations of
Constraint").

Per body i, everything in body i's axes (n = n_u speeds):

* ``Omega_i`` (3 x n): partial angular velocities [rad/s per speed unit]; ``V_i`` (3 x n): partial velocities of
  the mass centre. Built recursively, parent before child: the parent's columns are carried into the body's axes
  (X_i of :meth:`TreeKinematics.motion_to_child`, at the body origin) and the joint's own motion-subspace columns
  are added; the mass centre's column is then v_o + omega x c. Columns of speeds that do not move the body are
  exact zeros;
* the remainders at u' = 0: omega (3,) the angular velocity, alpha_r (3,) the angular acceleration and a_r (3,)
  the mass centre's acceleration (velocity products, and gravity as the fictitious acceleration -g of the ground);
* I (3 x 3) the central inertia [kg m^2], m [kg], H = I omega [kg m^2/s], T (3,) the applied moment about the
  mass centre [N m] and F (3,) the applied force [N] (gravity excluded: it is in a_r).

The generalized mass M = sum_i Omega_i^T I_i Omega_i + m_i V_i^T V_i (n x n) and the right-hand side
f = Q + sum_i Omega_i^T (T_i - I_i alpha_ri - omega_i x H_i) + V_i^T (F_i - m_i a_ri) (n,), with Q the joint
loads and ``tau``; u' solves M u' = f by the square-root-free Cholesky factorization of :class:`.crba.LTDL`.

**Constraint forces.** A joint j partitions the six potential motions of its frame M relative to F (rotations
about and translations along M's axes) into degrees of freedom and constraints (``Joint.axis_partition``). Giving
a constrained axis e a fictitious speed moves the subtree of joint j with the unit twist e (about M's origin, or
along e); its partial velocities Omega_c, V_c (carried outward as above) project the bodies' equations:

    F_c = sum over bodies of joint j's subtree of Omega_c . (I (Omega u' + alpha_r) + omega x H - T)
                                               + V_c . (m (V u' + a_r) - F),

the component along e of the spatial force the parent exerts on the child through joint j, in M's axes (moment
[N m] about M's origin for a rotational axis, force [N] for a translational one); the joint's own actuation
along e, if any, is part of it (as in RNEA's ``joint_forces``). All terms are known once u' is: no simultaneous
solution, no matrix inverse (the generalized mass is factored once, for u').
:meth:`KaneMatrixDynamics.constraint_forces` evaluates F_c once per call, only for the joints asked for, from the
solved u' (or a u' the caller already has, e.g. from the integrator's last stage).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..codegen.program import Program
from ..errors import KaneError
from ..model.system import Model, System
from ..protocol import Capabilities
from ..codegen.trace import ZERO, traced_dot, mul
from ..mechanics.kinematics import cross, matvec
from .crba import LTDL
from .noc import mass_center_twist, subtrees
from ..options import Formulation
from .recursive import RecursiveDynamics
from .trace import Trace

__all__ = ["AXIS_LABELS", "constrained_axes", "KaneTerms", "trace_kane_matrix", "trace_constraint_forces",
           "kane_matrix", "KaneMatrixDynamics"]

AXIS_LABELS = ("rot x", "rot y", "rot z", "trn x", "trn y", "trn z")


def constrained_axes(joint) -> tuple[int, ...]:
    """Indices into :data:`AXIS_LABELS` (0-2 rotations, 3-5 translations, M's axes) of the joint's constrained
    axes, from ``joint.axis_partition()`` (the joint table of seed 004)."""
    rot, trn = joint.axis_partition()
    return tuple(k for k, kind in enumerate(tuple(rot) + tuple(trn)) if kind == "constraint")


def _vec3(b, M, v) -> list:
    """M v (3,) for a 3 x 3 sympy matrix M and a 3-vector v, each entry named."""
    return [b.assign(traced_dot(list(M.row(a)), list(v))) for a in range(3)]


class KaneTerms:
    """The per-body quantities of Kane's matrix form on a :class:`.recursive.Trace` (see the module docstring).

    ``Omega[i]``, ``V[i]``: dict speed index -> 3-list (the nonzero columns of the 3 x n_u matrices, body axes);
    ``e[i]`` = T - I alpha_r - omega x H (3,) [N m]; ``p[i]`` = F - m a_r (3,) [N]; ``Ic[i]`` (3 x 3) central
    inertia [kg m^2] and ``m[i]`` mass [kg]."""

    def __init__(self, tr: Trace):
        self.tr = tr
        model, kin, b = tr.model, tr.kin, tr.b
        n, nb = model.n_u, model.n_bodies
        self.Omega, self.V, self.e, self.p, self._P = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb
        self.Ic = [sp.Matrix(body.inertia) for body in model.bodies]
        self.m = [body.mass for body in model.bodies]
        self._residual = {}
        for i, pj in enumerate(model.joints):
            body = model.bodies[i]
            c, Ic, m = list(body.com), self.Ic[i], self.m[i]
            # partial spatial velocities at the origin, recursively: the parent's carried, the joint's own added
            P = {}
            if pj.parent >= 0:
                for r, col in self._P[pj.parent].items():
                    P[r] = kin.motion_to_child(i, col)
            for k, r in enumerate(range(n)[pj.u_slice]):
                P[r] = list(tr.S(i)[:, k])
            self._P[i] = P = {r: col for r, col in P.items() if any(x is not ZERO and x != 0 for x in col)}
            twists = {r: mass_center_twist(b, col, c) for r, col in P.items()}
            self.Omega[i] = {r: tw[:3] for r, tw in twists.items()}
            self.V[i] = {r: tw[3:] for r, tw in twists.items()}
            # remainders at u' = 0: omega, alpha_r, and the mass centre's (classical) acceleration a_r
            w, vo = kin.vel[i][:3], kin.vel[i][3:]
            alpha, a_sp = kin.acc[i][:3], kin.acc[i][3:]
            wxv, axc, wxc = cross(w, vo), cross(alpha, c), cross(w, c)
            wxc = [b.assign(x) for x in wxc]
            wwc = cross(w, wxc)
            a_r = [b.assign(a_sp[k] + wxv[k] + axc[k] + wwc[k]) for k in range(3)]
            H = _vec3(b, Ic, w)
            Ia = matvec(Ic, alpha)
            wxH = cross(w, H)
            n_o, F = tr.f_ext[i][:3], tr.f_ext[i][3:]
            cxF = cross(c, F)
            self.e[i] = [b.assign(n_o[k] - cxF[k] - Ia[k] - wxH[k]) for k in range(3)]  # T about c - I a - w x H
            self.p[i] = [b.assign(F[k] - mul(m, a_r[k])) for k in range(3)]

    def mass_forcing(self) -> tuple[sp.Matrix, list]:
        """(M (n_u x n_u), f (n_u,)): the generalized mass sum Omega^T I Omega + V^T m V and the right-hand side
        Q + sum Omega^T e + V^T p (Q: joint loads and ``tau``)."""
        tr, b = self.tr, self.tr.b
        n = tr.model.n_u
        IOm = [{r: _vec3(b, self.Ic[i], w) for r, w in self.Omega[i].items()} for i in range(tr.model.n_bodies)]
        M = sp.zeros(n, n)
        for r in range(n):
            for s in range(r, n):
                terms = []
                for i in range(tr.model.n_bodies):
                    Om, V = self.Omega[i], self.V[i]
                    if r in Om and s in Om:
                        terms += [traced_dot(Om[r], IOm[i][s]), mul(self.m[i], traced_dot(V[r], V[s]))]
                terms = [x for x in terms if x is not ZERO]
                if terms:
                    M[r, s] = M[s, r] = b.assign(sp.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0])
        f = []
        for r in range(n):
            terms = [tr.Q[r]]
            for i in range(tr.model.n_bodies):
                if r in self.Omega[i]:
                    terms += [traced_dot(self.Omega[i][r], self.e[i]), traced_dot(self.V[i][r], self.p[i])]
            terms = [x for x in terms if x is not ZERO]
            f.append(b.assign(sp.Add(*terms, evaluate=False)) if len(terms) > 1 else (terms[0] if terms else ZERO))
        return M, f

    def residual(self, i, udot) -> tuple[list, list]:
        """(I (Omega u' + alpha_r) + omega x H - T (3,) [N m], m (V u' + a_r) - F (3,) [N]) of body i for the speed
        derivatives ``udot`` (n_u expressions): what the rest of the system must exert on it."""
        key = (i, tuple(udot))
        if key not in self._residual:
            b = self.tr.b
            Om, V = self.Omega[i], self.V[i]
            alpha_u = [traced_dot([Om[r][k] for r in Om], [udot[r] for r in Om]) for k in range(3)]
            a_u = [traced_dot([V[r][k] for r in V], [udot[r] for r in V]) for k in range(3)]
            Ia = matvec(self.Ic[i], [b.assign(x) for x in alpha_u])
            self._residual[key] = ([b.assign(Ia[k] - self.e[i][k]) for k in range(3)],
                                   [b.assign(mul(self.m[i], b.assign(a_u[k])) - self.p[i][k]) for k in range(3)])
        return self._residual[key]


def trace_kane_matrix(tr: Trace) -> tuple[KaneTerms, sp.Matrix, list, list]:
    """Trace Kane's matrix form on ``tr``'s model: (terms, M (n_u x n_u), f (n_u,), udot (n_u,)), M u' = f."""
    terms = KaneTerms(tr)
    M, f = terms.mass_forcing()
    return terms, M, f, LTDL(tr.b, M).solve(f)


def _unit_twist_in_body(tr: Trace, j: int, axis: int) -> list:
    """The unit twist of constrained axis ``axis`` (0-5, see AXIS_LABELS) of joint j's frame M, as a motion vector
    in body j's axes at its origin (rotation about M's origin, or translation along M's axis)."""
    pj = tr.model.joints[j]
    R = sp.Matrix(pj.R_child_M)
    e = list(R[:, axis % 3])
    if axis < 3:
        wxr = cross(e, [-x for x in pj.r_child_M])  # velocity of the body origin under a rotation about M's origin
        return e + [tr.b.assign(x) for x in wxr]
    return [ZERO] * 3 + e


def trace_constraint_forces(terms: KaneTerms, j: int, udot) -> list:
    """The generalized constraint forces of joint j's constrained axes (in :func:`constrained_axes` order) for the
    speed derivatives ``udot`` (n_u expressions): moments [N m] about M's origin and forces [N], in M's axes."""
    tr = terms.tr
    model, kin, b = tr.model, tr.kin, tr.b
    sub = subtrees(model)[j]
    out = []
    for axis in constrained_axes(model.joints[j].joint):
        twist = {j: _unit_twist_in_body(tr, j, axis)}
        for i in sub[1:]:
            twist[i] = kin.motion_to_child(i, twist[model.parent[i]])
        parts = []
        for i in sub:
            tw = mass_center_twist(b, twist[i], model.bodies[i].com)
            Om_c, V_c = tw[:3], tw[3:]
            moment, force = terms.residual(i, udot)
            parts += [traced_dot(Om_c, moment), traced_dot(V_c, force)]
        parts = [x for x in parts if x is not ZERO]
        out.append(b.assign(sp.Add(*parts, evaluate=False)) if len(parts) > 1 else (parts[0] if parts else ZERO))
    return out


def kane_matrix(model: Model | System) -> Program:
    """Trace Kane's matrix form on ``model``: a Program with outputs ``M`` (n_u x n_u), ``f`` (n_u,), ``udot``
    (n_u,), ``Omega`` and ``V`` (3 n_bodies x n_u: rows 3i..3i+2 are body i's partial angular velocities and mass
    centre partial velocities, body axes) and ``Fc_<j>`` for every joint index j with a constrained axis (the
    generalized constraint forces of joint j's constrained axes, in :func:`constrained_axes` order, for the
    *input* udot).

    Inputs: t, q, u, params and ``inputs`` = (model inputs, tau (n_u), udot (n_u)); see :mod:`.recursive`.
    """
    tr = Trace(model)
    terms, M, f, udot = trace_kane_matrix(tr)
    Om, V = _partials_matrices(terms)
    tr.outputs.update(M=M, f=f, udot=udot, Omega=Om, V=V)
    names = ["M", "f", "udot", "Omega", "V"]
    for j, pj in enumerate(tr.model.joints):
        if constrained_axes(pj.joint):
            tr.outputs[f"Fc_{j}"] = trace_constraint_forces(terms, j, tr.udot)
            names.append(f"Fc_{j}")
    return tr.program(names)


def _partials_matrices(terms: KaneTerms) -> tuple[sp.Matrix, sp.Matrix]:
    model = terms.tr.model
    Om, V = sp.zeros(3 * model.n_bodies, model.n_u), sp.zeros(3 * model.n_bodies, model.n_u)
    for i in range(model.n_bodies):
        for r in terms.Omega[i]:
            Om[3 * i:3 * i + 3, r] = sp.Matrix(terms.Omega[i][r])
            V[3 * i:3 * i + 3, r] = sp.Matrix(terms.V[i][r])
    return Om, V


class KaneMatrixDynamics(RecursiveDynamics):
    """Numeric dynamics of an unconstrained tree by Kane's matrix form (seed 004), with the interface of
    :class:`kane.Dynamics` plus :meth:`constraint_forces` (and everything :class:`.RecursiveDynamics` offers:
    ``inverse_dynamics``, ``joint_forces`` by RNEA, energies, ``evaluate``).

    Extra output names for :meth:`evaluate` and :meth:`program`: "M_kane", "f_kane", "udot_kane", "Omega", "V"
    and "Fc_<joint index>" (for the udot input). backend: "numpy" or "numba".
    """

    OUTPUTS = ("M_kane", "f_kane", "udot_kane", "Omega", "V")
    # M = Omega^T I Omega + V^T m V; f = Q + sum Omega^T (T - I alpha_r - omega x H) + V^T (F - m a_r), tau included
    M_OUTPUT, F_OUTPUT = "M_kane", "f_kane"

    def __init__(self, model: Model | System, *, backend: str = "numpy"):
        super().__init__(model, Formulation.ABA, backend=backend)
        self.method = Formulation.KANE_MATRIX
        self._udot_key = ("udot_kane",)
        self._terms = None
        self._axes = {pj.name: tuple(AXIS_LABELS[k] for k in constrained_axes(pj.joint)) for pj in self.model.joints}

    def _kane(self) -> KaneTerms:
        if self._terms is None:
            terms, M, f, udot = trace_kane_matrix(self.trace)
            Om, V = _partials_matrices(terms)
            self.trace.outputs.update(M_kane=M, f_kane=f, udot_kane=udot, Omega=Om, V=V)
            self._terms = terms
        return self._terms

    def _trace(self, name):
        if name in self.OUTPUTS:
            self._kane()
            return
        if name.startswith("Fc_"):
            if name not in self.trace.outputs:
                self.trace.outputs[name] = trace_constraint_forces(self._kane(), int(name[3:]), self.trace.udot)
            return
        super()._trace(name)

    def partial_velocities(self, t, q, params=None) -> tuple:
        """(Omega, V), each (n_bodies, 3, n_u) (or (B, n_bodies, 3, n_u)): per body, the partial angular velocities
        [rad/s] and the partial velocities of the mass centre [m/s] per unit speed, in body axes."""
        Om, V = self._call(("Omega", "V"), t, q, None, params)
        shape = Om.shape[:-2] + (self.model.n_bodies, 3, self.n_u)
        return Om.reshape(shape), V.reshape(shape)

    def constrained_axes(self) -> dict:
        """Joint name -> the labels of its constrained axes ("rot x" ... "trn z", joint frame M)."""
        return dict(self._axes)

    def constraint_forces(self, t, q, u, params=None, inputs=None, *, joints=None, udot=None, tau=None) -> dict:
        """Generalized constraint forces of the constrained axes of the joints asked for, after the fact.

        joints: joint names (default: every joint); udot (n_u,) or (B, n_u): the solved speed derivatives, if the
        caller has them (else u' is solved here, once, with ``tau``). Returns joint name -> {axis label: value},
        e.g. {"hinge": {"rot x": N m, "rot y": N m, "trn x": N, "trn y": N, "trn z": N}}: the components, in the
        joint's frame M, of the spatial force the parent exerts on the child through the joint (moment about M's
        origin [N m], force [N]); values are floats, or (B,) arrays for a batch. A joint with no constrained
        axis (free) maps to {}.
        """
        index = {pj.name: j for j, pj in enumerate(self.model.joints)}
        names = list(index) if joints is None else ([joints] if isinstance(joints, str) else list(joints))
        unknown = [n for n in names if n not in index]
        if unknown:
            raise KaneError(f"constraint_forces: unknown joint(s) {', '.join(map(repr, unknown))}; the model "
                            f"{self.model.name!r} has joints {', '.join(map(repr, index))}")
        asked = [n for n in dict.fromkeys(names) if self._axes[n]]
        out = {n: {} for n in dict.fromkeys(names)}
        if not asked:
            return out
        if udot is None:
            udot = self.udot(t, q, u, params, inputs, tau)
        keys = tuple(f"Fc_{index[n]}" for n in asked)
        values = self._call(keys, t, q, u, params, inputs, None, udot)
        for n, v in zip(asked, values):
            out[n] = {label: (float(v[k]) if v.ndim == 1 else v[..., k]) for k, label in enumerate(self._axes[n])}
        return out

    @property
    def capabilities(self) -> Capabilities:
        """Those of :class:`.RecursiveDynamics`, with the constraint forces of the joints' constrained axes (joint
        name -> {axis label: value}: see :meth:`constraint_forces`)."""
        return replace(super().capabilities, constraint_forces=True)
