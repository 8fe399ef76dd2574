"""Narrow phase of spheres, boxes, half-spaces (and capsules against the first and the last) in compiled code, and
the whole contact batch in one call.

:func:`primitive_contacts` takes the body poses and the per-shape tables of a collision model
(:class:`PrimitiveTables`, built once per model) and returns, in one compiled call, the candidate
pairs' contacts (the broad phase of :func:`kane.mechanics.collision.candidate_pairs`: allowed pairs whose world
AABBs grown by the margin overlap, a half-space with every shape it may meet, in (i, j) order) and the pairs it
leaves to coal (any other pair of shapes, two half-spaces). Per pair it gives what coal's
``collide`` (security margin = the margin) and ``computeContactPatch`` give:

- sphere-sphere, sphere-plane: the closed forms (the deepest points, normal a -> b);
- sphere-box: coal's ``boxSphereDistance`` (the clamped centre, or the nearest face when the centre is inside);
- box-plane: the box's deepest corner and its projection, or, when several corners lie within the patch tolerance
  of it, those corners projected onto the mid-plane (coal's support-set patch);
- box-box: :func:`kane.mechanics.collision_box.box_box` (separating axes, coal's patch clipping);
- capsule-sphere: coal's ``sphereCapsuleDistance``; capsule-plane: the support point, or both segment ends when
  the capsule lies within the patch tolerance of flat (coal's capsule support set).

A patch's points share the pair's normal and signed distance; one point is the witness pair. Compiled by numba when
it is installed (:data:`~kane.mechanics.collision_box.HAVE_NUMBA`), plain Python otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.collision import Box, Capsule, HalfSpace, Sphere
from .collision_box import (EPS, HAVE_NUMBA, box_box, box_support_set, jit, jit_dot3, jit_mat3_vec, patch_basis,
                            patch_points, workspace)

__all__ = ["HAVE_NUMBA", "PrimitiveTables", "PrimitiveContacts", "primitive_tables", "primitive_contacts",
           "quaternion_rotations"]

SPHERE, PLANE, BOX, OTHER, CAPSULE = 0, 1, 2, 3, 4


class PrimitiveTables(NamedTuple):
    """Per collision shape of a model: ``kind`` (n,) SPHERE/PLANE/BOX/CAPSULE/OTHER; ``size`` (n, 3): the radius
    in column 0 and a capsule's half length in column 1, or the half extents; ``plane_normal`` (n, 3) unit and
    ``plane_offset`` (n,): n . x <= offset in the shape frame; the body-to-shape placement ``R_body_shape``
    (n, 3, 3) / ``r_body_shape`` (n, 3); ``body_index`` (n,), -1 the ground; coal's local AABB ``aabb_centre`` /
    ``aabb_half`` (n, 3); the pair filter ``allowed`` (n, n); ``material_index`` (n,) into the distinct materials
    and ``material_table`` (u, u, 3): (mu_static, mu_kinetic, restitution) of each pair of distinct materials (the
    model's ``material(i, j)``)."""

    kind: np.ndarray
    size: np.ndarray
    plane_normal: np.ndarray
    plane_offset: np.ndarray
    R_body_shape: np.ndarray
    r_body_shape: np.ndarray
    body_index: np.ndarray
    aabb_centre: np.ndarray
    aabb_half: np.ndarray
    allowed: np.ndarray
    material_index: np.ndarray
    material_table: np.ndarray


class PrimitiveContacts(NamedTuple):
    """One call's result: per contact (m rows, pair by pair in (i, j) order) ``body_a``/``body_b``/``shape_a``/
    ``shape_b`` (m,), ``point_a``/``point_b``/``normal``
    (m, 3), ``distance``, ``mu_static``, ``mu_kinetic``, ``restitution`` (m,), ``pair`` (m,) ``shape_a * n +
    shape_b``; ``coal_pairs`` (k, 2) the candidate pairs left to coal."""

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
    coal_pairs: np.ndarray


def primitive_tables(cm) -> PrimitiveTables:
    """The :class:`PrimitiveTables` of a :class:`~kane.mechanics.collision.CollisionModel` (read-only arrays)."""
    n = len(cm.collisions)
    kind, size = np.full(n, OTHER, dtype=np.int64), np.zeros((n, 3))
    normal, offset = np.zeros((n, 3)), np.zeros(n)
    for k, c in enumerate(cm.collisions):
        if isinstance(c.shape, Sphere):
            kind[k], size[k, 0] = SPHERE, c.shape.radius
        elif isinstance(c.shape, Box):
            kind[k], size[k] = BOX, c.shape.half_extents
        elif isinstance(c.shape, Capsule):
            kind[k], size[k, 0], size[k, 1] = CAPSULE, c.shape.radius, 0.5 * c.shape.length
        elif isinstance(c.shape, HalfSpace):
            n_k = np.asarray(c.shape.normal, dtype=float)
            kind[k], normal[k], offset[k] = PLANE, n_k / np.linalg.norm(n_k), c.shape.offset
    distinct: dict = {}  # material -> (index, a shape that has it)
    index = np.array([distinct.setdefault(c.material, (len(distinct), k))[0] for k, c in enumerate(cm.collisions)],
                     dtype=np.int64).reshape(n)
    table = np.zeros((len(distinct), len(distinct), 3))
    for u, i in distinct.values():
        for v, j in distinct.values():
            mat = cm.material(i, j)
            table[u, v] = mat.mu_static, mat.mu_kinetic, mat.restitution
    tables = PrimitiveTables(kind, size, normal, offset, np.array(cm._R_body_shape), np.array(cm._r_body_shape),
                             np.asarray(cm.body_index, dtype=np.int64), np.array(cm.aabb_centre),
                             np.array(cm.aabb_half), np.array(cm.allowed), index, table)
    for arr in tables:
        arr.setflags(write=False)
    return tables


@jit
def _sphere_sphere(ca, ra, cb, rb, margin, pa, pb, normal):
    """Two spheres: the points of each along the line of centres (none for concentric spheres)."""
    d0, d1, d2 = cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]
    dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if dist == 0.0 or dist - ra - rb - margin > EPS:
        return 0
    normal[0], normal[1], normal[2] = d0 / dist, d1 / dist, d2 / dist
    for i in range(3):  # scalar loops, not array expressions: numba compiles them in a fraction of the time
        pa[0, i], pb[0, i] = ca[i] + ra * normal[i], cb[i] - rb * normal[i]
    return 1


@jit
def _plane_world(R_p, r_p, n_local, offset):
    """World normal and offset of a half-space n . x <= offset given in its shape frame (R_p, r_p)."""
    w = jit_mat3_vec(R_p, n_local)
    return w, offset + jit_dot3(w, r_p)


@jit
def _sphere_plane(c, rad, w, off, sphere_first, margin, pa, pb, normal):
    """A sphere and the half-space w . x <= off: its deepest point and that point's projection onto the plane."""
    gap = jit_dot3(w, c) - off - rad
    if gap - margin > EPS:
        return 0
    for i in range(3):
        s = c[i] - rad * w[i]  # the sphere's deepest point and its projection onto the plane
        p = s - gap * w[i]
        if sphere_first:
            pa[0, i], pb[0, i], normal[i] = s, p, -w[i]
        else:
            pa[0, i], pb[0, i], normal[i] = p, s, w[i]
    return 1


@jit
def _box_sphere(R, t, half, c, rad, margin, p_box, p_sphere, normal):
    """coal's boxSphereDistance: the signed distance; p_box, p_sphere the witness points and ``normal`` from the box
    to the sphere (the Box-Sphere order; the Sphere-Box pair swaps the points and negates it)."""
    q, pb, n, ps = np.empty(3), np.empty(3), np.empty(3), np.empty(3)  # scalar loops: quick to compile
    v0, v1, v2 = c[0] - t[0], c[1] - t[1], c[2] - t[2]
    for i in range(3):
        q[i] = R[0, i] * v0 + R[1, i] * v1 + R[2, i] * v2  # the centre in box axes
        pb[i] = t[i]
    outside, axis, min_d = False, -1, np.inf
    for i in range(3):
        if q[i] < -half[i]:
            for k in range(3):
                pb[k] -= half[i] * R[k, i]
            outside = True
        elif q[i] > half[i]:
            for k in range(3):
                pb[k] += half[i] * R[k, i]
            outside = True
        else:
            for k in range(3):
                pb[k] += q[i] * R[k, i]
            face = half[i] - abs(q[i])
            if not outside and face < min_d:
                axis, min_d = i, face
    for k in range(3):
        n[k] = pb[k] - c[k]
    pdist = np.sqrt(jit_dot3(n, n))
    if outside:
        dist = pdist - rad
        for k in range(3):
            n[k] = n[k] / -pdist
    else:
        sign = 1.0 if q[axis] >= 0 else -1.0
        for k in range(3):
            n[k] = sign * R[k, axis]
        dist = -min_d - rad
    for k in range(3):
        ps[k] = c[k] - rad * n[k]
    if not outside or dist <= 0:
        for k in range(3):
            pb[k] = ps[k] - dist * n[k]
    for i in range(3):
        normal[i], p_box[i], p_sphere[i] = n[i], pb[i], ps[i]
    return dist


@jit
def _box_plane(R, t, half, w, off, box_first, margin, patch, tol, pa, pb, normal, work):
    """coal's halfspaceDistance with a box: its support point along -w (a local component within 1e-12 of zero
    takes the face centre's coordinate) and that point's projection; the patch: the corners within ``tol``."""
    p, q = work.point[0], work.point[1]
    for i in range(3):
        p[i] = t[i]
    for c in range(3):
        d = -(R[0, c] * w[0] + R[1, c] * w[1] + R[2, c] * w[2])
        s = half[c] if d > EPS else (-half[c] if d < -EPS else 0.0)
        for i in range(3):
            p[i] += s * R[i, c]
    dist = w[0] * p[0] + w[1] * p[1] + w[2] * p[2] - off
    if dist - margin > EPS:
        return 0
    sign = -1.0 if box_first else 1.0
    for i in range(3):
        q[i] = p[i] - dist * w[i]  # on the plane
        normal[i] = sign * w[i]
    if patch:
        origin, B, down = work.point[2], work.basis, work.point[3]
        for i in range(3):
            origin[i], down[i] = 0.5 * (p[i] + q[i]), -w[i]
        patch_basis(normal, B)
        m = box_support_set(R, t, half, down, origin, B, tol, work.plane[0], work.plane[1])
        if m > 1:
            return patch_points(work.plane[1], m, origin, B, dist, normal, pa, pb)
    for i in range(3):
        pa[0, i], pb[0, i] = (p[i], q[i]) if box_first else (q[i], p[i])
    return 1


@jit
def _sphere_capsule(c, r1, R, t, r2, h, pa, pb, normal):
    """coal's sphereCapsuleDistance: the signed distance; the witness points on the sphere (pa) and the capsule (pb),
    ``normal`` from the sphere to the capsule."""
    s1 = np.empty(3)
    v, w = np.empty(3), np.empty(3)
    for i in range(3):
        s1[i] = t[i] + h * R[i, 2]
        v[i] = -2.0 * h * R[i, 2]
        w[i] = c[i] - s1[i]
    c1, c2 = jit_dot3(w, v), jit_dot3(v, v)
    sp, n = np.empty(3), np.empty(3)
    for i in range(3):
        if c1 <= 0:
            sp[i] = s1[i]
        elif c2 <= c1:
            sp[i] = s1[i] + v[i]
        else:
            sp[i] = s1[i] + v[i] * (c1 / c2)
        n[i] = sp[i] - c[i]
    norm = np.sqrt(jit_dot3(n, n))
    for i in range(3):
        if norm > 2.220446049250313e-16:
            n[i] = n[i] / norm
        else:
            n[i] = 1.0 if i == 0 else 0.0
    for i in range(3):
        normal[i], pa[i], pb[i] = n[i], c[i] + n[i] * r1, sp[i] - n[i] * r2
    return norm - r1 - r2


@jit
def _capsule_plane(R, t, rad, h, w, off, capsule_first, margin, patch, tol, pa, pb, normal, work):
    """coal's halfspaceDistance with a capsule: its support point along -w and that point's projection; the patch:
    both segment ends when they lie within ``tol`` of the support plane (coal's capsule support set)."""
    d = np.empty(3)
    for c in range(3):
        d[c] = -(R[0, c] * w[0] + R[1, c] * w[1] + R[2, c] * w[2])
    z = h if d[2] > EPS else (-h if d[2] < -EPS else 0.0)
    nd = np.sqrt(jit_dot3(d, d))
    l0, l1, l2 = rad * d[0] / nd, rad * d[1] / nd, z + rad * d[2] / nd
    p, q = np.empty(3), np.empty(3)
    for i in range(3):
        p[i] = (R[i, 0] * l0 + R[i, 1] * l1 + R[i, 2] * l2) + t[i]
    dist = jit_dot3(w, p) - off
    if dist - margin > EPS:
        return 0
    for i in range(3):
        q[i] = p[i] - dist * w[i]
        normal[i] = -w[i] if capsule_first else w[i]
    if patch:
        value = d[2] * z + rad * jit_dot3(d, d)
        if value - (rad * (d[0] * d[0] + d[1] * d[1]) + d[2] * h) <= tol and \
                value - (rad * (d[0] * d[0] + d[1] * d[1]) - d[2] * h) <= tol:
            origin, end = work.point[2], work.point[3]
            for i in range(3):
                origin[i] = 0.5 * (p[i] + q[i])
            B = work.basis
            patch_basis(normal, B)
            for k in range(2):
                e0, e1, e2 = rad * d[0], rad * d[1], h if k == 0 else -h
                for i in range(3):
                    end[i] = (R[i, 0] * e0 + R[i, 1] * e1 + R[i, 2] * e2) + t[i] - origin[i]
                x0 = B[0, 0] * end[0] + B[1, 0] * end[1] + B[2, 0] * end[2]
                x1 = B[0, 1] * end[0] + B[1, 1] * end[1] + B[2, 1] * end[2]
                for i in range(3):
                    x = origin[i] + x0 * B[i, 0] + x1 * B[i, 1]
                    pa[k, i], pb[k, i] = x - 0.5 * dist * normal[i], x + 0.5 * dist * normal[i]
            return 2
    for i in range(3):
        pa[0, i], pb[0, i] = (p[i], q[i]) if capsule_first else (q[i], p[i])
    return 1


@jit
def _pair(ki, kj, Ri, ti, si, Rj, tj, sj, ni, oi, nj, oj, margin, patch, tol, pa, pb, normal, work):
    """Contacts of one pair into pa/pb (rows) and normal: the count, or -1 when coal must solve it. A half-space
    comes as its world normal and offset (ni, oi or nj, oj; :func:`_plane_world`)."""
    if ki == SPHERE and kj == SPHERE:
        return _sphere_sphere(ti, si[0], tj, sj[0], margin, pa, pb, normal)
    if ki == SPHERE and kj == PLANE:
        return _sphere_plane(ti, si[0], nj, oj, ki == SPHERE, margin, pa, pb, normal)
    if ki == PLANE and kj == SPHERE:
        return _sphere_plane(tj, sj[0], ni, oi, ki == SPHERE, margin, pa, pb, normal)
    if ki == BOX and kj == SPHERE:
        dist = _box_sphere(Ri, ti, si, tj, sj[0], margin, pa[0], pb[0], normal)
        return 0 if dist - margin > EPS else 1
    if ki == SPHERE and kj == BOX:
        dist = _box_sphere(Rj, tj, sj, ti, si[0], margin, pb[0], pa[0], normal)
        for i in range(3):
            normal[i] = -normal[i]
        return 0 if dist - margin > EPS else 1
    if ki == BOX and kj == PLANE:
        return _box_plane(Ri, ti, si, nj, oj, ki == BOX, margin, patch, tol, pa, pb, normal, work)
    if ki == PLANE and kj == BOX:
        return _box_plane(Rj, tj, sj, ni, oi, ki == BOX, margin, patch, tol, pa, pb, normal, work)
    if ki == BOX and kj == BOX:
        return box_box(Ri, ti, si, Rj, tj, sj, margin, patch, tol, pa, pb, normal, work)
    if ki == SPHERE and kj == CAPSULE:
        dist = _sphere_capsule(ti, si[0], Rj, tj, sj[0], sj[1], pa[0], pb[0], normal)
        return 0 if dist - margin > EPS else 1
    if ki == CAPSULE and kj == SPHERE:
        dist = _sphere_capsule(tj, sj[0], Ri, ti, si[0], si[1], pb[0], pa[0], normal)
        for i in range(3):
            normal[i] = -normal[i]
        return 0 if dist - margin > EPS else 1
    if ki == CAPSULE and kj == PLANE:
        return _capsule_plane(Ri, ti, si[0], si[1], nj, oj, ki == CAPSULE, margin, patch, tol, pa, pb, normal, work)
    if ki == PLANE and kj == CAPSULE:
        return _capsule_plane(Rj, tj, sj[0], sj[1], ni, oi, ki == CAPSULE, margin, patch, tol, pa, pb, normal,
                              work)
    return -1


@jit
def quaternion_rotations(q, first, R):
    """R[k] (N, 3, 3) := the rotation of the scalar-first quaternion q[k, first:first + 4] (normalized first):
    :func:`kane.spatial.quaternion_to_rotation`'s arithmetic, compiled (the collision batch's bodies, the contact
    step's rows)."""
    for k in range(q.shape[0]):
        w, x, y, z = q[k, first], q[k, first + 1], q[k, first + 2], q[k, first + 3]
        norm = np.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / norm, x / norm, y / norm, z / norm
        R[k, 0, 0], R[k, 0, 1], R[k, 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
        R[k, 1, 0], R[k, 1, 1], R[k, 1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
        R[k, 2, 0], R[k, 2, 1], R[k, 2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)


@jit
def _grow(a, size):
    """``a`` copied into a larger array of ``size`` rows."""
    b = np.empty((size,) + a.shape[1:], dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j]
    return b


@jit
def _batch(R_body, e_body, r_body, kind, size, plane_normal, plane_offset, R_bs, r_bs, body_index, aabb_centre,
           aabb_half, allowed, material_index, material_table, margin, patch, tol, aabb):
    """The batch (primitive_contacts): shape poses and AABBs, every allowed candidate pair in (i, j) order, the
    contacts in field blocks F (13 m floats) and I (5 m integers), the pairs left to coal, m."""
    n = kind.shape[0]
    if e_body.shape[0]:  # scalar-first quaternions
        R_body = np.empty((e_body.shape[0], 3, 3))
        quaternion_rotations(e_body, 0, R_body)
    R_s, r_s = np.empty((n, 3, 3)), np.empty((n, 3))
    lo, hi = np.empty((n, 3)), np.empty((n, 3))
    for k in range(n):
        b = body_index[k]
        for i in range(3):
            if b < 0:
                r_s[k, i] = r_bs[k, i]
                for j in range(3):
                    R_s[k, i, j] = R_bs[k, i, j]
            else:
                r_s[k, i] = r_body[b, i] + R_body[b, i, 0] * r_bs[k, 0] + R_body[b, i, 1] * r_bs[k, 1] + \
                    R_body[b, i, 2] * r_bs[k, 2]
                for j in range(3):
                    R_s[k, i, j] = R_body[b, i, 0] * R_bs[k, 0, j] + R_body[b, i, 1] * R_bs[k, 1, j] + \
                        R_body[b, i, 2] * R_bs[k, 2, j]
        for i in range(3):
            c, h = r_s[k, i], margin
            for j in range(3):
                c += R_s[k, i, j] * aabb_centre[k, j]
                h += abs(R_s[k, i, j]) * aabb_half[k, j]
            lo[k, i], hi[k, i] = c - h, c + h
    w_s, off_s = np.zeros((n, 3)), np.zeros(n)  # the half-spaces in world axes, once
    for k in range(n):
        if kind[k] == PLANE:
            w, off_s[k] = _plane_world(R_s[k], r_s[k], plane_normal[k], plane_offset[k])
            for i in range(3):
                w_s[k, i] = w[i]
    cap = 8 * n + 16
    FS, IS = np.empty((cap, 13)), np.empty((cap, 5), dtype=np.int64)  # per contact: floats, integers
    fallback = np.empty((n + 4, 2), dtype=np.int64)
    m, n_fb = 0, 0
    pa, pb, normal, work = np.empty((16, 3)), np.empty((16, 3)), np.empty(3), workspace()
    for i in range(n):
        for j in range(i + 1, n):
            if not allowed[i, j]:
                continue
            if aabb and kind[i] != PLANE and kind[j] != PLANE and (
                    lo[j, 0] > hi[i, 0] or lo[i, 0] > hi[j, 0] or lo[j, 1] > hi[i, 1] or lo[i, 1] > hi[j, 1]
                    or lo[j, 2] > hi[i, 2] or lo[i, 2] > hi[j, 2]):
                continue
            if kind[i] == BOX and kind[j] == BOX:  # a pile's pairs called directly: through _pair's branches each
                # call costs ~150 ns more (measured on the 20-box pile: 23 -> 20 us a step)
                count = box_box(R_s[i], r_s[i], size[i], R_s[j], r_s[j], size[j], margin, patch, tol, pa, pb, normal,
                                work)
            elif kind[i] == BOX and kind[j] == PLANE:
                count = _box_plane(R_s[i], r_s[i], size[i], w_s[j], off_s[j], True, margin, patch, tol, pa, pb,
                                   normal, work)
            else:
                count = _pair(kind[i], kind[j], R_s[i], r_s[i], size[i], R_s[j], r_s[j], size[j], w_s[i], off_s[i],
                              w_s[j], off_s[j], margin, patch, tol, pa, pb, normal, work)
            if count < 0:
                if n_fb == fallback.shape[0]:
                    fallback = _grow(fallback, 2 * n_fb)
                fallback[n_fb, 0], fallback[n_fb, 1] = i, j
                n_fb += 1
                continue
            if m + count > FS.shape[0]:
                FS, IS = _grow(FS, 2 * (m + count)), _grow(IS, 2 * (m + count))
            mat = material_table[material_index[i], material_index[j]]
            for k in range(count):
                IS[m, 0], IS[m, 1], IS[m, 2], IS[m, 3], IS[m, 4] = body_index[i], body_index[j], i, j, i * n + j
                d = 0.0
                for c in range(3):
                    FS[m, c], FS[m, 3 + c], FS[m, 6 + c] = pa[k, c], pb[k, c], normal[c]
                    d += (pb[k, c] - pa[k, c]) * normal[c]
                FS[m, 9], FS[m, 10], FS[m, 11], FS[m, 12] = d, mat[0], mat[1], mat[2]
                m += 1
    # field by field, each a contiguous block: (m, 3) points and normals, then (m,) columns
    F, I = np.empty(13 * m), np.empty(5 * m, dtype=np.int64)
    for k in range(m):
        for c in range(9):
            F[(c // 3) * 3 * m + 3 * k + c % 3] = FS[k, c]
        for c in range(4):
            F[(9 + c) * m + k] = FS[k, 9 + c]
        for c in range(5):
            I[c * m + k] = IS[k, c]
    return F, I, fallback[:n_fb], m


def primitive_contacts(tables: PrimitiveTables, R_body: np.ndarray | None, r_body: np.ndarray, margin: float,
                       patch: bool = True, tol: float = 1e-3, aabb: bool = True,
                       e_body: np.ndarray | None = None) -> PrimitiveContacts:
    """The contacts of every candidate pair of primitives at the body poses ``R_body`` (n_b, 3, 3) (or the
    scalar-first quaternions ``e_body`` (n_b, 4), R_body None) / ``r_body`` (n_b, 3) (module docstring); ``tol`` is
    coal's patch tolerance [m]; ``aabb`` False: every allowed pair is a candidate
    (:attr:`~kane.mechanics.collision.BroadPhase.ALL`)."""
    e = _NO_QUATERNIONS if e_body is None else np.ascontiguousarray(e_body, dtype=np.float64)
    R = _NO_ROTATIONS if R_body is None else np.ascontiguousarray(R_body, dtype=np.float64)
    F, I, coal_pairs, m = _batch(R, e, np.ascontiguousarray(r_body, dtype=np.float64), *tables, float(margin),
                                 bool(patch), float(tol), bool(aabb))
    return PrimitiveContacts(I[:m], I[m:2 * m], I[2 * m:3 * m], I[3 * m:4 * m], F[:3 * m].reshape(m, 3),
                             F[3 * m:6 * m].reshape(m, 3), F[6 * m:9 * m].reshape(m, 3), F[9 * m:10 * m],
                             F[10 * m:11 * m], F[11 * m:12 * m], F[12 * m:], I[4 * m:], coal_pairs)


_NO_QUATERNIONS, _NO_ROTATIONS = np.zeros((0, 4)), np.zeros((0, 3, 3))
