"""sympy both ways on sympy's own Whipple bicycle (sympy/physics/mechanics/tests/test_kane3.py, bench/models.py's
``sympy_whipple``): too slow for the test suite (sympy's derivation about 5 s, lambdifying its mass matrix about
16 s), so measured here.

Printed: sympy's kanes_equations time [s]; ``kane.from_sympy`` time [s] and the operations in M and f of the
imported equations; the agreement of kane's u' (3 independent speeds; dependent speeds from kane's solve of
sympy's velocity constraints) with sympy's own M^-1 f (KanesMethod.mass_matrix and .forcing, acceleration rows
included, lambdified by sympy) at seeded random states: max |difference| / max(1, |u'|), the target 1e-12; the
velocity constraint rows of sympy at kane's dependent speeds.
Recorded (2 shared cores, under load): sympy derivation 5.7 s; from_sympy 4.4-4.8 s, 2860 operations in M and f
(146526 without naming sympy's cse pieces one by one, which took 16 s); sympy's lambdify of its M and f 16.8 s;
u' agrees to 5e-15 relative, the constraint rows vanish to 4e-14. Run: ``python bench/bench_sympy_io.py [--states 5]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp

sys.path.insert(0, str(Path(__file__).parent))

import kane  # noqa: E402
from models import sympy_whipple  # noqa: E402

__all__ = ["run"]


def run(states: int = 5, seed: int = 19) -> dict:
    """Times and agreements (see the module docstring), as a dict."""
    t0 = time.perf_counter()
    km, _, values, _ = sympy_whipple()
    t_sympy = time.perf_counter() - t0
    t0 = time.perf_counter()
    eqs = kane.from_sympy(km, parameters={str(k): float(v) for k, v in values.items()})
    t_import = time.perf_counter() - t0
    ops = eqs.count_ops()["M+f"].total
    dyn = eqs.compile("numpy")
    qs, us = sp.symbols(f"qq0:{len(km.q)}"), sp.symbols(f"uu0:{len(km.u)}")
    rep = dict(zip(km.q, qs)) | dict(zip(km.u, us))
    params = list(values)
    t0 = time.perf_counter()
    M, F, B = (sp.lambdify((qs, us, params), m.xreplace(rep), "numpy")
               for m in (km.mass_matrix, km.forcing, km._k_nh))
    t_lambdify = time.perf_counter() - t0
    p = [float(values[s]) for s in params]
    rng = np.random.default_rng(seed)
    err = rows = 0.0
    for _ in range(states):
        q, u = rng.uniform(-0.3, 0.3, 4), rng.normal(0, 1, 3) + np.array([0.0, 10.0, 0.0])
        u_all = dyn.full_speeds(0.0, q, u)
        udot = np.linalg.solve(np.array(M(q, u_all, p), float), np.array(F(q, u_all, p), float).ravel())
        mine = dyn.udot(0.0, q, u)
        err = max(err, float(np.max(np.abs(mine - udot[:3]))) / max(1.0, float(np.max(np.abs(udot)))))
        rows = max(rows, float(np.max(np.abs(np.array(B(q, u_all, p), float) @ u_all))))
    print(f"sympy kanes_equations {t_sympy:.2f} s; kane.from_sympy {t_import:.2f} s, {ops} operations in M and f; "
          f"sympy lambdify of its M, f {t_lambdify:.2f} s")
    print(f"u' against sympy's M^-1 f at {states} states: max relative difference {err:.2e} (target 1e-12); "
          f"sympy's velocity constraints at kane's dependent speeds {rows:.2e}")
    return {"sympy_s": t_sympy, "import_s": t_import, "operations": ops, "udot_error": err, "constraint_rows": rows}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=5)
    run(ap.parse_args().states)
