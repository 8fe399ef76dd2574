"""Haptic devices for the real-time loop: the :class:`Device` protocol, a simulated hand (a mass-spring-damper
pulled along a scripted path, what the tests use), the replay of a recorded log, and the check that refuses NaN
or absurd samples.

All positions [m], velocities [m/s] and forces [N] are 3-vectors in ground axes; with a full pose coupled, the
handle's orientation is a rotation matrix (3, 3) (its axes to ground axes), its angular velocity [rad/s] and the
torque [N m] 3-vectors in ground axes. ``read(t)`` is called once per
period with the loop's time t [s] (a hardware device may ignore it and return its latest measurement); it returns a
:class:`DeviceSample`, or None when the device gave no answer this period.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..errors import ArgumentError

__all__ = ["DeviceSample", "SampleBlock", "Device", "Workspace", "check_sample", "check_samples", "SimulatedHand",
           "Replay"]


class DeviceSample(NamedTuple):
    """One reading: time ``t`` [s], handle ``position`` (3,) [m] and ``velocity`` (3,) [m/s] (arrays or tuples of three
    floats: the simulated hand and the UDP device give tuples, allocating no array in the loop's period); a device
    that measures its handle's pose also gives ``orientation`` (3, 3) (the handle's axes to ground axes) and
    ``angular_velocity`` (3,) [rad/s] in ground axes (None: not measured). A named tuple: immutable, and built in
    a fraction of a frozen dataclass's time (one per period)."""

    t: float
    position: np.ndarray
    velocity: np.ndarray
    orientation: object = None
    angular_velocity: object = None


class SampleBlock(NamedTuple):
    """The readings of N periods at once (:meth:`Replay.read_block`): ``present`` (N,) bool (False: no answer, as a
    ``read`` that returns None; the other fields of such a row are NaN), ``t`` (N,) [s], ``position`` and
    ``velocity`` (N, 3) [m, m/s]; with a pose, ``orientation`` (N, 3, 3) and ``angular_velocity`` (N, 3) [rad/s]
    (None: not measured)."""

    present: np.ndarray
    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    orientation: np.ndarray | None = None
    angular_velocity: np.ndarray | None = None


@dataclass(frozen=True)
class Workspace:
    """The box the handle can reach: ``lower`` and ``upper`` corners (3,) [m], ``max_speed`` [m/s] and
    ``max_angular_speed`` [rad/s]; a sample outside the box or faster than those is absurd and refused."""

    lower: tuple = (-1.0, -1.0, -1.0)
    upper: tuple = (1.0, 1.0, 1.0)
    max_speed: float = 10.0
    max_angular_speed: float = 50.0


@runtime_checkable
class Device(Protocol):
    """What the loop needs of a haptic device: ``max_force`` [N], ``workspace`` (:class:`Workspace`), and
    open / read(t) -> DeviceSample or None / write_force(t, force: three floats [N], a tuple) / close. To couple a
    full pose, its samples carry the orientation and it has ``write_torque(t, torque: three floats [N m])`` (a
    device that may or may not, such as :class:`kane.realtime.UdpDevice`, says which in ``pose``)."""

    max_force: float
    workspace: Workspace

    def open(self) -> None: ...

    def read(self, t: float) -> DeviceSample | None: ...

    def write_force(self, t: float, force) -> None: ...

    def close(self) -> None: ...


def check_sample(sample: DeviceSample, workspace: Workspace, pose: bool = False) -> str | None:
    """None when ``sample`` is usable; otherwise why it is refused (not three numbers each, NaN or inf, outside the
    workspace, faster than its maximum speed; with ``pose``, no orientation, one that is not a rotation to 1e-6, or
    an angular velocity that is not finite or above the maximum). Works on Python floats (no numpy allocation on
    the usable path)."""
    try:
        x = [float(a) for a in sample.position]
        v = [float(a) for a in sample.velocity]
        t = float(sample.t)
    except (TypeError, ValueError):
        return "position and velocity must be sequences of numbers and t a number"
    if len(x) != 3 or len(v) != 3:
        return f"position and velocity must be 3-vectors, got {len(x)} and {len(v)} components"
    if not all(math.isfinite(a) for a in (*x, *v, t)):
        return "NaN or inf in the sample"
    lo, hi = workspace.lower, workspace.upper
    if not (lo[0] <= x[0] <= hi[0] and lo[1] <= x[1] <= hi[1] and lo[2] <= x[2] <= hi[2]):
        return f"position {np.array2string(np.array(x), precision=4)} m outside the workspace [{lo}, {hi}] m"
    speed = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if speed > workspace.max_speed:
        return f"speed {speed:.4g} m/s above the workspace's maximum {workspace.max_speed:g} m/s"
    return _check_pose(sample, workspace) if pose else None


def _check_pose(sample: DeviceSample, workspace: Workspace) -> str | None:
    """Why the orientation and angular velocity of ``sample`` are refused, or None."""
    if sample.orientation is None or sample.angular_velocity is None:
        return "no orientation or angular velocity in the sample (the coupler couples a full pose)"
    try:
        R = [[float(a) for a in row] for row in sample.orientation]
        w = [float(a) for a in sample.angular_velocity]
    except (TypeError, ValueError):
        return "orientation must be 3 x 3 numbers and angular velocity three"
    if len(R) != 3 or any(len(row) != 3 for row in R) or len(w) != 3:
        return "orientation must be 3 x 3 numbers and angular velocity three"
    if not all(math.isfinite(a) for a in (*R[0], *R[1], *R[2], *w)):
        return "NaN or inf in the orientation or angular velocity"
    gram = max(abs(sum(R[k][i] * R[k][j] for k in range(3)) - (i == j)) for i in range(3) for j in range(3))
    det = (R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) - R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0])
           + R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]))
    if gram > 1e-6 or det < 0:
        return f"orientation is not a rotation (R^T R - I off by {gram:.3g}, det {det:.6g})"
    rate = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    if rate > workspace.max_angular_speed:
        return f"angular speed {rate:.4g} rad/s above the workspace's maximum {workspace.max_angular_speed:g} rad/s"
    return None


def check_samples(block: SampleBlock, workspace: Workspace, pose: bool = False) -> np.ndarray:
    """(N,) bool: which present rows of ``block`` :func:`check_sample` accepts, by its rules and its arithmetic
    (the same sums in the same order, so a sample on a limit is judged the same): finite, inside the workspace,
    not faster than its maxima; with ``pose``, an orientation that is a rotation to 1e-6 (R^T R - I and det)."""
    x, v, t = block.position, block.velocity, block.t
    lo, hi = workspace.lower, workspace.upper
    with np.errstate(invalid="ignore", over="ignore"):
        ok = block.present & np.isfinite(t) & np.isfinite(x).all(axis=1) & np.isfinite(v).all(axis=1)
        for i in range(3):
            ok &= (lo[i] <= x[:, i]) & (x[:, i] <= hi[i])
        ok &= ~(np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]) > workspace.max_speed)
        if not pose:
            return ok
        if block.orientation is None or block.angular_velocity is None:
            return np.zeros_like(ok)
        R, w = block.orientation, block.angular_velocity
        ok &= np.isfinite(R).all(axis=(1, 2)) & np.isfinite(w).all(axis=1)
        gram = np.zeros(ok.shape)
        for i in range(3):
            for j in range(3):
                dot = R[:, 0, i] * R[:, 0, j] + R[:, 1, i] * R[:, 1, j] + R[:, 2, i] * R[:, 2, j]
                gram = np.maximum(gram, np.abs(dot - (i == j)))
        det = (R[:, 0, 0] * (R[:, 1, 1] * R[:, 2, 2] - R[:, 1, 2] * R[:, 2, 1])
               - R[:, 0, 1] * (R[:, 1, 0] * R[:, 2, 2] - R[:, 1, 2] * R[:, 2, 0])
               + R[:, 0, 2] * (R[:, 1, 0] * R[:, 2, 1] - R[:, 1, 1] * R[:, 2, 0]))
        ok &= ~((gram > 1e-6) | (det < 0))
        ok &= ~(np.sqrt(w[:, 0] * w[:, 0] + w[:, 1] * w[:, 1] + w[:, 2] * w[:, 2]) > workspace.max_angular_speed)
    return ok


class SimulatedHand:
    """A person's hand holding the handle: a mass ``mass`` [kg] tied to a moving target by a spring ``stiffness``
    [N/m] and a damper ``damping`` [N s/m], the target following ``path(t) -> (position (3,), velocity (3,))``,
    and pushed by the device force (held between writes). ``read(t)`` advances the hand to t in ``substeps`` RK4
    steps per period (exact for the held force up to RK4's error) and returns its state. A ``path`` that returns
    (position, velocity, orientation (3, 3), angular velocity (3,)) turns the handle too: the hand holds the
    path's orientation rigidly (no rotational compliance; the torque written to it is kept in ``torque``).

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
        first = path(0.0)
        self.turns = len(first) == 4  # the path gives the handle's orientation too
        self._translation = (lambda s: path(s)[:2]) if self.turns else path
        p0, v0 = (np.asarray(a, dtype=float) for a in first[:2])
        self._x0 = p0 if x0 is None else np.asarray(x0, dtype=float)
        self._v0 = v0
        self.open()

    def open(self) -> None:
        """Start (again) at t = 0 at the initial position, no force."""
        self.t = 0.0
        self._x, self._v = [float(a) for a in self._x0], [float(a) for a in self._v0]
        self.force = self.torque = (0.0, 0.0, 0.0)

    @property
    def x(self) -> np.ndarray:
        """The hand's position (3,) [m]."""
        return np.array(self._x)

    @property
    def v(self) -> np.ndarray:
        """The hand's velocity (3,) [m/s]."""
        return np.array(self._v)

    def read(self, t: float) -> DeviceSample:
        """Advance to ``t`` [s] (no step back) and return the hand's state (tuples of floats). RK4 on Python floats,
        axis by axis (the hand's equation is linear and the axes uncoupled); the path is evaluated once at each
        step's start, middle and end."""
        if t > self.t:
            n = self.substeps
            h = (t - self.t) / n
            k, c, m, f = self.stiffness, self.damping, self.mass, self.force
            x, v, s = self._x, self._v, self.t
            for _ in range(n):
                p0, w0 = self._translation(s)
                p1, w1 = self._translation(s + h / 2)
                p2, w2 = self._translation(s + h)
                x, v = list(x), list(v)
                for i in range(3):
                    xi, vi, fi = x[i], v[i], f[i]
                    a1 = (k * (p0[i] - xi) + c * (w0[i] - vi) + fi) / m
                    x2, v2 = xi + h / 2 * vi, vi + h / 2 * a1
                    a2 = (k * (p1[i] - x2) + c * (w1[i] - v2) + fi) / m
                    x3, v3 = xi + h / 2 * v2, vi + h / 2 * a2
                    a3 = (k * (p1[i] - x3) + c * (w1[i] - v3) + fi) / m
                    x4, v4 = xi + h * v3, vi + h * a3
                    a4 = (k * (p2[i] - x4) + c * (w2[i] - v4) + fi) / m
                    x[i] = float(xi + h / 6 * (vi + 2 * v2 + 2 * v3 + v4))
                    v[i] = float(vi + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4))
                s += h
            self._x, self._v, self.t = x, v, float(t)
        if self.turns:
            orientation, angular_velocity = self.path(self.t)[2:]
            return DeviceSample(self.t, tuple(self._x), tuple(self._v), orientation, angular_velocity)
        return DeviceSample(self.t, tuple(self._x), tuple(self._v))

    def write_force(self, t: float, force) -> None:
        """The force [N] (three numbers) the device pushes the hand with from now on."""
        fx, fy, fz = force
        self.force = (float(fx), float(fy), float(fz))

    def write_torque(self, t: float, torque) -> None:
        """The torque [N m] (three numbers) the device turns the handle with (kept; the hand holds its path's
        orientation)."""
        tx, ty, tz = torque
        self.torque = (float(tx), float(ty), float(tz))

    def close(self) -> None:
        self.force = self.torque = (0.0, 0.0, 0.0)


class Replay:
    """A recorded device log played back: ``t`` (N,) [s] increasing, ``position`` and ``velocity`` (N, 3); ``read(t)``
    returns the last record at or before t (None after the last record plus ``hold`` [s], as a device that stopped
    answering). Forces written to it are kept in ``forces`` (list of (t, force)) and not acted upon. With
    ``orientation`` (N, 3, 3) and ``angular_velocity`` (N, 3) the handle's pose is replayed too (``pose``; torques
    written are kept in ``torques``)."""

    def __init__(self, t, position, velocity, *, max_force: float = 20.0, workspace: Workspace = Workspace(),
                 hold: float = 0.0, orientation=None, angular_velocity=None):
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
        self.pose = orientation is not None
        if self.pose:
            self.orientation = np.asarray(orientation, dtype=float).reshape(-1, 3, 3)
            self.angular_velocity = np.asarray(angular_velocity, dtype=float).reshape(-1, 3)
            if self.orientation.shape[0] != n or self.angular_velocity.shape[0] != n:
                raise ArgumentError(f"Replay: t has {n} records, orientation {self.orientation.shape[0]} and "
                                    f"angular_velocity {self.angular_velocity.shape[0]}; expected the same number")
        self.forces: list = []
        self.torques: list = []

    @classmethod
    def from_log(cls, path, **options) -> Replay:
        """The device records (t, hand_position, hand_velocity, and the hand's orientation and angular velocity when
        the log coupled a full pose) of a real-time log file (HDF5, its committed rows; a partial log of a killed
        run too). A file that is not such a log raises ArgumentError naming it and what it lacks."""
        from .log_reader import read_log_columns

        attrs, c = read_log_columns(path, ("t", "hand_position", "hand_velocity"), role="replay log")
        if "hand_orientation" in attrs["datasets"]:
            c.update(read_log_columns(path, ("hand_orientation", "hand_angular_velocity"), role="replay log")[1])
            options = {"orientation": c["hand_orientation"], "angular_velocity": c["hand_angular_velocity"],
                       **options}
        try:
            return cls(c["t"], c["hand_position"], c["hand_velocity"], **options)
        except ArgumentError as exc:
            raise ArgumentError(f"replay log {str(path)!r}: {exc}") from None

    def open(self) -> None:
        self.forces = []

    def read(self, t: float) -> DeviceSample | None:
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        if k < 0 or t > self.times[-1] + self.hold:
            return None
        if self.pose:
            return DeviceSample(float(self.times[k]), self.position[k].copy(), self.velocity[k].copy(),
                                self.orientation[k].copy(), self.angular_velocity[k].copy())
        return DeviceSample(float(self.times[k]), self.position[k].copy(), self.velocity[k].copy())

    def read_block(self, t) -> SampleBlock:
        """What :meth:`read` returns at each of the times ``t`` (N,) [s], as one :class:`SampleBlock` (the same
        records, copied; absent rows NaN)."""
        t = np.asarray(t, dtype=float).reshape(-1)
        k = np.searchsorted(self.times, t, side="right") - 1
        present = (k >= 0) & ~(t > self.times[-1] + self.hold)
        k = np.where(present, k, 0)

        def rows(a):
            out = a[k]
            out[~present] = np.nan
            return out

        if self.pose:
            return SampleBlock(present, rows(self.times), rows(self.position), rows(self.velocity),
                               rows(self.orientation), rows(self.angular_velocity))
        return SampleBlock(present, rows(self.times), rows(self.position), rows(self.velocity))

    def write_force(self, t: float, force) -> None:
        self.forces.append((float(t), np.array(force, dtype=float).reshape(3)))

    def write_torque(self, t: float, torque) -> None:
        self.torques.append((float(t), np.array(torque, dtype=float).reshape(3)))

    def close(self) -> None:
        pass
