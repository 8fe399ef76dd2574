"""The declarations (:class:`kane.io.model_schema.TableSpec`) of the core tables of a model file: ``[model]``,
``[parameters]``, ``[inputs]``, ``[[bodies]]``, ``[[joints]]``, ``[[loads]]``, ``[[constraints]]`` and
``[simulation]``, which :mod:`kane.io.model_file` and :mod:`kane.io.model_tables` check keys against, and the
rules every table follows (:data:`FORMAT_NOTES`, Markdown for the model-file reference)."""

from __future__ import annotations

from ..options import Method
from .model_schema import KeySpec as K
from .model_schema import KindSpec, TableSpec

__all__ = ["FORMAT_NOTES", "MODEL", "PARAMETERS", "INPUTS", "BODIES", "JOINTS", "LOADS", "CONSTRAINTS", "SIMULATION",
           "CORE_TABLES"]

FORMAT_NOTES = """\
A model file is data, never code: every expression string is read by a whitelist parser (no `eval`, no
`sympify` of raw text). Numbers may be written as TOML numbers or, where a key's type is `expr`, as expression
strings of the symbols in scope.

**Units.** SI throughout: lengths [m], masses [kg], inertias [kg m^2] about the centre of mass in body axes,
angles [rad], forces [N], torques [N m], time [s].

**Symbols in scope.** Parameters, inputs, joint coordinates and speeds, and `t` in loads, constraints and speed
maps; spring tensions add `stretch` [m] and `stretch_rate` [m/s]; mass properties and joint placements use
parameters only; parameter values, `q0`, `u0` and `[simulation]` numbers are evaluated from the parameters. An
input given as a string is a schedule evaluated during `kane simulate` (its symbol stays in the derived
equations). The initial values of dependent speeds are not used: they follow from the constraints.

**Evaluation.** Values are evaluated in double precision (never exactly, so a tower such as
`exp(exp(exp(exp(exp(1)))))` is refused at once), and every part of a field that depends on parameters alone must
be a finite real number there: a value beyond the range of a double (`"1e308*10"`, `"exp(710)"`) is refused with
the field's name. An expression of parameters alone in mass properties, placements or gravity is one named
constant of the derivation, computed once per run. Names are compared as written: a name that Python's parser
would fold (a fullwidth `ｍ`) is refused.

**Errors.** Every error is a `kane.io.ModelFileError` (a `kane.ModelError`) whose one-paragraph message names the
file, the table (`[[joints]] #2 'caster'`), the key, the line where known, and what was expected; `kane` prints it
and exits with status 2. A key a table does not declare is refused with the keys it allows.
"""

MODEL = TableSpec("model", "The model's name, description and gravity.", keys=(
    K("name", "string", "the model's name", default="the file's stem", example='"pendulum"'),
    K("description", "string", "one line about the model", default='""', example='"a test model"'),
    K("gravity", "vec", "gravity in ground axes", unit="m/s^2", default="[0, 0, 0]", example='[0, 0, "-g"]'),
), reader="kane.io.model_file.parse_model")

PARAMETERS = TableSpec(
    "parameters", "Named parameters: their values can be changed without deriving again (the `params` of a "
    "Dynamics, `kane sweep`'s grids). Each may use the parameters declared above it.",
    any_key=K("NAME", "expr", "a parameter and its default value (an expression of the parameters above it)",
              example="9.81"), reader="kane.io.model_file.parse_model")

INPUTS = TableSpec(
    "inputs", "Named inputs: a number is the input's default value (set it per run); a string is a schedule, an "
    "expression of `t`, the parameters, the coordinates and the speeds, evaluated during `kane simulate` (the "
    "input's symbol stays in the derived equations).",
    any_key=K("NAME", "expr", "a default value (number) or a schedule (expression string)", example='"sin(t)"'),
    reader="kane.io.model_file.parse_model")

BODIES = TableSpec("bodies", "Rigid bodies and particles; mass properties depend on parameters only.", array=True,
                   keys=(
    K("name", "string", "the body's name", required=True, example='"D"'),
    K("mass", "expr", "mass", unit="kg", required=True, example="2.0"),
    K("com", "vec", "the centre of mass in body axes (not for a particle)", unit="m", default="[0, 0, 0]",
      example="[0.5, 0, 0]"),
    K("inertia", "inertia", "the inertia about the centre of mass, in body axes (not for a particle)",
      unit="kg m^2", default="[0, 0, 0]", example="[0.1, 0.2, 0.3, 0.01, 0, 0]"),
    K("particle", "boolean", "a point mass: it takes only name, mass and particle", default="false",
      example="true"),
), reader="kane.io.model_tables.add_bodies")

_MOVING = ("revolute", "prismatic", "cylindrical", "universal", "planar", "gimbal", "spherical", "free")
_ROTATION = (K("sequence", "string", "Euler axis digits 1-3 (body-fixed), such as \"3\" or \"213\"", required=True,
               example='"3"'),
             K("angles", "exprs", "one angle per digit", unit="rad", required=True, example="[0.1]"))
_AXIS = "the joint axis in the parent's (and child's) axes: a name such as \"x\" or \"-z\", or a vector"
JOINTS = TableSpec(
    "joints", "Joints: each puts a child body on its parent (a body or the ground) and gives it coordinates q and "
    "speeds u. The symbols in scope: parameters, inputs, every joint's coordinates and speeds, and `t`; placements "
    "use parameters only.", array=True, keys=(
        K("name", "string", "the joint's name", default='"PARENT_CHILD"', example='"slide"'),
        K("type", "string", "the kind of joint", required=True, allowed=_MOVING + ("weld",), example='"revolute"'),
        K("parent", "name", "\"ground\" or a body", required=True, example='"B"'),
        K("child", "name", "a body (each body has one joint to its parent)", required=True, example='"C"'),
        K("parent_point", "vec", "the joint's origin in the parent's axes", unit="m", default="[0, 0, 0]",
          example="[0, 0, 1]"),
        K("child_point", "vec", "the joint's origin in the child's axes", unit="m", default="[0, 0, 0]",
          example="[0, 0, -1]"),
        K("parent_rotation", "3x3", "the joint frame in the parent's axes", default="identity",
          example='{sequence = "3", angles = [0.1]}', fields=_ROTATION),
        K("child_rotation", "3x3", "the joint frame in the child's axes", default="identity",
          example="[[1, 0, 0], [0, 1, 0], [0, 0, 1]]", fields=_ROTATION),
        K("coordinates", "names", "the names of the joint's coordinates", default='"q_NAME" or "q_NAME_SUFFIX"',
          kinds=_MOVING, example='["s"]'),
        K("speed_names", "names", "the names of the joint's speeds", default='"u_NAME" or "u_NAME_K"', kinds=_MOVING,
          example='["v"]'),
        K("speeds", "speeds", "the generalized speeds u = Y q' + Z: \"rates\" (u = q'), \"body\" (body-fixed "
          "components), or a map of expressions", default='"rates" ("body" for spherical and free)', kinds=_MOVING,
          example='{Y = [[2]], Z = [0]}',
          fields=(K("Y", "matrix", "n_u rows of n_q expressions (invertible)", required=True, example="[[2]]"),
                  K("Z", "exprs", "n_u expressions", default="0", example="[0]"))),
        K("q0", "exprs", "initial coordinates, one per coordinate", unit="m or rad", default="0", kinds=_MOVING,
          example="[0.1]"),
        K("u0", "exprs", "initial speeds, one per speed (those of dependent speeds follow from the constraints)",
          unit="m/s or rad/s", default="0", kinds=_MOVING, example="[0.2]"),
    ), kinds=(
        KindSpec("revolute", "one rotation about `axis`", (
            K("axis", "string or vec", _AXIS, default='"z"', example='"x"'),)),
        KindSpec("prismatic", "one translation along `axis`", (
            K("axis", "string or vec", _AXIS, default='"x"', example="[0, 1, 0]"),)),
        KindSpec("cylindrical", "a rotation about and a translation along `axis`", (
            K("axis", "string or vec", _AXIS, default='"z"', example='"-y"'),)),
        KindSpec("universal", "two rotations", (
            K("sequence", "string", "the two rotation axes (digits 1-3)", default='"12"', example='"13"'),)),
        KindSpec("planar", "two translations in the x-y plane and a rotation about z"),
        KindSpec("gimbal", "up to three successive rotations", (
            K("sequence", "string", "the rotation axes (digits 1-3)", default='"123"', example='"313"'),
            K("n_free", "integer", "how many of the rotations are free (the first ones)", default="3",
              allowed=("1", "2", "3"), example="2"))),
        KindSpec("spherical", "a rotation in quaternion coordinates"),
        KindSpec("free", "six degrees of freedom (position and quaternion)"),
        KindSpec("weld", "no motion: the child is fixed in the parent"),
    ), reader="kane.io.model_tables.add_joints")

_BODY = K("body", "name", "the body", required=True, example='"C"')
_JOINT = K("joint", "name", "a joint (not a weld)", required=True, example='"hinge"')
_FRAME = K("frame", "name", "the axes `vector` is written in: \"ground\" or a body", default='"ground"',
           example='"B"')


def _end(s, body):
    return (K(f"body_{s}", "name", f"end {s}'s body", required=True, example=body),
            K(f"point_{s}", "vec", f"end {s} in its body's axes", unit="m", required=True, example="[0, 0, 0.1]"))


LOADS = TableSpec(
    "loads", "Forces, torques and springs. Expressions may use parameters, inputs, coordinates, speeds and `t`.",
    array=True, keys=(
        K("name", "string", "a name used in messages", example='"push"'),
        K("type", "string", "the kind of load", required=True,
          allowed=("force", "torque", "spring", "joint_spring", "joint_torque"), example='"force"'),
    ), kinds=(
        KindSpec("force", "a force on a body point", (
            _BODY, K("vector", "vec", "the force", unit="N", required=True, example='[0, "F", 0]'),
            K("point", "vec", "where it acts, in body axes", unit="m", default="[0, 0, 0]", example="[0, 0, 0.2]"),
            _FRAME)),
        KindSpec("torque", "a torque on a body", (
            _BODY, K("vector", "vec", "the torque", unit="N m", required=True, example="[0, 0, 1]"), _FRAME)),
        KindSpec("spring", "a spring-damper between two body points: tension = stiffness stretch + damping "
                 "stretch_rate, or the law `tension`", (
                     *_end("a", '"B"'), *_end("b", '"C"'),
                     K("stiffness", "expr", "k", unit="N/m", default="0", example="100"),
                     K("rest_length", "expr", "the length at no tension", unit="m", default="0", example="0.5"),
                     K("damping", "expr", "c", unit="N s/m", default="0", example="2"),
                     K("tension", "expr", "the tension, an expression that may use `stretch` [m] and `stretch_rate` "
                       "[m/s] (replaces stiffness and damping)", unit="N", example='"50*stretch**3"'))),
        KindSpec("joint_spring", "a spring-damper on a joint's coordinates", (
            _JOINT, K("stiffness", "expr", "k", unit="N m/rad or N/m", required=True, example="10"),
            K("rest", "expr", "the coordinate at no load", unit="rad or m", default="0", example="0.1"),
            K("damping", "expr", "c", unit="N m s/rad or N s/m", default="0", example="0.5"))),
        KindSpec("joint_torque", "generalized forces on a joint's coordinates", (
            _JOINT, K("values", "exprs", "one per coordinate (or one expression)", unit="N m or N", required=True,
                      example='["tau0*sin(t)"]'))),
    ), reader="kane.io.model_tables.add_load")

_DIRECTIONS = K("directions", "vecs", "the ground directions constrained", default="the three ground axes",
                example="[[1, 0, 0]]")
CONSTRAINTS = TableSpec(
    "constraints", "Constraints on the speeds, embedded in the equations (dependent speeds eliminated); "
    "`transient = true` keeps one out of the embedding for switching rules and on-line use.", array=True, keys=(
        K("name", "string", "the constraint's name", required=True, example='"stop"'),
        K("type", "string", "the kind of constraint", required=True,
          allowed=("motion", "joint_lock", "point_velocity", "rolling_disk", "no_slip", "loop_closure"),
          example='"joint_lock"'),
        K("transient", "boolean", "switched on and off during a run (not embedded)", default="false",
          example="true"),
    ), kinds=(
        KindSpec("motion", "rows linear in the speeds that vanish", (
            K("rows", "exprs", "expressions of the speeds (and q, t, parameters)", unit="m/s or rad/s",
              required=True, example='["v - 0.5*u_hinge"]'),)),
        KindSpec("joint_lock", "a joint's speeds are zero", (_JOINT,)),
        KindSpec("point_velocity", "a body point's velocity along ground directions is zero", (
            _BODY, K("point", "vec", "the point in body axes", unit="m", default="[0, 0, 0]", example="[0, 0, 1]"),
            _DIRECTIONS)),
        KindSpec("rolling_disk", "a thin disk rolls without slip on a ground plane (three rows)", (
            K("body", "name", "the disk", required=True, example='"C"'),
            K("radius", "expr", "its radius", unit="m", required=True, example="0.3"),
            K("axis", "vec", "its symmetry axis in body axes", default="[0, 1, 0]", example="[0, 0, 1]"),
            K("center", "vec", "its centre in body axes", unit="m", default="[0, 0, 0]", example="[0, 0, 0]"),
            K("plane_point", "vec", "a point of the plane, ground axes", unit="m", default="[0, 0, 0]",
              example="[0, 0, -1]"),
            K("plane_normal", "vec", "the plane's normal towards the disk, ground axes",
              default="against gravity (z without gravity)", example="[0, 0, 1]"))),
        KindSpec("no_slip", "a knife edge: a body point has no velocity along a body direction", (
            _BODY, K("point", "vec", "the point in body axes", unit="m", required=True, example="[0, 0, 0]"),
            K("direction", "vec", "the direction in body axes", required=True, example="[0, 1, 0]"))),
        KindSpec("loop_closure", "two body points (and optionally frames) move together", (
            *_end("a", '"B"'), *_end("b", '"C"'),
            K("frames", "boolean", "the two frames' rotations too", default="false", example="true"),
            _DIRECTIONS)),
    ), reader="kane.io.model_tables.add_constraint")

SIMULATION = TableSpec(
    "simulation", "Run settings of `kane simulate` (command-line options override them). Numbers may be expressions "
    "of the parameters.", keys=(
        K("t_start", "expr", "start time", unit="s", default="0.0", example="0.5"),
        K("t_end", "expr", "end time (> t_start)", unit="s", default="10.0", example="2.0"),
        K("method", "string", "the integrator", default='"dopri5"', allowed=tuple(m.value for m in Method),
          example='"radau"'),
        K("rtol", "expr", "relative tolerance", default="1e-8", example="1e-6"),
        K("atol", "expr", "absolute tolerance", default="1e-10", example="1e-8"),
        K("dt", "expr", "the fixed step (needed by rk4 and semi_implicit_euler)", unit="s", example="0.001"),
        K("output_dt", "expr", "sampling interval of the output", unit="s", default="0.01", example="0.05"),
        K("max_step", "expr", "the largest step of an adaptive method", unit="s", default="inf", example="0.1"),
        K("dependent", "names", "the dependent speeds (a model with constraints)", default="chosen automatically",
          example='["u_hinge"]'),
    ), reader="kane.io.model_tables.simulation_settings")

CORE_TABLES = (MODEL, PARAMETERS, INPUTS, BODIES, JOINTS, LOADS, CONSTRAINTS, SIMULATION)
