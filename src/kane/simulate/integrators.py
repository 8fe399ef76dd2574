"""Time integrators for the state x = concat(q, u): RK4, semi-implicit Euler, Dormand-Prince 5(4), Radau, BDF.

Every integrator advances one accepted step per call of ``step()`` and returns a :class:`Step`, which carries
the step's end points and its continuous extension (dense output) ``step(t) -> x`` for t in [t_old, t_new]:

* RK4 and semi-implicit Euler (fixed step ``dt`` [s]): cubic Hermite interpolant on the end points and their
  derivatives (derivatives are evaluated only when the interpolant is first used, and shared with the next
  step where possible);
* DOPRI5 (Dormand & Prince 1980; Hairer, Norsett & Wanner, *Solving ODEs I*, II.5 and II.6): the standard
  4th-order continuous extension, error control on rtol/atol with a PI step-size controller;
* Radau and BDF: scipy.integrate's ``OdeSolver`` classes stepped one step at a time, with their own dense output.

Function evaluations are counted by :class:`Rhs` (every call, including the finite-difference Jacobians of the
implicit solvers); accepted and rejected steps by the integrator.
"""

from __future__ import annotations

import numpy as np

from kane.simulate.dopri5 import DormandPrince5
from kane.simulate.fixed_step import RK4, SemiImplicitEuler
from kane.simulate.scipy_stiff import ScipyImplicit
from kane.simulate.stepping import Counters, Integrator, IntegratorError, Method, Rhs, Step

__all__ = [
    "Method",
    "Rhs",
    "Counters",
    "Step",
    "Integrator",
    "RK4",
    "SemiImplicitEuler",
    "DormandPrince5",
    "ScipyImplicit",
    "IntegratorError",
    "make_integrator",
]


def make_integrator(method: Method | str, rhs: Rhs, t0: float, x0: np.ndarray, *, t_bound: float = np.inf,
                    rtol: float = 1e-8, atol: float | np.ndarray = 1e-10, dt: float | None = None,
                    max_step: float = np.inf, min_step: float = 0.0, first_step: float | None = None) -> Integrator:
    """Build the integrator for ``method`` starting at (t0 [s], x0 (n,)).

    Fixed-step methods need ``dt`` [s] and ignore rtol/atol; adaptive ones use rtol, atol (scalar or (n,)),
    max_step, min_step and first_step [s] (DOPRI5 also accepts ``dt`` as its first step).
    """
    method = Method.parse(method)
    if method is Method.RK4:
        return RK4(rhs, t0, x0, dt=_need_dt(dt, method), t_bound=t_bound)
    if method is Method.SEMI_IMPLICIT_EULER:
        return SemiImplicitEuler(rhs, t0, x0, dt=_need_dt(dt, method), t_bound=t_bound)
    if first_step is None and dt is not None:
        first_step = dt
    if method is Method.DOPRI5:
        return DormandPrince5(rhs, t0, x0, rtol=rtol, atol=atol, t_bound=t_bound, max_step=max_step,
                              min_step=min_step, first_step=first_step)
    return ScipyImplicit(method, rhs, t0, x0, rtol=rtol, atol=atol, t_bound=t_bound, max_step=max_step,
                         min_step=min_step, first_step=first_step)


def _need_dt(dt: float | None, method: Method) -> float:
    if dt is None:
        raise ValueError(f"method {method.name} is fixed-step: give dt [s]")
    return float(dt)
