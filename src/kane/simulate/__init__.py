"""Numerical simulation: integrators, events, the step-wise Simulator, simulate(), and Trajectory files.

    >>> traj = simulate(dynamics, (0.0, 10.0), q0, u0, method=Method.DOPRI5, output_dt=0.01, path="run.h5")
    >>> traj = load_trajectory("run.h5")
"""

from kane.simulate.events import Event, EventDetector, EventFunctionError, EventHit
from kane.simulate.integrators import (
    RK4,
    Counters,
    DormandPrince5,
    Integrator,
    IntegratorError,
    Method,
    Rhs,
    ScipyImplicit,
    SemiImplicitEuler,
    Step,
    make_integrator,
)
from kane.simulate.assembly import AssemblyError, AssemblyResult, assemble, make_projection, project_positions
from kane.simulate.hybrid import HybridSimulator, mode_system, simulate_hybrid
from kane.simulate.online import ImpulseResult, OnlineDynamics, SlipForce
from kane.simulate.shapes import Contact, Disk, Gap, Plane, Point, Sphere
from kane.simulate.simulator import SimulationError, Simulator, StepInfo, simulate
from kane.simulate.switching import Coulomb, Lock, SwitchingSimulator, UnilateralContact, simulate_switching
from kane.simulate.trajectory import EventRecord, Stats, Trajectory, TrajectoryWriter, load_trajectory

__all__ = [
    "HybridSimulator",
    "mode_system",
    "simulate_hybrid",
    "Contact",
    "Disk",
    "Gap",
    "Plane",
    "Point",
    "Sphere",
    "OnlineDynamics",
    "SlipForce",
    "ImpulseResult",
    "UnilateralContact",
    "Coulomb",
    "Lock",
    "SwitchingSimulator",
    "simulate_switching",
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
    "ScipyImplicit",
    "SemiImplicitEuler",
    "SimulationError",
    "Simulator",
    "Stats",
    "Step",
    "StepInfo",
    "Trajectory",
    "TrajectoryWriter",
    "load_trajectory",
    "make_integrator",
    "simulate",
]
