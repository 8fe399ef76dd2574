"""Applied loads and energies of a model on any scalar type: spatial forces on each body, generalized forces of
joint loads, kinetic and potential energy (shared by Kane's method and the recursive algorithms)."""

from __future__ import annotations

import sympy as sp

from ..model.model import Model, stretch, stretch_rate
from .inertia import body_inertias
from .kinematics import TreeKinematics, cross, dot3, exact_zero, sum_products

__all__ = ["applied_body_forces", "joint_generalized_forces", "energy_expressions", "gravity_potential",
           "nonconservative_power", "spring_potential"]


def applied_body_forces(model: Model, kin: TreeKinematics):
    """Applied forces (excluding gravity) as spatial forces on each body, in body axes at the body origin."""
    b = kin.b
    f = [[sp.S.Zero] * 6 for _ in model.bodies]

    def add(i, point, vec_body, couple=False):
        if i < 0:
            return
        if couple:
            for k in range(3):
                f[i][k] += vec_body[k]
            return
        moment = cross(list(point), vec_body)
        for k in range(3):
            f[i][k] += moment[k]
            f[i][3 + k] += vec_body[k]

    for F in model.forces:
        add(F.body, F.point, kin.vector_in_body(F.vector, F.frame, F.body))
    for T in model.torques:
        add(T.body, None, kin.vector_in_body(T.vector, T.frame, T.body), couple=True)
    for sp_ in model.springs:
        pa = kin.point_in_ground(sp_.body_a, sp_.point_a)
        pb = kin.point_in_ground(sp_.body_b, sp_.point_b)
        d = [b.assign(y - x) for x, y in zip(pa, pb)]
        length = b.assign(sp.sqrt(dot3(d, d)))
        e = [b.assign(dk / length) for dk in d]
        va = kin.point_velocity_in_ground(sp_.body_a, sp_.point_a)
        vb = kin.point_velocity_in_ground(sp_.body_b, sp_.point_b)
        rate = b.assign(dot3(e, [y - x for x, y in zip(va, vb)]))
        tension = b.assign(sp_.tension.xreplace({stretch: length - sp_.rest_length, stretch_rate: rate}))
        on_a = [b.assign(tension * ek) for ek in e]
        for body, point, sign in ((sp_.body_a, sp_.point_a, 1), (sp_.body_b, sp_.point_b, -1)):
            if body >= 0:
                add(body, point, kin.vector_in_body([sign * x for x in on_a], -1, body))
    return [[b.assign(x) for x in fi] for fi in f]


def joint_generalized_forces(model: Model, kin: TreeKinematics):
    """Generalized active forces from joint springs, dampers and actuators: W^T Q per joint (n_u,)."""
    out = [sp.S.Zero] * model.n_u
    for load in model.joint_loads:
        pj = model.joints[load.joint]
        W = pj.joint.kinematics(sp.Matrix(model.q[pj.q_slice]), model.t).W
        gen = W.T * sp.Matrix(load.Q)
        for k, idx in enumerate(range(model.n_u)[pj.u_slice]):
            out[idx] += gen[k]
    return [kin.b.assign(e) for e in out]


def gravity_potential(model: Model, kin: TreeKinematics):
    """Potential energy of gravity [J]: -sum of m g . r_com over the bodies."""
    pe = sp.S.Zero
    if any(gk != 0 for gk in model.gravity):
        for i, body in enumerate(model.bodies):
            if not exact_zero(body.mass):
                pe -= body.mass * dot3(list(model.gravity), kin.point_in_ground(i, body.com))
    return pe


def spring_potential(model: Model, kin: TreeKinematics):
    """Potential energy [J] of the linear springs and joint springs (None when a load's potential is unknown)."""
    pe = sp.S.Zero
    for s in model.springs:
        if s.potential is None:
            return None
        pa, pb = kin.point_in_ground(s.body_a, s.point_a), kin.point_in_ground(s.body_b, s.point_b)
        length = sp.sqrt(dot3([y - x for x, y in zip(pa, pb)], [y - x for x, y in zip(pa, pb)]))
        pe += s.potential.xreplace({stretch: length - s.rest_length})
    for load in model.joint_loads:
        if load.potential is None:
            return None
        pe += load.potential
    return pe


def nonconservative_power(model: Model, kin: TreeKinematics):
    """Power [W] of the loads that have no potential (applied forces and torques, inputs, dampers, joint
    actuators): the power of every applied load, sum f_i . v_i + Q . u, less that of the springs whose potential
    is part of the potential energy (their power is -d/dt of it). Along a motion, E' = this power (the
    work-energy theorem), so its integral is the work that changes the energy. None when a potential is unknown."""
    springs = spring_potential(model, kin)
    if springs is None:
        return None
    b = kin.b
    total = sum((dot3(f[:3], v[:3]) + dot3(f[3:], v[3:]) for f, v in zip(applied_body_forces(model, kin), kin.vel)),
                sp.S.Zero)
    total += sum_products(list(zip(joint_generalized_forces(model, kin), model.u)))
    return b.assign(total + (b.time_derivative(springs) if springs != 0 else 0))


def energy_expressions(model: Model, kin: TreeKinematics):
    """(kinetic, potential) energy [J]: kinetic from the body velocities, potential from gravity, linear
    springs and joint springs; potential is None when a load's potential is unknown."""
    b = kin.b
    ke = sp.S.Zero
    inertias = body_inertias(model, kin)
    for i in range(model.n_bodies):
        I = inertias[i]
        v = kin.vel[i]
        h = I.apply(b, v)
        ke += dot3(v[:3], h[:3]) + dot3(v[3:], h[3:])
    springs = spring_potential(model, kin)
    pe = None if springs is None else gravity_potential(model, kin) + springs
    return b.assign(ke / 2), (None if pe is None else b.assign(pe))
