"""Contact points between the collision shapes of a model at given body poses, through coal (Model/Data split).

:class:`CollisionModel` builds the coal geometry of every ``Model.collisions`` entry once, with the pair filter
(:func:`kane.model.collision.pair_allowed`); it is immutable after construction and shared by threads.
:class:`CollisionData` is the working memory of the queries (coal request/result objects, one set per thread);
:func:`contacts` returns the :class:`kane.model.contact.ContactPoint` list of a configuration:

1. broad phase: the world AABB of every shape (coal's local AABB carried by the placement, grown by the margin),
   a sort-and-sweep along x with y/z overlap tests (:attr:`BroadPhase.SWEEP`), or every allowed pair
   (:attr:`BroadPhase.ALL`); a ground half-space is unbounded and paired with every allowed shape;
2. narrow phase: ``coal.collide`` with ``security_margin = margin`` (pairs closer than the margin are reported,
   also when apart), then ``coal.computeContactPatch``: a face resting on a face gives the corners of the overlap
   polygon (a box flat on a plane gives its 4 corners), curved shapes give one point (or coal's sampled rim).
   Every point carries its two witness points, the pair's normal (from shape a to shape b) and its own signed
   distance ``normal . (point_b - point_a)``;
3. the pair's material is :func:`kane.model.collision.combine_materials` of the two shapes' materials.

Body poses: ``body_poses`` is (R_world (n_b, 3, 3), r_world (n_b, 3)) of every body frame in model order, or the
(position (n_b, 3), wxyz (n_b, 4)) pair that :func:`kane.viz.scene.poses_at` returns from
:func:`kane.analysis.kinematic_outputs.kinematic_outputs` at (t, q, u): kane's numerical body poses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..errors import ArgumentError, ModelError
from ..model.collision import (Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere, combine_materials,
                               pair_allowed)
from ..model.contact import ContactPoint
from ..spatial import quaternion_to_rotation

__all__ = ["BroadPhase", "CollisionOptions", "CollisionModel", "CollisionData", "BodyPoses", "PairDistance",
           "body_poses", "contacts", "pair_distance", "candidate_pairs"]

GROUND = "ground"


class BroadPhase(Enum):
    """How candidate pairs are found: sort-and-sweep on world AABBs, or every allowed pair (a reference)."""

    SWEEP = "sweep"
    ALL = "all"


@dataclass(frozen=True)
class CollisionOptions:
    """``margin`` [m] >= 0: pairs closer than this are reported (apart ones with distance > 0);
    ``patch``: several points per face contact (coal's contact patch) instead of one; ``broad_phase``."""

    margin: float = 0.0
    patch: bool = True
    broad_phase: BroadPhase = BroadPhase.SWEEP

    def __post_init__(self):
        m = float(self.margin)
        if not np.isfinite(m) or m < 0:
            raise ArgumentError(f"collision options: key 'margin': expected a finite distance >= 0 [m], got "
                                f"{self.margin!r}")
        object.__setattr__(self, "margin", m)
        object.__setattr__(self, "broad_phase", BroadPhase(self.broad_phase))


class BodyPoses(NamedTuple):
    """World pose of every body frame: ``R_world`` (n_b, 3, 3) body to world axes, ``r_world`` (n_b, 3) [m]."""

    R_world: np.ndarray
    r_world: np.ndarray


class PairDistance(NamedTuple):
    """Distance query of one pair: signed ``distance`` [m], witness points (3,) [m] and the unit normal a -> b."""

    distance: float
    point_a_world: np.ndarray
    point_b_world: np.ndarray
    normal_world: np.ndarray


def body_poses(model, poses) -> BodyPoses:
    """``poses`` as :class:`BodyPoses`: (R (n_b, 3, 3), r (n_b, 3)) or (position (n_b, 3), wxyz (n_b, 4))."""
    if isinstance(poses, BodyPoses):
        a, b = poses
    else:
        try:
            a, b = poses
        except (TypeError, ValueError):
            raise ArgumentError("body poses: expected (R (n_b, 3, 3), r (n_b, 3)) or (position (n_b, 3), "
                                "wxyz (n_b, 4))") from None
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = model.n_bodies
    if a.shape == (n, 3) and b.shape == (n, 4):
        return BodyPoses(np.array([quaternion_to_rotation(e) for e in b]).reshape(n, 3, 3), a)
    if a.shape == (n, 3, 3) and b.shape == (n, 3):
        return BodyPoses(a, b)
    raise ArgumentError(f"body poses of model {model.name!r} ({n} bodies): expected (R ({n}, 3, 3), r ({n}, 3)) or "
                        f"(position ({n}, 3), wxyz ({n}, 4)), got shapes {a.shape}, {b.shape}")


def _coal_geometry(shape):
    import coal

    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, Box):
        return coal.Box(*(2.0 * x for x in shape.half_extents))
    if isinstance(shape, Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    if isinstance(shape, Ellipsoid):
        return coal.Ellipsoid(*shape.radii)
    if isinstance(shape, ConvexMesh):
        points = coal.StdVec_Vec3s()
        for v in shape.vertices:
            points.append(np.array(v, dtype=float))
        triangles = coal.StdVec_Triangle()
        for f in shape.faces:
            triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
        return coal.Convex(points, triangles)
    if isinstance(shape, HalfSpace):
        return coal.Halfspace(np.array(shape.normal), shape.offset)
    raise ModelError(f"collision shape {type(shape).__name__}: no coal geometry for it")


class CollisionModel:
    """The coal geometry and pair filter of ``model.collisions``, built once (read-only afterwards)."""

    def __init__(self, model):
        self.model = model
        self.collisions = tuple(model.collisions)
        n = len(self.collisions)
        self.body_index = np.array([model.body_index(c.body) for c in self.collisions], dtype=int)
        self.geometries = tuple(_coal_geometry(c.shape) for c in self.collisions)
        self.unbounded = np.array([isinstance(c.shape, HalfSpace) for c in self.collisions], dtype=bool)
        centre, half = np.zeros((n, 3)), np.zeros((n, 3))
        for k, g in enumerate(self.geometries):
            if not self.unbounded[k]:
                g.computeLocalAABB()
                lo, hi = np.array(g.aabb_local.min_), np.array(g.aabb_local.max_)
                centre[k], half[k] = (lo + hi) / 2, (hi - lo) / 2
        self.aabb_centre, self.aabb_half = centre, half
        parent_of = {b.name: (GROUND if p < 0 else model.bodies[p].name) for b, p in zip(model.bodies, model.parent)}
        excludes = set(model.collision_excludes)
        allowed = np.zeros((n, n), dtype=bool)
        for i in range(n):
            for j in range(i + 1, n):
                allowed[i, j] = allowed[j, i] = pair_allowed(self.collisions[i], self.collisions[j], parent_of,
                                                             excludes)
        self.allowed = allowed
        self.allowed.setflags(write=False)
        self.material = lru_cache(maxsize=4096)(self._material)

    def _material(self, i: int, j: int):
        return combine_materials(self.collisions[i].material, self.collisions[j].material)

    def shape_poses(self, poses: BodyPoses) -> tuple[np.ndarray, np.ndarray]:
        """(R_world (n_c, 3, 3), r_world (n_c, 3)) of every collision shape at the body ``poses``."""
        n = len(self.collisions)
        R, r = np.zeros((n, 3, 3)), np.zeros((n, 3))
        for k, (c, b) in enumerate(zip(self.collisions, self.body_index)):
            if b < 0:
                R[k], r[k] = c.R_body_shape, c.r_body_shape
            else:
                Rb = poses.R_world[b]
                R[k], r[k] = Rb @ c.R_body_shape, Rb @ c.r_body_shape + poses.r_world[b]
        return R, r


_MODELS: dict = {}
_MODELS_LOCK = threading.Lock()


def collision_model(model) -> CollisionModel:
    """The :class:`CollisionModel` of ``model`` (built on the first call, then reused; thread-safe)."""
    if isinstance(model, CollisionModel):
        return model
    with _MODELS_LOCK:
        entry = _MODELS.get(id(model))
        if entry is None or entry[0] is not model:
            entry = (model, CollisionModel(model))
            if len(_MODELS) > 64:
                _MODELS.clear()
            _MODELS[id(model)] = entry
        return entry[1]


class CollisionData:
    """Working memory of the collision queries of one :class:`CollisionModel`: the options and coal's
    request/result objects, one set per calling thread (so one ``CollisionData`` may be shared by threads)."""

    def __init__(self, model, options: CollisionOptions = CollisionOptions()):
        self.model = collision_model(model)
        self.options = options
        self._local = threading.local()

    def coal_objects(self):
        """This thread's (CollisionRequest, DistanceRequest, ContactPatchRequest) for the options."""
        objs = getattr(self._local, "objs", None)
        if objs is None:
            import coal

            creq = coal.CollisionRequest()
            creq.security_margin = self.options.margin
            creq.num_max_contacts = 1
            dreq = coal.DistanceRequest()
            preq = coal.ContactPatchRequest()
            objs = self._local.objs = (creq, dreq, preq)
        return objs


def _transform(R, r):
    import coal

    return coal.Transform3s(np.ascontiguousarray(R), np.ascontiguousarray(r))


def candidate_pairs(cm: CollisionModel, R_shapes: np.ndarray, r_shapes: np.ndarray, margin: float,
                    broad_phase: BroadPhase = BroadPhase.SWEEP) -> list[tuple[int, int]]:
    """Allowed pairs (i < j) of collision indices whose world AABBs (grown by ``margin``) overlap, sorted."""
    n = len(cm.collisions)
    if broad_phase is BroadPhase.ALL:
        return [(i, j) for i in range(n) for j in range(i + 1, n) if cm.allowed[i, j]]
    centre = np.einsum("kij,kj->ki", R_shapes, cm.aabb_centre) + r_shapes
    half = np.einsum("kij,kj->ki", np.abs(R_shapes), cm.aabb_half) + margin
    lo, hi = centre - half, centre + half
    bounded = np.flatnonzero(~cm.unbounded)
    pairs = set()
    order = bounded[np.argsort(lo[bounded, 0], kind="stable")]
    lo_x = lo[order, 0]
    for k, i in enumerate(order):
        end = int(np.searchsorted(lo_x, hi[i, 0], side="right"))
        js = order[k + 1:end]
        if js.size:
            ok = np.all((lo[js, 1:] <= hi[i, 1:]) & (lo[i, 1:] <= hi[js, 1:]), axis=1)
            for j in js[ok]:
                if cm.allowed[i, j]:
                    pairs.add((min(i, j), max(i, j)))
    for u in np.flatnonzero(cm.unbounded):
        for j in range(n):
            if cm.allowed[u, j]:
                pairs.add((min(u, j), max(u, j)))
    return sorted(pairs)


def contacts(model, data: CollisionData | None, poses) -> list[ContactPoint]:
    """The contact points of ``model``'s collision shapes at the body ``poses`` (see the module docstring), pair
    by pair in collision order; ``data`` None makes a fresh :class:`CollisionData` with the default options."""
    import coal

    cm = collision_model(model)
    data = CollisionData(cm) if data is None else data
    if data.model is not cm:
        raise ArgumentError(f"collision data was made for model {data.model.model.name!r}, not {cm.model.name!r}")
    poses = body_poses(cm.model, poses)
    R_s, r_s = cm.shape_poses(poses)
    creq, _, preq = data.coal_objects()
    out = []
    for i, j in candidate_pairs(cm, R_s, r_s, data.options.margin, data.options.broad_phase):
        Ti, Tj = _transform(R_s[i], r_s[i]), _transform(R_s[j], r_s[j])
        res = coal.CollisionResult()
        if not coal.collide(cm.geometries[i], Ti, cm.geometries[j], Tj, creq, res):
            continue
        contact = res.getContact(0)
        normal = np.array(contact.normal, dtype=float)
        points = [(np.array(contact.getNearestPoint1()), np.array(contact.getNearestPoint2()))]
        if data.options.patch:
            pres = coal.ContactPatchResult(preq)
            coal.computeContactPatch(cm.geometries[i], Ti, cm.geometries[j], Tj, res, preq, pres)
            if pres.numContactPatches():
                patch = pres.getContactPatch(0)
                if patch.size() > 1:
                    normal = np.array(patch.getNormal(), dtype=float)
                    points = [(np.array(patch.getPointShape1(k)), np.array(patch.getPointShape2(k)))
                              for k in range(patch.size())]
        a, b = cm.collisions[i], cm.collisions[j]
        material = cm.material(i, j)
        for pa, pb in points:
            out.append(ContactPoint(a.body, b.body, a.name, b.name, pa, pb, normal.copy(),
                                    float(normal @ (pb - pa)), material))
    return out


def pair_distance(model, data: CollisionData | None, poses, name_a: str, name_b: str) -> PairDistance:
    """Signed distance, witness points and normal (a -> b) between collisions ``name_a`` and ``name_b`` at the
    body ``poses``, whatever their distance (``coal.distance`` with signed distance), ignoring the pair filter."""
    import coal

    cm = collision_model(model)
    data = CollisionData(cm) if data is None else data
    names = [c.name for c in cm.collisions]
    idx = []
    for nm in (name_a, name_b):
        if nm not in names:
            raise ArgumentError(f"model {cm.model.name!r}: no collision named {nm!r}; collisions: "
                                f"{', '.join(names) or 'none'}")
        idx.append(names.index(nm))
    i, j = idx
    R_s, r_s = cm.shape_poses(body_poses(cm.model, poses))
    _, dreq, _ = data.coal_objects()
    res = coal.DistanceResult()
    d = coal.distance(cm.geometries[i], _transform(R_s[i], r_s[i]), cm.geometries[j], _transform(R_s[j], r_s[j]),
                      dreq, res)
    return PairDistance(float(d), np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2()),
                        np.array(res.normal, dtype=float))
