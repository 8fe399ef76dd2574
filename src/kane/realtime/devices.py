"""Haptic devices for the real-time loop: the :class:`Device` protocol, a simulated hand (a mass-spring-damper
pulled along a scripted path, what the tests use), the replay of a recorded log, and the check that refuses NaN
or absurd samples.

All positions [m], velocities [m/s] and forces [N] are 3-vectors in ground axes. ``read(t)`` is called once per
period with the loop's time t [s] (a hardware device may ignore it and return its latest measurement); it returns a
:class:`DeviceSample`, or None when the device gave no answer this period.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import ArgumentError

__all__ = ["DeviceSample", "Device", "Workspace", "check_sample", "SimulatedHand", "Replay"]


@dataclass(frozen=True)
class DeviceSample:
    """One reading: time ``t`` [s], handle ``position`` (3,) [m] and ``velocity`` (3,) [m/s]."""

    t: float
    position: np.ndarray
    velocity: np.ndarray


@dataclass(frozen=True)
class Workspace:
    """The box the handle can reach: ``lower`` and ``upper`` corners (3,) [m], and ``max_speed`` [m/s]; a sample
    outside the box or faster than that is absurd and refused."""

    lower: tuple = (-1.0, -1.0, -1.0)
    upper: tuple = (1.0, 1.0, 1.0)
    max_speed: float = 10.0


@runtime_checkable
class Device(Protocol):
    """What the loop needs of a haptic device: ``max_force`` [N], ``workspace`` (:class:`Workspace`), and
    open / read(t) -> DeviceSample or None / write_force(t, force (3,) [N]) / close."""

    max_force: float
    workspace: Workspace

    def open(self) -> None: ...

    def read(self, t: float) -> DeviceSample | None: ...

    def write_force(self, t: float, force: np.ndarray) -> None: ...

    def close(self) -> None: ...


def check_sample(sample: DeviceSample, workspace: Workspace) -> str | None:
    """None when ``sample`` is usable; otherwise why it is refused (NaN or inf, outside the workspace, faster than
    its maximum speed)."""
    x, v = np.asarray(sample.position, dtype=float), np.asarray(sample.velocity, dtype=float)
    if x.shape != (3,) or v.shape != (3,):
        return f"position and velocity must be 3-vectors, got shapes {x.shape} and {v.shape}"
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(v)) and np.isfinite(sample.t)):
        return "NaN or inf in the sample"
    lo, hi = np.asarray(workspace.lower, dtype=float), np.asarray(workspace.upper, dtype=float)
    if np.any(x < lo) or np.any(x > hi):
        return f"position {np.array2string(x, precision=4)} m outside the workspace [{lo}, {hi}] m"
    speed = float(np.sqrt(v @ v))
    if speed > workspace.max_speed:
        return f"speed {speed:.4g} m/s above the workspace's maximum {workspace.max_speed:g} m/s"
    return None


class SimulatedHand:
    """A person's hand holding the handle: a mass ``mass`` [kg] tied to a moving target by a spring ``stiffness``
    [N/m] and a damper ``damping`` [N s/m], the target following ``path(t) -> (position (3,), velocity (3,))``,
    and pushed by the device force (held between writes). ``read(t)`` advances the hand to t in ``substeps`` RK4
    steps per period (exact for the held force up to RK4's error) and returns its state.

    ``x0`` (3,) [m]: the starting position (default: the path at t = 0), at the path's velocity."""

    def __init__(self, path: Callable, *, mass: float = 0.5, stiffness: float = 400.0, damping: float = 10.0,
                 max_force: float = 20.0, workspace: Workspace = Workspace(), substeps: int = 1, x0=None):
        for name, value in (("mass", mass), ("max_force", max_force)):
            if not (np.isfinite(value) and value > 0):
                raise ArgumentError(f"SimulatedHand: {name} must be a finite number > 0, got {value!r}")
        for name, value in (("stiffness", stiffness), ("damping", damping)):
            if not (np.isfinite(value) and value >= 0):
                raise ArgumentError(f"SimulatedHand: {name} must be a finite number >= 0, got {value!r}")
        self.path, self.mass, self.stiffness, self.damping = path, float(mass), float(stiffness), float(damping)
        self.max_force, self.workspace, self.substeps = float(max_force), workspace, int(substeps)
        p0, v0 = (np.asarray(a, dtype=float) for a in path(0.0))
        self._x0 = p0 if x0 is None else np.asarray(x0, dtype=float)
        self._v0 = v0
        self.open()

    def open(self) -> None:
        """Start (again) at t = 0 at the initial position, no force."""
        self.t, self.x, self.v = 0.0, self._x0.copy(), self._v0.copy()
        self.force = np.zeros(3)

    def _acc(self, t, x, v):
        p, pv = self.path(t)
        return (self.stiffness * (p - x) + self.damping * (pv - v) + self.force) / self.mass

    def read(self, t: float) -> DeviceSample:
        """Advance to ``t`` [s] (no step back) and return the hand's state."""
        if t > self.t:
            n = self.substeps
            h = (t - self.t) / n
            x, v, s = self.x, self.v, self.t
            for _ in range(n):
                k1x, k1v = v, self._acc(s, x, v)
                k2x, k2v = v + h / 2 * k1v, self._acc(s + h / 2, x + h / 2 * k1x, v + h / 2 * k1v)
                k3x, k3v = v + h / 2 * k2v, self._acc(s + h / 2, x + h / 2 * k2x, v + h / 2 * k2v)
                k4x, k4v = v + h * k3v, self._acc(s + h, x + h * k3x, v + h * k3v)
                x = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
                v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
                s += h
            self.x, self.v, self.t = x, v, float(t)
        return DeviceSample(self.t, self.x.copy(), self.v.copy())

    def write_force(self, t: float, force) -> None:
        """The force [N] (3,) the device pushes the hand with from now on."""
        self.force = np.array(force, dtype=float).reshape(3)

    def close(self) -> None:
        self.force = np.zeros(3)


class Replay:
    """A recorded device log played back: ``t`` (N,) [s] increasing, ``position`` and ``velocity`` (N, 3); ``read(t)``
    returns the last record at or before t (None after the last record plus ``hold`` [s], as a device that stopped
    answering). Forces written to it are kept in ``forces`` (list of (t, force)) and not acted upon."""

    def __init__(self, t, position, velocity, *, max_force: float = 20.0, workspace: Workspace = Workspace(),
                 hold: float = 0.0):
        self.times = np.asarray(t, dtype=float).reshape(-1)
        self.position = np.asarray(position, dtype=float).reshape(-1, 3)
        self.velocity = np.asarray(velocity, dtype=float).reshape(-1, 3)
        n = self.times.shape[0]
        if n == 0 or self.position.shape[0] != n or self.velocity.shape[0] != n:
            raise ArgumentError(f"Replay: t has {n} records, position {self.position.shape[0]} and velocity "
                                f"{self.velocity.shape[0]}; expected the same number, at least one")
        if np.any(np.diff(self.times) <= 0):
            raise ArgumentError("Replay: the record times t must increase")
        self.max_force, self.workspace, self.hold = float(max_force), workspace, float(hold)
        self.forces: list = []

    @classmethod
    def from_log(cls, path, **options) -> Replay:
        """The device records (t, hand_position, hand_velocity) of a real-time log file (HDF5)."""
        import h5py

        with h5py.File(path, "r") as f:
            n = int(f["n_committed"][0])
            return cls(f["t"][:n], f["hand_position"][:n], f["hand_velocity"][:n], **options)

    def open(self) -> None:
        self.forces = []

    def read(self, t: float) -> DeviceSample | None:
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        if k < 0 or t > self.times[-1] + self.hold:
            return None
        return DeviceSample(float(self.times[k]), self.position[k].copy(), self.velocity[k].copy())

    def write_force(self, t: float, force) -> None:
        self.forces.append((float(t), np.array(force, dtype=float).reshape(3)))

    def close(self) -> None:
        pass
