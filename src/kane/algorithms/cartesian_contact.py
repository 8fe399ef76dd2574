"""The rolling joint between two parametric surfaces in absolute Cartesian coordinates (Nelson and Cohen, seed 003:
position, tangency and velocity constraints with the contact coordinates (u1, v1, u2, v2)).

Surface 1 is fixed in body A (or ground), surface 2 in body B. Everything is written in A's axes: with R_AB and o
the pose of B in A, surface 2 is seen as o + R_AB S2 (:class:`kane.surfaces.moved.MovedSurface`). The contact
coordinates z = (u1, v1, u2, v2) are extra coordinates appended to the bodies' q; they satisfy the four
common-normal conditions F(q, z) = 0 of :func:`kane.surfaces.contact.common_normal_conditions` (S1_u . d = S1_v . d
= 0 and n1 . S2_u = n1 . S2_v = 0: d = x2 - x1 along n1, the tangent planes parallel), kept by z' = -F_z^-1 (F_q q'
+ alpha F). The joint's constraints are then

* position: the gap g = n1 . (x2 - x1) = 0 (with F = 0 the two contact points coincide: 3 rows of the seed);
* tangency: n1 . S2_u = n1 . S2_v = 0 (2 rows, held by z);
* no slip: s = v_B(x2) - v_A(x2) = 0 (3 nonholonomic rows: the relative velocity of the contact points, its normal
  component the rate of the gap). Spin about the normal stays free, as in the seed (three of a body's six speeds
  are removed by a rolling contact).

The rows enter the Lagrange-multiplier equations of :class:`.cartesian.CartesianDynamics` as G_c nu (3 x 6 Nb,
twist form: B's block R_AB [-[S2]x, I], A's block [[x2]x, -I]) with the acceleration-level right side
-kappa - 2 alpha s - beta^2 g n1 (Baumgarte on the gap, alpha on the slip), where
kappa = R_AB (w_B x v_B) - w_A x v_BA - (w_A x W_B) x r2 + W_B x (W_B x r2 - w_A x r2 + t2) - w_A x (s + t2), with
W_B = R_AB w_B, r2 = x2 - o, and t2 = R_AB (S2_u u2' + S2_v v2') the motion of the contact point over B.
A parameter leaving a non-periodic patch raises :class:`ContactBoundsError` naming the contact, the surface, the
parameter, its value and the last good state. :meth:`RollingContactDynamics.constraint_jacobian` gives the seed's
five position and tangency rows and their Jacobian in the quaternion coordinates (for assembly by Newton's method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KaneError, ModelError
from ..model.model import GROUND
from ..model.system import Model, System
from ..spatial import quaternion_to_rotation, skew
from ..surfaces.base import Surface, cross3
from ..surfaces.closest import keep_in_bounds
from ..surfaces.contact import common_normal, common_normal_conditions
from ..surfaces.moved import MovedSurface
from .cartesian import CartesianDynamics

__all__ = ["ContactBoundsError", "ContactJacobian", "ContactResiduals", "RollingContact", "RollingContactDynamics"]

_PARAMS = ("u1", "v1", "u2", "v2")


@dataclass(frozen=True)
class RollingContact:
    """Surface ``surface1`` fixed in ``body1`` (axes of that body [m], or ``"ground"``) rolls without slip on
    ``surface2`` fixed in ``body2``; ``start`` (4,) = (u1, v1, u2, v2) seeds the contact coordinates."""

    name: str
    body1: str
    surface1: Surface
    body2: str
    surface2: Surface
    start: tuple


@dataclass(frozen=True)
class ContactResiduals:
    """Per contact (nc, k): ``position`` (nc, 3) x2 - x1 [m], ``tangency`` (nc, 2) n1 . S2_u / |S2_u|,
    n1 . S2_v / |S2_v| [-], ``velocity`` (nc, 3) relative velocity of the contact points [m/s] (A axes)."""

    position: np.ndarray
    tangency: np.ndarray
    velocity: np.ndarray


@dataclass(frozen=True)
class ContactJacobian:
    """The seed's position and tangency constraints of every contact, ``values`` (5 Nc,) = per contact x2 - x1
    (3, A axes) [m], n1 . S2_u, n1 . S2_v (2) [m per unit parameter], and ``jacobian`` (5 Nc, 7 Nb + 4 Nc): their
    partial derivatives with respect to q (positions, quaternions, contact coordinates)."""

    values: np.ndarray
    jacobian: np.ndarray


class ContactBoundsError(KaneError):
    """A contact coordinate left its surface's patch: attributes ``contact``, ``surface``, ``parameter``,
    ``value``, and the last good state ``t_good`` [s], ``q``, ``u`` (None before any good evaluation)."""

    def __init__(self, message, contact, surface, parameter, value, good):
        super().__init__(message)
        self.contact, self.surface, self.parameter, self.value = contact, surface, parameter, value
        self.t_good, self.q, self.u = good if good is not None else (None, None, None)


class RollingContactDynamics(CartesianDynamics):
    """:class:`CartesianDynamics` of ``model`` with the rolling ``contacts`` (RollingContact objects).

    State q (7 Nb + 4 Nc,) = the bodies' (x, y, z, qw, qx, qy, qz), then each contact's (u1, v1, u2, v2);
    u (6 Nb,) as in CartesianDynamics. :meth:`initial_state` builds a consistent start from the bodies' state.
    ``alpha``, ``beta`` [1/s]: Baumgarte gains (also the rate alpha pulling z back onto F = 0). With the projection
    of :meth:`make_projection`, gains near 1/s are best: the adaptive steps shrink about in proportion to larger
    gains (alpha = beta = 20 took about 5 times the steps of 1 on the cam of tests/surfaces/test_rolling_joint.py).
    """

    def __init__(self, model: Model | System, contacts, *, alpha: float = 5.0, beta: float = 5.0,
                 rank_tol: float = 1e-9):
        super().__init__(model, alpha=alpha, beta=beta, rank_tol=rank_tol)
        index = {b.name: i for i, b in enumerate(self.model.bodies)}
        self.contacts, self._pairs = tuple(contacts), []
        for c in self.contacts:
            if not isinstance(c, RollingContact):
                raise ModelError(f"RollingContactDynamics: expected RollingContact objects, got {c!r}")
            pair = []
            for field in ("body1", "body2"):
                body = getattr(c, field)
                if body != GROUND and body not in index:
                    raise ModelError(f"rolling contact {c.name!r}: field {field!r} = {body!r} is not a body of "
                                     f"{self.model.name!r} (bodies: {', '.join(index)}, or 'ground')")
                pair.append(None if body == GROUND else index[body])
            if pair[0] == pair[1]:
                raise ModelError(f"rolling contact {c.name!r}: body1 and body2 are the same ({c.body1!r})")
            for field in ("surface1", "surface2"):
                if not isinstance(getattr(c, field), Surface):
                    raise ModelError(f"rolling contact {c.name!r}: field {field!r} must be a kane.surfaces "
                                     f"Surface, got {type(getattr(c, field)).__name__}")
            self._pairs.append(tuple(pair))
        nc, nb = len(self.contacts), self.n_bodies
        self.n_body_q, self._n_joint_rows = 7 * nb, self.n_constraints
        self.n_q = self.n_body_q + 4 * nc
        self.q_names += tuple(f"{c.name}_{p}" for c in self.contacts for p in _PARAMS)
        self.row_names += tuple(f"rolling contact {c.name!r} row {k + 1}" for c in self.contacts for k in range(3))
        self.n_constraints = len(self.row_names)
        self.n_unknowns, self.n_dof = self.n_u + self.n_constraints, self.n_u - self.n_constraints
        self.description += f", {nc} rolling contact(s)"
        self._z = np.array([np.asarray(c.start, dtype=float).reshape(4) for c in self.contacts]).reshape(nc, 4)
        self._good = None
        self._cache = (None, None)

    # ---- contact kinematics ------------------------------------------------------------------------------
    def _checked(self, t, q, u):
        """The contact coordinates (nc, 4) of q, periodic ones wrapped; one leaving its patch raises."""
        z = np.asarray(q, dtype=float)[self.n_body_q:].reshape(-1, 4).copy()
        for k, c in enumerate(self.contacts):
            for side, surface in ((0, c.surface1), (1, c.surface2)):
                for j, ((lo, hi), periodic) in enumerate(zip(surface.bounds, surface.periodic)):
                    value = float(z[k, 2 * side + j])
                    if not periodic and not (lo - 1e-12 <= value <= hi + 1e-12):
                        good = "" if self._good is None else f"; last good state at t = {self._good[0]!r} s"
                        raise ContactBoundsError(
                            f"rolling contact {c.name!r}: parameter {_PARAMS[2 * side + j]} of surface "
                            f"{surface.name!r} = {value!r} left the patch [{lo!r}, {hi!r}] at t = {t!r} s{good}",
                            c.name, surface.name, _PARAMS[2 * side + j], value, self._good)
                if any(surface.periodic):  # within bounds otherwise (checked above): nothing to wrap
                    z[k, 2 * side:2 * side + 2] = keep_in_bounds(surface, z[k, 2 * side:2 * side + 2])[0]
        return z

    def _moved(self, k, qb):
        """(R_AB, o, surface 2 seen from A's axes)."""
        ia, ib = self._pairs[k]
        if ia is None:  # on the ground (the common case): R_AB = R_B, o = p_B
            RAB, o = quaternion_to_rotation(qb[ib, 3:]), qb[ib, :3].copy()
        else:
            RA = quaternion_to_rotation(qb[ia, 3:])
            RB = np.eye(3) if ib is None else quaternion_to_rotation(qb[ib, 3:])
            RAB, o = RA.T @ RB, RA.T @ ((np.zeros(3) if ib is None else qb[ib, :3]) - qb[ia, :3])
        return RAB, o, MovedSurface(self.contacts[k].surface2, RAB, o)

    def _contact(self, k, qb, z, nu):
        """Geometry of contact k at bodies qb (Nb, 7), z (4,), twists nu (Nb, 6) or None: a dict with the rows
        G_c (3, 6 Nb), gap, the conditions F, and with nu: s, z', kappa."""
        ia, ib = self._pairs[k]
        RAB, o, moved = self._moved(k, qb)
        F, J, d1, d2, n1 = common_normal_conditions(self.contacts[k].surface1, moved, z)
        x, nb = d2.point, self.n_bodies
        r2 = x - o
        rows = np.zeros((3, 6 * nb))
        if ib is not None:
            rows[:, 6 * ib:6 * ib + 3], rows[:, 6 * ib + 3:6 * ib + 6] = -skew(r2) @ RAB, RAB
        if ia is not None:
            rows[:, 6 * ia:6 * ia + 3], rows[:, 6 * ia + 3:6 * ia + 6] = skew(x), -np.eye(3)
        out = {"rows": rows, "F": F, "J": J, "RAB": RAB, "gap": float(n1 @ (x - d1.point)), "n1": n1, "d1": d1,
               "d2": d2}
        if nu is None:
            return out
        zero = np.zeros(3)
        wA, vA = (nu[ia, :3], nu[ia, 3:]) if ia is not None else (zero, zero)
        wB, vB = (nu[ib, :3], nu[ib, 3:]) if ib is not None else (zero, zero)
        WB, vBA = RAB @ wB, RAB @ vB
        s = rows @ nu.reshape(-1)
        w = WB - wA
        Fq = np.array([d1.d_s @ s, d1.d_t @ s, n1 @ cross3(w, d2.d_s), n1 @ cross3(w, d2.d_t)])
        try:
            zdot = np.linalg.solve(J, -Fq - self.alpha * F)
        except np.linalg.LinAlgError:
            raise KaneError(f"rolling contact {self.contacts[k].name!r}: the contact coordinates are not determined "
                            f"at (u1, v1, u2, v2) = {tuple(float(v) for v in z)} (a line or area contact: both "
                            "surfaces flat in a common direction)") from None
        t2 = d2.d_s * zdot[2] + d2.d_t * zdot[3]
        cr = cross3
        kappa = (RAB @ cr(wB, vB) - cr(wA, vBA) - cr(cr(wA, WB), r2) + cr(WB, cr(WB, r2) - cr(wA, r2) + t2)
                 - cr(wA, s + t2))
        out.update(s=s, zdot=zdot, kappa=kappa)
        return out

    def _all(self, t, q, u):
        """The contacts' geometry at (t, q, u), cached for the qdot/udot pair of one evaluation."""
        key = (t, np.asarray(q, dtype=float).tobytes(), None if u is None else np.asarray(u, dtype=float).tobytes())
        if self._cache[0] == key:
            return self._cache[1]
        z = self._checked(t, q, u)
        qb = np.asarray(q, dtype=float)[:self.n_body_q].reshape(self.n_bodies, 7)
        nu = None if u is None else np.asarray(u, dtype=float).reshape(self.n_bodies, 6)
        got = [self._contact(k, qb, z[k], nu) for k in range(len(self.contacts))]
        self._cache = (key, got)
        return got

    # ---- the Dynamics interface ----------------------------------------------------------------------------
    def _terms(self, full=False):
        """The joints' traced terms (sized by their own rows: the contacts' rows are added in numpy)."""
        n, self.n_constraints = self.n_constraints, self._n_joint_rows
        try:
            return super()._terms(full)
        finally:
            self.n_constraints = n

    def _evaluate(self, t, q, u, params, inputs=None, full=False):
        q = np.asarray(q, dtype=float)
        if q.size == self.n_body_q:  # bodies only (the projection's Newton steps): z solved from the last one
            q = np.concatenate([q, self._solve_z(q).reshape(-1)])
        ev = super()._evaluate(t, q[:self.n_body_q], u, params, inputs, full)
        got = self._all(t, q, u)
        G = np.vstack([ev["G"]] + [g["rows"] for g in got])
        C = np.concatenate([ev["C"]] + [g["gap"] * g["n1"] for g in got])
        if u is None:
            Cd, gam = np.concatenate([ev["Cdot"], np.zeros(3 * len(got))]), None
        else:
            Cd = np.concatenate([ev["Cdot"]] + [g["s"] for g in got])
            gam = np.concatenate([ev["gamma"]] + [-g["kappa"] - 2 * self.alpha * g["s"]
                                                  - self.beta ** 2 * g["gap"] * g["n1"] for g in got])
        ev.update(G=G, C=C, Cdot=Cd, gamma=gam, contacts=got)
        if full:
            ev["T"] = np.hstack([ev["T"], np.zeros((ev["T"].shape[0], 3 * len(got)))])
        return ev

    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (7 Nb + 4 Nc,): the bodies' as CartesianDynamics, then each contact's z'."""
        q = np.asarray(q, dtype=float)
        qd = super().qdot(t, q[:self.n_body_q], u, params, inputs)
        return np.concatenate([qd] + [g["zdot"] for g in self._all(t, q, u)])

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        out = super().udot(t, q, u, params, inputs)
        self._good = (float(t), np.array(q, dtype=float), np.array(u, dtype=float))
        return out

    def contact_residuals(self, t, q, u) -> ContactResiduals:
        """The seed's position, tangency and velocity residuals of every contact (see ContactResiduals)."""
        got = self._all(t, q, u)
        return ContactResiduals(
            position=np.array([g["d2"].point - g["d1"].point for g in got]),
            tangency=np.array([[g["n1"] @ g["d2"].d_s / np.linalg.norm(g["d2"].d_s),
                                g["n1"] @ g["d2"].d_t / np.linalg.norm(g["d2"].d_t)] for g in got]),
            velocity=np.array([g["s"] for g in got]))

    def constraint_jacobian(self, t, q) -> ContactJacobian:
        """The position (3) and tangency (2) constraints of each contact and their Jacobian in the quaternion
        coordinates (seed 003), analytic: with a body's twist-form rows C_w, C_v (from the velocity rows and the
        tangency rates (S2_u x n1) . (W_B - w_A)), dC/dp = C_v R^T and dC/de = 4 C_w E(e/|e|)^T / |e| (e' = E(e) w,
        the derivative of C(e/|e|)); the z columns are -S1_u, -S1_v, S2_u, S2_v and the common-normal Jacobian's
        last two rows."""
        q = np.asarray(q, dtype=float)
        qb, nb, nc = q[:self.n_body_q].reshape(self.n_bodies, 7), self.n_bodies, len(self.contacts)
        values, jac = np.zeros(5 * nc), np.zeros((5 * nc, self.n_q))
        z = self._checked(t, q, None)
        for k in range(nc):
            ia, ib = self._pairs[k]
            g = self._contact(k, qb, z[k], None)
            d1, d2, n1, RAB = g["d1"], g["d2"], g["n1"], g["RAB"]
            values[5 * k:5 * k + 3] = d2.point - d1.point
            values[5 * k + 3], values[5 * k + 4] = n1 @ d2.d_s, n1 @ d2.d_t
            tw = np.zeros((5, 6 * nb))
            tw[:3] = g["rows"]
            tangency = np.array([cross3(d2.d_s, n1), cross3(d2.d_t, n1)])
            if ib is not None:
                tw[3:, 6 * ib:6 * ib + 3] = tangency @ RAB
            if ia is not None:
                tw[3:, 6 * ia:6 * ia + 3] = -tangency
            for i in (ia, ib):  # the other bodies' columns are zero
                if i is None:
                    continue
                e = qb[i, 3:]
                size = float(e @ e) ** 0.5
                w, x, y, zz = (e / size).tolist()
                E = 0.5 * np.array([[-x, -y, -zz], [w, -zz, y], [zz, w, -x], [-y, x, w]])
                R = RAB if ia is None else quaternion_to_rotation(e)  # on the ground, R_AB is B's rotation
                jac[5 * k:5 * k + 5, 7 * i:7 * i + 3] = tw[:, 6 * i + 3:6 * i + 6] @ R.T
                jac[5 * k:5 * k + 5, 7 * i + 3:7 * i + 7] = 4.0 * tw[:, 6 * i:6 * i + 3] @ E.T / size
            cz = self.n_body_q + 4 * k
            jac[5 * k:5 * k + 3, cz:cz + 4] = np.array([-d1.d_s, -d1.d_t, d2.d_s, d2.d_t]).T
            jac[5 * k + 3:5 * k + 5, cz:cz + 4] = g["J"][2:]  # d(n1 . S2_u, n1 . S2_v)/dz
        return ContactJacobian(values, jac)

    # ---- assembly and projection -------------------------------------------------------------------------------
    def _solve_z(self, qb, tol: float = 1e-13):
        """Every contact's coordinates (nc, 4) at bodies qb (7 Nb,) by Newton from the last ones; a contact whose
        common normal is not found raises ModelError naming it."""
        qb = np.asarray(qb, dtype=float).reshape(self.n_bodies, 7)
        for k, c in enumerate(self.contacts):
            cn = common_normal(c.surface1, self._moved(k, qb)[2], self._z[k], tol=tol)
            if not cn.converged:
                raise ModelError(f"rolling contact {c.name!r}: no common normal of surfaces {c.surface1.name!r} and "
                                 f"{c.surface2.name!r} from (u1, v1, u2, v2) = {tuple(float(v) for v in self._z[k])}: "
                                 f"Newton ended at {tuple(float(v) for v in cn.params)} with residual "
                                 f"{cn.residual:.3g} after {cn.iterations} steps (the contact is off a patch, or the "
                                 "start is far from tangency)")
            self._z[k] = cn.params
        return self._z.copy()

    def initial_state(self, q_bodies, u=None, t: float = 0.0, params=None, tol: float = 1e-9):
        """(q (7 Nb + 4 Nc,), u (6 Nb,)): each contact's coordinates solved from its ``start``, then checked: a
        contact starting apart or interpenetrating by more than ``tol`` [m] raises ModelError naming the contact,
        its surfaces and the gap; u is projected onto the joints' and the no-slip rows."""
        self._z = np.array([np.asarray(c.start, dtype=float).reshape(4) for c in self.contacts]).reshape(-1, 4)
        qb = np.asarray(q_bodies, dtype=float).reshape(-1)
        q = np.concatenate([qb, self._solve_z(qb).reshape(-1)])
        for k, g in enumerate(self._all(t, q, None)):
            c = self.contacts[k]
            if abs(g["gap"]) > tol:
                raise ModelError(f"rolling contact {c.name!r}: surfaces {c.surface1.name!r} and {c.surface2.name!r} "
                                 f"do not touch at the start: gap = {g['gap']!r} m at (u1, v1, u2, v2) = "
                                 f"{tuple(float(v) for v in self._z[k])} (tolerance {tol:g} m); place the bodies "
                                 "in contact or project the state")
        u = np.zeros(self.n_u) if u is None else np.asarray(u, dtype=float)
        return self.project(q, u, t, params)

    def project(self, q, u, t: float = 0.0, params=None, tol: float = 1e-12, max_iter: int = 30):
        """(q, u) moved onto the joints' rows and the contacts (gap zero, z on the common normal) by Newton's
        method through the twists (CartesianDynamics.project, the contact coordinates re-solved at every step),
        then u projected onto every row (no slip included) in the mass metric."""
        q = np.asarray(q, dtype=float)
        self._z = self._checked(t, q, u)
        qb, u = super().project(q[:self.n_body_q], u, t, params, tol, max_iter)
        return np.concatenate([qb, self._solve_z(qb).reshape(-1)]), u
