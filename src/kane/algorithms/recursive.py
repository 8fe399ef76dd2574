"""Numeric dynamics of trees by the recursive spatial algorithms (Featherstone 2008, ch. 5-7; seed 001 §2.5, §3).

The recursive algorithms (:mod:`.rnea`, :mod:`.crba`, :mod:`.aba`) are written once over sympy scalars: every
quantity they form is named by a :class:`kane.codegen.ProgramBuilder` as it is formed, so running an algorithm
once on a model *traces* its forward and backward passes into a straight-line :class:`kane.codegen.Program`, with
the algorithm's own operation order (nothing is re-associated: each intermediate is a named variable). The numpy
backend then compiles the Program for one state or for a batch; the optional numba backend
(:class:`NumbaFunction`) compiles the same Program to machine code. :class:`RecursiveDynamics` offers the result
with the interface of :class:`kane.Dynamics`.

Conventions (frames, spatial vectors, the Program's input groups) are those of :mod:`.trace`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import sympy as sp

from ..codegen.c_backend import CFunction
from ..codegen.numba_backend import NumbaFunction
from ..codegen.numpy_backend import compile_program
from ..codegen.program import Program
from ..errors import ArgumentError, KaneError, ModelError
from ..mechanics.arguments import state_arrays
from ..mechanics.constraints import constraint_rows
from ..options import Formulation
from ..protocol import Capabilities, model_quaternion_check, unsupported
from .aba import trace_aba
from .crba import trace_forward_dynamics
from .rnea import trace_rnea
from .trace import Trace

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.system import System

__all__ = ["RecursiveDynamics", "TreeMembers"]


def deprecated_algorithm(stacklevel: int = 3) -> type[Formulation]:
    """The name ``Algorithm`` (deprecated until kane 0.3, CHANGELOG.md): :class:`kane.Formulation`, the one enum of
    formulations, with a FutureWarning at the user's line (``stacklevel`` frames up)."""
    warnings.warn("kane.algorithms.Algorithm is deprecated and goes away in kane 0.3; use kane.Formulation "
                  "(Algorithm.ABA is Formulation.ABA, Algorithm.KANE_MATRIX is Formulation.KANE_MATRIX)",
                  FutureWarning, stacklevel=stacklevel)
    return Formulation


def __getattr__(name: str):
    """``Algorithm``: :func:`deprecated_algorithm`."""
    if name == "Algorithm":
        return deprecated_algorithm()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- the numeric Dynamics interface -------------------------------------------------------------------------

class TreeMembers:
    """The :class:`kane.protocol.Dynamics` members shared by the dynamics of an unconstrained tree
    (:class:`RecursiveDynamics`, :class:`kane.algorithms.kernel.KernelDynamics`): the motion rows are its
    ``constraints(t, q, params)``; no holonomic rows, constraint forces, projection or compiled loop."""

    description = ""

    def _name_layout(self, m) -> None:
        """Sizes and names of the tree ``m``'s q, u, joints, parameters and inputs (no dependent speeds)."""
        self.n_q, self.n_u = m.n_q, m.n_u
        self.q_names = tuple(str(s) for s in m.q)
        self.u_names = tuple(str(s) for s in m.u)
        self.joint_names = tuple(pj.name for pj in m.joints)
        self.parameter_names = tuple(str(s) for s in m.parameters)
        self.input_names = tuple(str(s) for s in m.inputs)
        self.dependent_indices = ()

    def motion_rows(self, t, q, params=None):
        """(A, b) of the transient constraints, A u + b = 0 (as ``constraints``)."""
        return self.constraints(t, q, params)

    holonomic_rows = unsupported("holonomic_rows", "the recursive algorithms run an unconstrained tree")
    constraint_forces = unsupported("constraint_forces", "the recursive algorithms impose no constraint")
    make_projection = unsupported("make_projection", "the recursive algorithms impose no constraint")
    loop_function = unsupported("loop_function", "the C loop runs Kane's equations only")
    check_quaternions = model_quaternion_check


class RecursiveDynamics(TreeMembers):
    """Numeric dynamics of an unconstrained tree by the recursive algorithms, with the interface of
    :class:`kane.Dynamics`: ``qdot``, ``udot``, ``rhs``, ``mass_matrix``, ``forcing``, ``kinetic_energy``,
    ``potential_energy``, ``energy``, plus ``inverse_dynamics`` and ``joint_forces`` (RNEA).

    State: q (n_q,) and u (n_u,) of the model; every method also takes a batch, q (B, n_q) and u (B, n_u).
    Parameters and inputs are arguments as in :class:`kane.Dynamics`. ``tau`` (n_u,) are extra generalized forces
    along the speeds (joint torques [N m] / forces [N] for joint rates), added to the model's own loads.

    method: :class:`kane.Formulation` ABA or CRBA (or "aba" / "crba") for ``udot``. backend: "numpy" (generated
    Python, vectorized over a batch), "numba" (machine code from the same Program; needs the numba package) or "c"
    (the same Program as C, compiled by the system C compiler and cached on disk: :mod:`kane.codegen.c_backend`).
    Each algorithm is traced on first use and compiled once per output set.
    """

    def __init__(self, model: Model | System, method: Formulation | str = Formulation.ABA, *,
                 backend: str = "numpy"):
        import numpy as np

        self._np = np
        try:
            method = Formulation.parse(method)
        except ArgumentError:
            raise ModelError(f"RecursiveDynamics: method {method!r}; expected kane.Formulation.ABA or .CRBA (or "
                             "'aba' / 'crba')") from None
        if method not in (Formulation.ABA, Formulation.CRBA):
            raise ModelError(f"RecursiveDynamics: method {method.name} has its own class: use "
                             "kane.algorithms.NOCDynamics, kane.algorithms.KaneMatrixDynamics or kane.dynamics(...)")
        self.method = method
        if backend not in ("numpy", "numba", "c"):
            raise ModelError(f"RecursiveDynamics: backend {backend!r}; expected 'numpy', 'numba' or 'c'")
        if backend == "numba":
            import numba  # noqa: F401 - fail early with ImportError when numba is missing
        self.backend = backend
        self.trace = Trace(model)
        self.model = m = self.trace.model
        self._name_layout(m)
        self._p0, self._w0 = m.parameter_values(), m.input_values()
        self._inp0 = np.concatenate([self._w0, np.zeros(2 * self.n_u)])
        self._fns = {}
        self._udot_key = (f"udot_{self.method.value}",)

    # ---- tracing and compiling on demand --------------------------------------------------------------------
    def _trace(self, name):

        tr = self.trace
        if name in tr.outputs:
            return
        if name == "udot_aba":
            tr.outputs[name] = trace_aba(tr)
        elif name in ("M", "f", "udot_crba"):
            H, f, udot = trace_forward_dynamics(tr)
            tr.outputs.update(M=H, f=f, udot_crba=udot)
        elif name in ("tau", "joint_forces"):
            tau, forces = trace_rnea(tr, tr.udot)
            tr.outputs.update(tau=tau, joint_forces=forces)
        elif name in ("kinetic", "potential"):
            tr.energies()
            if name not in tr.outputs:
                raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        elif name in ("A", "b"):

            rows = [constraint_rows(self.model, tr.kin, c) for c in self.model.constraints]
            tr.outputs["A"] = sp.Matrix.vstack(*[r.A for r in rows]) if rows else sp.zeros(0, self.n_u)
            tr.outputs["b"] = list(sp.Matrix.vstack(*[r.b for r in rows])) if rows else []

    def _fn(self, names, batch):
        key = (names, batch)
        fn = self._fns.get(key)
        if fn is None:
            for name in names:
                self._trace(name)
            if self.backend == "numba":  # one kernel per output (compiled once, cached on disk), composed
                parts = [self._fns.get((name,)) or self._fns.setdefault((name,), NumbaFunction(
                    self.trace.program((name,)), (name,))) for name in names]
                fn = parts[0] if len(parts) == 1 else (
                    lambda t, q, u, p, w: tuple(f(t, q, u, p, w)[0] for f in parts))
            elif self.backend == "c":  # one library per output set, for one state or a batch
                fn = self._fns.get((names, not batch)) or CFunction(self.trace.program(names), names)
            else:
                fn = compile_program(self.trace.program(names), names, batch=batch)
            self._fns[key] = fn
        return fn

    def program(self, names) -> Program:
        """The traced Program of the given outputs: "udot_aba", "udot_crba", "M", "f", "tau", "joint_forces",
        "qdot", "kinetic", "potential", "A", "b" (inputs as described in :mod:`kane.algorithms.recursive`)."""
        names = tuple(names)
        for name in names:
            self._trace(name)
        return self.trace.program(names)

    def _call(self, names, t, q, u, params=None, inputs=None, tau=None, udot=None):
        np = self._np
        q, u, batch = state_arrays(q, u, self.n_q, self.n_u)
        p = self._p0 if params is None else self.model.parameter_values(params)
        inp = self._inp0
        if inputs is not None or tau is not None or udot is not None or batch:
            inp = np.tile(inp, q.shape[:-1] + (1,)) if batch else inp.copy()  # (model inputs, tau, udot)
            nw, n = len(self._w0), self.n_u
            if inputs is not None:
                inp[..., :nw] = self.model.input_values(inputs)
            if tau is not None:
                inp[..., nw:nw + n] = tau
            if udot is not None:
                inp[..., nw + n:] = udot
        return self._fn(names, batch)(t, q, u, p, inp)

    def evaluate(self, names, t, q, u, params=None, inputs=None, tau=None, udot=None) -> dict:
        """Several outputs from one compiled function (their shared kinematics evaluated once): ``names`` among
        "udot_aba", "udot_crba", "M", "f", "tau", "joint_forces" (n_bodies, 6), "qdot", "kinetic", "potential",
        "A", "b"; ``udot`` feeds "tau" and "joint_forces". Returns a dict name -> array."""
        names = tuple(names)
        return dict(zip(names, self._call(names, t, q, u, params, inputs, tau, udot)))

    # ---- the Dynamics interface -----------------------------------------------------------------------------
    def qdot(self, t, q, u, params=None, inputs=None):
        """q' (n_q,) = W(q) u + X."""
        return self._call(("qdot",), t, q, u, params, inputs)[0]

    def udot(self, t, q, u, params=None, inputs=None, tau=None):
        """u' (n_u,) by the chosen algorithm (ABA, or CRBA and Cholesky), with extra generalized forces ``tau``."""
        return self._call(self._udot_key, t, q, u, params, inputs, tau)[0]

    def rhs(self, t, q, u, params=None, inputs=None, tau=None):
        """(q', u') in one evaluation."""
        return self._call(("qdot",) + self._udot_key, t, q, u, params, inputs, tau)

    #: names of the traced outputs that ``mass_matrix`` and ``forcing`` return (each formulation its own)
    M_OUTPUT, F_OUTPUT = "M", "f"

    def mass_matrix(self, t, q, params=None):
        """The joint-space inertia H (n_u, n_u) [kg, kg m, kg m^2 by speed units], by this formulation (CRBA here)."""
        return self._call((self.M_OUTPUT,), t, q, None, params)[0]

    def forcing(self, t, q, u, params=None, inputs=None, tau=None):
        """f (n_u,) of H u' = f: minus inverse dynamics at u' = 0 (gravity, velocity products, loads, tau)."""
        return self._call((self.F_OUTPUT,), t, q, u, params, inputs, tau)[0]

    def inverse_dynamics(self, t, q, u, udot, params=None, inputs=None):
        """RNEA: the generalized forces tau (n_u,) that, added to the model's loads, produce u' = ``udot``."""
        return self._call(("tau",), t, q, u, params, inputs, None, udot)[0]

    def joint_forces(self, t, q, u, udot, params=None, inputs=None) -> dict:
        """The spatial force each joint transmits at (q, u, u'), by RNEA's inward pass: joint name -> (6,) (or
        (B, 6)) array (moment about M's origin [N m], force [N]) in the joint's child frame M, exerted by the
        parent on the child (constraint reaction plus the joint's actuation)."""
        F = self._call(("joint_forces",), t, q, u, params, inputs, None, udot)[0]
        return {name: F[..., i, :] for i, name in enumerate(self.joint_names)}

    def joint_force_monitors(self, joints=None, params=None, inputs=None) -> dict:
        """Monitors for :func:`kane.simulate` that record the joint reaction forces with every sample: name
        ``"<joint>.<component>"`` (components mx my mz [N m], fx fy fz [N] in the joint's frame M) -> f(t, q, u).
        The six components of a sample share one forward- and inverse-dynamics evaluation."""
        names = tuple(self.joint_names if joints is None else joints)
        unknown = [n for n in names if n not in self.joint_names]
        if unknown:
            raise KaneError(f"joint_force_monitors: unknown joints {unknown}; joints: {', '.join(self.joint_names)}")
        last = {}

        def forces(t, q, u):
            key = (float(t), q.tobytes(), u.tobytes())
            if last.get("key") != key:
                w = inputs(t, q, u) if callable(inputs) else inputs
                ud = self.udot(t, q, u, params=params, inputs=w)
                last["key"], last["F"] = key, self.joint_forces(t, q, u, ud, params=params, inputs=w)
            return last["F"]

        def component(name, k):
            return lambda t, q, u: float(forces(t, q, u)[name][k])

        labels = ("mx", "my", "mz", "fx", "fy", "fz")
        return {f"{n}.{c}": component(n, k) for n in names for k, c in enumerate(labels)}

    def kinetic_energy(self, t, q, u, params=None):
        """Kinetic energy [J] from the bodies' spatial velocities."""
        return self._call(("kinetic",), t, q, u, params)[0][..., 0]

    def potential_energy(self, t, q, params=None):
        """Potential energy [J] of gravity, springs and joint springs."""
        return self._call(("potential",), t, q, None, params)[0][..., 0]

    def energy(self, t, q, u, params=None):
        """Total mechanical energy [J]."""
        return self.kinetic_energy(t, q, u, params) + self.potential_energy(t, q, params)

    def constraints(self, t, q, params=None):
        """(A, b) of the model's transient constraints, A u + b = 0 (0 rows when none are declared)."""
        return self._call(("A", "b"), t, q, None, params)

    # ---- the rest of the kane.protocol.Dynamics interface (with TreeMembers) -----------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """M and f, the transient constraints' rows, energy where every load has a potential; no holonomic rows,
        constraint forces or projection (an unconstrained tree) and no compiled loop (it runs Kane's equations)."""
        try:
            self._trace("potential")
            energy = True
        except NotImplementedError:
            energy = False
        return Capabilities(energy=energy, mass_matrix=True, forcing=True, motion_constraints=True,
                            compiled_loop_reason=f"the C loop runs Kane's equations only, not {type(self).__name__}")

