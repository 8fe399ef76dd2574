"""Contact points between the collision shapes of a model at given body poses, through coal (Model/Data split).

:class:`CollisionModel` (:func:`collision_model`: built once per model, then reused) holds the coal geometry of
every ``Model.collisions`` entry and the pair filter (:func:`kane.model.collision.pair_allowed`, as one boolean
array); it is read-only after construction and shared by threads. :class:`CollisionData` is the working memory of
the queries (coal requests, results and one transform per shape, one set per calling thread); :func:`contacts`
returns the :class:`kane.model.contact.ContactPoint` list of a configuration:

1. broad phase: the world AABB of every shape (coal's local AABB carried by the placement, grown by the margin),
   a sort-and-sweep along x with y/z overlap tests (:attr:`BroadPhase.SWEEP`), or every allowed pair
   (:attr:`BroadPhase.ALL`); a ground half-space is unbounded and paired with every allowed shape;
2. narrow phase: ``coal.collide`` with ``security_margin = margin`` (pairs closer than the margin are reported,
   also when apart), then ``coal.computeContactPatch``: a face resting on a face gives the corners of the overlap
   polygon (a box flat on a plane gives its 4 corners, a box on a box the corners of the clipped overlap), a
   cylinder standing on its face coal's 12 samples of the rim, a capsule lying flat its 2 segment ends, other
   curved contacts one point. Every point carries its two witness points, the pair's normal (from shape a to
   shape b) and its signed distance ``normal . (point_b - point_a)`` (read-only arrays, shared by a pair's
   points);
3. the pair's material is :func:`kane.model.collision.combine_materials` of the two shapes' materials.

Body poses: ``body_poses`` is (R_world (n_b, 3, 3), r_world (n_b, 3)) of every body frame in model order, or the
(position (n_b, 3), wxyz (n_b, 4)) pair that :func:`kane.viz.scene.poses_at` returns from
:func:`kane.analysis.kinematic_outputs.kinematic_outputs` at (t, q, u): kane's numerical body poses.

Cost: the pair loop runs in Python around coal's calls (bench/bench_collision.py: 20 resting boxes, 80 points,
milliseconds per call against MuJoCo's ~10 us mj_collision); :func:`kane.mechanics.collision_batch.contacts_batch`
gives the same contacts from one compiled call for spheres, boxes and half-spaces.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..errors import ArgumentError, ModelError
from ..model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere, combine_materials
from ..model.contact import ContactPoint
from ..spatial import quaternion_to_rotation

__all__ = ["BroadPhase", "NarrowPhase", "CollisionOptions", "CollisionModel", "collision_model", "CollisionData",
           "BodyPoses", "PairDistance", "body_poses", "contacts", "pair_distance", "candidate_pairs"]

GROUND = "ground"
_EYE = np.eye(3)[None]


class BroadPhase(Enum):
    """How candidate pairs are found: sort-and-sweep on world AABBs, or every allowed pair (a reference)."""

    SWEEP = "sweep"
    ALL = "all"


class NarrowPhase(Enum):
    """Who solves the pairs of :func:`kane.mechanics.collision_batch.contacts_batch`: AUTO (the compiled
    sphere/box/half-space code of :mod:`kane.mechanics.collision_prims` when numba is installed, coal for other
    shapes), COMPILED (that code, also without numba), COAL (coal for every pair, the reference)."""

    AUTO = "auto"
    COMPILED = "compiled"
    COAL = "coal"


@dataclass(frozen=True)
class CollisionOptions:
    """``margin`` [m] >= 0: pairs closer than this are reported (apart ones with distance > 0);
    ``patch``: several points per face contact (coal's contact patch) instead of one; ``broad_phase``;
    ``narrow_phase`` (:class:`NarrowPhase`, read by ``contacts_batch``)."""

    margin: float = 0.0
    patch: bool = True
    broad_phase: BroadPhase = BroadPhase.SWEEP
    narrow_phase: NarrowPhase = NarrowPhase.AUTO

    def __post_init__(self):
        m = float(self.margin)
        if not np.isfinite(m) or m < 0:
            raise ArgumentError(f"collision options: key 'margin': expected a finite distance >= 0 [m], got "
                                f"{self.margin!r}")
        object.__setattr__(self, "margin", m)
        object.__setattr__(self, "broad_phase", BroadPhase(self.broad_phase))
        object.__setattr__(self, "narrow_phase", NarrowPhase(self.narrow_phase))


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
        return BodyPoses(quaternion_to_rotation(b).reshape(n, 3, 3), a)
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


def _allowed_pairs(model, collisions, body_index) -> np.ndarray:
    """(n_c, n_c) bool: :func:`kane.model.collision.pair_allowed` of every pair, in array operations."""
    n = len(collisions)
    parent = np.array([-2 if b < 0 else model.parent[b] for b in body_index], dtype=int)  # -1: the ground
    group = np.array([c.group for c in collisions], dtype=np.int64)
    mask = np.array([c.mask for c in collisions], dtype=np.int64)
    bi, bj = body_index[:, None], body_index[None, :]
    allowed = (bi != bj) & ~((parent[:, None] == bj) & (bj >= 0)) & ~((parent[None, :] == bi) & (bi >= 0))
    allowed &= ((group[:, None] & mask[None, :]) != 0) & ((group[None, :] & mask[:, None]) != 0)
    names = {c.name: k for k, c in enumerate(collisions)}
    bodies = {GROUND: -1, **{b.name: k for k, b in enumerate(model.bodies)}}
    for pair in model.collision_excludes:  # two bodies (every shape of one against every shape of the other)
        x, y = tuple(pair)                  # or two collisions (that pair), as pair_allowed reads them
        if x in bodies and y in bodies:
            rows, cols = body_index == bodies[x], body_index == bodies[y]
            allowed[np.ix_(rows, cols)] = allowed[np.ix_(cols, rows)] = False
        if x in names and y in names:
            allowed[names[x], names[y]] = allowed[names[y], names[x]] = False
    np.fill_diagonal(allowed, False)
    return allowed


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
        self.allowed = _allowed_pairs(model, self.collisions, self.body_index)
        self._R_body_shape = np.array([c.R_body_shape for c in self.collisions], dtype=float).reshape(n, 3, 3)
        self._r_body_shape = np.array([c.r_body_shape for c in self.collisions], dtype=float).reshape(n, 3)
        for arr in (self.allowed, self.body_index, self.unbounded, self.aabb_centre, self.aabb_half, self._R_body_shape,
                    self._r_body_shape):
            arr.setflags(write=False)  # shared by every thread: read-only
        self.material = lru_cache(maxsize=4096)(self._material)

    def _material(self, i: int, j: int):
        return combine_materials(self.collisions[i].material, self.collisions[j].material)

    def shape_poses(self, poses: BodyPoses) -> tuple[np.ndarray, np.ndarray]:
        """(R_world (n_c, 3, 3), r_world (n_c, 3)) of every collision shape at the body ``poses``."""
        R_b = np.concatenate([poses.R_world, _EYE])[self.body_index]  # index -1: the ground's identity
        r_b = np.concatenate([poses.r_world, np.zeros((1, 3))])[self.body_index]
        return (R_b @ self._R_body_shape,
                np.einsum("kij,kj->ki", R_b, self._r_body_shape) + r_b)


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


class _Work(NamedTuple):
    """One thread's coal objects: requests, reusable results and one transform per collision shape."""

    collision_request: object
    distance_request: object
    patch_request: object
    collision_result: object
    patch_result: object
    transforms: tuple


class CollisionData:
    """Working memory of the collision queries of one :class:`CollisionModel`: the options and coal's
    request/result/transform objects, one set per calling thread (so one ``CollisionData`` may be shared by
    threads; nothing of coal's is mutated by two threads)."""

    def __init__(self, model, options: CollisionOptions = CollisionOptions()):
        self.model = collision_model(model)
        self.options = options
        self._local = threading.local()

    def work(self) -> _Work:
        """This thread's :class:`_Work` (made on its first call)."""
        work = getattr(self._local, "work", None)
        if work is None:
            import coal

            creq = coal.CollisionRequest()
            creq.security_margin = self.options.margin
            creq.num_max_contacts = 1
            preq = coal.ContactPatchRequest()
            work = self._local.work = _Work(creq, coal.DistanceRequest(), preq, coal.CollisionResult(),
                                            coal.ContactPatchResult(preq),
                                            tuple(coal.Transform3s() for _ in self.model.collisions))
        return work


def _placed(work: _Work, k: int, R_s, r_s):
    """Shape k's coal transform in ``work``, set to (R_s[k], r_s[k])."""
    T = work.transforms[k]
    T.setTransform(R_s[k], r_s[k])
    return T


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
    order = bounded[np.argsort(lo[bounded, 0], kind="stable")]
    # sweep along x: shape order[k] overlaps in x every later shape whose lower x bound is <= its upper one
    ends = np.searchsorted(lo[order, 0], hi[order, 0], side="right")
    counts = np.maximum(ends - np.arange(1, len(order) + 1), 0)
    first = np.repeat(np.arange(len(order)), counts)
    second = first + 1 + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    a, b = order[first], order[second]
    keep = np.all((lo[b, 1:] <= hi[a, 1:]) & (lo[a, 1:] <= hi[b, 1:]), axis=1) & cm.allowed[a, b]
    a, b = a[keep], b[keep]
    u, j = np.nonzero(cm.allowed[cm.unbounded])  # a half-space meets every shape it is allowed to
    u = np.flatnonzero(cm.unbounded)[u]
    i_all, j_all = np.concatenate([a, u]), np.concatenate([b, j])
    code = np.unique(np.minimum(i_all, j_all) * n + np.maximum(i_all, j_all))  # sorted, each pair once
    return list(zip((code // n).tolist(), (code % n).tolist()))


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
    work = data.work()
    creq, preq, res, pres = work.collision_request, work.patch_request, work.collision_result, work.patch_result
    pairs = candidate_pairs(cm, R_s, r_s, data.options.margin, data.options.broad_phase)
    for k in sorted({k for pair in pairs for k in pair}):
        _placed(work, k, R_s, r_s)
    out = []
    for i, j in pairs:
        Ti, Tj = work.transforms[i], work.transforms[j]
        res.clear()
        if not coal.collide(cm.geometries[i], Ti, cm.geometries[j], Tj, creq, res):
            continue
        patch = None
        if data.options.patch:
            pres.clear()
            coal.computeContactPatch(cm.geometries[i], Ti, cm.geometries[j], Tj, res, preq, pres)
            if pres.numContactPatches() and pres.getContactPatch(0).size() > 1:
                patch = pres.getContactPatch(0)
        if patch is not None:  # coal's patch points lie midway: shape a's at -d/2 n, shape b's at +d/2 n
            normal = np.array(patch.getNormal(), dtype=float)
            mid = np.array([patch.getPoint(k) for k in range(patch.size())], dtype=float)
            half = 0.5 * float(patch.penetration_depth) * normal
            pa, pb = mid - half, mid + half
        else:
            contact = res.getContact(0)
            normal = np.array(contact.normal, dtype=float)
            pa = np.array([contact.getNearestPoint1()], dtype=float)
            pb = np.array([contact.getNearestPoint2()], dtype=float)
        for arr in (normal, pa, pb):
            arr.setflags(write=False)  # shared by the records of this pair: read-only
        distance = (pb - pa) @ normal
        a, b = cm.collisions[i], cm.collisions[j]
        material = cm.material(i, j)
        out.extend(ContactPoint(a.body, b.body, a.name, b.name, pa[k], pb[k], normal, float(distance[k]), material)
                   for k in range(len(pa)))
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
    work = data.work()
    res = coal.DistanceResult()
    d = coal.distance(cm.geometries[i], _placed(work, i, R_s, r_s), cm.geometries[j], _placed(work, j, R_s, r_s),
                      work.distance_request, res)
    return PairDistance(float(d), np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2()),
                        np.array(res.normal, dtype=float))
