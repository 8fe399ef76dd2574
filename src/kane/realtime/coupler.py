"""The virtual coupler of Colgate, Stanley and Brown (1995) and Brown and Colgate (1997), as used by Gillespie
(2003, seed 000, Step 3 of Example 3): a spring and damper between the device handle and a point of a body.

The coupler force on the body point is F = K (x_h - x_b) + B (v_h - v_b) [N] (ground axes; x_h, v_h the handle's
position [m] and velocity [m/s], x_b, v_b the body point's), saturated to the device's maximum force; the device
displays -F. F enters the equations of motion as three named System inputs (:func:`add_coupler`), so nothing is
re-derived when the handle moves.

Sampled-data passivity: a spring K held over a period T (zero-order hold) creates up to K |dx|^2 / 2 of energy per
period; the damper removes about B |v|^2 T. The coupler (and so the coupled system, for any passive virtual
system) stays passive when B >= K T / 2 (Colgate's condition, device damping aside), which
:func:`check_gains` tests, with a :class:`PassivityWarning` naming the bound when it does not hold. The upper limits
on the gains, set by the coupled point's effective mass and the dynamics' step, are in :mod:`.coupler_stability`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..codegen.c_backend import CCompileError, CFunction
from ..codegen.numpy_backend import compile_program
from ..codegen.program import ProgramBuilder
from ..errors import ArgumentError, ModelError
from ..mechanics.kinematics import TreeKinematics
from ..spatial import rotation_vector

__all__ = ["CouplerGains", "PassivityWarning", "passivity_bound", "check_gains", "CouplerPort", "add_coupler",
           "torque_work",
           "CouplerForce", "VirtualCoupler"]


class PassivityWarning(UserWarning):
    """The coupler's damping is below the sampled-data passivity bound B >= K T / 2: a stiff virtual contact may
    gain energy and chatter or go unstable."""


@dataclass(frozen=True)
class CouplerGains:
    """Gains of the coupler: translational ``stiffness`` K [N/m] and ``damping`` B [N s/m]; with a full pose
    coupled (:func:`add_coupler` ``rotational=True``) also ``rotational_stiffness`` K_r [N m/rad] and
    ``rotational_damping`` B_r [N m s/rad]; all >= 0."""

    stiffness: float
    damping: float
    rotational_stiffness: float = 0.0
    rotational_damping: float = 0.0

    def __post_init__(self):
        for name in ("stiffness", "damping", "rotational_stiffness", "rotational_damping"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value >= 0):
                raise ArgumentError(f"coupler gains: {name} must be a finite number >= 0, got {value!r}")


def passivity_bound(stiffness: float, period: float, device_damping: float = 0.0) -> float:
    """The least coupler damping [N s/m] for which a spring of ``stiffness`` K [N/m] sampled every ``period`` T [s]
    stays passive: K T / 2 - ``device_damping`` (the device's own physical damping [N s/m] counts towards it),
    never below 0."""
    if not period > 0:
        raise ArgumentError(f"passivity bound: the period must be > 0 s, got {period!r}")
    return max(0.0, stiffness * period / 2.0 - device_damping)


def check_gains(gains: CouplerGains, period: float, device_damping: float = 0.0) -> bool:
    """True when ``gains`` respect the sampled-data passivity bound at ``period`` T [s]; otherwise warn (a
    :class:`PassivityWarning` naming the bound and the values) and return False."""
    bound = passivity_bound(gains.stiffness, period, device_damping)
    ok = gains.damping >= bound
    if not ok:
        warnings.warn(f"virtual coupler: damping B = {gains.damping:g} N s/m is below the sampled-data passivity "
                      f"bound B >= K T / 2 = {gains.stiffness:g} * {period:g} / 2 = {bound:g} N s/m (Colgate's "
                      f"condition, K the stiffness, T the period); the coupled system may gain energy",
                      PassivityWarning, stacklevel=2)
    rotational = passivity_bound(gains.rotational_stiffness, period)
    if gains.rotational_damping < rotational:
        warnings.warn(f"virtual coupler: rotational damping B_r = {gains.rotational_damping:g} N m s/rad is below "
                      f"the sampled-data passivity bound B_r >= K_r T / 2 = {gains.rotational_stiffness:g} * "
                      f"{period:g} / 2 = {rotational:g} N m s/rad; the coupled system may gain energy",
                      PassivityWarning, stacklevel=2)
        ok = False
    return ok


@dataclass(frozen=True)
class CouplerPort:
    """Where the coupler acts: ``body`` and ``point`` (body axes [m]), and the names of the System inputs that
    carry it: three ground-axes force components [N], then, with a full pose coupled, three ground-axes torque
    components [N m] on the body."""

    body: str
    point: tuple
    inputs: tuple

    @property
    def rotational(self) -> bool:
        """Whether the body's orientation is coupled too (six inputs: force, then torque)."""
        return len(self.inputs) == 6


def add_coupler(system, body: str, point=(0.0, 0.0, 0.0), *, prefix: str = "coupler",
                rotational: bool = False) -> CouplerPort:
    """Add the coupler's force to ``system`` (a :class:`kane.System`): three inputs ``<prefix>_fx``, ``_fy``,
    ``_fz`` [N] (ground axes, default 0) and a force of those components at ``point`` (body axes [m]) of ``body``;
    with ``rotational`` (a full pose coupled) also ``<prefix>_tx``, ``_ty``, ``_tz`` [N m], a torque on ``body`` in
    ground axes. Raises ModelError, listing the bodies, when ``body`` does not exist."""
    model = system.compile()
    model.body_index(body)  # ModelError listing the bodies
    if body == "ground":
        raise ModelError("virtual coupler: the coupled body cannot be 'ground'; choose a moving body")
    point = tuple(float(x) for x in np.asarray(point, dtype=float).reshape(3))
    names = tuple(f"{prefix}_f{a}" for a in "xyz")
    system.add_force(body, tuple(system.input(n) for n in names), point=point)
    if rotational:
        torques = tuple(f"{prefix}_t{a}" for a in "xyz")
        system.add_torque(body, tuple(system.input(n) for n in torques))
        names += torques
    return CouplerPort(body, point, names)


@dataclass(frozen=True)
class CouplerForce:
    """One evaluation of the coupler: ``force`` (3,) [N] on the body point (the device gets -force), ``saturated``
    whether it was limited, ``power`` [W] flowing from the device into the coupler (force . v_handle),
    ``spring_energy`` [J] K |x_h - x_b|^2 / 2, and the body point's ``position`` and ``velocity`` (3,)."""

    force: np.ndarray
    saturated: bool
    power: float
    spring_energy: float
    position: np.ndarray
    velocity: np.ndarray


class VirtualCoupler:
    """The coupler bound to ``dynamics`` (a :class:`kane.Dynamics` of a system given :func:`add_coupler`'s
    ``port``): evaluates the body point's position and velocity from (t, q, u) with a Program compiled once (C when
    the dynamics use the C backend), and the saturated force. ``max_force`` [N] (np.inf: none). With a full pose
    coupled (``port.rotational``) it also evaluates the body's orientation and angular velocity, and the torque
    K_r theta + B_r (w_h - w_b), theta the rotation vector (ground axes) that turns the body's axes onto the
    handle's, saturated to ``max_torque`` [N m]."""

    def __init__(self, dynamics, port: CouplerPort, gains: CouplerGains, *, max_force: float = np.inf,
                 params=None, max_torque: float = np.inf):
        model = dynamics.model
        missing = [n for n in port.inputs if n not in dynamics.input_names]
        if missing:
            raise ModelError(f"virtual coupler: the dynamics have no input {', '.join(missing)}; build the system "
                             f"with kane.realtime.add_coupler (inputs: {', '.join(dynamics.input_names) or 'none'})")
        i = model.body_index(port.body)
        if not max_force > 0:
            raise ArgumentError(f"virtual coupler: max_force must be > 0 N, got {max_force!r}")
        if not max_torque > 0:
            raise ArgumentError(f"virtual coupler: max_torque must be > 0 N m, got {max_torque!r}")
        self.dynamics, self.port, self.gains, self.max_force = dynamics, port, gains, float(max_force)
        self.max_torque, self.rotational = float(max_torque), port.rotational
        self.input_index = np.array([dynamics.input_names.index(n) for n in port.inputs])
        groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
        b = ProgramBuilder(groups, prefix="c")
        kin = TreeKinematics(model, b)
        outputs = {"x": kin.point_in_ground(i, port.point), "v": kin.point_velocity_in_ground(i, port.point)}
        if self.rotational:  # the body's axes to ground (row-major) and its angular velocity in ground axes
            R = kin.rotation_to_ground(i)
            outputs["R"] = [R[r, c] for r in range(3) for c in range(3)]
            outputs["w"] = kin.angular_velocity_in_ground(i)
        c_point = getattr(dynamics, "point_backend", dynamics.backend) == "c"  # a switching plant's modes in C
        self._fn = _compiled(b.build(outputs), list(outputs), c_point)
        self._params = params
        self._p = model.parameter_values(params)
        self._w = model.input_values()
        self._full = len(dynamics.u_dependent_names) > 0
        # the dependent speeds u_dep = D u + E, compiled here as the point's program is (C with the C backend):
        # one call with no argument checks in the period, rather than Dynamics.full_speeds
        program = dynamics.equations.program if self._full else None  # (dependent speeds: Kane's equations)
        self._u_full = None
        if program is not None and "u_full" in program.outputs:
            self._u_full = _compiled(program, ["u_full"], isinstance(self._fn, CFunction))
        self._k, self._b = float(gains.stiffness), float(gains.damping)
        self._kr, self._br = float(gains.rotational_stiffness), float(gains.rotational_damping)
        self._bound = None

    def point_state(self, t: float, q, u) -> tuple[np.ndarray, np.ndarray]:
        """The body point's position (3,) [m] and velocity (3,) [m/s] in ground axes at (t, q, independent u)."""
        x, v = self._evaluate(t, q, u)[:2]
        return np.array(x, dtype=float).reshape(3), np.array(v, dtype=float).reshape(3)

    def pose_state(self, t: float, q, u) -> tuple[np.ndarray, np.ndarray]:
        """The body's orientation (3, 3) (its axes to ground axes) and angular velocity (3,) [rad/s] in ground axes
        at (t, q, independent u); only with a full pose coupled."""
        if not self.rotational:
            raise ArgumentError("virtual coupler: its port couples a point, not a pose (add_coupler(..., "
                                "rotational=True) couples the body's orientation too)")
        R, w = self._evaluate(t, q, u)[2:]
        return np.array(R, dtype=float).reshape(3, 3), np.array(w, dtype=float).reshape(3)

    def _evaluate(self, t, q, u) -> list:
        """The compiled outputs at (t, q, independent u): x, v (and R, w with a full pose)."""
        q = np.ascontiguousarray(q, dtype=float)
        u = np.ascontiguousarray(u, dtype=float)
        if self._u_full is not None:
            u = self._u_full(float(t), q, u, self._p, self._w)[0]
        elif self._full:
            u = np.ascontiguousarray(self.dynamics.full_speeds(t, q, u, self._params))
        return list(self._fn(float(t), q, u, self._p, self._w))

    def force(self, t: float, q, u, handle_position, handle_velocity) -> CouplerForce:
        """The coupler at (t, q, u) with the handle at ``handle_position`` (3,) [m] moving at ``handle_velocity``
        (3,) [m/s], both ground axes."""
        xv = self.point_floats(t, q, u)
        fx, fy, fz, saturated, power, spring = self.force_floats(xv, handle_position, handle_velocity)
        return CouplerForce(np.array([fx, fy, fz]), saturated, power, spring, np.array(xv[:3]), np.array(xv[3:]))

    def point_floats(self, t: float, q, u) -> list:
        """The body point's position and velocity as six floats [x, y, z, vx, vy, vz] [m, m/s] (ground axes). When
        ``q`` and ``u`` are the float64 buffers given to :meth:`bind` (the compiled stepper's state), one C call
        into a preallocated output and no numpy allocation (the real-time loop's period)."""
        if self._bound is not None and q is self._bound[0] and u is self._bound[1]:
            t = float(t)
            if self._full_ptrs is not None:  # the dependent speeds into the bound full-speed buffer first
                self._kane_u_full(t, *self._full_ptrs)
            self._kane_f(t, *self._bound_ptrs)
            return self._out.tolist()
        return [float(a) for out in self._evaluate(t, q, u) for a in np.ravel(out)]

    def bind(self, q: np.ndarray, u: np.ndarray) -> None:
        """Evaluate :meth:`point_floats` straight from these buffers (float64 (n_q,), (n_u,) that keep their
        identity, such as the compiled stepper's q and u) with one C call (two with dependent speeds: u_full into a
        preallocated buffer, then the point); a no-op without the C backend (then every call goes through
        :meth:`point_state`)."""
        fn, full = self._fn, self._u_full
        if not isinstance(fn, CFunction) or (self._full and not isinstance(full, CFunction)):
            return
        ffi = fn.ffi
        self._out = np.zeros(18 if self.rotational else 6)
        self._w_c = np.ascontiguousarray(self._w, dtype=float)
        w = ffi.from_buffer(self._w_c) if self._w_c.size else ffi.new("double[1]")
        p = np.ascontiguousarray(self._p, dtype=float)
        q_ptr, u_ptr = ffi.from_buffer(q), ffi.from_buffer(u)
        self._full_ptrs = None
        if self._full:
            self._u_full_buf = np.zeros(full.sizes["nout"])
            u_full_ptr = ffi.from_buffer(self._u_full_buf)
            self._full_ptrs = (q_ptr, u_ptr, w, full.constants(p), u_full_ptr)
            self._kane_u_full, u_ptr = full.lib.kane_f, u_full_ptr
        self._bound = (q, u)
        self._bound_ptrs = (q_ptr, u_ptr, w, fn.constants(p), ffi.from_buffer(self._out))
        self._keep = w
        self._kane_f = fn.lib.kane_f

    def force_floats(self, point, handle_position, handle_velocity) -> tuple:
        """(fx, fy, fz, saturated, power, spring_energy) in floats from ``point`` (the six floats of
        :meth:`point_floats`) and the handle's position and velocity (three numbers each): the force [N] on the body
        point, saturated to ``max_force``; power [W] = force . handle velocity; K |x_h - x_b|^2 / 2 [J]."""
        xb, yb, zb, vxb, vyb, vzb = point
        xh, yh, zh = handle_position
        vxh, vyh, vzh = handle_velocity
        k, b = self._k, self._b
        dx, dy, dz = xh - xb, yh - yb, zh - zb
        fx, fy, fz = k * dx + b * (vxh - vxb), k * dy + b * (vyh - vyb), k * dz + b * (vzh - vzb)
        norm = math.sqrt(fx * fx + fy * fy + fz * fz)
        saturated = norm > self.max_force
        if saturated:
            s = self.max_force / norm
            fx, fy, fz = fx * s, fy * s, fz * s
        return (float(fx), float(fy), float(fz), saturated, float(fx * vxh + fy * vyh + fz * vzh),
                float(0.5 * k * (dx * dx + dy * dy + dz * dz)))

    def wrench_floats(self, pose, handle_position, handle_velocity, handle_orientation, handle_angular_velocity
                      ) -> tuple:
        """(fx, fy, fz, tx, ty, tz, saturated, power, spring_energy) in floats with a full pose coupled: ``pose``
        the 18 floats of :meth:`point_floats` (point, velocity, the body's axes to ground row by row, its angular
        velocity), the handle's position, velocity, orientation (nine floats, its axes to ground row by row) and
        angular velocity (three) [rad/s]. The force as :meth:`force_floats`; the torque [N m] on the body
        K_r theta + B_r (w_h - w_b), theta the rotation vector (:func:`kane.spatial.rotation_vector`) of
        R_h R_b^T, saturated to ``max_torque``;
        power and spring energy with the torque's terms added (torque . w_h, K_r |theta|^2 / 2)."""
        fx, fy, fz, saturated, power, spring = self.force_floats(pose[:6], handle_position, handle_velocity)
        wb, wh = pose[15:18], handle_angular_velocity
        th = _turn(pose[6:15], handle_orientation)
        kr, br = self._kr, self._br
        tx, ty, tz = (kr * th[j] + br * (wh[j] - wb[j]) for j in range(3))
        norm = math.sqrt(tx * tx + ty * ty + tz * tz)
        if norm > self.max_torque:
            s = self.max_torque / norm
            tx, ty, tz, saturated = tx * s, ty * s, tz * s, True
        return (fx, fy, fz, float(tx), float(ty), float(tz), saturated,
                power + float(tx * wh[0] + ty * wh[1] + tz * wh[2]),
                spring + 0.5 * kr * (th[0] * th[0] + th[1] * th[1] + th[2] * th[2]))


def torque_work(torque, before, after) -> float:
    """The work [J] of ``torque`` (three floats [N m], ground axes) held while the handle turned from orientation
    ``before`` to ``after`` (nine floats each, the handle's axes to ground row by row): torque . theta with theta
    the rotation vector of after before^T (exact for a turn about a fixed axis)."""
    th = _turn(before, after)
    return float(torque[0] * th[0] + torque[1] * th[1] + torque[2] * th[2])


def _turn(before, after) -> list:
    """The rotation vector [rad] (three floats, ground axes) of after before^T, from two orientations given as
    nine floats row by row: what turns the axes of ``before`` onto those of ``after``."""
    a, b = after, before
    return rotation_vector([[a[3 * r] * b[3 * c] + a[3 * r + 1] * b[3 * c + 1] + a[3 * r + 2] * b[3 * c + 2]
                             for c in range(3)] for r in range(3)]).tolist()


def _compiled(program, outputs: list, c: bool):
    """``program``'s ``outputs`` compiled to C when ``c`` (and a compiler works), else by the numpy backend."""
    if c:
        try:
            return CFunction(program, outputs)
        except CCompileError:
            pass
    return compile_program(program, outputs)
