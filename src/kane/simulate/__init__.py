"""Numerical simulation: integrators, events, the step-wise Simulator, assembly and projection, ``simulate()``.

A plain package; the one-call run is its function :func:`kane.simulate.simulate`, and ``kane.simulate.Simulator``,
``kane.simulate.make_projection`` and the rest are its members.

    >>> traj = kane.simulate.simulate(dynamics, (0.0, 10.0), q0, u0, method=Method.DOPRI5, output_dt=0.01,
    ...                               path="run.h5")
    >>> traj = kane.run(dynamics, kane.State(q0, u0), kane.RunOptions(t_end=10.0, output_dt=0.01), writer)
    >>> traj = kane.load_trajectory("run.h5")

Every run goes through :func:`kane.run` (:mod:`kane.simulate.run`; ``simulate()`` is it with keyword
arguments): the compiled loop where the dynamics, inputs and events allow it, else the Python loop, recorded in
``traj.stats.loop``. The function is not a name of this package: ``kane.simulate.run`` is its module.

Constraint changes during a run (contact, stick/slip, locks) live in :mod:`kane.switching`; trajectory files in
:mod:`kane.io.trajectory` (``kane.Trajectory``, ``kane.load_trajectory``).

Deprecated, removed in kane 0.3 (CHANGELOG.md): calling the package, ``kane.simulate(...)``, warns and runs
:func:`simulate`; the names ``Trajectory``, ``load_trajectory``, ``TrajectoryWriter``, ``Stats`` and
``EventRecord`` of this package warn and give those of :mod:`kane.io.trajectory`.
"""

import sys
import types
import warnings

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    "Method": "kane.options",
    **dict.fromkeys(("AssemblyError", "AssemblyResult", "assemble", "make_projection", "project_positions"),
                    ".assembly"),
    **dict.fromkeys(("Event", "EventDetector", "EventFunctionError", "EventHit"), ".events"),
    **dict.fromkeys(("RK4", "Counters", "DormandPrince5", "Integrator", "IntegratorError", "Rhs", "ScipyImplicit",
                     "SemiImplicitEuler", "Step", "make_integrator"), ".integrators"),
    **dict.fromkeys(("InconsistentStartWarning", "SimulationError", "Simulator", "StepInfo"), ".simulator"),
    **dict.fromkeys(("Loop", "ProjectionMode", "RunOptions", "RunRequest", "State", "make_simulator", "simulate"),
                    ".run"),
    **dict.fromkeys(("WorkEnergyBalance", "standard_monitors", "work_energy_balance"), ".monitors"),
    "RunInterrupted": ".run_limits",
}
_lazy_getattr, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AssemblyError",
    "AssemblyResult",
    "assemble",
    "make_projection",
    "project_positions",
    "Counters",
    "DormandPrince5",
    "Event",
    "EventDetector",
    "EventFunctionError",
    "EventHit",
    "Integrator",
    "IntegratorError",
    "Method",
    "RK4",
    "Rhs",
    "RunInterrupted",
    "ScipyImplicit",
    "SemiImplicitEuler",
    "SimulationError",
    "InconsistentStartWarning",
    "Simulator",
    "Step",
    "StepInfo",
    "Loop",
    "ProjectionMode",
    "RunOptions",
    "RunRequest",
    "make_simulator",
    "State",
    "make_integrator",
    "simulate",
    "standard_monitors",
    "WorkEnergyBalance",
    "work_energy_balance",
]


_MOVED = frozenset(("Trajectory", "load_trajectory", "TrajectoryWriter", "Stats", "EventRecord"))


def __getattr__(name: str):
    """The package's names on first use (:func:`kane.lazy.lazy_exports`), and the deprecated names of
    :mod:`kane.io.trajectory` here (until kane 0.3), with a FutureWarning."""
    if name in _MOVED:
        from kane.io import trajectory

        warnings.warn(f"kane.simulate.{name} is deprecated and goes away in kane 0.3; use kane.io.trajectory.{name}"
                      + (f" (or kane.{name})" if name in ("Trajectory", "load_trajectory") else ""),
                      FutureWarning, stacklevel=2)
        return getattr(trajectory, name)
    return _lazy_getattr(name)


class _DeprecatedCallablePackage(types.ModuleType):
    """Deprecation shim until kane 0.3 (CHANGELOG.md): the package stays callable for one release, so that
    ``kane.simulate(...)`` warns and runs :func:`kane.simulate.simulate`."""

    def __call__(self, *args, **kwargs):
        warnings.warn("kane.simulate(...) is deprecated and goes away in kane 0.3; call kane.simulate.simulate(...) "
                      "(the package kane.simulate is not callable then)", FutureWarning, stacklevel=2)
        from kane.simulate.run import simulate

        return simulate(*args, **kwargs)


sys.modules[__name__].__class__ = _DeprecatedCallablePackage
