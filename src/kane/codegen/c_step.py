"""The fixed-step entry point of the C backend for the real-time loop (issue 12, item 4): classical RK4 in C
around a :class:`kane.codegen.c_backend.CFunction` compiled with ``rk4=True`` (outputs q' then u')."""

from __future__ import annotations

import numpy as np

from ..errors import KaneError

__all__ = ["Stepper"]


class Stepper:
    """Fixed-step RK4 of q' = qdot, u' = udot in C for the real-time loop: ``step(n, dt, inputs)`` advances n steps
    in place, allocating nothing, with the GIL released while it runs. ``t``, ``q`` (n_q,), ``u`` (n_u,) and
    ``inputs`` (n_w,) are views of the state it advances (write into them to reset it)."""

    def __init__(self, fn, t, q, u, params, inputs=None):
        s, ffi = fn.sizes, fn.ffi
        nq, nu, nw = s["nq"], s["nu"], s["nw"]
        self.fn = fn
        self._x = np.zeros(2 + nq + nu + nw)
        self._pc = np.zeros(s["np"] + s["nc"] + 1)
        self._xp, self._pcp = ffi.from_buffer(self._x), ffi.from_buffer(self._pc)
        self.q, self.u, self.inputs = self._x[1:1 + nq], self._x[1 + nq:1 + nq + nu], self._x[1 + nq + nu:-1]
        self.q[:], self.u[:], self._x[0] = q, u, t
        if inputs is not None:
            self.inputs[:] = inputs
        self._pc[:] = fn.parameter_state(np.ascontiguousarray(params, dtype=np.float64))[2]  # its own copy

    @property
    def buffers(self) -> tuple:
        """(x, pc): the float64 arrays ``kane_step(n, dt, x, pc)`` advances in place, x = [t, q, u, inputs, 0] and
        pc the parameters then their constants (what a C caller such as kane.realtime's C period steps)."""
        return self._x, self._pc

    @property
    def t(self) -> float:
        return float(self._x[0])

    def set_state(self, t: float, q, u) -> None:
        """Go on from (t [s], q (n_q,), u (n_u,)) (the inputs kept)."""
        self._x[0], self.q[:], self.u[:] = t, q, u

    def step(self, n: int, dt: float, inputs=None) -> float:
        """Advance n RK4 steps of dt [s] (with ``inputs`` (n_w,) held for them, if given); returns the time. A step
        whose result is not finite stops the run with a KaneError, the state left at the last good step."""
        if inputs is not None:
            self.inputs[:] = inputs
        done = self.fn.lib.kane_step(n, dt, self._xp, self._pcp)
        if done != n:
            raise KaneError(f"step: the state is not finite after the step from t = {self._x[0]:.9g} "
                            f"(step {done + 1} of {n}, dt = {dt:g}); q, u hold the last finite state")
        return self._x[0]
