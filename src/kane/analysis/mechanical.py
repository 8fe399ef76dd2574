"""The mechanical (second-order) form M x'' + C x' + K x = B r of a linearization, x the coordinates' deviations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KaneError

__all__ = ["MechanicalForm", "mechanical_form"]


@dataclass(frozen=True)
class MechanicalForm:
    """M x'' + C x' + K x = B r for x = the independent coordinates' deviations: M, C, K (n, n), B (n, n_r)."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    B: np.ndarray
    coordinate_names: tuple
    input_names: tuple


def mechanical_form(lin) -> MechanicalForm:
    """M x'' + C x' + K x = B r with x the coordinates of the linearization ``lin``.

    From q_i' = W u + (terms in q_i): u = W^-1 (x' - A_qq x), M = M_u W^-1, C = -M_u (W^-1 A_qq + A_uu W^-1),
    K = -M_u (A_uq - A_uu W^-1 A_qq), B = M_u B_u with M_u the mass matrix of the embedded equations. Needs as
    many coordinates as speeds, W = dq_i'/du invertible and inputs that do not enter q'."""
    n, p = lin.n_coordinates, len(lin.speed_names)
    if n != p:
        raise KaneError(f"mechanical form: {n} independent coordinates ({', '.join(lin.coordinate_names)}) but "
                        f"{p} independent speeds ({', '.join(lin.speed_names)}): a nonholonomic or quaternion "
                        "model has no second-order form in its coordinates; use A and B")
    Aqq, W, Auq, Auu = lin.A[:n, :n], lin.A[:n, n:], lin.A[n:, :n], lin.A[n:, n:]
    if np.any(lin.B[:n] != 0):
        raise KaneError("mechanical form: the inputs enter the kinematic equations q' (B has nonzero rows "
                        f"for {', '.join(lin.state_names[k] for k in range(n) if np.any(lin.B[k]))})")
    if np.linalg.cond(W) > 1e12:
        raise KaneError(f"mechanical form: dq'/du is singular at this configuration (condition "
                        f"{np.linalg.cond(W):.3g}); the speeds do not determine the coordinate rates here")
    Wi = np.linalg.inv(W)
    Mu = lin.mass_matrix
    return MechanicalForm(Mu @ Wi, -Mu @ (Wi @ Aqq + Auu @ Wi), -Mu @ (Auq - Auu @ Wi @ Aqq),
                          Mu @ lin.B[n:], lin.coordinate_names, lin.input_names)
