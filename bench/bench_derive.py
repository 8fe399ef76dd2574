"""Derivation benchmark: kane.derive against sympy.physics.mechanics' KanesMethod on the n-link 3D pendulum.

Prints, for each n, both derivation times (same process), their ratio, and the operations in M and f after
common-subexpression elimination (sympy.cse for sympy's expressions; kane's program is already a CSE'd
straight-line program; its one-time parameter work is listed separately and included in the ratio).
"""

from __future__ import annotations

import argparse
import math
import time

import sympy as sp

import kane
from kane.codegen.program import count_expr_ops

from models import pendulum_chain_kane, pendulum_chain_sympy

__all__ = ["run"]


def _sympy_cse_ops(km) -> int:
    exprs = list(km.mass_matrix) + list(km.forcing)
    repl, reduced = sp.cse(exprs)
    return sum(count_expr_ops(e).total for _, e in repl) + sum(count_expr_ops(e).total for e in reduced)


def run(n_sympy=(3, 5, 7, 10), n_kane=(3, 5, 7, 10, 15, 20, 30)) -> dict:
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
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sympy", type=int, nargs="*", default=[3, 5, 7, 10])
    parser.add_argument("--kane", type=int, nargs="*", default=[3, 5, 7, 10, 15, 20, 30])
    args = parser.parse_args()
    run(tuple(args.sympy), tuple(args.kane))
