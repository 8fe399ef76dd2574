"""Box contacts in compiled code: support sets, coal's contact-patch clipping and the box-box narrow phase.

The functions follow coal 3's conventions (coal/contact_patch/contact_patch_solver.hxx and
src/narrowphase/support_functions.cpp) so that :mod:`kane.mechanics.collision_prims` gives the contacts that coal's
``collide`` + ``computeContactPatch`` give:

- the patch frame (:func:`patch_basis`): origin the contact point (midway between the witness points), z axis the
  normal a -> b, x/y axes Eigen's ``unitOrthogonal`` construction;
- a box's support set in a direction: the corners within ``tol`` (coal's ``patch_tolerance``, 1e-3 m by default)
  of the support plane, projected onto the patch plane, ordered counter-clockwise by coal's Graham scan;
- the patch: shape a's support set along +n clipped against shape b's along -n (Sutherland-Hodgman, the larger set
  clips), the segment-segment case as coal computes it (:func:`clip_sets`);
- box-box: the penetration depth and normal by the separating-axis test over the 15 axes (the minimum translation
  distance, what coal's EPA converges to on two boxes), the distance of separated boxes as the minimum over the
  vertex-box and edge-edge feature pairs (what GJK converges to), witness points on the deepest features.

Every function is compiled by numba (:func:`kane.jit.kernel`: cached on disk, ``nogil``) when numba is installed,
plain Python otherwise.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import HAVE_NUMBA
from ..jit import kernel as jit  # numba's njit, cached on disk under kane's source stamp (the function without numba)

__all__ = ["HAVE_NUMBA", "jit", "jit_dot3", "jit_mat3_vec", "Workspace", "workspace", "patch_basis", "box_support_set",
           "patch_points", "clip_sets", "box_box", "CORNERS"]

EPS = 1e-12  # Eigen's dummy_precision for double, coal's threshold in the patch geometry
# coal's box corner order (getShapeSupportSet<Box>)
CORNERS = np.array([[1, 1, 1], [-1, 1, 1], [-1, -1, 1], [1, -1, 1], [1, 1, -1], [-1, 1, -1], [-1, -1, -1],
                    [1, -1, -1]], dtype=np.float64)
Workspace = namedtuple("Workspace", "point corners basis plane added")


@jit
def workspace():
    """Scratch of one thread's narrow phase: points (4, 3), box corners (2, 8, 3), a patch basis (3, 3), 2-D
    polygons (5, 16, 2) and flags (16,)."""
    return Workspace(np.empty((4, 3)), np.empty((2, 8, 3)), np.empty((3, 3)), np.empty((5, 16, 2)),
                     np.zeros(16, dtype=np.bool_))


EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4], [0, 4], [1, 5], [2, 6], [3, 7]],
                 dtype=np.int64)
EDGE_AXIS = np.array([0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2], dtype=np.int64)  # the local axis each edge runs along


@jit
def jit_dot3(a, b):
    """a . b of two 3-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def jit_mat3_vec(R, v):
    """R v of a (3, 3) matrix and a 3-vector."""
    return np.array([R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2], R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
                     R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2]])


@jit
def patch_basis(n, B):
    """B (3, 3) := the rotation whose z column is the unit vector ``n`` (coal's constructOrthonormalBasisFromVector,
    Eigen's unitOrthogonal)."""
    x, y, z = n[0], n[1], n[2]
    if not abs(x) <= abs(z) * EPS or not abs(y) <= abs(z) * EPS:
        inv = 1.0 / np.sqrt(x * x + y * y)
        u0, u1, u2 = -y * inv, x * inv, 0.0
    else:
        inv = 1.0 / np.sqrt(y * y + z * z)
        u0, u1, u2 = 0.0, -z * inv, y * inv
    B[0, 1], B[1, 1], B[2, 1] = -u0, -u1, -u2
    B[0, 0], B[1, 0], B[2, 0] = -u1 * z + u2 * y, -u2 * x + u0 * z, -u0 * y + u1 * x
    B[0, 2], B[1, 2], B[2, 2] = x, y, z


@jit
def _before(px, py, qx, qy, vx, vy):
    """coal's Graham-scan order: p before q around v (counter-clockwise, nearer first when colinear)."""
    det = (px - vx) * (qy - vy) - (py - vy) * (qx - vx)
    if abs(det) <= EPS:
        return (px - vx) ** 2 + (py - vy) ** 2 <= (qx - vx) ** 2 + (qy - vy) ** 2
    return det > 0


@jit
def _swap(a, i, j):
    a[i, 0], a[j, 0] = a[j, 0], a[i, 0]
    a[i, 1], a[j, 1] = a[j, 1], a[i, 1]


@jit
def _hull(cloud, n, hull):
    """coal's computeSupportSetConvexHull of cloud[:n] (2-D) into hull; returns its size."""
    if n <= 3:
        if n == 3:
            for k in (1, 2):
                if cloud[0, 1] > cloud[k, 1]:
                    _swap(cloud, 0, k)
            a0, a1 = cloud[0, 0], cloud[0, 1]
            if (cloud[1, 0] - a0) * (cloud[2, 1] - a1) - (cloud[1, 1] - a1) * (cloud[2, 0] - a0) < 0:
                _swap(cloud, 1, 2)
        for k in range(n):
            hull[k, 0], hull[k, 1] = cloud[k, 0], cloud[k, 1]
        return n
    low = 0
    for i in range(1, n):
        if cloud[i, 1] < cloud[low, 1]:
            low = i
    _swap(cloud, 0, low)
    vx, vy = cloud[0, 0], cloud[0, 1]
    for i in range(2, n):  # libstdc++'s insertion sort (stable_sort of up to 7 elements)
        x, y = cloud[i, 0], cloud[i, 1]
        if _before(x, y, cloud[1, 0], cloud[1, 1], vx, vy):
            for j in range(i, 1, -1):
                cloud[j, 0], cloud[j, 1] = cloud[j - 1, 0], cloud[j - 1, 1]
            cloud[1, 0], cloud[1, 1] = x, y
        else:
            j = i
            while _before(x, y, cloud[j - 1, 0], cloud[j - 1, 1], vx, vy):
                cloud[j, 0], cloud[j, 1] = cloud[j - 1, 0], cloud[j - 1, 1]
                j -= 1
            cloud[j, 0], cloud[j, 1] = x, y
    hull[0, 0], hull[0, 1] = vx, vy
    m, start = 1, 1
    while m < 3 and start < n:
        if (hull[m - 1, 0] - cloud[start, 0]) ** 2 + (hull[m - 1, 1] - cloud[start, 1]) ** 2 > 2.220446049250313e-16:
            hull[m, 0], hull[m, 1] = cloud[start, 0], cloud[start, 1]
            m += 1
        start += 1
    for i in range(start, n):
        x, y = cloud[i, 0], cloud[i, 1]
        while m > 1:
            if (hull[m - 1, 0] - hull[m - 2, 0]) * (y - hull[m - 2, 1]) - (hull[m - 1, 1] - hull[m - 2, 1]) * (
                    x - hull[m - 2, 0]) > EPS:
                break
            m -= 1
        hull[m, 0], hull[m, 1] = x, y
        m += 1
    return m


@jit
def box_support_set(R, t, half, direction, origin, B, tol, cloud, out):
    """The support set of the box (R, t, half) along the world ``direction``: the corners within ``tol`` of its
    support plane, in the patch frame (origin, B) as 2-D points, convex hull into ``out``; returns the count."""
    d0 = R[0, 0] * direction[0] + R[1, 0] * direction[1] + R[2, 0] * direction[2]
    d1 = R[0, 1] * direction[0] + R[1, 1] * direction[1] + R[2, 1] * direction[2]
    d2 = R[0, 2] * direction[0] + R[1, 2] * direction[1] + R[2, 2] * direction[2]
    value = 0.0
    for c, d in ((0, d0), (1, d1), (2, d2)):
        if d > EPS:
            value += half[c] * d
        elif d < -EPS:
            value -= half[c] * d
    n = np.int64(0)  # int64 from the start: a literal 0 here makes numba compile _hull a second time
    for k in range(8):
        x, y, z = CORNERS[k, 0] * half[0], CORNERS[k, 1] * half[1], CORNERS[k, 2] * half[2]
        if value - (x * d0 + y * d1 + z * d2) < tol:
            w0 = R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0] - origin[0]
            w1 = R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1] - origin[1]
            w2 = R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2] - origin[2]
            cloud[n, 0] = B[0, 0] * w0 + B[1, 0] * w1 + B[2, 0] * w2
            cloud[n, 1] = B[0, 1] * w0 + B[1, 1] * w1 + B[2, 1] * w2
            n += 1
    return _hull(cloud, n, out)


@jit
def _line_cut(ax, ay, bx, by, c, d):
    """coal's computeLineSegmentIntersection: the point of [c, d] on the line (a, b)."""
    n0, n1 = -(by - ay), bx - ax
    den = n0 * (c[0] - d[0]) + n1 * (c[1] - d[1])
    if abs(den) < 2.220446049250313e-16:
        return d[0], d[1]
    alpha = min(1.0, max(0.0, (n0 * (ax - d[0]) + n1 * (ay - d[1])) / den))
    return alpha * c[0] + (1 - alpha) * d[0], alpha * c[1] + (1 - alpha) * d[1]


@jit
def clip_sets(set1, n1, set2, n2, out, buffer, added):
    """coal's contact patch of two support sets (shape a's, shape b's; 2-D, counter-clockwise) into ``out``
    (``buffer`` as large, ``added`` bools as scratch); returns the count (<= 1: the single contact point stands)."""
    if n1 <= 1 or n2 <= 1:
        return 0
    if n1 == 2 and n2 == 2:  # coal compares with >= here (a boolean "determinant"), kept for the same contacts
        a, b, c, d = set1[0], set1[1], set2[0], set2[1]
        det = 1.0 if (b[0] - a[0]) * (d[1] - c[1]) >= (b[1] - a[1]) * (d[0] - c[0]) else 0.0
        l = (d[0] - c[0]) ** 2 + (d[1] - c[1]) ** 2
        if det > EPS or l < EPS or (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2 < EPS:
            return 0
        for m in range(2):
            p = a if m == 0 else b
            s = (p[0] - c[0]) * (d[0] - c[0]) + (p[1] - c[1]) * (d[1] - c[1])
            s = 1.0 if s >= l else (0.0 if s <= 0 else s / l)
            out[m, 0], out[m, 1] = c[0] + s * (d[0] - c[0]), c[1] + s * (d[1] - c[1])
        return 1 if (out[0, 0] - out[1, 0]) ** 2 + (out[0, 1] - out[1, 1]) ** 2 < EPS else 2
    if n1 < n2:
        clipper, nc, first, m = set2, n2, set1, n1
    else:
        clipper, nc, first, m = set1, n1, set2, n2
    for j in range(m):
        out[j, 0], out[j, 1] = first[j, 0], first[j, 1]
    previous, current, in_out = out, buffer, True  # ping-pong between out and buffer
    for i in range(nc):
        ax, ay = clipper[i, 0], clipper[i, 1]
        ab0, ab1 = clipper[(i + 1) % nc, 0] - ax, clipper[(i + 1) % nc, 1] - ay
        bx, by = ax + ab0, ay + ab1
        k = 0
        if m == 2:  # segment-polygon
            p1, p2 = previous[0], previous[1]
            det1 = ab0 * (p1[1] - ay) - ab1 * (p1[0] - ax)
            det2 = ab0 * (p2[1] - ay) - ab1 * (p2[0] - ax)
            if det1 >= 0 and det2 >= 0:
                current[0, 0], current[0, 1], current[1, 0], current[1, 1] = p1[0], p1[1], p2[0], p2[1]
            elif det1 >= 0 and det1 > EPS:
                current[0, 0], current[0, 1] = p1[0], p1[1]
                current[1, 0], current[1, 1] = _line_cut(ax, ay, bx, by, p1, p2)
            elif det1 < 0 and det2 > EPS:
                current[0, 0], current[0, 1] = p2[0], p2[1]
                current[1, 0], current[1, 1] = _line_cut(ax, ay, bx, by, p1, p2)
            else:  # both outside, or one point left: coal stops with at most one point
                return 0
            k = 2
        else:  # polygon-polygon
            added[:m] = False
            for j in range(m):
                jn = (j + 1) % m
                p1, p2 = previous[j], previous[jn]
                det1 = ab0 * (p1[1] - ay) - ab1 * (p1[0] - ax)
                det2 = ab0 * (p2[1] - ay) - ab1 * (p2[0] - ax)
                if det1 < 0 and det2 < 0:
                    continue
                if det1 >= 0:
                    if not added[j]:
                        current[k, 0], current[k, 1] = p1[0], p1[1]
                        added[j] = True
                        k += 1
                    if det2 < 0 and det1 > EPS:
                        current[k, 0], current[k, 1] = _line_cut(ax, ay, bx, by, p1, p2)
                        k += 1
                elif det2 > EPS:
                    current[k, 0], current[k, 1] = _line_cut(ax, ay, bx, by, p1, p2)
                    k += 1
                elif not added[jn]:
                    current[k, 0], current[k, 1] = p2[0], p2[1]
                    added[jn] = True
                    k += 1
        if k <= 1:
            return 0
        previous, current, m, in_out = current, previous, k, not in_out
    if not in_out:
        for j in range(m):
            out[j, 0], out[j, 1] = previous[j, 0], previous[j, 1]
    return m


@jit
def _corners(R, t, half, out):
    """out (8, 3) := the world corners of the box (R, t, half) in coal's order."""
    for k in range(8):
        x, y, z = CORNERS[k, 0] * half[0], CORNERS[k, 1] * half[1], CORNERS[k, 2] * half[2]
        for i in range(3):
            out[k, i] = R[i, 0] * x + R[i, 1] * y + R[i, 2] * z + t[i]


@jit
def _support(R, t, half, n0, n1, n2, sign, out):
    """out := coal's support point of the box along sign * n (a local component within 1e-12 of zero picks the
    face centre's coordinate); returns how many local components are nonzero (3: a corner, 2: an edge)."""
    count = 0
    out[0], out[1], out[2] = t[0], t[1], t[2]
    for c in range(3):
        d = sign * (R[0, c] * n0 + R[1, c] * n1 + R[2, c] * n2)
        s = half[c] if d > EPS else (-half[c] if d < -EPS else 0.0)
        if s != 0.0:
            count += 1
            for i in range(3):
                out[i] += s * R[i, c]
    return count


@jit
def _segments(p1, q1, p2, q2):
    """(s, t, squared distance) of the closest points p1 + s (q1 - p1), p2 + t (q2 - p2) of two segments (Ericson,
    Real-Time Collision Detection 5.1.9)."""
    d10, d11, d12 = q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2]
    d20, d21, d22 = q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2]
    r0, r1, r2 = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a, e, f = d10 * d10 + d11 * d11 + d12 * d12, d20 * d20 + d21 * d21 + d22 * d22, d20 * r0 + d21 * r1 + d22 * r2
    c, b = d10 * r0 + d11 * r1 + d12 * r2, d10 * d20 + d11 * d21 + d12 * d22
    den = a * e - b * b
    s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > 1e-300 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, min(1.0, max(0.0, -c / a))
    elif t > 1.0:
        t, s = 1.0, min(1.0, max(0.0, (b - c) / a))
    x0, x1, x2 = r0 + s * d10 - t * d20, r1 + s * d11 - t * d21, r2 + s * d12 - t * d22
    return s, t, x0 * x0 + x1 * x1 + x2 * x2


@jit
def _box_distance(Ra, ta, ha, Rb, tb, hb, ca, cb, n0, n1, n2, reach, pa, pb):
    """Distance of two separated boxes (corners ca, cb (8, 3)), the nearest of the corner-box and edge-edge
    feature pairs; their points into pa, pb. Only features within ``reach`` of each box's support plane along the
    separating axis n (a -> b) are tried: the nearest points of boxes at most ``reach`` apart lie there (n . pa >=
    n . pb - dist >= s_b - dist >= s_a - dist, with s_a <= s_b the support values), so a distance up to ``reach``
    is the same (the same feature pair, found in the same order) as over all 16 corners and 144 edge pairs, and a
    larger one stays larger than ``reach``. Parallel edges are skipped: their distance is reached at an end, a
    corner the corner-box tests have tried."""
    near_a, near_b = 0, 0  # bit k: corner k is near its box's support plane
    s_a, s_b = -np.inf, np.inf
    for k in range(8):
        s_a = max(s_a, ca[k, 0] * n0 + ca[k, 1] * n1 + ca[k, 2] * n2)
        s_b = min(s_b, cb[k, 0] * n0 + cb[k, 1] * n1 + cb[k, 2] * n2)
    for k in range(8):
        if ca[k, 0] * n0 + ca[k, 1] * n1 + ca[k, 2] * n2 >= s_a - reach:
            near_a |= 1 << k
        if cb[k, 0] * n0 + cb[k, 1] * n1 + cb[k, 2] * n2 <= s_b + reach:
            near_b |= 1 << k
    best = np.inf
    for side in range(2):
        C, R2, t2, h2 = (ca, Rb, tb, hb) if side == 0 else (cb, Ra, ta, ha)
        near = near_a if side == 0 else near_b
        for k in range(8):
            if not (near >> k) & 1:
                continue
            q0, q1, q2 = C[k, 0] - t2[0], C[k, 1] - t2[1], C[k, 2] - t2[2]
            w0, w1, w2 = t2[0], t2[1], t2[2]
            for i in range(3):
                c = min(h2[i], max(-h2[i], R2[0, i] * q0 + R2[1, i] * q1 + R2[2, i] * q2))
                w0, w1, w2 = w0 + c * R2[0, i], w1 + c * R2[1, i], w2 + c * R2[2, i]
            d = (C[k, 0] - w0) ** 2 + (C[k, 1] - w1) ** 2 + (C[k, 2] - w2) ** 2
            if d < best:
                best = d
                P, Q = (pa, pb) if side == 0 else (pb, pa)
                P[0], P[1], P[2], Q[0], Q[1], Q[2] = C[k, 0], C[k, 1], C[k, 2], w0, w1, w2
    for i in range(12):
        if not ((near_a >> EDGES[i, 0]) & 1 or (near_a >> EDGES[i, 1]) & 1):
            continue
        a0, a1 = ca[EDGES[i, 0]], ca[EDGES[i, 1]]
        ia = EDGE_AXIS[i]
        ra = ha[ia]  # half the edge's length: the radius of its bounding sphere
        for j in range(12):
            if not ((near_b >> EDGES[j, 0]) & 1 or (near_b >> EDGES[j, 1]) & 1):
                continue
            jb = EDGE_AXIS[j]
            if abs(Ra[0, ia] * Rb[0, jb] + Ra[1, ia] * Rb[1, jb] + Ra[2, ia] * Rb[2, jb]) >= 1.0 - 1e-12:
                continue  # parallel edges are no closer than a corner (tried above)
            b0, b1 = cb[EDGES[j, 0]], cb[EDGES[j, 1]]
            rb = hb[jb]
            gap = np.sqrt((0.5 * (a0[0] + a1[0] - b0[0] - b1[0])) ** 2 + (0.5 * (a0[1] + a1[1] - b0[1] - b1[1])) ** 2
                          + (0.5 * (a0[2] + a1[2] - b0[2] - b1[2])) ** 2) - ra - rb
            if gap > 0.0 and gap * gap >= best:  # the edges' bounding spheres are farther apart than the best
                continue
            s, t, d = _segments(a0, a1, b0, b1)
            if d < best:
                best = d
                for c in range(3):
                    pa[c], pb[c] = a0[c] + s * (a1[c] - a0[c]), b0[c] + t * (b1[c] - b0[c])
    return np.sqrt(best)


@jit
def _edge_lines(Ra, Rb, n, pa, pb):
    """pa, pb := the closest points of the lines through the edges whose midpoints are pa, pb (the edge of a runs
    along its local axis perpendicular to n, the edge of b likewise)."""
    ia, ib = 0, 0
    for c in range(3):
        if abs(Ra[0, c] * n[0] + Ra[1, c] * n[1] + Ra[2, c] * n[2]) <= EPS:
            ia = c
        if abs(Rb[0, c] * n[0] + Rb[1, c] * n[1] + Rb[2, c] * n[2]) <= EPS:
            ib = c
    u0, u1, u2, v0, v1, v2 = Ra[0, ia], Ra[1, ia], Ra[2, ia], Rb[0, ib], Rb[1, ib], Rb[2, ib]
    r0, r1, r2 = pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]
    b, c, f = u0 * v0 + u1 * v1 + u2 * v2, u0 * r0 + u1 * r1 + u2 * r2, v0 * r0 + v1 * r1 + v2 * r2
    den = 1.0 - b * b
    if den < 1e-300:
        return
    s = (b * f - c) / den
    t = b * s + f
    pa[0], pa[1], pa[2] = pa[0] + s * u0, pa[1] + s * u1, pa[2] + s * u2
    pb[0], pb[1], pb[2] = pb[0] + t * v0, pb[1] + t * v1, pb[2] + t * v2


@jit
def patch_points(poly, m, origin, B, dist, normal, out_a, out_b) -> int:
    """The m points of a patch polygon ``poly`` (m, 2) in the patch frame (``origin``, basis B (3, 3)) as witness
    points out_a/out_b (m, 3), each half the signed distance ``dist`` back/along the unit ``normal``; returns m."""
    for k in range(m):
        for i in range(3):
            x = origin[i] + poly[k, 0] * B[i, 0] + poly[k, 1] * B[i, 1]
            out_a[k, i], out_b[k, i] = x - 0.5 * dist * normal[i], x + 0.5 * dist * normal[i]
    return m


@jit
def box_box(Ra, ta, ha, Rb, tb, hb, margin, patch, tol, out_a, out_b, normal, work):
    """Contacts of boxes a and b closer than ``margin``: witness points into out_a/out_b (rows), the normal a -> b
    into ``normal``; returns the number of points (0: apart). The points of a patch share its signed distance.
    ``work`` (:func:`workspace`) is scratch."""
    t0, t1, t2 = tb[0] - ta[0], tb[1] - ta[1], tb[2] - ta[2]
    best, n0, n1, n2 = -np.inf, 0.0, 0.0, 1.0
    for k in range(15):
        if k < 3:
            L0, L1, L2 = Ra[0, k], Ra[1, k], Ra[2, k]
        elif k < 6:
            L0, L1, L2 = Rb[0, k - 3], Rb[1, k - 3], Rb[2, k - 3]
        else:
            i, j = (k - 6) // 3, (k - 6) % 3
            a0, a1, a2, b0, b1, b2 = Ra[0, i], Ra[1, i], Ra[2, i], Rb[0, j], Rb[1, j], Rb[2, j]
            L0, L1, L2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
            norm = np.sqrt(L0 * L0 + L1 * L1 + L2 * L2)
            if norm < 1e-6:  # parallel edges: the face axes cover them
                continue
            L0, L1, L2 = L0 / norm, L1 / norm, L2 / norm
        extent = 0.0
        for c in range(3):
            extent += ha[c] * abs(Ra[0, c] * L0 + Ra[1, c] * L1 + Ra[2, c] * L2)
            extent += hb[c] * abs(Rb[0, c] * L0 + Rb[1, c] * L1 + Rb[2, c] * L2)
        s = t0 * L0 + t1 * L1 + t2 * L2
        gap = abs(s) - extent
        if gap - margin > EPS:  # a separating axis with a gap beyond the margin: apart (the maximum would be too)
            return 0
        if gap > best:
            best = gap
            n0, n1, n2 = (L0, L1, L2) if s >= 0 else (-L0, -L1, -L2)
    if best - margin > EPS:
        return 0
    pa, pb = work.point[0], work.point[1]
    if best > 0.0:  # apart (within the margin): the nearest features
        _corners(Ra, ta, ha, work.corners[0])
        _corners(Rb, tb, hb, work.corners[1])
        dist = _box_distance(Ra, ta, ha, Rb, tb, hb, work.corners[0], work.corners[1], n0, n1, n2,
                             margin + 1e-9, pa, pb)
        if dist - margin > EPS:
            return 0
        n0, n1, n2 = (pb[0] - pa[0]) / dist, (pb[1] - pa[1]) / dist, (pb[2] - pa[2]) / dist
    else:  # overlapping: the separating axis of least overlap is the penetration normal
        dist = best
        count_b = _support(Rb, tb, hb, n0, n1, n2, -1.0, pb)
        count_a = _support(Ra, ta, ha, n0, n1, n2, 1.0, pa)
        if count_b == 3:
            pa[0], pa[1], pa[2] = pb[0] - dist * n0, pb[1] - dist * n1, pb[2] - dist * n2
        elif count_a == 3 or count_b != 2 or count_a != 2:
            pb[0], pb[1], pb[2] = pa[0] + dist * n0, pa[1] + dist * n1, pa[2] + dist * n2
        else:
            normal[0], normal[1], normal[2] = n0, n1, n2
            _edge_lines(Ra, Rb, normal, pa, pb)
    normal[0], normal[1], normal[2] = n0, n1, n2
    if patch:
        origin, B = work.point[2], work.basis
        for i in range(3):
            origin[i] = 0.5 * (pa[i] + pb[i])
        patch_basis(normal, B)
        flip = work.point[3]
        flip[0], flip[1], flip[2] = -n0, -n1, -n2
        n_a = box_support_set(Ra, ta, ha, normal, origin, B, tol, work.plane[0], work.plane[1])
        n_b = box_support_set(Rb, tb, hb, flip, origin, B, tol, work.plane[0], work.plane[2])
        m = clip_sets(work.plane[1], n_a, work.plane[2], n_b, work.plane[3], work.plane[4], work.added)
        if m > 1:
            return patch_points(work.plane[3], m, origin, B, dist, normal, out_a, out_b)
    for i in range(3):
        out_a[0, i], out_b[0, i] = pa[i], pb[i]
    return 1
