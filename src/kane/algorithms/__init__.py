"""Recursive numeric algorithms on spatial vectors (seed 001), traced into Programs and compiled.

* :func:`rnea` - recursive Newton-Euler inverse dynamics (seed 001 §2.5), with the joints' transmitted forces;
* :func:`crba` - composite-rigid-body joint-space inertia and Cholesky forward dynamics (seed 001 §3.1.1);
* :func:`aba` - articulated-body forward dynamics in the accurate ordering (seed 001 §3.3.1, §4.3, §5.3.1);
* :func:`noc` - the natural orthogonal complement, I = T^T M T (seed 002 Eqs. 26-27), :class:`NOCDynamics`;
* :func:`kane_matrix` - Kane's equation in matrix form with the constraint forces of every constrained joint
  axis after the fact (seed 004), :class:`KaneMatrixDynamics`;
* :class:`CartesianDynamics` - absolute coordinates with Lagrange multipliers and Baumgarte stabilization
  (seed 003), the baseline the embedded formulations are measured against;
* :class:`RecursiveDynamics` - the numeric :class:`kane.Dynamics` interface on top of them (numpy or numba).

>>> dyn = kane.algorithms.RecursiveDynamics(system, method=kane.Formulation.ABA)   # or kane.dynamics(system, "aba")
>>> dyn.udot(0.0, q, u); dyn.inverse_dynamics(0.0, q, u, udot); dyn.joint_forces(0.0, q, u, udot)
"""

from ..codegen.numba_backend import NumbaFunction
from .aba import aba, trace_aba
from .cartesian import CartesianDynamics, ConstraintRankError
from .crba import crba, trace_crba, trace_forward_dynamics
from .kane_matrix import (AXIS_LABELS, KaneMatrixDynamics, constrained_axes, kane_matrix, trace_constraint_forces,
                          trace_kane_matrix)
from .noc import NOCDynamics, noc, trace_noc
from .recursive import RecursiveDynamics
from .trace import Trace, tree_model
from .rnea import rnea, trace_rnea

__all__ = ["rnea", "crba", "aba", "noc", "kane_matrix", "RecursiveDynamics", "NOCDynamics",
           "KaneMatrixDynamics", "CartesianDynamics", "ConstraintRankError", "NumbaFunction", "Trace", "tree_model", "trace_rnea", "trace_crba",
           "trace_forward_dynamics", "trace_aba", "trace_noc", "trace_kane_matrix", "trace_constraint_forces",
           "constrained_axes", "AXIS_LABELS"]


def __getattr__(name: str):
    """``Algorithm``, deprecated until kane 0.3 (CHANGELOG.md): the one enum of formulations is kane.Formulation."""
    if name == "Algorithm":
        from .recursive import deprecated_algorithm

        return deprecated_algorithm()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
