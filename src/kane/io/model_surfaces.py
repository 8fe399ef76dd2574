"""The ``[[surfaces]]`` and ``[[contacts]]`` tables of a TOML model file (issue 16, seed 003): surfaces fixed in
bodies (an analytic primitive or a NURBS patch) and rolling contacts between two of them. Their keys are declared
in :data:`SURFACES` and :data:`CONTACTS` (see the model-file reference, docs/reference/model-file.md).

A file with contacts is simulated through :func:`rolling_dynamics` (the rolling joint of seed 003 in absolute
Cartesian coordinates, :class:`kane.algorithms.cartesian_contact.RollingContactDynamics`).

Sizes may be expressions of the parameters; control points, weights and knots are plain numbers. Every error is a
:class:`~kane.io.model_context.ModelFileError` naming the file, the table, the key and the line; kane.surfaces'
own checks (degenerate knots, zero weights, repeated control points) are reported on the key they concern.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from ..errors import ModelError
from ..surfaces import Cylinder, Ellipsoid, NurbsSurface, Plane, Sphere, Surface, Torus
from .model_schema import KeySpec as K
from .model_schema import KindSpec, TableSpec

__all__ = ["SURFACES", "CONTACTS", "SurfaceOnBody", "SurfaceContactSpec", "RollingModel", "surfaces_of", "contacts_of",
           "rolling_dynamics",
           "refuse_contacts"]

_M = "m"
_KINDS = {  # primitive -> (required size keys, optional keys)
    "plane": ("a plane through the origin, normal to z; s, t along x, y", (
        K("bounds", "numbers", "[[s_min, s_max], [t_min, t_max]]", unit=_M, default="unbounded",
          example="[[-1, 1], [-1, 1]]"),)),
    "sphere": ("a sphere about the origin; s the longitude, t the latitude [rad]", (
        K("radius", "expr", "radius", unit=_M, required=True, example="0.5"),)),
    "cylinder": ("a cylinder about z", (
        K("radius", "expr", "radius", unit=_M, required=True, example="0.5"),
        K("height", "numbers", "[z_min, z_max]", unit=_M, default="[0, 1]", example="[-1, 1]"))),
    "torus": ("a torus about z", (
        K("major_radius", "expr", "the centre circle's radius", unit=_M, required=True, example="1.0"),
        K("minor_radius", "expr", "the tube's radius", unit=_M, required=True, example="0.2"))),
    "ellipsoid": ("an ellipsoid with semi-axes a, b, c along x, y, z; s the longitude, t the latitude [rad]", tuple(
        K(k, "expr", f"semi-axis along {x}", unit=_M, required=True, example=v)
        for k, x, v in (("a", "x", "1.0"), ("b", "y", "0.5"), ("c", "z", "0.4")))),
    "nurbs": ("a NURBS patch (control points, weights and knots are plain numbers)", (
        K("control_points", "numbers", "n_u rows of n_v points [x, y, z] in the surface's axes", unit=_M,
          required=True, example="[[[0, 0, 0], [0, 1, 0]], [[1, 0, 0], [1, 1, 0]]]"),
        K("weights", "numbers", "n_u rows of n_v weights", default="all 1", example="[[1, 1], [1, 1]]"),
        K("knots_u", "numbers", "the knot vector in s", required=True, example="[0, 0, 1, 1]"),
        K("knots_v", "numbers", "the knot vector in t", required=True, example="[0, 0, 1, 1]"),
        K("degree_u", "integer", "the degree in s", required=True, example="1"),
        K("degree_v", "integer", "the degree in t", required=True, example="1"))),
}
SURFACES = TableSpec(
    "surfaces", "Surfaces fixed in bodies, for rolling `[[contacts]]`. A file with contacts is simulated in "
    "absolute coordinates (seed 003; `kane.io.model_surfaces.rolling_dynamics`).", array=True, keys=(
        K("name", "string", "the surface's name", required=True, example='"bowl"'),
        K("body", "name", "a body or \"ground\"", required=True, example='"ground"'),
        K("primitive", "string", "the kind of surface", default='"nurbs" when control_points is given',
          allowed=tuple(_KINDS), example='"sphere"'),
        K("origin", "vec", "the surface's origin in body axes (expressions of the parameters)", unit=_M,
          default="[0, 0, 0]", example="[0, 0, 0.1]"),
        K("rotation", "numbers", "3 rows of 3: the surface's axes in body axes", default="identity",
          example="[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"),
    ), kinds=tuple(KindSpec(k, doc, keys) for k, (doc, keys) in _KINDS.items()), kind_key="primitive",
    reader="kane.io.model_surfaces.surfaces_of")
CONTACTS = TableSpec(
    "contacts", "Rolling contacts: surface_a (on its body) rolls without slip on surface_b.", array=True, keys=(
        K("name", "string", "the contact's name", required=True, example='"roll"'),
        K("surface_a", "name", "a `[[surfaces]]` name", required=True, example='"ball"'),
        K("surface_b", "name", "a `[[surfaces]]` name on another body", required=True, example='"floor"'),
        K("parameters_a", "numbers", "[s, t] of the contact point on surface_a at the start",
          default="the middle of its bounds", example="[0.5, 0.5]"),
        K("parameters_b", "numbers", "[s, t] on surface_b", default="the middle of its bounds", example="[0, 0]"),
    ), reader="kane.io.model_surfaces.contacts_of")


@dataclass(frozen=True)
class SurfaceOnBody:
    """A surface fixed in ``body`` ("ground" for the ground), its points in the body's axes [m]."""

    name: str
    body: str
    surface: Surface
    primitive: str


@dataclass(frozen=True)
class SurfaceContactSpec:
    """A rolling contact between ``surface_a`` and ``surface_b`` starting at the surface parameters
    ``parameters_a`` and ``parameters_b`` ((s, t) each)."""

    name: str
    surface_a: SurfaceOnBody
    surface_b: SurfaceOnBody
    parameters_a: tuple[float, float]
    parameters_b: tuple[float, float]


def _numbers(ctx, key, shape_text: str, depth: int):
    """A nested list of plain finite numbers ``depth`` levels deep as a float array, or an error on ``key``."""
    value = ctx.get(key)

    def ok(v, d):
        if d == 0:
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        return isinstance(v, list) and len(v) > 0 and all(ok(x, d - 1) for x in v)

    if not ok(value, depth):
        raise ctx.error(key, f"expected {shape_text} of finite numbers")
    try:
        return np.array(value, dtype=float)
    except ValueError:
        raise ctx.error(key, f"expected {shape_text} of finite numbers (rows of equal length)") from None


def _integer(ctx, key) -> int:
    v = ctx.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ctx.error(key, f"expected an integer >= 1, got {v!r}")
    return v


def _surface(ctx, kind: str, name: str) -> Surface:
    scope = ctx.loader.scope()
    placed = {}
    if "origin" in ctx.data:
        placed["origin"] = tuple(ctx.evaluate("origin", e) for e in ctx.vector("origin", scope))
    if "rotation" in ctx.data:
        placed["rotation"] = _numbers(ctx, "rotation", "3 rows of 3", 2)
        if placed["rotation"].shape != (3, 3):
            raise ctx.error("rotation", f"expected 3 rows of 3 numbers, got shape {placed['rotation'].shape}")
    if kind == "nurbs":
        points = _numbers(ctx, "control_points", "n_u rows of n_v points [x, y, z]", 3)
        weights = _numbers(ctx, "weights", "n_u rows of n_v weights", 2) if "weights" in ctx.data else \
            np.ones(points.shape[:2])
        knots = [_numbers(ctx, k, "a list", 1) for k in ("knots_u", "knots_v")]
        degrees = [_integer(ctx, k) for k in ("degree_u", "degree_v")]
        with ctx.guard("control_points"):
            return NurbsSurface(points, weights, *knots, *degrees, name=name, **placed)
    sizes = {k.name: ctx.number(k.name, scope, positive=True) for k in SURFACES.keys_for(kind) if k.type == "expr"}
    with ctx.guard():
        if kind == "plane":
            bounds = _numbers(ctx, "bounds", "[[s_min, s_max], [t_min, t_max]]", 2) if "bounds" in ctx.data else None
            return Plane(bounds=bounds, name=name, **placed)
        if kind == "sphere":
            return Sphere(sizes["radius"], name=name, **placed)
        if kind == "cylinder":
            height = tuple(_numbers(ctx, "height", "[z_min, z_max]", 1)) if "height" in ctx.data else (0.0, 1.0)
            return Cylinder(sizes["radius"], height, name=name, **placed)
        if kind == "torus":
            return Torus(sizes["major_radius"], sizes["minor_radius"], name=name, **placed)
        return Ellipsoid(sizes["a"], sizes["b"], sizes["c"], name=name, **placed)


def surfaces_of(loaded) -> dict[str, SurfaceOnBody]:
    """name -> :class:`SurfaceOnBody` for every ``[[surfaces]]`` table of ``loaded`` (a
    :class:`kane.io.model_file.LoadedModel`), in file order."""
    bodies = {b.name for b in loaded.system.compile().bodies}
    out: dict[str, SurfaceOnBody] = {}
    for i in range(len(loaded.tables.get("surfaces", []))):
        ctx = loaded.context("surfaces", i)
        name = ctx.string("name")
        if name is None:
            raise ctx.error("name", "missing required key 'name'")
        if name in out:
            raise ctx.error("name", f"a surface named {name!r} is already defined")
        if ctx.get("primitive") is None and "control_points" not in ctx.data:
            raise ctx.error("primitive", f"missing: give primitive = one of {', '.join(_KINDS)}, or the NURBS keys "
                                         "control_points, knots_u, knots_v, degree_u, degree_v")
        kind = SURFACES.kind(ctx, "nurbs", "surface")
        body = ctx.ref("body", bodies, ground=True)
        out[name] = SurfaceOnBody(name, body, _surface(ctx, kind, name), kind)
    return out


def _parameters(ctx, key, surface: SurfaceOnBody) -> tuple[float, float]:
    (s0, s1), (t0, t1) = surface.surface.bounds
    if key not in ctx.data:
        mid = [0.5 * (lo + hi) if math.isfinite(lo + hi) else 0.0 for lo, hi in ((s0, s1), (t0, t1))]
        return mid[0], mid[1]
    values = _numbers(ctx, key, "[s, t], two numbers", 1)
    if values.shape != (2,):
        raise ctx.error(key, f"expected [s, t], two numbers, got {len(values)}")
    s, t = values
    for label, value, (lo, hi), periodic in zip("st", (s, t), surface.surface.bounds, surface.surface.periodic):
        if not periodic and not lo <= value <= hi:
            raise ctx.error(key, f"parameter {label} = {value:g} of surface {surface.name!r} is outside its bounds "
                                 f"[{lo:g}, {hi:g}]")
    return float(s), float(t)


def refuse_contacts(loaded, command: str) -> None:
    """Raise :class:`kane.ModelError` when ``loaded`` has ``[[contacts]]``, which ``command`` (such as "kane sweep")
    does not run: the derived equations leave the contacts out, so it would treat the bodies as free."""
    if loaded.tables.get("contacts"):
        raise ModelError(f"{loaded.path or loaded.name}: {command} does not run the [[contacts]] of this model "
                         f"(rolling contacts, simulated in absolute coordinates by kane.io.model_surfaces."
                         f"rolling_dynamics); "
                         f"without them its bodies would be free; run it with kane simulate, kane view --live or "
                         f"kane assemble")


def contacts_of(loaded, surfaces: dict[str, SurfaceOnBody] | None = None) -> dict[str, SurfaceContactSpec]:
    """name -> :class:`SurfaceContactSpec` for every ``[[contacts]]`` table (``surfaces`` from
    :func:`surfaces_of`, read when not given)."""
    surfaces = surfaces_of(loaded) if surfaces is None else surfaces
    out: dict[str, SurfaceContactSpec] = {}
    for i in range(len(loaded.tables.get("contacts", []))):
        ctx = loaded.context("contacts", i)
        CONTACTS.check(ctx)
        name = ctx.string("name")
        if name in out:
            raise ctx.error("name", f"a contact named {name!r} is already defined")
        a = ctx.ref("surface_a", surfaces, what="surface", ground=False)
        b = ctx.ref("surface_b", surfaces, what="surface", ground=False)
        if surfaces[a].body == surfaces[b].body:
            raise ctx.error("surface_b", f"surfaces {a!r} and {b!r} are both on {surfaces[a].body!r}; a contact "
                                         "joins surfaces on two different bodies")
        out[name] = SurfaceContactSpec(name, surfaces[a], surfaces[b], _parameters(ctx, "parameters_a", surfaces[a]),
                                       _parameters(ctx, "parameters_b", surfaces[b]))
    return out



@dataclass(frozen=True)
class RollingModel:
    """``dynamics``: the :class:`RollingContactDynamics` of a model file; ``q0`` (7 Nb + 4 Nc,) and ``u0`` (6 Nb,):
    its consistent start (the joints' q0, u0 by forward kinematics, each contact's parameters solved from its
    ``parameters_a``, ``parameters_b``, u projected onto the no-slip rows)."""

    dynamics: RollingContactDynamics
    q0: np.ndarray
    u0: np.ndarray


def rolling_dynamics(loaded, *, alpha: float = 1.0, beta: float = 1.0, tol: float = 1e-9) -> RollingModel:
    """The model file ``loaded`` (a :class:`kane.io.model_file.LoadedModel`) with every ``[[contacts]]`` pair as
    a rolling joint (surface_a on its body rolls on surface_b), in absolute Cartesian coordinates with Baumgarte
    gains ``alpha``, ``beta`` [1/s], started from the joints' q0, u0; a contact whose surfaces are apart at the
    start by more than ``tol`` [m] raises ModelError naming the file, the contact and the gap. Simulate with
    ``kane.simulate.simulate(model.dynamics, span, model.q0, model.u0,
    projection=model.dynamics.make_projection())``."""
    if loaded.tables.get("switching"):
        raise ModelError(f"{loaded.path or loaded.name}: [[contacts]] and [[switching]] in one model are not run "
                         f"together (the rolling contacts run in absolute coordinates, the switching rules on the "
                         f"derived equations); keep one of them")
    specs = contacts_of(loaded)
    if not specs:
        raise ModelError(f"{loaded.path}: rolling_dynamics needs at least one [[contacts]] table")
    contacts = [RollingContact(name, c.surface_a.body, c.surface_a.surface, c.surface_b.body, c.surface_b.surface,
                               (*c.parameters_a, *c.parameters_b)) for name, c in specs.items()]
    params = dict(loaded.parameters)
    dyn = RollingContactDynamics(loaded.system, contacts, alpha=alpha, beta=beta)
    model = dyn.model
    q = [loaded.q0.get(str(n), 0.0) for n in model.q]
    u = [loaded.u0.get(str(n), 0.0) for n in model.u]
    qc, uc = dyn.from_joint_state(q, u, params=params)
    try:
        q0, u0 = dyn.initial_state(qc, uc, params=params, tol=tol)
    except ModelError as exc:
        raise ModelError(f"{loaded.path}: [[contacts]]: {exc}") from None
    return RollingModel(dyn, q0, u0)
