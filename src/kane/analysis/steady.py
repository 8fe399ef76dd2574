"""Steady motions and equilibria by Newton's method on chosen unknowns (Gauss-Newton where there are more
equations than unknowns), with exact derivatives from the linearization (:mod:`kane.analysis.linearize`).

A steady motion is a state where every rate the dynamics depends on vanishes: the speeds are constant and so are
the coordinates that are not cyclic (see :class:`Linearization`); an equilibrium is one at rest. The unknowns may
be independent coordinates, independent speeds, parameters or inputs; the dependent coordinates follow from the
configuration constraints at every iterate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codegen.forward import jacobian_name
from ..errors import ArgumentError, KaneError
from .linearize import Linearization, Linearizer, linearizer

__all__ = ["SteadyMotion", "steady_motion", "assemble_dependent"]


@dataclass(frozen=True)
class SteadyMotion:
    """A solved steady motion: the state (t, q (n_q,), u (p,)), parameters and inputs in model order, the
    ``unknowns`` and their solved ``values`` (name -> value), the final ``residual`` (rates named by
    ``residual_names``), Newton ``iterations`` and the :class:`Linearization` there."""

    t: float
    q: np.ndarray
    u: np.ndarray
    params: np.ndarray
    inputs: np.ndarray
    unknowns: tuple
    values: dict
    residual: np.ndarray
    residual_names: tuple
    iterations: int
    linearization: Linearization


def assemble_dependent(lz: Linearizer, t, q, u, p, w, dependent_q=None, max_iterations: int = 30):
    """(q, values): q (n_q,) with its dependent coordinates (chart coordinates of :attr:`Linearizer.chart`) moved
    onto C(q) = 0 by Newton's method, and the evaluated program there (see :meth:`Linearizer.evaluate`); a
    :class:`KaneError` names the constraint that cannot be met."""
    q = np.array(q, dtype=float)
    rows = list(lz.holonomic_rows)
    ch = lz.chart
    for _ in range(max_iterations):
        v = lz.evaluate(t, q, u, p, w)
        if not rows:
            return q, v
        C = v["C"][rows]
        if np.max(np.abs(C)) <= 1e-14 * max(1.0, float(np.max(np.abs(q)))):
            return q, v
        Cq = v[jacobian_name("C", "q")][rows]
        Cq = Cq @ ch.E(q) if ch.tangent else Cq
        dep = lz.dependent_coordinates(Cq, dependent_q)
        q = ch.retract_many(q, dep, -np.linalg.lstsq(Cq[:, dep], C, rcond=None)[0])
        if not np.all(np.isfinite(q)):
            break
    k = int(np.argmax(np.abs(C)))
    raise KaneError(f"steady motion: the configuration constraint {lz.holonomic_names[k]!r} cannot be met near the "
                    f"given coordinates (residual {C[k]:.3g} after {max_iterations} Newton steps)")


def _locate(lz: Linearizer, names):
    """(group, index) of every unknown: 'q' (chart coordinate), 'u' (independent speed), 'params', 'inputs'."""
    out = []
    for n in names:
        for group, known in (("q", lz.chart.names), ("u", lz.u_names), ("params", lz.param_names),
                             ("inputs", lz.input_names)):
            if n in known:
                out.append((group, known.index(n)))
                break
        else:
            raise ArgumentError(f"unknown {n!r}: expected a coordinate ({', '.join(lz.chart.names)}), an independent "
                                f"speed ({', '.join(lz.u_names)}), a parameter ({', '.join(lz.param_names) or 'none'})"
                                f" or an input ({', '.join(lz.input_names) or 'none'})")
    return out


def steady_motion(equations, q, u, unknowns, t: float = 0.0, params=None, inputs=None, *, dependent_q=None,
                  tol: float = 1e-12, max_iterations: int = 50, ignorable=None) -> SteadyMotion:
    """Solve for the ``unknowns`` (names) that make (t, q, u) a steady motion; q, u, params, inputs as for
    :func:`kane.analysis.linearize` give the other values and the starting guess (the dependent coordinates are
    assembled first). The equations are the residual of :class:`Linearization` (the rates of the states that stay put,
    the motion along cyclic coordinates and symmetries taken out: a relative equilibrium solves them);
    Newton's method, least squares when they outnumber the unknowns (a quaternion's unknowns are its rotation
    vector ``<joint>.rx/ry/rz``, reported as the turn from the start), stops when the largest rate is below
    ``tol`` times max(1, the largest rate of any state), or when the steps stall below 1e-14 relative (ignorable:
    as for :func:`kane.analysis.linearize`). Raises a
    :class:`KaneError` naming the largest remaining rate if it does not converge."""
    names = tuple(str(n) for n in unknowns)
    probe = linearizer(equations)
    where = _locate(probe, names)
    lz = linearizer(equations, parameters=any(g == "params" for g, _ in where)) if where else probe
    q, u, p, w = lz.arguments(q, u, params, inputs)
    u, p, w = u.copy(), p.copy(), w.copy()
    arrays = {"q": None, "u": u, "params": p, "inputs": w}
    fixed_rows = None
    moved: dict = {}  # chart index -> how far a coordinate unknown moved (a rotation vector's turn, for a quaternion)
    scale_r = 1.0
    for it in range(max_iterations + 1):
        q, v = assemble_dependent(lz, t, q, u, p, w, dependent_q)
        arrays["q"] = q
        lin = lz.from_arrays(t, q, u, p, w, dependent_q=dependent_q, warn=False, values=v, ignorable=ignorable)
        if fixed_rows is None:  # the equations and the dependent coordinates of the starting guess throughout
            fixed_rows = lin.residual_names
            dependent_q = lin.dependent_coordinates if lin.dependent_coordinates else dependent_q
            bad = [n for (g, k), n in zip(where, names) if g == "q" and n in lin.dependent_coordinates]
            if bad:
                raise ArgumentError(f"steady motion: {', '.join(bad)} follow(s) from the configuration constraints; "
                                    "choose unknowns among the independent coordinates "
                                    f"({', '.join(lin.coordinate_names)})")
        if lin.residual_names != tuple(fixed_rows):
            raise KaneError(f"steady motion: the states that stay put changed during the solve (from "
                            f"{', '.join(fixed_rows)} to {', '.join(lin.residual_names)}); start nearer the solution")
        r = lin.residual
        scale_r = max(1.0, float(np.max(np.abs(lin.rates), initial=0.0)))
        if np.max(np.abs(r), initial=0.0) <= tol * scale_r or not where:
            break
        if it == max_iterations:
            break
        cols = []
        qt = lin.quotient
        Lp = qt.residual_map @ lz.parameter_jacobian(v, lin) if "params" in lz.groups else None
        RB, RA = qt.residual_map @ lin.B, qt.residual_jacobian
        for (g, k), n in zip(where, names):
            if g == "q":
                cols.append(RA[:, lin.state_names.index(n)])
            elif g == "u":
                cols.append(RA[:, lin.n_coordinates + k])
            elif g == "inputs":
                cols.append(RB[:, k])
            else:
                cols.append(Lp[:, k])
        J = np.column_stack(cols)
        step = -np.linalg.lstsq(J, r, rcond=None)[0]
        for (g, k), dz in zip(where, step):
            if g == "q":
                q = lz.chart.retract(q, k, dz)
                moved[k] = moved.get(k, 0.0) + float(dz)
            else:
                arrays[g][k] += dz
        z = np.array([arrays[g][k] for g, k in where if g != "q"])
        if not np.all(np.isfinite(z)) or not np.all(np.isfinite(q)):
            break
        if np.max(np.abs(step)) <= 1e-14 * max(1.0, float(np.max(np.abs(z), initial=0.0))) and \
                np.max(np.abs(r)) <= 1e-9 * scale_r:
            q, v = assemble_dependent(lz, t, q, u, p, w, dependent_q)
            lin = lz.from_arrays(t, q, u, p, w, dependent_q=dependent_q, warn=False, values=v, ignorable=ignorable)
            r = lin.residual
            break
    worst = int(np.argmax(np.abs(r))) if len(r) else 0
    if len(r) and not np.max(np.abs(r)) <= max(tol, 1e-9) * scale_r:
        raise KaneError(f"steady motion: Newton's method on {', '.join(names) or 'nothing'} did not converge: "
                        f"{fixed_rows[worst]}' = {r[worst]:.3g} after {it} iterations; try another starting guess or "
                        "other unknowns")
    values = {n: (float(lin.q[lz.q_names.index(n)]) if n in lz.q_names else moved.get(k, 0.0)) if g == "q"
              else float(arrays[g][k]) for (g, k), n in zip(where, names)}
    return SteadyMotion(float(t), q, u, p, w, names, values, r, tuple(fixed_rows), it, lin)
