"""MJCF reading helpers: ``<include>`` splicing, ``<default>`` classes, ``<compiler>`` settings and MuJoCo's
orientation attributes (quat, axisangle, euler with ``eulerseq``, xyaxes, zaxis, fromto) as rotation matrices.

Every number is read with the file and element named in errors (:class:`kane.ModelError`); included files are
parsed by :mod:`kane.io.xml_safe` like the main file (no entities), at most :data:`MAX_INCLUDES` of them and
:data:`MAX_INCLUDE_DEPTH` deep.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..spatial import quaternion_to_rotation, rotation_axis_angle
from .xml_safe import parse_xml, read_xml_text

__all__ = ["Compiler", "Defaults", "MAX_INCLUDES", "MAX_INCLUDE_DEPTH", "MAX_BYTES", "numbers", "splice_includes",
           "read_compiler", "frame_rotation", "z_to_vector", "ACTUATOR_TAGS"]

MAX_INCLUDES = 64
MAX_INCLUDE_DEPTH = 8
MAX_BYTES = 64 * 2**20  # [bytes] per file read
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle",
                 "adhesion", "plugin")


def numbers(attrs: dict, key: str, n, where: str, what: str, default=None) -> np.ndarray | None:
    """The attribute ``key`` of ``attrs`` as ``n`` finite floats (n an int, or a tuple of allowed counts);
    ``default`` (or None) when it is absent."""
    raw = attrs.get(key)
    if raw is None:
        return None if default is None else np.array(default, dtype=float)
    counts = (n,) if isinstance(n, int) else tuple(n)
    try:
        vals = [float(p) for p in raw.split()]
    except ValueError:
        vals = None
    if vals is None or len(vals) not in counts or not all(map(math.isfinite, vals)):
        raise ModelError(f"{where}: {what} {key}={raw!r}: expected {' or '.join(map(str, counts))} finite number(s)")
    return np.array(vals)


def splice_includes(root, where: str, base_dir: str | None, depth: int = 0, count: list | None = None):
    """``root`` with every ``<include file=...>`` replaced by the children of the included file's ``<mujoco>``
    (paths relative to ``base_dir``, the model file's folder)."""
    count = [0] if count is None else count
    for parent in list(root.iter()):
        for k, child in reversed(list(enumerate(parent))):
            if child.tag != "include":
                continue
            name = child.get("file")
            if not name:
                raise ModelError(f"{where}: an <include> has no file attribute")
            if base_dir is None:
                raise ModelError(f"{where}: <include file={name!r}>: MJCF text given as a string has no folder to "
                                 "resolve includes from; load the file by its path")
            count[0] += 1
            if depth >= MAX_INCLUDE_DEPTH or count[0] > MAX_INCLUDES:
                raise ModelError(f"{where}: <include file={name!r}>: more than {MAX_INCLUDES} includes or deeper "
                                 f"than {MAX_INCLUDE_DEPTH} levels")
            path = os.path.join(base_dir, name)
            sub = parse_xml(read_xml_text(path, MAX_BYTES, kind="MJCF include"), path)
            sub = splice_includes(sub, path, os.path.dirname(path), depth + 1, count)
            parent.remove(child)
            for j, grand in enumerate(list(sub) if sub.tag == "mujoco" else [sub]):
                parent.insert(k + j, grand)
    return root


@dataclass(frozen=True)
class Compiler:
    """The ``<compiler>`` settings kane applies: angle unit factor to radians, euler sequence, whether inertia
    comes from geoms ("auto", "true", "false"), the total mass to scale to (or None), and the inertia group range."""

    angle: float = math.pi / 180.0
    eulerseq: str = "xyz"
    inertiafromgeom: str = "auto"
    settotalmass: float | None = None
    groups: tuple = (0, 5)


def read_compiler(root, where: str) -> Compiler:
    attrs = {}
    for el in root.findall("compiler"):
        attrs.update(el.attrib)
    angle = attrs.get("angle", "degree")
    if angle not in ("degree", "radian"):
        raise ModelError(f"{where}: <compiler angle={angle!r}>: expected 'degree' or 'radian'")
    seq = attrs.get("eulerseq", "xyz")
    if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
        raise ModelError(f"{where}: <compiler eulerseq={seq!r}>: expected three of x, y, z (lower case: moving "
                         "axes, upper case: fixed axes)")
    fromgeom = attrs.get("inertiafromgeom", "auto")
    if fromgeom not in ("auto", "true", "false"):
        raise ModelError(f"{where}: <compiler inertiafromgeom={fromgeom!r}>: expected 'auto', 'true' or 'false'")
    if attrs.get("coordinate", "local") != "local":
        raise ModelError(f"{where}: <compiler coordinate={attrs['coordinate']!r}>: only local coordinates are read")
    total = numbers(attrs, "settotalmass", 1, where, "<compiler>")
    groups = numbers(attrs, "inertiagrouprange", 2, where, "<compiler>", (0, 5))
    return Compiler(1.0 if angle == "radian" else math.pi / 180.0, seq, fromgeom,
                    None if total is None or total[0] <= 0 else float(total[0]), tuple(int(g) for g in groups))


class Defaults:
    """``<default>`` classes resolved: class name -> element kind -> attributes (a nested class starts from its
    parent's). Actuator kinds share one entry, "actuator", as in MuJoCo."""

    def __init__(self, root, where: str):
        self.where = where
        self.classes: dict[str, dict[str, dict]] = {}
        tops = root.findall("default")
        if len(tops) > 1:
            raise ModelError(f"{where}: {len(tops)} top-level <default> elements; expected one (class 'main')")
        if tops:
            self._read(tops[0], {}, top=True)
        self.classes.setdefault("main", {})

    def _read(self, el, inherited: dict, top=False):
        name = el.get("class", "main" if top else None)
        if name is None:
            raise ModelError(f"{self.where}: a nested <default> has no class attribute")
        if name in self.classes:
            raise ModelError(f"{self.where}: <default class={name!r}> is defined twice")
        own = {kind: dict(attrs) for kind, attrs in inherited.items()}
        for child in el:
            if child.tag == "default":
                continue
            kind = "actuator" if child.tag in ACTUATOR_TAGS else child.tag
            own.setdefault(kind, {}).update(child.attrib)
        self.classes[name] = own
        for child in el.findall("default"):
            self._read(child, own)

    def attrs(self, el, childclass: str | None, what: str) -> dict:
        """The attributes of ``el`` with its class's defaults filled in (``class``, else the body's childclass,
        else 'main')."""
        cls = el.get("class") or childclass or "main"
        if cls not in self.classes:
            raise ModelError(f"{self.where}: {what} class={cls!r}: no <default class={cls!r}>; classes: "
                             f"{', '.join(self.classes)}")
        kind = "actuator" if el.tag in ACTUATOR_TAGS else el.tag
        out = dict(self.classes[cls].get(kind, {}))
        out.update(el.attrib)
        return out


def z_to_vector(vec) -> np.ndarray:
    """MuJoCo's rotation (3 x 3) taking the z axis to ``vec`` by the smallest angle (mjuu_z2quat)."""
    v = np.asarray(vec, dtype=float)
    axis = np.cross([0.0, 0.0, 1.0], v)
    s = float(np.linalg.norm(axis))
    if s < 1e-10:
        axis, s = np.array([1.0, 0.0, 0.0]), 0.0
    angle = math.atan2(s, v[2])
    return rotation_axis_angle(axis, angle) if angle else np.eye(3)


def _euler(angles, seq: str) -> np.ndarray:
    R = np.eye(3)
    for angle, c in zip(angles, seq):
        step = rotation_axis_angle(np.eye(3)["xyz".index(c.lower())], angle)
        R = R @ step if c.islower() else step @ R  # moving axes post-multiply, fixed axes pre-multiply
    return R


def frame_rotation(attrs: dict, compiler: Compiler, where: str, what: str) -> np.ndarray | None:
    """The rotation (3 x 3, child axes to parent axes) of a frame's orientation attribute, or None."""
    given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if k in attrs]
    if len(given) > 1:
        raise ModelError(f"{where}: {what} has orientations {', '.join(given)}; expected at most one")
    if not given:
        return None
    key = given[0]
    if key == "quat":
        q = numbers(attrs, key, 4, where, what)
        if not np.linalg.norm(q) > 0:
            raise ModelError(f"{where}: {what} quat={attrs[key]!r}: expected a nonzero quaternion")
        return quaternion_to_rotation(q)
    if key == "axisangle":
        a = numbers(attrs, key, 4, where, what)
        if not np.linalg.norm(a[:3]) > 0:
            raise ModelError(f"{where}: {what} axisangle={attrs[key]!r}: expected a nonzero axis")
        return rotation_axis_angle(a[:3], a[3] * compiler.angle)
    if key == "euler":
        return _euler(numbers(attrs, key, 3, where, what) * compiler.angle, compiler.eulerseq)
    if key == "zaxis":
        z = numbers(attrs, key, 3, where, what)
        if not np.linalg.norm(z) > 0:
            raise ModelError(f"{where}: {what} zaxis={attrs[key]!r}: expected a nonzero vector")
        return z_to_vector(z / np.linalg.norm(z))
    xy = numbers(attrs, key, 6, where, what)
    x = xy[:3] / (np.linalg.norm(xy[:3]) or np.nan)
    y = xy[3:] - x * (x @ xy[3:])
    if not np.all(np.isfinite(x)) or not np.linalg.norm(y) > 1e-12:
        raise ModelError(f"{where}: {what} xyaxes={attrs[key]!r}: expected two nonzero, non-parallel vectors")
    y = y / np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])
