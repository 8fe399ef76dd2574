"""The mechanical (second-order) form M x'' + C x' + K x = B r of a linearization in its reduced coordinates x,
holonomic or nonholonomic (a bicycle's roll and steer: Meijaard et al. 2007's M, v C1, g K0 + v^2 K2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KaneError

__all__ = ["MechanicalForm", "mechanical_form"]


@dataclass(frozen=True)
class MechanicalForm:
    """M x'' + C x' + K x = B r for x = the reduced coordinates' deviations: M, C, K (n, n), B (n, n_r);
    ``speed_names`` the n speeds whose rates are x' (through q' = W u), ``dropped`` the states left out (the
    cyclic coordinates of :meth:`Linearization.reduced` and the speeds that drive no kept coordinate, such as a
    vehicle's forward speed, which must not enter the kept accelerations at the point)."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    B: np.ndarray
    coordinate_names: tuple
    input_names: tuple
    speed_names: tuple = ()
    dropped: tuple = ()


def _refuse(lin, why: str):
    raise KaneError(f"mechanical form: {why}: no second-order form in the coordinates "
                    f"({', '.join(lin.coordinate_names) or 'none'}); use A and B")


def mechanical_form(lin) -> MechanicalForm:
    """M x'' + C x' + K x = B r with x the coordinates of ``lin.reduced()``.

    The reduced speeds split into the n that drive the kept coordinates (u_a: q' = Aqq q + W_a u_a, W_a
    invertible) and the rest (u_b, which drive no kept coordinate: a forward speed, a wheel's spin). The u_b must
    not enter the accelerations of u_a at the point (else the motion is not second order in q alone and a
    :class:`KaneError` names them); they are dropped. With the effective mass M_e = ((M_u^-1)_aa)^-1 (M_u's block
    M_aa when M_u does not couple a and b), M = M_e W_a^-1, C = -M_e (W_a^-1 Aqq + Aaa W_a^-1),
    K = -M_e (Aaq - Aaa W_a^-1 Aqq), B = M_e B_a."""
    red = lin.reduced()
    n, p = red.n_coordinates, len(red.speed_names)
    A, B = red.A, red.B
    Aqq, W = A[:n, :n], A[:n, n:]
    scale = max(1.0, float(np.max(np.abs(A), initial=0.0)))
    a = [k for k in range(p) if np.any(np.abs(W[:, k]) > 1e-12 * scale)]
    b = [k for k in range(p) if k not in a]
    speeds = red.speed_names
    if len(a) != n:
        _refuse(red, f"{n} coordinates ({', '.join(red.coordinate_names)}) but {len(a)} speeds drive them "
                     f"({', '.join(speeds[k] for k in a) or 'none'})")
    if np.any(B[:n] != 0):
        raise KaneError("mechanical form: the inputs enter the kinematic equations q' (B has nonzero rows "
                        f"for {', '.join(red.state_names[k] for k in range(n) if np.any(B[k]))})")
    rows = [n + k for k in a]
    if b:
        coupling = A[np.ix_(rows, [n + k for k in b])]
        if np.max(np.abs(coupling)) > 1e-10 * scale:
            i, j = np.unravel_index(int(np.argmax(np.abs(coupling))), coupling.shape)
            _refuse(red, f"the speed {speeds[b[j]]} (which drives no kept coordinate) enters the rate of "
                         f"{speeds[a[i]]} here (d{speeds[a[i]]}'/d{speeds[b[j]]} = {coupling[i, j]:.6g})")
    W_a = W[:, a]
    if np.linalg.cond(W_a) > 1e12:
        raise KaneError(f"mechanical form: dq'/du is singular at this configuration (condition "
                        f"{np.linalg.cond(W_a):.3g}); the speeds do not determine the coordinate rates here")
    Mu = red.mass_matrix
    Me = Mu if not b else np.linalg.inv(np.linalg.inv(Mu)[np.ix_(a, a)])
    Wi = np.linalg.inv(W_a)
    Aaq, Aaa = A[np.ix_(rows, range(n))], A[np.ix_(rows, rows)]
    dropped = tuple(lin.cyclic) + tuple(speeds[k] for k in b)
    return MechanicalForm(Me @ Wi, -Me @ (Wi @ Aqq + Aaa @ Wi), -Me @ (Aaq - Aaa @ Wi @ Aqq), Me @ B[rows],
                          red.coordinate_names, red.input_names, tuple(speeds[k] for k in a), dropped)
