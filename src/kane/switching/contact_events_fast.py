"""The compiled segment integrator of the event-driven contact scheme, for free bodies on ground half-spaces.

:func:`kane.switching.contact_events.simulate_events` takes this path when the scene qualifies (:func:`engine_of`):
the dynamics is a plain :class:`.contact_bodies.FreeBodies` with constant gravity and ``contacts`` a
:class:`PlaneContacts` (box corners and spheres of those bodies against half-spaces of the ground). Between events
one numba call (:func:`.contact_events_kernel._segment`) integrates the mode's equations by Dormand-Prince 5(4)
with error control and its 4th-order dense output (the scheme of :mod:`kane.simulate.dopri5`: Hairer's DOPRI5, RMS
error norm, PI control),
evaluates the event functions after every accepted step, locates a falling one by Brent's method on the dense
output (as scipy's solve_ivp does: xtol = rtol = 4 eps), and fills the output grid's samples. It returns to Python
only at an event (or the end) with the state, the event's slot and the right-hand sides it evaluated; Python keeps
the mode choice, the impacts and the projection (once per event).

Per feature f (a body-fixed point rho_f, or a sphere's centre, radius r_f >= 0, on body b against the plane
n . x = d of the ground, n the unit outward normal in world axes), with R the body's rotation, omega its body
angular velocity and omega_w = R omega:

* witness point x = c + R rho - r n, gap n . x - d;
* rows (n_ab, t1, t2) of the relative velocity v_b - v_a (:class:`kane.model.contact.ContactPoint`'s convention;
  ``side`` +1 when the point is shape b, -1 when it is shape a), on the body's speeds [R^T ((x - c) x e), e];
* their rate along the motion at constant u, analytic: e . (omega_w x (omega_w x R rho)) (the sphere's -r n term
  has zero rate since d(R omega)/dt = R (omega x omega) = 0 at constant u, and the ground's plane is fixed);
* the mode's bordered system M u' = f + A^T lambda - G N, A u' = -A' u (G the slip columns mu_k J_t^T s/|s|) by
  its Schur complement (A M^-1 (A^T - G)) lambda = -A' u - A M^-1 f in least squares (least-norm multipliers of
  redundant rows, as the Python loop's bordered least squares), M^-1 block-diagonal;
* the event functions of :func:`.contact_events._event_functions`: an open feature's gap, a closed one's normal
  force N, a sticking one's cone margin mu_s N - |f_t|, a slipping one's slip speed along its direction (+ the
  offset of a slip begun at rest).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KaneError, ModelError, NotSupportedError
from ..model.contact import ContactMaterial, ContactPoint
from ..model.model import GROUND

from .contact_events_kernel import numba_available, run_segment

__all__ = ["CORNERS", "PlaneContacts", "Segment", "choose_engine", "compiled_scene", "engine_of", "record_samples",
           "segment"]

CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
"""A box's corners in units of its half extents, in the order of :meth:`PlaneContacts.of_shapes`."""


class PlaneContacts:
    """``contacts(q)`` of features of :class:`.contact_bodies.FreeBodies` ``bodies`` against half-spaces of the
    ground: every feature listed at every q, in a fixed order (so a pair's ranks never shift), as
    :class:`~kane.model.contact.ContactPoint` records. A feature is a point ``rho`` (3,) [m] fixed in body
    ``body`` (a box corner; a sphere's centre with ``radius`` > 0), against the plane ``normal . x = offset``
    (world, normal outward), in pair ``(shape_a, shape_b)`` with ``material``; ``point_is_b`` says which side the
    body is (the normal runs a -> b). Build it with :meth:`of_shapes`, or from a model (:func:`model_plane_scene`)."""

    def __init__(self, bodies, features):
        self.bodies = bodies
        rows = list(features)
        if not rows:
            raise ModelError("PlaneContacts: expected at least one feature")
        self.body_names = tuple(r["body"] for r in rows)
        self.body = np.array([bodies.index[r["body"]] for r in rows], dtype=np.int64)
        self.rho = np.array([r["rho"] for r in rows], dtype=float).reshape(-1, 3)
        self.radius = np.array([r.get("radius", 0.0) for r in rows], dtype=float)
        normal = np.array([r["normal"] for r in rows], dtype=float).reshape(-1, 3)
        self.normal = normal / np.linalg.norm(normal, axis=1, keepdims=True)
        self.offset = np.array([r["offset"] for r in rows], dtype=float)
        self.side = np.array([1.0 if r.get("point_is_b", True) else -1.0 for r in rows])
        self.shapes = tuple((r["shape_a"], r["shape_b"]) for r in rows)
        self.materials = tuple(r["material"] for r in rows)
        self.mu_static = np.array([m.mu_static for m in self.materials])
        self.mu_kinetic = np.array([m.mu_kinetic for m in self.materials])
        self.basis = np.empty((len(rows), 3, 3))  # (n_ab, t1, t2) as ContactPoint.tangents_world
        for k in range(len(rows)):
            n = self.side[k] * self.normal[k]
            probe = ContactPoint(GROUND, GROUND, "", "", np.zeros(3), np.zeros(3), n, 0.0, self.materials[k])
            self.basis[k] = np.vstack([n, *probe.tangents_world()])
        for arr in (self.body, self.rho, self.radius, self.normal, self.offset, self.side, self.basis):
            arr.setflags(write=False)

    @classmethod
    def of_shapes(cls, bodies, boxes=(), spheres=(), normal=(0.0, 0.0, 1.0), offset: float = 0.0,
                  material: ContactMaterial = ContactMaterial(), plane: str = "plane") -> PlaneContacts:
        """Boxes {body: half extents (3,)} (8 corners each) and spheres {body: radius} centred on their bodies'
        centres of mass, against the ground plane ``plane`` (normal . x = offset), pairs named
        ``"<plane>|<body>"``."""
        feats = []
        for name, half in dict(boxes).items():
            feats += [{"body": name, "rho": corner, "normal": normal, "offset": offset, "shape_a": plane,
                       "shape_b": name, "material": material} for corner in CORNERS * np.asarray(half, float)]
        for name, r in dict(spheres).items():
            if not float(r) > 0:
                raise ModelError(f"PlaneContacts: sphere {name!r}: key 'radius': expected > 0 [m], got {r!r}")
            feats.append({"body": name, "rho": np.zeros(3), "radius": float(r), "normal": normal, "offset": offset,
                          "shape_a": plane, "shape_b": name, "material": material})
        return cls(bodies, feats)

    def __call__(self, q) -> list[ContactPoint]:
        out, poses = [], {}
        for k in range(self.body.size):
            name = self.body_names[k]
            if name not in poses:
                poses[name] = self.bodies.pose(q, name)
            c, R = poses[name]
            n = self.normal[k]
            x = c + R @ self.rho[k] - self.radius[k] * n
            gap = float(n @ x - self.offset[k])
            y = x - gap * n
            a, b = (y, x) if self.side[k] > 0 else (x, y)
            body_a, body_b = (GROUND, self.body_names[k]) if self.side[k] > 0 else (self.body_names[k], GROUND)
            out.append(ContactPoint(body_a, body_b, *self.shapes[k], a, b, self.side[k] * n, gap,
                                    self.materials[k]))
        return out


# ---- the Python side ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    """What :func:`segment` returns: ``done`` (reached the end), ``t`` [s] where it stopped, ``y`` (n_q + n_u,)
    there, ``kind`` and ``key`` of the event (the Python loop's meaning), ``k_next`` the next sample index,
    ``calls`` the right-hand sides evaluated."""

    done: bool
    t: float
    y: np.ndarray
    kind: str
    key: tuple | None
    k_next: int
    calls: int


class _Scene:
    """The arrays of one qualifying run (FreeBodies ``bodies``, PlaneContacts ``contacts``) and its sample buffers."""

    def __init__(self, bodies, contacts: PlaneContacts, grid):
        self.bodies, self.contacts, self.grid = bodies, contacts, np.ascontiguousarray(grid, dtype=float)
        c = contacts
        F = c.body.size
        self.sc_i = np.ascontiguousarray(c.body)
        self.sc_f = (np.ascontiguousarray(c.rho.reshape(-1)), np.ascontiguousarray(c.radius),
                     np.ascontiguousarray(c.normal.reshape(-1)), np.ascontiguousarray(c.offset),
                     np.ascontiguousarray(c.side), np.ascontiguousarray(c.basis.reshape(-1)))
        self.I = np.ascontiguousarray(bodies.inertias)
        self.Iinv, self.minv = np.ascontiguousarray(bodies.inertias_inv), np.ascontiguousarray(bodies.masses_inv)
        self.grav = np.ascontiguousarray(bodies.gravity_constant, dtype=float)
        n = self.grid.size
        self.Y = np.zeros((n, bodies.n_q + bodies.n_u))
        self.NS, self.FS, self.VS = np.zeros((n, F)), np.zeros((n, F, 2)), np.zeros((n, F, 2))
        self.keys = []
        seen: dict = {}
        for shapes in c.shapes:
            name = f"{shapes[0]}|{shapes[1]}"
            self.keys.append((name, seen.get(name, 0)))
            seen[name] = seen.get(name, 0) + 1


def segment(scene: _Scene, t: float, y, modes: dict, k_next: int, options, slip_tolerance: float) -> Segment:
    """One segment of the mode ``modes`` ({key: contact_events._Mode}) from (t, y) (module docstring)."""
    F = len(scene.keys)
    mode, mdir, moff = np.zeros(F, dtype=np.int64), np.zeros((F, 2)), np.zeros(F)
    for f, key in enumerate(scene.keys):
        m = modes.get(key)
        if m is not None:
            mode[f] = m.kind
            if m.direction is not None:
                mdir[f] = m.direction
            moff[f] = slip_tolerance if m.from_rest else 0.0
    n_y = scene.Y.shape[1]
    result = np.zeros(n_y + 5)
    run_segment(float(t), np.ascontiguousarray(y, dtype=float), scene.grid, int(k_next), float(options.rtol),
             float(options.atol), float(options.max_step), scene.sc_i, scene.sc_f, scene.I, scene.Iinv, scene.minv,
             scene.grav, scene.contacts.mu_static, scene.contacts.mu_kinetic, mode, mdir, moff, scene.Y, scene.NS,
             scene.FS, scene.VS, result)
    status, t_stop, slot, k_end, calls = result[0], float(result[1]), int(result[2]), int(result[3]), int(result[4])
    if status < 0:
        raise KaneError(f"event-driven contact (compiled): the step size fell below its minimum at t = "
                        f"{t_stop:.12g} s")
    kind, key = "", None
    if status > 0:
        f, s = divmod(slot, 3)
        kind, key = (("impact", None) if s == 0 else ("open", scene.keys[f]) if s == 1 else
                     ("stick->slip", scene.keys[f]) if mode[f] == 1 else ("slip->stick", scene.keys[f]))
    return Segment(status == 0, t_stop, result[5:].copy(), kind, key, k_end, calls)


def record_samples(scene, modes: dict, k0: int, k1: int, Q, U, n_q: int, rec: dict) -> None:
    """Copy the compiled segment's samples k0..k1-1 into Q, U and the closed features' records into ``rec``."""
    Q[k0:k1], U[k0:k1] = scene.Y[k0:k1, :n_q], scene.Y[k0:k1, n_q:]
    closed = [(f, key, m) for f, key in enumerate(scene.keys) if (m := modes.get(key)) is not None]
    if not closed or k1 <= k0:
        return
    fs, count = [f for f, _, _ in closed], k1 - k0
    rec["step"].extend(np.repeat(np.arange(k0, k1), len(fs)).tolist())
    rec["name"].extend([key[0] for _, key, _ in closed] * count)
    rec["n"].extend([scene.contacts.side[f] * scene.contacts.normal[f] for f in fs] * count)
    rec["pn"].extend(scene.NS[k0:k1, fs].reshape(-1).tolist())
    rec["pt"].extend(list(scene.FS[k0:k1, fs].reshape(-1, 2)))
    rec["slip"].extend(list(scene.VS[k0:k1, fs].reshape(-1, 2)))
    rec["mode"].extend([m.kind for _, _, m in closed] * count)


def choose_engine(dynamics, contacts, bodies, params, engine: str):
    """(True, "") when the run takes the compiled path, else (False, why not), for ``engine`` (an EventEngine
    value: "auto", "compiled", "python"); "compiled" on a scene that does not qualify is refused by name."""
    if engine == "python":
        return False, "EventOptions.engine = python"
    ok, reason = engine_of(dynamics, contacts, bodies, params)
    if not ok and engine == "compiled":
        raise NotSupportedError(f"event-driven contact: EventOptions.engine = compiled, but {reason}")
    return ok, reason


def engine_of(dynamics, contacts, bodies, params):
    """(True, "") when the run qualifies for the compiled path (module docstring), else (False, why not)."""
    from .contact_bodies import FreeBodies

    b = dynamics if bodies is None else bodies
    if not numba_available():
        return False, "numba is not installed"
    if not isinstance(contacts, PlaneContacts):
        return False, (f"contacts is a {type(contacts).__name__}, not a PlaneContacts (box corners and spheres "
                       f"against half-spaces of the ground)")
    if not isinstance(dynamics, FreeBodies) or b is not dynamics or contacts.bodies is not dynamics:
        return False, "the dynamics is not the FreeBodies of the contacts"
    for name in ("forcing", "qdot", "mass_matrix", "udot"):
        if getattr(type(dynamics), name) is not getattr(FreeBodies, name):
            return False, f"{type(dynamics).__name__} overrides FreeBodies.{name}"
    if dynamics.gravity_constant is None:
        return False, "gravity varies with time"
    if params:
        return False, "FreeBodies take no parameters"
    return True, ""


def compiled_scene(dynamics, contacts, grid) -> _Scene:
    """The arrays of a qualifying run (:func:`engine_of`), for :func:`segment`."""
    if not numba_available():
        raise NotSupportedError("event-driven contact: the compiled path needs numba")
    return _Scene(dynamics, contacts, grid)

