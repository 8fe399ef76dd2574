"""Velocity-level time stepping for many frictional contacts (Moreau-Jean; Anitescu and Potra 1997, Stewart and
Trinkle 1996): one frictional contact problem on elliptic Coulomb cones per step, solved by projected Gauss-Seidel.

A step of size h from (t, q, u):

1. u_free = u + h M(q)^-1 f(t, q, u) (``dynamics.mass_matrix`` and ``forcing``, the :class:`kane.Dynamics`
   protocol), or ``dynamics.free_velocity(t, q, u, h)`` when the dynamics gives it (:class:`.contact_bodies.
   FreeBodies`: the gyroscopic term omega x I omega by the implicit midpoint rule, which keeps the kinetic energy
   for any inertia);
2. the contact points of q (``contacts(q) -> list[ContactPoint]``, any callable: analytic shapes, or kane's coal
   geometry) give per contact the rows J_i (3, n_u) = [n t1 t2]^T (J_b(x_b) - J_a(x_a)): the relative velocity of
   the witness points in (normal, tangent, tangent), from the bodies' point Jacobians (``bodies.point_jacobian``,
   e.g. :class:`.contact_bodies.FreeBodies`, analytic; when ``bodies`` also gives ``point_jacobians`` (sparse
   rows of many points) and ``inverse_mass_matrix`` (sparse M^-1), J and W are assembled sparse);
3. a contact takes part when its predicted gap closes within the step, d + h v_n(u_free) <= 0;
4. the impulses p (m, 3) [N s] solve the Signorini-Coulomb problem v+ = J u+ = W p + J u_free, W = J M^-1 J^T,
   with the normal condition v_n+ >= target (:mod:`.cone_solver`);
5. u+ = u_free + M^-1 J^T p; q+ = q + h q'(q, u+) through the kinematic map (``dynamics.qdot``), quaternions
   normalized (``bodies.normalize``), or ``dynamics.advance(q, u+, h)`` when it gives one (FreeBodies).

The normal target: with restitution e > 0, Newton's law on the approach speed at the start of the step, v_n+ >=
-e min(v_n(u), 0) (an impact is resolved in the step its gap would close); with e = 0, v_n+ >= -max(d, 0) / h
(the gap closes exactly at the end of the step: no hovering). Position errors are stabilized without adding energy:
the gap term only limits the approach and never pushes a penetrating contact out (a penetration from an impact
step stays, it is not turned into a separation velocity). Then the energy change of a step with constant gravity
(f = m g; the gyroscopic term of FreeBodies keeps the kinetic energy of the free step exactly) is p . J u+ -
|h f + J^T p|^2_{M^-1} / 2 <= 0 (each contact's p . v+ <= 0 by Signorini and maximal dissipation), so no step
gains energy, for any inertia; restitution adds p_n e |v_n-| which the loss covers for e <= 1.
Friction: the cone radius is mu_static p_n when the contact's slip speed at the start of the step is at most
``slip_tolerance``, else mu_kinetic p_n.

Outputs per active contact and step (:class:`ContactRecords`): normal force p_n / h [N], friction force p_t / h
(2,) [N] along (t1, t2), slip velocity v_t+ (2,) [m/s], mode open / stick / slip. :func:`simulate_contacts` is the
loop (a later session wires it into :func:`kane.simulate.run`); :class:`ContactScheme` selects the scheme and the
run records it.

Fast path: when ``contacts(q)`` returns a :class:`kane.mechanics.collision_batch.ContactBatch` (e.g.
:func:`kane.mechanics.collision_batch.contacts_batch` of kane's coal geometry) and the dynamics is a
:class:`.contact_bodies.FreeBodies`, the step runs in :mod:`.contact_fast` (compiled rows, W and sweeps, no
scipy.sparse, no object per contact) with the same results; any other dynamics gets the batch's ContactPoints.
With ``contacts`` a :class:`.contact_loop.BatchContacts` of those FreeBodies, many steps (collision included) run
in one compiled call (:mod:`.contact_loop`; ``watch`` is then called before each chunk of steps), same results.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve

from ..errors import ArgumentError, NotSupportedError
from ..model.contact import ContactPoint
from ..model.model import GROUND
from ..mechanics.collision_batch import ContactBatch
from .cone_solver import ConeSolverOptions, solve_cones
from .contact_fast import WarmStart, batch_step, free_bodies_of, step_arrays
from .contact_loop import BatchContacts
from .contact_samples import MODES, ContactRecords, SampleBlock, run_failure

__all__ = ["ContactOptions", "ContactRecords", "ContactRun", "ContactScheme", "ContactStep", "MODES", "dense_rows",
           "step_count", "contact_step", "simulate_contacts"]


class ContactScheme(enum.Enum):
    """How contacts are simulated: velocity-level time stepping (many contacts), or event-driven embedding."""

    TIME_STEPPING = "time-stepping"
    EVENT_DRIVEN = "event-driven"


@dataclass(frozen=True)
class ContactOptions:
    """``scheme`` (:class:`ContactScheme`), ``solver`` (:class:`ConeSolverOptions`), ``slip_tolerance`` [m/s]
    (a contact at most this fast is sticking: static friction, mode stick), ``warm_start`` (start each step's
    solver from the previous step's impulses of the same contacts)."""

    scheme: ContactScheme = ContactScheme.TIME_STEPPING
    solver: ConeSolverOptions = field(default_factory=ConeSolverOptions)
    slip_tolerance: float = 1e-9
    warm_start: bool = True

    def __post_init__(self):
        if not isinstance(self.scheme, ContactScheme):
            try:
                object.__setattr__(self, "scheme", ContactScheme(self.scheme))
            except ValueError:
                raise ArgumentError(f"ContactOptions: scheme: expected one of "
                                    f"{', '.join(s.value for s in ContactScheme)}, got {self.scheme!r}") from None
        if not float(self.slip_tolerance) > 0:
            raise ArgumentError(f"ContactOptions: slip_tolerance: expected > 0 [m/s], got {self.slip_tolerance!r}")


@dataclass(frozen=True)
class ContactStep:
    """One step's result: ``q`` (n_q,), ``u`` (n_u,) after the step; per active contact (m of them): ``points``
    (their ContactPoints; on the compiled path, the active :class:`kane.mechanics.collision_batch.ContactBatch`),
    ``impulse`` (m, 3) [N s] in (n, t1, t2), ``velocity`` (m, 3) [m/s] = J u+, ``mode`` (m,) indices into
    :data:`MODES`; ``iterations`` and ``converged`` of the cone solver."""

    q: np.ndarray
    u: np.ndarray
    points: tuple[ContactPoint, ...]
    impulse: np.ndarray
    velocity: np.ndarray
    mode: np.ndarray
    iterations: int
    converged: bool


@dataclass(frozen=True)
class ContactRun:
    """A time-stepping run: ``t`` (N+1,) [s], ``q`` (N+1, n_q), ``u`` (N+1, n_u), ``energy`` (N+1,) [J] (None when
    the dynamics has none), ``contacts`` (:class:`ContactRecords`), ``iterations`` (N,) and ``converged`` (N,) of
    the solver per step, ``h`` [s], ``scheme`` (the :class:`ContactScheme` that ran), ``engine`` and
    ``engine_reason`` (the loop that ran and why, as a run file records them)."""

    t: np.ndarray
    q: np.ndarray
    u: np.ndarray
    energy: np.ndarray | None
    contacts: ContactRecords
    iterations: np.ndarray
    converged: np.ndarray
    h: float
    scheme: ContactScheme
    engine: str = "python"
    engine_reason: str = ""


def _bodies_of(dynamics, bodies):
    bodies = dynamics if bodies is None else bodies
    if not (callable(getattr(bodies, "point_jacobian", None)) and callable(getattr(bodies, "normalize", None))):
        raise NotSupportedError(f"contact time stepping: {type(bodies).__name__} gives no point_jacobian(q, body, "
                                f"point) and normalize(q); pass bodies= (e.g. kane.switching.FreeBodies)")
    return bodies


def _bases(points: Sequence[ContactPoint]) -> np.ndarray:
    """(m, 3, 3): per contact the rows (n, t1, t2), the tangents of each distinct normal computed once."""
    out = np.empty((len(points), 3, 3))
    seen: dict[bytes, np.ndarray] = {}
    for i, cp in enumerate(points):
        n = np.asarray(cp.normal_world, dtype=float)
        key = n.tobytes()
        if key not in seen:
            seen[key] = np.vstack([n, *cp.tangents_world()])
        out[i] = seen[key]
    return out


def _rows(q, points: Sequence[ContactPoint], bodies, n_u: int):
    """J (3m, n_u): per contact the (n, t1, t2) rows of the relative velocity of b's witness point over a's; a
    scipy.sparse matrix when ``bodies`` gives ``point_jacobians`` (sparse rows of many points at once), else
    dense from ``point_jacobian``."""
    m = len(points)
    if m == 0:
        return np.zeros((0, n_u))
    basis = _bases(points)
    if not callable(getattr(bodies, "point_jacobians", None)):
        return _dense(q, points, bodies, n_u, basis)
    rows, cols, vals = [], [], []
    for sign, side in ((1.0, "b"), (-1.0, "a")):
        index = [i for i, cp in enumerate(points) if getattr(cp, f"body_{side}") != GROUND]
        if not index:
            continue
        c, v = bodies.point_jacobians(q, [getattr(points[i], f"body_{side}") for i in index],
                                      np.array([getattr(points[i], f"point_{side}_world") for i in index]))
        index = np.array(index)
        v = sign * np.einsum("kij,kjc->kic", basis[index], v)  # (k, 3, c)
        rows.append(np.broadcast_to((3 * index[:, None] + np.arange(3))[:, :, None], v.shape).reshape(-1))
        cols.append(np.broadcast_to(c[:, None, :], v.shape).reshape(-1))
        vals.append(v.reshape(-1))
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(3 * m, n_u))


def _dense(q, points: Sequence[ContactPoint], bodies, n_u: int, basis: np.ndarray) -> np.ndarray:
    J = np.zeros((3 * len(points), n_u))
    for i, cp in enumerate(points):
        rel = np.zeros((3, n_u))
        if cp.body_b != GROUND:
            rel += bodies.point_jacobian(q, cp.body_b, cp.point_b_world)
        if cp.body_a != GROUND:
            rel -= bodies.point_jacobian(q, cp.body_a, cp.point_a_world)
        J[3 * i:3 * i + 3] = basis[i] @ rel
    return J


def dense_rows(q, points: Sequence[ContactPoint], bodies, n_u: int) -> np.ndarray:
    """The rows of :func:`_rows` as a dense array (3m, n_u), from ``bodies.point_jacobian`` one point at a time
    (for the few contacts of the event-driven scheme, cheaper than assembling sparse rows)."""
    return _dense(q, points, bodies, n_u, _bases(points)) if points else np.zeros((0, n_u))


class _MassSolve:
    """x -> M^-1 x at one configuration: ``bodies.inverse_mass_matrix(t, q)`` when it is given (block diagonal,
    sparse), else a Cholesky factorization of ``dynamics.mass_matrix``."""

    def __init__(self, dynamics, bodies, t, q, params):
        inverse = getattr(bodies, "inverse_mass_matrix", None)
        self.inverse = inverse(t, q) if callable(inverse) else None
        if self.inverse is None:
            self.chol = cho_factor(np.asarray(dynamics.mass_matrix(t, q, params), dtype=float))

    def __call__(self, x):
        if self.inverse is not None:
            return self.inverse @ x
        return cho_solve(self.chol, x.toarray() if sparse.issparse(x) else x)


def contact_step(dynamics, contacts: Callable, t: float, q, u, h: float, options: ContactOptions = ContactOptions(),
                 bodies=None, params=None, warm_start: dict | None = None) -> ContactStep:
    """One step of size h [s] from (t, q (n_q,), u (n_u,)) (module docstring). ``warm_start`` maps a contact
    pair's name to the impulses (k, 3) of its contacts in the previous step (used when the count matches), or is
    a :class:`.contact_fast.WarmStart`. When ``contacts(q)`` returns a ContactBatch and the dynamics is a
    :class:`.contact_bodies.FreeBodies`, the step runs compiled (:mod:`.contact_fast`: the same step, arrays)."""
    if options.scheme is ContactScheme.EVENT_DRIVEN:
        raise NotSupportedError("ContactScheme.EVENT_DRIVEN: this is the time-stepping scheme; run event-driven "
                                "contact with kane.switching.simulate_contacts (kane.switching.contact_events)")
    bodies = _bodies_of(dynamics, bodies)
    q, u = np.asarray(q, dtype=float), np.asarray(u, dtype=float)
    found = contacts(q)
    if isinstance(found, ContactBatch):  # the compiled path (contact_fast) for free bodies, else the records
        free = free_bodies_of(dynamics, bodies)
        if free is not None:
            if warm_start is not None and not isinstance(warm_start, WarmStart):
                warm_start = WarmStart.from_names(found, warm_start) if warm_start else None
            return ContactStep(*batch_step(free, found, t, q, u, h, options, warm_start))
        found = found.points()
        if isinstance(warm_start, WarmStart):
            warm_start = warm_start.names()
    solve = _MassSolve(dynamics, bodies, t, q, params)
    free_velocity, advance = getattr(dynamics, "free_velocity", None), getattr(dynamics, "advance", None)
    if callable(free_velocity):  # FreeBodies: the gyroscopic term without energy gain
        u_free = free_velocity(t, q, u, h)
    else:
        u_free = u + h * solve(np.asarray(dynamics.forcing(t, q, u, params), dtype=float))
    found = list(found)
    for cp in found:
        if not isinstance(cp, ContactPoint):
            raise ArgumentError(f"contacts(q): expected a list of kane.model.contact.ContactPoint, got "
                                f"{type(cp).__name__}")
    J_all = _rows(q, found, bodies, u.shape[0])
    v_free = (J_all @ u_free).reshape(-1, 3)
    gap = np.array([cp.distance for cp in found], dtype=float)
    active = np.nonzero(gap + h * v_free[:, 0] <= 0.0)[0] if found else np.zeros(0, dtype=int)
    points = tuple(found[i] for i in active)
    m = len(points)
    if m == 0:
        q_next = _advance(dynamics, bodies, advance, t, q, u_free, h, params)
        return ContactStep(q_next, u_free, (), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=np.int8), 0,
                           True)
    rows = (3 * active[:, None] + np.arange(3)).reshape(-1)
    J = J_all[rows]
    v_start = (J @ u).reshape(m, 3)
    e = np.array([cp.material.restitution for cp in points])
    target = np.where(e > 0, -e * np.minimum(v_start[:, 0], 0.0), -np.maximum(gap[active], 0.0) / h)
    mu_s = np.array([cp.material.mu_static for cp in points])
    mu_k = np.array([cp.material.mu_kinetic for cp in points])
    mu = np.where(np.hypot(v_start[:, 1], v_start[:, 2]) <= options.slip_tolerance, mu_s, mu_k)
    MinvJT = solve(J.T)
    W = J @ MinvJT
    W = W.toarray() if sparse.issparse(W) else np.asarray(W)
    W = 0.5 * (W + W.T)
    b = v_free[active].copy()
    b[:, 0] -= target
    start = None
    if warm_start:
        start = np.zeros((m, 3))
        seen: dict[str, int] = {}
        for i, cp in enumerate(points):
            k = seen.get(cp.name, 0)
            seen[cp.name] = k + 1
            prev = warm_start.get(cp.name)
            if prev is not None and k < len(prev):
                start[i] = prev[k]
    for _ in range(3):  # a contact that starts to slip in this step slips with kinetic friction
        sol = solve_cones(W, b.reshape(-1), mu, options.solver, start)
        u_next = u_free + MinvJT @ sol.impulse.reshape(-1)
        velocity = (J @ u_next).reshape(m, 3)
        slip = np.hypot(velocity[:, 1], velocity[:, 2])
        demote = (slip > options.slip_tolerance) & (mu != mu_k)
        if not demote.any():
            break
        mu, start = np.where(demote, mu_k, mu), sol.impulse
    mode = np.where(sol.impulse[:, 0] <= 0.0, 0, np.where(slip <= options.slip_tolerance, 1, 2)).astype(np.int8)
    q_next = _advance(dynamics, bodies, advance, t, q, u_next, h, params)
    return ContactStep(q_next, u_next, points, sol.impulse, velocity, mode, sol.iterations, sol.converged)


def _advance(dynamics, bodies, advance, t, q, u_next, h, params):
    """q+ = q + h q'(q, u+), quaternions normalized (``dynamics.advance`` when it gives one: FreeBodies)."""
    if callable(advance):
        return advance(q, u_next, h)
    return bodies.normalize(q + h * np.asarray(dynamics.qdot(t, q, u_next, params), dtype=float))


def _pair_names(warm: WarmStart, table: dict) -> tuple[str, ...]:
    """The pair names of ``warm``'s contacts; ``table`` caches {(shape names, pair id): name} across steps."""
    n, names = len(warm.shape_names), warm.shape_names
    out = []
    for c in warm.pair.tolist():
        name = table.get((names, c))
        if name is None:
            name = table[(names, c)] = f"{names[c // n]}|{names[c % n]}"
        out.append(name)
    return tuple(out)


def step_count(h: float, t_end: float) -> int:
    """The number of steps of size h [s] from 0 to t_end [s]; an ArgumentError unless h > 0, t_end >= 0 and t_end
    is a whole number of steps (to 1e-9 relative)."""
    if not (float(h) > 0 and float(t_end) >= 0):
        raise ArgumentError(f"simulate_contacts: expected h > 0 [s] and t_end >= 0 [s], got h = {h!r}, "
                            f"t_end = {t_end!r}")
    n = int(round(float(t_end) / float(h)))
    if abs(n * h - t_end) > 1e-9 * max(1.0, t_end):
        raise ArgumentError(f"simulate_contacts: t_end = {t_end!r} is not a whole number of steps h = {h!r}")
    return n


def _check_state(dynamics, q0, u0):
    q0, u0 = np.array(q0, dtype=float).reshape(-1), np.array(u0, dtype=float).reshape(-1)
    if q0.shape != (dynamics.n_q,) or u0.shape != (dynamics.n_u,):
        raise ArgumentError(f"simulate_contacts: expected q0 ({dynamics.n_q},) and u0 ({dynamics.n_u},), got "
                            f"{q0.shape} and {u0.shape}")
    check = getattr(dynamics, "check_quaternions", None)
    if callable(check):
        check(q0, "q0")
    return q0, u0


def _join(chunks: list, empty_shape, dtype=float) -> np.ndarray:
    """The per-step record arrays ``chunks`` stacked along their first axis (an empty array of ``empty_shape``)."""
    return np.concatenate(chunks).astype(dtype, copy=False) if chunks else np.zeros(empty_shape, dtype=dtype)


def simulate_contacts(dynamics, contacts: Callable, q0, u0, h: float, t_end: float,
                      options: ContactOptions = ContactOptions(), bodies=None, params=None, *,
                      sink: Callable | None = None, every: int = 100, watch: Callable | None = None) -> ContactRun:
    """Run :func:`contact_step` from t = 0 with q0 (n_q,), u0 (n_u,) in steps of h [s] until t_end [s] (the last
    step lands on t_end to round-off: N = round(t_end / h) steps). ``contacts(q) -> list[ContactPoint]``;
    ``bodies`` gives ``point_jacobian`` and ``normalize`` (default: ``dynamics`` itself); ``params`` is handed to
    the dynamics. Returns a :class:`ContactRun`.

    A run written as it goes (:mod:`.contact_stream`): ``sink(block)`` gets a :class:`.contact_samples.SampleBlock`
    every ``every`` steps and at the end (sample 0 with the first; its records' ``step`` global); ``watch(k, t)``
    is called before step k and may raise to stop the run; with a sink, the samples up to the last good one are
    sent before anything that stops the run propagates, and a step that raises becomes a
    :class:`kane.simulate.SimulationError` there (time, contact modes, state)."""
    if options.scheme is ContactScheme.EVENT_DRIVEN:
        raise NotSupportedError("ContactScheme.EVENT_DRIVEN: this is the time-stepping scheme; run event-driven "
                                "contact with kane.switching.simulate_contacts (kane.switching.contact_events)")
    n = step_count(h, t_end)
    bodies = _bodies_of(dynamics, bodies)
    q, u = _check_state(dynamics, q0, u0)
    t = np.arange(n + 1) * float(h)
    Q, U = np.empty((n + 1, q.size)), np.empty((n + 1, u.size))
    Q[0], U[0] = q, u
    has_energy = dynamics.capabilities.energy
    energy = np.empty(n + 1) if has_energy else None
    if has_energy:
        energy[0] = dynamics.energy(0.0, q, u, params)
    iterations, converged = np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
    rec: dict[str, list] = {k: [] for k in ("step", "name", "impulse", "n", "slip", "mode")}  # arrays per step
    warm: dict[str, list] = {}
    free = free_bodies_of(dynamics, bodies)
    table: dict = {}  # pair names by (shape names, pair id), made once

    def records(lo: int = 0) -> ContactRecords:
        """The records of the steps from record chunk ``lo`` on."""
        names = tuple(x for chunk in rec["name"][lo:]
                      for x in (_pair_names(chunk, table) if isinstance(chunk, WarmStart) else chunk))
        impulse = _join(rec["impulse"][lo:], (0, 3))
        return ContactRecords(_join(rec["step"][lo:], 0, np.int64), names, impulse[:, 0] / h, impulse[:, 1:] / h,
                              _join(rec["n"][lo:], (0, 3)), _join(rec["slip"][lo:], (0, 2)),
                              _join(rec["mode"][lo:], 0, np.int8))

    sent = {"samples": 0, "chunks": 0, "steps": 0}
    good, modes_now = 0, ()  # the last complete sample, and the contact modes there

    def send(end: int) -> None:
        """Samples sent .. end - 1 and their steps' records to the sink."""
        lo = sent["samples"]
        if end <= lo:
            return
        block = SampleBlock(lo, t[lo:end], Q[lo:end], U[lo:end], None if energy is None else energy[lo:end],
                            records(sent["chunks"]), (), (end - 1) - sent["steps"], modes_now)
        sent.update(samples=end, chunks=len(rec["step"]), steps=end - 1)
        sink(block)

    k = 0
    loop, chunk = isinstance(contacts, BatchContacts) and contacts.loop_for(dynamics), None
    try:
        while loop and good < n:  # the compiled loop (contact_loop): chunks of steps, watch before each
            if watch is not None:
                watch(good, float(t[good]))
            end = n if sink is None else max(good + 1, min(n, sent["samples"] + every - 1))
            chunk = contacts.run(good, end, Q, U, energy, iterations, converged, rec, h, options,
                                 chunk.warm if chunk is not None else None)
            good = chunk.done
            if sink is not None:
                modes_now = _last_modes(rec, good - 1, table)
            if chunk.failure is not None:
                raise chunk.failure
            if sink is not None and good + 1 - sent["samples"] >= every:
                send(good + 1)
        for k in range(good, n):
            if watch is not None:
                watch(k, float(t[k]))
            found = contacts(Q[k])
            start = warm if options.warm_start else None
            if free is not None and isinstance(found, ContactBatch):  # the compiled path: one call, arrays
                if isinstance(start, dict):
                    start = WarmStart.from_names(found, start) if start else None
                Q[k + 1], U[k + 1], active, impulse, velocity, mode, iterations[k], converged[k] = step_arrays(
                    free, found, t[k], Q[k], U[k], h, options, start)
            else:
                s = contact_step(dynamics, lambda q, found=found: found, t[k], Q[k], U[k], h, options, bodies,
                                 params, start)
                Q[k + 1], U[k + 1], impulse, velocity, mode = s.q, s.u, s.impulse, s.velocity, s.mode
                iterations[k], converged[k], active = s.iterations, s.converged, None
            if has_energy:
                energy[k + 1] = dynamics.energy(t[k + 1], Q[k + 1], U[k + 1], params)
            warm, names = {}, ()
            if len(mode):
                if active is not None:  # names made once at the end (or when a block is sent)
                    warm = WarmStart(found.pair[active], impulse, found.shape_names)
                    rec["name"].append(warm)
                    rec["n"].append(found.normal[active])
                    names = warm
                else:
                    for i, cp in enumerate(s.points):
                        warm.setdefault(cp.name, []).append(impulse[i])
                    names = tuple(cp.name for cp in s.points)
                    rec["name"].append(names)
                    rec["n"].append(np.array([cp.normal_world for cp in s.points], dtype=float))
                rec["step"].append(np.full(len(mode), k, dtype=np.int64))
                rec["impulse"].append(impulse)
                rec["slip"].append(velocity[:, 1:])
                rec["mode"].append(mode)
            good = k + 1
            if sink is not None:
                modes_now = _pressing(_pair_names(names, table) if isinstance(names, WarmStart) else names, mode)
                if good + 1 - sent["samples"] >= every:
                    send(good + 1)
    except Exception as exc:
        if sink is None:
            raise
        send(good + 1)
        from ..simulate.simulator import SimulationError

        if isinstance(exc, SimulationError):
            raise
        raise run_failure("contact time stepping", f"the contact step from t = {t[good]!r} s raised "
                          f"{type(exc).__name__}: {exc}", float(t[good]), Q[good], U[good], modes_now) from exc
    except BaseException:
        if sink is not None:
            send(good + 1)
        raise
    if sink is not None:
        send(n + 1)
    return ContactRun(t, Q, U, energy, records(), iterations, converged, float(h), options.scheme,
                      engine="compiled loop" if loop else "python")


def _last_modes(rec: dict, step: int, table: dict) -> tuple:
    """:func:`_pressing` of step ``step``'s records in the record lists of the compiled loop."""
    if not rec["step"]:
        return ()
    rows = np.nonzero(rec["step"][-1] == step)[0]
    names = _pair_names(rec["name"][-1], table) if len(rows) else ()
    return _pressing(tuple(names[i] for i in rows.tolist()), rec["mode"][-1][rows])


def _pressing(names, mode) -> tuple:
    """((``"<pair>#<rank>"``, mode name), ...) of a step's pressing contacts (``names`` of all its contacts, in
    order; the rank counts a pair's contacts)."""
    seen: dict = {}
    out = []
    for name, m in zip(names, np.asarray(mode).tolist()):
        r = seen.get(name, 0)
        seen[name] = r + 1
        if m:
            out.append((f"{name}#{r}", MODES[m]))
    return tuple(out)
