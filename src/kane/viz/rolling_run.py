"""Runs of a model file's rolling contacts (``[[contacts]]``, simulated by
:func:`kane.io.model_surfaces.rolling_dynamics` in absolute Cartesian coordinates) written as normal kane run files:
every sample's Cartesian state (q (7 Nb + 4 Nc,), u (6 Nb,)) is mapped to the kane model's joint coordinates by
:meth:`kane.algorithms.cartesian.CartesianDynamics.joint_coordinates` before it is written, so ``kane view RUN.h5``
and :func:`kane.viz.scene.build_scene` draw it with the model's own equations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.trajectory import TrajectoryWriter
from ..options import Method
from ..simulate import Simulator

__all__ = ["JointCoordinateWriter", "rolling_run"]


class JointCoordinateWriter:
    """A :class:`kane.io.trajectory.TrajectoryWriter` for a Simulator of ``cartesian`` (a CartesianDynamics, such
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
    sim = Simulator(dyn, t0=float(t_span[0]), q0=model.q0, u0=model.u0, method=Method.DOPRI5, rtol=rtol, atol=atol,
                    params=params, output_dt=output_dt, record=False, writer=writer,
                    projection=dyn.make_projection(params), project_every=5,
                    description=description or dyn.description)
    sim.run(float(t_span[1]))
    sim.finish()
    return Path(path)
