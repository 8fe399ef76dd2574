"""Model files on the compiled event-driven path: :func:`model_event_run` runs a model whose bodies are free and
whose collision pairs are boxes and spheres against ground half-spaces on :mod:`.contact_events_fast` (FreeBodies
built from the model's masses, inertias and gravity, checked on a probe state against the model's own equations;
the free joints' body-axis linear velocities mapped to world axes and back), any other model on the Python loop
with the reason recorded. :func:`.contact_run.run_contacts` calls it for ``--contact-scheme event-driven``.
"""

from __future__ import annotations

import numpy as np

from ..model.model import GROUND
from ..spatial import quaternion_to_rotation
from .contact_events import simulate_events
from .contact_events_fast import CORNERS, PlaneContacts

__all__ = ["free_model", "model_event_run", "model_scene", "to_free", "to_model"]


def _free_bodies_of_model(dynamics, params, system_bodies=None):
    """(FreeBodies equal to the model of ``dynamics``, the model) or raise _Refused naming why not;
    ``system_bodies`` (the model's :class:`.system_bodies.SystemBodies`, when given): its body poses at the probe
    state must be the FreeBodies' (joint frames at the ground's origin and the bodies', q in body order)."""
    import sympy as sp

    from .contact_bodies import FreeBodies

    model = dynamics.equations.model
    nb = len(model.bodies)
    if model.n_q != 7 * nb or len(dynamics.equations.u_independent) != 6 * nb or not nb:
        raise _Refused(f"model {model.name!r} is not free bodies (n_q = {model.n_q}, {nb} bodies)")
    if not set(getattr(sp.Matrix(model.gravity), "free_symbols", ())) <= set(model.parameters):
        raise _Refused(f"gravity {tuple(model.gravity)} is not a constant")  # t (the model's time) or an input
    p = model.parameter_values(params)
    identity = np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], nb)
    M = np.asarray(dynamics.mass_matrix(0.0, identity, p), dtype=float)  # diag(I_i, m_i 1) for free bodies
    if np.abs(M[np.kron(np.eye(2 * nb), np.ones((3, 3))) == 0]).max() > 1e-12 * np.abs(M).max():
        raise _Refused(f"model {model.name!r}: its mass matrix couples bodies or a body's rotation and translation "
                       f"(joints, or a centre of mass off its frame's origin)")
    masses = np.array([M[6 * i + 3, 6 * i + 3] for i in range(nb)])
    f = np.asarray(dynamics.forcing(0.0, identity, np.zeros(6 * nb), p), dtype=float).reshape(nb, 6)
    bodies = FreeBodies([b.name for b in model.bodies], masses, [M[6 * i:6 * i + 3, 6 * i:6 * i + 3] for i in
                                                                   range(nb)], gravity=f[0, 3:] / masses[0])
    rng = np.random.default_rng(7)  # probe: the model's equations are those of the FreeBodies, v in body axes
    q = rng.normal(size=7 * nb).reshape(-1, 7)
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1, keepdims=True)
    q, u = q.reshape(-1), rng.normal(size=6 * nb)
    uf = to_free(bodies, q, u)
    qd = np.asarray(dynamics.qdot(0.0, q, u, p), dtype=float)
    ud_model = np.asarray(dynamics.udot(0.0, q, u, p), dtype=float).reshape(-1, 6)
    ud = bodies.udot(0.0, q, uf).reshape(-1, 6)
    ub = u.reshape(-1, 6)
    for i in range(nb):  # v_w = R v_b: v_w' = R (v_b' + omega x v_b)
        R = bodies.pose(q, bodies.names[i])[1]
        ud_model[i, 3:] = R @ (ud_model[i, 3:] + np.cross(ub[i, :3], ub[i, 3:]))
    scale = 1.0 + np.abs(ud).max() + np.abs(qd).max()
    if (np.abs(qd - bodies.qdot(0.0, q, uf)).max() > 1e-9 * scale or np.abs(ud_model - ud).max() > 1e-9 * scale
            or abs(float(dynamics.energy(0.0, q, u, p)) - bodies.energy(0.0, q, uf)) > 1e-9 * scale):
        raise _Refused(f"model {model.name!r}: its equations are not those of free bodies under gravity (other "
                       f"joints or loads)")
    if system_bodies is not None:
        R, r = system_bodies.poses(q)
        qb = q.reshape(-1, 7)
        if np.abs(r - qb[:, 0:3]).max() > 1e-9 * (1.0 + np.abs(qb[:, 0:3]).max()) or \
                np.abs(R - quaternion_to_rotation(qb[:, 3:7])).max() > 1e-9:
            raise _Refused(f"model {model.name!r}: a free joint's frames are not the ground's and its body's (or "
                           f"its coordinates are not in body order)")
    return bodies, model


def _model_features(model, bodies):
    """PlaneContacts features of ``model``'s collision pairs, or raise _Refused naming a pair it cannot take."""
    from ..mechanics.collision import collision_model
    from ..model.collision import Box, HalfSpace, Sphere

    cm = collision_model(model)
    feats, n = [], len(cm.collisions)
    for i in range(n):
        for j in range(i + 1, n):
            if not cm.allowed[i, j]:
                continue
            a, b = cm.collisions[i], cm.collisions[j]
            plane, other = (a, b) if isinstance(a.shape, HalfSpace) else (b, a)
            if not isinstance(plane.shape, HalfSpace) or not isinstance(other.shape, (Box, Sphere)) or \
                    plane.body != GROUND or other.body == GROUND:
                raise _Refused(f"pair {a.name}|{b.name}: {type(a.shape).__name__} against {type(b.shape).__name__} "
                               f"(the compiled path takes boxes and spheres on bodies against ground half-spaces)")
            R_p, r_p = np.asarray(plane.R_body_shape, float), np.asarray(plane.r_body_shape, float)
            normal = R_p @ np.asarray(plane.shape.normal, float)
            common = {"body": other.body, "normal": normal, "offset": plane.shape.offset + normal @ r_p,
                      "shape_a": a.name, "shape_b": b.name, "material": cm.material(i, j),
                      "point_is_b": other is b}
            R_o, r_o = np.asarray(other.R_body_shape, float), np.asarray(other.r_body_shape, float)
            if isinstance(other.shape, Box):
                feats += [dict(common, rho=r_o + R_o @ (corner * np.asarray(other.shape.half_extents, float)))
                          for corner in CORNERS]
            else:
                feats.append(dict(common, rho=r_o, radius=float(other.shape.radius)))
    return PlaneContacts(bodies, feats)


class _Refused(Exception):
    """Why a model does not take the compiled path."""


def free_model(dynamics, params, system_bodies=None) -> tuple:
    """(FreeBodies, "") when the model of ``dynamics`` is free bodies under gravity (checked on a probe state
    against its own equations, and against the body poses of ``system_bodies`` when given), else (None, the reason
    it is not)."""
    try:
        return _free_bodies_of_model(dynamics, params, system_bodies)[0], ""
    except _Refused as why:
        return None, f"{why}"


def _turn_velocities(free, Q, U, to_world: bool) -> np.ndarray:
    """U (K, 6N) with each body's v turned by R (body -> world axes) or R^T (world -> body axes) at Q (K, 7N)."""
    Q, U = np.asarray(Q, dtype=float), np.array(U, dtype=float)
    K, nb = U.shape[0], len(free.names)
    Ub = U.reshape(K, nb, 6)
    R = quaternion_to_rotation(Q.reshape(K, nb, 7)[:, :, 3:7]).reshape(K, nb, 3, 3)
    Ub[:, :, 3:] = np.einsum("kbij,kbj->kbi" if to_world else "kbji,kbj->kbi", R, Ub[:, :, 3:])
    return U


def to_model(free, Q, U) -> np.ndarray:
    """U (K, 6N) of FreeBodies ``free`` (v in world axes) at Q (K, 7N) as the model's free joints' speeds (v in
    body axes), a copy."""
    return _turn_velocities(free, Q, U, to_world=False)


def to_free(bodies, q, u) -> np.ndarray:
    """u (6N,) of a model's free joints (omega body, v body axes) as FreeBodies' (omega body, v world)."""
    return _turn_velocities(bodies, np.reshape(q, (1, -1)), np.reshape(u, (1, -1)), to_world=True)[0]


def model_scene(dynamics, params, system_bodies=None) -> tuple:
    """(FreeBodies, PlaneContacts, "") of a model the compiled event-driven path runs (:func:`model_event_run`),
    or (None, None, the reason it does not qualify); ``system_bodies`` as :func:`free_model` takes it."""
    try:
        free, _ = _free_bodies_of_model(dynamics, params, system_bodies)
        return free, _model_features(dynamics.equations.model, free), ""
    except _Refused as why:
        return None, None, f"{why}"


def model_event_run(dynamics, params, bodies, contacts, record_points, q0, u0, h, t_end, options, sink=None,
                    window=None):
    """The event-driven run of a model with collision shapes (:func:`.contact_run.run_contacts`, and streamed by
    :class:`.contact_run.ContactJob` with ``sink``/``window`` as :func:`.contact_events.simulate_events` takes
    them): on the compiled path when the model is free bodies under gravity (checked on a probe state against the
    FreeBodies of its masses and inertias; its free joints' v in body axes mapped to world axes and back) whose
    collision pairs are boxes and spheres against ground half-spaces, else the Python loop on the model
    (``bodies`` its SystemBodies, ``contacts`` its coal contacts) with the reason recorded. Returns (run in the
    model's q, u, the contacts callable for the run's records)."""
    from dataclasses import replace

    free, scene, why = model_scene(dynamics, params, bodies)
    if scene is None:
        run = simulate_events(dynamics, contacts, q0, u0, h, t_end, options, bodies, params, sink=sink,
                              window=window)
        return replace(run, engine_reason=why) if run.engine == "python" else run, record_points

    forward = None if sink is None else (lambda block: sink(replace(block, u=to_model(free, block.q, block.u))))
    run = simulate_events(free, scene, q0, to_free(free, q0, u0), h, t_end, options, sink=forward, window=window)
    return replace(run, u=to_model(free, run.q, run.u)), scene
