"""Assembly with the user in the loop (seed 003, Nelson & Cohen: the hand that grasps a part is a constraint to
ground; assembly by Newton's method C_q dq = -C, or the gradient form dq = -k C_q^T C).

Each frame finds the configuration nearest to the targets that satisfies every holonomic constraint exactly:
constraints are hard, targets soft. With the velocity rows A_C (m x n_u, C' = A_C u) and the target errors e
(k,) with their rows J (k x n_u, e' = J u), one step in the speeds is

    du = du_C + N z,   du_C = -A_C^+ C,   N: a basis of the null space of A_C,
    z = -(B^T B + mu I)^-1 B^T r  (Gauss-Newton, Levenberg-Marquardt damped),  or  z = -k B^T r  (gradient form),
    B = J N,  r = e + J du_C,

and q <- q + W(q) du with quaternions renormalized, so every joint kind is handled alike; a few minimum-norm
Newton steps then return the trial onto C(q) = 0, and the step is halved until |e|^2 + |C|^2 decreases. Where
Gauss-Newton overshoots (a target beyond reach, a dead centre) the reduced Hessian of |e|^2 / 2 is formed by
differences of the reduced gradient. A grasp (a target with ``hard=True``) joins the constraint rows. The
previous frame's q warm-starts the next one; an unreachable target ends at the nearest reachable configuration
(the stationary point of |e|^2 on the constraint manifold) with the remaining distance reported.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np
import sympy as sp

from ..codegen.forward import jacobian_name, jacobian_program
from ..codegen.numpy_backend import compile_program
from ..codegen.program import ProgramBuilder
from ..errors import ArgumentError
from ..mechanics.kinematics import TreeKinematics, matvec
from ..options import parse_enum
from .surface_pair import ContactPatchError

__all__ = ["DragMethod", "DragOptions", "Target", "DragResult", "DragSolver", "PointContact", "PairContact",
           "orientation_error"]


class DragMethod(enum.Enum):
    """``GAUSS_NEWTON``: damped least squares on the targets in the constraints' null space (quadratic near the
    solution); ``GRADIENT``: seed 003's gradient form z = -k B^T r (linear convergence, one cheap step)."""

    GAUSS_NEWTON = "gauss_newton"
    GRADIENT = "gradient"


@dataclass(frozen=True)
class DragOptions:
    """tol: constraint residual max |C| [m] to reach; step_tol: stop when max |du| is below it [m/s-like units of
    the speeds]; max_iter: iterations per frame; damping: Levenberg-Marquardt mu (relative to the largest
    eigenvalue of B^T B); gain: the gradient form's k; reach_tol: a target is reachable when the remaining
    distance is below it [m]; restore_iter: Newton steps back onto the constraints after each step; max_step:
    the largest change of a speed-like coordinate per step [rad or m] (keeps steps on the nearest branch)."""

    method: DragMethod = DragMethod.GAUSS_NEWTON
    tol: float = 1e-12
    step_tol: float = 1e-11
    max_iter: int = 50
    damping: float = 1e-10
    gain: float = 0.1
    reach_tol: float = 1e-8
    restore_iter: int = 8
    max_step: float = 0.5

    def __post_init__(self):
        method = parse_enum(DragMethod, self.method)
        if method is None:
            raise ArgumentError(f"DragOptions.method {self.method!r}: expected one of "
                                f"{', '.join(m.value for m in DragMethod)}")
        object.__setattr__(self, "method", method)
        for name, value in (("tol", self.tol), ("step_tol", self.step_tol), ("gain", self.gain),
                            ("reach_tol", self.reach_tol)):
            if not value > 0:
                raise ArgumentError(f"DragOptions.{name} must be positive, got {value!r}")
        if self.max_iter < 1 or self.damping < 0:
            raise ArgumentError(f"DragOptions: max_iter >= 1 and damping >= 0 expected, got {self.max_iter}, "
                                f"{self.damping}")


@dataclass(frozen=True)
class Target:
    """A target for the point ``point`` (3,) [m, body axes] of ``body``: ``position`` (3,) [m, ground axes] and
    optionally ``rotation`` (3, 3) of the body's axes to ground axes (its error counts as an arc of radius
    ``length`` [m]). ``weight`` scales the error; ``hard=True`` makes it a grasp, held exactly as a constraint."""

    body: str
    point: tuple = (0.0, 0.0, 0.0)
    position: tuple | None = None
    rotation: tuple | None = None
    weight: float = 1.0
    length: float = 1.0
    hard: bool = False


@dataclass(frozen=True)
class DragResult:
    """q (n_q,): the configuration; residual: max |C(q)| of the constraints and grasps [m]; distance: the
    remaining weighted target error |e| [m]; distances: per target, |position error| [m]; iterations: steps
    taken; reachable: distance <= reach_tol; converged: the iteration stopped on step_tol (not on max_iter);
    contact_parameters: per surface-surface contact, its (u1, v1, u2, v2)."""

    q: np.ndarray
    residual: float
    distance: float
    iterations: int
    reachable: bool
    converged: bool
    distances: tuple = field(default_factory=tuple)
    contact_parameters: tuple = field(default_factory=tuple)


def orientation_error(R: np.ndarray, R_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(e (3,), G (3, 3)): e = vee of the skew part of R R_target^T (sin(angle) times the axis, ground axes) and
    G with e' = G omega for the body's angular velocity omega (3,) in ground axes [rad/s]."""
    E = R @ np.asarray(R_target, dtype=float).T
    e = 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
    return e, 0.5 * (np.trace(E) * np.eye(3) - E)


@runtime_checkable
class PointContact(Protocol):
    """A hard constraint on a body point (such as :class:`kane.simulate.surface_contact.SphereOnSurface`):
    ``rows(x (3,) [m], J_x (3, n_u)) -> (C (m,), A (m, n_u))`` at the point ``center`` (3,) [m] of ``body``."""

    body: str
    center: Any

    def rows(self, *args) -> tuple:
        """(C, A): the residuals and their rows in the speeds."""


@runtime_checkable
class PairContact(Protocol):
    """A contact between two bodies' surfaces with its contact parameters as extra unknowns (such as
    :class:`kane.simulate.surface_pair.SurfaceOnSurface`): ``name``, ``bodies`` (2,), ``params`` (n_params,),
    ``settle(poses)`` and ``rows(poses, z (n_params,), n_u) -> (C, A_u, A_z)``."""

    name: str
    bodies: tuple
    params: Any
    n_params: int

    def settle(self, poses) -> None:
        """Move ``params`` to the common normal at these body poses."""

    def rows(self, *args) -> tuple:
        """(C, A_u, A_z): the residuals and their rows in the speeds and the contact parameters."""


def _is_pair(contact) -> bool:
    """True for a :class:`PairContact`, False for a :class:`PointContact`; an ArgumentError naming the type else."""
    if isinstance(contact, PairContact):
        return True
    if isinstance(contact, PointContact):
        return False
    raise ArgumentError(f"DragSolver contacts: {type(contact).__name__} is neither a point contact (body, center, "
                        "rows(x, J_x)) nor a surface pair (name, bodies, params, n_params, settle, rows)")


class DragSolver:
    """Per-frame assembly toward ``targets`` (a sequence of :class:`Target`) for the compiled dynamics ``dyn``
    (anything with ``holonomic_rows``, ``model``, ``q_names``). ``contacts`` are extra hard constraints: on body
    points (objects with ``body``, ``center`` and ``rows(x, J_x) -> (C, A)``, such as
    :class:`kane.simulate.surface_contact.SphereOnSurface`), or between two bodies' surfaces with their contact
    parameters as extra unknowns (objects with ``bodies``, ``params``, ``n_params``, ``settle(poses)`` and
    ``rows(poses, z, n_u) -> (C, A_u, A_z)``, such as :class:`kane.simulate.surface_pair.SurfaceOnSurface`): the
    iteration then runs on (q, z), z' = dz. The kinematics of the targets' and contacts' body points are compiled
    once; :meth:`solve` takes new target values each frame."""

    def __init__(self, dyn, targets: Sequence[Target], options: DragOptions = DragOptions(), params=None,
                 inputs=None, contacts: Sequence = ()):
        self.dyn, self.model, self.options = dyn, dyn.model, options
        self.targets, self.contacts = tuple(targets), tuple(contacts)
        bodies = {b.name: i for i, b in enumerate(self.model.bodies)}
        self._pair = tuple(_is_pair(c) for c in self.contacts)
        for c in self._pairs():
            for body in c.bodies:
                if body not in bodies:
                    raise ArgumentError(f"contact {c.name!r}: body {body!r} is not in the model; bodies: "
                                        f"{', '.join(bodies)}, or 'ground'")
        for tg in (*self.targets, *(c for c, pair in zip(self.contacts, self._pair) if not pair)):
            point = tg.point if isinstance(tg, Target) else tg.center
            if tg.body not in bodies:
                raise ArgumentError(f"target body {tg.body!r} is not in the model; bodies: {', '.join(bodies)}")
            if len(tuple(point)) != 3:
                raise ArgumentError(f"target on {tg.body!r}: point must be (x, y, z) [m], got {point!r}")
            if isinstance(tg, Target) and not (tg.weight > 0 and tg.length > 0):
                raise ArgumentError(f"target on {tg.body!r}: weight and length must be positive, got "
                                    f"{tg.weight!r} and {tg.length!r}")
        self._p = self.model.parameter_values(params)
        self._w = self.model.input_values(inputs)
        self._last_q = None  # where errors() was last evaluated (the contacts' coordinates belong to it)
        self._patch = None  # the last trial that left a contact's patch in this iteration
        m = self.model
        b = ProgramBuilder({"t": (m.t,), "q": m.q, "u": m.u, "params": m.parameters, "inputs": m.inputs},
                           prefix="dg")
        kin = TreeKinematics(m.name_constants(b.assign), b)
        outs, names = {}, []
        points, self._slots = [(tg.body, tg.point) for tg in self.targets], []
        for c, pair in zip(self.contacts, self._pair):
            extra = [(b, (0.0, 0.0, 0.0)) for b in c.bodies] if pair else [(c.body, c.center)]
            self._slots.append(range(len(points), len(points) + len(extra)))
            points += extra
        self._nz = sum(c.n_params for c in self._pairs())
        self._nv = m.n_u + self._nz  # the step's unknowns: the speeds and the contact parameters
        for k, (body, point) in enumerate(points):
            i, point = bodies[body], [float(c) for c in point]
            R = kin.rotation_to_ground(i)
            outs.update({f"p{k}": kin.point_in_ground(i, point), f"v{k}": kin.point_velocity_in_ground(i, point),
                         f"R{k}": sp.Matrix(R), f"w{k}": [b.assign(e) for e in matvec(R, kin.vel[i][:3])]})
            names += [f"p{k}", f"R{k}", jacobian_name(f"v{k}", "u"), jacobian_name(f"w{k}", "u")]
        self._fn = compile_program(jacobian_program(b.build(outs), [*outs], wrt="u"), names)

    def _pairs(self) -> list:
        """The surface-surface contacts (:class:`PairContact`), in order."""
        return [c for c, pair in zip(self.contacts, self._pair) if pair]

    def retarget(self, targets: Sequence[Target]) -> None:
        """Replace the targets' values (same bodies and points, in the same order) for the next frame."""
        targets = tuple(targets)
        same = len(targets) == len(self.targets) and all(
            a.body == b.body and tuple(map(float, a.point)) == tuple(map(float, b.point))
            for a, b in zip(targets, self.targets))
        if not same:
            raise ArgumentError("retarget: the targets must name the same bodies and points as the solver's "
                                f"({', '.join(t.body for t in self.targets)})")
        self.targets = targets

    def move(self, k: int, position=None, rotation=None) -> None:
        """Move target ``k``'s position (3,) [m] and/or rotation (3, 3) for the next frame."""
        tg = self.targets[k]
        new = replace(tg, position=tg.position if position is None else tuple(np.asarray(position, float)),
                      rotation=tg.rotation if rotation is None else tuple(map(tuple, np.asarray(rotation, float))))
        self.targets = self.targets[:k] + (new,) + self.targets[k + 1:]

    def positions(self, t: float, q: np.ndarray) -> np.ndarray:
        """(n_targets, 3): the targets' body points in ground axes [m] at configuration q (n_q,)."""
        vals = self._fn(float(t), np.asarray(q, dtype=float), np.zeros(self.model.n_u), self._p, self._w)
        return np.array([np.asarray(vals[4 * k], dtype=float).reshape(3) for k in range(len(self.targets))])

    def _poses(self, vals, slots):
        """(o, R, J_v, J_w) of the compiled body points ``slots``."""
        return [tuple(np.asarray(vals[4 * k + j], dtype=float).reshape(shape)
                      for j, shape in enumerate(((3,), (3, 3), (3, -1), (3, -1)))) for k in slots]

    def errors(self, t: float, q: np.ndarray):
        """(e_soft, J_soft, e_hard, J_hard, distances): weighted target errors [m] and their rows in the full
        speeds and the contact parameters (hard: the grasps, then the surface contacts' rows), and the per-target
        position distances [m]. q: (n_q,), or (n_q + n_z,) with the surface-surface contacts' parameters."""
        n, nq = self.model.n_u, self.model.n_q
        q = np.asarray(q, dtype=float)
        z = q[nq:] if q.size > nq else np.concatenate([np.asarray(c.params, float) for c in self._pairs()]
                                                        or [np.zeros(0)])
        vals = self._fn(float(t), q[:nq], np.zeros(n), self._p, self._w)
        self._last_q = np.array(q, dtype=float)
        soft, hard, dist = ([], []), ([], []), []
        for k, tg in enumerate(self.targets):
            p, R, Jv, Jw = (np.asarray(v, dtype=float) for v in vals[4 * k: 4 * k + 4])
            R, Jv, Jw = R.reshape(3, 3), Jv.reshape(3, -1), Jw.reshape(3, -1)
            into = hard if tg.hard else soft
            if tg.position is not None:
                d = p - np.asarray(tg.position, dtype=float)
                dist.append(float(np.linalg.norm(d)))
                into[0].append(tg.weight * d)
                into[1].append(tg.weight * Jv)
            if tg.rotation is not None:
                e, G = orientation_error(R, np.asarray(tg.rotation, dtype=float))
                s = tg.weight * tg.length
                into[0].append(s * e)
                into[1].append(s * G @ Jw)
        soft = (soft[0], [np.hstack([J, np.zeros((J.shape[0], self._nz))]) for J in soft[1]])
        hard = (hard[0], [np.hstack([J, np.zeros((J.shape[0], self._nz))]) for J in hard[1]])
        col = n
        for contact, slots, pair in zip(self.contacts, self._slots, self._pair):
            if pair:
                k = contact.n_params
                C, A_u, A_z = contact.rows(self._poses(vals, slots), z[col - n:col - n + k], n)
                A = np.zeros((C.size, self._nv))
                A[:, :n], A[:, col:col + k] = A_u, A_z
                col += k
            else:
                k = slots[0]
                C, A = contact.rows(np.asarray(vals[4 * k], dtype=float).reshape(3),
                                    np.asarray(vals[4 * k + 2], dtype=float).reshape(3, -1))
                A = np.hstack([A, np.zeros((A.shape[0], self._nz))])
            hard[0].append(C)
            hard[1].append(A)
        stack = [(np.concatenate(v) if v else np.zeros(0), np.vstack(J) if J else np.zeros((0, self._nv)))
                 for v, J in (soft, hard)]
        return stack[0][0], stack[0][1], stack[1][0], stack[1][1], tuple(dist)

    def _state(self, t, q):
        """(C, A, W, e, J, distances) at q (n_q + n_z,); W (n_q + n_z, n_u + n_z) maps a step to dq (dz = its
        last n_z entries)."""
        nq, nz = self.model.n_q, self._nz
        C, A_C, W = self.dyn.holonomic_rows(t, q[:nq], self._p)
        e, J, eh, Jh, dist = self.errors(t, q)
        C = np.concatenate([np.ravel(C), eh])
        A_C = np.reshape(A_C, (-1, self.model.n_u))
        A = np.vstack([np.hstack([A_C, np.zeros((A_C.shape[0], nz))]), Jh])
        W = np.asarray(W)
        if nz:
            W = np.block([[W, np.zeros((nq, nz))], [np.zeros((nz, W.shape[1])), np.eye(nz)]])
        return C, A, W, e, J, dist

    def _restore(self, t, q):
        """Minimum-norm Newton steps back onto C(q) = 0 (and the grasps) after a step along the manifold."""
        state = self._state(t, q)
        for _ in range(self.options.restore_iter):
            C, A, W = state[:3]
            if np.max(np.abs(C), initial=0.0) <= self.options.tol:
                break
            q = self.model.normalize_quaternions(q + W @ np.linalg.lstsq(A, -C, rcond=None)[0])
            state = self._state(t, q)
        return q, state

    def _svd(self, A):
        """(U, s, Vt, rank) of the constraint rows A (m x n_u)."""
        if not A.size:
            return np.zeros((0, 0)), np.zeros(0), np.eye(self._nv), 0
        U, s, Vt = np.linalg.svd(A)
        return U, s, Vt, int(np.sum(s > max(A.shape) * np.finfo(float).eps * s[0]))

    def _null_space(self, A):
        """(n_u, n_u - rank): an orthonormal basis of the null space of A."""
        _, _, Vt, rank = self._svd(A)
        return Vt[rank:].T

    def _hessian(self, t, q, W, N, g):
        """The reduced Hessian of |e|^2 / 2 on the constraint manifold, by differences of the reduced gradient
        N^T J^T e along the null-space directions, the null space recomputed at each displaced point (the term
        sum e_i d2 e_i that Gauss-Newton leaves out matters beyond reach and at a dead centre), symmetrized.
        The step uses its absolute eigenvalues and leaves out its flat directions."""
        h = 1e-7
        cols = []
        for j in range(N.shape[1]):
            _, state = self._restore(t, self.model.normalize_quaternions(q + h * W @ N[:, j]))
            N1 = self._null_space(state[1])
            N1 = N1 @ (N1.T @ N)  # the null space there, its basis carried along from N's
            cols.append((N1.T @ (state[4].T @ state[3]) - g) / h)
        H = np.array(cols).T if cols else np.zeros((0, 0))
        return 0.5 * (H + H.T)

    def _trial(self, t, q):
        """(q, state) restored from the trial q, or (None, None) where a contact parameter left its patch."""
        try:
            return self._restore(t, self.model.normalize_quaternions(q))
        except ContactPatchError as exc:
            self._patch = exc
            return None, None

    def _line_search(self, t, q, W, du, phi0, slope):
        """Step length along du: the full step, or the minimum of the parabola through phi(0), phi'(0) and
        phi(1) when that is better (a target beyond reach makes Gauss-Newton overshoot), halved until
        phi = |e|^2 + |C|^2 decreases; a step whose predicted decrease is below phi's noise (its rounding and the
        constraints' tolerance, which the restoration leaves) is taken whole (near the minimum of a target beyond
        reach). A trial whose contact parameters leave a patch counts as no decrease (the error is kept in
        ``_patch``). Returns (q, state, alpha), alpha = 0 where no step decreased phi (q and its state then
        unchanged)."""
        noise = 64 * np.finfo(float).eps * phi0 + 4 * np.sqrt(phi0) * self.options.tol  # restored to tol only
        if abs(slope) <= noise:  # phi cannot resolve the step: take it whole
            trial, state = self._trial(t, q + W @ du)
            if state is not None:
                return trial, state, 1.0
        alpha = 1.0
        for _ in range(30):
            trial, state = self._trial(t, q + alpha * W @ du)
            phi = np.inf if state is None else float(state[3] @ state[3]) + float(state[0] @ state[0])
            curvature = phi - phi0 - alpha * slope
            if slope < 0 and np.isfinite(phi) and curvature > 0:
                best = -slope * alpha**2 / (2 * curvature)
                if 0.02 * alpha < best < 0.9 * alpha:
                    t2, s2 = self._trial(t, q + best * W @ du)
                    phi2 = np.inf if s2 is None else float(s2[3] @ s2[3]) + float(s2[0] @ s2[0])
                    if phi2 < phi:
                        trial, state, phi = t2, s2, phi2
            if phi <= phi0:
                return trial, state, alpha
            alpha /= 2
        return q, None, 0.0

    def _step(self, t, q, state, second_order):
        """(du, slope of phi along du): the constraint correction plus the target step in the null space."""
        opt = self.options
        C, A, W, e, J, _ = state
        U, s, Vt, rank = self._svd(A)
        du_c = Vt[:rank].T @ ((U[:, :rank].T @ -C) / s[:rank]) if rank else np.zeros(self._nv)
        N = Vt[rank:].T
        r = e + J @ du_c
        B = J @ N
        g = B.T @ r
        if opt.method is DragMethod.GRADIENT:
            z = -opt.gain * g
        else:
            H = B.T @ B
            mu = opt.damping * (np.max(np.diag(H)) if H.size else 0.0)
            z = -np.linalg.lstsq(H + mu * np.eye(H.shape[0]), g, rcond=None)[0] if H.size else np.zeros(0)
            if second_order or np.linalg.norm(r + B @ z) > opt.reach_tol:  # a residual left: GN overshoots
                lam, V = np.linalg.eigh(self._hessian(t, q, W, N, g))
                lam = np.abs(lam)  # a saddle's negative curvature still gives a descent direction
                keep = lam > 1e-8 * np.max(lam, initial=0.0)  # flat directions (|e| does not depend on them)
                z = -V[:, keep] @ ((V[:, keep].T @ g) / (lam[keep] + mu)) if keep.any() else z
        du = du_c + N @ z
        largest = np.max(np.abs(du), initial=0.0)
        if largest > opt.max_step:
            du, z = du * (opt.max_step / largest), z * (opt.max_step / largest)
        return du, 2 * float(g @ z)

    def solve(self, q, t: float = 0.0) -> DragResult:
        """One frame: from ``q`` (n_q,) (the previous frame's result), the configuration nearest the current
        targets that satisfies the constraints; t [s] for rheonomic constraints. Surface-surface contacts start
        from their ``params`` moved to the common normal at q, and keep the frame's result there. A frame that
        ends short of convergence because a contact would leave its patch raises that
        :class:`~kane.simulate.surface_pair.ContactPatchError` (naming the surface, parameter and value), with the
        last configuration reached as its ``q``."""
        opt = self.options
        q = np.array(q, dtype=float)
        nq = self.model.n_q
        if q.shape != (nq,) or not np.all(np.isfinite(q)):
            raise ArgumentError(f"DragSolver.solve: q must be {nq} finite numbers "
                                f"({', '.join(self.dyn.q_names)}), got {q.tolist()!r}")
        self.model.normalize_quaternions(q)
        pairs = [(c, slots) for c, slots, pair in zip(self.contacts, self._slots, self._pair) if pair]
        if pairs:
            vals = self._fn(float(t), q, np.zeros(self.model.n_u), self._p, self._w)
            for c, slots in pairs:
                c.settle(self._poses(vals, slots))
            q = np.concatenate([q] + [np.asarray(c.params, dtype=float) for c, _ in pairs])
        q, state = self._restore(t, q)
        converged, second_order, it = False, False, 0
        for it in range(1, opt.max_iter + 1):
            self._patch = None
            du, slope = self._step(t, q, state, second_order)
            C = state[0]
            if np.max(np.abs(du), initial=0.0) <= opt.step_tol and np.max(np.abs(C), initial=0.0) <= opt.tol:
                converged = True
                break
            e = state[3]
            q, new, alpha = self._line_search(t, q, state[2], du, float(e @ e) + float(C @ C), slope)
            if alpha < 1.0 and opt.method is DragMethod.GAUSS_NEWTON:
                if second_order and alpha == 0.0:
                    break  # no descent even with the second-order term: a stationary point to rounding
                second_order = True  # Gauss-Newton overshot (beyond reach, or at a dead centre)
            state = new or state
        if self.contacts and not np.array_equal(self._last_q, q):  # contact coordinates were set at a trial
            state = self._state(t, q)
        C, _, _, e, _, dist = state
        z, params = q[nq:], []
        for c, _ in pairs:
            c.params, z = c.checked(z[:c.n_params]), z[c.n_params:]
            params.append(tuple(float(v) for v in c.params))
        if not converged and self._patch is not None:
            self._patch.q = q[:nq]
            raise self._patch
        distance = float(np.linalg.norm(e))
        return DragResult(q[:nq], float(np.max(np.abs(C), initial=0.0)), distance, it,
                          distance <= opt.reach_tol, converged, dist, tuple(params))
