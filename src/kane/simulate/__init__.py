"""Numerical simulation: integrators, events, the step-wise Simulator, assembly and projection, ``simulate()``.

The package is itself callable: ``kane.simulate(dynamics, t_span, q0, u0, ...)`` is
:func:`kane.simulate.simulate`, and ``kane.simulate.Simulator``, ``kane.simulate.make_projection`` and the rest
are its members, so the function and the package never hide each other.

    >>> traj = kane.simulate(dynamics, (0.0, 10.0), q0, u0, method=Method.DOPRI5, output_dt=0.01, path="run.h5")
    >>> traj = kane.simulate.load_trajectory("run.h5")
    >>> traj = kane.run(dynamics, kane.State(q0, u0), kane.RunOptions(t_end=10.0, output_dt=0.01), writer)

Every run goes through :func:`kane.simulate.run.run` (``simulate()`` is it with keyword arguments): the compiled
loop where the dynamics, inputs and events allow it, else the Python loop, recorded in ``traj.stats.loop``.

Constraint changes during a run (contact, stick/slip, locks) live in :mod:`kane.switching`; trajectory files in
:mod:`kane.io.trajectory` (re-exported here).
"""

import sys
import types

from kane.io.trajectory import EventRecord, Stats, Trajectory, TrajectoryWriter, load_trajectory
from kane.options import Method
from kane.simulate.assembly import AssemblyError, AssemblyResult, assemble, make_projection, project_positions
from kane.simulate.events import Event, EventDetector, EventFunctionError, EventHit
from kane.simulate.integrators import (
    RK4,
    Counters,
    DormandPrince5,
    Integrator,
    IntegratorError,
    Rhs,
    ScipyImplicit,
    SemiImplicitEuler,
    Step,
    make_integrator,
)
from kane.simulate.simulator import InconsistentStartWarning, SimulationError, Simulator, StepInfo
from kane.simulate.run import Loop, ProjectionMode, RunOptions, RunRequest, State, run, simulate
from kane.simulate.monitors import WorkEnergyBalance, standard_monitors, work_energy_balance
from kane.simulate.run_limits import RunInterrupted

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
    "EventRecord",
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
    "Stats",
    "Step",
    "StepInfo",
    "Trajectory",
    "TrajectoryWriter",
    "load_trajectory",
    "Loop",
    "ProjectionMode",
    "RunOptions",
    "RunRequest",
    "State",
    "run",
    "make_integrator",
    "simulate",
    "standard_monitors",
    "WorkEnergyBalance",
    "work_energy_balance",
]


class _CallablePackage(types.ModuleType):
    """The ``kane.simulate`` package, callable as :func:`simulate`."""

    def __call__(self, *args, **kwargs):
        return simulate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
