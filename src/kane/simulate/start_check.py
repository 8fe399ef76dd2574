"""The check before a run that its initial state is not singular: finite q' and u' without a division by zero.

A singular start (a gimbal lock, a closed loop at a dead point) would otherwise fail at the first step with a
less helpful message; this check names the initial conditions to change.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kane.simulate.simulator import SimulationError

__all__ = ["check_start"]


def check_start(dyn: Any, t0: float, q0: np.ndarray, u0: np.ndarray, params: Any, inputs: Any) -> None:
    """Raise SimulationError if q' or u' of ``dyn`` is not finite at (t0 [s], q0 (n_q,), u0 (n_u,)), or a
    division by zero, an overflow or a singular matrix happens on the way (a singular configuration such as a
    gimbal lock). ``inputs`` is a mapping or a callable inputs(t, q, u) -> mapping."""
    fmt = ", ".join
    reason = None
    try:
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            w = inputs(t0, q0, u0) if callable(inputs) else inputs
            qd, ud = dyn.rhs(t0, q0, u0, params=params, inputs=w)
        if not (np.all(np.isfinite(qd)) and np.all(np.isfinite(ud))):
            reason = "q' or u' is not finite"
    except (ArithmeticError, np.linalg.LinAlgError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
    if reason is not None:
        raise SimulationError(
            f"simulation failed at the start t = {t0!r} s: the initial state is singular ({reason}); change the "
            f"initial conditions q0: {fmt(f'{n}={v:.12g}' for n, v in zip(dyn.q_names, q0))}; u0: "
            f"{fmt(f'{n}={v:.12g}' for n, v in zip(dyn.u_names, u0))}",
            reason=reason, t=t0, mode="default", t_good=t0, q=q0, u=u0)
