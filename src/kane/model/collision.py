"""Collision shapes attached to bodies as plain, checked data: the shapes, their placement and the pair filter.

The shapes here are descriptions only (numbers, no geometry library); ``kane.mechanics.collision`` builds the coal
objects from them and finds the contact points. Sizes follow coal's and MuJoCo's conventions:

- :class:`Sphere` ``radius`` [m];
- :class:`Box` ``half_extents`` (3,) [m], half the side lengths along the shape's x, y, z (MuJoCo's box ``size``;
  coal's ``Box(x, y, z)`` takes the full lengths, ``2 * half_extents``);
- :class:`Capsule` ``radius``, ``length`` [m]: the segment between the two hemisphere centres, along z, centred
  (coal's ``Capsule(radius, lz)``; MuJoCo's ``size`` has half of it);
- :class:`Cylinder` ``radius``, ``length`` [m]: full height along z, centred (coal's ``Cylinder(radius, lz)``);
- :class:`Ellipsoid` ``radii`` (3,) [m] along x, y, z;
- :class:`ConvexMesh` ``vertices`` (n, 3) [m] in shape axes; the faces are those of the vertices' convex hull
  (scipy's ``ConvexHull``); a vertex inside the hull (the mesh is not convex) is refused unless ``hull=True``,
  which takes the hull of the vertices on purpose (a URDF mesh, for instance);
- :class:`HalfSpace` ``normal`` (3,), ``offset`` [m]: the solid ``{x : normal . x <= offset}`` (coal's
  ``Halfspace``), on the ground only.

Sizes are plain numbers (a model file's expressions are evaluated at the parameters' default values): collision
geometry does not follow a parameter changed at run time.

A :class:`Collision` places a shape on a body (``R_body_shape`` (3, 3), ``r_body_shape`` (3,) in body axes), with an
optional :class:`ContactMaterial` and group/mask bits. Two collisions are tested for contact when
:func:`pair_allowed` says so: different bodies, not both on the ground, not a parent and its child (unless the
parent is the ground), not a pair listed in ``Model.collision_excludes``, and ``a.group & b.mask`` and
``b.group & a.mask`` both non-zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .contact import ContactMaterial

__all__ = ["Sphere", "Box", "Capsule", "Cylinder", "Ellipsoid", "ConvexMesh", "HalfSpace", "Shape", "SHAPES",
           "Collision", "ALL_GROUPS", "check_bits", "placement_arrays", "pair_allowed", "combine_materials"]

_MASK_BITS = 32
ALL_GROUPS = (1 << _MASK_BITS) - 1


def _length(value, where: str, key: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: key {key!r}: expected a number [m], got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ModelError(f"{where}: key {key!r}: expected a finite length > 0 [m], got {value!r}")
    return x


def _lengths3(value, where: str, key: str) -> tuple[float, float, float]:
    try:
        items = list(value)
    except TypeError:
        items = None
    if items is None or len(items) != 3:
        raise ModelError(f"{where}: key {key!r}: expected 3 lengths [m], got {value!r}")
    return tuple(_length(x, where, key) for x in items)


def _vector3(value, where: str, key: str) -> np.ndarray:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: key {key!r}: expected 3 numbers, got {value!r}") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ModelError(f"{where}: key {key!r}: expected 3 finite numbers, got {value!r}")
    v.setflags(write=False)
    return v


@dataclass(frozen=True)
class Sphere:
    """A sphere of ``radius`` [m] about the shape origin."""

    radius: float
    where: str = field(default="Sphere", compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, self.where, "radius"))


@dataclass(frozen=True)
class Box:
    """A box of ``half_extents`` (3,) [m] (half side lengths along x, y, z, MuJoCo's ``size``) about its centre."""

    half_extents: tuple
    where: str = field(default="Box", compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "half_extents", _lengths3(self.half_extents, self.where, "half_extents"))


@dataclass(frozen=True)
class Capsule:
    """A capsule: the points within ``radius`` [m] of the segment of ``length`` [m] along z, centred."""

    radius: float
    length: float
    where: str = field(default="Capsule", compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, self.where, "radius"))
        object.__setattr__(self, "length", _length(self.length, self.where, "length"))


@dataclass(frozen=True)
class Cylinder:
    """A solid cylinder of ``radius`` [m] and full height ``length`` [m] along z, centred."""

    radius: float
    length: float
    where: str = field(default="Cylinder", compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, self.where, "radius"))
        object.__setattr__(self, "length", _length(self.length, self.where, "length"))


@dataclass(frozen=True)
class Ellipsoid:
    """A solid ellipsoid with semi-axes ``radii`` (3,) [m] along x, y, z, centred."""

    radii: tuple
    where: str = field(default="Ellipsoid", compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "radii", _lengths3(self.radii, self.where, "radii"))


@dataclass(frozen=True, eq=False)
class ConvexMesh:
    """A convex polyhedron given by its ``vertices`` (n, 3) [m] in shape axes; ``faces`` (m, 3) are the triangles of
    the vertices' convex hull (outward), computed here. Every vertex must lie on the hull (within 1e-9 of the
    size) unless ``hull=True``, which keeps the hull's vertices only (documented loss of the concave parts)."""

    vertices: np.ndarray
    hull: bool = False
    where: str = field(default="ConvexMesh", compare=False, repr=False)
    faces: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        from scipy.spatial import ConvexHull, QhullError

        try:
            v = np.array(self.vertices, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"{self.where}: key 'vertices': expected an (n, 3) array of numbers") from None
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 4 or not np.all(np.isfinite(v)):
            raise ModelError(f"{self.where}: key 'vertices': expected an (n, 3) array of n >= 4 finite points [m], "
                             f"got shape {v.shape}")
        try:
            h = ConvexHull(v)
        except QhullError:
            raise ModelError(f"{self.where}: key 'vertices': the points span no volume (flat or repeated)") from None
        size = float(np.max(np.ptp(v, axis=0)))
        # signed distance of every vertex to every hull plane (a x + b <= 0 inside, unit a); the largest is 0 on it
        depth = np.max(h.equations[:, :3] @ v.T + h.equations[:, 3:4], axis=0)
        inner = np.flatnonzero(depth < -1e-9 * size)
        if inner.size and not self.hull:
            raise ModelError(f"{self.where}: key 'vertices': the mesh is not convex: vertex {int(inner[0])} "
                             f"{v[inner[0]].tolist()} lies {-depth[inner[0]]:.3g} m inside the hull of the others "
                             f"({inner.size} such vertices); give a convex mesh or hull=True to take its hull")
        keep = np.unique(h.simplices)
        remap = -np.ones(len(v), dtype=int)
        remap[keep] = np.arange(len(keep))
        verts = v[keep]
        faces = remap[h.simplices]
        centre = verts.mean(axis=0)
        for k, f in enumerate(faces):  # outward orientation
            a, b, c = verts[f]
            if np.dot(np.cross(b - a, c - a), a - centre) < 0:
                faces[k] = f[[0, 2, 1]]
        verts.setflags(write=False)
        faces.setflags(write=False)
        object.__setattr__(self, "vertices", verts)
        object.__setattr__(self, "faces", faces)


@dataclass(frozen=True)
class HalfSpace:
    """The solid ``{x : normal . x <= offset}`` in shape axes (``normal`` normalised here; ground only)."""

    normal: tuple = (0.0, 0.0, 1.0)
    offset: float = 0.0
    where: str = field(default="HalfSpace", compare=False, repr=False)

    def __post_init__(self):
        n = _vector3(self.normal, self.where, "normal")
        norm = float(np.linalg.norm(n))
        if norm < 1e-12:
            raise ModelError(f"{self.where}: key 'normal': expected a non-zero vector, got {self.normal!r}")
        try:
            offset = float(self.offset)
        except (TypeError, ValueError):
            offset = float("nan")
        if not math.isfinite(offset):
            raise ModelError(f"{self.where}: key 'offset': expected a finite number [m], got {self.offset!r}")
        object.__setattr__(self, "normal", tuple(float(x) for x in n / norm))
        object.__setattr__(self, "offset", offset)


Shape = Sphere | Box | Capsule | Cylinder | Ellipsoid | ConvexMesh | HalfSpace
SHAPES = (Sphere, Box, Capsule, Cylinder, Ellipsoid, ConvexMesh, HalfSpace)


@dataclass(frozen=True, eq=False)
class Collision:
    """One collision shape on a body: ``name``, ``body`` (a body name or ``"ground"``), ``shape``, its placement
    ``R_body_shape`` (3, 3) and ``r_body_shape`` (3,) [m] in body axes, ``material`` (None: the default
    :class:`ContactMaterial`), and the filter bits ``group``/``mask`` (32-bit unsigned)."""

    name: str
    body: str
    shape: Shape
    R_body_shape: np.ndarray
    r_body_shape: np.ndarray
    material: ContactMaterial | None = None
    group: int = 1
    mask: int = ALL_GROUPS


def check_bits(value, where: str, key: str) -> int:
    """``value`` as filter bits: an int; negative values (``~0``) are taken modulo 2**32."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ModelError(f"{where}: key {key!r}: expected an integer bit mask, got {value!r}")
    return int(value) & ALL_GROUPS


def placement_arrays(placement, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(R (3, 3), r (3,)) from ``placement``: None (identity), or a pair (R (3, 3), r (3,)) with R a rotation."""
    if placement is None:
        R, r = np.eye(3), np.zeros(3)
    else:
        try:
            R_in, r_in = placement
            R, r = np.array(R_in, dtype=float), np.array(r_in, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"{where}: key 'placement': expected (R (3, 3), r (3,)), got {placement!r}") from None
        if R.shape != (3, 3) or r.shape != (3,) or not (np.all(np.isfinite(R)) and np.all(np.isfinite(r))):
            raise ModelError(f"{where}: key 'placement': expected a finite (R (3, 3), r (3,)), got shapes "
                             f"{R.shape}, {r.shape}")
        if not (np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0):
            raise ModelError(f"{where}: key 'placement': R is not a rotation matrix (R^T R = I, det R = 1)")
    R.setflags(write=False)
    r.setflags(write=False)
    return R, r


def pair_allowed(a: Collision, b: Collision, parent_of: dict, excludes) -> bool:
    """Whether collisions ``a`` and ``b`` are tested: see the module docstring. ``parent_of`` maps a body name to
    its parent body's name; ``excludes`` is a set of frozensets of two body or collision names."""
    if a.body == b.body:
        return False
    if frozenset((a.body, b.body)) in excludes or frozenset((a.name, b.name)) in excludes:
        return False
    ground = "ground"
    if (parent_of.get(a.body) == b.body and b.body != ground) or (parent_of.get(b.body) == a.body and a.body != ground):
        return False
    return bool(a.group & b.mask) and bool(b.group & a.mask)


def combine_materials(a: ContactMaterial | None, b: ContactMaterial | None) -> ContactMaterial:
    """The material of a pair: each field the larger of the two shapes' values (MuJoCo's rule for friction, here
    for every field; a shape without a material takes the other's; neither: the default ``ContactMaterial()``).
    The maximum keeps ``mu_kinetic <= mu_static``."""
    if a is None or b is None:
        return a or b or ContactMaterial()
    return ContactMaterial(max(a.mu_static, b.mu_static), max(a.mu_kinetic, b.mu_kinetic),
                           max(a.restitution, b.restitution), max(a.torsional, b.torsional),
                           max(a.rolling, b.rolling), where=f"{a.where} | {b.where}")
