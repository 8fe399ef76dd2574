"""Free rigid bodies under gravity as a :class:`kane.Dynamics` with contact point Jacobians (Newton-Euler, world
linear velocity and body angular velocity), the many-body model the contact time stepping runs fast.

Body i has q_i = (x, y, z, qw, qx, qy, qz): the position of its centre of mass in ground [m] and the scalar-first
unit quaternion of R_ground_body; u_i = (omega_i (3,) in body axes [rad/s], v_i (3,) the centre of mass velocity in
ground axes [m/s]). Then M = diag(I_i, m_i 1) (constant), f = (-omega x I omega, m g(t)), q' = (v, E(e) omega / 2).
A point p (world) fixed in body i moves with v_p = v_i + R_i (omega_i x R_i^T (p - c_i)) = v_i - [p - c_i]x R_i
omega_i, which is :meth:`FreeBodies.point_jacobian` (3, n_u): the analytic Jacobian, exact, no differencing.
World linear velocities keep the Coriolis term m omega x v out of f, so that with isotropic inertias (spheres,
cubes) a semi-implicit step does no spurious work (f is then gravity only, whose potential is exact in one step).

The contact time stepping takes its free velocity from :meth:`FreeBodies.free_velocity`: v + h g, and omega by the
implicit midpoint rule of Euler's equations in body axes, I (omega+ - omega) = -h omega_m x I omega_m with
omega_m = (omega + omega+) / 2 (Newton's method on the 3x3 system to round-off). Dotted with omega_m the right side
vanishes, so omega+^T I omega+ = omega^T I omega exactly (and |I omega| too): the gyroscopic term adds no kinetic
energy for any inertia (the explicit term u + h M^-1 f gained O(h^2) per step for bodies that are not isotropic).
:meth:`FreeBodies.advance` is the position update of a step, q + h q'(q, u+) with the quaternions normalized.
:func:`free_velocities` and :func:`advance_positions` are those two formulas as loops over the bodies (compiled by
numba once per process, the one copy the general and the compiled contact paths share).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse

from ..errors import ModelError
from ..jit import kernel
from ..model.model import GROUND
from ..protocol import Capabilities, unsupported
from ..spatial import cross3, quaternion_to_rotation, skew

__all__ = ["FreeBodies", "advance_positions", "free_velocities", "total_energy"]


def _positive_definite(inertia, where: str) -> np.ndarray:
    try:
        I = np.array(inertia, dtype=float).reshape(3, 3)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: key 'inertia': expected a 3x3 matrix [kg m^2], got {inertia!r}") from None
    if not np.allclose(I, I.T) or np.linalg.eigvalsh(I).min() <= 0:
        raise ModelError(f"{where}: key 'inertia': expected a symmetric positive definite 3x3 matrix [kg m^2]")
    return I


def free_velocities(inertias, u, g, h, out):
    """out (6N,) = the free velocity of a step of h [s] from u (6N,) under gravity g (3,) [m/s^2]: per body
    v + h g, and omega+ of the implicit midpoint rule I (omega+ - omega) = -h omega_m x I omega_m (module
    docstring; ``inertias`` (N, 3, 3) [kg m^2], Newton's method from omega+ = omega until the update is round-off)."""
    a = np.empty((3, 3))  # the Jacobian of Newton's step, one buffer for every body
    for b in range(inertias.shape[0]):
        I = inertias[b]
        w0, w1, w2 = u[6 * b], u[6 * b + 1], u[6 * b + 2]
        x0, x1, x2 = w0, w1, w2
        for _ in range(30):
            m0, m1, m2 = 0.5 * (x0 + w0), 0.5 * (x1 + w1), 0.5 * (x2 + w2)
            L0 = I[0, 0] * m0 + I[0, 1] * m1 + I[0, 2] * m2  # I omega_m
            L1 = I[1, 0] * m0 + I[1, 1] * m1 + I[1, 2] * m2
            L2 = I[2, 0] * m0 + I[2, 1] * m1 + I[2, 2] * m2
            d0, d1, d2 = x0 - w0, x1 - w1, x2 - w2
            r0 = I[0, 0] * d0 + I[0, 1] * d1 + I[0, 2] * d2 + h * (m1 * L2 - m2 * L1)  # the residual F(x)
            r1 = I[1, 0] * d0 + I[1, 1] * d1 + I[1, 2] * d2 + h * (m2 * L0 - m0 * L2)
            r2 = I[2, 0] * d0 + I[2, 1] * d1 + I[2, 2] * d2 + h * (m0 * L1 - m1 * L0)
            # dF/dx = I + h/2 ([omega_m]x I - [I omega_m]x)
            for c in range(3):
                a[0, c] = I[0, c] + 0.5 * h * (m1 * I[2, c] - m2 * I[1, c])
                a[1, c] = I[1, c] + 0.5 * h * (m2 * I[0, c] - m0 * I[2, c])
                a[2, c] = I[2, c] + 0.5 * h * (m0 * I[1, c] - m1 * I[0, c])
            a[0, 1] -= 0.5 * h * -L2
            a[0, 2] -= 0.5 * h * L1
            a[1, 0] -= 0.5 * h * L2
            a[1, 2] -= 0.5 * h * -L0
            a[2, 0] -= 0.5 * h * -L1
            a[2, 1] -= 0.5 * h * L0
            c00, c01, c02 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1], a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2], \
                a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]
            c10, c11, c12 = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2], a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0], \
                a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]
            c20, c21, c22 = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0], a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1], \
                a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
            det = a[0, 0] * c00 + a[0, 1] * c10 + a[0, 2] * c20
            s0 = (c00 * r0 + c01 * r1 + c02 * r2) / det
            s1 = (c10 * r0 + c11 * r1 + c12 * r2) / det
            s2 = (c20 * r0 + c21 * r1 + c22 * r2) / det
            x0, x1, x2 = x0 - s0, x1 - s1, x2 - s2
            if abs(s0) + abs(s1) + abs(s2) <= 1e-14 * (abs(x0) + abs(x1) + abs(x2)):
                break
        out[6 * b], out[6 * b + 1], out[6 * b + 2] = x0, x1, x2
        for r in range(3):
            out[6 * b + 3 + r] = u[6 * b + 3 + r] + h * g[r]


def advance_positions(qb, u, h, out):
    """out (N, 7) = q + h q'(q, u) per body, quaternions normalized: c + h v, e + h e (x) (0, omega) / 2 (omega in
    body axes), from qb (N, 7) and u (6N,)."""
    for b in range(qb.shape[0]):
        ox, oy, oz = u[6 * b], u[6 * b + 1], u[6 * b + 2]
        for r in range(3):
            out[b, r] = qb[b, r] + h * u[6 * b + 3 + r]
        w, x, y, z = qb[b, 3], qb[b, 4], qb[b, 5], qb[b, 6]
        w, x, y, z = (w + 0.5 * h * (-x * ox - y * oy - z * oz), x + 0.5 * h * (w * ox + y * oz - z * oy),
                      y + 0.5 * h * (w * oy + z * ox - x * oz), z + 0.5 * h * (w * oz + x * oy - y * ox))
        n = np.sqrt(w * w + x * x + y * y + z * z)
        out[b, 3], out[b, 4], out[b, 5], out[b, 6] = w / n, x / n, y / n, z / n


def total_energy(qb, u, masses, inertias, g):
    """Kinetic plus gravity's potential energy [J] of the bodies at qb (N, 7), u (6N,) under g (3,) [m/s^2]."""
    out = 0.0
    for b in range(qb.shape[0]):
        w = u[6 * b:6 * b + 3]
        I = inertias[b]
        for r in range(3):
            out += 0.5 * w[r] * (I[r, 0] * w[0] + I[r, 1] * w[1] + I[r, 2] * w[2])
            out += 0.5 * masses[b] * u[6 * b + 3 + r] * u[6 * b + 3 + r] - masses[b] * qb[b, r] * g[r]
    return out


_COMPILED: dict = {}
_LOCK = threading.Lock()
_XYZ = np.arange(3)  # row (and column offset) indices of a 3 x 3 identity block


def _compiled():
    """(free_velocities, advance_positions, total_energy) compiled by numba (:func:`kane.jit.kernel`: once per
    machine, cached on disk; the Python functions without numba)."""
    with _LOCK:
        if "k" not in _COMPILED:
            _COMPILED["k"] = (kernel(free_velocities), kernel(advance_positions), kernel(total_energy))
        return _COMPILED["k"]


class FreeBodies:
    """N free rigid bodies (module docstring) named ``names``, with ``masses`` (N,) [kg], ``inertias`` (N, 3, 3)
    about each centre of mass in body axes [kg m^2], and ``gravity`` (3,) [m/s^2] or a function of t [s] giving
    it (a ramped incline). Satisfies :class:`kane.Dynamics` (mass_matrix, forcing, energy) and offers
    ``point_jacobian`` and ``normalize`` for :func:`kane.switching.contact_stepping.simulate_contacts`."""

    parameter_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()

    def __init__(self, names: Sequence[str], masses, inertias, gravity=(0.0, 0.0, -9.81)):
        self.names = tuple(str(n) for n in names)
        if len(set(self.names)) != len(self.names) or GROUND in self.names or not self.names:
            raise ModelError(f"FreeBodies: expected distinct body names other than {GROUND!r}, got {names!r}")
        self.masses = np.array(masses, dtype=float).reshape(-1)
        if self.masses.shape != (len(self.names),) or not np.all(self.masses > 0):
            raise ModelError(f"FreeBodies: key 'masses': expected {len(self.names)} masses > 0 [kg], got {masses!r}")
        self.inertias = np.array([_positive_definite(I, f"FreeBodies: body {n!r}")
                                  for n, I in zip(self.names, inertias, strict=True)])
        # g (3,) [m/s^2] when it is constant (the compiled event-driven path takes it), None when a function of t
        self.gravity_constant = None if callable(gravity) else np.array(gravity, dtype=float).reshape(3)
        if self.gravity_constant is not None:
            self.gravity_constant.setflags(write=False)
        self._gravity: Callable[[float], np.ndarray] = (
            (lambda t: np.asarray(gravity(t), dtype=float)) if callable(gravity)
            else (lambda t, g=np.array(gravity, dtype=float): g))
        self.index = {n: i for i, n in enumerate(self.names)}
        nb = len(self.names)
        self.n_q, self.n_u = 7 * nb, 6 * nb
        self.q_names = tuple(f"{n}.{k}" for n in self.names for k in ("x", "y", "z", "qw", "qx", "qy", "qz"))
        self.u_names = tuple(f"{n}.{k}" for n in self.names for k in ("wx", "wy", "wz", "vx", "vy", "vz"))
        self.description = f"{nb} free rigid bodies (Newton-Euler, world linear velocity)"
        M = np.zeros((self.n_u, self.n_u))
        for i in range(nb):
            M[6 * i:6 * i + 3, 6 * i:6 * i + 3] = self.inertias[i]
            M[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = self.masses[i] * np.eye(3)
        self._M = M
        self._M.setflags(write=False)
        Iinv = np.linalg.inv(self.inertias)
        # the inverse mass blocks, as the compiled contact step takes them (contact_fast): (N, 3, 3) symmetrized, (N,)
        self.inertias_inv = np.ascontiguousarray(0.5 * (Iinv + np.swapaxes(Iinv, 1, 2)))
        self.masses_inv = 1.0 / self.masses
        self._Minv = sparse.block_diag([np.linalg.inv(B) for i in range(nb)
                                        for B in (self.inertias[i], self.masses[i] * np.eye(3))], format="csr")

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(energy=True, mass_matrix=True, forcing=True)

    def gravity(self, t: float) -> np.ndarray:
        """g (3,) [m/s^2] at t [s]."""
        return self._gravity(t)

    def _split(self, q, u=None):
        q = np.asarray(q, dtype=float).reshape(-1, 7)
        return (q, None) if u is None else (q, np.asarray(u, dtype=float).reshape(-1, 6))

    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        qb, ub = self._split(q, u)
        out = np.empty_like(qb)
        out[:, 0:3] = ub[:, 3:6]
        w, x, y, z = qb[:, 3], qb[:, 4], qb[:, 5], qb[:, 6]
        ox, oy, oz = ub[:, 0], ub[:, 1], ub[:, 2]  # e' = e (x) (0, omega) / 2, omega in body axes
        out[:, 3] = 0.5 * (-x * ox - y * oy - z * oz)
        out[:, 4] = 0.5 * (w * ox + y * oz - z * oy)
        out[:, 5] = 0.5 * (w * oy + z * ox - x * oz)
        out[:, 6] = 0.5 * (w * oz + x * oy - y * ox)
        return out.reshape(-1)

    def mass_matrix(self, t, q, params=None) -> np.ndarray:
        return self._M

    def forcing(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        _, ub = self._split(q, u)
        omega = ub[:, 0:3]
        f = np.empty_like(ub)
        f[:, 0:3] = -cross3(omega, np.einsum("bij,bj->bi", self.inertias, omega))
        f[:, 3:6] = self.masses[:, None] * self.gravity(t)[None, :]
        return f.reshape(-1)

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        _, ub = self._split(q, u)
        f = self.forcing(t, q, u).reshape(-1, 6)
        out = np.empty_like(ub)
        out[:, 0:3] = np.linalg.solve(self.inertias, f[:, 0:3, None])[:, :, 0]
        out[:, 3:6] = f[:, 3:6] / self.masses[:, None]
        return out.reshape(-1)

    def free_velocity(self, t, q, u, h) -> np.ndarray:
        """u_free (n_u,): the velocity after a step of h [s] from (t, q, u) without contact (module docstring:
        gravity, and the gyroscopic term by the implicit midpoint rule, which keeps the kinetic energy)."""
        out = np.empty(self.n_u)
        _compiled()[0](self.inertias, np.ascontiguousarray(u, dtype=float), np.ascontiguousarray(
            self.gravity(t), dtype=float), float(h), out)
        return out

    def advance(self, q, u, h) -> np.ndarray:
        """q+ (n_q,) = q + h q'(q, u) with the quaternions normalized (the position update of a step of h [s])."""
        out = np.empty((len(self.names), 7))
        _compiled()[1](np.ascontiguousarray(np.reshape(q, (-1, 7)), dtype=float),
                       np.ascontiguousarray(u, dtype=float), float(h), out)
        return out.reshape(-1)

    def energy(self, t, q, u, params=None) -> float:
        return float(_compiled()[2](np.ascontiguousarray(np.reshape(q, (-1, 7)), dtype=float),
                                    np.ascontiguousarray(u, dtype=float), self.masses, self.inertias,
                                    np.ascontiguousarray(self.gravity(t), dtype=float)))

    def energies(self, t, Q, U) -> np.ndarray:
        """Total energy (K,) [J] at K samples: times t (K,) [s], Q (K, n_q), U (K, n_u) (:meth:`energy` each)."""
        return np.array([self.energy(tk, qk, uk) for tk, qk, uk in zip(t, Q, U)], dtype=float).reshape(len(t))

    def check_quaternions(self, q, what: str = "q0", tol: float = 1e-6) -> None:
        qb, _ = self._split(q)
        for name, e in zip(self.names, qb[:, 3:7]):
            if abs(np.linalg.norm(e) - 1.0) > tol:
                raise ModelError(f"{what}: body {name!r}: quaternion {e.tolist()} is not of unit norm")

    def normalize(self, q) -> np.ndarray:
        """q (n_q,) with every quaternion scaled to unit norm."""
        qb = np.array(q, dtype=float).reshape(-1, 7)
        qb[:, 3:7] /= np.linalg.norm(qb[:, 3:7], axis=1, keepdims=True)
        return qb.reshape(-1)

    def pose(self, q, body: str) -> tuple[np.ndarray, np.ndarray]:
        """(c (3,) [m], R_ground_body (3, 3)) of ``body`` at q."""
        i = self._body(body)
        qi = np.asarray(q, dtype=float)[7 * i:7 * i + 7]
        return qi[0:3], quaternion_to_rotation(qi[3:7])

    def _body(self, body: str) -> int:
        try:
            return self.index[body]
        except KeyError:
            raise ModelError(f"FreeBodies: no body {body!r} (bodies: {', '.join(self.names)})") from None

    def point_jacobian(self, q, body: str, point_world) -> np.ndarray:
        """J (3, n_u) with v_p = J u [m/s] for the point at ``point_world`` (3,) [m] fixed in ``body`` (zeros for
        ``"ground"``)."""
        J = np.zeros((3, self.n_u))
        if body == GROUND:
            return J
        i = self._body(body)
        c, R = self.pose(q, body)
        J[:, 6 * i:6 * i + 3] = -skew(np.asarray(point_world, dtype=float) - c) @ R
        J[_XYZ, 6 * i + 3 + _XYZ] = 1.0  # the identity block, without making np.eye(3)
        return J

    def point_jacobians(self, q, bodies: Sequence[str], points_world) -> tuple[np.ndarray, np.ndarray]:
        """The point Jacobians of many points at once as sparse rows: (cols (k, 6) the speeds each point's
        Jacobian touches, values (k, 3, 6)), point k fixed in ``bodies[k]`` at ``points_world[k]`` (k, 3) [m]."""
        index = np.array([self._body(b) for b in bodies], dtype=np.int64)
        qb = np.asarray(q, dtype=float).reshape(-1, 7)[index]
        R = quaternion_to_rotation(qb[:, 3:7])  # (k, 3, 3)
        d = np.asarray(points_world, dtype=float).reshape(-1, 3) - qb[:, 0:3]
        values = np.zeros((index.size, 3, 6))
        values[:, :, 0:3] = -cross3(d[:, None, :], np.swapaxes(R, 1, 2)).transpose(0, 2, 1)  # -[d]x R
        values[:, [0, 1, 2], [3, 4, 5]] = 1.0
        return 6 * index[:, None] + np.arange(6), values

    def inverse_mass_matrix(self, t, q):
        """M^-1 (n_u, n_u) as a scipy.sparse block-diagonal matrix (constant; built once)."""
        return self._Minv

    constraint_forces = unsupported("constraint_forces", "free bodies have no constraints")
    holonomic_rows = unsupported("holonomic", "free bodies have no constraints")
    motion_rows = unsupported("motion_constraints", "free bodies have no constraints")
    make_projection = unsupported("projection", "free bodies have no constraints")
    loop_function = unsupported("compiled_loop", "free bodies have no compiled right-hand side")
