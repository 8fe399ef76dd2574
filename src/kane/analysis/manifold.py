"""Coordinates on the configuration manifold for linearization, and the rotational symmetries of quaternion joints.

Every unit quaternion e of a free or spherical joint is perturbed in its tangent space, never in its 4 components:
q = e (x) exp(dtheta / 2) with dtheta (3,) a rotation vector in the joint's body axes M (Pinocchio's ``integrate``,
MuJoCo's local perturbation of ball and free joints). The chart coordinates are the model's other coordinates and
these rotation vectors (named ``<joint>.rx``, ``.ry``, ``.rz``). Along a motion, dtheta' = omega + dtheta x omega / 2
+ O(|dtheta|^2) with omega = 2 vec(conj(e) (x) e') the body-axis angular velocity (the right Jacobian's inverse).

A candidate symmetry turns one quaternion joint about a coordinate axis of its parent frame F (e -> exp(a alpha/2)
(x) e, the free joint's position turned with it: a heading) or of its body frame M (e -> e (x) exp(b beta/2), the
joint's body-axis speeds turned back: a spin); :func:`rotation_symmetries` keeps those under which the equations of
motion and the configuration constraints are invariant, decided at random generic states and parameters (not at
the operating point's values).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codegen.forward import jacobian_name
from ..errors import KaneError
from ..spatial import quaternion_compose, skew

__all__ = ["Chart", "Symmetry", "chart_of", "rotation_symmetries", "generator"]

_AXES = "xyz"


def _left(e) -> np.ndarray:
    """(4, 4): e (x) p = _left(e) @ p for scalar-first quaternions."""
    w, x, y, z = e
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _right(e) -> np.ndarray:
    """(4, 4): p (x) e = _right(e) @ p."""
    w, x, y, z = e
    return np.array([[w, -x, -y, -z], [x, w, z, -y], [y, -z, w, x], [z, y, -x, w]])


def _omega_map(e) -> np.ndarray:
    """(3, 4): omega = 2 vec(conj(e) (x) e') = _omega_map(e) @ e', the rows 1-3 of 2 _left(conj(e))."""
    w, x, y, z = (2.0 * e).tolist()
    return np.array(((-x, w, z, -y), (-y, -z, w, x), (-z, y, -x, w)))


@dataclass(frozen=True)
class Chart:
    """The linearization's coordinates: ``names`` (n_c,); ``regular`` pairs (index in q, index in the chart);
    ``blocks`` (joint name, slice of its 4 components in q, slice of its 3 chart coordinates) per quaternion
    joint; ``n_q`` the model's."""

    names: tuple
    regular: tuple
    blocks: tuple
    n_q: int

    def __post_init__(self):
        E0 = np.zeros((self.n_q, len(self.names)))  # dq/dx of the regular coordinates (read-only templates)
        for k, c in self.regular:
            E0[k, c] = 1.0
        S0 = np.ascontiguousarray(E0.T)
        E0.flags.writeable = S0.flags.writeable = False
        object.__setattr__(self, "_E0", E0)
        object.__setattr__(self, "_S0", S0)

    @property
    def tangent(self) -> bool:
        return bool(self.blocks)

    def E(self, q) -> np.ndarray:
        """dq/dx (n_q, n_c) at x = 0 (q = e (x) exp(dtheta/2) for each quaternion)."""
        out = self._E0.copy()
        for _, qi, ci in self.blocks:
            out[qi, ci] = 0.5 * _left(q[qi])[:, 1:]
        return out

    def rates(self, q, qdot, qdot_q, qdot_u, E):
        """(x' (n_c,), dx'/dx (n_c, n_c), dx'/du (n_c, p)) from q' (n_q,) and its Jacobians dq'/dq (n_q, n_q),
        dq'/du (n_q, p) at x = 0, E = :meth:`E` (the tangent rows: omega, its derivative and -[omega x] / 2)."""
        return self.tangent_rates(q, qdot, qdot_q, qdot_u, E)[:3]

    def tangent_rates(self, q, qdot, qdot_q, qdot_u, E):
        """As :meth:`rates`, with :meth:`rate_map` (n_c, n_q) at q appended (formed once for both)."""
        S = self._S0.copy()  # dx'/dq' at fixed q
        extra = np.zeros(S.shape)  # the tangent rows' explicit dependence on q
        omegas = []
        for _, qi, ci in self.blocks:
            S[ci, qi] = om = _omega_map(q[qi])
            w, x, y, z = (2.0 * qdot[qi]).tolist()  # 2 _right(e')[1:] @ diag(1, -1, -1, -1)
            extra[ci, qi] = ((x, -w, -z, y), (y, z, -w, -x), (z, -y, x, -w))
            omegas.append((ci, om @ qdot[qi]))
        xdot = S @ qdot
        hx = (S @ qdot_q + extra) @ E
        for ci, w in omegas:
            hx[ci, ci] -= 0.5 * skew(w)
        return xdot, hx, S @ qdot_u, S

    def rate_map(self, q) -> np.ndarray:
        """dx'/dq' (n_c, n_q) at fixed q: for an input or parameter that moves q' (the chart rows of q')."""
        S = self._S0.copy()
        for _, qi, ci in self.blocks:
            S[ci, qi] = _omega_map(q[qi])
        return S

    def retract(self, q, index: int, delta: float) -> np.ndarray:
        """q moved by ``delta`` along chart coordinate ``index`` (a turn of the quaternion for a tangent one)."""
        q = np.array(q, dtype=float)
        for k, c in self.regular:
            if c == index:
                q[k] += delta
                return q
        for _, qi, ci in self.blocks:
            if ci.start <= index < ci.stop:
                d = np.zeros(3)
                d[index - ci.start] = delta
                q[qi] = quaternion_compose(q[qi], d)
                return q
        raise IndexError(index)

    def retract_many(self, q, indices, deltas) -> np.ndarray:
        for k, d in zip(indices, deltas):
            q = self.retract(q, int(k), float(d))
        return q


def chart_of(model) -> Chart:
    """The :class:`Chart` of a model: each quaternion's 4 coordinates replaced, in place, by its 3 rotation-vector
    components ``<joint>.rx/ry/rz``."""
    q_names = [str(s) for s in model.q]
    quats = {idx[0]: (name, idx) for name, idx in model.quaternion_indices()}
    if any(list(idx) != list(range(idx[0], idx[0] + 4)) for _, idx in quats.values()):
        raise KaneError("linearization: a quaternion whose 4 components are not consecutive coordinates")
    skip = {k for _, idx in quats.values() for k in idx[1:]}
    names, regular, blocks = [], [], []
    for k in range(len(q_names)):
        if k in quats:
            name, idx = quats[k]
            ci = slice(len(names), len(names) + 3)
            names += [f"{name}.r{a}" for a in _AXES]
            blocks.append((name, slice(idx[0], idx[0] + 4), ci))
        elif k not in skip:
            regular.append((k, len(names)))
            names.append(q_names[k])
    return Chart(tuple(names), tuple(regular), tuple(blocks), len(q_names))


@dataclass(frozen=True)
class Symmetry:
    """A rotation of quaternion joint ``joint`` about axis ``axis`` (0, 1, 2: x, y, z) of its parent frame F
    (``side`` "parent": a heading) or of its body frame M (``side`` "body": a spin)."""

    joint: str
    side: str
    axis: int

    @property
    def label(self) -> str:
        """A short name: ``<joint>.turn_<axis>`` about a parent axis, ``<joint>.spin_<axis>`` about a body axis."""
        return f"{self.joint}.{'turn' if self.side == 'parent' else 'spin'}_{_AXES[self.axis]}"

    def __str__(self) -> str:
        frame = "its parent's" if self.side == "parent" else "its body's"
        return f"rotation of {self.joint!r} about {frame} {_AXES[self.axis]} axis"


def _joint_slices(model, joint: str):
    for pj in model.joints:
        if pj.name == joint:
            return pj
    raise KeyError(joint)


def generator(model, sym: Symmetry, q, u_ind_names, model_u_names):
    """The symmetry's generator in the model's coordinates: (eta_q (n_q,), d eta_q/dq (n_q, n_q), K (p, p)) with
    u_ind' = K u_ind its action on the independent speeds; None where it mixes independent and dependent speeds."""
    pj = _joint_slices(model, sym.joint)
    qs = pj.q_slice.start
    qi = [qs + k for k in pj.joint.unit_quaternion]
    a = np.zeros(3)
    a[sym.axis] = 1.0
    pure = np.concatenate([[0.0], a])
    n_q = len(q)
    Dq = np.zeros((n_q, n_q))
    K_full = np.zeros((len(model_u_names),) * 2)
    us = pj.u_slice.start
    if sym.side == "parent":
        Dq[np.ix_(qi, qi)] = 0.5 * _left(pure)
        if pj.joint.kind == "free":  # the position in F turns with it
            Dq[qs:qs + 3, qs:qs + 3] = skew(a)
    else:
        Dq[np.ix_(qi, qi)] = 0.5 * _right(pure)
        for block in range(pj.joint.nu // 3):  # body-axis angular (and linear) velocity turned back
            K_full[us + 3 * block:us + 3 * block + 3, us + 3 * block:us + 3 * block + 3] = -skew(a)
    ind = [model_u_names.index(n) for n in u_ind_names]
    dep = [k for k in range(len(model_u_names)) if k not in ind]
    if dep and (np.any(K_full[np.ix_(ind, dep)]) or np.any(K_full[np.ix_(dep, ind)])):
        return None
    return Dq @ q, Dq, K_full[np.ix_(ind, ind)]


def _bracket_residual(values, eta_q, Dq, K, u, holonomic_rows) -> float:
    """max |[X, eta]| relative to its terms at one point (X = (q', u') the equations' vector field), and of
    dC/dq eta for the holonomic rows."""
    M, f = values["M"], values["f"]
    p = len(f)
    n_q = len(eta_q)
    g = np.linalg.solve(M, f)
    dM = values[jacobian_name("M", "q")].reshape(p, p, n_q)
    g_q = np.linalg.solve(M, values[jacobian_name("f", "q")] - np.einsum("ijk,j->ik", dM, g))
    g_u = np.linalg.solve(M, values[jacobian_name("f", "u")])
    qd_q, qd_u = values[jacobian_name("qdot", "q")], values[jacobian_name("qdot", "u")]
    Ku = K @ u
    res_q = qd_q @ eta_q + qd_u @ Ku - Dq @ values["qdot"]
    res_u = g_q @ eta_q + g_u @ Ku - K @ g
    scale = 1.0 + np.max(np.abs(np.concatenate([qd_q @ eta_q, Dq @ values["qdot"], g_q @ eta_q, K @ g])))
    out = float(np.max(np.abs(np.concatenate([res_q, res_u])))) / scale
    if holonomic_rows:
        Cq = values[jacobian_name("C", "q")][list(holonomic_rows)]
        out = max(out, float(np.max(np.abs(Cq @ eta_q))) / (1.0 + float(np.max(np.abs(Cq)))))
    return out


def rotation_symmetries(lz, points, tol: float = 1e-9) -> tuple:
    """The :class:`Symmetry` candidates (each quaternion joint, each axis of its parent and body frames) whose
    generator commutes with the equations' vector field and keeps the configuration constraints at every one of
    ``points`` (q (n_q,), u (p,), values of :meth:`Linearizer.evaluate` there), generic states and parameters."""
    model = lz.model
    found = []
    for joint, _ in model.quaternion_indices():
        for side in ("parent", "body"):
            for axis in range(3):
                sym = Symmetry(joint, side, axis)
                ok = True
                for q, u, values in points:
                    gen = generator(model, sym, q, lz.u_names, lz.model_u_names)
                    try:
                        ok = gen is not None and _bracket_residual(values, *gen, u, lz.holonomic_rows) <= tol
                    except np.linalg.LinAlgError:  # a singular mass matrix at this random state: no verdict
                        ok = False
                    if not ok:
                        break
                if ok:
                    found.append(sym)
    return tuple(found)


def chart_generator(model, chart: Chart, sym: Symmetry, u_ind_names, model_u_names):
    """The generator at x = 0 of the chart as a function of (q, u): returns ``at(q, u) -> (value (n_c + p,),
    derivative (n_c + p, n_c + p))`` on (x, u_ind), its constant parts formed once."""
    pj = _joint_slices(model, sym.joint)
    _, qi, ci = next(b for b in chart.blocks if b[0] == sym.joint)
    n_c, p = len(chart.names), len(u_ind_names)
    a = np.zeros(3)
    a[sym.axis] = 1.0
    K = generator(model, sym, np.zeros(chart.n_q), u_ind_names, model_u_names)[2]
    D = np.zeros((n_c + p, n_c + p))
    D[n_c:, n_c:] = K
    free = sym.side == "parent" and pj.joint.kind == "free"
    qs = pj.q_slice.start
    pos = [c for k, c in chart.regular if qs <= k < qs + 3] if free else []
    if sym.side == "body":  # dtheta' = b + dtheta x b / 2
        D[ci, ci] = -0.5 * skew(a)
    a_cross = skew(a)
    if pos:  # the free joint's position turns about a
        D[np.ix_(pos, pos)] = a_cross

    def at(q, u):
        value = np.zeros(n_c + p)
        value[n_c:] = K @ u
        if sym.side == "body":
            value[ci] = a
            return value, D
        e = q[qi]  # n = R^T a in body axes, row a of R = (w^2 - |v|^2) I + 2 v v^T + 2 w [v x]
        w, v = float(e[0]), e[1:]
        c = w * w - float(v @ v)
        x, y, z = v.tolist()
        row = ((0.0, -z, y), (z, 0.0, -x), (-y, x, 0.0))[sym.axis]
        two_va = 2 * (x, y, z)[sym.axis]
        n = [((c if j == sym.axis else 0.0) + two_va * (x, y, z)[j]) + 2 * w * row[j] for j in range(3)]
        value[ci] = n
        Dq = D.copy()
        Dq[ci, ci] = 0.5 * skew(n)
        if pos:
            value[pos] = a_cross @ q[qs:qs + 3]
        return value, Dq

    return at
