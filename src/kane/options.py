"""Option enums that more than one layer takes (the integration method is named in model files, read by
:mod:`kane.io`, and used by :mod:`kane.simulate`; the formulation is chosen by :func:`kane.dynamics` and taken by
:mod:`kane.algorithms`)."""

from __future__ import annotations

import enum

from .errors import ArgumentError

__all__ = ["Method", "Formulation", "parse_enum"]


class Method(enum.Enum):
    """Integration method: fixed-step ``RK4`` and ``SEMI_IMPLICIT_EULER``, adaptive ``DOPRI5``, ``RADAU``, ``BDF``."""

    RK4 = "rk4"
    SEMI_IMPLICIT_EULER = "semi_implicit_euler"
    DOPRI5 = "dopri5"
    RADAU = "radau"
    BDF = "bdf"

    @property
    def adaptive(self) -> bool:
        """True for the error-controlled methods (DOPRI5, RADAU, BDF)."""
        return self in (Method.DOPRI5, Method.RADAU, Method.BDF)

    @classmethod
    def parse(cls, value: Method | str) -> Method:
        """Return ``value`` as a Method; strings match the name or value, case-insensitively ("rk4", "DOPRI5")."""
        found = parse_enum(cls, value)
        if found is None:
            raise ValueError(f"unknown integration method {value!r}; expected one of {[m.value for m in cls]}")
        return found


class Formulation(enum.Enum):
    """Which equations a numeric dynamics object evaluates (:func:`kane.dynamics`, ``RecursiveDynamics.method``)."""

    KANE = "kane"  # Kane's explicit equations M u' = f (kane.derive, constraints embedded), unrolled LDL^T solve
    ABA = "aba"  # articulated-body algorithm, O(n) (seed 001 §3.3.1; kane.algorithms.RecursiveDynamics)
    CRBA = "crba"  # composite-rigid-body inertia + Cholesky, O(n^3) (seed 001 §3.1.1; RecursiveDynamics)
    NOC = "noc"  # natural orthogonal complement, T^T M T (seed 002; kane.algorithms.NOCDynamics)
    KANE_MATRIX = "kane_matrix"  # Kane's equation in matrix form (seed 004; kane.algorithms.KaneMatrixDynamics)
    AUTO = "auto"  # KANE or ABA by size and constraints (kane.symbolic.formulation.choose_formulation)

    @property
    def recursive(self) -> bool:
        """True for the formulations of unconstrained trees in :mod:`kane.algorithms` (ABA, CRBA, NOC, KANE_MATRIX)."""
        return self in (Formulation.ABA, Formulation.CRBA, Formulation.NOC, Formulation.KANE_MATRIX)

    @classmethod
    def parse(cls, value) -> Formulation:
        """``value`` as a Formulation; strings match the value or name, case-insensitively ("aba", "KANE")."""
        found = parse_enum(cls, value)
        if found is not None:
            return found
        raise ArgumentError(f"formulation {value!r}; expected one of {', '.join(f.value for f in cls)} "
                            "(or a kane.Formulation)")


def parse_enum(cls: type[enum.Enum], value):
    """``value`` as a member of the enum ``cls``: a member, or a string matching a member's value or name
    case-insensitively; None when nothing matches (the caller raises its own error, naming its option)."""
    if isinstance(value, cls):
        return value
    key = str(value).strip().lower()
    return next((m for m in cls if key in (str(m.value).lower(), m.name.lower())), None)
