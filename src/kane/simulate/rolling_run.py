"""Runs of a model file's rolling contacts (``[[contacts]]``, simulated by
:func:`kane.io.model_surfaces.rolling_dynamics` in absolute Cartesian coordinates) written as normal kane run files:
every sample's Cartesian state (q (7 Nb + 4 Nc,), u (6 Nb,)) is mapped to the kane model's joint coordinates by
:meth:`kane.algorithms.cartesian.CartesianDynamics.joint_coordinates` before it is written, so ``kane view RUN.h5``
and :func:`kane.viz.scene.build_scene` draw it with the model's own equations. :func:`rolling_simulation` is what
``kane simulate`` runs for such a model file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.model_surfaces import rolling_dynamics
from ..io.trajectory import TrajectoryWriter
from ..options import Method
from .run import ProjectionMode, RunOptions, RunRequest, State, run

__all__ = ["JointCoordinateWriter", "rolling_run", "rolling_simulation"]


class JointCoordinateWriter:
    """A :class:`kane.io.trajectory.TrajectoryWriter` for a run of ``cartesian`` (a CartesianDynamics, such
    as a RollingContactDynamics) that writes the kane model's joint coordinates instead: q (n_q,), u (n_u,) named
    after ``cartesian.model``'s coordinates and speeds, ``params`` the parameters of the conversion. Everything
    else (modes, events, closing, the partial file) is the wrapped ``writer``'s."""

    def __init__(self, writer: TrajectoryWriter, cartesian, params=None):
        self.writer, self.cartesian, self.params = writer, cartesian, params
        self.q_names = tuple(str(s) for s in cartesian.model.q)
        self.u_names = tuple(str(s) for s in cartesian.model.u)

    def open(self, *, q_names=(), u_names=(), **kwargs) -> None:
        self.writer.open(q_names=self.q_names, u_names=self.u_names, **kwargs)

    def append(self, t: float, q: np.ndarray, u: np.ndarray, energy=None, residuals=()) -> None:
        qj, uj = self.cartesian.joint_coordinates(q, u, t, self.params)
        self.writer.append(t, qj, uj, energy, residuals)

    def __getattr__(self, name):
        return getattr(self.writer, name)


def rolling_run(model, t_span: tuple[float, float], path, *, params=None, output_dt: float = 0.01,
                rtol: float = 1e-10, atol: float = 1e-12, description: str = "") -> Path:
    """Simulate ``model`` (a :class:`kane.io.model_surfaces.RollingModel`) over ``t_span`` = (t0, t1) [s] from
    its ``q0``, ``u0`` (DOPRI5, the contact projection every 5 steps, samples every ``output_dt`` [s]) and write
    the run in the kane model's joint coordinates to ``path`` (HDF5); returns the file's path."""
    dyn = model.dynamics
    writer = JointCoordinateWriter(TrajectoryWriter(path), dyn, params)
    options = RunOptions(t_end=float(t_span[1]), method=Method.DOPRI5, rtol=rtol, atol=atol, output_dt=output_dt,
                         record=False, projection=ProjectionMode.DYNAMICS, project_every=5,
                         description=description or dyn.description)
    run(dyn, State(model.q0, model.u0, float(t_span[0])), options, writer, params=params)
    return Path(path)


def rolling_simulation(loaded, settings, path, *, project: bool = True, max_steps: int | None = None,
                       max_wall_time: float | None = None):
    """``kane simulate`` of a model file with ``[[contacts]]``: (``joint``, the kane model's Dynamics in joint
    coordinates (numpy backend), a :class:`kane.simulate.run.RunRequest` of its :func:`rolling_dynamics` under
    ``settings`` (a :class:`kane.io.SimulationSettings`), its writer to ``path``, in joint coordinates). The [inputs] schedules
    act on the joint state; the monitors are ``power`` [W] of the loads without a potential (``joint.power``, the
    rolling contacts doing no work), ``configuration``, the largest contact point separation [m], and
    ``constraint``, the largest slip velocity of the contact points [m/s]. ``project``: put the state back on the
    contacts every 5 steps."""
    model = rolling_dynamics(loaded)
    dyn, params = model.dynamics, dict(loaded.parameters)
    joint = loaded.derive().compile("numpy")
    independent = [[str(u) for u in dyn.model.u].index(n) for n in joint.u_names]
    laws = loaded.input_function(joint)

    def joint_state(t, q, u):
        qj, uj = dyn.joint_coordinates(q, u, t, params)
        return qj, np.asarray(uj)[independent]

    inputs = None if laws is None else (lambda t, q, u: laws(t, *joint_state(t, q, u)))
    monitors = {"configuration": lambda t, q, u: float(np.max(np.abs(dyn.contact_residuals(t, q, u).position))),
                "constraint": lambda t, q, u: float(np.max(np.abs(dyn.contact_residuals(t, q, u).velocity)))}
    if joint.equations.has_potential:
        monitors["power"] = lambda t, q, u: float(joint.power(t, *joint_state(t, q, u), params,
                                                              None if inputs is None else inputs(t, q, u)))
    options = RunOptions(t_end=settings.t_end, method=settings.method, rtol=settings.rtol, atol=settings.atol,
                         dt=settings.dt, output_dt=settings.output_dt, max_step=settings.max_step, monitors=monitors,
                         record=False, projection=ProjectionMode.DYNAMICS if project else ProjectionMode.NONE,
                         project_every=5, description=f"{loaded.name} ({loaded.path or loaded.name})",
                         max_steps=max_steps, max_wall_time=max_wall_time)
    request = RunRequest(dyn, State(model.q0, model.u0, settings.t_start), options, params, inputs)
    return joint, request, JointCoordinateWriter(TrajectoryWriter(path), dyn, params)
