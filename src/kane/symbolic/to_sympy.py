"""``kane.to_sympy``: kane's derived equations as plain sympy expressions (M, f, q', constraint rows).

The coordinates, speeds, parameters and inputs are the model's own sympy ``Symbol`` objects (plain symbols, not
functions of t: q' is given as expressions, not as derivatives); the intermediates are kane's named quantities
(``KaneSymbol`` z0, z1, ..., never equal to a user's symbol of the same name) in evaluation order, each defined in
terms of the inputs and the intermediates before it, as sympy's ``cse`` gives them. The dependent speeds of a
constrained model are intermediates too (defined from the independent ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import KaneError

__all__ = ["SympyEquations", "to_sympy"]

_OUTPUTS = ("M", "f", "qdot", "constraint_residual", "C")


@dataclass(frozen=True)
class SympyEquations:
    """Equations of motion M(q, t) u' = f(q, u, t) over the independent speeds ``u``, and q' = W u + X.

    t: the time symbol; q (n_q,), u (n_u,) independent speeds, u_dependent (the dependent speeds, intermediates
    where ``intermediates`` is not empty): sympy Symbols; parameters, inputs: the model's symbols in model order;
    M: (n_u x n_u) ImmutableMatrix; f, qdot (n_q), velocity_constraints (the rows A u + b of every declared
    constraint, transient ones included: zero on a motion that satisfies them), configuration_constraints (the
    holonomic residuals C(q)): column ImmutableMatrix; intermediates: ((symbol, expression), ...) in evaluation
    order (empty when substituted)."""

    t: sp.Symbol
    q: tuple
    u: tuple
    u_dependent: tuple
    parameters: tuple
    inputs: tuple
    M: sp.ImmutableMatrix
    f: sp.ImmutableMatrix
    qdot: sp.ImmutableMatrix
    velocity_constraints: sp.ImmutableMatrix
    configuration_constraints: sp.ImmutableMatrix
    intermediates: tuple


def to_sympy(equations, substitute: bool = False) -> SympyEquations:
    """The sympy form of ``equations`` (a :class:`kane.Equations`): see :class:`SympyEquations`. With
    ``substitute``, every intermediate (dependent speeds included) is substituted into the outputs (readable
    for small systems; the expressions grow with the model) and ``intermediates`` is empty."""
    program = getattr(equations, "program", None)
    if program is None or not hasattr(equations, "u_independent"):
        raise KaneError(f"to_sympy: expected kane.Equations (from kane.derive or kane.from_sympy), "
                        f"got {type(equations).__name__}")
    prog = program.select([name for name in _OUTPUTS if name in program.outputs])
    outputs = {name: prog.outputs.get(name, sp.ImmutableMatrix(0, 1, [])) for name in _OUTPUTS}
    assignments = tuple(prog.assignments)
    if substitute:
        values: dict = {}
        for sym, expr in assignments:
            values[sym] = expr.xreplace(values)
        outputs = {name: m.xreplace(values) for name, m in outputs.items()}
        assignments = ()
    model = equations.model
    return SympyEquations(model.t, tuple(model.q), tuple(equations.u_independent), tuple(equations.u_dependent),
                          tuple(model.parameters), tuple(model.inputs), outputs["M"], outputs["f"],
                          outputs["qdot"], outputs["constraint_residual"], outputs["C"], assignments)
