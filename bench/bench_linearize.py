"""Linearization benchmark: kane.analysis.linearize (exact forward-mode derivatives, compiled once) against
sympy.physics.mechanics' Linearizer (``KanesMethod.linearize``) on the same n-link 3D pendulum, in one process.

For each n it prints sympy's time (symbolic linearization, then M, A evaluated at the point and A = M^-1 A solved
numerically, its cheapest route), kane's time for the first linearization (Jacobian program formed and compiled)
and for each further point, the ratio sympy / kane (first), and the largest difference between the two A's. Both
exclude the derivation of the equations. Then the benchmark Whipple bicycle (Meijaard et al. 2007): derivation,
first linearization, time per point, a sweep of 1,000 forward speeds (one by one, and batched), and the weave and
capsize speeds against the published 4.292382 and 6.024262 m/s and against the eigenvalues of the paper's own
linear model (its published M, C1, K0, K2) to 1e-8. The first linearization is split into forming the Jacobian
program (kane.codegen.forward) and printing/compiling it (the numpy backend).

Recorded (bicycle, one shared 2-core machine under load, so compare within a row): forming the Jacobian program
1.93 s with sympy's ``diff`` per assignment, 0.57-0.68 s with forward.py's own rules for sums, products, powers
and sin/cos (same 24,038 operations); printing it 3.3-3.9 s, unchanged (numpy_backend's sympy printer, the
remaining cost); first linearization in all 4.1 s -> 3.0-3.5 s (target 0.5 s: not reached).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp
import sympy.physics.mechanics as me

import kane
from kane.analysis import Linearizer, eigenvalue_sweep

from models import pendulum_chain_kane, pendulum_chain_sympy

__all__ = ["run"]


def _sympy_A(km, q, u, params, qv, uv):
    t0 = time.perf_counter()
    M, A, _, _ = km.linearize(A_and_B=False, simplify=False)
    ops = dict(zip(q, qv)) | dict(zip(u, uv)) | {sp.Symbol(k): v for k, v in params.items()}
    Mf = np.array(km.mass_matrix_full.xreplace(ops), dtype=float)
    xdot = np.linalg.solve(Mf, np.array(km.forcing_full.xreplace(ops), dtype=float).ravel())
    ops |= {s.diff(): val for s, val in zip(list(q) + list(u), xdot)}
    A = np.linalg.solve(np.array(me.msubs(M, ops), dtype=float), np.array(me.msubs(A, ops), dtype=float))
    return A, time.perf_counter() - t0


def run(sizes=(2, 3, 4), sweep_points=1000) -> dict:
    rng = np.random.default_rng(1)
    print(f"{'n':>3} {'sympy [s]':>10} {'kane first [s]':>15} {'kane/point [ms]':>16} {'ratio':>8} {'max |dA|':>10}")
    out = {}
    for n in sizes:
        system = pendulum_chain_kane(n)
        eqs = kane.derive(system)
        params = {str(s): v for s, v in zip(eqs.model.parameters, eqs.model.parameter_defaults)}
        qv, uv = rng.normal(0, 0.5, n), rng.normal(0, 0.5, n)
        t0 = time.perf_counter()
        lz = Linearizer(eqs)
        lin = lz.at(qv, uv, warn=False)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(20):
            lz.at(qv, uv, warn=False)
        per = (time.perf_counter() - t0) / 20
        km, q, u = pendulum_chain_sympy(n)
        A_ref, t_sym = _sympy_A(km, q, u, params, qv, uv)
        err = float(np.max(np.abs(lin.A - A_ref)))
        out[n] = (t_sym, first, per, t_sym / first, err)
        print(f"{n:>3} {t_sym:>10.3f} {first:>15.3f} {per * 1e3:>16.3f} {t_sym / first:>8.1f} {err:>10.2e}")
    out["bicycle"] = bicycle(sweep_points)
    return out


def _benchmark_speeds():
    """Weave and capsize speeds of the paper's linear model M q'' + v C1 q' + (g K0 + v^2 K2) q = 0 (Table 2)."""
    from scipy.optimize import brentq

    M = np.array([[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]])
    C1 = np.array([[0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]])
    K0 = np.array([[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]])
    K2 = np.array([[0, 76.59734589573222], [0, 2.65431523794604]])

    def growth(v, which):
        Mi = np.linalg.inv(M)
        A = np.block([[np.zeros((2, 2)), np.eye(2)], [-Mi @ (9.81 * K0 + v * v * K2), -v * Mi @ C1]])
        lam = np.linalg.eigvals(A)
        return max(lam[np.abs(lam.imag) > 0].real) if which == "weave" else max(lam[lam.imag == 0].real)

    return brentq(growth, 4.0, 4.5, args=("weave",), xtol=1e-14), brentq(growth, 5.5, 6.5, args=("capsize",),
                                                                         xtol=1e-14)


def bicycle(points=1000) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
    from _analysis_models import BICYCLE_DEPENDENT, whipple_bicycle

    t0 = time.perf_counter()
    eqs = kane.derive(whipple_bicycle(), dependent=BICYCLE_DEPENDENT)
    t_derive = time.perf_counter() - t0
    from kane.codegen.forward import jacobian_program

    t0 = time.perf_counter()
    jacobian_program(eqs.program, ["M", "f", "qdot", "C"], wrt=("q", "u", "inputs"))
    t_form = time.perf_counter() - t0
    t0 = time.perf_counter()
    lz = Linearizer(eqs)
    lz.at({"z": 0.3}, [0, 5 / 0.3, 0], warn=False)
    t_first = time.perf_counter() - t0
    speeds = np.linspace(0.1, 10.0, points) / 0.3  # rear wheel rate [rad/s] = forward speed / rR
    t0 = time.perf_counter()
    sw = eigenvalue_sweep(eqs, "w_rear", speeds, {"z": 0.3}, [0, 1, 0])
    t_sweep = time.perf_counter() - t0
    eigenvalue_sweep(eqs, "w_rear", speeds[:2], {"z": 0.3}, [0, 1, 0], batch=True)  # compiles the batch program
    t0 = time.perf_counter()
    eigenvalue_sweep(eqs, "w_rear", speeds, {"z": 0.3}, [0, 1, 0], batch=True)
    t_batch = time.perf_counter() - t0
    weave, capsize = (c.value * 0.3 for c in sw.crossings)
    ref_w, ref_c = _benchmark_speeds()
    print(f"bicycle: derive {t_derive:.2f} s, {eqs.count_ops()['M+f'].total} operations in M and f; first "
          f"linearization {t_first:.2f} s (Jacobian program formed and compiled; forming it alone {t_form:.2f} s)")
    print(f"bicycle: sweep of {points} speeds {t_sweep:.2f} s one by one, {t_batch:.2f} s batched (after its compile)")
    print(f"bicycle: weave speed {weave:.10f} m/s (paper 4.292382, its linear model {ref_w:.10f}); capsize speed "
          f"{capsize:.10f} m/s (paper 6.024262, its linear model {ref_c:.10f})")
    return {"derive_s": t_derive, "form_s": t_form, "first_s": t_first, "sweep_s": t_sweep, "batch_s": t_batch, "weave": weave,
            "capsize": capsize, "weave_ref": ref_w, "capsize_ref": ref_c}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="*", default=[2, 3, 4])
    run(tuple(ap.parse_args().sizes))
