"""Analytic contact points shared by the contact time-stepping tests (imported by path, as _models.py): a box's
corners and a sphere's lowest point against the plane z = 0, two spheres along their line of centres. These are
the tests' references until kane's coal geometry is merged."""

from __future__ import annotations

import numpy as np

from kane.model.contact import ContactMaterial, ContactPoint

__all__ = ["CORNERS", "G", "UP", "box_inertia", "plane_contacts", "sphere_inertia", "sphere_pairs", "state"]

G = 9.81
UP = np.array([0.0, 0.0, 1.0])
CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)


def box_inertia(m, half):
    a, b, c = 2 * np.asarray(half, dtype=float)
    return m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def sphere_inertia(m, r):
    return 0.4 * m * r * r * np.eye(3)


def plane_contacts(bodies, boxes=(), spheres=(), material=ContactMaterial(), margin=0.05):
    """contacts(q) for boxes {name: half extents} and spheres {name: radius} above the plane z = 0: a box's corners
    within ``margin`` of the plane, a sphere's lowest point (references written out for the tests)."""

    def contacts(q):
        out = []
        for name, half in dict(boxes).items():
            c, R = bodies.pose(q, name)
            for corner in c + (CORNERS * half) @ R.T:
                if corner[2] <= margin:
                    out.append(ContactPoint("ground", name, "plane", name, corner * [1, 1, 0], corner, UP,
                                            float(corner[2]), material))
        for name, r in dict(spheres).items():
            c, _ = bodies.pose(q, name)
            if c[2] - r <= margin:
                out.append(ContactPoint("ground", name, "plane", name, c * [1, 1, 0], c - r * UP, UP,
                                        float(c[2] - r), material))
        return out

    return contacts


def sphere_pairs(bodies, spheres, material, margin=0.05):
    """contacts(q) between every two spheres {name: radius} (normal along the line of centres, a to b)."""
    names = list(spheres)

    def contacts(q):
        out = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                ca, cb = bodies.pose(q, a)[0], bodies.pose(q, b)[0]
                d = np.linalg.norm(cb - ca)
                n = (cb - ca) / d
                gap = d - spheres[a] - spheres[b]
                if gap <= margin:
                    out.append(ContactPoint(a, b, a, b, ca + spheres[a] * n, cb - spheres[b] * n, n, float(gap),
                                            material))
        return out

    return contacts


def state(*bodies):
    """q, u from per body (centre (3,), quaternion (4,), omega body (3,), v world (3,))."""
    q = np.concatenate([np.r_[c, e] for c, e, _, _ in bodies])
    u = np.concatenate([np.r_[w, v] for _, _, w, v in bodies])
    return q, u
