"""Rates of every speed of the model, the dependent ones included: u_dep = D(q, t) u + E(q, t) differentiated
along the motion by forward-mode derivatives (:mod:`kane.codegen.forward`),

    d u_full / dt = (d u_full / d q) q' + (d u_full / d u) u' + d u_full / d t,   u' = M^-1 f,

so the accelerations of the embedded (dependent) speeds come from the same program as the equations of motion.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..codegen.forward import jacobian_name, jacobian_program
from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError
from ..mechanics.arguments import real_array, state_arrays

__all__ = ["SpeedRates", "speed_rates"]


@dataclass(frozen=True)
class SpeedRates:
    """Every speed of the model (``u_full`` (n_u,)) and its rate (``u_full_dot`` (n_u,)) [speed units / s], in
    the order of ``names``; ``udot`` (p,) the rates of the independent speeds (M^-1 f)."""

    names: tuple
    u_full: np.ndarray
    u_full_dot: np.ndarray
    udot: np.ndarray

    def __getitem__(self, name: str) -> float:
        """The rate of the speed ``name``."""
        if name not in self.names:
            raise ArgumentError(f"unknown speed {name!r}; known: {', '.join(self.names)}")
        return float(self.u_full_dot[self.names.index(name)])


class _Rates:
    def __init__(self, equations):
        prog = jacobian_program(equations.program, ["u_full", "qdot", "M", "f"], wrt=("t", "q", "u"))
        self.names = ["u_full", "qdot", "M", "f"] + [jacobian_name("u_full", g) for g in ("t", "q", "u")]
        self.fn = compile_program(prog, self.names)


_CACHE: dict = {}  # id(equations) -> (weak reference to the equations, _Rates)


def speed_rates(equations, t, q, u, params=None, inputs=None, tau=None) -> SpeedRates:
    """:class:`SpeedRates` at (t [s], q (n_q,), independent u (p,)) of :class:`kane.Equations` ``equations``;
    params and inputs as for :class:`kane.Dynamics`; ``tau`` (p,) extra generalized forces along the independent
    speeds (M u' = f + tau). The derivative program is compiled once per equations."""
    key = id(equations)
    hit = _CACHE.get(key)
    if hit is None or hit[0]() is not equations:
        hit = _CACHE[key] = (weakref.ref(equations), _Rates(equations))
        weakref.finalize(equations, _CACHE.pop, key, None)
    rates = hit[1]
    model = equations.model
    q, u, _ = state_arrays(q, u, model.n_q, len(equations.u_independent))
    v = dict(zip(rates.names, rates.fn(float(t), q, u, model.parameter_values(params), model.input_values(inputs))))
    f = v["f"] if tau is None else v["f"] + real_array(tau, "tau").reshape(v["f"].shape)
    udot = np.linalg.solve(v["M"], f)
    dU = v[jacobian_name("u_full", "q")] @ v["qdot"] + v[jacobian_name("u_full", "u")] @ udot
    dU = dU + v[jacobian_name("u_full", "t")][:, 0]
    return SpeedRates(tuple(str(s) for s in model.u), v["u_full"], dU, udot)
