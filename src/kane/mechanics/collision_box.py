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

Every function is compiled by numba (``cache=True``, ``nogil``) when numba is installed, plain Python otherwise.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError:  # numba is optional: the same arithmetic in Python
    HAVE_NUMBA = False

    def jit(function):
        return function
else:
    HAVE_NUMBA = True
    jit = njit(cache=True, nogil=True)

__all__ = ["HAVE_NUMBA", "jit", "dot", "matvec", "patch_basis", "box_support_set", "clip_sets", "box_box", "CORNERS"]

EPS = 1e-12  # Eigen's dummy_precision for double, coal's threshold in the patch geometry
# coal's box corner order (getShapeSupportSet<Box>)
CORNERS = np.array([[1, 1, 1], [-1, 1, 1], [-1, -1, 1], [1, -1, 1], [1, 1, -1], [-1, 1, -1], [-1, -1, -1],
                    [1, -1, -1]], dtype=np.float64)
EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4], [0, 4], [1, 5], [2, 6], [3, 7]],
                 dtype=np.int64)


@jit
def dot(a, b):
    """a . b of two 3-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def matvec(R, v):
    """R v of a (3, 3) matrix and a 3-vector."""
    return np.array([R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2], R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
                     R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2]])


@jit
def patch_basis(n):
    """(3, 3) rotation whose z column is the unit vector ``n`` (coal's constructOrthonormalBasisFromVector)."""
    B = np.zeros((3, 3))
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
    return B


@jit
def _before(p, q, v):
    """coal's Graham-scan order: p before q around v (counter-clockwise, nearer first when colinear)."""
    det = (p[0] - v[0]) * (q[1] - v[1]) - (p[1] - v[1]) * (q[0] - v[0])
    if abs(det) <= EPS:
        return (p[0] - v[0]) ** 2 + (p[1] - v[1]) ** 2 <= (q[0] - v[0]) ** 2 + (q[1] - v[1]) ** 2
    return det > 0


@jit
def _hull(cloud, n, hull):
    """coal's computeSupportSetConvexHull of cloud[:n] (2-D) into hull; returns its size."""
    if n <= 2:
        hull[:n] = cloud[:n]
        return n
    if n == 3:
        for k in (1, 2):
            if cloud[0, 1] > cloud[k, 1]:
                t0, t1 = cloud[0, 0], cloud[0, 1]
                cloud[0, 0], cloud[0, 1] = cloud[k, 0], cloud[k, 1]
                cloud[k, 0], cloud[k, 1] = t0, t1
        a, b, c = cloud[0], cloud[1], cloud[2]
        if (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) < 0:
            t0, t1 = cloud[1, 0], cloud[1, 1]
            cloud[1, 0], cloud[1, 1] = cloud[2, 0], cloud[2, 1]
            cloud[2, 0], cloud[2, 1] = t0, t1
        hull[:3] = cloud[:3]
        return 3
    low = 0
    for i in range(1, n):
        if cloud[i, 1] < cloud[low, 1]:
            low = i
    t0, t1 = cloud[0, 0], cloud[0, 1]
    cloud[0, 0], cloud[0, 1] = cloud[low, 0], cloud[low, 1]
    cloud[low, 0], cloud[low, 1] = t0, t1
    v = cloud[0].copy()
    for i in range(2, n):  # libstdc++'s insertion sort (stable_sort of up to 7 elements)
        val = cloud[i].copy()
        if _before(val, cloud[1], v):
            for j in range(i, 1, -1):
                cloud[j] = cloud[j - 1]
            cloud[1] = val
        else:
            j = i
            while _before(val, cloud[j - 1], v):
                cloud[j] = cloud[j - 1]
                j -= 1
            cloud[j] = val
    hull[0] = cloud[0]
    m, start = 1, 1
    while m < 3 and start < n:
        if (hull[m - 1, 0] - cloud[start, 0]) ** 2 + (hull[m - 1, 1] - cloud[start, 1]) ** 2 > 2.220446049250313e-16:
            hull[m] = cloud[start]
            m += 1
        start += 1
    for i in range(start, n):
        while m > 1:
            p1, p2, p3 = hull[m - 2], hull[m - 1], cloud[i]
            if (p2[0] - p1[0]) * (p3[1] - p1[1]) - (p2[1] - p1[1]) * (p3[0] - p1[0]) > EPS:
                break
            m -= 1
        hull[m] = cloud[i]
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
    n = 0
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
def _line_cut(a, b, c, d):
    """coal's computeLineSegmentIntersection: the point of [c, d] on the line (a, b)."""
    n0, n1 = -(b[1] - a[1]), b[0] - a[0]
    den = n0 * (c[0] - d[0]) + n1 * (c[1] - d[1])
    if abs(den) < 2.220446049250313e-16:
        return d[0], d[1]
    alpha = (n0 * (a[0] - d[0]) + n1 * (a[1] - d[1])) / den
    alpha = min(1.0, max(0.0, alpha))
    return alpha * c[0] + (1 - alpha) * d[0], alpha * c[1] + (1 - alpha) * d[1]


@jit
def clip_sets(set1, n1, set2, n2, out):
    """coal's contact patch of two support sets (shape a's, shape b's; 2-D, counter-clockwise) into ``out``;
    returns the count (<= 1: the single contact point stands)."""
    if n1 <= 1 or n2 <= 1:
        return 0
    if n1 == 2 and n2 == 2:  # coal compares with >= here (a boolean "determinant"), kept for the same contacts
        a, b, c, d = set1[0], set1[1], set2[0], set2[1]
        det = 1.0 if (b[0] - a[0]) * (d[1] - c[1]) >= (b[1] - a[1]) * (d[0] - c[0]) else 0.0
        l = (d[0] - c[0]) ** 2 + (d[1] - c[1]) ** 2
        if det > EPS or l < EPS or (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2 < EPS:
            return 0
        m = 0
        for p in (a, b):
            s = (p[0] - c[0]) * (d[0] - c[0]) + (p[1] - c[1]) * (d[1] - c[1])
            s = 1.0 if s >= l else (0.0 if s <= 0 else s / l)
            out[m, 0], out[m, 1] = c[0] + s * (d[0] - c[0]), c[1] + s * (d[1] - c[1])
            m += 1
        if (out[0, 0] - out[1, 0]) ** 2 + (out[0, 1] - out[1, 1]) ** 2 < EPS:
            m = 1
        return m
    if n1 < n2:
        clipper, nc, previous, m = set2, n2, set1[:n1].copy(), n1
    else:
        clipper, nc, previous, m = set1, n1, set2[:n2].copy(), n2
    current = np.empty((n1 + n2, 2))
    added = np.zeros(n1 + n2, dtype=np.bool_)
    for i in range(nc):
        a, b = clipper[i], clipper[(i + 1) % nc]
        ab0, ab1 = b[0] - a[0], b[1] - a[1]
        k = 0
        if m == 2:  # segment-polygon
            p1, p2 = previous[0], previous[1]
            det1 = ab0 * (p1[1] - a[1]) - ab1 * (p1[0] - a[0])
            det2 = ab0 * (p2[1] - a[1]) - ab1 * (p2[0] - a[0])
            if det1 >= 0 and det2 >= 0:
                current[0], current[1] = p1, p2
                k = 2
            elif det1 >= 0 and det1 > EPS:
                current[0] = p1
                current[1, 0], current[1, 1] = _line_cut(a, b, p1, p2)
                k = 2
            elif det1 < 0 and det2 > EPS:
                current[0] = p2
                current[1, 0], current[1, 1] = _line_cut(a, b, p1, p2)
                k = 2
            else:  # both outside, or one point left: coal stops with at most one point
                return 0
        else:  # polygon-polygon
            added[:] = False
            for j in range(m):
                jn = (j + 1) % m
                p1, p2 = previous[j], previous[jn]
                det1 = ab0 * (p1[1] - a[1]) - ab1 * (p1[0] - a[0])
                det2 = ab0 * (p2[1] - a[1]) - ab1 * (p2[0] - a[0])
                if det1 < 0 and det2 < 0:
                    continue
                if det1 >= 0:
                    if not added[j]:
                        current[k] = p1
                        added[j] = True
                        k += 1
                    if det2 < 0 and det1 > EPS:
                        current[k, 0], current[k, 1] = _line_cut(a, b, p1, p2)
                        k += 1
                elif det2 > EPS:
                    current[k, 0], current[k, 1] = _line_cut(a, b, p1, p2)
                    k += 1
                elif not added[jn]:
                    current[k] = p2
                    added[jn] = True
                    k += 1
        if k <= 1:
            return 0
        previous, m = current[:k].copy(), k
    out[:m] = previous[:m]
    return m


@jit
def _corner(R, t, half, k):
    """World position of corner k (coal's order) of the box (R, t, half)."""
    x, y, z = CORNERS[k, 0] * half[0], CORNERS[k, 1] * half[1], CORNERS[k, 2] * half[2]
    return np.array([R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0], R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1],
                     R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2]])


@jit
def _support(R, t, half, direction):
    """coal's support point of the box along the world ``direction`` (a local component within 1e-12 of zero
    picks the face centre's coordinate) and how many local components are nonzero (3: a corner, 2: an edge)."""
    p = t.copy()
    count = 0
    for c in range(3):
        d = R[0, c] * direction[0] + R[1, c] * direction[1] + R[2, c] * direction[2]
        s = half[c] if d > EPS else (-half[c] if d < -EPS else 0.0)
        if s != 0.0:
            count += 1
        p += s * R[:, c]
    return p, count


@jit
def _segments(p1, q1, p2, q2):
    """Closest points of the segments [p1, q1] and [p2, q2] (Ericson, Real-Time Collision Detection 5.1.9)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = dot(d1, d1), dot(d2, d2), dot(d2, r)
    c, b = dot(d1, r), dot(d1, d2)
    den = a * e - b * b
    s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > 1e-300 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, min(1.0, max(0.0, -c / a))
    elif t > 1.0:
        t, s = 1.0, min(1.0, max(0.0, (b - c) / a))
    return p1 + s * d1, p2 + t * d2


@jit
def _edge_lines(pa, na, Ra, ta, ha, pb, nb, Rb, tb, hb):
    """Closest points of the lines through the edges whose midpoints are the support points pa, pb."""
    ca = 0
    for c in range(3):
        if abs(Ra[0, c] * na[0] + Ra[1, c] * na[1] + Ra[2, c] * na[2]) <= EPS:
            ca = c
    cb = 0
    for c in range(3):
        if abs(Rb[0, c] * nb[0] + Rb[1, c] * nb[1] + Rb[2, c] * nb[2]) <= EPS:
            cb = c
    u, v, r = Ra[:, ca], Rb[:, cb], pa - pb
    b, c, f = dot(u, v), dot(u, r), dot(v, r)
    den = 1.0 - b * b
    if den < 1e-300:
        return pa, pb
    s = (b * f - c) / den
    return pa + s * u, pb + (b * s + f) * v


@jit
def _box_distance(Ra, ta, ha, Rb, tb, hb):
    """(distance, point on a, point on b) of two separated boxes: the nearest of the corner-box and edge-edge
    feature pairs."""
    best, pa, pb = np.inf, ta.copy(), tb.copy()
    for side in range(2):
        R1, t1, h1, R2, t2, h2 = (Ra, ta, ha, Rb, tb, hb) if side == 0 else (Rb, tb, hb, Ra, ta, ha)
        for k in range(8):
            p = _corner(R1, t1, h1, k)
            q = p - t2
            c = np.empty(3)
            for i in range(3):
                c[i] = min(h2[i], max(-h2[i], R2[0, i] * q[0] + R2[1, i] * q[1] + R2[2, i] * q[2]))
            w = matvec(R2, c) + t2
            d = np.sqrt(dot(p - w, p - w))
            if d < best:
                best = d
                pa, pb = (p, w) if side == 0 else (w, p)
    for i in range(12):
        a0, a1 = _corner(Ra, ta, ha, EDGES[i, 0]), _corner(Ra, ta, ha, EDGES[i, 1])
        for j in range(12):
            x, y = _segments(a0, a1, _corner(Rb, tb, hb, EDGES[j, 0]), _corner(Rb, tb, hb, EDGES[j, 1]))
            d = np.sqrt(dot(y - x, y - x))
            if d < best:
                best, pa, pb = d, x, y
    return best, pa, pb


@jit
def box_box(Ra, ta, ha, Rb, tb, hb, margin, patch, tol, out_a, out_b, normal):
    """Contacts of boxes a and b closer than ``margin``: witness points into out_a/out_b (rows), the normal a -> b
    into ``normal``; returns the number of points (0: apart). The points of a patch share its signed distance."""
    t = tb - ta
    best, axis = -np.inf, np.zeros(3)
    for k in range(15):
        if k < 3:
            L = Ra[:, k].copy()
        elif k < 6:
            L = Rb[:, k - 3].copy()
        else:
            u, v = Ra[:, (k - 6) // 3], Rb[:, (k - 6) % 3]
            L = np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])
            norm = np.sqrt(dot(L, L))
            if norm < 1e-6:  # parallel edges: the face axes cover them
                continue
            L /= norm
        extent = 0.0
        for c in range(3):
            extent += ha[c] * abs(Ra[0, c] * L[0] + Ra[1, c] * L[1] + Ra[2, c] * L[2])
            extent += hb[c] * abs(Rb[0, c] * L[0] + Rb[1, c] * L[1] + Rb[2, c] * L[2])
        s = dot(t, L)
        gap = abs(s) - extent
        if gap > best:
            best = gap
            axis = L if s >= 0 else -L
    if best - margin > EPS:
        return 0
    if best > 0.0:  # apart (within the margin): the nearest features
        dist, pa, pb = _box_distance(Ra, ta, ha, Rb, tb, hb)
        if dist - margin > EPS:
            return 0
        n = (pb - pa) / dist
    else:  # overlapping: the separating axis of least overlap is the penetration normal
        dist, n = best, axis
        sb, count_b = _support(Rb, tb, hb, -n)
        sa, count_a = _support(Ra, ta, ha, n)
        if count_b == 3:
            pb, pa = sb, sb - dist * n
        elif count_a == 3 or count_b != 2 or count_a != 2:
            pa, pb = sa, sa + dist * n
        else:
            pa, pb = _edge_lines(sa, n, Ra, ta, ha, sb, n, Rb, tb, hb)
    normal[:] = n
    if patch:
        origin = 0.5 * (pa + pb)
        B = patch_basis(n)
        cloud, set1, set2, poly = np.empty((8, 2)), np.empty((8, 2)), np.empty((8, 2)), np.empty((16, 2))
        n1 = box_support_set(Ra, ta, ha, n, origin, B, tol, cloud, set1)
        n2 = box_support_set(Rb, tb, hb, -n, origin, B, tol, cloud, set2)
        m = clip_sets(set1, n1, set2, n2, poly)
        if m > 1:
            for k in range(m):
                p = origin + poly[k, 0] * B[:, 0] + poly[k, 1] * B[:, 1]
                out_a[k], out_b[k] = p - 0.5 * dist * n, p + 0.5 * dist * n
            return m
    out_a[0], out_b[0] = pa, pb
    return 1
