"""Models shared by the tests of changing constraints (imported by path, as tests/algorithms/_trees.py)."""

from __future__ import annotations

import kane
from kane import joints as J

__all__ = ["cart"]


def cart(lock: str = "transient") -> kane.System:
    """Seed 000 Ex. 3: basket on a planar joint (u1, v2, u2), caster about the vertical (w4); no lateral slip of
    the back wheels and of the caster wheel (permanent); the caster's lock ``caster_stick`` is "transient",
    "permanent" or "none"."""
    s = kane.System("cart")
    mB, IB, mC, L1, L2, L3 = (s.parameter(n, v) for n, v in (("mB", 20.0), ("IB", 2.0), ("mC", 1.0),
                                                              ("L1", 0.4), ("L2", 0.9), ("L3", 0.1)))
    F, tau = s.input("F"), s.input("tau")
    s.add_body("B", mass=mB, com=(L1, 0, 0), inertia=(IB, IB, IB))
    s.add_body("C", mass=mC, com=(-L3, 0, 0))
    s.add_joint("ground", "B", J.Planar(J.Speeds.BODY), coordinates=["q1", "q2", "q3"], speeds=["u1", "v2", "u2"])
    s.add_joint("B", "C", J.Revolute("z"), parent_point=(L2, 0, 0), coordinates=["q4"], speeds=["w4"])
    s.add_force("B", (F, 0, 0), frame="B")
    s.add_torque("B", (0, 0, tau), frame="B")
    s.add_no_slip("back_wheels", "B", (0, 0, 0), (0, 1, 0))
    s.add_no_slip("caster_wheel", "C", (-L3, 0, 0), (0, 1, 0))
    if lock != "none":
        s.add_joint_lock("caster_stick", "B_C", transient=lock == "transient")
    return s
