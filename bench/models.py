"""Benchmark models, built the same way for kane and for sympy.physics.mechanics."""

from __future__ import annotations

import sympy as sp

import kane
from kane import joints as J

__all__ = ["pendulum_chain_kane", "pendulum_chain_sympy", "spherical_chain_kane", "sympy_whipple"]


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


def sympy_whipple():
    """sympy's own Whipple bicycle (sympy/physics/mechanics/tests/test_kane3.py, after Meijaard et al. 2007):
    (KanesMethod with its equations formed, the linearization's operating point at forward speed v, the
    benchmark's parameter values, v). Coordinates q1 yaw, q2 roll, q4 pitch (dependent), q5 steer."""
    from sympy import acos, cos, pi, sin, sqrt, symbols
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

    q1, q2, q4, q5 = dynamicsymbols("q1 q2 q4 q5")
    u1, u2, u3, u4, u5, u6 = dynamicsymbols("u1 u2 u3 u4 u5 u6")
    names = ("WFrad WRrad htangle forkoffset forklength framelength forkcg1 forkcg3 framecg1 framecg3 Iwr11 Iwr22 "
             "Iwf11 Iwf22 Iframe11 Iframe22 Iframe33 Iframe31 Ifork11 Ifork22 Ifork33 Ifork31 g mframe mfork mwf mwr")
    (WFrad, WRrad, htangle, forkoffset, forklength, framelength, forkcg1, forkcg3, framecg1, framecg3, Iwr11, Iwr22,
     Iwf11, Iwf22, Iframe11, Iframe22, Iframe33, Iframe31, Ifork11, Ifork22, Ifork33, Ifork31, g, mframe, mfork, mwf,
     mwr) = sym = symbols(names)
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    Frame = R.orientnew("Frame", "Axis", [q4 + htangle, R.y])
    WR = ReferenceFrame("WR")
    TempFrame = Frame.orientnew("TempFrame", "Axis", [-htangle, Frame.y])
    Fork = Frame.orientnew("Fork", "Axis", [q5, Frame.x])
    TempFork = Fork.orientnew("TempFork", "Axis", [-htangle, Fork.y])
    WF = ReferenceFrame("WF")
    WR_cont = Point("WR_cont")
    WR_mc = WR_cont.locatenew("WR_mc", WRrad * R.z)
    Steer = WR_mc.locatenew("Steer", framelength * Frame.z)
    Frame_mc = WR_mc.locatenew("Frame_mc", -framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew("Fork_mc", -forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew("WF_mc", forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew("WF_cont", WFrad * (dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    bodies = [RigidBody("BodyFrame", Frame_mc, Frame, mframe,
                        (inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31), Frame_mc)),
              RigidBody("BodyFork", Fork_mc, Fork, mfork, (inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31),
                                                           Fork_mc)),
              RigidBody("BodyWR", WR_mc, WR, mwr, (inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)),
              RigidBody("BodyWF", WF_mc, WF, mwf, (inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc))]
    kd = [q1.diff() - u1, q2.diff() - u2, q4.diff() - u4, q5.diff() - u5]
    speed = [WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z]
    loads = [(Frame_mc, -mframe * g * Y.z), (Fork_mc, -mfork * g * Y.z), (WF_mc, -mwf * g * Y.z),
             (WR_mc, -mwr * g * Y.z)]
    km = KanesMethod(N, q_ind=[q1, q2, q5], q_dependent=[q4],
                     configuration_constraints=[WF_cont.pos_from(WR_cont) & Y.z], u_ind=[u2, u3, u5],
                     u_dependent=[u1, u4, u6], velocity_constraints=speed, kd_eqs=kd, constraint_solver="CRAMER")
    km.kanes_equations(bodies, loads)
    HTA = (pi / 2 - pi / 10).evalf()
    rake = (-(0.08 * sin(HTA) - (0.35 * cos(HTA)))).evalf()
    tempa, tempb = 0.7 - 0.35, 1.02 - 0.9
    tempc = sqrt(tempa ** 2 + tempb ** 2).evalf()
    fork_l = (1.02 * cos(HTA) - (0.35 - 0.3) * sin(HTA)).evalf()
    values = [0.35, 0.3, HTA, rake, fork_l, (1.02 * sin(HTA) - (rake - (0.35 - 0.3) * cos(HTA))).evalf(),
              (tempc * cos((pi / 2 - HTA) - acos(tempa / tempc)) - fork_l).evalf(),
              (rake + (tempc * sin(pi / 2 - HTA - acos(tempa / tempc)))).evalf(),
              ((0.9 - 0.3 - (0.3 / sin(HTA)) * cos(HTA)) * sin(HTA)).evalf(),
              (0.3 / sin(HTA) + (0.9 - 0.3 - 0.3 / sin(HTA) * cos(HTA)) * cos(HTA)).evalf(),
              0.0603, 0.12, 0.1405, 0.28, 9.2, 11, 2.8, -2.4, 0.05892, 0.06, 0.00708, 0.00756, 9.81, 85, 4, 3, 2]
    v = symbols("v")
    op = {s.diff(): 0 for s in (u1, u2, u3, u4, u5, u6)}
    op |= {u1: 0, u2: 0, u3: v / 0.3, u4: 0, u5: 0, u6: v / 0.35, q1: 0, q2: 0, q4: 0, q5: 0}
    return km, op, dict(zip(sym, values)), v
