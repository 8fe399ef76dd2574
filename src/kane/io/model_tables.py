"""Translators of the tables of a TOML model file into a :class:`kane.System` (bodies, joints, loads,
constraints, simulation settings); see :mod:`kane.io.model_file` for the schema."""

from __future__ import annotations

import sympy as sp

from ..model import joints as J
from ..model.system import GROUND, stretch, stretch_rate, t
from ..options import Method
from .model_context import Ctx, SimulationSettings, type_name
from .model_keys import BODIES, CONSTRAINTS, JOINTS, LOADS, SIMULATION
from .model_schema import check_fields

__all__ = ["TOP_TABLES", "EXTENSION_TABLES", "model_defaults", "add_bodies", "add_joints", "add_load", "add_constraint",
           "simulation_settings"]

TOP_TABLES = {"model": dict, "parameters": dict, "inputs": dict, "bodies": list, "joints": list, "loads": list,
        "constraints": list, "simulation": dict, "realtime": dict, "visuals": list, "surfaces": list,
        "contacts": list, "switching": list, "collision": list, "collision_exclude": list}
# tables read by the packages above io (kane.realtime, kane.viz) or by their own io module: kept as data on
# LoadedModel.tables and checked there through LoadedModel.context (errors name the file, table, key and line)
EXTENSION_TABLES = ("realtime", "visuals", "surfaces", "contacts", "switching")


def model_defaults(model) -> tuple[dict, dict, dict, dict]:
    """Parameter and input defaults, q0 and u0 of a compiled model, by name."""
    return tuple({str(s): v for s, v in zip(names, values)} for names, values in (
        (model.parameters, model.parameter_defaults), (model.inputs, model.input_defaults), (model.q, model.q0),
        (model.u, model.u0)))


def add_bodies(L, system, items) -> set:
    names = set()
    for i, d in enumerate(items):
        ctx = Ctx(L, "bodies", d, i)
        particle = ctx.boolean("particle")
        BODIES.check(ctx, without=("com", "inertia") if particle else (),
                     what=" (a particle has only name and mass)" if particle else "")
        name = ctx.string("name")
        L.named[("body", name)] = ctx
        mass = ctx.expr("mass", L.params)
        with ctx.guard("name"):
            if particle:
                system.add_particle(name, mass)
                names.add(name)
                continue
        inertia = ctx.get("inertia", [0, 0, 0])
        if isinstance(inertia, list) and len(inertia) == 3 and all(isinstance(r, list) for r in inertia):
            inertia = [ctx.vector("inertia", L.params, value=row) for row in inertia]
        elif isinstance(inertia, list) and len(inertia) in (3, 6):
            inertia = ctx.vector("inertia", L.params, n=len(inertia), value=inertia)
        else:
            raise ctx.error("inertia", f"expected [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3x3 list, "
                                       f"got {type_name(inertia)}")
        com = ctx.vector("com", L.params, value=ctx.get("com", [0, 0, 0]))
        with ctx.guard("inertia"):
            system.add_body(name, mass=mass, com=com, inertia=inertia)
        names.add(name)
    return names


def add_joints(L, system, items, bodies) -> tuple[dict, set]:
    """Two passes: names, kinds and symbols first (expressions may use any coordinate), then the placement."""
    pending, symbols, jnames = [], {}, []
    for i, d in enumerate(items):
        ctx = Ctx(L, "joints", d, i)
        kind = JOINTS.kind(ctx)
        parent, child = ctx.ref("parent", bodies), ctx.ref("child", bodies, ground=False)
        name = ctx.string("name", f"{parent}_{child}")
        L.named[("joint", name)] = ctx
        with ctx.guard("axis" if kind in ("revolute", "prismatic", "cylindrical") else "sequence"):
            joint = _make_joint(ctx, kind, L)
        qn = ctx.names("coordinates", joint.nq) or ((f"q_{name}",) if joint.nq == 1 else tuple(
            f"q_{name}_{s}" for s in joint.coordinate_suffixes()))
        un = ctx.names("speed_names", joint.nu) or ((f"u_{name}",) if joint.nu == 1 else tuple(
            f"u_{name}_{k + 1}" for k in range(joint.nu)))
        for key, group in (("coordinates", qn), ("speed_names", un)):
            for n in group:
                if n in symbols or n in L.params or n in L.inputs or n in ("t", "stretch", "stretch_rate"):
                    raise ctx.error(key, f"the name {n!r} is already used by another symbol of the model")
                if not n.isidentifier():
                    raise ctx.error(key, f"expected identifiers as names, got {n!r}")
                symbols[n] = sp.Symbol(n)
        pending.append((ctx, kind, joint, name, parent, child, qn, un))
        jnames.append(name)
    scope = L.scope(symbols)
    for ctx, kind, joint, name, parent, child, qn, un in pending:
        speeds = ctx.get("speeds", "body" if kind in ("spherical", "free") else "rates")
        if isinstance(speeds, dict):
            sctx = Ctx(L, "joints", speeds, ctx.index)
            sctx.label = ctx.label
            check_fields(sctx, JOINTS.key("speeds", kind).fields, " in 'speeds'")
            Y = speeds["Y"]
            if not isinstance(Y, list) or len(Y) != joint.nu:
                raise ctx.error("speeds", f"expected Y as a list of {joint.nu} rows of {joint.nq} expressions")
            Y = tuple(sctx.vector("Y", scope, n=joint.nq, value=row) for row in Y)
            Z = sctx.vector("Z", scope, n=joint.nu) if "Z" in speeds else None
            speeds = J.SpeedMap(Y, Z)
            with ctx.guard("speeds"):  # Y must be invertible
                J.replace_speeds(joint, speeds).kinematics(sp.Matrix([symbols[n] for n in qn]), t)
        elif speeds in ("rates", "body"):
            speeds = J.Speeds(speeds)
        else:
            raise ctx.error("speeds", f"expected 'rates', 'body' or a table {{Y = [[...]], Z = [...]}}, got "
                                      f"{speeds!r}")
        if kind != "weld":
            joint = J.replace_speeds(joint, speeds)
        place = {k: ctx.vector(k, L.params) for k in ("parent_point", "child_point") if k in ctx.data}
        for k in ("parent_rotation", "child_rotation"):
            if k in ctx.data:
                place[k] = _rotation(ctx, k, L.params)
        init = {}
        for k, n in (("q0", joint.nq), ("u0", joint.nu)):
            if k in ctx.data:
                init[k] = [ctx.evaluate(k, e, item=f" (item {i + 1})")
                           for i, e in enumerate(ctx.vector(k, L.scope(), n=n))]
        with ctx.guard("speeds"):
            system.add_joint(parent, child, joint, name=name, coordinates=qn, speeds=un, **place, **init)
    return symbols, set(jnames)


def _make_joint(ctx, kind, L) -> J.Joint:
    if kind in ("revolute", "prismatic", "cylindrical"):
        axis = ctx.get("axis", "x" if kind == "prismatic" else "z")
        if not isinstance(axis, str):
            axis = ctx.vector("axis", L.params)
        cls = {"revolute": J.Revolute, "prismatic": J.Prismatic, "cylindrical": J.Cylindrical}[kind]
        joint = cls(axis)
        joint.axis_partition()  # checks the axis
        return joint
    if kind == "gimbal":
        n_free = ctx.get("n_free", 3)
        if isinstance(n_free, bool) or not isinstance(n_free, int):
            raise ctx.error("n_free", f"expected 1, 2 or 3, got {type_name(n_free)}")
        return J.Gimbal(ctx.string("sequence", "123"), n_free)
    if kind == "universal":
        return J.Universal(ctx.string("sequence", "12"))
    return {"planar": J.Planar, "spherical": J.Spherical, "free": J.Free, "weld": J.Weld}[kind]()


def _rotation(ctx, key, scope):
    v = ctx.get(key)
    if isinstance(v, dict):
        rctx = Ctx(ctx.loader, ctx.table, v, ctx.index)
        rctx.label = ctx.label
        check_fields(rctx, JOINTS.key(key).fields, f" in '{key}'")
        seq = rctx.string("sequence")
        if not seq or any(c not in "123" for c in seq):
            raise ctx.error(key, f"expected a sequence of axis digits 1-3 such as '3' or '213', got {seq!r}")
        return J.euler_rotation(seq, rctx.vector("angles", scope, n=len(seq)))
    if not isinstance(v, list) or len(v) != 3:
        raise ctx.error(key, f"expected a 3x3 list of expressions or {{sequence = '...', angles = [...]}}, got "
                             f"{type_name(v)}")
    return [ctx.vector(key, scope, value=row) for row in v]


def add_load(ctx, system, bodies, scope, joints):
    kind = LOADS.kind(ctx)
    with ctx.guard():
        if kind in ("force", "torque"):
            body, frame = ctx.ref("body", bodies), ctx.ref("frame", bodies, default=GROUND)
            vec = ctx.vector("vector", scope)
            if kind == "force":
                system.add_force(body, vec, point=ctx.vector("point", scope, value=ctx.get("point", [0, 0, 0])),
                                 frame=frame)
            else:
                system.add_torque(body, vec, frame=frame)
        elif kind == "spring":
            a, b = ctx.ref("body_a", bodies), ctx.ref("body_b", bodies)
            opts = {k: ctx.expr(k, scope) for k in ("stiffness", "rest_length", "damping") if k in ctx.data}
            if "tension" in ctx.data:
                opts["tension"] = ctx.expr("tension", {**scope, "stretch": stretch, "stretch_rate": stretch_rate})
            system.add_spring(a, ctx.vector("point_a", scope), b, ctx.vector("point_b", scope), **opts)
        elif kind == "joint_spring":
            system.add_joint_spring(ctx.ref("joint", joints, "joint", ground=False), ctx.expr("stiffness", scope),
                                    *(ctx.expr(k, scope) if k in ctx.data else 0 for k in ("rest", "damping")))
        else:
            name, values = ctx.ref("joint", joints, "joint", ground=False), ctx.get("values")
            values = ctx.vector("values", scope, n=len(values)) if isinstance(values, list) else [
                ctx.expr("values", scope)]
            system.add_joint_torque(name, values)


def add_constraint(ctx, system, bodies, scope, joints):
    kind = CONSTRAINTS.kind(ctx)
    name, tr = ctx.string("name"), ctx.boolean("transient")
    ctx.loader.named[("constraint", name)] = ctx
    vec = (lambda k, d=None: ctx.vector(k, scope, value=ctx.get(k, d)))

    def directions():
        d = ctx.get("directions")
        if d is None:
            return None
        if not isinstance(d, list) or not d:
            raise ctx.error("directions", f"expected a list of 3-vectors, got {type_name(d)}")
        return [ctx.vector("directions", scope, value=x) for x in d]

    with ctx.guard():
        if kind == "motion":
            rows = ctx.get("rows")
            rows = ctx.vector("rows", scope, n=len(rows)) if isinstance(rows, list) else [ctx.expr("rows", scope)]
            system.add_motion_constraint(name, rows, transient=tr)
        elif kind == "joint_lock":
            system.add_joint_lock(name, ctx.ref("joint", joints, "joint", ground=False), transient=tr)
        elif kind == "point_velocity":
            system.add_point_velocity_constraint(name, ctx.ref("body", bodies), vec("point", [0, 0, 0]),
                                                 directions(), transient=tr)
        elif kind == "rolling_disk":
            system.add_rolling_disk(name, ctx.ref("body", bodies, ground=False), ctx.expr("radius", scope),
                                    vec("axis", [0, 1, 0]), vec("center", [0, 0, 0]),
                                    plane_point=vec("plane_point", [0, 0, 0]),
                                    plane_normal=vec("plane_normal") if "plane_normal" in ctx.data else None,
                                    transient=tr)
        elif kind == "no_slip":
            system.add_no_slip(name, ctx.ref("body", bodies), vec("point"), vec("direction"), transient=tr)
        else:
            system.add_loop_closure(name, ctx.ref("body_a", bodies), vec("point_a"),
                                    ctx.ref("body_b", bodies), vec("point_b"),
                                    frames=ctx.boolean("frames"), directions=directions(), transient=tr)


def simulation_settings(ctx, L) -> SimulationSettings:
    SIMULATION.check(ctx)
    d, scope = SimulationSettings(), L.scope()
    method = ctx.string("method", d.method)
    try:
        m = Method.parse(method)
    except ValueError:
        raise ctx.error("method", f"expected one of {', '.join(repr(x.value) for x in Method)}, got {method!r}")
    out = {k: ctx.number(k, scope, getattr(d, k), positive=k != "t_start")
           for k in ("t_start", "t_end", "rtol", "atol", "dt", "output_dt", "max_step") if k in ctx.data}
    if out.get("t_end", d.t_end) <= out.get("t_start", d.t_start):
        raise ctx.error("t_end", "expected t_end > t_start")
    if not m.adaptive and out.get("dt") is None:
        raise ctx.error("dt", f"the fixed-step method {m.value!r} needs a step 'dt' [s]")
    dep = ctx.names("dependent")
    return SimulationSettings(**{**out, "method": m.value, "dependent": dep})
