"""Live mode of the browser viewer (``kane view MODEL.toml --live``): the model simulated as it is drawn, a body
point tied by the virtual coupler of :mod:`kane.realtime.coupler` (a spring K and damper B, seed 000 Step 3) to
the viewer's drag gizmo, which is a :class:`kane.realtime.Device` (:class:`GizmoDevice`): its handle is where
the gizmo is. Dragging the gizmo pulls the body; pause, reset, record to HDF5 and parameter sliders sit in the
side panel. Parameters change without re-deriving: the compiled dynamics take them as arguments.

Each period T = 1 / ``rate`` [s] (default 200 Hz): read the gizmo, compute the coupler force on the body point,
hold it as the coupler's three System inputs over ``substeps`` RK4 steps of the step-wise
:class:`kane.simulate.Simulator`. The handle's velocity is taken as 0 (a mouse drag gives no usable velocity), so
the damper B acts on the body point's velocity. Default gains (:func:`default_gains`) put the whole model's mass m
on a 1 Hz spring (K = m (2 pi)^2 [N/m], B = 1.4 sqrt(K m) [N s/m], at least the sampled-data passivity bound
K T / 2), within what the sampled coupler holds stable on the point's smallest effective mass m_p (K T^2 / m_p
at most 0.5, B T / m_p at most 1.5; :mod:`kane.realtime.coupler_stability`: a light point on a heavy model, a
stiff 1 Hz spring of the whole mass would diverge), and limit the force to 30 m [N]. Gains given outside the
stable region get a :class:`kane.realtime.PassivityWarning` naming it.

A model file with ``[[contacts]]`` (rolling contacts, not part of the derived equations) is simulated by
:func:`kane.io.model_surfaces.rolling_dynamics`' RollingContactDynamics (absolute coordinates, projected onto its
contacts every 10 steps) with the coupler's inputs; its state is shown, coupled and recorded in the kane model's
joint coordinates (:meth:`~kane.algorithms.cartesian.CartesianDynamics.joint_coordinates`).

A model file with ``[[switching]]`` tables runs on the switching plant of ``kane realtime`` (every mode compiled to
C, the rules inside each period: :mod:`kane.viz.live_switching`); its rules take the parameters' current values
(a slider that moves a lock's interval or a friction coefficient acts at once), its ``[inputs]`` schedules are
held over each period, and a recording has one sample per period (all the model's speeds) with the mode changes.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, KaneError
from ..io.model_surfaces import rolling_dynamics
from ..io.trajectory import TrajectoryWriter
from ..model.model import float_value
from ..options import Method
from ..realtime.command import parse_couple
from ..realtime.coupler import CouplerGains, VirtualCoupler, add_coupler, check_gains, passivity_bound
from ..realtime.coupler_stability import check_stability, effective_mass
from ..realtime.devices import DeviceSample, Workspace, check_sample
from ..realtime.plants import input_holder
from ..realtime.model_table import realtime_settings
from ..simulate.run import ProjectionMode, RunOptions, State, make_simulator
from ..simulate.rolling_run import JointCoordinateWriter
from ..switching.model_table import switching_rules
from .live_switching import PlantRecorder, switching_live_dynamics

__all__ = ["GizmoDevice", "LiveOptions", "LiveSimulation", "default_couple", "default_gains"]


class GizmoDevice:
    """The drag gizmo as a :class:`kane.realtime.Device`: ``read(t)`` returns the gizmo's ``position`` (3,) [m]
    (ground axes) at rest; :meth:`move_to` is what dragging it (or a test) does; ``force`` (3,) [N] is the last
    force written to it (the opposite of the coupler's pull on the body)."""

    def __init__(self, position, *, max_force: float, workspace: Workspace):
        self.max_force, self.workspace = float(max_force), workspace
        self.position = self._checked(position)
        self.force = np.zeros(3)

    @staticmethod
    def _checked(position) -> np.ndarray:
        x = np.array(position, dtype=float).reshape(-1)
        if x.shape != (3,) or not np.all(np.isfinite(x)):
            raise ArgumentError(f"gizmo: a position is three finite numbers [m], got {position!r}")
        return x

    def move_to(self, position) -> None:
        """Put the handle at ``position`` (3,) [m], ground axes."""
        self.position = self._checked(position)

    def open(self) -> None:
        self.force = np.zeros(3)

    def read(self, t: float) -> DeviceSample:
        return DeviceSample(float(t), self.position.copy(), np.zeros(3))

    def write_force(self, t: float, force) -> None:
        self.force = np.array(force, dtype=float).reshape(3)

    def close(self) -> None:
        self.force = np.zeros(3)


@dataclass(frozen=True)
class LiveOptions:
    """``couple``: "BODY" or "BODY:X,Y,Z" (point in body axes [m]; default: the model file's ``[realtime]`` body
    and point, else :func:`default_couple`); coupler
    ``stiffness`` K [N/m], ``damping`` B [N s/m] and ``max_force`` [N] (None: the defaults of the module text);
    ``rate`` [Hz] of the coupler's periods and ``substeps`` RK4 steps per period."""

    couple: str | None = None
    stiffness: float | None = None
    damping: float | None = None
    max_force: float | None = None
    rate: float = 200.0
    substeps: int = 1

    def __post_init__(self):
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ArgumentError(f"live options: rate must be a finite frequency > 0 Hz, got {self.rate!r}")
        if int(self.substeps) != self.substeps or self.substeps < 1:
            raise ArgumentError(f"live options: substeps must be an integer >= 1, got {self.substeps!r}")


def _masses(model, params) -> list:
    values = dict(zip(model.parameters, model.parameter_values(params)))
    return [float_value(b.mass, values) for b in model.bodies]


def default_couple(model, params=None) -> tuple[str, tuple]:
    """(body, point (3,) in body axes [m]) coupled by default: the heaviest body (the last one of equal mass, so
    the tip of a chain), at its centre of mass."""
    masses = _masses(model, params)
    i = max(range(len(masses)), key=lambda k: (masses[k], k))
    values = dict(zip(model.parameters, model.parameter_values(params)))
    return model.bodies[i].name, tuple(float_value(e, values) for e in model.bodies[i].com)


def default_gains(mass: float, point_mass: float, period: float, stiffness: float | None = None,
                  damping: float | None = None) -> CouplerGains:
    """The live coupler's gains for a model of total ``mass`` [kg] coupled at a point of smallest effective mass
    ``point_mass`` [kg] (inf: unknown or immovable), sampled every ``period`` T [s]: ``stiffness`` K [N/m] (default
    the whole mass on a 1 Hz spring, m (2 pi)^2, at most 0.5 m_p / T^2) and ``damping`` B [N s/m] (default
    1.4 sqrt(K m), at most 1.5 m_p / T, at least the passivity bound K T / 2)."""
    k = stiffness if stiffness is not None else min(mass * (2 * math.pi) ** 2, 0.5 * point_mass / period ** 2)
    if damping is None:
        damping = max(min(1.4 * math.sqrt(k * mass), 1.5 * point_mass / period), passivity_bound(k, period))
    return CouplerGains(float(k), float(damping))


class LiveSimulation:
    """The live model: ``loaded`` (a :class:`kane.io.model_file.LoadedModel`, read fresh: the coupler is added
    to its system) derived once, with a :class:`GizmoDevice` ``device`` coupled to ``port``'s body point;
    ``rolling``: the RollingContactDynamics simulated for a model with ``[[contacts]]`` (else None).
    :meth:`advance` runs periods; :meth:`reset`, :meth:`set_parameter`, :meth:`start_recording` and
    :meth:`stop_recording` may be called from another thread (the GUI's)."""

    def __init__(self, loaded, options: LiveOptions = LiveOptions()):
        self.loaded, self.options = loaded, options
        model = loaded.system.compile()
        self.params = {k: float(v) for k, v in loaded.parameters.items()}
        table = realtime_settings(loaded)  # the model file's coupling point, as kane realtime takes it
        body, point = (parse_couple(options.couple) if options.couple else
                       (table.body, table.point or (0.0, 0.0, 0.0)) if table.body is not None else
                       default_couple(model, self.params))
        self.port = add_coupler(loaded.system, body, point)
        self.equations = loaded.derive()
        self.switching = switching_live_dynamics(loaded)  # [[switching]] tables: None without
        self.dynamics = dyn = self.switching or self.equations.compile()
        self.q0, self.u0 = loaded.initial_state(dyn) if self.switching is None else (
            np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names]),
            np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names]))
        # the viewer poses the bodies from the kane model's independent speeds; a switching plant keeps them all
        self._independent = [dyn.u_names.index(str(s)) for s in self.equations.u_independent]
        start = rolling_dynamics(loaded) if loaded.tables.get("contacts") else None
        self.rolling = None if start is None else start.dynamics
        self._x0 = (self.q0, self.u0)
        if start is not None:  # simulated in absolute coordinates, the coupler's inputs included
            self._x0 = (start.q0, start.u0)
            self.q0, self.u0 = self.rolling.joint_coordinates(start.q0, start.u0, 0.0, self.params)
        self.period = 1.0 / options.rate
        mass = sum(_masses(model, self.params)) or 1.0
        # the point's smallest effective mass, a lower bound from the free mode (switching) or the bodies free of
        # their rolling contacts (the joint dynamics): what the sampled coupler must stay stable on
        probe = VirtualCoupler(dyn, self.port, CouplerGains(1.0, 1.0), params=dict(self.params))
        free = self.switching.free_mode() if self.switching is not None else None
        point_mass = effective_mass(probe, 0.0, self.q0, dict(self.params), free)
        self.point_mass = np.inf if point_mass is None else point_mass
        self.gains = default_gains(mass, self.point_mass, self.period, options.stiffness, options.damping)
        check_gains(self.gains, self.period)
        check_stability(self.gains, self.period, self.point_mass)
        self.max_force = float(options.max_force if options.max_force is not None else 30.0 * mass)
        self._laws = loaded.input_function(dyn)
        self.plant = self._recorder = None
        holonomic = any(c.holonomic is not None and not c.transient for c in self.equations.constraint_layout.values())
        self._holonomic = holonomic
        self._lock = threading.RLock()
        self._pull = {n: 0.0 for n in self.port.inputs}
        self.recording: Path | None = None
        self._bind(0.0, *self._x0)
        self.home = self.point()
        self.device = GizmoDevice(self.home, max_force=self.max_force,
                                  workspace=Workspace(tuple(self.home - 100.0), tuple(self.home + 100.0), 1e9))

    # ---- the simulation ------------------------------------------------------------------------------------
    def _bind(self, t, q, u, writer=None) -> None:
        """A coupler and a Simulator for the current parameters, from (t, q, u)."""
        self.coupler = VirtualCoupler(self.dynamics, self.port, self.gains, max_force=self.max_force,
                                      params=dict(self.params))
        if self.switching is not None:
            rules = switching_rules(self.loaded, self.params, self.equations.model)  # at the sliders' values
            self.plant = self.switching.make_plant(t, q, u, dict(self.params), self.port.inputs,
                                                   self.period / self.options.substeps, rules)
            self._held = None if self._laws is None else input_holder(self._laws, self.dynamics.model,
                                                                      self.port.inputs, self.plant.w, t, q, u)
            self._recorder = None if writer is None else PlantRecorder(
                writer, self.plant, self.switching, dict(self.params), f"{self.loaded.name} live ({self.loaded.path})")
            return
        proj = ProjectionMode.ASSEMBLY if self._holonomic else ProjectionMode.NONE
        simulated = self.dynamics
        if self.rolling is not None:
            simulated, proj = self.rolling, ProjectionMode.DYNAMICS
            writer = None if writer is None else JointCoordinateWriter(writer, self.rolling, dict(self.params))
        options = RunOptions(t_end=math.inf, method=Method.RK4, dt=self.period / self.options.substeps, record=False,
                             record_energy=writer is not None, projection=proj, project_every=10,
                             description=f"{self.loaded.name} live ({self.loaded.path})")
        self.sim = make_simulator(simulated, State(q, u, t), options, writer, params=dict(self.params),
                                  inputs=self._inputs)

    def _joint(self, t, q, u) -> tuple[np.ndarray, np.ndarray]:
        """The kane model's joint state (q, independent u) of the simulated state (t, q, u)."""
        if self.rolling is None:
            return q, u
        return self.rolling.joint_coordinates(q, u, t, self.params)

    def _inputs(self, t, q, u) -> dict:
        out = dict(self._laws(t, *self._joint(t, q, u))) if self._laws is not None else {}
        out.update(self._pull)
        return out

    @property
    def state(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(t [s], q (n_q,), independent u) now, in the kane model's joint coordinates."""
        with self._lock:
            if self.plant is not None:
                t, q, u = self.plant.state()
                return t, np.array(q), np.array(u)[self._independent]
            return (self.sim.t, *self._joint(self.sim.t, *self.sim.state))

    @property
    def mode(self) -> str | None:
        """The switching plant's mode now ("free" when no switched constraint holds); None without [[switching]]."""
        return None if self.plant is None else self.plant.mode

    def _raw(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(t, q, u) of the simulated dynamics now (absolute coordinates for a model with [[contacts]], all the
        speeds for one with [[switching]])."""
        if self.plant is not None:
            t, q, u = self.plant.state()
            return t, np.array(q), np.array(u)
        return (self.sim.t, *self.sim.state)

    def _coupled(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(t, q, u) as the coupler's dynamics take them."""
        return self._raw() if self.plant is not None else self.state

    def point(self) -> np.ndarray:
        """The coupled body point's position (3,) [m], ground axes, now."""
        t, q, u = self._coupled()
        return self.coupler.point_state(t, q, u)[0]

    def advance(self, periods: int = 1) -> None:
        """Run ``periods`` coupler periods: read the gizmo, hold the coupler force over the period's steps."""
        for _ in range(int(periods)):
            with self._lock:
                t, q, u = self._coupled()
                sample = self.device.read(t)
                if check_sample(sample, self.device.workspace) is None:
                    force = self.coupler.force(t, q, u, sample.position, sample.velocity).force
                else:
                    force = np.zeros(3)
                self.device.write_force(t, -force)
                if self.plant is not None:
                    self._hold(t, q, u, force)
                    continue
                self._pull = {n: float(f) for n, f in zip(self.port.inputs, force)}
                for _ in range(self.options.substeps):
                    self.sim.step()

    def _hold(self, t, q, u, force) -> None:
        """One period of the switching plant: the schedules at t and the coupler ``force`` held over it."""
        if self._held is not None:
            self._held(t, q, u)
        self.plant.advance(self.period, self.options.substeps, force)
        if self._recorder is not None:
            self._recorder.sample()

    def reset(self) -> None:
        """Back to the model's initial state at t = 0, the gizmo at the coupled point (a recording is closed)."""
        with self._lock:
            self.stop_recording()
            self._pull = {n: 0.0 for n in self.port.inputs}
            self._bind(0.0, *self._x0)
            self.device.move_to(self.home)

    def set_parameter(self, name: str, value: float) -> None:
        """Set parameter ``name`` to ``value`` from now on (no re-derivation; a recording is closed, since a run
        file holds one set of parameters). An :class:`ArgumentError` names an unknown parameter; the old value
        is kept when the dynamics refuse the new one."""
        with self._lock:
            if name not in self.params:
                raise ArgumentError(f"live model {self.loaded.name!r}: no parameter {name!r} (parameters: "
                                    f"{', '.join(self.params) or 'none'})")
            old = self.params[name]
            self.stop_recording()
            t, q, u = self._raw()
            self.params[name] = float(value)
            try:
                self._bind(t, q, u)
            except KaneError:
                self.params[name] = old
                self._bind(t, q, u)
                raise

    def start_recording(self, path) -> None:
        """Write every step from now on to the HDF5 run file ``path`` (:class:`kane.io.trajectory.TrajectoryWriter`,
        safe on interruption) until :meth:`stop_recording`."""
        with self._lock:
            self.stop_recording()
            t, q, u = self._raw()
            self._bind(t, q, u, TrajectoryWriter(path))
            self.recording = Path(path)

    def stop_recording(self) -> Path | None:
        """Close the recording (its file renamed to the final path); the path, or None when none was open."""
        with self._lock:
            path, self.recording = self.recording, None
            if path is None:
                return None
            t, q, u = self._raw()
            if self._recorder is not None:
                self._recorder.close("stopped")
            else:
                self.sim.finish("stopped")
            self._bind(t, q, u)
            return path
