"""The checks behind ``System.add_collision`` and ``System.exclude_collision`` (kept out of the builder's module)."""

from __future__ import annotations

from ..errors import ModelError
from .collision import SHAPES, Collision, HalfSpace, check_bits, placement_arrays
from .contact import ContactMaterial

__all__ = ["add_collision", "exclude_collision"]

GROUND = "ground"


def _collision_names(system) -> tuple[set, dict]:
    """(names of the collisions, body -> number of its collisions), brought up to date with the collisions added
    since the last call (constant time per new collision: a URDF with thousands of links stays linear)."""
    seen, names, per_body = system.__dict__.get("_collisions_seen", (0, set(), {}))
    n = len(system._collisions)
    if seen > n:
        seen, names, per_body = 0, set(), {}
    for c in system._collisions[seen:n]:
        names.add(c.name)
        per_body[c.body] = per_body.get(c.body, 0) + 1
    system.__dict__["_collisions_seen"] = (n, names, per_body)
    return names, per_body


def add_collision(system, body, shape, placement=None, *, name=None, material=None, group=1, mask=~0) -> str:
    """Check and append one :class:`Collision` to ``system`` (see ``System.add_collision``); returns its name."""
    if body != GROUND and body not in system._bodies:
        raise ModelError(f"collision on body {body!r}: no such body; bodies: ground, "
                         f"{', '.join(system._bodies) or 'none'}")
    names, per_body = _collision_names(system)
    if name is None:
        k = per_body.get(body, 0)
        while f"{body}_collision{k}" in names:
            k += 1
        name = f"{body}_collision{k}"
    if not isinstance(name, str) or not name or "|" in name:
        raise ModelError(f"collision on body {body!r}: key 'name': expected a non-empty name without '|', "
                         f"got {name!r}")
    where = f"collision {name!r} of body {body!r}"
    if name in names:
        raise ModelError(f"{where}: key 'name': another collision already has this name")
    if not isinstance(shape, SHAPES):
        raise ModelError(f"{where}: key 'shape': expected one of {', '.join(c.__name__ for c in SHAPES)}, "
                         f"got {type(shape).__name__}")
    if isinstance(shape, HalfSpace) and body != GROUND:
        raise ModelError(f"{where}: key 'shape': a HalfSpace is unbounded and goes on the ground only")
    if material is not None and not isinstance(material, ContactMaterial):
        raise ModelError(f"{where}: key 'material': expected a ContactMaterial, got {type(material).__name__}")
    R, r = placement_arrays(placement, where)
    system._collisions.append(Collision(name, body, shape, R, r, material, check_bits(group, where, "group"),
                                        check_bits(mask, where, "mask")))
    return name


def exclude_collision(system, a: str, b: str) -> None:
    """Record that the pair (``a``, ``b``) of body or collision names is never tested."""
    names = _collision_names(system)[0]
    bodies = {GROUND, *system._bodies}
    if a == b or not ({a, b} <= bodies or {a, b} <= names):
        raise ModelError(f"collision exclusion ({a!r}, {b!r}): expected two different body names or two "
                         f"different collision names; bodies: {', '.join(sorted(bodies))}; collisions: "
                         f"{', '.join(sorted(names)) or 'none'}")
    system._collision_excludes.append(frozenset((a, b)))
