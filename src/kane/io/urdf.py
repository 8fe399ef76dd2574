"""URDF import into the :class:`kane.System` builder, with the standard library's XML parser (no code is evaluated).

Files and bytes are decoded as their byte order mark or XML declaration says (UTF-8 by default) or refused naming
the file and the first bad byte, and a document that declares entities is refused (:mod:`kane.io.xml_safe`).
Loading takes time linear in the links (10,000 in seconds: ``bench/bench_urdf.py``).

Supported: links with ``<inertial>`` (origin xyz/rpy, mass, inertia about the centre of mass in the inertial
frame's axes, converted to the central inertia in link axes); joints of type fixed, revolute, continuous,
prismatic, floating and planar with ``<origin>`` and ``<axis>``; ``<limit>`` and ``<dynamics>`` are kept as data.
Visual geometry is left to kane.viz; ``<collision>`` box, sphere, cylinder and readable mesh geometry becomes
collision shapes on the link's body (:mod:`kane.io.urdf_collision`). Each link becomes a body named as the link, with its frame the link
frame; each joint becomes a kane joint named as the URDF joint, its frame F at the joint origin in the parent link
and its frame M the child link frame, with coordinates ``q_<joint>`` and speeds ``u_<joint>`` (joint rates, as
Pinocchio's for revolute and prismatic joints). The root link is attached to ground by ``root_joint``.

Bad input raises :class:`kane.ModelError` naming the file and the element: a missing link, a cycle, a joint type
outside the list, a negative mass, malformed numbers. A mimic joint (``<mimic joint= multiplier= offset=>``) is
refused by default; ``mimic="independent"`` imports it as an independent joint (as Pinocchio does by default) and
``mimic="constraint"`` keeps the coupling: the motion constraint u = multiplier u_joint (its coordinate starts at
the offset, the mimicked joint's at 0), so the pair has one degree of freedom. A ``<mimic>`` inside a fixed joint
has nothing to couple: in every mode the joint stays fixed, as the file declares it and as Pinocchio imports it, with
a :class:`UrdfWarning`.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..model import joints as J
from ..model.system import GROUND, System
from ..spatial import rotation_rpy
from .urdf_collision import add_urdf_collisions, warn_skipped
from .xml_safe import decode_xml, parse_xml, read_xml_text

__all__ = ["UrdfModel", "UrdfWarning", "load_urdf", "parse_urdf", "JOINT_TYPES"]

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "floating", "planar")
INERTIA_TOLERANCE = 1e-5  # [kg m^2]: a miss this small is round-off or a dust-sized sensor frame


class UrdfWarning(UserWarning):
    """A URDF was imported with a change: an inertia repaired within the tolerance, a link renamed, massless
    joints welded; the message names the link or joint and the change."""


@dataclass
class UrdfModel:
    """A URDF robot imported into a :class:`kane.System`.

    ``system``: the builder (add loads, inputs or change gravity before ``system.compile()``); ``limits``: joint
    name -> dict with "lower", "upper" [rad or m], "effort" [N m or N], "velocity" [rad/s or m/s] (None where
    absent); ``dynamics``: joint name -> dict with "damping", "friction" (data only, not applied); ``joint_types``:
    joint name -> URDF type; ``links``: link names parent before child (as bodies are named); ``root``: the root
    link's name; ``renamed``: URDF link name -> body name where a link was renamed (a link called "ground");
    ``repaired``: link name -> the largest change [kg m^2] made to its inertia within the tolerance;
    ``welded``: joints that move no mass, imported as welds (``massless="weld"``); ``mimics``: joint -> (mimicked
    joint, multiplier, offset) of the couplings kept as constraints (``mimic="constraint"``), each named
    ``mimic_<joint>``.
    """

    name: str
    system: System
    root: str
    links: tuple
    joint_types: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    dynamics: dict = field(default_factory=dict)
    renamed: dict = field(default_factory=dict)
    repaired: dict = field(default_factory=dict)
    welded: tuple = ()
    mimics: dict = field(default_factory=dict)


def load_urdf(source, *, root_joint="fixed", gravity=(0.0, 0.0, -9.81), mimic: str = "error",
              strict: bool = False, inertia_tolerance: float = INERTIA_TOLERANCE, massless: str = "error") -> UrdfModel:
    """Import a URDF file (a path), URDF text (a string starting with '<') or bytes. Files and bytes are decoded
    as their XML declaration says (UTF-8 by default; :mod:`kane.io.xml_safe`), or refused naming the file and
    the first byte that is not text in that encoding.

    root_joint: how the root link is attached to ground: "fixed" (a Weld), "floating" (a Free joint, q = position
    and scalar-first quaternion, u = angular and linear velocity in the root link's axes) or any kane joint object.
    gravity: [m/s^2] in ground axes. mimic: "error" (default), "independent" or "constraint" (see the module).
    strict: refuse every inertia that is not a rigid body's (positive definite, principal moments obeying the
    triangle inequality); by default one that misses by at most ``inertia_tolerance`` [kg m^2] (plus 1e-6 of its
    largest moment: round-off, or the dust-sized inertias of sensor frames) is repaired to the nearest valid one
    with a :class:`UrdfWarning`, and a larger miss is refused naming the link and the size of the miss.
    massless: joints whose child subtree has no mass and no inertia (they move nothing: a zero-inertia chain, a
    singular mass matrix) are refused naming them ("error", default) or imported as welds ("weld", a warning).
    """
    mesh_dir = None
    if isinstance(source, (bytes, bytearray)):
        where = "URDF bytes"
        text = decode_xml(bytes(source), where)
    elif isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("<"):
        where, mesh_dir = str(source), os.path.dirname(os.path.abspath(source))
        text = read_xml_text(source, kind="URDF")
    else:
        where, text = "URDF text", str(source)
    return parse_urdf(text, where=where, root_joint=root_joint, gravity=gravity, mimic=mimic, strict=strict,
                      inertia_tolerance=inertia_tolerance, massless=massless, mesh_dir=mesh_dir)


def _numbers(elem, attr, n, where, what, default=None):
    raw = elem.get(attr) if elem is not None else None
    if raw is None:
        if default is None:
            raise ModelError(f"{where}: {what}: missing attribute {attr!r}; expected {n} number(s)")
        return np.array(default, dtype=float)
    try:  # plain floats checked one by one: numpy's checks cost more than the parse for three numbers
        vals = [float(p) for p in raw.replace(",", " ").split()]
    except ValueError:
        raise ModelError(f"{where}: {what} {attr}={raw!r}: expected {n} number(s)") from None
    if len(vals) != n or not all(map(math.isfinite, vals)):
        raise ModelError(f"{where}: {what} {attr}={raw!r}: expected {n} finite number(s)")
    return np.array(vals)


def _snap(a):
    """The file's numbers as they are (no rounding: results match other readers of the same file bit for bit);
    only values that are exactly integral become ints, so that exact zeros stay structural zeros."""
    return [int(x) if float(x).is_integer() else float(x) for x in np.ravel(a)]


def _origin(elem, where, what):
    o = elem.find("origin") if elem is not None else None
    xyz = _numbers(o, "xyz", 3, where, f"{what} <origin>", (0, 0, 0))
    rpy = _numbers(o, "rpy", 3, where, f"{what} <origin>", (0, 0, 0))
    R = None if not np.any(rpy) else np.array(_snap(rotation_rpy(rpy)), dtype=object).reshape(3, 3).tolist()
    return tuple(_snap(xyz)), R


def _ident(name, taken):
    base = re.sub(r"\W", "_", name)
    base = base if base and not base[0].isdigit() else f"j_{base}"
    out, k = base, 1
    while out in taken:
        k += 1
        out = f"{base}_{k}"
    taken.add(out)
    return out


def parse_urdf(text: str, *, where: str = "URDF text", root_joint="fixed", gravity=(0.0, 0.0, -9.81),
               mimic: str = "error", strict: bool = False, inertia_tolerance: float = INERTIA_TOLERANCE,
               massless: str = "error", mesh_dir=None) -> UrdfModel:
    """Import URDF text (see :func:`load_urdf`); ``where`` names the source in error messages; ``mesh_dir``: the
    folder collision meshes are read from (the URDF file's; None: none are read)."""
    if mimic not in ("error", "independent", "constraint"):
        raise ModelError(f"parse_urdf: mimic={mimic!r}; expected 'error', 'independent' or 'constraint'")
    if massless not in ("error", "weld"):
        raise ModelError(f"parse_urdf: massless={massless!r}; expected 'error' or 'weld'")
    if isinstance(inertia_tolerance, bool) or not isinstance(inertia_tolerance, (int, float)) or not (
            0 <= inertia_tolerance < math.inf):
        raise ModelError(f"parse_urdf: inertia_tolerance={inertia_tolerance!r}; expected a number >= 0 [kg m^2]")
    robot = parse_xml(text, where)
    if robot.tag != "robot":
        raise ModelError(f"{where}: the root element is <{robot.tag}>; expected <robot>")
    rname = robot.get("name") or "robot"
    # ---- links -----------------------------------------------------------------------------------------------
    links, link_els = {}, {}
    for el in robot.findall("link"):
        name = el.get("name")
        if not name:
            raise ModelError(f"{where}: a <link> has no name")
        if name in links:
            raise ModelError(f"{where}: link {name!r} is defined twice")
        links[name], link_els[name] = _inertial(el.find("inertial"), where, f"link {name!r}"), el
    if not links:
        raise ModelError(f"{where}: robot {rname!r} has no <link>")
    # ---- joints ----------------------------------------------------------------------------------------------
    joints, parent_of = {}, {}
    for el in robot.findall("joint"):
        name, jtype = el.get("name"), el.get("type")
        what = f"joint {name!r}"
        if not name:
            raise ModelError(f"{where}: a <joint> has no name")
        if name in joints:
            raise ModelError(f"{where}: joint {name!r} is defined twice")
        if jtype not in JOINT_TYPES:
            raise ModelError(f"{where}: {what} has type {jtype!r}; expected one of {', '.join(JOINT_TYPES)}")
        if el.find("mimic") is not None and jtype == "fixed":  # nothing to couple: fixed as declared, as Pinocchio
            warnings.warn(f"{where}: {what} <mimic joint={el.find('mimic').get('joint')!r}>: the joint is fixed; its "
                          "mimic is ignored and it stays fixed", UrdfWarning, stacklevel=3)
        elif el.find("mimic") is not None and mimic == "error":
            raise ModelError(f"{where}: {what} <mimic joint={el.find('mimic').get('joint')!r}>: mimic joints are "
                             "not imported by default (load_urdf(..., mimic='constraint') keeps the coupling as a "
                             "constraint, mimic='independent' imports them as independent joints)")
        ends = {}
        for tag in ("parent", "child"):
            sub = el.find(tag)
            link = sub.get("link") if sub is not None else None
            if link is None:
                raise ModelError(f"{where}: {what}: missing <{tag} link='...'>")
            if link not in links:
                raise ModelError(f"{where}: {what} <{tag} link={link!r}>: no link named {link!r}; links: "
                                 f"{', '.join(links)}")
            ends[tag] = link
        if ends["child"] in parent_of:
            raise ModelError(f"{where}: {what}: link {ends['child']!r} is already the child of joint "
                             f"{parent_of[ends['child']]!r}; a URDF is a tree (each link has one parent joint)")
        parent_of[ends["child"]] = name
        joints[name] = (jtype, ends["parent"], ends["child"], el)
    roots = [n for n in links if n not in parent_of]
    if not roots:
        raise ModelError(f"{where}: the joints form a cycle: every link is the child of a joint, none is the root")
    if len(roots) > 1:
        raise ModelError(f"{where}: links {', '.join(map(repr, roots))} have no parent joint; expected one root link")
    order, children = [roots[0]], {}
    for name, (_, parent, child, _) in joints.items():
        children.setdefault(parent, []).append((name, child))
    for link in order:  # breadth first from the root; what is never reached sits on a cycle
        order += [child for _, child in children.get(link, [])]
    reached = set(order)  # a set: a test per link in constant time (a list made 10,000 links quadratic)
    missing = [n for n in links if n not in reached]
    if missing:
        raise ModelError(f"{where}: the joints form a cycle through links {', '.join(map(repr, missing))} "
                         f"(joint {parent_of[missing[0]]!r}); a URDF is a tree")
    # ---- build the System ------------------------------------------------------------------------------------
    body = {n: n for n in links}
    if GROUND in links:  # kane's ground frame has that name: the link is renamed
        body[GROUND] = next(f"{GROUND}_link{k or ''}" for k in range(len(links) + 1) if f"{GROUND}_link{k or ''}"
                            not in links)
        warnings.warn(f"{where}: link 'ground' is imported as body {body[GROUND]!r} (kane's ground frame is "
                      "called 'ground')", UrdfWarning, stacklevel=3)
    repaired = {}
    s = System(rname, gravity=tuple(gravity))
    for link in order:
        mass, com, inertia = links[link]
        inertia, change = _checked_inertia(inertia, where, link, strict, inertia_tolerance)
        if change:
            repaired[link] = change
        s.add_body(body[link], mass=mass, com=com, inertia=inertia)
    warn_skipped([line for link in order for line in add_urdf_collisions(s, body[link], link_els[link], where,
                                                                        mesh_dir)], where, UrdfWarning)
    welded = _massless_joints(links, joints, parent_of, order, where, massless)
    mimics = _mimics(joints, welded, where) if mimic == "constraint" else {}
    taken = set()
    if isinstance(root_joint, J.Joint):
        root = root_joint
    elif root_joint in ("fixed", "floating"):
        root = J.Weld() if root_joint == "fixed" else J.Free()
    else:
        raise ModelError(f"load_urdf: root_joint={root_joint!r}; expected 'fixed', 'floating' or a kane joint")
    root_name = "root_joint" if "root_joint" not in joints else "kane_root_joint"
    rid = _ident(root_name, taken)
    s.add_joint(GROUND, body[roots[0]], root, name=root_name, coordinates=_names("q", rid, root),
                speeds=_names("u", rid, root))
    out = UrdfModel(rname, s, body[roots[0]], tuple(body[n] for n in order),
                    renamed={n: b for n, b in body.items() if n != b}, repaired=repaired, welded=welded)
    speed_of = {}
    for link in order[1:]:
        name = parent_of[link]
        jtype, parent, child, el = joints[name]
        what = f"joint {name!r}"
        xyz, R = _origin(el, where, what)
        axis = _numbers(el.find("axis"), "xyz", 3, where, f"{what} <axis>", (1, 0, 0))
        if jtype not in ("fixed", "floating") and not np.linalg.norm(axis) > 0:
            raise ModelError(f"{where}: {what} <axis xyz='0 0 0'>: expected a nonzero axis")
        axis = tuple(_snap(axis / np.linalg.norm(axis))) if np.linalg.norm(axis) > 0 else (1, 0, 0)
        child_R = None
        if name in welded:
            joint = J.Weld()
        elif jtype in ("revolute", "continuous"):
            joint = J.Revolute(axis)
        elif jtype == "prismatic":
            joint = J.Prismatic(axis)
        elif jtype == "fixed":
            joint = J.Weld()
        elif jtype == "floating":
            joint = J.Free()
        else:  # planar: kane's Planar moves in the xy-plane of F; turn F and M so that their z is the axis
            child_R = _align_z(axis)
            R = (np.array(R if R is not None else np.eye(3), dtype=float) @ np.array(child_R, dtype=float)).tolist()
            joint = J.Planar()
        ident = _ident(name, taken)
        s.add_joint(body[parent], body[child], joint, name=name, parent_point=xyz, parent_rotation=R,
                    child_rotation=child_R, q0=[mimics[name][2]] if name in mimics else None,
                    coordinates=_names("q", ident, joint), speeds=_names("u", ident, joint))
        speed_of[name] = ident, _names("u", ident, joint)
        out.joint_types[name] = jtype
        lim = el.find("limit")
        if lim is not None:
            out.limits[name] = {k: (float(_numbers(lim, k, 1, where, f"{what} <limit>")[0])
                                    if lim.get(k) is not None else None)
                                for k in ("lower", "upper", "effort", "velocity")}
        dyn = el.find("dynamics")
        if dyn is not None:
            out.dynamics[name] = {k: float(_numbers(dyn, k, 1, where, f"{what} <dynamics>", (0.0,))[0])
                                  for k in ("damping", "friction")}
    for name, (master, multiplier, offset) in mimics.items():  # u = multiplier u_master: one DOF for the pair
        (ident, (u,)), (_, (u_master,)) = speed_of[name], speed_of[master]
        s.add_motion_constraint(f"mimic_{ident}", [s.u(u) - multiplier * s.u(u_master)])
    out.mimics = dict(mimics)
    return out


def _mimics(joints, welded, where) -> dict:
    """joint -> (mimicked joint, multiplier, offset) of every ``<mimic>``; both joints must be single-DOF
    (revolute, continuous or prismatic) and move mass. A fixed joint's ``<mimic>`` is left out."""
    out = {}
    for name, (jtype, _, _, el) in joints.items():
        m = el.find("mimic")
        if m is None:
            continue
        if jtype == "fixed":  # warned where the joints are read
            continue
        master, what = m.get("joint"), f"joint {name!r} <mimic joint={m.get('joint')!r}>"
        if master not in joints or master == name:
            raise ModelError(f"{where}: {what}: expected another joint of the file; joints: {', '.join(joints)}")
        for joint in (name, master):
            if joints[joint][0] not in ("revolute", "continuous", "prismatic") or joint in welded:
                raise ModelError(f"{where}: {what}: joint {joint!r} ({joints[joint][0]}"
                                 f"{', moving no mass: welded' if joint in welded else ''}) has no single coordinate "
                                 "to couple; a mimic couples revolute, continuous or prismatic joints")
        multiplier = float(_numbers(m, "multiplier", 1, where, what, (1.0,))[0])
        offset = float(_numbers(m, "offset", 1, where, what, (0.0,))[0])
        out[name] = (master, multiplier, offset)
    return out


def _checked_inertia(inertia, where, link, strict, tolerance):
    """(central inertia 3 x 3, the largest change made [kg m^2] or 0): a rigid body's inertia as it is; one that
    misses positive definiteness or the triangle inequality by at most ``tolerance`` + 1e-6 of its largest
    principal moment repaired (eigenvalues raised to a small positive floor, the two smaller moments raised to
    meet the triangle inequality) with a warning; a larger miss, or any miss under ``strict``, refused."""
    I = np.array(inertia, dtype=float)
    if not np.any(I):
        return inertia, 0.0  # a point mass or a massless frame
    ev, V = np.linalg.eigh(I)
    scale = float(np.max(np.abs(ev)))
    floor = max(2e-12, 1e-9 * scale)  # above kane.System's positive-definiteness threshold
    fixed = np.maximum(ev, floor)
    deficit = fixed[2] - fixed[0] - fixed[1]
    if deficit > 0:
        fixed[:2] += deficit / 2
    change = float(np.max(np.abs(fixed - ev)))
    if change <= 1e-9 * scale and ev[0] > 1e-12 * max(1.0, scale):
        return inertia, 0.0
    moments = np.array2string(ev, precision=4)
    if strict or change > tolerance + 1e-6 * scale:
        option = "" if strict else (f" (more than the tolerance {tolerance:g} kg m^2; a larger inertia_tolerance "
                                    "accepts it, repaired)")
        raise ModelError(f"{where}: link {link!r} <inertia>: principal moments {moments} kg m^2 are not a rigid "
                         f"body's (positive, each at most the sum of the other two): they miss by {change:.3g} "
                         f"kg m^2{option}")
    warnings.warn(f"{where}: link {link!r} <inertia>: principal moments {moments} kg m^2 are not a rigid body's; "
                  f"repaired to {np.array2string(fixed, precision=4)} (a change of {change:.3g} kg m^2, within the "
                  "tolerance; strict=True refuses it)", UrdfWarning, stacklevel=4)
    return (V @ np.diag(fixed) @ V.T).tolist(), change


def _massless_joints(links, joints, parent_of, order, where, massless) -> tuple:
    """Joints with degrees of freedom whose child subtree has no mass and no inertia: refused, or to be welded."""
    moving = {n: bool(links[n][0] or np.any(links[n][2])) for n in links}
    for link in reversed(order[1:]):  # children before parents: a subtree moves mass if any link in it does
        parent = joints[parent_of[link]][1]
        moving[parent] = moving[parent] or moving[link]
    found = tuple(name for name, (jtype, _, child, _) in joints.items() if jtype != "fixed" and not moving[child])
    if found and massless == "error":
        raise ModelError(f"{where}: joints {', '.join(map(repr, found))} move no mass (their child links and "
                         "everything below them have no mass and no inertia: a zero-inertia chain, a singular mass "
                         "matrix); give the links inertials, or load with massless='weld' to weld these joints")
    if found:
        warnings.warn(f"{where}: joints {', '.join(map(repr, found))} move no mass; imported as welds",
                      UrdfWarning, stacklevel=4)
    return found


def _names(prefix, ident, joint):
    if joint.nq == 0:
        return []
    if prefix == "q":
        return [f"q_{ident}"] if joint.nq == 1 else [f"q_{ident}_{s}" for s in joint.coordinate_suffixes()]
    return [f"u_{ident}"] if joint.nu == 1 else [f"u_{ident}_{k + 1}" for k in range(joint.nu)]


def _align_z(axis) -> list:
    """A rotation (3 x 3 list) whose third column is the unit ``axis``."""
    z = np.asarray(axis, dtype=float)
    helper = np.array([1.0, 0, 0]) if abs(z[0]) < 0.9 else np.array([0, 1.0, 0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.array(_snap(np.column_stack([x, np.cross(z, x), z])), dtype=object).reshape(3, 3).tolist()


def _inertial(el, where, what):
    """(mass [kg], com (3,) [m], central inertia 3 x 3 in link axes [kg m^2]) of an <inertial>, or zeros."""
    if el is None:
        return 0, (0, 0, 0), [[0] * 3 for _ in range(3)]
    m_el = el.find("mass")
    if m_el is None:
        raise ModelError(f"{where}: {what} <inertial>: missing <mass value='...'>")
    mass = float(_numbers(m_el, "value", 1, where, f"{what} <mass>")[0])
    if mass < 0:
        raise ModelError(f"{where}: {what} <mass value='{m_el.get('value')}'>: expected a mass >= 0 [kg]")
    com, R = _origin(el, where, f"{what} <inertial>")
    i_el = el.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    if i_el is None:
        vals = dict.fromkeys(keys, 0.0)
    else:
        vals = {k: float(_numbers(i_el, k, 1, where, f"{what} <inertia>", (0.0,))[0]) for k in keys}
    I = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]], [vals["ixy"], vals["iyy"], vals["iyz"]],
                  [vals["ixz"], vals["iyz"], vals["izz"]]])
    if R is not None:
        Rn = np.array(R, dtype=float)
        I = Rn @ I @ Rn.T
    return mass, com, np.array(_snap(I), dtype=object).reshape(3, 3).tolist()
