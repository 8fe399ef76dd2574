"""Contact points of a configuration as one batch of arrays (:class:`ContactBatch`), no Python object per contact.

:func:`contacts_batch` finds the same contacts as :func:`kane.mechanics.collision.contacts` (same broad phase, same
pairs in the same order, same points, normals and distances) and returns them as arrays: per contact the body and
shape indices of both sides, the two witness points, the normal (a -> b), the signed distance and the pair's
friction and restitution. Sphere-plane and sphere-sphere pairs are solved in compiled code (numba when available,
the same arithmetic in numpy otherwise; closed forms, no iteration); every other pair (boxes, capsules, meshes,
patches of face contacts) goes through coal exactly as :func:`~kane.mechanics.collision.contacts` does.
:meth:`ContactBatch.points` gives the :class:`~kane.model.contact.ContactPoint` list, for code that wants records.

The batch is what :mod:`kane.switching.contact_fast` steps without building per-contact objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..model.collision import Box, HalfSpace, Sphere
from ..model.contact import ContactMaterial, ContactPoint
from .collision import CollisionData, body_poses, candidate_pairs, collision_model

__all__ = ["ContactBatch", "contacts_batch"]

_SPHERE, _PLANE, _OTHER = 0, 1, 2


@dataclass(frozen=True)
class ContactBatch:
    """m contacts as arrays: ``body_a``/``body_b`` (m,) body indices into ``body_names`` (-1: the ground),
    ``shape_a``/``shape_b`` (m,) collision indices into ``shape_names``, ``point_a``/``point_b`` (m, 3) witness
    points [m] (world), ``normal`` (m, 3) unit normals a -> b, ``distance`` (m,) signed distances [m],
    ``mu_static``/``mu_kinetic``/``restitution`` (m,) of each pair, ``pair`` (m,) the pair id ``shape_a * n_shapes
    + shape_b`` (the contacts of a pair are consecutive), ``materials`` {pair id: ContactMaterial}."""

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


def _closed_forms(kind_a, kind_b, R_a, r_a, R_b, r_b, radius_a, radius_b, plane_n, plane_d, margin, out):
    """Sphere-plane and sphere-sphere pairs (k of them) in closed form: out (k, 10) rows (found, point_a (3),
    point_b (3), normal (3)); the distance is normal . (point_b - point_a). A plane is the half-space n . x <= d in
    its shape frame; its sphere's deepest point is the witness on the sphere, the projection onto the plane the
    one on the plane (coal's witness points)."""
    for k in range(kind_a.shape[0]):
        out[k, 0] = 0.0
        if kind_a[k] == _SPHERE and kind_b[k] == _SPHERE:
            d0, d1, d2 = r_b[k, 0] - r_a[k, 0], r_b[k, 1] - r_a[k, 1], r_b[k, 2] - r_a[k, 2]
            dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            if dist == 0.0 or dist - radius_a[k] - radius_b[k] > margin:
                continue
            n0, n1, n2 = d0 / dist, d1 / dist, d2 / dist
            out[k, 0] = 1.0
            out[k, 1], out[k, 2], out[k, 3] = (r_a[k, 0] + radius_a[k] * n0, r_a[k, 1] + radius_a[k] * n1,
                                               r_a[k, 2] + radius_a[k] * n2)
            out[k, 4], out[k, 5], out[k, 6] = (r_b[k, 0] - radius_b[k] * n0, r_b[k, 1] - radius_b[k] * n1,
                                               r_b[k, 2] - radius_b[k] * n2)
            out[k, 7], out[k, 8], out[k, 9] = n0, n1, n2
            continue
        sphere_first = kind_a[k] == _SPHERE
        if sphere_first:
            c, R_p, r_p, rad = r_a[k], R_b[k], r_b[k], radius_a[k]
        else:
            c, R_p, r_p, rad = r_b[k], R_a[k], r_a[k], radius_b[k]
        w0 = R_p[0, 0] * plane_n[k, 0] + R_p[0, 1] * plane_n[k, 1] + R_p[0, 2] * plane_n[k, 2]  # world normal
        w1 = R_p[1, 0] * plane_n[k, 0] + R_p[1, 1] * plane_n[k, 1] + R_p[1, 2] * plane_n[k, 2]
        w2 = R_p[2, 0] * plane_n[k, 0] + R_p[2, 1] * plane_n[k, 1] + R_p[2, 2] * plane_n[k, 2]
        offset = plane_d[k] + w0 * r_p[0] + w1 * r_p[1] + w2 * r_p[2]
        height = w0 * c[0] + w1 * c[1] + w2 * c[2] - offset  # of the centre above the plane
        gap = height - rad
        if gap > margin:
            continue
        s0, s1, s2 = c[0] - rad * w0, c[1] - rad * w1, c[2] - rad * w2  # the sphere's deepest point
        p0, p1, p2 = s0 - gap * w0, s1 - gap * w1, s2 - gap * w2  # its projection onto the plane
        out[k, 0] = 1.0
        if sphere_first:  # normal a -> b: from the sphere into the plane
            out[k, 1], out[k, 2], out[k, 3], out[k, 4], out[k, 5], out[k, 6] = s0, s1, s2, p0, p1, p2
            out[k, 7], out[k, 8], out[k, 9] = -w0, -w1, -w2
        else:
            out[k, 1], out[k, 2], out[k, 3], out[k, 4], out[k, 5], out[k, 6] = p0, p1, p2, s0, s1, s2
            out[k, 7], out[k, 8], out[k, 9] = w0, w1, w2


def _separated(box_a, box_b, R_a, r_a, R_b, r_b, half_a, half_b, plane_n, plane_d, bound, out):
    """out[k] True when pair k (box-box or box-plane) is provably farther apart than ``bound``: a separating axis
    (the 15 of two boxes, the plane's normal) with a gap > bound. A gap along an axis is a lower bound of the
    distance, so a pair marked here is one coal reports apart too; the others go to coal."""
    for k in range(box_a.shape[0]):
        out[k] = False
        if box_a[k] and box_b[k]:
            t0, t1, t2 = r_b[k, 0] - r_a[k, 0], r_b[k, 1] - r_a[k, 1], r_b[k, 2] - r_a[k, 2]
            for axis in range(15):
                if axis < 3:
                    l0, l1, l2 = R_a[k, 0, axis], R_a[k, 1, axis], R_a[k, 2, axis]
                elif axis < 6:
                    l0, l1, l2 = R_b[k, 0, axis - 3], R_b[k, 1, axis - 3], R_b[k, 2, axis - 3]
                else:
                    i, j = (axis - 6) // 3, (axis - 6) % 3
                    a0, a1, a2 = R_a[k, 0, i], R_a[k, 1, i], R_a[k, 2, i]
                    b0, b1, b2 = R_b[k, 0, j], R_b[k, 1, j], R_b[k, 2, j]
                    l0, l1, l2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
                    norm = np.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
                    if norm < 1e-6:  # parallel edges: the face axes cover them
                        continue
                    l0, l1, l2 = l0 / norm, l1 / norm, l2 / norm
                extent = 0.0
                for c in range(3):
                    extent += half_a[k, c] * abs(R_a[k, 0, c] * l0 + R_a[k, 1, c] * l1 + R_a[k, 2, c] * l2)
                    extent += half_b[k, c] * abs(R_b[k, 0, c] * l0 + R_b[k, 1, c] * l1 + R_b[k, 2, c] * l2)
                if abs(t0 * l0 + t1 * l1 + t2 * l2) - extent > bound:
                    out[k] = True
                    break
        else:  # a box and a plane (n . x <= d in the plane's frame)
            if box_a[k]:
                R_x, r_x, half, R_p, r_p = R_a[k], r_a[k], half_a[k], R_b[k], r_b[k]
            else:
                R_x, r_x, half, R_p, r_p = R_b[k], r_b[k], half_b[k], R_a[k], r_a[k]
            w0 = R_p[0, 0] * plane_n[k, 0] + R_p[0, 1] * plane_n[k, 1] + R_p[0, 2] * plane_n[k, 2]
            w1 = R_p[1, 0] * plane_n[k, 0] + R_p[1, 1] * plane_n[k, 1] + R_p[1, 2] * plane_n[k, 2]
            w2 = R_p[2, 0] * plane_n[k, 0] + R_p[2, 1] * plane_n[k, 1] + R_p[2, 2] * plane_n[k, 2]
            height = w0 * (r_x[0] - r_p[0]) + w1 * (r_x[1] - r_p[1]) + w2 * (r_x[2] - r_p[2]) - plane_d[k]
            for c in range(3):
                height -= half[c] * abs(R_x[0, c] * w0 + R_x[1, c] * w1 + R_x[2, c] * w2)
            out[k] = height > bound


_COMPILED: dict = {}


def _compiled(name, function):
    """``function`` compiled by numba (once per process), or the Python function without numba."""
    kernel = _COMPILED.get(name)
    if kernel is None:
        try:
            import numba
        except ImportError:
            kernel = function
        else:
            kernel = numba.njit(cache=False, nogil=True)(function)
        kernel = _COMPILED.setdefault(name, kernel)
    return kernel


def _kernel():
    """:func:`_closed_forms` compiled."""
    return _compiled("closed", _closed_forms)


class _Shapes:
    """Per collision shape of a CollisionModel: kind (sphere / plane / other), radius, plane normal and offset."""

    def __init__(self, cm):
        n = len(cm.collisions)
        self.kind = np.full(n, _OTHER, dtype=np.int64)
        self.radius, self.normal, self.offset = np.zeros(n), np.zeros((n, 3)), np.zeros(n)
        self.box, self.half = np.zeros(n, dtype=np.bool_), np.zeros((n, 3))
        for k, c in enumerate(cm.collisions):
            if isinstance(c.shape, Box):
                self.box[k], self.half[k] = True, c.shape.half_extents
            elif isinstance(c.shape, Sphere):
                self.kind[k], self.radius[k] = _SPHERE, c.shape.radius
            elif isinstance(c.shape, HalfSpace):
                n_k = np.asarray(c.shape.normal, dtype=float)
                self.kind[k], self.normal[k], self.offset[k] = _PLANE, n_k / np.linalg.norm(n_k), c.shape.offset
        self.names = tuple(c.name for c in cm.collisions)
        self.bodies = tuple(b.name for b in cm.model.bodies)


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


def contacts_batch(model, data: CollisionData | None, poses) -> ContactBatch:
    """The contacts of ``model``'s collision shapes at the body ``poses`` as a :class:`ContactBatch`: the same
    contacts, in the same order, as :func:`kane.mechanics.collision.contacts` (module docstring)."""
    import coal

    cm = collision_model(model)
    data = CollisionData(cm) if data is None else data
    if data.model is not cm:
        raise ArgumentError(f"collision data was made for model {data.model.model.name!r}, not {cm.model.name!r}")
    shapes = _shapes(cm)
    R_s, r_s = cm.shape_poses(body_poses(cm.model, poses))
    margin = data.options.margin
    pairs = np.array(candidate_pairs(cm, R_s, r_s, margin, data.options.broad_phase), dtype=np.int64).reshape(-1, 2)
    i_all, j_all = pairs[:, 0], pairs[:, 1]
    closed = (shapes.kind[i_all] != _OTHER) & (shapes.kind[j_all] != _OTHER) & ~(
        (shapes.kind[i_all] == _PLANE) & (shapes.kind[j_all] == _PLANE))
    rows = np.zeros((int(closed.sum()), 10))
    if rows.shape[0]:
        ic, jc = i_all[closed], j_all[closed]
        plane = np.where(shapes.kind[ic] == _PLANE, ic, jc)
        _kernel()(shapes.kind[ic], shapes.kind[jc], R_s[ic], r_s[ic], R_s[jc], r_s[jc], shapes.radius[ic],
                  shapes.radius[jc], shapes.normal[plane], shapes.offset[plane], margin, rows)
    work = data.work()
    others = np.flatnonzero(~closed)
    box_a, box_b = shapes.box[i_all[others]], shapes.box[j_all[others]]
    test = (box_a & box_b) | (box_a & (shapes.kind[j_all[others]] == _PLANE)) | (
        box_b & (shapes.kind[i_all[others]] == _PLANE))
    if test.any():  # box pairs that a separating axis shows apart by more than the margin skip coal
        ic, jc = i_all[others[test]], j_all[others[test]]
        plane = np.where(shapes.kind[ic] == _PLANE, ic, jc)
        apart = np.zeros(ic.size, dtype=np.bool_)
        _compiled("separated", _separated)(shapes.box[ic], shapes.box[jc], R_s[ic], r_s[ic], R_s[jc], r_s[jc],
                                           shapes.half[ic], shapes.half[jc], shapes.normal[plane],
                                           shapes.offset[plane], margin * (1.0 + 1e-9) + 1e-9, apart)
        others = np.r_[others[~test], others[test][~apart]]
    for k in np.unique(pairs[others]).tolist():
        T = work.transforms[k]
        T.setTransform(R_s[k], r_s[k])
    per_pair: list = [None] * len(pairs)
    for row, k in zip(rows, np.flatnonzero(closed).tolist()):
        if row[0]:
            per_pair[k] = (row[None, 1:4], row[None, 4:7], row[7:10])
    for k in others.tolist():
        per_pair[k] = _coal_pair(coal, cm, work, data.options.patch, int(i_all[k]), int(j_all[k]))
    found = [k for k, v in enumerate(per_pair) if v is not None]
    counts = np.array([len(per_pair[k][0]) for k in found], dtype=np.int64)
    ia, ja = np.repeat(i_all[found], counts), np.repeat(j_all[found], counts)
    if found:
        pa = np.concatenate([per_pair[k][0] for k in found])
        pb = np.concatenate([per_pair[k][1] for k in found])
        normal = np.repeat(np.array([per_pair[k][2] for k in found]), counts, axis=0)
    else:
        pa = pb = normal = np.zeros((0, 3))
    n_shapes = len(cm.collisions)
    pair_id = ia * n_shapes + ja
    materials = {int(i) * n_shapes + int(j): cm.material(int(i), int(j)) for i, j in zip(i_all[found], j_all[found])}
    keys = np.array(list(materials), dtype=np.int64)  # ascending: the pairs come sorted
    table = np.array([[m.mu_static, m.mu_kinetic, m.restitution] for m in materials.values()]).reshape(-1, 3)
    mat = table[np.searchsorted(keys, pair_id)] if len(keys) else np.zeros((0, 3))
    return ContactBatch(shapes.bodies, shapes.names, cm.body_index[ia], cm.body_index[ja], ia, ja, pa, pb, normal,
                        np.einsum("ki,ki->k", pb - pa, normal), mat[:, 0].copy(), mat[:, 1].copy(), mat[:, 2].copy(),
                        pair_id, materials)
