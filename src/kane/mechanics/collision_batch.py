"""Contact points of a configuration as one batch of arrays (:class:`ContactBatch`), no Python object per contact.

:func:`contacts_batch` finds the same contacts as :func:`kane.mechanics.collision.contacts` (same broad phase, same
pairs in the same order, same points, normals and distances) and returns them as arrays: per contact the body and
shape indices of both sides, the two witness points, the normal (a -> b), the signed distance and the pair's
friction and restitution. By default (:attr:`NarrowPhase.AUTO` with numba installed) the whole batch is one
compiled call (:mod:`kane.mechanics.collision_prims`: broad phase, the sphere/box/half-space narrow phase and
capsule-sphere/plane, with coal's contact patches, the output arrays); any other pair (capsule-box,
capsule-capsule, cylinders, ellipsoids, meshes) goes through coal as :func:`~kane.mechanics.collision.contacts`
does, merged in pair order. :attr:`NarrowPhase.COAL` (``CollisionOptions.narrow_phase``) sends every pair to coal.
:meth:`ContactBatch.points` gives the :class:`~kane.model.contact.ContactPoint` list, for code that wants records.

The batch is what :mod:`kane.switching.contact_fast` steps without building per-contact objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..model.contact import ContactPoint
from .collision import BodyPoses, BroadPhase, CollisionData, CollisionOptions, NarrowPhase, body_poses, \
    candidate_pairs, collision_model

__all__ = ["ContactBatch", "contacts_batch"]

_NUMBA: dict = {}  # "have": whether numba is installed, "primitive_contacts": the function (looked up once)
_PATCH_TOLERANCE = 1e-3  # coal's ContactPatchRequest default patch_tolerance [m]


@dataclass(frozen=True)
class ContactBatch:
    """m contacts as arrays: ``body_a``/``body_b`` (m,) body indices into ``body_names`` (-1: the ground),
    ``shape_a``/``shape_b`` (m,) collision indices into ``shape_names``, ``point_a``/``point_b`` (m, 3) witness
    points [m] (world), ``normal`` (m, 3) unit normals a -> b, ``distance`` (m,) signed distances [m],
    ``mu_static``/``mu_kinetic``/``restitution`` (m,) of each pair, ``pair`` (m,) the pair id ``shape_a * n_shapes
    + shape_b`` (the contacts of a pair are consecutive), ``materials`` {pair id: ContactMaterial} (a mapping of
    the batch's pairs, built on first use)."""

    body_names: tuple[str, ...]
    shape_names: tuple[str, ...]
    body_a: np.ndarray
    body_b: np.ndarray
    shape_a: np.ndarray
    shape_b: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    distance: np.ndarray
    mu_static: np.ndarray
    mu_kinetic: np.ndarray
    restitution: np.ndarray
    pair: np.ndarray
    materials: dict

    def __len__(self) -> int:
        return int(self.distance.shape[0])

    def take(self, index) -> ContactBatch:
        """The contacts at ``index`` (an integer array or a boolean mask), in that order."""
        index = np.asarray(index)
        return ContactBatch(self.body_names, self.shape_names, *(getattr(self, k)[index] for k in _ARRAYS),
                            self.materials)

    def pair_names(self) -> tuple[str, ...]:
        """Per contact the pair's name ``"<shape_a>|<shape_b>"`` (:attr:`ContactPoint.name`)."""
        names = self.shape_names
        return tuple(f"{names[a]}|{names[b]}" for a, b in zip(self.shape_a.tolist(), self.shape_b.tolist()))

    def points(self) -> list[ContactPoint]:
        """The contacts as :class:`~kane.model.contact.ContactPoint` records (one object each)."""
        bodies = (*self.body_names, "ground")  # index -1: the ground
        return [ContactPoint(bodies[a], bodies[b], self.shape_names[i], self.shape_names[j], self.point_a[k],
                             self.point_b[k], self.normal[k], float(self.distance[k]), self.materials[p])
                for k, (a, b, i, j, p) in enumerate(zip(self.body_a.tolist(), self.body_b.tolist(),
                                                        self.shape_a.tolist(), self.shape_b.tolist(),
                                                        self.pair.tolist()))]


_ARRAYS = ("body_a", "body_b", "shape_a", "shape_b", "point_a", "point_b", "normal", "distance", "mu_static",
           "mu_kinetic", "restitution", "pair")


class _Shapes:
    """Names of a CollisionModel's shapes and bodies, and its
    :class:`~kane.mechanics.collision_prims.PrimitiveTables`."""

    def __init__(self, cm):
        from .collision_prims import primitive_tables

        self.names = tuple(c.name for c in cm.collisions)
        self.bodies = tuple(b.name for b in cm.model.bodies)
        self.tables = primitive_tables(cm)


def _shapes(cm) -> _Shapes:
    shapes = getattr(cm, "_batch_shapes", None)
    if shapes is None:  # a read-only table of the shared CollisionModel: two threads build equal ones
        shapes = _Shapes(cm)
        cm._batch_shapes = shapes
    return shapes


def _coal_pair(coal, cm, work, patch_on, i, j):
    """(point_a (k, 3), point_b (k, 3), normal (3,)) of pair (i, j) through coal, or None when apart."""
    Ti, Tj = work.transforms[i], work.transforms[j]
    res, pres = work.collision_result, work.patch_result
    res.clear()
    if not coal.collide(cm.geometries[i], Ti, cm.geometries[j], Tj, work.collision_request, res):
        return None
    if patch_on:
        pres.clear()
        coal.computeContactPatch(cm.geometries[i], Ti, cm.geometries[j], Tj, res, work.patch_request, pres)
        if pres.numContactPatches() and pres.getContactPatch(0).size() > 1:
            patch = pres.getContactPatch(0)
            normal = np.array(patch.getNormal(), dtype=float)
            mid = np.array([patch.getPoint(k) for k in range(patch.size())], dtype=float)
            half = 0.5 * float(patch.penetration_depth) * normal
            return mid - half, mid + half, normal
    contact = res.getContact(0)
    return (np.array([contact.getNearestPoint1()], dtype=float), np.array([contact.getNearestPoint2()], dtype=float),
            np.array(contact.normal, dtype=float))


def _use_compiled(options: CollisionOptions) -> bool:
    """Whether ``options`` send the batch through the compiled narrow phase (AUTO: when numba is installed)."""
    if options.narrow_phase is NarrowPhase.AUTO:
        numba = _NUMBA.get("have")
        if numba is None:
            from .collision_box import HAVE_NUMBA

            numba = _NUMBA.setdefault("have", HAVE_NUMBA)
        return numba
    return options.narrow_phase is NarrowPhase.COMPILED


class _PairMaterials(Mapping):
    """{pair id: ContactMaterial} of the pairs in ``pair`` (ids ``i * n + j``), made on first use."""

    def __init__(self, cm, n_shapes: int, pair: np.ndarray):
        self._cm, self._n, self._pair, self._keys = cm, n_shapes, pair, None

    def _ids(self) -> frozenset:
        if self._keys is None:
            self._keys = frozenset(np.unique(self._pair).tolist())
        return self._keys

    def __getitem__(self, key):
        if key not in self._ids():
            raise KeyError(key)
        return self._cm.material(int(key) // self._n, int(key) % self._n)

    def __iter__(self):
        return iter(sorted(self._ids()))

    def __len__(self) -> int:
        return len(self._ids())


def _quaternion_poses(n_bodies: int, poses):
    """(position (n_b, 3), wxyz (n_b, 4)) float arrays when ``poses`` has that form, else None (body_poses reads
    and checks the other forms)."""
    if isinstance(poses, BodyPoses) or not isinstance(poses, (tuple, list)) or len(poses) != 2:
        return None
    a, b = np.asarray(poses[0], dtype=float), np.asarray(poses[1], dtype=float)
    return (a, b) if a.shape == (n_bodies, 3) and b.shape == (n_bodies, 4) else None


def _coal_pairs(cm, data, R_s, r_s, pairs):
    """Per pair (i, j) of ``pairs`` coal's contacts: (point_a (k, 3), point_b (k, 3), normal (3,)) or None."""
    import coal

    work = data.work()
    for k in np.unique(pairs).tolist():
        work.transforms[k].setTransform(R_s[k], r_s[k])
    return [_coal_pair(coal, cm, work, data.options.patch, int(i), int(j)) for i, j in pairs.tolist()]


def contacts_batch(model, data: CollisionData | None, poses) -> ContactBatch:
    """The contacts of ``model``'s collision shapes at the body ``poses`` as a :class:`ContactBatch`: the same
    contacts, in the same order, as :func:`kane.mechanics.collision.contacts` (module docstring)."""
    cm = collision_model(model)
    data = CollisionData(cm) if data is None else data
    if data.model is not cm:
        raise ArgumentError(f"collision data was made for model {data.model.model.name!r}, not {cm.model.name!r}")
    shapes = _shapes(cm)
    options = data.options
    n_shapes = len(shapes.names)
    quaternions = _quaternion_poses(cm.model.n_bodies, poses)
    bp = body_poses(cm.model, poses) if quaternions is None else None
    if _use_compiled(options):
        primitive_contacts = _NUMBA.get("primitive_contacts")
        if primitive_contacts is None:
            from .collision_prims import primitive_contacts

            _NUMBA["primitive_contacts"] = primitive_contacts
        if quaternions is None:
            res = primitive_contacts(shapes.tables, bp.R_world, bp.r_world, options.margin, options.patch,
                                     _PATCH_TOLERANCE, options.broad_phase is BroadPhase.SWEEP)
        else:  # the compiled call turns the quaternions into rotations
            res = primitive_contacts(shapes.tables, None, quaternions[0], options.margin, options.patch,
                                     _PATCH_TOLERANCE, options.broad_phase is BroadPhase.SWEEP, quaternions[1])
        if not len(res.coal_pairs):  # every pair solved in compiled code
            return ContactBatch(shapes.bodies, shapes.names, *res[:-1], _PairMaterials(cm, n_shapes, res.pair))
        # shapes other than spheres, boxes and half-spaces: coal, merged in pair order
        bp = body_poses(cm.model, poses)
        R_s, r_s = cm.shape_poses(bp)
        ia, ja, pa, pb, normal = _merge((res.shape_a, res.shape_b, res.point_a, res.point_b, res.normal),
                                        res.coal_pairs, _coal_pairs(cm, data, R_s, r_s, res.coal_pairs))
    else:
        bp = body_poses(cm.model, poses) if bp is None else bp
        R_s, r_s = cm.shape_poses(bp)
        pairs = np.array(candidate_pairs(cm, R_s, r_s, options.margin, options.broad_phase),
                         dtype=np.int64).reshape(-1, 2)
        empty = np.zeros((0, 3))
        ia, ja, pa, pb, normal = _merge((np.zeros(0, np.int64), np.zeros(0, np.int64), empty, empty, empty), pairs,
                                        _coal_pairs(cm, data, R_s, r_s, pairs))
    distance = np.einsum("ki,ki->k", pb - pa, normal)
    pair_id = ia * n_shapes + ja
    materials = _PairMaterials(cm, n_shapes, pair_id)
    mat = np.array([[m.mu_static, m.mu_kinetic, m.restitution] for m in map(materials.__getitem__,
                                                                           pair_id.tolist())]).reshape(-1, 3)
    return ContactBatch(shapes.bodies, shapes.names, cm.body_index[ia], cm.body_index[ja], ia, ja, pa, pb, normal,
                        distance, mat[:, 0].copy(), mat[:, 1].copy(), mat[:, 2].copy(), pair_id, materials)


def _merge(compiled, pairs, per_pair):
    """The compiled rows (shape_a, shape_b, point_a, point_b, normal) and coal's per pair results of ``pairs``,
    sorted by pair (a pair's points stay consecutive and in order)."""
    found = [k for k, v in enumerate(per_pair) if v is not None]
    counts = np.array([len(per_pair[k][0]) for k in found], dtype=np.int64)
    ia, ja = np.repeat(pairs[found, 0], counts), np.repeat(pairs[found, 1], counts)
    if found:
        pa = np.concatenate([per_pair[k][0] for k in found])
        pb = np.concatenate([per_pair[k][1] for k in found])
        normal = np.repeat(np.array([per_pair[k][2] for k in found]), counts, axis=0)
    else:
        pa = pb = normal = np.zeros((0, 3))
    rows = [np.concatenate([x, y]) for x, y in zip(compiled, (ia, ja, pa, pb, normal))]
    order = np.argsort(rows[0] * (1 << 31) + rows[1], kind="stable")
    return tuple(r[order] for r in rows)
