"""The planar four-bar of the assembly tests (crank 1, coupler 2, rocker 1.5, ground 2 [m]) and its closed-form
position analysis: one reference shared by tests/simulate/test_drag.py and tests/viz/test_assemble_view.py."""

from __future__ import annotations

import numpy as np

__all__ = ["CRANK", "COUPLER", "ROCKER", "GROUND", "position_analysis"]

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
