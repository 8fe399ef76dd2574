"""A pendulum whose mass is a parameter (mass 0 makes its mass matrix singular), shared by the sweep tests."""

import numpy as np

import kane
from kane import joints as J

__all__ = ["pendulum", "swing", "warn_when_heavy"]


def pendulum():
    """A point mass m [kg] at 1 m from a hinge about z, gravity g [m/s^2] along -y; coordinate th, speed w."""
    s = kane.System("pendulum")
    m, g = s.parameter("m", 1.0), s.parameter("g", 9.81)
    s.gravity = (0, -g, 0)
    s.add_body("bob", mass=m, com=(1.0, 0, 0), inertia=(0, 0, 0))
    s.add_joint("ground", "bob", J.Revolute("z"), coordinates=["th"], speeds=["w"])
    return s


def swing(traj):
    """Peak-to-peak swing of the angle [rad]."""
    return float(np.ptp(traj.q[:, 0]))


def warn_when_heavy(traj):
    """The swing [rad]; raises a RuntimeWarning in runs whose mass is above 1.5 kg (a warning made on a worker)."""
    import warnings

    if traj.params["m"] > 1.5:
        warnings.warn(f"heavy bob: m = {traj.params['m']:g} kg", RuntimeWarning, stacklevel=2)
    return swing(traj)
