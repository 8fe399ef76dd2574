"""Models of the analysis tests and benchmark: a rolling disk in Euler angles, a cart-pole, a double pendulum, a
four-bar linkage and the benchmark Whipple bicycle (Meijaard et al. 2007)."""

from __future__ import annotations

import kane
from kane import joints as J

__all__ = ["rolling_disk", "cart_pole", "double_pendulum", "four_bar", "whipple_bicycle", "BICYCLE_DEPENDENT"]


def rolling_disk(r=0.4, m=1.5, g=9.81):
    """A thin uniform disk rolling on the floor z = 0: centre (x, y, z) through three massless slides, then
    heading (about z), lean (about the heading's x) and spin (about the axle y) as a 312 gimbal with rates as
    speeds. The rolling constraint leaves the three angle rates independent; z is fixed by the contact height."""
    s = kane.System("disk_euler")
    g = s.parameter("g", g)
    r = s.parameter("r", r)
    mass = s.parameter("m", m)
    s.set_gravity((0, 0, -g))
    for name in ("sx", "sy", "sz"):
        s.add_body(name, mass=0)
    s.add_body("disk", mass=mass, inertia=(mass * r ** 2 / 4, mass * r ** 2 / 2, mass * r ** 2 / 4))
    s.add_joint("ground", "sx", J.Prismatic("x"), coordinates=["x"], speeds=["vx"])
    s.add_joint("sx", "sy", J.Prismatic("y"), coordinates=["y"], speeds=["vy"])
    s.add_joint("sy", "sz", J.Prismatic("z"), coordinates=["z"], speeds=["vz"])
    s.add_joint("sz", "disk", J.Gimbal("312"), coordinates=["heading", "lean", "spin"],
                speeds=["w_heading", "w_lean", "w_spin"])
    s.add_rolling_disk("contact", "disk", r, axis=(0, 1, 0), plane_normal=(0, 0, 1))
    return s


def cart_pole():
    """A cart on a horizontal rail (x) with a pendulum hinged on it (angle theta about y), a force input F on
    the cart."""
    s = kane.System("cart_pole", gravity=(0, 0, -9.81))
    mc, mp, l = s.parameter("mc", 2.0), s.parameter("mp", 0.6), s.parameter("l", 0.7)
    F = s.input("F", 0.0)
    s.add_body("cart", mass=mc)
    s.add_body("pole", mass=mp, com=(0, 0, l), inertia=(0.02, 0.03, 0.01))
    s.add_joint("ground", "cart", J.Prismatic("x"), name="rail", coordinates=["x"], speeds=["v"])
    s.add_joint("cart", "pole", J.Revolute("y"), name="hinge", coordinates=["theta"], speeds=["omega"])
    s.add_joint_torque("rail", [F])
    return s


def double_pendulum():
    """Two links in the xz-plane (revolute about y), masses and inertias of both links, l1 = 0.8 m."""
    s = kane.System("double", gravity=(0, 0, -9.81))
    s.add_body("a", mass=1.3, com=(0, 0, -0.4), inertia=(0.03, 0.04, 0.01))
    s.add_body("b", mass=0.7, com=(0, 0, -0.3), inertia=(0.02, 0.02, 0.005))
    s.add_joint("ground", "a", J.Revolute("y"), coordinates=["q1"], speeds=["u1"])
    s.add_joint("a", "b", J.Revolute("y"), coordinates=["q2"], speeds=["u2"], parent_point=(0, 0, -0.8))
    return s


def four_bar():
    """Crank (1 m), coupler (2 m), rocker (1.5 m) hinged about z, the rocker's tip closed on the ground pivot at
    (2, 0, 0) in the xy-plane (two loop-closure rows). Gravity along -y."""
    s = kane.System("four_bar", gravity=(0, -9.81, 0))
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate((1.0, 2.0, 1.5)):
        m = 1.0 + i
        s.add_body(f"l{i}", mass=m, com=(L / 2, 0, 0), inertia=(0.01, m * L**2 / 12, m * L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"], q0=[(0.5, -0.9, -1.2)[i]])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return s


def whipple_bicycle():
    """The benchmark Whipple bicycle of Meijaard et al. (2007), Table 1, in kane's axes (x forward, y left, z up):
    rear frame on slides x, y, z and a 312 gimbal (yaw, roll, pitch) at the rear wheel centre, rear wheel,
    front frame on the steer axis (tilted back by lambda, through the ground at wheelbase + trail), front wheel;
    both wheels are knife-edge disks rolling on the floor. Speeds: the joint rates."""
    import math

    s = kane.System("whipple_benchmark")
    g = s.parameter("g", 9.81)
    s.set_gravity((0, 0, -g))
    w, c, lam, rR, rF = 1.02, 0.08, math.pi / 10, 0.3, 0.35
    for name in ("sx", "sy", "sz"):
        s.add_body(name, mass=0)
    s.add_body("rear_frame", mass=85.0, com=(0.3, 0, 0.9 - rR), inertia=(9.2, 11.0, 2.8, 0, 0, -2.4))
    s.add_body("rear_wheel", mass=2.0, inertia=(0.0603, 0.12, 0.0603))
    s.add_body("fork", mass=4.0, com=(0.9 - (w + c), 0, 0.7), inertia=(0.05892, 0.06, 0.00708, 0, 0, 0.00756))
    s.add_body("front_wheel", mass=3.0, inertia=(0.1405, 0.28, 0.1405))
    s.add_joint("ground", "sx", J.Prismatic("x"), coordinates=["x"], speeds=["vx"])
    s.add_joint("sx", "sy", J.Prismatic("y"), coordinates=["y"], speeds=["vy"])
    s.add_joint("sy", "sz", J.Prismatic("z"), coordinates=["z"], speeds=["vz"], q0=[rR])
    s.add_joint("sz", "rear_frame", J.Gimbal("312"), coordinates=["yaw", "roll", "pitch"],
                speeds=["w_yaw", "w_roll", "w_pitch"])
    s.add_joint("rear_frame", "rear_wheel", J.Revolute("y"), coordinates=["rear"], speeds=["w_rear"])
    s.add_joint("rear_frame", "fork", J.Revolute((-math.sin(lam), 0, math.cos(lam))), coordinates=["steer"],
                speeds=["w_steer"], parent_point=(w + c, 0, -rR))
    s.add_joint("fork", "front_wheel", J.Revolute("y"), coordinates=["front"], speeds=["w_front"],
                parent_point=(-c, 0, rF))
    s.add_rolling_disk("rear_contact", "rear_wheel", rR, axis=(0, 1, 0), plane_normal=(0, 0, 1))
    s.add_rolling_disk("front_contact", "front_wheel", rF, axis=(0, 1, 0), plane_normal=(0, 0, 1))
    return s


BICYCLE_DEPENDENT = ["vx", "vy", "vz", "w_yaw", "w_pitch", "w_front"]
