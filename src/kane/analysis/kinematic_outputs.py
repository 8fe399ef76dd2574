"""Named outputs an experimenter measures: body poses, and the position, velocity and acceleration of body
points in ground axes, the speeds (dependent ones included) and their rates (Kane & Levinson, *Dynamics: Theory
and Applications*, ch. 2: velocity and acceleration of a point fixed in a rigid body).

Positions and velocities come from one Program of the tree kinematics (:class:`kane.mechanics.TreeKinematics`)
in the model's full speeds. Accelerations are the exact time derivative of those velocities along the motion,

    a = dv/dt + (dv/dq) q' + (dv/du_full) u_full',   u_full' from :func:`kane.analysis.speed_rates`,

the Jacobians from forward-mode derivatives (:mod:`kane.codegen.forward`), so the rates of the embedded
(dependent) speeds enter exactly. Every output is also a set of monitors for :class:`kane.simulate.Simulator`
(one scalar per component, recorded with each sample) and can be plotted from the recorded trajectory.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import sympy as sp

from ..codegen.forward import jacobian_name, jacobian_program
from ..codegen.numpy_backend import compile_program
from ..codegen.program import ProgramBuilder
from ..errors import ArgumentError
from ..mechanics.arguments import state_arrays
from ..mechanics.kinematics import TreeKinematics, matvec
from ..spatial import rotation_to_quaternion
from .constraint_forces import ConstraintForces
from .outputs import speed_rates

__all__ = ["KinematicOutputs", "kinematic_outputs"]

_BODY = ("position", "rotation", "quaternion", "velocity", "angular_velocity", "acceleration",
         "angular_acceleration")
_POINT = ("position", "velocity", "acceleration")
_COMPONENTS = {3: ("x", "y", "z"), 4: ("w", "x", "y", "z"), 9: tuple(f"{r}{c}" for r in "123" for c in "123")}
# output kind -> (velocity program output whose time derivative it is)
_RATE_OF = {"acceleration": "velocity", "angular_acceleration": "angular_velocity"}


class KinematicOutputs:
    """The named outputs of one :class:`kane.Equations` (or :class:`kane.Dynamics`), listed by ``names``:

    * ``"<body>.position"`` (3,) [m] of the body frame's origin, ``"<body>.rotation"`` (3, 3) body axes to
      ground axes, ``"<body>.quaternion"`` (4,) scalar first, ``"<body>.velocity"`` / ``"<body>.acceleration"``
      (3,) of its origin [m/s, m/s^2], ``"<body>.angular_velocity"`` / ``"<body>.angular_acceleration"`` (3,)
      [rad/s, rad/s^2], all in ground axes;
    * for each named point of ``points`` (name -> (body, (x, y, z) in body axes [m])): ``"<point>.position"``,
      ``"<point>.velocity"``, ``"<point>.acceleration"`` (3,) in ground axes;
    * for every speed of the model: ``"<speed>"`` its value and ``"<speed>.rate"`` its rate (dependent speeds
      from the embedded constraints);
    * for every permanent constraint: ``"<constraint>.force"`` (m,), the force that maintains it, one value per
      constraint row (:mod:`kane.analysis.constraint_forces`: for a rolling contact or a loop closure the force
      on the body at the point along the row's direction [N]).

    Accelerations and rates are those of the motion M u' = f + tau (``tau`` (p,) extra generalized forces along
    the independent speeds, default none).
    """

    def __init__(self, equations, points: Mapping[str, tuple] | None = None):
        equations = getattr(equations, "equations", equations)  # a Dynamics gives its Equations
        self.equations = equations
        model = self.model = equations.model
        self._body_index = {b.name: i for i, b in enumerate(model.bodies)}
        self._points = {}
        for name, spec in (points or {}).items():
            try:
                body, point = spec
                point = tuple(float(c) for c in point)
            except (TypeError, ValueError):
                raise ArgumentError(f"point {name!r}: expected (body name, (x, y, z)), got {spec!r}") from None
            if body not in self._body_index or len(point) != 3:
                raise ArgumentError(f"point {name!r}: body {body!r} with (x, y, z) in its axes expected; bodies: "
                                    f"{', '.join(self._body_index)}")
            if name in self._body_index:
                raise ArgumentError(f"point {name!r}: the name is a body's; choose another")
            self._points[name] = (self._body_index[body], point)
        self.speed_names = tuple(str(s) for s in model.u)
        shapes = {}
        for b in self._body_index:
            shapes.update({f"{b}.{k}": (3, 3) if k == "rotation" else (4,) if k == "quaternion" else (3,)
                           for k in _BODY})
        for p in self._points:
            shapes.update({f"{p}.{k}": (3,) for k in _POINT})
        for s in self.speed_names:
            shapes[s] = shapes[f"{s}.rate"] = ()
        self._forces = ConstraintForces(equations)
        shapes.update({f"{c}.force": shape for c, shape in self._forces.shapes.items()})
        self.shapes = shapes
        self.names = tuple(shapes)
        self._program = self._build()
        self._fn = compile_program(self._program, list(self._key.values()))
        self._u_full = compile_program(equations.program, ["u_full"])
        self._rates_fn = None

    # ---- the kinematics program ----------------------------------------------------------------------------
    def _build(self):
        m = self.model
        groups = {"t": (m.t,), "q": m.q, "u": m.u, "params": m.parameters, "inputs": m.inputs}
        b = ProgramBuilder(groups, prefix="k")
        model = m.name_constants(b.assign)
        kin = TreeKinematics(model, b)
        outs = {"qdot": list(kin.qdot)}
        for name, i in self._body_index.items():
            R = kin.rotation_to_ground(i)
            outs[f"{name}.rotation"] = sp.Matrix(R)
            outs[f"{name}.position"] = list(kin.origin_in_ground(i))
            outs[f"{name}.velocity"] = kin.point_velocity_in_ground(i, (0, 0, 0))
            outs[f"{name}.angular_velocity"] = [b.assign(e) for e in matvec(R, kin.vel[i][:3])]
        for name, (i, point) in self._points.items():
            outs[f"{name}.position"] = kin.point_in_ground(i, point)
            outs[f"{name}.velocity"] = kin.point_velocity_in_ground(i, point)
        self._key = {name: f"o{k}" for k, name in enumerate(outs)}  # program outputs need identifier names
        return b.build({self._key[name]: v for name, v in outs.items()})

    def _rates(self):
        """(compiled function, names of its outputs): the Jacobians of every velocity output (built once)."""
        if self._rates_fn is None:
            vel = [self._key[n] for n in self._key if n.endswith("velocity")]
            prog = jacobian_program(self._program, vel, wrt=("t", "q", "u"))
            names = [jacobian_name(n, g) for n in vel for g in ("t", "q", "u")]
            self._rates_fn = (compile_program(prog, names), names)
        return self._rates_fn

    # ---- evaluation ----------------------------------------------------------------------------------------
    def check(self, names: Iterable[str]) -> tuple:
        """``names`` as a tuple, or an :class:`ArgumentError` listing the known outputs."""
        names = (names,) if isinstance(names, str) else tuple(names)
        unknown = [n for n in names if n not in self.shapes]
        if unknown:
            raise ArgumentError(f"unknown outputs {', '.join(map(repr, unknown))}; known: {', '.join(self.names)}")
        return names

    def evaluate(self, names, t, q, u, params=None, inputs=None, tau=None) -> dict:
        """The outputs ``names`` (a name or several) at (t [s], q (n_q,), independent u (p,)): name -> array of
        the output's shape (a float for a speed or a rate)."""
        names = self.check(names)
        model = self.model
        q, u, batch = state_arrays(q, u, model.n_q, len(self.equations.u_independent))
        if batch:
            raise ArgumentError("kinematic outputs take one state at a time")
        p, w = model.parameter_values(params), model.input_values(inputs)
        u_full = self._u_full(float(t), q, u, p, w)[0]
        vals = dict(zip(self._key, self._fn(float(t), q, u_full, p, w)))
        need_rates = any(n.endswith((".acceleration", ".angular_acceleration", ".rate", ".force")) for n in names)
        if need_rates:
            rates = speed_rates(self.equations, t, q, u, params, inputs, tau)
            u_full_dot = rates.u_full_dot
        if any(n.endswith("acceleration") for n in names):
            fn, jnames = self._rates()
            J = dict(zip(jnames, fn(float(t), q, u_full, p, w)))
        if any(n.endswith(".force") for n in names):
            forces = self._forces(t, q, u_full, u_full_dot, p, w, tau)
        out = {}
        for name in names:
            head, _, kind = name.rpartition(".")
            if name in self.speed_names:
                out[name] = float(u_full[self.speed_names.index(name)])
            elif kind == "rate":
                out[name] = float(u_full_dot[self.speed_names.index(head)])
            elif kind == "force" and head in forces:
                out[name] = forces[head]
            elif kind == "quaternion":
                out[name] = rotation_to_quaternion(vals[f"{head}.rotation"])
            elif kind in _RATE_OF:
                v = self._key[f"{head}.{_RATE_OF[kind]}"]
                out[name] = (J[jacobian_name(v, "t")][:, 0] + J[jacobian_name(v, "q")] @ vals["qdot"]
                             + J[jacobian_name(v, "u")] @ u_full_dot)
            else:
                out[name] = np.array(vals[name])
        return out

    def __call__(self, name: str, t, q, u, params=None, inputs=None, tau=None):
        """One output (see :meth:`evaluate`)."""
        return self.evaluate((name,), t, q, u, params, inputs, tau)[name]

    # ---- recording and plotting ----------------------------------------------------------------------------
    def component_names(self, name: str) -> tuple:
        """The monitor names of output ``name``'s components: ``name`` itself for a scalar, else
        ``"<name>.x"`` ... (``.w .x .y .z`` of a quaternion, ``.11`` ... ``.33`` of a rotation matrix, ``.1`` ...
        ``.m`` of a constraint force, by row)."""
        size = int(np.prod(self.shapes[self.check(name)[0]]))
        if name.endswith(".force") and name[:-6] in self._forces.shapes:
            return tuple(f"{name}.{k + 1}" for k in range(size))
        return (name,) if size == 1 and self.shapes[name] == () else tuple(f"{name}.{c}" for c in _COMPONENTS[size])

    def monitors(self, names, params=None, inputs=None, tau=None) -> dict:
        """Monitors for :class:`kane.simulate.Simulator` (``monitors=``) recording the outputs ``names`` with
        every sample: component name (:meth:`component_names`) -> f(t, q, u) -> float. The components of one
        sample share one evaluation."""
        names = self.check(names)
        last = {}

        def values(t, q, u):
            key = (float(t), q.tobytes(), u.tobytes())
            if last.get("key") != key:
                last["key"], last["v"] = key, self.evaluate(names, t, q, u, params, inputs, tau)
            return last["v"]

        def component(name, k):
            return lambda t, q, u: float(np.ravel(values(t, q, u)[name])[k])

        return {c: component(n, k) for n in names for k, c in enumerate(self.component_names(n))}

    def plot(self, trajectory, names, path: str | os.PathLike | None = None):
        """Plot the recorded outputs ``names`` of ``trajectory`` (recorded by :meth:`monitors`; its residual
        columns) against time [s], one panel per output; written to ``path`` when given. Returns the figure."""
        from matplotlib.figure import Figure

        names = self.check(names)
        missing = [c for n in names for c in self.component_names(n) if c not in trajectory.residuals]
        if missing:
            raise ArgumentError(f"plot: the trajectory did not record {', '.join(missing)}; record them with "
                                f"monitors=outputs.monitors([...]); recorded: {', '.join(trajectory.residuals)}")
        fig = Figure(figsize=(8.0, 2.2 * len(names) + 0.6), layout="constrained")
        axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
        for ax, name in zip(axes, names):
            for c in self.component_names(name):
                ax.plot(trajectory.t, trajectory.residuals[c], lw=1.0, label=c)
            ax.set_ylabel(name, fontsize=8)
            ax.legend(loc="best", fontsize=7)
        axes[-1].set_xlabel("t [s]")
        if path is not None:
            fig.savefig(Path(path))
        return fig


_CACHE: dict = {}  # (id(equations), points) -> (weak reference to the equations, KinematicOutputs)


def kinematic_outputs(equations, points: Mapping[str, tuple] | None = None) -> KinematicOutputs:
    """The :class:`KinematicOutputs` of ``equations`` (an :class:`kane.Equations` or :class:`kane.Dynamics`)
    with the named body points ``points``, built once per equations and point set."""
    equations = getattr(equations, "equations", equations)
    key = (id(equations), repr(sorted((points or {}).items())))
    hit = _CACHE.get(key)
    if hit is None or hit[0]() is not equations:
        hit = _CACHE[key] = (weakref.ref(equations), KinematicOutputs(equations, points))
        weakref.finalize(equations, _CACHE.pop, key, None)
    return hit[1]
