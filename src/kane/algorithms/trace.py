"""One model set up for tracing the recursive spatial algorithms (Featherstone 2008, ch. 5-7; seed 001 §2.5, §3).

Conventions are those of :mod:`kane.mechanics.kinematics` and :mod:`kane.spatial`: per body i, motion vectors
(omega, v at the origin) and force vectors (moment about the origin, force) in body axes; ``X_i`` carries motion
vectors from the parent's axes to body i's (``kin.motion_to_child``), ``X_i^T`` carries forces back
(``kin.force_to_parent``); gravity enters as the fictitious acceleration a_0 = (0, -g) of the ground.

The Program's input groups are t, q, u, params and ``inputs`` = (the model's inputs, then ``tau`` (n_u) generalized
forces applied along the speeds, then ``udot`` (n_u) the speed derivatives that inverse dynamics takes).
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import Program
from ..codegen.trace import ZERO, TraceBuilder, traced_dot, imul
from ..errors import ModelError
from ..mechanics.inertia import body_inertia
from ..mechanics.composite import newton_euler_force
from ..mechanics.kinematics import TreeKinematics, crm
from ..mechanics.loads import applied_body_forces, energy_expressions, joint_generalized_forces
from ..model.model import KaneSymbol, Model
from ..model.system import System

__all__ = ["Trace", "tree_model", "rigid_inertia"]


def tree_model(model: Model | System) -> Model:
    """The frozen Model of ``model`` (a System is compiled), checked to be an unconstrained tree.

    Raises :class:`kane.ModelError` if the model declares permanent constraints: those are embedded by the
    symbolic path, ``kane.derive(...)``. Transient constraints only add rows A, b and are accepted.
    """
    if isinstance(model, System):
        model = model.compile()
    if not isinstance(model, Model):
        raise ModelError(f"recursive algorithms: expected a kane.System or kane.Model, got {type(model).__name__}")
    permanent = [c.name for c in model.constraints if not c.transient]
    if permanent:
        raise ModelError(f"model {model.name!r}: the recursive algorithms (RNEA, CRBA, ABA) take unconstrained "
                         f"trees, but it declares permanent constraint(s) {', '.join(map(repr, permanent))}; "
                         "use kane.derive(...).compile() to embed them, or declare them transient=True")
    return model


def rigid_inertia(model: Model, i: int) -> list:
    """Spatial inertia (6 x 6 nested lists) of body i about its origin in its axes: [[Ibar, h x], [(h x)^T, m 1]]
    with h = m c (parameters and constants only)."""
    I = body_inertia(model, i)
    h, m, z = I.h, I.m, ZERO
    hx = [[z, -h[2], h[1]], [h[2], z, -h[0]], [-h[1], h[0], z]]
    top = [[I.Ibar[r, c] for c in range(3)] + hx[r] for r in range(3)]
    bottom = [[hx[c][r] for c in range(3)] + [m if c == r else z for c in range(3)] for r in range(3)]
    return top + bottom


class Trace:
    """One model set up for tracing: its builder, kinematics and the per-body quantities every algorithm uses.

    Per body i (parent-before-child order): ``S(i)`` (6 x nu_i) motion subspace in body axes, ``kin.vel[i]`` (6,)
    spatial velocity, ``c[i]`` (6,) the joint's velocity-product acceleration (S' u + sigma' + v_i x v_J), ``I[i]``
    (6 x 6 nested lists) rigid-body inertia, ``f_ext[i]`` (6,) applied forces other than gravity; ``Q`` (n_u,) the
    generalized forces of joint loads plus the ``tau`` inputs. ``outputs`` collects named results (dict).
    """

    def __init__(self, model: Model | System):
        self.model = model = tree_model(model)
        n = model.n_u
        self.tau = tuple(KaneSymbol(f"_tau{k}") for k in range(n))
        self.udot = tuple(KaneSymbol(f"_udot{k}") for k in range(n))
        self.groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters,
                       "inputs": tuple(model.inputs) + self.tau + self.udot}
        self.b = b = TraceBuilder(self.groups)
        self.kin = kin = TreeKinematics(model, b)
        self.c = []
        for i, pj in enumerate(model.joints):
            # the joint's relative twist v_J = S u + sigma in body axes, its rate at u' = 0, plus v_i x v_J
            S_c, u_j = kin.S[i], list(model.u[pj.u_slice])
            rel = [b.assign(traced_dot(S_c.row(r), u_j) + kin.sigma[i][r]) for r in range(6)]
            vxr = crm(kin.vel[i], rel)
            self.c.append([b.assign(b.time_derivative(x) + y) for x, y in zip(rel, vxr)])
        self.a0 = [sp.S.Zero] * 3 + [-g for g in model.gravity]
        self.I = [rigid_inertia(model, i) for i in range(model.n_bodies)]
        self.f_ext = applied_body_forces(model, kin)
        Q = joint_generalized_forces(model, kin)
        self.Q = [b.assign(Q[k] + self.tau[k]) for k in range(n)]
        self.outputs = {"qdot": list(kin.qdot)}

    def S(self, i) -> sp.Matrix:
        return self.kin.S[i]

    def cols(self, i) -> range:
        """Indices of joint i's speeds in the system's u."""
        return range(self.model.n_u)[self.model.joints[i].u_slice]

    def bias_force(self, i, a_i) -> list:
        """I_i a_i + v_i x* I_i v_i - f_ext_i (6,): the force body i needs for acceleration a_i (Newton-Euler)."""
        b, I = self.b, self.I[i]
        return newton_euler_force(b, lambda s: imul(b, I, s), self.kin.vel[i], a_i, self.f_ext[i])

    def energies(self):
        """Adds outputs "kinetic" [J] and, when every load has a potential, "potential" [J]."""
        if "kinetic" not in self.outputs:
            ke, pe = energy_expressions(self.model, self.kin)
            self.outputs["kinetic"] = [ke]
            if pe is not None:
                self.outputs["potential"] = [pe]

    def program(self, names) -> Program:
        """A Program with the named outputs traced so far (vectors for lists, matrices for sympy matrices)."""
        return self.b.build({k: self.outputs[k] for k in names})
