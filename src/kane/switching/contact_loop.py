"""The compiled multi-step loop of the contact time stepping: collision and step of many steps in one compiled call.

:class:`BatchContacts` is the ``contacts(q)`` callable of a model's collision shapes for
:class:`.contact_bodies.FreeBodies` whose bodies are the model's, in the model's order: ``BatchContacts(model,
bodies, options)(q)`` is :func:`kane.mechanics.collision_batch.contacts_batch` at the poses in q, so any caller
works with it. :func:`kane.switching.contact_stepping.simulate_contacts` recognises it (:meth:`BatchContacts.
loop_for`) when every pair is solved in compiled code (spheres, boxes, half-spaces; numba installed), the dynamics
is those FreeBodies with constant gravity, and then runs :func:`_loop`: per step the compiled collision batch
(:func:`kane.mechanics.collision_prims._batch`) and the compiled step (:func:`.contact_fast._step`), the energy
(:func:`.contact_bodies.total_energy`), the records into preallocated arrays (grown between calls when full), the
warm start carried as arrays. The same arithmetic as the per-step path (``simulate_contacts`` with a plain
``lambda q: contacts_batch(...)``): the same Q, U, energy, records and iterations
(tests/switching/test_contact_loop.py). On this path ``watch`` is called before each chunk of steps (``every``
steps with a sink, else the whole run), not before each step.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ArgumentError, KaneError
from ..mechanics.collision import BroadPhase, CollisionData, CollisionOptions, NarrowPhase, collision_model
from ..mechanics.collision_batch import _PATCH_TOLERANCE, contacts_batch
from ..mechanics.collision_prims import BOX, HAVE_NUMBA, PLANE, SPHERE, primitive_tables
from ..jit import kernel, with_globals
from .contact_bodies import FreeBodies
from .contact_bodies import _compiled as _body_kernels
from .contact_fast import WarmStart, _all_kernels

__all__ = ["BatchContacts", "LoopChunk"]

_ROWS_PER_STEP = 16  # the record buffer of a call: rows per step at first (doubled when full)


def _loop(Q, U, E, iterations, converged, k0, k1, g, h, masses, inertias, inertias_inv, masses_inv, lookup,
          tables, margin, patch, patch_tol, aabb, warm_pair, warm_impulse, use_warm, has_energy, slip_tol, max_it,
          tol, relax, rec_step, rec_pair, rec_float, rec_mode):
    """Steps k0 .. k1 - 1 from Q[k0], U[k0] (module docstring); records (step, pair, impulse 0:3 | normal 3:6 |
    slip 6:8, mode) from row 0. Returns (steps done, code: 0 done, 1 record buffer full, -1/-2 the step's failure,
    -3 a pair left to coal; rows, warm pair, warm impulse)."""
    n = inertias.shape[0]
    kind, size, plane_normal, plane_offset, R_bs, r_bs, body_index, aabb_centre, aabb_half, allowed, \
        material_index, material_table = tables
    position, quaternion, no_rotations = np.empty((n, 3)), np.empty((n, 4)), np.empty((0, 3, 3))
    rows = 0
    for k in range(k0, k1):
        qb = Q[k].reshape(n, 7)
        for b in range(n):
            for c in range(3):
                position[b, c] = qb[b, c]
            for c in range(4):
                quaternion[b, c] = qb[b, 3 + c]
        F, I, fallback, m_all = _batch(no_rotations, quaternion, position, kind, size, plane_normal, plane_offset,
                                       R_bs, r_bs, body_index, aabb_centre, aabb_half, allowed, material_index,
                                       material_table, margin, patch, patch_tol, aabb)
        if fallback.shape[0]:
            return k, -3, rows, warm_pair, warm_impulse
        if rows + m_all > rec_step.shape[0]:
            return k, 1, rows, warm_pair, warm_impulse
        m3 = 3 * m_all
        point_a, point_b = F[:m3].reshape(m_all, 3), F[m3:2 * m3].reshape(m_all, 3)  # views of this step's batch
        normal, distance = F[2 * m3:3 * m3].reshape(m_all, 3), F[3 * m3:3 * m3 + m_all]
        mu_static, mu_kinetic = F[3 * m3 + m_all:3 * m3 + 2 * m_all], F[3 * m3 + 2 * m_all:4 * m3]
        restitution = F[4 * m3:4 * m3 + m_all]
        body_a, body_b, pair = I[:m_all], I[m_all:2 * m_all], I[4 * m_all:5 * m_all]
        active, mode = np.empty(m_all, np.int64), np.empty(m_all, np.int8)
        impulse, velocity = np.empty((m_all, 3)), np.empty((m_all, 3))
        if not use_warm:
            warm_pair, warm_impulse = np.zeros(0, np.int64), np.zeros((0, 3))
        m, sweeps, residual = _step(qb, U[k], g, h, inertias, inertias_inv, masses_inv, lookup, body_a, body_b,
                                    point_a, point_b, normal, distance, restitution, mu_static, mu_kinetic, pair,
                                    warm_pair, warm_impulse, slip_tol, max_it, tol, relax, Q[k + 1].reshape(n, 7),
                                    U[k + 1], active, impulse, velocity, mode)
        if m < 0:
            return k, m, rows, warm_pair, warm_impulse
        iterations[k], converged[k] = sweeps, residual <= tol
        if has_energy:
            E[k + 1] = total_energy(Q[k + 1].reshape(n, 7), U[k + 1], masses, inertias, g)
        warm_pair, warm_impulse = np.empty(m, np.int64), np.empty((m, 3))
        for i in range(m):
            a = active[i]
            warm_pair[i] = pair[a]
            rec_step[rows], rec_pair[rows], rec_mode[rows] = k, pair[a], mode[i]
            for c in range(3):
                warm_impulse[i, c] = impulse[i, c]
                rec_float[rows, c], rec_float[rows, 3 + c] = impulse[i, c], normal[a, c]
            rec_float[rows, 6], rec_float[rows, 7] = velocity[i, 1], velocity[i, 2]
            rows += 1
    return k1, 0, rows, warm_pair, warm_impulse


_COMPILED: dict = {}
_LOCK = threading.Lock()


def _loop_kernel():
    """:func:`_loop` compiled by numba (:func:`kane.jit.kernel`: once, cached on disk), calling the compiled
    collision batch, step and energy."""
    with _LOCK:
        if "loop" not in _COMPILED:
            from ..mechanics.collision_prims import _batch

            step = _all_kernels()[3]
            energy = _body_kernels()[2]
            _COMPILED["loop"] = kernel(with_globals(_loop, _batch=_batch, _step=step, total_energy=energy))
        return _COMPILED["loop"]


class LoopChunk:
    """What one chunk of the compiled loop gives back: ``done`` (the steps run, through step done - 1), ``warm``
    (the warm start of step ``done``: (pair ids, impulses)), ``failure`` (the error of step ``done``, or None)."""

    def __init__(self, done: int, warm: tuple, failure: Exception | None):
        self.done, self.warm, self.failure = done, warm, failure


class BatchContacts:
    """``contacts(q)`` of ``model``'s collision shapes for the FreeBodies ``bodies`` (the model's bodies, in its
    order; q (7 N,) their poses): :func:`kane.mechanics.collision_batch.contacts_batch` under the collision
    ``options``, and the compiled multi-step loop of :func:`kane.switching.contact_stepping.simulate_contacts`
    (module docstring)."""

    def __init__(self, model, bodies: FreeBodies, options: CollisionOptions = CollisionOptions()):
        self.model, self.bodies = model, bodies
        self.data = CollisionData(model, options)
        cm = collision_model(model)
        self.body_names = tuple(b.name for b in cm.model.bodies)
        if not isinstance(bodies, FreeBodies) or self.body_names != bodies.names:
            raise ArgumentError(f"BatchContacts: expected FreeBodies named as the model's bodies "
                                f"({', '.join(self.body_names)}), in that order, got "
                                f"{getattr(bodies, 'names', type(bodies).__name__)!r}")
        self.shape_names = tuple(c.name for c in cm.collisions)
        self.tables = tuple(primitive_tables(cm))
        kind, allowed = self.tables[0], self.tables[9]
        planes = kind == PLANE
        self.compiled = bool(HAVE_NUMBA and options.narrow_phase is not NarrowPhase.COAL
                             and np.all(np.isin(kind, (SPHERE, BOX, PLANE)))
                             and not np.any(np.asarray(allowed)[np.ix_(planes, planes)]))

    def __call__(self, q):
        qb = np.reshape(np.asarray(q, dtype=float), (-1, 7))
        return contacts_batch(self.model, self.data, (qb[:, 0:3], qb[:, 3:7]))

    def loop_for(self, dynamics) -> bool:
        """Whether ``simulate_contacts`` of ``dynamics`` takes the compiled loop (module docstring)."""
        return (self.compiled and dynamics is self.bodies and type(dynamics) is FreeBodies
                and dynamics.gravity_constant is not None)

    def run(self, k0: int, k1: int, Q, U, energy, iterations, converged, rec: dict, h: float, options,
            warm: tuple | None) -> LoopChunk:
        """Steps k0 .. k1 - 1 of a ``simulate_contacts`` run into its arrays and record lists ``rec``, from the
        warm start ``warm`` (pair ids, impulses) or None."""
        loop, free, solver = _loop_kernel(), self.bodies, options.solver
        opts, g = self.data.options, np.array(free.gravity_constant, dtype=float)
        warm = warm if warm is not None else (np.zeros(0, np.int64), np.zeros((0, 3)))
        E = energy if energy is not None else np.zeros(Q.shape[0])
        lookup = np.arange(len(free.names), dtype=np.int64)
        k, capacity = k0, _ROWS_PER_STEP * (k1 - k0) + 64
        while True:
            rec_step, rec_pair = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
            rec_float, rec_mode = np.empty((capacity, 8)), np.empty(capacity, np.int8)
            k, code, rows, *warm = loop(
                Q, U, E, iterations, converged, k, k1, g, float(h), free.masses, free.inertias,
                free.inertias_inv, free.masses_inv, lookup, self.tables, float(opts.margin), bool(opts.patch),
                _PATCH_TOLERANCE, opts.broad_phase is BroadPhase.SWEEP, warm[0], warm[1], bool(options.warm_start),
                energy is not None, float(options.slip_tolerance), int(solver.max_iterations),
                float(solver.tolerance), float(solver.relaxation), rec_step, rec_pair, rec_float, rec_mode)
            if rows:
                rec["step"].append(rec_step[:rows].copy())
                rec["name"].append(WarmStart(rec_pair[:rows].copy(), rec_float[:rows, 0:3], self.shape_names))
                rec["impulse"].append(rec_float[:rows, 0:3].copy())
                rec["n"].append(rec_float[:rows, 3:6].copy())
                rec["slip"].append(rec_float[:rows, 6:8].copy())
                rec["mode"].append(rec_mode[:rows].copy())
            if code != 1:
                break
            capacity *= 2
        failure = None
        if code in (-1, -2):
            failure = ArgumentError("contact batch: expected mu >= 0 and a positive normal entry W_nn for every "
                                    "contact")
        elif code == -3:
            failure = KaneError("BatchContacts: a pair was left to coal in the compiled loop")
        return LoopChunk(k, tuple(warm), failure)
