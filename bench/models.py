"""Benchmark models, built the same way for kane and for sympy.physics.mechanics."""

from __future__ import annotations

import sympy as sp

import kane
from kane import joints as J

__all__ = ["pendulum_chain_kane", "pendulum_chain_sympy", "spherical_chain_kane"]


def pendulum_chain_kane(n: int) -> kane.System:
    """n-link 3D pendulum: revolute joints about alternating x and y axes, links of length L hanging along -z,
    centre of mass at mid-link, full (symbolic) central inertia tensors, gravity g along -z."""
    s = kane.System(f"chain{n}")
    g = s.parameter("g", 9.81)
    L = s.parameter("L", 1.0)
    s.gravity = (0, 0, -g)
    parent = "ground"
    for i in range(n):
        m = s.parameter(f"m{i}", 1.0)
        ixx, iyy, izz = (s.parameter(f"I{i}{a}", v) for a, v in (("xx", 0.3), ("yy", 0.3), ("zz", 0.1)))
        ixy, iyz, izx = (s.parameter(f"I{i}{a}", v) for a, v in (("xy", 0.01), ("yz", 0.02), ("zx", 0.03)))
        s.add_body(f"B{i}", mass=m, com=(0, 0, -L / 2), inertia=(ixx, iyy, izz, ixy, iyz, izx))
        s.add_joint(parent, f"B{i}", J.Revolute("x" if i % 2 == 0 else "y"), name=f"j{i}",
                    parent_point=(0, 0, 0) if i == 0 else (0, 0, -L), coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent = f"B{i}"
    return s


def spherical_chain_kane(n: int) -> kane.System:
    """n links hanging along -z, each on a spherical joint (quaternion q, body-axis angular velocity u: 3n DOF),
    length 1 m, mass 1 kg, centre of mass at mid-link, principal inertias (0.3, 0.3, 0.1) kg m^2, gravity -z."""
    s = kane.System(f"spherical_chain{n}", gravity=(0, 0, -9.81))
    parent = "ground"
    for i in range(n):
        s.add_body(f"B{i}", mass=1.0, com=(0, 0, -0.5), inertia=(0.3, 0.3, 0.1))
        s.add_joint(parent, f"B{i}", J.Spherical(), name=f"j{i}", parent_point=(0, 0, 0) if i == 0 else (0, 0, -1.0))
        parent = f"B{i}"
    return s


def pendulum_chain_sympy(n: int):
    """The same chain with sympy.physics.mechanics' KanesMethod (relative orientations, u = q')."""
    import sympy.physics.mechanics as me

    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    g, L = sp.symbols("g L")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frame, joint = N, O
    bodies, loads, kd = [], [], []
    for i in range(n):
        axis = frame.x if i % 2 == 0 else frame.y
        F = frame.orientnew(f"F{i}", "Axis", (q[i], axis))
        F.set_ang_vel(frame, u[i] * axis)
        C = joint.locatenew(f"C{i}", -L / 2 * F.z)
        P = joint.locatenew(f"P{i}", -L * F.z)
        C.v2pt_theory(joint, N, F)
        P.v2pt_theory(joint, N, F)
        m = sp.Symbol(f"m{i}")
        ixx, iyy, izz, ixy, iyz, izx = sp.symbols(f"I{i}xx I{i}yy I{i}zz I{i}xy I{i}yz I{i}zx")
        body = me.RigidBody(f"B{i}", C, F, m, (me.inertia(F, ixx, iyy, izz, ixy, iyz, izx), C))
        bodies.append(body)
        loads.append((C, -m * g * N.z))
        kd.append(q[i].diff() - u[i])
        frame, joint = F, P
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd)
    km.kanes_equations(bodies, loads)
    return km, q, u
