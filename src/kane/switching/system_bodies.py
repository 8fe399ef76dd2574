"""Point Jacobians and body poses of any kane model, for contact on Systems with joints (seed 000 Figure 2, the rows
of a contact constraint; the bodies interface of :mod:`.contact_stepping` and :mod:`.contact_events`).

:class:`SystemBodies` compiles once, from the model's tree kinematics (:class:`kane.mechanics.TreeKinematics`), one
program giving per body its rotation R_0_i (3, 3) body to ground axes, the position o_i (3,) [m] of its frame's
origin, the partial velocities V_i (3, n_full) of that origin and the partial angular velocities W_i (3, n_full),
both in ground axes and over the model's full speeds. A point p (world) fixed in body i moves with

    v_p = (V_i - [p - o_i]x W_i) u_full,     u_full = C(t, q) u

where C (n_full, n_u) maps the independent speeds to all of them (the identity when no motion constraint is
embedded; otherwise read from the compiled equations' ``u_full`` output, linear in u). Joints that move on their
own (rheonomic remainders) are refused: the contact rows assume v_p = J u.

The object is immutable after construction; the compiled functions are pure, so threads share it.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..codegen.numpy_backend import compile_program
from ..codegen.program import ProgramBuilder
from ..errors import ModelError, NotSupportedError
from ..mechanics.kinematics import TreeKinematics
from ..model.model import GROUND
from ..spatial import skew

__all__ = ["SystemBodies"]


class SystemBodies:
    """Point Jacobians (``point_jacobian``), quaternion normalization (``normalize``) and body poses (``poses``,
    ``pose``) of the model of ``equations`` (a :class:`kane.Equations` or a dynamics object holding one), in the
    independent speeds u (n_u,) of those equations; ``params`` (a mapping or vector of parameter values) fixes
    the parameters the kinematics uses (default: the model's values)."""

    def __init__(self, equations, params=None):
        equations = getattr(equations, "equations", equations)
        self.equations = equations
        model = self.model = equations.model
        self.names = tuple(b.name for b in model.bodies)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.n_q, self.n_full = model.n_q, model.n_u
        self.n_u = len(equations.u_independent)
        self._p = np.asarray(model.parameter_values(params), dtype=float)
        self._w = np.asarray(model.input_values(None), dtype=float)
        groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
        b = ProgramBuilder(groups, prefix="sb")
        named = model.name_constants(b.assign)
        kin = TreeKinematics(named, b)
        outs = {}
        for i in range(len(self.names)):
            V, v_rem = kin.point_partials(i, (0, 0, 0))
            W, w_rem = kin.angular_partials_in_ground(i)
            if any(sp.sympify(e) != 0 for e in list(v_rem) + list(w_rem)):
                raise NotSupportedError(f"contact rows: body {self.names[i]!r} moves with time on its own (a "
                                        f"rheonomic joint); the contact rows assume v_p = J u")
            outs[f"R{i}"] = sp.Matrix(kin.rotation_to_ground(i))
            outs[f"o{i}"] = list(kin.origin_in_ground(i))
            outs[f"J{i}"] = sp.Matrix.vstack(sp.Matrix(V), sp.Matrix(W))
        self._keys = tuple(outs)
        self._fn = compile_program(b.build(outs), list(self._keys))
        self._embedded = self.n_full != self.n_u
        self._u_full = compile_program(equations.program, ["u_full"]) if self._embedded else None
        self.description = f"point Jacobians of model {model.name!r} ({len(self.names)} bodies)"

    def _body(self, body: str) -> int:
        try:
            return self.index[body]
        except KeyError:
            raise ModelError(f"model {self.model.name!r}: no body {body!r} (bodies: {', '.join(self.names)})") \
                from None

    def _kinematics(self, q, t: float = 0.0) -> dict:
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.n_q,):
            raise ModelError(f"model {self.model.name!r}: expected q ({self.n_q},), got {q.shape}")
        vals = dict(zip(self._keys, self._fn(float(t), q, np.zeros(self.n_full), self._p, self._w)))
        if self._embedded:
            zero = np.asarray(self._u_full(float(t), q, np.zeros(self.n_u), self._p, self._w)[0], dtype=float)
            C = np.column_stack([np.asarray(self._u_full(float(t), q, e, self._p, self._w)[0], dtype=float) - zero
                                 for e in np.eye(self.n_u)]).reshape(self.n_full, self.n_u)
            vals["C"] = C
        return vals

    def poses(self, q, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(R_world (n_b, 3, 3), r_world (n_b, 3) [m]) of every body frame at q: the ``poses`` argument of
        :func:`kane.mechanics.collision.contacts`."""
        vals = self._kinematics(q, t)
        n = len(self.names)
        return (np.array([np.reshape(vals[f"R{i}"], (3, 3)) for i in range(n)]).reshape(n, 3, 3),
                np.array([np.reshape(vals[f"o{i}"], 3) for i in range(n)]).reshape(n, 3))

    def pose(self, q, body: str, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(o (3,) [m] the origin of ``body``'s frame, R_ground_body (3, 3)) at q."""
        i = self._body(body)
        vals = self._kinematics(q, t)
        return np.reshape(vals[f"o{i}"], 3).astype(float), np.reshape(vals[f"R{i}"], (3, 3)).astype(float)

    def point_jacobian(self, q, body: str, point_world, t: float = 0.0) -> np.ndarray:
        """J (3, n_u) with v_p = J u [m/s] for the point at ``point_world`` (3,) [m] fixed in ``body`` (zeros for
        ``"ground"``)."""
        if body == GROUND:
            return np.zeros((3, self.n_u))
        i = self._body(body)
        vals = self._kinematics(q, t)
        Jb = np.reshape(vals[f"J{i}"], (6, self.n_full)).astype(float)
        o = np.reshape(vals[f"o{i}"], 3).astype(float)
        J = Jb[:3] - skew(np.asarray(point_world, dtype=float) - o) @ Jb[3:]
        return J @ vals["C"] if self._embedded else J

    def normalize(self, q) -> np.ndarray:
        """q (n_q,) with every joint quaternion scaled to unit norm (the model's own normalization)."""
        return np.asarray(self.model.normalize_quaternions(np.array(q, dtype=float)), dtype=float)
