"""Shared models of the real-time tests: the 7-link chain of bench/models.py with a coupler at its tip, and a stiff
virtual wall (a particle held by a stiff spring)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kane
from kane import joints as J
from kane import realtime as rt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from models import pendulum_chain_kane  # noqa: E402

WALL_K = 1e5  # the wall's stiffness [N/m]


@pytest.fixture(scope="session")
def chain():
    """(dynamics, port) of the 7-link chain with the coupler at the tip of its last link (0, 0, -1) of B6."""
    s = pendulum_chain_kane(7)
    port = rt.add_coupler(s, "B6", (0.0, 0.0, -1.0))
    return kane.derive(s).compile(), port


@pytest.fixture(scope="session")
def wall():
    """(dynamics, port) of a 0.1 kg particle sliding along x, held at x = 0 by a spring of WALL_K N/m."""
    s = kane.System("wall")
    s.add_particle("P", 0.1)
    s.add_joint("ground", "P", J.Prismatic("x"), name="slide", coordinates=["x"], speeds=["v"])
    s.add_joint_spring("slide", WALL_K)
    port = rt.add_coupler(s, "P")
    return kane.derive(s).compile(), port


@pytest.fixture(scope="session")
def closed_path():
    """The function closed_path(x0, period, radius) below."""
    return _closed_path


def _closed_path(x0, period=2.0, radius=0.3):
    """A closed hand path from rest at x0 (3,) [m]: once around an ellipse in the x-y plane in ``period`` s with a
    smooth (1 - cos) start and stop, then at rest at x0. Returns path(t) -> (position, velocity)."""
    w = 2 * np.pi / period

    def path(t):
        if t >= period:
            return np.array(x0, dtype=float), np.zeros(3)
        s = 0.5 * (w * t - np.sin(w * t))  # angle along the ellipse, 0 to pi; s' = 0.5 w (1 - cos w t)
        ds = 0.5 * w * (1 - np.cos(w * t))
        p = np.array(x0, dtype=float) + radius * np.array([1 - np.cos(2 * s), 0.5 * np.sin(2 * s), 0.0])
        v = radius * ds * np.array([2 * np.sin(2 * s), np.cos(2 * s), 0.0])
        return p, v

    return path
