"""MJCF (MuJoCo's XML) import into the :class:`kane.System` builder, parsed safely (:mod:`kane.io.xml_safe`).

Imported: bodies with ``<inertial>`` or inertia from geoms (``<compiler inertiafromgeom>``, ``settotalmass``);
hinge, slide, ball and free joints, several per body (chained through massless frames, ``<body>__<joint>``, as
MuJoCo composes them), joint ``ref``, hinge and slide ``stiffness``/``springref``/``damping`` as joint springs;
``<default>`` classes (nested, ``childclass``); ``<compiler angle eulerseq>``; every orientation attribute;
``<option gravity>``; geoms as display shapes and, where they collide (``contype | conaffinity`` non-zero), as
collision shapes with MuJoCo's pair filter and ``<contact><exclude>`` (:mod:`kane.io.mjcf_collision`; off with
``collisions=False``); ``<motor>`` actuators as inputs ``ctrl_<name>``; ``<equality>``
connect (a loop closure) and joint (a motion constraint). Everything else (limits, armature, friction loss,
contact softness, tendons, sensors, sites, other actuators, ...) is listed in one :class:`MjcfWarning` and in
:attr:`MjcfModel.not_imported`.

State: q and u are MuJoCo's qpos and qvel, in its order: hinge and slide q = qpos (the joint's position, its
``ref`` at the reference configuration), u = qvel; ball q = scalar-first quaternion, u = angular velocity in the
body's axes; free q = (position, scalar-first quaternion), u = (linear velocity in world axes, angular velocity in
body axes), imported as three slides along the world axes and a ball joint.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..model import joints as J
from ..model.system import GROUND, System
from ..spatial import rotation_axis_angle, rotation_to_quaternion
from .mjcf_collision import add_mjcf_collisions
from .mjcf_extras import MjcfWarning, add_actuators, add_equalities, fluid_and_flags, warn_not_imported
from .mjcf_inertia import combine, geom_mass_properties, geom_shape, inertial_properties
from .mjcf_spec import MAX_BYTES, Compiler, Defaults, frame_rotation, numbers, read_compiler, splice_includes
from .urdf import _ident, _snap
from .xml_safe import decode_xml, parse_xml, read_xml_text

__all__ = ["MjcfModel", "MjcfWarning", "load_mjcf", "parse_mjcf", "JOINT_KINDS"]

JOINT_KINDS = ("hinge", "slide", "ball", "free")
_DISPLAY_ONLY = ("light", "camera")
_COMPILER_READ = ("angle", "eulerseq", "inertiafromgeom", "settotalmass", "coordinate", "inertiagrouprange",
                  "autolimits", "meshdir", "texturedir", "assetdir", "discardvisual", "strippath", "fusestatic")


@dataclass
class MjcfModel:
    """An MJCF model imported into a :class:`kane.System`.

    ``system``: the builder; ``q_names``, ``u_names``: kane's coordinate and speed names in MuJoCo's qpos and
    qvel order; ``inputs``: the motor inputs in MuJoCo's ctrl order; ``bodies``: MJCF body name -> kane body;
    ``joints``: MJCF joint name -> its kind ("hinge", "slide", "ball", "free"); ``constraints``: the equality
    constraints' names; ``not_imported``: "kind: names (count)" lines, as in the :class:`MjcfWarning`;
    ``timestep``: ``<option timestep>`` [s]; ``collisions``: the collision shapes' names
    (:mod:`kane.io.mjcf_collision`); ``free_bodies``: the kane bodies moved by a free joint, in qpos order.
    """

    name: str
    system: System
    q_names: tuple
    u_names: tuple
    inputs: tuple = ()
    bodies: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    constraints: tuple = ()
    not_imported: tuple = ()
    timestep: float = 0.002
    collisions: tuple = ()
    free_bodies: tuple = ()


@dataclass
class _Joint:
    kind: str
    name: str
    pos: np.ndarray
    axis: np.ndarray
    ref: float
    spring: tuple = (0.0, 0.0, 0.0)  # (stiffness, springref, damping) of a hinge or slide


@dataclass
class _Body:
    name: str
    parent: str
    pos: np.ndarray
    R: np.ndarray
    joints: list
    mass: object
    geoms: list
    what: str
    sites: dict = field(default_factory=dict)  # site name -> position (3,) in body axes


def load_mjcf(source, *, collisions: bool = True) -> MjcfModel:
    """Import an MJCF file (a path), MJCF text (a string starting with '<') or bytes (see the module).
    ``<include>`` and mesh files are read relative to the model file's folder; ``collisions=False`` imports no
    collision shapes (the geoms' contacts are then listed as not imported)."""
    if isinstance(source, (bytes, bytearray)):
        return parse_mjcf(decode_xml(bytes(source), "MJCF bytes"), where="MJCF bytes", collisions=collisions)
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("<"):
        text = read_xml_text(source, MAX_BYTES, kind="MJCF")
        return parse_mjcf(text, where=str(source), base_dir=os.path.dirname(os.path.abspath(source)),
                          collisions=collisions)
    return parse_mjcf(str(source), collisions=collisions)


def parse_mjcf(text: str, *, where: str = "MJCF text", base_dir: str | None = None,
               collisions: bool = True) -> MjcfModel:
    """Import MJCF text; ``where`` names it in errors, ``base_dir`` resolves ``<include>`` and mesh files;
    ``collisions`` as in :func:`load_mjcf`."""
    root = parse_xml(text, where)
    if root.tag != "mujoco":
        raise ModelError(f"{where}: the root element is <{root.tag}>; expected <mujoco>")
    root = splice_includes(root, where, base_dir)
    compiler = read_compiler(root, where)
    defaults = Defaults(root, where)
    skipped: dict = {}
    gravity = fluid_and_flags(root, where, skipped)
    for el in root.findall("compiler"):
        skipped.setdefault("compiler settings", []).extend(
            f"{k}={v!r}" for k, v in el.attrib.items() if k not in _COMPILER_READ)
    for el in root:
        if el.tag not in ("compiler", "default", "option", "worldbody", "actuator", "equality") + \
                (("contact",) if collisions else ()):
            skipped.setdefault("top-level elements", []).append(f"<{el.tag}> ({len(list(el.iter())) - 1} inside)")
    records: list[_Body] = []
    world_geoms: list = []
    taken: set = {GROUND}
    world = root.findall("worldbody")
    for wb in world:
        for el in wb:
            if el.tag == "body":
                pending = [(el, GROUND, None)]  # depth first, parents before children, as MuJoCo numbers bodies
                while pending:
                    body, parent, childclass = pending.pop()
                    pending += reversed(_read_body(body, parent, childclass, records, taken, defaults, compiler,
                                                   where, skipped))
            elif el.tag == "geom":
                gwhat = f"<worldbody> <geom name={el.get('name')!r}>"
                world_geoms.append(geom_shape(defaults.attrs(el, None, gwhat), compiler, where, gwhat))
                skipped.setdefault("world geoms (not drawn)", []).append(el.get("name") or el.get("type", "?"))
            else:
                _other(el, "world", where, skipped)
    _scale_total_mass(records, compiler)
    _check_moving_mass(records, where)
    name = root.get("model") or "mjcf"
    s = System(_ident(name, set()), gravity=tuple(_snap(gravity)))
    joint_info, joint_kinds, body_info = {}, {}, {"world": (GROUND, np.eye(3), np.zeros(3))}
    mj_names = {}
    for rec in records:
        m = rec.mass
        s.add_body(rec.name, mass=m.mass, com=tuple(_snap(m.com)), inertia=_snap_matrix(m.inertia))
        _add_chain(s, rec, taken, joint_info, joint_kinds, where, skipped)
        if rec.what in body_info:
            raise ModelError(f"{where}: <body name={rec.what!r}> is defined twice; expected unique body names")
        parent = body_info[mj_names.get(rec.parent, "world")] if rec.parent != GROUND else body_info["world"]
        body_info[rec.what] = (rec.name, parent[1] @ rec.R, parent[2] + parent[1] @ rec.pos)
        mj_names[rec.name] = rec.what
        for g in rec.geoms:
            if not _add_visual(s, rec.name, g):
                skipped.setdefault("geoms kane does not draw (mesh, plane, hfield, sdf)", []).append(
                    g.attrs.get("name") or f"{rec.what} {g.kind}")
    if collisions:
        names = add_mjcf_collisions(root, s, records, world_geoms, defaults, where, base_dir, skipped)
    else:
        names = ()
        skipped["contacts of geoms (collisions=False)"] = [
            g.attrs.get("name") or f"{owner} {g.kind}" for owner, gs in [("world", world_geoms)] +
            [(r.what, r.geoms) for r in records] for g in gs
            if g.attrs.get("contype", "1") != "0" or g.attrs.get("conaffinity", "1") != "0"]
    inputs = add_actuators(root, s, defaults, joint_info, where, skipped)
    site_info = {site: (r.name, pos) for r in records for site, pos in r.sites.items()}
    constraints = add_equalities(root, s, defaults, body_info, joint_info, site_info, where, skipped)
    lines = warn_not_imported(skipped, where)
    qn = tuple(n for e in s._joints for n in e.q_names)
    un = tuple(n for e in s._joints for n in e.u_names)
    opt = {k: v for el in root.findall("option") for k, v in el.attrib.items()}
    step = float(numbers(opt, "timestep", 1, where, "<option>", (0.002,))[0])
    return MjcfModel(name, s, qn, un, inputs, {r.what: r.name for r in records}, joint_kinds, constraints, lines,
                     step, names, tuple(r.name for r in records if r.joints and r.joints[0].kind == "free"))


def _snap_matrix(A):
    return [list(row) for row in np.array(_snap(A), dtype=object).reshape(3, 3)]


def _other(el, owner, where, skipped):
    if el.tag in ("frame", "replicate", "attach", "composite", "flexcomp"):
        raise ModelError(f"{where}: <{el.tag}> in {owner}: kane does not import <{el.tag}> elements (they place or "
                         "make bodies); expand it in MuJoCo and save the compiled model (mj_saveLastXML)")
    kind = "display-only elements" if el.tag in _DISPLAY_ONLY else f"<{el.tag}> elements"
    skipped.setdefault(kind, []).append(el.get("name") or f"<{el.tag}> in {owner}")


def _read_body(el, parent, childclass, records, taken, defaults, compiler, where, skipped) -> list:
    """Append the record of the body ``el``; return its child bodies as (element, parent, childclass)."""
    label = el.get("name") or f"body{len(records) + 1}"
    what = f"<body name={label!r}>"
    childclass = el.get("childclass") or childclass
    if childclass is not None and childclass not in defaults.classes:
        raise ModelError(f"{where}: {what} childclass={childclass!r}: no <default class={childclass!r}>")
    name = _ident(label if label != GROUND else "ground_body", taken)
    pos = numbers(el.attrib, "pos", 3, where, what, (0, 0, 0))
    R = frame_rotation(el.attrib, compiler, where, what)
    R = np.eye(3) if R is None else R
    if el.get("mocap") == "true":
        skipped.setdefault("mocap bodies (imported as fixed)", []).append(label)
    if float(numbers(el.attrib, "gravcomp", 1, where, what, (0,))[0]) != 0:
        skipped.setdefault("gravity compensation (gravcomp)", []).append(label)
    joints, geoms, parts, inertial, sites = [], [], [], None, {}
    for k, child in enumerate(el):
        if child.tag in ("joint", "freejoint"):
            joints.append(_read_joint(child, label, len(joints), childclass, defaults, compiler, where, skipped))
        elif child.tag == "geom":
            gwhat = f"{what} <geom name={child.get('name')!r}>" if child.get("name") else f"{what} <geom> #{k}"
            g = geom_shape(defaults.attrs(child, childclass, gwhat), compiler, where, gwhat)
            geoms.append(g)
            group = int(float(g.attrs.get("group", 0)))
            if compiler.groups[0] <= group <= compiler.groups[1]:
                parts.append((g, gwhat))
        elif child.tag == "site":
            swhat = f"{what} <site name={child.get('name')!r}>"
            sites[child.get("name") or f"{label} site{k}"] = numbers(defaults.attrs(child, childclass, swhat), "pos",
                                                                     3, where, swhat, (0, 0, 0))
            _other(child, what, where, skipped)
        elif child.tag == "inertial":
            inertial = inertial_properties(child.attrib, compiler, where, f"{what} <inertial>")
        elif child.tag != "body":
            _other(child, what, where, skipped)
    from_geoms = compiler.inertiafromgeom == "true" or (compiler.inertiafromgeom == "auto" and inertial is None)
    if from_geoms:
        mass = combine(geom_mass_properties(g, where, gwhat) for g, gwhat in parts)
    else:
        mass = inertial if inertial is not None else combine([])
    records.append(_Body(name, parent, pos, R, joints, mass, geoms, label, sites))
    return [(child, name, childclass) for child in el.findall("body")]


def _read_joint(el, body, k, childclass, defaults, compiler, where, skipped) -> _Joint:
    label = el.get("name") or f"{body}_joint{k}"
    what = f"<{el.tag} name={label!r}> of body {body!r}"
    attrs = dict(el.attrib) if el.tag == "freejoint" else defaults.attrs(el, childclass, what)
    kind = "free" if el.tag == "freejoint" else attrs.get("type", "hinge")
    if kind not in JOINT_KINDS:
        raise ModelError(f"{where}: {what} type={kind!r}: expected one of {', '.join(JOINT_KINDS)}")
    axis = numbers(attrs, "axis", 3, where, what, (0, 0, 1))
    if kind in ("hinge", "slide") and not np.linalg.norm(axis) > 0:
        raise ModelError(f"{where}: {what} axis={attrs.get('axis')!r}: expected a nonzero axis")
    unit = compiler.angle if kind == "hinge" else 1.0
    ref = float(numbers(attrs, "ref", 1, where, what, (0,))[0]) * unit
    if attrs.get("limited", "auto") == "true" or (attrs.get("limited", "auto") == "auto" and "range" in attrs):
        skipped.setdefault("joint limits", []).append(label)
    if np.any(numbers(attrs, "springdamper", 2, where, what, (0, 0))):
        skipped.setdefault("springdamper", []).append(label)
    for key in ("armature", "frictionloss"):
        if float(numbers(attrs, key, 1, where, what, (0,))[0]) != 0:
            skipped.setdefault(key, []).append(label)
    stiffness = float(numbers(attrs, "stiffness", 1, where, what, (0,))[0])
    damping = float(numbers(attrs, "damping", 1, where, what, (0,))[0])
    springref = float(numbers(attrs, "springref", 1, where, what, (0,))[0]) * unit
    if kind in ("ball", "free") and (stiffness or damping):
        skipped.setdefault("stiffness and damping of ball and free joints", []).append(label)
        stiffness = damping = 0.0
    return _Joint(kind, label, numbers(attrs, "pos", 3, where, what, (0, 0, 0)),
                  axis / (np.linalg.norm(axis) or 1.0), ref, (stiffness, springref, damping))


def _scale_total_mass(records, compiler: Compiler):
    if compiler.settotalmass is None:
        return
    total = sum(r.mass.mass for r in records)
    if total > 0:
        f = compiler.settotalmass / total
        for r in records:
            r.mass = type(r.mass)(r.mass.mass * f, r.mass.com, r.mass.inertia * f)


def _check_moving_mass(records, where):
    """Refuse a body with joints whose subtree has no mass (a singular mass matrix), naming it."""
    moving = {r.name: r.mass.mass > 0 for r in records}
    for r in reversed(records):
        if r.parent != GROUND:
            moving[r.parent] = moving[r.parent] or moving[r.name]
    for r in records:
        if r.joints and not moving[r.name]:
            raise ModelError(f"{where}: <body name={r.what!r}> has joints but neither it nor any body below it has "
                             "mass (no <inertial> mass and no geom mass): expected a positive mass")


def _add_chain(s, rec: _Body, taken, joint_info, joint_kinds, where, skipped):
    """The joints of one body, each moving a massless frame ``<body>__<joint>`` and the last the body."""
    if not rec.joints:
        s.add_joint(rec.parent, rec.name, J.Weld(), name=_ident(f"{rec.name}_weld", taken),
                    parent_point=tuple(_snap(rec.pos)), parent_rotation=_rot(rec.R))
        return
    frame_p, frame_R, prev = rec.pos, rec.R, rec.parent
    for k, jt in enumerate(rec.joints):
        ident = _ident(jt.name, taken)
        child = rec.name if k == len(rec.joints) - 1 else _ident(f"{rec.name}__{ident}", taken)
        if child != rec.name:
            s.add_body(child, mass=0)
        if jt.name in joint_info:
            raise ModelError(f"{where}: joint {jt.name!r} (body {rec.what!r}) is defined twice; expected unique joint "
                             "names")
        joint_kinds[jt.name] = jt.kind
        joint_info[jt.name] = (jt.kind, ident, jt.ref)
        if jt.kind == "free":
            if rec.parent != GROUND or len(rec.joints) > 1:
                raise ModelError(f"{where}: free joint {jt.name!r} of body {rec.what!r}: a free joint must be the "
                                 "only joint of a body of the world body")
            _add_free(s, rec, ident, taken)
            return
        axis = tuple(_snap(jt.axis))
        if jt.kind == "hinge":
            s.add_joint(prev, child, J.Revolute(axis), name=ident, parent_point=tuple(_snap(frame_p + frame_R @ jt.pos)),
                        parent_rotation=_rot(frame_R @ rotation_axis_angle(jt.axis, -jt.ref) if jt.ref else frame_R),
                        child_point=tuple(_snap(jt.pos)), coordinates=[f"q_{ident}"], speeds=[f"u_{ident}"],
                        q0=[jt.ref])
        elif jt.kind == "slide":
            s.add_joint(prev, child, J.Prismatic(axis), name=ident,
                        parent_point=tuple(_snap(frame_p - frame_R @ jt.axis * jt.ref)), parent_rotation=_rot(frame_R),
                        coordinates=[f"q_{ident}"], speeds=[f"u_{ident}"], q0=[jt.ref])
        else:
            s.add_joint(prev, child, J.Spherical(), name=ident, parent_point=tuple(_snap(frame_p + frame_R @ jt.pos)),
                        parent_rotation=_rot(frame_R), child_point=tuple(_snap(jt.pos)),
                        coordinates=[f"q_{ident}_{c}" for c in ("qw", "qx", "qy", "qz")],
                        speeds=[f"u_{ident}_{c}" for c in ("wx", "wy", "wz")])
        k_s, rest, c = jt.spring
        if k_s or c:
            s.add_joint_spring(ident, k_s, rest=rest, damping=c)
        frame_p, frame_R, prev = np.zeros(3), np.eye(3), child


def _add_free(s, rec: _Body, ident, taken):
    """A free joint: slides along the world x, y, z (u = world-axes velocity) then a ball joint (u = body-axes
    angular velocity), q0 the body's pos and quat."""
    prev = GROUND
    for axis, c in zip(((1, 0, 0), (0, 1, 0), (0, 0, 1)), "xyz"):
        child = _ident(f"{rec.name}__{ident}_{c}", taken)
        s.add_body(child, mass=0)
        s.add_joint(prev, child, J.Prismatic(axis), name=_ident(f"{ident}_{c}", taken), coordinates=[f"q_{ident}_{c}"],
                    speeds=[f"u_{ident}_v{c}"], q0=[float(rec.pos["xyz".index(c)])])
        prev = child
    s.add_joint(prev, rec.name, J.Spherical(), name=ident,
                coordinates=[f"q_{ident}_{c}" for c in ("qw", "qx", "qy", "qz")],
                speeds=[f"u_{ident}_{c}" for c in ("wx", "wy", "wz")],
                q0=[float(x) for x in rotation_to_quaternion(rec.R)])


def _rot(R):
    R = np.asarray(R, dtype=float)
    return None if np.array_equal(R, np.eye(3)) else _snap_matrix(R)


def _add_visual(s, body, g) -> bool:
    """The geom drawn on ``body`` (display only); False for a shape kane does not draw."""
    R = g.R
    rpy = (math.atan2(R[2, 1], R[2, 2]), math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0])),
           math.atan2(R[1, 0], R[0, 0]))
    rgba = g.attrs.get("rgba")
    color = None
    if rgba is not None:
        vals = rgba.split()
        try:
            color = tuple(min(1.0, max(0.0, float(v))) for v in vals[:3]) if len(vals) == 4 else None
        except ValueError:
            color = None
    common = dict(position=tuple(float(x) for x in g.pos), rotation=rpy, color=color)
    r, h = float(g.size[0]), float(g.size[1])
    if g.kind == "sphere" and r > 0:
        s.add_visual(body, "sphere", radius=r, **common)
    elif g.kind in ("capsule", "cylinder") and r > 0:
        s.add_visual(body, g.kind, radius=r, length=2 * h, **common)
    elif g.kind in ("box", "ellipsoid") and np.all(g.size > 0):
        s.add_visual(body, "box", size=tuple(2 * float(x) for x in g.size), **common)
    else:
        return False
    return True
