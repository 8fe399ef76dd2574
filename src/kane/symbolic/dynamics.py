"""``KaneDynamics``: Kane's compiled equations with the numeric interface of :class:`kane.protocol.Dynamics`.

State: q (n_q,) and the independent speeds u (n_u,). Parameters and inputs are arguments (a dict name -> value,
an array in model order, or None for the defaults), so a sweep never re-derives. Every method also accepts a
batch: q of shape (B, n_q) and u of shape (B, n_u) give results with a leading axis B.
"""

from __future__ import annotations

from functools import cached_property

import warnings

import numpy as np

from ..codegen.c_backend import BackendNotice, CCompileError, CFunction, select_backend
from ..codegen.numba_backend import NumbaFunction
from ..codegen.numpy_backend import compile_program
from ..errors import KaneError, NotSupportedError, SingularStateError
from ..mechanics.arguments import state_arrays
from ..protocol import Capabilities, model_quaternion_check, unsupported

__all__ = ["KaneDynamics", "SingularityWarning"]

_F64 = np.dtype(np.float64)


class SingularityWarning(UserWarning):
    """The state nears a configuration where the embedded equations are singular (see
    :meth:`KaneDynamics.dependent_block_monitor`)."""


def __getattr__(name):
    if name == "Dynamics":
        warnings.warn("kane.symbolic.dynamics.Dynamics is now KaneDynamics (kane.Dynamics is the protocol every "
                      "dynamics class satisfies); the old name goes in the next release", FutureWarning, stacklevel=2)
        return KaneDynamics
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class KaneDynamics:
    """Numeric equations of motion M(q) u' = f(q, u, t), q' = W(q) u + X, compiled from :class:`Equations`
    (satisfies :class:`kane.protocol.Dynamics`). ``description``: one line stored with runs ("" by default)."""

    description = ""

    def __init__(self, equations, backend: str = "numpy"):
        self.backend, notice = select_backend(backend)
        self._auto = backend in (None, "auto")
        if notice:
            warnings.warn(notice, BackendNotice, stacklevel=3)
        self.equations = equations
        self.model = equations.model
        self.n_q = self.model.n_q
        self.n_u = len(equations.u_independent)
        self.q_names = tuple(str(s) for s in self.model.q)
        self.u_names = tuple(str(s) for s in equations.u_independent)
        self.u_dependent_names = tuple(str(s) for s in equations.u_dependent)
        self._default_params = self.model.parameter_values()
        self._default_inputs = self.model.input_values()
        self._default_params.setflags(write=False)  # shared by every call: a compiled function may keep its
        self._default_inputs.setflags(write=False)  # constants for it without re-reading it
        self._fns = {}
        self._q_shape, self._u_shape = (self.n_q,), (self.n_u,)
        self._udot_one = None  # u' of one state, the function most often called (the simulators' hot path)

    # ---- compiled functions --------------------------------------------------------------------------------
    def _fn(self, key, outputs, batch, solve=False, full=False):
        k = (key, batch and self.backend == "numpy")  # the compiled backends take one state or a batch
        fn = self._fns.get(k)
        if fn is None:
            prog = self.equations.full_program if full else self.equations.program
            solve = ("M", "f", "udot") if solve else None
            if self.backend == "c":
                try:
                    fn = CFunction(prog, outputs, linear_solve=solve, rk4=key == "rhs")
                except CCompileError as exc:
                    if not self._auto:
                        raise
                    self.backend, notice = select_backend(None, why=str(exc))
                    warnings.warn(notice, BackendNotice, stacklevel=3)
                    return self._fn(key, outputs, batch, solve is not None, full)
            elif self.backend == "numba":
                fn = NumbaFunction(prog, outputs, linear_solve=solve)
            else:
                fn = compile_program(prog, outputs, batch=batch, linear_solve=solve)
            self._fns[k] = fn
        return fn

    def _plain(self, q, u, params, inputs) -> bool:
        """One state as contiguous float64 arrays of the right sizes, default parameters and inputs: nothing to
        check or convert (the fast path of a simulator's calls)."""
        return (params is None and inputs is None and type(q) is np.ndarray and type(u) is np.ndarray
                and q.dtype == _F64 and u.dtype == _F64 and q.shape == self._q_shape and u.shape == self._u_shape
                and q.flags.c_contiguous and u.flags.c_contiguous)

    def _args(self, q, u, params, inputs):
        if self._plain(q, u, params, inputs):
            return q, u, self._default_params, self._default_inputs, False
        p = self._default_params if params is None else self.model.parameter_values(params)
        w = self._default_inputs if inputs is None else self.model.input_values(inputs)
        q, u, batch = state_arrays(q, u, self.n_q, self.n_u)
        return q, u, p, w, batch

    # ---- the interface -------------------------------------------------------------------------------------
    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (n_q,) = W(q) u + X."""
        q, u, p, w, batch = self._args(q, u, params, inputs)
        return self._fn("qdot", ["qdot"], batch)(t, q, u, p, w)[0]

    def udot(self, t, q, u, params=None, inputs=None, tau=None) -> np.ndarray:
        """u' (n_u,): solves M u' = f by an unrolled LDL^T factorization; with ``tau`` (n_u,) extra generalized
        forces along the independent speeds, M u' = f + tau."""
        if tau is not None:
            M, f = self._mf(t, q, u, params, inputs, tau)
            return np.linalg.solve(M, f[..., None])[..., 0]
        if self._udot_one is not None and self._plain(q, u, params, inputs):
            return self._udot_one(t, q, u, self._default_params, self._default_inputs)[0]
        q, u, p, w, batch = self._args(q, u, params, inputs)
        fn = self._fn("udot", [], batch, solve=True)
        if not batch:  # a compiled function's unchecked entry for arguments known to be plain
            self._udot_one = getattr(fn, "one", fn)
        return fn(t, q, u, p, w)[0]

    def rhs(self, t, q, u, params=None, inputs=None, tau=None):
        """(q', u') in one evaluation: the right-hand side of the first-order ODE (``tau`` as for ``udot``)."""
        if tau is not None:
            return self.qdot(t, q, u, params, inputs), self.udot(t, q, u, params, inputs, tau)
        q, u, p, w, batch = self._args(q, u, params, inputs)
        return self._fn("rhs", ["qdot"], batch, solve=True)(t, q, u, p, w)

    def stepper(self, t, q, u, params=None, inputs=None):
        """A fixed-step RK4 integrator in C at (t, q, u) for the real-time loop (C backend only):
        ``stepper.step(n, dt, inputs)`` advances n steps in place, allocating nothing, the GIL released; its
        ``t``, ``q``, ``u`` are the state (see :class:`kane.codegen.c_backend.Stepper`)."""
        q, u, p, w, batch = self._args(q, u, params, inputs)
        if self.backend != "c" or batch:
            raise KaneError(f"stepper needs the C backend and one state (backend: {self.backend})")
        return self._fn("rhs", ["qdot"], False, solve=True).stepper(t, q, u, p, w)

    def mass_matrix(self, t, q, params=None) -> np.ndarray:
        """M (n_u, n_u) of the embedded equations [kg, kg m, kg m^2 by speed units]."""
        q, u, p, w, batch = self._args(q, None, params, None)
        return self._fn("M", ["M"], batch)(t, q, u, p, w)[0]

    def forcing(self, t, q, u, params=None, inputs=None, tau=None) -> np.ndarray:
        """f (n_u,) of M u' = f, plus ``tau`` (n_u,) when given."""
        q, u, p, w, batch = self._args(q, u, params, inputs)
        f = self._fn("f", ["f"], batch)(t, q, u, p, w)[0]
        return f if tau is None else f + self._tau(tau, f.shape)

    def _tau(self, tau, shape) -> np.ndarray:
        tau = np.asarray(tau, dtype=float)
        if tau.shape[-1:] != (self.n_u,):
            raise KaneError(f"tau: expected {self.n_u} generalized forces along the independent speeds "
                            f"({', '.join(self.u_names)}), got shape {tau.shape}")
        return np.broadcast_to(tau, shape)

    def _mf(self, t, q, u, params, inputs, tau=None):
        """(M, f + tau) in one evaluation."""
        q, u, p, w, batch = self._args(q, u, params, inputs)
        M, f = self._fn("Mf", ["M", "f"], batch)(t, q, u, p, w)
        return M, (f if tau is None else f + self._tau(tau, f.shape))

    def inverse_dynamics(self, t, q, u, udot, params=None, inputs=None) -> np.ndarray:
        """The generalized forces tau (n_u,) along the independent speeds that, added to the model's loads,
        produce the rates ``udot`` (n_u,) of the independent speeds: tau = M u' - f (the constraint forces of the
        embedded constraints never appear: they do no work along the independent speeds)."""
        M, f = self._mf(t, q, u, params, inputs)
        udot = np.asarray(udot, dtype=float)
        if udot.shape[-1:] != (self.n_u,):
            raise KaneError(f"udot: expected the rates of the {self.n_u} independent speeds "
                            f"({', '.join(self.u_names)}), got shape {udot.shape}")
        return (M @ udot[..., None])[..., 0] - f

    def full_speeds(self, t, q, u, params=None) -> np.ndarray:
        """All speeds of the model (n_u of the model), the dependent ones from u_dep = D u + E."""
        q, u, p, w, batch = self._args(q, u, params, None)
        return self._fn("u_full", ["u_full"], batch)(t, q, u, p, w)[0]

    def kinetic_energy(self, t, q, u, params=None) -> float:
        """Kinetic energy [J] from the bodies' velocities."""
        q, u, p, w, batch = self._args(q, u, params, None)
        return self._fn("ke", ["kinetic"], batch)(t, q, u, p, w)[0][..., 0]

    def potential_energy(self, t, q, params=None) -> float:
        """Potential energy [J] of gravity and springs (raises if a load's potential is unknown)."""
        if not self.equations.has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        q, u, p, w, batch = self._args(q, None, params, None)
        return self._fn("pe", ["potential"], batch)(t, q, u, p, w)[0][..., 0]

    def power(self, t, q, u, params=None, inputs=None) -> float:
        """Power [W] of the loads that have no potential (forces, torques, inputs, dampers, joint actuators): along
        a motion E' equals it, so its integral is the work that changes the energy (the work-energy balance of a
        driven system). Raises NotImplementedError where the potential energy is not known."""
        if not self.equations.has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: the power of the loads "
                                      "without one is not defined")
        q, u, p, w, batch = self._args(q, u, params, inputs)
        return self._fn("power", ["power"], batch)(t, q, u, p, w)[0][..., 0]

    def energy(self, t, q, u, params=None) -> float:
        """Total mechanical energy [J] (kinetic + potential): a float at one state, (N,) at N states (t (N,) or a
        float, q (N, n_q), u (N, n_u)), both parts in one evaluation."""
        if not self.equations.has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        q, u, p, w, batch = self._args(q, u, params, None)
        kinetic, potential = self._fn("energy", ["kinetic", "potential"], batch)(t, q, u, p, w)
        return kinetic[..., 0] + potential[..., 0]

    def energy_rows(self, params=None):
        """A function (t (B,), q (B, n_q), u (B, n_u)) -> energy (B,) [J] at these parameters, as :meth:`energy`
        but with the least overhead a call (C backend: one RowEvaluator call; q, u may be strided views)."""
        if not self.equations.has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        if self.backend != "c":
            return lambda t, q, u: self.energy(t, q, u, params)
        p = self._default_params if params is None else self.model.parameter_values(params)
        rows = self._fn("energy", ["kinetic", "potential"], True).rows(p, self._default_inputs)
        return lambda t, q, u: rows(t, q, u).sum(axis=1)

    def constraints(self, t, q, params=None):
        """(A, b) (m x n_u_model, m) of every declared constraint, A u_full + b = 0, at q."""
        q, _, p, w, batch = self._args(q, None, params, None)
        u_full = np.zeros(q.shape[:-1] + (self.model.n_u,))
        return self._fn("Ab", ["A", "b"], batch, full=True)(t, q, u_full, p, w)

    def constraint_residual(self, t, q, u, params=None) -> np.ndarray:
        """A u_full + b of every declared constraint (zero for the embedded ones up to round-off)."""
        q, u, p, w, batch = self._args(q, u, params, None)
        return self._fn("res", ["constraint_residual"], batch)(t, q, u, p, w)[0]

    def configuration_residual(self, t, q, params=None) -> np.ndarray:
        """C(q) of the holonomic constraints (loop closures, contact heights) [m]."""
        q, u, p, w, batch = self._args(q, None, params, None)
        return self._fn("C", ["C"], batch)(t, q, u, p, w)[0]

    def constraint_forces(self, t, q, u, params=None, inputs=None) -> dict:
        """Multipliers of the embedded (permanent) constraints, name -> (m,) array: the generalized constraint
        forces A^T lambda of each constraint's rows, from the unconstrained equations M u' = f + A^T lambda with
        A u' + (A' u + b') = 0 (the kinetostatic equations; units of force per speed row). Rows dropped as
        redundant (``derive(..., redundant="drop")``) are NaN: their share of the force is not defined."""
        if "M" not in self.equations.full_program.outputs:
            raise NotSupportedError("KaneDynamics does not provide constraint_forces for these equations: they hold "
                                    "no unconstrained M and f (a sympy KanesMethod with dependent speeds, imported "
                                    "by kane.from_sympy, keeps only the embedded ones)")
        q, u, p, w, batch = self._args(q, u, params, inputs)
        if batch:
            raise KaneError("constraint_forces takes one state at a time")
        layout = self.equations.constraint_layout
        rows = [r for b in layout.values() if not b.transient for r in range(b.rows.start, b.rows.stop)]
        kept = list(self.equations.embedding.rows) if rows else []  # rows dropped as redundant have no multiplier
        u_full = self.full_speeds(t, q, u, params)
        M, f, A, bias = self._fn("kkt", ["M", "f", "A", "A_bias"], False, full=True)(t, q, u_full, p, w)
        A, bias = A[[rows[k] for k in kept]], bias[[rows[k] for k in kept]]
        m, n = A.shape
        K = np.zeros((n + m, n + m))
        K[:n, :n], K[:n, n:], K[n:, :n] = M, -A.T, A
        sol = np.linalg.lstsq(K, np.concatenate([f, -bias]), rcond=None)[0]
        lam = np.full(len(rows), np.nan)
        lam[kept] = sol[n:]
        out, k = {}, 0
        for name, b in layout.items():
            if not b.transient:
                size = b.rows.stop - b.rows.start
                out[name] = lam[k:k + size]
                k += size
        return out

    def holonomic_rows(self, t, q, params=None):
        """(C, A_C, W): the holonomic residuals C(q) (m,), their velocity rows A_C (m x n_u of the model) with
        C' = A_C u_full, and the kinematic map W (n_q x n_u of the model) with q' = W u_full + X."""
        q, _, p, w, batch = self._args(q, None, params, None)
        u_full = np.zeros(q.shape[:-1] + (self.model.n_u,))
        return self._fn("holo", ["C", "A_C", "W"], batch, full=True)(t, q, u_full, p, w)

    def dependent_block_condition(self, t, q, params=None) -> float:
        """Condition of the dependent-speed block of the permanent constraint rows A at q (n_q,): the largest
        singular value of the rows over the smallest of their block in the dependent speeds (1.0 without dependent
        speeds; >= 1). u_dep = D u_ind + E solves with that block, so where this grows without bound (a fallen
        bicycle, a disk lying flat, a knife edge turned across the chosen speed) the dependent speeds cannot be
        solved for and the equations lose accuracy."""
        choice = self.equations.embedding
        if not self.u_dependent_names:
            return 1.0
        layout = self.equations.constraint_layout
        rows = [r for b in layout.values() if not b.transient for r in range(b.rows.start, b.rows.stop)]
        A = self.constraints(t, q, params)[0][[rows[k] for k in choice.rows]]
        smallest = np.linalg.svd(A[:, list(choice.dependent)], compute_uv=False)[-1]
        return float(np.linalg.norm(A, 2) / smallest) if smallest > 0 else np.inf

    def dependent_block_monitor(self, warn_at: float = 1e6, stop_at: float = 1e12):
        """A monitor ``f(t, q, u) -> condition number`` for :class:`kane.simulate.Simulator`: it warns once
        (:class:`SingularityWarning`) when the dependent-speed block's condition number passes ``warn_at`` and
        stops the run (a :class:`kane.errors.SingularStateError`, saved by the simulator with the state) past
        ``stop_at``, naming the dependent speeds and the configuration."""
        warned = []

        def monitor(t, q, u):
            cond = self.dependent_block_condition(t, q)
            if cond > min(warn_at, stop_at):
                where = (f"the block of the dependent speeds {', '.join(self.u_dependent_names)} has condition "
                         f"number {cond:.3g} at t = {t:.9g}, q = " + ", ".join(
                             f"{n}={v:.6g}" for n, v in zip(self.q_names, q)))
                if cond > stop_at:
                    raise SingularStateError(f"{where}: they cannot be solved for here; derive with other dependent "
                                             "speeds (dependent=[...]) or let kane.switching.OnlineDynamics "
                                             "re-select them during the run", quantity="dependent_block")
                if not warned:
                    warned.append(t)
                    warnings.warn(f"{where} (above {warn_at:g}): accuracy is being lost", SingularityWarning,
                                  stacklevel=2)
            return cond

        return monitor

    @cached_property
    def dependent_indices(self) -> tuple:
        """Indices (in the model's speeds) of the dependent speeds of the embedded equations."""
        names = [str(s) for s in self.model.u]
        return tuple(names.index(n) for n in self.u_dependent_names)

    @cached_property
    def parameter_names(self) -> tuple:
        return tuple(str(s) for s in self.model.parameters)

    @cached_property
    def input_names(self) -> tuple:
        return tuple(str(s) for s in self.model.inputs)

    # ---- the rest of the kane.protocol.Dynamics interface ------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """Energy where every load has a potential; M, f, constraint forces and rows (0 rows where none are
        declared); the compiled loop with the C backend."""
        c = self.backend == "c"
        return Capabilities(energy=bool(self.equations.has_potential), mass_matrix=True, forcing=True,
                            constraint_forces="M" in self.equations.full_program.outputs, holonomic=True,
                            motion_constraints=True, projection=False, compiled_loop=c,
                            compiled_loop_reason="" if c else f"backend {self.backend!r}, not 'c'")

    def motion_rows(self, t, q, params=None):
        """(A, b) of every declared constraint, A u_full + b = 0 (as :meth:`constraints`)."""
        return self.constraints(t, q, params)

    make_projection = unsupported("make_projection", "Kane's equations are projected by kane.simulate's "
                                  "assembly from holonomic_rows (kane.simulate.make_projection)")

    check_quaternions = model_quaternion_check

    def loop_function(self):
        """The C right-hand side (q', u') with the LDL^T solve, compiled once (C backend only)."""
        fn = self._fn("rhs", ["qdot"], False, solve=True) if self.backend == "c" else None
        if not isinstance(fn, CFunction):
            raise NotSupportedError(f"KaneDynamics does not provide loop_function: backend {self.backend!r}, "
                                    "not 'c'")
        return fn
