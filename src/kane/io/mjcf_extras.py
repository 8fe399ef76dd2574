"""MJCF elements beyond the body tree: ``<actuator>`` motors as named inputs, ``<equality>`` connect and joint
couplings as constraints, and the inventory of what kane does not import (one :class:`MjcfWarning`)."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import ModelError
from ..spatial import quaternion_to_rotation
from .mjcf_spec import ACTUATOR_TAGS, Defaults, numbers

__all__ = ["MjcfWarning", "add_actuators", "add_equalities", "fluid_and_flags", "warn_not_imported"]


class MjcfWarning(UserWarning):
    """An MJCF model was imported without some of its elements (tendons, sensors, limits, contacts, ...); the
    message lists every one, by kind and name."""


def _limited(attrs, flag: str, rng: str) -> bool:
    value = attrs.get(flag, "auto")
    return value == "true" or (value == "auto" and rng in attrs)


def add_actuators(root, s, defaults: Defaults, joint_info: dict, where: str, skipped: dict) -> tuple:
    """Each ``<motor>`` (and ``<general>`` with fixed gain and no bias or dynamics) on a hinge or slide joint
    becomes the input ``ctrl_<name>`` with the generalized force gear * gain * ctrl on its joint; the input names
    in MuJoCo's ctrl order are returned. Other actuators are listed in ``skipped``."""
    names = []
    for block in root.findall("actuator"):
        for k, el in enumerate(block):
            what = f"<{el.tag} name={el.get('name')!r}>" if el.get("name") else f"<{el.tag}> #{k}"
            attrs = defaults.attrs(el, None, what)
            label = attrs.get("name") or f"{el.tag}{len(names) + sum(map(len, skipped.values()))}"
            gain = 1.0
            if el.tag == "general":
                fixed = attrs.get("gaintype", "fixed") == "fixed" and attrs.get("biastype", "none") == "none" and \
                    attrs.get("dyntype", "none") == "none"
                gain = float(numbers(attrs, "gainprm", range(1, 11), where, what, (1.0,))[0]) if fixed else None
            elif el.tag != "motor":
                gain = None
            joint = attrs.get("joint")
            if el.tag not in ACTUATOR_TAGS:
                raise ModelError(f"{where}: <actuator> holds <{el.tag}>; expected an actuator element")
            if gain is None or joint is None:
                skipped.setdefault("actuators other than motors on joints", []).append(label)
                continue
            if joint not in joint_info:
                raise ModelError(f"{where}: {what} joint={joint!r}: no joint of that name; joints: "
                                 f"{', '.join(joint_info) or 'none'}")
            kind, kjoint, _ = joint_info[joint]
            if kind not in ("hinge", "slide"):
                skipped.setdefault("motors on ball and free joints", []).append(label)
                continue
            gear = float(numbers(attrs, "gear", range(1, 7), where, what, (1.0,))[0])
            name = f"ctrl_{''.join(c if c.isalnum() else '_' for c in label)}"
            while name in names:
                name += "_"
            s.add_joint_torque(kjoint, [gear * gain * s.input(name)])
            names.append(name)
            if _limited(attrs, "ctrllimited", "ctrlrange"):
                skipped.setdefault("ctrlrange clamping (kane applies ctrl as given)", []).append(label)
            if _limited(attrs, "forcelimited", "forcerange"):
                skipped.setdefault("forcerange clamping", []).append(label)
    return tuple(names)


def add_equalities(root, s, defaults: Defaults, body_info: dict, joint_info: dict, site_info: dict, where: str,
                   skipped: dict) -> tuple:
    """``<connect body1 body2 anchor>`` as a loop closure (body1's anchor and the body2 point that coincides with
    it in the reference configuration move together), ``<weld body1 body2 anchor relpose>`` as a loop closure of
    frames (body2's anchor and its body1 point move together, the two frames turn together) and ``<joint joint1 joint2 polycoef>`` as the motion
    constraint u1 = p'(q2 - ref2) u2; a connect or weld by ``site1``/``site2`` joins the two sites (and turns
    their bodies together for a weld); the constraint names are returned. ``body_info``: MJCF body name (or
    "world") -> (kane body, R_world_body (3, 3), p_world_body (3,) at qpos0); ``joint_info``: joint name ->
    (kind, kane joint name, ref); ``site_info``: site name -> (kane body, position (3,) in its axes)."""
    names = []
    for block in root.findall("equality"):
        for k, el in enumerate(block):
            what = f"<{el.tag} name={el.get('name')!r}>" if el.get("name") else f"<equality><{el.tag}> #{k}"
            attrs = defaults.attrs(el, None, what)
            label = attrs.get("name") or f"{el.tag}{k}"
            if attrs.get("active", "true") == "false":
                skipped.setdefault("inactive equalities", []).append(label)
                continue
            cname = f"{el.tag}_{''.join(c if c.isalnum() else '_' for c in label)}"
            if el.tag in ("connect", "weld") and "site1" in attrs:
                ends = []
                for key in ("site1", "site2"):
                    site = attrs.get(key)
                    if site not in site_info:
                        raise ModelError(f"{where}: {what} {key}={site!r}: no site of that name")
                    ends.append(site_info[site])
                    used = skipped.get("<site> elements", [])
                    if site in used:
                        used.remove(site)  # imported: a point of the constraint
                (b1, p1), (b2, p2) = ends
                s.add_loop_closure(cname, b1, [float(x) for x in p1], b2, [float(x) for x in p2],
                                   frames=el.tag == "weld")
            elif el.tag == "connect" and "body1" in attrs:
                ends = _ends(attrs, body_info, where, what)
                anchor = numbers(attrs, "anchor", 3, where, what)
                if anchor is None:
                    raise ModelError(f"{where}: {what}: missing anchor (3 numbers, in body1's frame)")
                (b1, R1, p1), (b2, R2, p2) = ends
                point_b = R2.T @ (p1 + R1 @ anchor - p2)
                s.add_loop_closure(cname, b1, [float(x) for x in anchor], b2, [float(x) for x in point_b])
            elif el.tag == "weld" and "body1" in attrs:
                (b1, R1, p1), (b2, R2, p2) = _ends(attrs, body_info, where, what)
                anchor = numbers(attrs, "anchor", 3, where, what, (0, 0, 0))
                rel = numbers(attrs, "relpose", 7, where, what, (0, 1, 0, 0, 0, 0, 0))
                if np.any(rel[3:]):  # body2's pose in body1's frame as the file gives it
                    point_a = rel[:3] + quaternion_to_rotation(rel[3:]) @ anchor
                else:  # the pose of the reference configuration
                    point_a = R1.T @ (p2 + R2 @ anchor - p1)
                s.add_loop_closure(cname, b1, [float(x) for x in point_a], b2, [float(x) for x in anchor],
                                   frames=True)
                if float(numbers(attrs, "torquescale", 1, where, what, (1,))[0]) != 1:
                    skipped.setdefault("weld torquescale (a soft-constraint weight)", []).append(label)
            elif el.tag == "joint":
                j1, j2 = attrs.get("joint1"), attrs.get("joint2")
                for key, j in (("joint1", j1), ("joint2", j2)):
                    if (j is not None or key == "joint1") and j not in joint_info:
                        raise ModelError(f"{where}: {what} {key}={j!r}: no joint of that name")
                    if j is not None and joint_info[j][0] not in ("hinge", "slide"):
                        raise ModelError(f"{where}: {what} {key}={j!r}: a joint equality couples hinge and slide "
                                         "joints")
                c = numbers(attrs, "polycoef", 5, where, what, (0, 1, 0, 0, 0))
                u1 = s.u(f"u_{joint_info[j1][1]}")
                if j2 is None:
                    s.add_motion_constraint(cname, [u1])
                else:
                    d = s.q(f"q_{joint_info[j2][1]}") - joint_info[j2][2]
                    slope = float(c[1]) + 2 * float(c[2]) * d + 3 * float(c[3]) * d ** 2 + 4 * float(c[4]) * d ** 3
                    s.add_motion_constraint(cname, [u1 - slope * s.u(f"u_{joint_info[j2][1]}")])
            else:
                skipped.setdefault("equalities other than connect, weld and joint", []).append(label)
                continue
            names.append(cname)
    return tuple(names)


def _ends(attrs, body_info, where, what) -> list:
    ends = []
    for key in ("body1", "body2"):
        b = attrs.get(key, "world")
        if b not in body_info:
            raise ModelError(f"{where}: {what} {key}={b!r}: no body of that name; bodies: {', '.join(body_info)}")
        ends.append(body_info[b])
    return ends


def warn_not_imported(skipped: dict, where: str) -> tuple:
    """One :class:`MjcfWarning` listing ``skipped`` (kind -> names; contacts, limits and friction loss left out
    where ``<option><flag>`` disables them); the list as ``"kind: a, b (count)"`` lines."""
    off = skipped.pop("_disabled", set())
    if off & {"constraint", "contact"}:
        skipped.pop("contacts of geoms (collisions=False)", None)
    if off & {"constraint", "limit"}:
        skipped.pop("joint limits", None)
    if off & {"constraint", "frictionloss"}:
        skipped.pop("frictionloss", None)
    lines = tuple(f"{kind}: {', '.join(map(str, items[:12]))}{' ...' if len(items) > 12 else ''} ({len(items)})"
                  for kind, items in skipped.items() if items)
    if lines:
        warnings.warn(f"{where}: not imported (kane leaves these out): " + "; ".join(lines), MjcfWarning,
                      stacklevel=4)
    return lines


def fluid_and_flags(root, where: str, skipped: dict) -> np.ndarray:
    """The gravity [m/s^2] of ``<option>`` (zero when its flag disables gravity); fluid settings are listed."""
    attrs, flags = {}, {}
    for el in root.findall("option"):
        attrs.update(el.attrib)
        for f in el.findall("flag"):
            flags.update(f.attrib)
    g = numbers(attrs, "gravity", 3, where, "<option>", (0, 0, -9.81))
    for key in ("density", "viscosity"):
        if float(numbers(attrs, key, 1, where, "<option>", (0,))[0]) != 0:
            skipped.setdefault("fluid forces (<option density/viscosity>)", []).append(key)
    if np.any(numbers(attrs, "wind", 3, where, "<option>", (0, 0, 0))):
        skipped.setdefault("fluid forces (<option density/viscosity>)", []).append("wind")
    off = {k for k, v in flags.items() if v == "disable"}
    skipped["_disabled"] = off  # read by warn_not_imported: what the model itself switches off is not listed
    return np.zeros(3) if "gravity" in off else g
