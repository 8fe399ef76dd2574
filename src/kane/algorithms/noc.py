"""Natural orthogonal complement (Saha and Angeles 1991, seed 002, Eqs. 12-18, 26-27): T^T M T u' = -ID(q, u, 0).

The twists are t = T u (Eq. 12) with T built column by column from unit speeds (Eq. 26); the generalized inertia
is I = T^T M T (Eq. 18); the convective, gravity and applied terms come from inverse dynamics at zero
acceleration (Eq. 27).

For a tree with p = n_bodies bodies and n = n_u generalized speeds u (the paper's independent speeds theta'):

* the **twist** of body i is t_i = (omega_i, c'_i) (6,): its angular velocity [rad/s] and the velocity of its
  mass centre [m/s], both in body i's axes (Eq. 1); the generalized twist t (6p,) stacks them (Eq. 9);
* the **natural orthogonal complement** T (6p x n) maps the speeds to the twists, t = T u (Eq. 12). Its column r
  is the generalized twist of the system when u_r = 1 and every other speed is zero (Eq. 26): a unit speed of
  joint j moves j's subtree only, so column r is joint j's motion-subspace column carried outward through the
  subtree (an outward pass per speed) and moved to each mass centre; the other rows are exactly zero;
* the **generalized inertia** is I = T^T M T (n x n, Eq. 18) with M = diag(M_1, ..., M_p) (Eq. 7) and the
  extended mass M_i = diag(I_ci, m_i 1) (Eq. 5): central inertia [kg m^2] and mass [kg]. Entries whose columns
  share no body are structural zeros;
* the convective, gravity and applied terms C(q, u) u + tau + gamma + delta (Eq. 18) are, by Eq. 27, the
  generalized forces that inverse dynamics (Walker and Orin 1982: the recursive Newton-Euler pass of
  :mod:`.rnea`) finds at u' = 0, negated: f = -ID(q, u, 0) (n,), including the model's loads and ``tau``;
* u' (n,) solves I u' = f by the square-root-free Cholesky factorization of :class:`.crba.LTDL` (no inverse).

T' is never formed (Section 4 of the paper). Everything is traced into a straight-line Program (see
:mod:`.recursive`); :class:`NOCDynamics` offers it with the numeric Dynamics interface.

>>> dyn = NOCDynamics(system)
>>> dyn.udot(0.0, q, u); dyn.mass_matrix(0.0, q); dyn.twist_matrix(0.0, q)  # (n_u,), (n_u, n_u), (6 nb, n_u)
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import Program
from ..model.system import Model, System
from ..codegen.trace import ZERO, traced_dot, mul
from ..mechanics.kinematics import cross
from .crba import LTDL
from ..options import Formulation
from .recursive import RecursiveDynamics
from .trace import Trace
from .rnea import trace_rnea

__all__ = ["noc", "trace_noc", "trace_twist_matrix", "trace_generalized_inertia", "subtrees", "speed_owners",
           "mass_center_twist", "NOCDynamics"]


def subtrees(model: Model) -> list[list[int]]:
    """Per body j, the bodies that joint j moves: j and its descendants, parent before child (list of lists)."""
    sub = [[i] for i in range(model.n_bodies)]
    for i in range(model.n_bodies):
        p = model.parent[i]
        while p >= 0:
            sub[p].append(i)
            p = model.parent[p]
    return sub


def speed_owners(model: Model) -> list[tuple[int, int]]:
    """Per generalized speed r (n_u entries): (joint index j, column k of joint j's motion subspace)."""
    out = []
    for j, pj in enumerate(model.joints):
        out += [(j, k) for k in range(pj.joint.nu)]
    return out


def mass_center_twist(b, twist, com) -> list:
    """(omega, v_c) (6,): a body's twist at its mass centre ``com`` (3,, body axes) from its spatial velocity
    ``twist`` = (omega, v_o) (6,) at the body origin (v_c = v_o + omega x c); entries named by builder ``b``."""
    w = list(twist[:3])
    wxc = cross(w, list(com))
    return w + [b.assign(twist[3 + k] + wxc[k]) for k in range(3)]


def _nonzero(col) -> bool:
    return any(e is not ZERO and e != 0 for e in col)


def trace_twist_matrix(tr: Trace) -> sp.Matrix:
    """Trace the natural orthogonal complement T (6 n_bodies x n_u) column by column (Eq. 26).

    Rows 6i..6i+5 are body i's twist (omega [rad/s], mass-centre velocity [m/s]) in its axes per unit speed;
    rows of bodies that speed r does not move are exact zeros."""
    model, kin, b = tr.model, tr.kin, tr.b
    T = sp.zeros(6 * model.n_bodies, model.n_u)
    sub = subtrees(model)
    for r, (j, k) in enumerate(speed_owners(model)):
        # the generalized twist for u = e_r: joint j's subspace column, carried outward through j's subtree
        twist = {j: list(tr.S(j)[:, k])}
        for i in sub[j][1:]:
            twist[i] = kin.motion_to_child(i, twist[model.parent[i]])
        for i in sub[j]:
            T[6 * i:6 * i + 6, r] = sp.Matrix(mass_center_twist(b, twist[i], model.bodies[i].com))
    return T


def trace_generalized_inertia(tr: Trace, T: sp.Matrix) -> sp.Matrix:
    """Trace I = T^T M T (n_u x n_u, symmetric; Eq. 18) with M = diag(I_c1, m_1 1, ..., I_cp, m_p 1) (Eq. 7).

    Entry (r, s) is the sum over the bodies moved by both speeds of omega_r . I_c omega_s + m v_r . v_s."""
    model, b = tr.model, tr.b
    n = model.n_u
    per_body = []  # (columns that move body i, the twists, I_c omega per column, m)
    for i, body in enumerate(model.bodies):
        Ti = T[6 * i:6 * i + 6, :]
        cols = [r for r in range(n) if _nonzero(Ti[:, r])]
        Ic = sp.Matrix(body.inertia)
        tw = {r: list(Ti[:, r]) for r in cols}
        Iw = {r: [b.assign(traced_dot(list(Ic.row(a)), tw[r][:3])) for a in range(3)] for r in cols}
        per_body.append((set(cols), tw, Iw, body.mass))
    I = sp.zeros(n, n)
    for r in range(n):
        for s in range(r, n):
            terms = []
            for cols, tw, Iw, m in per_body:
                if r in cols and s in cols:
                    terms.append(traced_dot(tw[r][:3], Iw[s]))
                    terms.append(mul(m, traced_dot(tw[r][3:], tw[s][3:])))
            terms = [e for e in terms if e is not ZERO]
            if terms:
                I[r, s] = I[s, r] = b.assign(sp.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0])
    return I


def trace_noc(tr: Trace) -> tuple[sp.Matrix, sp.Matrix, list, list]:
    """Trace the natural orthogonal complement formulation on ``tr``'s model.

    Returns (T (6 n_bodies x n_u), I (n_u x n_u), f (n_u,), udot (n_u,)) with I u' = f: T by Eq. 26, I = T^T M T,
    f = -ID(q, u, 0) by Eq. 27 (convective, gravity and applied terms, joint loads and ``tau`` included)."""
    T = trace_twist_matrix(tr)
    I = trace_generalized_inertia(tr, T)
    bias, _ = trace_rnea(tr, [ZERO] * tr.model.n_u)  # Eq. 27: inverse dynamics at zero acceleration
    f = [tr.b.assign(-e) for e in bias]
    return T, I, f, LTDL(tr.b, I).solve(f)


def noc(model: Model | System) -> Program:
    """Trace the natural orthogonal complement on ``model``: a Program with outputs ``T`` (6 n_bodies x n_u),
    ``M`` (I = T^T M T, n_u x n_u), ``f`` (n_u,) and ``udot`` (n_u,).

    Inputs: t, q, u, params and ``inputs`` = (model inputs, tau (n_u), udot (n_u)); see :mod:`.recursive`.
    """
    tr = Trace(model)
    T, I, f, udot = trace_noc(tr)
    tr.outputs.update(T=T, M=I, f=f, udot=udot)
    return tr.program(["T", "M", "f", "udot"])


class NOCDynamics(RecursiveDynamics):
    """Numeric dynamics of an unconstrained tree by the natural orthogonal complement (seed 002), with the
    interface of :class:`kane.Dynamics` (and everything :class:`.RecursiveDynamics` offers: ``inverse_dynamics``,
    ``joint_forces``, energies, ``evaluate``).

    ``udot`` solves T^T M T u' = -ID(q, u, 0); ``mass_matrix`` is T^T M T; ``twist_matrix`` is T itself.
    Extra output names for :meth:`evaluate` and :meth:`program`: "T", "M_noc", "f_noc", "udot_noc" (the others
    of :class:`.RecursiveDynamics`, e.g. "udot_aba", come from the same trace). backend: "numpy" or "numba".
    """

    OUTPUTS = ("T", "M_noc", "f_noc", "udot_noc")
    # I = T^T M T (seed 002 Eq. 27); f = minus inverse dynamics at zero acceleration, tau included
    M_OUTPUT, F_OUTPUT = "M_noc", "f_noc"

    def __init__(self, model: Model | System, *, backend: str = "numpy"):
        super().__init__(model, Formulation.ABA, backend=backend)
        self.method = Formulation.NOC
        self._udot_key = ("udot_noc",)

    def _trace(self, name):
        if name in self.OUTPUTS:
            if name not in self.trace.outputs:
                T, I, f, udot = trace_noc(self.trace)
                self.trace.outputs.update(T=T, M_noc=I, f_noc=f, udot_noc=udot)
            return
        super()._trace(name)

    def twist_matrix(self, t, q, params=None):
        """The natural orthogonal complement T (6 n_bodies, n_u): rows 6i..6i+5 are body i's (angular velocity
        [rad/s], mass-centre velocity [m/s]) in its axes per unit speed, so that the twists are T u."""
        return self._call(("T",), t, q, None, params)[0]
