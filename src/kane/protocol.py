"""The ``Dynamics`` protocol: what every dynamics object offers a run, and its ``Capabilities`` (issue 28).

Every formulation (Kane's compiled equations, the recursive algorithms, absolute coordinates, on-line embedding,
bodies rolling on terrain) satisfies :class:`Dynamics`, so a caller (``kane.run``, the simulator, the command
line) asks ``dynamics.capabilities`` what it may call instead of probing attributes. A member whose capability is
False raises :class:`kane.errors.NotSupportedError` naming the class, the capability and why.

State: q (n_q,) the coordinates, u (n_u,) the (independent) speeds; t [s]. ``params``: a mapping name -> value,
an array in ``parameter_names`` order, or None for the defaults; ``inputs`` likewise over ``input_names``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kane.errors import NotSupportedError

__all__ = ["Capabilities", "Dynamics", "Projection", "unsupported", "model_quaternion_check", "CAPABILITY_MEMBERS"]

Projection = Callable[[float, Any, Any], tuple[Any, Any]]
"""``projection(t [s], q (n_q,), u (n_u,)) -> (q, u)``: the state put back onto the constraints."""


@dataclass(frozen=True)
class Capabilities:
    """What a dynamics object provides beyond ``qdot`` and ``udot`` (which every one has).

    energy: ``energy`` [J] is defined (every load has a potential). mass_matrix / forcing: M (n_u, n_u) and f
    (n_u,) of M u' = f. constraint_forces: multipliers of its constraints. holonomic: ``holonomic_rows`` gives
    C(q) and its Jacobian (0 rows where the model declares none). motion_constraints: ``motion_rows`` gives A u + b.
    projection: ``make_projection`` gives its own projection onto the constraints. compiled_loop:
    ``loop_function`` gives the C right-hand side the compiled loop runs; ``compiled_loop_reason`` says why not
    when it is False ("" when True). steps_itself: its runs change what is integrated as they go (constraint
    switching), so :func:`kane.run` does not build a Simulator of it but steps the object its
    ``stepper(state, options, writer, params, inputs)`` returns (members ``step()``, ``run(t_end)``,
    ``finish()``, ``t``, ``terminated``, ``stats``, ``record_loop(loop, reason)``), in the Python loop.
    """

    energy: bool = False
    mass_matrix: bool = False
    forcing: bool = False
    constraint_forces: bool = False
    holonomic: bool = False
    motion_constraints: bool = False
    projection: bool = False
    compiled_loop: bool = False
    compiled_loop_reason: str = "it has no compiled right-hand side"
    steps_itself: bool = False


CAPABILITY_MEMBERS = {"energy": "energy", "mass_matrix": "mass_matrix", "forcing": "forcing",
                      "constraint_forces": "constraint_forces", "holonomic": "holonomic_rows",
                      "motion_constraints": "motion_rows", "projection": "make_projection",
                      "compiled_loop": "loop_function"}
"""Capability field -> the protocol method it governs (that method raises NotSupportedError when it is False)."""


def unsupported(capability: str, why: str) -> Callable[..., Any]:
    """A method that raises :class:`NotSupportedError` naming its class, ``capability`` and ``why`` (for a class
    body: ``mass_matrix = unsupported("mass_matrix", "absolute coordinates solve for accelerations directly")``)."""

    def method(self, *args, **kwargs):
        raise NotSupportedError(f"{type(self).__name__} does not provide {capability}: {why}")

    method.__name__ = capability
    method.__doc__ = f"Not provided by this formulation ({why}): raises NotSupportedError."
    return method


def model_quaternion_check(self, q, what: str = "q0") -> None:
    """``check_quaternions`` of a dynamics object whose q (n_q,) are its ``model``'s joint coordinates: the model's
    check (a :class:`kane.errors.ModelError` naming the joint and ``what`` for a quaternion not of unit norm)."""
    self.model.check_quaternions(q, what)


@runtime_checkable
class Dynamics(Protocol):
    """The numeric interface of every dynamics object (see the module docstring for states and arguments).

    Attributes: ``n_q``, ``n_u`` (sizes of q and u), ``q_names`` (n_q,), ``u_names`` (n_u,), ``parameter_names``,
    ``input_names`` (tuples of str), ``description`` (one line stored with runs), ``capabilities``
    (:class:`Capabilities`).
    """

    def __new__(cls, *args, **kwargs):
        """Deprecated until kane 0.3 (CHANGELOG.md): ``kane.Dynamics(equations, backend=...)``, the class of
        Kane's compiled equations before it was renamed :class:`kane.KaneDynamics`, warns and returns that class's
        object. Implementations (subclasses) are made as usual."""
        if cls is not Dynamics:
            return super().__new__(cls)
        warnings.warn("kane.Dynamics(equations, ...) is deprecated and goes away in kane 0.3: kane.Dynamics is the "
                      "protocol every dynamics class satisfies; Kane's compiled equations are "
                      "kane.KaneDynamics(equations, backend=...) or equations.compile(backend)", FutureWarning,
                      stacklevel=2)
        import kane  # the package's front door (lazy): the class sits above this module

        return kane.KaneDynamics(*args, **kwargs)

    n_q: int
    n_u: int
    q_names: tuple[str, ...]
    u_names: tuple[str, ...]
    parameter_names: tuple[str, ...]
    input_names: tuple[str, ...]
    description: str

    @property
    def capabilities(self) -> Capabilities:
        """What this object provides (:class:`Capabilities`)."""

    def qdot(self, t: float, q, u, params=None, inputs=None):
        """q' (n_q,) [coordinate units / s] at (t, q, u)."""

    def udot(self, t: float, q, u, params=None, inputs=None):
        """u' (n_u,) [speed units / s] at (t, q, u)."""

    def mass_matrix(self, t: float, q, params=None):
        """M (n_u, n_u) of M u' = f [kg, kg m, kg m^2 by speed units], symmetric positive definite."""

    def forcing(self, t: float, q, u, params=None, inputs=None):
        """f (n_u,) of M u' = f [N, N m by speed units]."""

    def energy(self, t: float, q, u, params=None) -> float:
        """Total mechanical energy [J], kinetic plus potential."""

    def holonomic_rows(self, t: float, q, params=None):
        """(C (m,), A_C (m, n_u_full), W (n_q, n_u_full)): holonomic residuals C(q) [m, rad], their velocity rows
        with C' = A_C u_full, and the kinematic map q' = W u_full + X (u_full: every speed of the model)."""

    def motion_rows(self, t: float, q, params=None):
        """(A (m, n_u_full), b (m,)): the constraint rows A u_full + b = 0 [m/s, rad/s] at q."""

    def constraint_forces(self, t: float, q, u, params=None, inputs=None) -> dict:
        """Constraint name -> its multipliers (m,) [N, N m per row] at (t, q, u) (KaneMatrixDynamics: joint name ->
        {axis label: the force [N] or moment [N m] the joint transmits along its constrained axis})."""

    def make_projection(self, params=None) -> Projection:
        """Its own ``projection(t, q, u) -> (q, u)`` onto the constraints (see :data:`Projection`)."""

    def check_quaternions(self, q, what: str = "q0") -> None:
        """Raise a :class:`kane.errors.ModelError` naming the body and ``what`` when q (n_q,) holds a quaternion
        that is not of unit norm; nothing when it holds none."""

    def loop_function(self) -> Any:
        """The compiled right-hand side (q', u') the C loop of :mod:`kane.simulate.compiled` runs (a
        :class:`kane.codegen.c_backend.CFunction`); NotSupportedError naming why when there is none."""
