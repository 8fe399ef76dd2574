"""Mass properties of MJCF bodies: ``<inertial>`` elements, and inertia from geoms as MuJoCo computes it
(sphere, capsule, cylinder, box, ellipsoid of uniform ``density`` or given ``mass``), summed about the body's centre
of mass; each geom's frame (pos, orientation, fromto) also places its display shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .mjcf_spec import Compiler, frame_rotation, numbers, z_to_vector

__all__ = ["GeomShape", "MassProperties", "geom_shape", "geom_mass_properties", "inertial_properties",
           "combine", "SOLID_TYPES"]

SOLID_TYPES = ("sphere", "capsule", "cylinder", "box", "ellipsoid")


@dataclass(frozen=True)
class MassProperties:
    """mass [kg], com (3,) [m] and central inertia (3, 3) [kg m^2], both in body axes."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class GeomShape:
    """A geom in body axes: ``kind`` (MuJoCo's type), ``size`` (3,) with fromto's half length filled in,
    ``pos`` (3,) [m], ``R`` (3, 3) geom axes to body axes, ``attrs`` (its attributes with defaults)."""

    kind: str
    size: np.ndarray
    pos: np.ndarray
    R: np.ndarray
    attrs: dict


def geom_shape(attrs: dict, compiler: Compiler, where: str, what: str) -> GeomShape:
    kind = attrs.get("type", "sphere")
    size = np.zeros(3)
    raw = numbers(attrs, "size", (1, 2, 3), where, what)
    if raw is not None:
        size[:len(raw)] = raw
    fromto = numbers(attrs, "fromto", 6, where, what)
    if fromto is not None and kind in ("capsule", "cylinder", "box", "ellipsoid"):
        a, b = fromto[:3], fromto[3:]
        d = b - a
        if not np.linalg.norm(d) > 0:
            raise ModelError(f"{where}: {what} fromto={attrs['fromto']!r}: expected two different points")
        pos, R = (a + b) / 2, z_to_vector(-d / np.linalg.norm(d))  # MuJoCo's z points from "to" to "from"
        if kind in ("capsule", "cylinder"):
            size[1] = np.linalg.norm(d) / 2
        else:  # a box or ellipsoid along the segment: its first size for both cross-section half sizes
            size[1:] = size[0], np.linalg.norm(d) / 2
    else:
        pos = numbers(attrs, "pos", 3, where, what, (0, 0, 0))
        R = frame_rotation(attrs, compiler, where, what)
        R = np.eye(3) if R is None else R
    return GeomShape(kind, size, pos, R, attrs)


def _volume_and_unit_inertia(kind, size):
    """(volume [m^3], principal inertia per unit mass (3,) [m^2]) of a solid in its own axes (MuJoCo's formulas)."""
    if kind == "sphere":
        r = size[0]
        return 4.0 / 3.0 * math.pi * r ** 3, np.full(3, 0.4 * r * r)
    if kind == "capsule":
        r, h = size[0], 2 * size[1]
        vol = math.pi * (r * r * h + 4.0 / 3.0 * r ** 3)
        f_sphere = (4.0 / 3.0 * r ** 3) / (r * r * h + 4.0 / 3.0 * r ** 3)  # mass fraction of the two caps
        f_cyl = 1.0 - f_sphere
        ixy = f_cyl * (3 * r * r + h * h) / 12 + f_sphere * (0.4 * r * r + h * (3 * r + 2 * h) / 8)
        iz = f_cyl * r * r / 2 + f_sphere * 0.4 * r * r
        return vol, np.array([ixy, ixy, iz])
    if kind == "cylinder":
        r, h = size[0], 2 * size[1]
        return math.pi * r * r * h, np.array([(3 * r * r + h * h) / 12] * 2 + [r * r / 2])
    if kind == "box":
        a, b, c = size
        return 8 * a * b * c, np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 3
    a, b, c = size  # ellipsoid
    return 4.0 / 3.0 * math.pi * a * b * c, np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 5


def geom_mass_properties(g: GeomShape, where: str, what: str) -> MassProperties | None:
    """The geom's mass properties, or None for a geom of no mass; a mesh or other shape whose volume kane does not
    compute is refused (its mass would be missing)."""
    given = numbers(g.attrs, "mass", 1, where, what)
    if given is not None and given[0] == 0:
        return None
    if g.attrs.get("shellinertia", "false") == "true":
        raise ModelError(f"{where}: {what} shellinertia='true': kane computes the inertia of solid geoms only; give "
                         "the body an <inertial>")
    if g.kind not in SOLID_TYPES:
        raise ModelError(f"{where}: {what} type={g.kind!r}: kane computes inertia from sphere, capsule, cylinder, "
                         "box and ellipsoid geoms only; give the body an <inertial> (and <compiler "
                         "inertiafromgeom='auto'>) or the geom mass='0' group outside inertiagrouprange")
    needed = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}[g.kind]
    if not np.all(g.size[:needed] > 0):
        raise ModelError(f"{where}: {what} size={g.attrs.get('size')!r}: a {g.kind} needs {needed} positive sizes")
    vol, unit = _volume_and_unit_inertia(g.kind, g.size)
    if given is not None:
        mass = float(given[0])
    else:
        mass = float(numbers(g.attrs, "density", 1, where, what, (1000.0,))[0]) * vol
    if mass < 0:
        raise ModelError(f"{where}: {what}: mass {mass:g} kg; expected >= 0")
    if mass == 0:
        return None
    return MassProperties(mass, g.pos, g.R @ np.diag(mass * unit) @ g.R.T)


def inertial_properties(attrs: dict, compiler: Compiler, where: str, what: str) -> MassProperties:
    """An ``<inertial pos=... quat=... mass=... diaginertia=...|fullinertia=...>`` in body axes."""
    mass = numbers(attrs, "mass", 1, where, what)
    if mass is None or mass[0] < 0:
        raise ModelError(f"{where}: {what}: expected mass >= 0 [kg]")
    pos = numbers(attrs, "pos", 3, where, what, (0, 0, 0))
    diag = numbers(attrs, "diaginertia", 3, where, what)
    full = numbers(attrs, "fullinertia", 6, where, what)
    if (diag is None) == (full is None):
        raise ModelError(f"{where}: {what}: expected one of diaginertia or fullinertia")
    if full is not None:
        xx, yy, zz, xy, xz, yz = full
        I_local = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        I_local = np.diag(diag)
    R = frame_rotation(attrs, compiler, where, what)
    I_body = I_local if R is None else R @ I_local @ R.T
    return MassProperties(float(mass[0]), pos, I_body)


def combine(parts) -> MassProperties:
    """The mass properties of rigidly joined parts about their common centre of mass."""
    parts = [p for p in parts if p is not None]
    mass = sum(p.mass for p in parts)
    if mass == 0:
        return MassProperties(0.0, np.zeros(3), np.zeros((3, 3)))
    com = sum(p.mass * np.asarray(p.com) for p in parts) / mass
    inertia = np.zeros((3, 3))
    for p in parts:
        d = np.asarray(p.com) - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return MassProperties(mass, com, inertia)
