"""Derivation benchmark: kane.derive against sympy.physics.mechanics' KanesMethod on the n-link 3D pendulum and on
the benchmark Whipple bicycle (Meijaard et al. 2007).

Prints, for each n, both derivation times (same process), their ratio, and the operations in M and f after
common-subexpression elimination (sympy.cse for sympy's expressions; kane's program is already a CSE'd
straight-line program; its one-time parameter work is listed separately and included in the ratio).

The bicycle row: kane derives examples/bicycle.toml (dependent speeds as in its [simulation] table); sympy's
KanesMethod derives the Whipple bicycle of sympy's own test suite (sympy/physics/mechanics/tests/test_kane3.py,
ported from Autolev: yaw, roll, pitch and steer, four bodies, the front contact's three velocity constraints
solved with constraint_solver="CRAMER"), and its M and f, with the benchmark's numbers put in for the
parameters, are counted after sympy.cse. Issue 13's target: kane under 0.3 s with at most 2,000 operations.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import sympy as sp

import kane
from kane.codegen.program import count_expr_ops

from models import pendulum_chain_kane, pendulum_chain_sympy, sympy_whipple

__all__ = ["run", "bicycle"]

BICYCLE = Path(__file__).resolve().parents[1] / "examples" / "bicycle.toml"


def _sympy_cse_ops(km, values=None) -> int:
    exprs = list(km.mass_matrix) + list(km.forcing)
    if values:
        exprs = [e.xreplace(values) for e in exprs]
    repl, reduced = sp.cse(exprs)
    return sum(count_expr_ops(e).total for _, e in repl) + sum(count_expr_ops(e).total for e in reduced)


def run(n_sympy=(3, 5, 7, 10), n_kane=(3, 5, 7, 10, 15, 20, 30), with_bicycle: bool = True,
        bicycle_sympy: bool = True) -> dict:
    rows = {}
    for n in sorted(set(n_sympy) | set(n_kane)):
        row = {}
        if n in n_kane:
            t0 = time.perf_counter()
            eqs = kane.derive(pendulum_chain_kane(n))
            row["kane_s"] = time.perf_counter() - t0
            c = eqs.count_ops()
            row["kane_ops"] = c["M+f"].total + c["constants"].total
        if n in n_sympy:
            t0 = time.perf_counter()
            km, _, _ = pendulum_chain_sympy(n)
            row["sympy_s"] = time.perf_counter() - t0
            row["sympy_cse_ops"] = _sympy_cse_ops(km)
        rows[n] = row
    print(f"{'n':>3} {'kane [s]':>9} {'sympy [s]':>10} {'speed-up':>9} {'kane ops':>9} {'sympy cse ops':>14} {'ops ratio':>9}")
    for n, r in rows.items():
        ks, ss = r.get("kane_s"), r.get("sympy_s")
        ko, so = r.get("kane_ops"), r.get("sympy_cse_ops")
        print(f"{n:>3} {ks if ks is not None else float('nan'):>9.3f} {ss if ss is not None else float('nan'):>10.3f} "
              f"{(ss / ks) if ks and ss else float('nan'):>9.1f} {ko or 0:>9d} {so or 0:>14d} "
              f"{(ko / so) if ko and so else float('nan'):>9.3f}")
    big = [n for n in n_kane if n >= 10]
    if len(big) >= 2:
        a, b = big[0], big[-1]
        p = math.log(rows[b]["kane_s"] / rows[a]["kane_s"]) / math.log(b / a)
        po = math.log(rows[b]["kane_ops"] / rows[a]["kane_ops"]) / math.log(b / a)
        print(f"kane growth from n={a} to n={b}: time ~ n^{p:.2f}, operations ~ n^{po:.2f}")
    if with_bicycle:
        rows["bicycle"] = bicycle(bicycle_sympy)
    return rows


def bicycle(with_sympy: bool = True) -> dict:
    """The bicycle row: kane's derivation CPU time [s] and operations in M and f (+ one-time parameter work), and, with
    ``with_sympy``, sympy's KanesMethod time and operations after cse, in this process."""
    from kane.io import load_model

    loaded = load_model(BICYCLE)
    kane.derive(pendulum_chain_kane(1))  # one-time imports and sympy's first calls are not the bicycle's
    t0 = time.process_time()  # CPU time: the figure that other processes on a shared machine disturb least
    eqs = loaded.derive()
    row = {"kane_s": time.process_time() - t0}
    c = eqs.count_ops()
    row["kane_ops"], row["kane_constants"] = c["M+f"].total, c["constants"].total
    if with_sympy:
        t0 = time.process_time()
        km, _, values, _ = sympy_whipple()
        row["sympy_s"] = time.process_time() - t0
        row["sympy_cse_ops"] = _sympy_cse_ops(km, values)
    ks, ss, so = row["kane_s"], row.get("sympy_s"), row.get("sympy_cse_ops")
    print(f"bicycle: kane {ks:.3f} s, {row['kane_ops']} operations in M and f (+{row['kane_constants']} once per "
          "parameter set)" + (f"; sympy KanesMethod {ss:.3f} s ({ss / ks:.1f}x), {so} operations after cse "
                              f"(ratio kane/sympy {(row['kane_ops'] + row['kane_constants']) / so:.3f})"
                              if ss is not None else ""))
    return row


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sympy", type=int, nargs="*", default=[3, 5, 7, 10])
    parser.add_argument("--kane", type=int, nargs="*", default=[3, 5, 7, 10, 15, 20, 30])
    parser.add_argument("--bicycle", action="store_true", help="only the bicycle row")
    parser.add_argument("--no-sympy", action="store_true", help="the bicycle row without sympy's derivation")
    args = parser.parse_args()
    if args.bicycle:
        bicycle(not args.no_sympy)
    else:
        run(tuple(args.sympy), tuple(args.kane), bicycle_sympy=not args.no_sympy)
