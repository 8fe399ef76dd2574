"""The planar four-bar of the assembly tests (crank 1, coupler 2, rocker 1.5, ground 2 [m]) and its closed-form
position analysis: one reference shared by tests/simulate/test_drag.py and tests/viz/test_assemble_view.py."""

from __future__ import annotations

import numpy as np

__all__ = ["CRANK", "COUPLER", "ROCKER", "GROUND", "position_analysis", "four_bar_system"]

CRANK, COUPLER, ROCKER, GROUND = 1.0, 2.0, 1.5, 2.0


def position_analysis(theta, branch):
    """The coupler-rocker joint B (2,) [m] at crank angle ``theta`` [rad]: B on the circles |B - A| = COUPLER about
    the crank tip A and |B - D| = ROCKER about the ground pivot D; ``branch`` = +1 or -1 picks the side of AD."""
    A, D = CRANK * np.array([np.cos(theta), np.sin(theta)]), np.array([GROUND, 0.0])
    d = np.linalg.norm(D - A)
    a = (COUPLER**2 - ROCKER**2 + d**2) / (2 * d)
    h = np.sqrt(COUPLER**2 - a**2)
    ex = (D - A) / d
    return A + a * ex + branch * h * np.array([-ex[1], ex[0]])


def four_bar_system(gravity: float = 9.81):
    """The four-bar as a :class:`kane.System`: crank, coupler and rocker about z (unit masses, centres at their
    middles), the coupler's tip closed on the rocker's in x and y; gravity ``gravity`` [m/s^2] along -y."""
    import kane
    from kane import joints as J

    s = kane.System("four_bar", gravity=(0, -gravity, 0))
    for name, length in (("crank", CRANK), ("coupler", COUPLER), ("rocker", ROCKER)):
        s.add_body(name, mass=1.0, com=(length / 2, 0, 0), inertia=(0.01, 0.1, 0.1))
    s.add_joint("ground", "crank", J.Revolute("z"), name="a")
    s.add_joint("crank", "coupler", J.Revolute("z"), name="b", parent_point=(CRANK, 0, 0))
    s.add_joint("ground", "rocker", J.Revolute("z"), name="d", parent_point=(GROUND, 0, 0))
    s.add_loop_closure("closure", "coupler", (COUPLER, 0, 0), "rocker", (ROCKER, 0, 0),
                       directions=[[1, 0, 0], [0, 1, 0]])
    return s
