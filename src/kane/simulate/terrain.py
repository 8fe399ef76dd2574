"""A sphere or a wheel rolling without slip on fixed terrain (any :class:`kane.surfaces.Surface`, NURBS included)
in the embedded Kane formulation (issue 16 item 3; seed 003's surface contact, seed 000's embedded constraints).

The body is on a free joint: q = (x, y, z) of its centre c in ground axes and a scalar-first quaternion, speeds
(omega, v) in body axes. Its surface is a torus about the body axis a_b: tube centres on the circle of radius R_w
(the rim) about c, tube radius rho; R_w = 0 is a sphere of radius rho, rho = 0 a thin disk of radius R_w. With n
the terrain's unit normal at the contact (pointing to the body), the body's point nearest the terrain is
p = c - R_w k - rho n, k the unit vector of the wheel's plane nearest n (k = (I - a a^T) n / |(I - a a^T) n|).
That material point has zero velocity; in body axes, with n_b = R^T n,

    v + omega x (-R_w k_b - rho n_b) = 0                (3 rows, embedded: v dependent, omega independent).

The rows are derived once by :func:`kane.derive` with the normal entering as named inputs, written as the first-
order expansion n(t) = n0 + (t - t0) n_dot about the evaluation time, so that the derivation's time derivative of
the rows (the acceleration level, seed 000 Eq. 44) carries the normal's rate n_dot; every evaluation sets t0 = t,
n0 = n and n_dot from the terrain.

At each evaluation the contact coordinates z = (s, t) on the terrain solve F(z) = 0, F = (S_s . r, S_t . r) with
r = c - R_w k(n(z)) - S(z) (r along n: the tube centre straight over the contact), by Newton from the previous
solution (warm start; for a sphere, :func:`kane.surfaces.closest_point`). Its Jacobian, with the terrain's second
derivatives, is F_z = [S_ij . r + S_i . (p_j - S_j)], p_j = -R_w (I - k k^T)(I - a a^T) n_j / |(I - a a^T) n|,
n_j = P (S_ss x S_t + S_s x S_st) / |N| (j = s; likewise t), N = S_s x S_t, P = I - n n^T. Along the motion
F_z z' + (S_s . p', S_t . p') = 0, p' the rate of the tube centre at fixed z (c' from the compiled q', which does
not use n_dot, and the turning of a with omega), and n_dot = n_s s' + n_t t'.

The holonomic part (the tube centre at height rho over the terrain) is kept at velocity level by the normal row
(the rate of the height) and its drift removed by :meth:`RollingOnTerrain.project` (the centre moved along n, the
quaternion normalized), as a Simulator ``projection`` hook.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError, ModelError
from ..model import joints as J
from ..model.model import t as TIME
from ..model.system import System
from ..protocol import Capabilities, model_quaternion_check, unsupported
from ..spatial import quaternion_to_rotation
from ..surfaces import Surface, closest_point
from ..surfaces.base import cross3
from ..surfaces.closest import keep_in_bounds
from ..symbolic.derive import derive

__all__ = ["RollingOnTerrain", "RollingSphereOnTerrain", "RollingWheelOnTerrain", "TerrainContact",
           "TerrainContactError"]

_NORMAL = ("terrain_nx", "terrain_ny", "terrain_nz")
_RATE = ("terrain_nx_rate", "terrain_ny_rate", "terrain_nz_rate")
_T0 = "terrain_t0"


class TerrainContactError(ModelError):
    """The contact cannot be evaluated: it left the terrain's patch, or the body is far from touching (a bad start;
    during a run kane.simulate reports it as a SimulationError with the last good state). Attributes ``surface``
    (its name), ``parameter`` ("s", "t" or "gap"), ``value`` (the parameter's value, or the gap [m])."""

    def __init__(self, message: str, surface: str, parameter: str, value: float):
        super().__init__(message)
        self.surface, self.parameter, self.value = surface, parameter, value


@dataclass(frozen=True)
class TerrainContact:
    """The contact at one state: terrain parameters ``s``, ``t``; the terrain ``point`` (3,) [m]; the unit
    ``normal`` (3,) pointing to the body; its rate ``normal_rate`` (3,) [1/s] (zero without speeds); ``gap``
    h - rho [m], the tube centre's height over the terrain less the tube radius (the holonomic constraint's
    drift)."""

    s: float
    t: float
    point: np.ndarray
    normal: np.ndarray
    normal_rate: np.ndarray
    gap: float


class RollingOnTerrain:
    """Dynamics (the kane interface: ``qdot``, ``udot``, ``energy``, ``n_q`` = 7, ``n_u`` = 3) of a body whose
    surface is a torus (``rim`` R_w [m], ``tube`` rho [m], ``axis`` a_b in body axes; see the module docstring)
    rolling without slip on the fixed ``terrain`` (ground axes) under ``gravity`` (3,) [m/s^2]. ``mass`` [kg],
    ``com`` (3,) [m] from the centre, ``inertia`` (Ixx, Iyy, Izz[, Ixy, Iyz, Izx]) [kg m^2] in body axes.
    ``gap_tol`` [m] (default 1 % of the radius): an evaluation (an integrator's trial stage included) whose tube
    centre is farther than this from height rho over the terrain raises :class:`TerrainContactError`.
    ``backend``: as for :meth:`kane.Equations.compile`. Start a run from :meth:`initial_state`. Use
    :class:`RollingSphereOnTerrain` or :class:`RollingWheelOnTerrain`."""

    kind = "body"

    def __init__(self, terrain: Surface, mass: float, *, rim: float, tube: float, axis, com, inertia, gravity,
                 gap_tol: float | None, backend: str | None, name: str):
        if not isinstance(terrain, Surface):
            raise ArgumentError(f"rolling {self.kind} {name!r}: terrain must be a kane.surfaces Surface, got "
                                f"{type(terrain).__name__}")
        gap_tol = 0.01 * max(rim, tube) if gap_tol is None else gap_tol
        for field, value, low in (("mass", mass, 0), ("gap_tol", gap_tol, 0), ("radius", max(rim, tube), 0),
                                  ("tube_radius", tube, -1)):
            if not (isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value) and value > low):
                raise ArgumentError(f"rolling {self.kind} {name!r}: {field} must be a "
                                    f"{'non-negative' if low else 'positive'} finite number, got {value!r}")
        a = np.asarray(axis, dtype=float).reshape(3)
        if not np.linalg.norm(a) > 0:
            raise ArgumentError(f"rolling {self.kind} {name!r}: axis must be a non-zero vector, got {axis!r}")
        self.terrain, self.rim, self.tube, self.axis = terrain, float(rim), float(tube), a / np.linalg.norm(a)
        self.gap_tol, self.name = float(gap_tol), str(name)
        self.system = _rolling_system(self.name, self.rim, self.tube, self.axis, mass, com, inertia, gravity)
        self.equations = derive(self.system, dependent=[f"u_free_{k}" for k in (4, 5, 6)])
        self.dynamics = self.equations.compile(backend)
        self._numeric = compile_program(self.equations.program, ["kinetic", "potential", "u_full"])
        self.model = self.dynamics.model
        self.n_q, self.n_u = self.dynamics.n_q, self.dynamics.n_u
        self.q_names, self.u_names = self.dynamics.q_names, self.dynamics.u_names
        self.description = f"{self.kind} {self.name!r} rolling on surface {terrain.name!r}"
        names = [str(s) for s in self.model.inputs]
        self._slots = ([names.index(n) for n in _NORMAL], [names.index(n) for n in _RATE], names.index(_T0))
        self._cache = (None, None)
        self._st = None  # the last contact parameters: the warm start of the next Newton solve
        self.side = 1.0  # +1: the body on the side the terrain's normal S_s x S_t points to; -1: the other side

    # ---- contact ---------------------------------------------------------------------------------------------
    def contact(self, t: float, q, u=None) -> TerrainContact:
        """The contact at (q, u): solved by Newton from the previous one, its normal and (with u) its rate."""
        q = np.asarray(q, dtype=float)
        g = self._geometry(t, q)
        rate = np.zeros(3)
        if u is not None:
            u = np.asarray(u, dtype=float)
            p_dot = self.dynamics.qdot(t, q, u, inputs=self._inputs(t, g.n, rate))[:3]
            if self.rim > 0:
                a_dot = np.cross(quaternion_to_rotation(q[3:]) @ u, g.a)
                m_dot = -(g.n @ a_dot) * g.a - (g.n @ g.a) * a_dot
                p_dot = p_dot - self.rim * (m_dot - g.k * (g.k @ m_dot)) / g.m_norm
            try:
                z_dot = np.linalg.solve(g.F_z, -np.array([g.d.d_s @ p_dot, g.d.d_t @ p_dot]))
            except np.linalg.LinAlgError:
                raise TerrainContactError(f"{self._where(t, q)}: the contact point's motion is not determined (the "
                                          f"{self.kind}'s radius equals a radius of curvature of the terrain there)",
                                          self.terrain.name, "s", g.z[0]) from None
            rate = g.n_s * z_dot[0] + g.n_t * z_dot[1]
        return TerrainContact(float(g.z[0]), float(g.z[1]), g.d.point, g.n, rate, g.h - self.tube)

    def _where(self, t, q) -> str:
        return (f"rolling {self.kind} {self.name!r} on surface {self.terrain.name!r} at t = {float(t)!r} s, centre "
                f"{np.round(q[:3], 9).tolist()}")

    def _conditions(self, z, c, R) -> _Geometry:
        """The contact conditions F (2,), their Jacobian F_z (2, 2) and the geometry at z = (s, t) for the centre
        c (3,) and the rotation R (3, 3)."""
        d = self.terrain.derivatives(z[0], z[1])
        N = cross3(d.d_s, d.d_t)
        n = self.side * self.terrain.unit_normal(d, z[0], z[1])
        P = self.side * (np.eye(3) - np.outer(n, n)) / np.linalg.norm(N)
        n_s = P @ (cross3(d.d_ss, d.d_t) + cross3(d.d_s, d.d_st))
        n_t = P @ (cross3(d.d_st, d.d_t) + cross3(d.d_s, d.d_tt))
        a, k, m_norm, p, p_s, p_t = R @ self.axis, np.zeros(3), 1.0, c, np.zeros(3), np.zeros(3)
        if self.rim > 0:
            m = n - (n @ a) * a
            m_norm = float(np.linalg.norm(m))
            if m_norm < 1e-9:
                raise TerrainContactError(f"rolling {self.kind} {self.name!r}: it lies flat on surface "
                                          f"{self.terrain.name!r} at (s, t) = ({float(z[0])!r}, {float(z[1])!r}) "
                                          "(its axis along the normal): the contact point is not defined",
                                          self.terrain.name, "s", float(z[0]))
            k = m / m_norm
            p = c - self.rim * k
            p_s, p_t = (-self.rim * (dm - k * (k @ dm)) / m_norm for dm in (n_s - (n_s @ a) * a, n_t - (n_t @ a) * a))
        r = p - d.point
        F = np.array([d.d_s @ r, d.d_t @ r])
        F_z = np.array([[d.d_ss @ r + d.d_s @ (p_s - d.d_s), d.d_st @ r + d.d_s @ (p_t - d.d_t)],
                        [d.d_st @ r + d.d_t @ (p_s - d.d_s), d.d_tt @ r + d.d_t @ (p_t - d.d_t)]])
        return _Geometry(np.array(z, dtype=float), d, n, n_s, n_t, a, k, m_norm, float(r @ n), F, F_z)

    def _solve(self, t, q, z0) -> _Geometry:
        """The contact conditions solved by Newton from z0; a step leaving a non-periodic bound raises."""
        c, R = q[:3], quaternion_to_rotation(q[3:])
        z = np.array(z0, dtype=float)
        g = self._conditions(z, c, R)
        scale = max(1.0, float(np.linalg.norm(c)))
        for _ in range(50):
            if max(abs(g.F[j]) / np.linalg.norm(v) for j, v in enumerate((g.d.d_s, g.d.d_t))) <= 1e-13 * scale:
                return g
            step = np.linalg.lstsq(g.F_z, -g.F, rcond=None)[0]
            alpha = 1.0
            while True:
                trial = z + alpha * step
                for j, ((lo, hi), periodic) in enumerate(zip(self.terrain.bounds, self.terrain.periodic)):
                    if not periodic and not lo <= trial[j] <= hi:
                        raise TerrainContactError(f"{self._where(t, q)}: the contact left the patch: Newton's "
                                                  f"estimate of parameter {'st'[j]} = {float(trial[j])!r} is outside "
                                                  f"[{lo!r}, {hi!r}]", self.terrain.name, "st"[j], float(trial[j]))
                trial = keep_in_bounds(self.terrain, trial)[0]
                got = self._conditions(trial, c, R)
                if np.abs(got.F).max() < np.abs(g.F).max() or alpha < 1e-6:
                    break
                alpha *= 0.5
            z, g = trial, got
        raise TerrainContactError(f"{self._where(t, q)}: no contact found from (s, t) = {tuple(z0)} (residual "
                                  f"{np.abs(g.F).max():.3g} after 50 Newton steps)", self.terrain.name, "s",
                                  float(z[0]))

    def _geometry(self, t, q) -> _Geometry:
        """The contact solved from the last contact parameters, its gap checked; cached for the q'/u' pair of one
        evaluation."""
        key = (t, q.tobytes())
        if self._cache[0] == key:
            return self._cache[1]
        if self._st is None:
            raise ArgumentError(f"rolling {self.kind} {self.name!r}: call initial_state first (it seeds the contact "
                                f"parameters on surface {self.terrain.name!r})")
        if self.rim > 0:
            g = self._solve(t, q, self._st)
        else:
            found = closest_point(self.terrain, q[:3], *self._st)
            if found.on_boundary:
                j = self._bound_hit(found)
                raise TerrainContactError(f"{self._where(t, q)}: the contact left the patch: parameter {'st'[j]} = "
                                          f"{(found.s, found.t)[j]!r} reached its bound {self.terrain.bounds[j]}",
                                          self.terrain.name, "st"[j], (found.s, found.t)[j])
            if not found.converged:
                raise TerrainContactError(f"{self._where(t, q)}: no closest point found from (s, t) = {self._st} "
                                          f"(residual {found.residual:.3g} after {found.iterations} Newton steps)",
                                          self.terrain.name, "s", found.s)
            g = self._conditions((found.s, found.t), q[:3], np.eye(3))
        if abs(g.h - self.tube) > self.gap_tol:
            raise TerrainContactError(f"{self._where(t, q)}: the {self.kind} does not touch: its tube centre is at "
                                      f"height {g.h!r} m over (s, t) = ({float(g.z[0])!r}, {float(g.z[1])!r}), "
                                      f"tube radius {self.tube!r} m (gap {g.h - self.tube:.3g} m, tolerance "
                                      f"{self.gap_tol:g} m)",
                                      self.terrain.name, "gap", g.h - self.tube)
        self._st = (float(g.z[0]), float(g.z[1]))
        self._cache = (key, g)
        return g

    def _bound_hit(self, found) -> int:
        for j, value in enumerate((found.s, found.t)):
            lo, hi = self.terrain.bounds[j]
            if not self.terrain.periodic[j] and (value <= lo or value >= hi):
                return j
        return 0

    def _inputs(self, t, n, rate) -> np.ndarray:
        w = np.empty(len(self.model.inputs))
        w[self._slots[0]], w[self._slots[1]], w[self._slots[2]] = n, rate, t
        return w

    # ---- the Dynamics interface ---------------------------------------------------------------------------
    def _filled(self, t, q, u, inputs):
        if inputs is not None:
            raise ArgumentError(f"rolling {self.kind} {self.name!r}: the inputs (the terrain normal and its rate) "
                                f"are filled from surface {self.terrain.name!r} at every evaluation; got {inputs!r}")
        got = self.contact(t, q, u)
        return self._inputs(t, got.normal, got.normal_rate)

    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (7,): the centre's velocity in ground axes and the quaternion's rate."""
        return self.dynamics.qdot(t, q, u, params, self._filled(t, q, None, inputs))

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """omega' (3,) in body axes [rad/s^2]."""
        return self.dynamics.udot(t, q, u, params, self._filled(t, q, u, inputs))

    def full_speeds(self, t, q, u, params=None) -> np.ndarray:
        """(omega, v) (6,) in body axes: v the dependent speeds of the contact."""
        return self._numbers(t, q, u, params)[2]

    def energy(self, t, q, u, params=None) -> float:
        """Kinetic plus potential energy [J] (the contact does no work)."""
        kinetic, potential, _ = self._numbers(t, q, u, params)
        return float(kinetic[0] + potential[0])

    def _numbers(self, t, q, u, params):
        return self._numeric(t, np.asarray(q, float), np.asarray(u, float), self.model.parameter_values(params),
                             self._filled(t, q, None, None))

    # ---- start and projection -------------------------------------------------------------------------------
    def touching_centre(self, s: float, t: float, quaternion=(1.0, 0.0, 0.0, 0.0), side: float = 1.0) -> np.ndarray:
        """The centre (3,) [m] of the body at ``quaternion`` touching the terrain at (s, t), on the ``side``
        (+1 / -1) of its normal S_s x S_t."""
        n = np.sign(side) * self.terrain.normal(s, t)
        centre = self.terrain.point(s, t) + self.tube * n
        if self.rim > 0:
            a = quaternion_to_rotation(quaternion) @ self.axis
            m = n - (n @ a) * a
            centre = centre + self.rim * m / np.linalg.norm(m)
        return centre

    def initial_state(self, centre, s0: float, t0: float, quaternion=(1.0, 0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0),
                      *, tol: float = 1e-9):
        """(q (7,), u (3,)): the body's ``centre`` (3,) [m], ``quaternion`` (scalar-first, normalized here) and
        angular velocity ``omega`` (3,) [rad/s, ground axes]; (s0, t0) starts the contact's Newton solve. A body
        farther than ``tol`` [m] from touching raises :class:`TerrainContactError` naming the surface and the gap;
        the side of the terrain the body is on (that of the centre at (s0, t0)) is fixed here."""
        centre = np.asarray(centre, dtype=float).reshape(3)
        e = np.asarray(quaternion, dtype=float)
        q = np.concatenate([centre, e / np.linalg.norm(e)])
        self.terrain.parameters(s0, t0)
        self.side = 1.0 if (centre - self.terrain.point(s0, t0)) @ self.terrain.normal(s0, t0) >= 0 else -1.0
        self._st, self._cache = (float(s0), float(t0)), (None, None)
        gap_tol, self.gap_tol = self.gap_tol, np.inf
        try:
            got = self.contact(0.0, q)
        finally:
            self.gap_tol = gap_tol
        if abs(got.gap) > tol:
            self._st = None
            raise TerrainContactError(f"rolling {self.kind} {self.name!r}: it does not touch surface "
                                      f"{self.terrain.name!r} at the start: the centre {centre.tolist()} is not at "
                                      f"touching height over (s, t) = ({got.s!r}, {got.t!r}) (gap {got.gap:.3g} m, "
                                      f"tolerance {tol:g} m)", self.terrain.name, "gap", got.gap)
        return q, quaternion_to_rotation(q[3:]).T @ np.asarray(omega, dtype=float)

    def project(self, t, q, u):
        """(q, u) with the centre moved along the normal onto touching and the quaternion normalized; u is kept
        (the dependent speeds follow from it)."""
        q = np.array(q, dtype=float)
        got = self.contact(t, q)
        q[:3] -= got.gap * got.normal
        q[3:] /= np.linalg.norm(q[3:])
        return q, u

    def make_projection(self, params=None):
        """A Simulator ``projection`` hook (t, q, u) -> (q, u): :meth:`project` (it needs no parameters)."""
        return self.project

    # ---- the rest of the kane.protocol.Dynamics interface ------------------------------------------------------
    input_names = ()  # the inputs (the terrain's normal and its rate) are filled at every evaluation

    @property
    def parameter_names(self) -> tuple:
        """The body's parameters, in order."""
        return self.dynamics.parameter_names

    @property
    def capabilities(self) -> Capabilities:
        """Energy and its own projection onto touching; the contact's rows and forces stay internal."""
        return Capabilities(energy=True, projection=True,
                            compiled_loop_reason="the terrain's contact point is solved in Python at every evaluation")

    mass_matrix = unsupported("mass_matrix", "the embedded M depends on the terrain's normal at the contact")
    forcing = unsupported("forcing", "the embedded f depends on the terrain's normal at the contact")
    holonomic_rows = unsupported("holonomic_rows", "the contact with the terrain is solved internally")
    motion_rows = unsupported("motion_rows", "the contact with the terrain is solved internally")
    constraint_forces = unsupported("constraint_forces", "the contact with the terrain is solved internally")
    loop_function = unsupported("loop_function", "the terrain's contact point is solved in Python at every "
                                "evaluation")

    check_quaternions = model_quaternion_check


class RollingSphereOnTerrain(RollingOnTerrain):
    """A ball of ``radius`` [m] and ``mass`` [kg] (default inertia the uniform ball's 2/5 m r^2) rolling on
    ``terrain``; the other arguments as for :class:`RollingOnTerrain`."""

    kind = "sphere"

    def __init__(self, terrain: Surface, radius: float, mass: float, *, com=(0.0, 0.0, 0.0), inertia=None,
                 gravity=(0.0, 0.0, -9.81), gap_tol: float | None = None, backend: str | None = None,
                 name: str = "ball"):
        inertia = [0.4 * mass * radius ** 2] * 3 if inertia is None else inertia
        super().__init__(terrain, mass, rim=0.0, tube=radius, axis=(0.0, 0.0, 1.0), com=com, inertia=inertia,
                         gravity=gravity, gap_tol=gap_tol, backend=backend, name=name)
        self.radius = self.tube


class RollingWheelOnTerrain(RollingOnTerrain):
    """A wheel about the body ``axis`` (3,): a torus of ``radius`` R_w [m] (to the tube's centre) and
    ``tube_radius`` rho [m], or a thin disk (rho = 0), of ``mass`` [kg] with central ``inertia`` [kg m^2] (body
    axes) rolling on ``terrain``; the other arguments as for :class:`RollingOnTerrain`."""

    kind = "wheel"

    def __init__(self, terrain: Surface, radius: float, mass: float, inertia, *, tube_radius: float = 0.0,
                 axis=(0.0, 1.0, 0.0), com=(0.0, 0.0, 0.0), gravity=(0.0, 0.0, -9.81), gap_tol: float | None = None,
                 backend: str | None = None, name: str = "wheel"):
        super().__init__(terrain, mass, rim=radius, tube=tube_radius, axis=axis, com=com, inertia=inertia,
                         gravity=gravity, gap_tol=gap_tol, backend=backend, name=name)


@dataclass(frozen=True)
class _Geometry:
    """The contact at z = (s, t): terrain derivatives d, unit normal n to the body and its partials n_s, n_t,
    the body axis a and in-plane k (ground axes), |(I - a a^T) n|, the tube centre's height h, F, F_z."""

    z: np.ndarray
    d: object
    n: np.ndarray
    n_s: np.ndarray
    n_t: np.ndarray
    a: np.ndarray
    k: np.ndarray
    m_norm: float
    h: float
    F: np.ndarray
    F_z: np.ndarray


def _rolling_system(name, rim, tube, axis, mass, com, inertia, gravity) -> System:
    """The body on a free joint with the no-slip rows v + omega x (-R_w k_b - rho n_b) = 0 in body axes."""
    s = System(f"{name}_on_terrain", gravity=tuple(gravity))
    s.add_body(name, mass=mass, com=com, inertia=inertia)
    s.add_joint("ground", name, J.Free(), name="free")
    n0 = [s.input(k, default) for k, default in zip(_NORMAL, (0.0, 0.0, 1.0))]
    rate = [s.input(k) for k in _RATE]
    t0 = s.input(_T0)
    n = sp.Matrix([a + (TIME - t0) * b for a, b in zip(n0, rate)])
    e = [sp.Symbol(f"q_free_q{c}") for c in "wxyz"]
    n_b = J.Free().transform([0, 0, 0, *e])[0].T * n
    point = -tube * n_b
    if rim > 0:
        a = sp.Matrix([int(x) if float(x).is_integer() else float(x) for x in axis])  # exact 0, 1: sparse rows
        m = n_b - (n_b.dot(a)) * a
        point = point - rim * m / sp.sqrt(m.dot(m))
    omega = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (1, 2, 3)])
    v = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (4, 5, 6)])
    s.add_motion_constraint("rolling", list(v + omega.cross(point)))
    return s
