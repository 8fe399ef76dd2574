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

__all__ = ["CouplerGains", "PassivityWarning", "passivity_bound", "check_gains", "CouplerPort", "add_coupler",
           "CouplerForce", "VirtualCoupler"]


class PassivityWarning(UserWarning):
    """The coupler's damping is below the sampled-data passivity bound B >= K T / 2: a stiff virtual contact may
    gain energy and chatter or go unstable."""


@dataclass(frozen=True)
class CouplerGains:
    """Translational gains of the coupler: ``stiffness`` K [N/m] and ``damping`` B [N s/m], both >= 0."""

    stiffness: float
    damping: float

    def __post_init__(self):
        for name in ("stiffness", "damping"):
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
    if gains.damping >= bound:
        return True
    warnings.warn(f"virtual coupler: damping B = {gains.damping:g} N s/m is below the sampled-data passivity bound "
                  f"B >= K T / 2 = {gains.stiffness:g} * {period:g} / 2 = {bound:g} N s/m (Colgate's condition, "
                  f"K the stiffness, T the period); the coupled system may gain energy", PassivityWarning,
                  stacklevel=2)
    return False


@dataclass(frozen=True)
class CouplerPort:
    """Where the coupler acts: ``body`` and ``point`` (body axes [m]), and the names of the three System inputs
    (ground-axes force components [N]) that carry its force."""

    body: str
    point: tuple
    inputs: tuple


def add_coupler(system, body: str, point=(0.0, 0.0, 0.0), *, prefix: str = "coupler") -> CouplerPort:
    """Add the coupler's force to ``system`` (a :class:`kane.System`): three inputs ``<prefix>_fx``, ``_fy``,
    ``_fz`` [N] (ground axes, default 0) and a force of those components at ``point`` (body axes [m]) of ``body``.
    Raises ModelError, listing the bodies, when ``body`` does not exist."""
    model = system.compile()
    model.body_index(body)  # ModelError listing the bodies
    if body == "ground":
        raise ModelError("virtual coupler: the coupled body cannot be 'ground'; choose a moving body")
    point = tuple(float(x) for x in np.asarray(point, dtype=float).reshape(3))
    names = tuple(f"{prefix}_f{a}" for a in "xyz")
    system.add_force(body, tuple(system.input(n) for n in names), point=point)
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
    the dynamics use the C backend), and the saturated force. ``max_force`` [N] (np.inf: none)."""

    def __init__(self, dynamics, port: CouplerPort, gains: CouplerGains, *, max_force: float = np.inf,
                 params=None):
        model = dynamics.model
        missing = [n for n in port.inputs if n not in dynamics.input_names]
        if missing:
            raise ModelError(f"virtual coupler: the dynamics have no input {', '.join(missing)}; build the system "
                             f"with kane.realtime.add_coupler (inputs: {', '.join(dynamics.input_names) or 'none'})")
        i = model.body_index(port.body)
        if not max_force > 0:
            raise ArgumentError(f"virtual coupler: max_force must be > 0 N, got {max_force!r}")
        self.dynamics, self.port, self.gains, self.max_force = dynamics, port, gains, float(max_force)
        self.input_index = np.array([dynamics.input_names.index(n) for n in port.inputs])
        groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
        b = ProgramBuilder(groups, prefix="c")
        kin = TreeKinematics(model, b)
        prog = b.build({"x": kin.point_in_ground(i, port.point), "v": kin.point_velocity_in_ground(i, port.point)})
        self._fn = _compiled(prog, ["x", "v"], dynamics.backend == "c")
        self._params = params
        self._p = model.parameter_values(params)
        self._w = model.input_values()
        self._full = len(dynamics.u_dependent_names) > 0
        # the dependent speeds u_dep = D u + E, compiled here as the point's program is (C with the C backend):
        # one call with no argument checks in the period, rather than Dynamics.full_speeds
        program = getattr(getattr(dynamics, "equations", None), "program", None)
        self._u_full = None
        if self._full and program is not None and "u_full" in program.outputs:
            self._u_full = _compiled(program, ["u_full"], isinstance(self._fn, CFunction))
        self._k, self._b = float(gains.stiffness), float(gains.damping)
        self._bound = None

    def point_state(self, t: float, q, u) -> tuple[np.ndarray, np.ndarray]:
        """The body point's position (3,) [m] and velocity (3,) [m/s] in ground axes at (t, q, independent u)."""
        q = np.ascontiguousarray(q, dtype=float)
        u = np.ascontiguousarray(u, dtype=float)
        if self._u_full is not None:
            u = self._u_full(float(t), q, u, self._p, self._w)[0]
        elif self._full:
            u = np.ascontiguousarray(self.dynamics.full_speeds(t, q, u, self._params))
        x, v = self._fn(float(t), q, u, self._p, self._w)
        return np.array(x, dtype=float).reshape(3), np.array(v, dtype=float).reshape(3)

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
        x, v = self.point_state(t, q, u)
        return [*x.tolist(), *v.tolist()]

    def bind(self, q: np.ndarray, u: np.ndarray) -> None:
        """Evaluate :meth:`point_floats` straight from these buffers (float64 (n_q,), (n_u,) that keep their
        identity, such as the compiled stepper's q and u) with one C call (two with dependent speeds: u_full into a
        preallocated buffer, then the point); a no-op without the C backend (then every call goes through
        :meth:`point_state`)."""
        fn, full = self._fn, self._u_full
        if not isinstance(fn, CFunction) or (self._full and not isinstance(full, CFunction)):
            return
        ffi = fn.ffi
        self._out = np.zeros(6)
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


def _compiled(program, outputs: list, c: bool):
    """``program``'s ``outputs`` compiled to C when ``c`` (and a compiler works), else by the numpy backend."""
    if c:
        try:
            return CFunction(program, outputs)
        except CCompileError:
            pass
    return compile_program(program, outputs)
