"""Linearization benchmark: kane.analysis.linearize (exact forward-mode derivatives, compiled once) against
sympy.physics.mechanics' Linearizer (``KanesMethod.linearize``), in one process (sympy's bicycle in a child).

For each n of the n-link 3D pendulum it prints sympy's time (symbolic linearization, then M, A evaluated at the
point and A = M^-1 A solved numerically, its cheapest route), kane's time for the first linearization (Jacobian
program formed and compiled) and for each further point, the ratio sympy / kane (first), and the largest difference
between the two A's. Both exclude the derivation of the equations. Then the benchmark Whipple bicycle (Meijaard et
al. 2007): derivation, first linearization (in all, then its parts: forming the Jacobian program in
kane.codegen.forward, printing and compiling it in the numpy backend), time per point, a sweep of 1,000 forward
speeds (one by one, and batched), the weave and capsize speeds against the published 4.292382 and 6.024262 m/s and
against the paper's own linear model, and the ratio against sympy's ``linearize`` of sympy's own Whipple bicycle
(sympy/physics/mechanics/tests/test_kane3.py, with its fastest options: constraint_solver and linear_solver
"CRAMER"), run in a subprocess with a time limit (``--sympy-timeout``): if it does not finish, the ratio is a
lower bound "> N x". The eigenvalues of both bicycles at 5 m/s are printed side by side.

Then the rolling disk example in its own quaternion coordinates (tangent-space linearization about its relative
equilibrium, upright at 10 rad/s): first linearization and time per point.

Recorded (bicycle, one shared 2-core machine under load, so compare within a row): first linearization 4.1 s
(sympy's printer and ``diff``) -> 3.0 s (forward.py's own rules) -> 0.31 s (0.31 s CPU): forming the Jacobian
program 0.09 s (was 0.5-0.6 s: sums and products built without sympy's constructors; ~19,000 operations), printing
and compiling it 0.12 s (was 2.5-3.9 s: the direct printer PyCode instead of sympy's); 0.76 ms per further point;
1,000 speeds 0.40 s batched (was 0.67 s), 1.15 s one by one. sympy's linearize of its bicycle (CRAMER solvers):
160 s (84 s CPU), 519 x kane's first linearization (274 x in CPU time); both give the benchmark's eigenvalues at
5 m/s (-14.0784, -0.7753 +- 4.4649j, -0.3229).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp
import sympy.physics.mechanics as me

import kane
from kane.analysis import Linearizer, eigenvalue_sweep

from models import pendulum_chain_kane, pendulum_chain_sympy, sympy_whipple

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


def run(sizes=(2, 3, 4), sweep_points=1000, sympy_timeout=600.0) -> dict:
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
    out["disk"] = disk()
    out["bicycle"] = bicycle(sweep_points, sympy_timeout)
    return out


def disk(points=200) -> dict:
    """examples/rolling_disk.toml upright at w2 = 10 rad/s in its own quaternion coordinates: first linearization
    (compile, and the structure: cyclic coordinates and symmetries at random generic states), then per point, and
    the reduced eigenvalues against +-sqrt(4/5 (g/r - 3 w^2))."""
    from kane.io import load_model

    eqs = load_model(Path(__file__).resolve().parents[1] / "examples" / "rolling_disk.toml").derive()
    u = {"w1": 0.0, "w2": 10.0, "w3": 0.0}
    t0 = time.perf_counter()
    lz = Linearizer(eqs)
    lin = lz.at({}, u, warn=False)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(points):
        lz.at({}, u, warn=False)
    per = (time.perf_counter() - t0) / points
    lam = lin.eigenvalues(reduced=True)
    pair = np.sqrt(complex(0.8 * (9.81 / 0.4 - 300.0)))
    print(f"disk: first linearization {first:.3f} s, then {per * 1e3:.3f} ms per point; largest eigenvalues "
          f"{np.sort_complex(lam[np.argsort(-np.abs(lam))[:2]])} (closed form +-{pair:.6g})")
    return {"first_s": first, "point_s": per}


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


def bicycle(points=1000, sympy_timeout=600.0) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
    from _analysis_models import BICYCLE_DEPENDENT, whipple_bicycle

    from kane.codegen.forward import jacobian_name, jacobian_program
    from kane.codegen.numpy_backend import compile_program

    t0 = time.perf_counter()
    eqs = kane.derive(whipple_bicycle(), dependent=BICYCLE_DEPENDENT)
    t_derive = time.perf_counter() - t0
    op_q, op_u = {"z": 0.3}, [0, 5 / 0.3, 0]
    t0, c0 = time.perf_counter(), time.process_time()
    lz = Linearizer(eqs)
    lin = lz.at(op_q, op_u, warn=False)
    t_first, c_first = time.perf_counter() - t0, time.process_time() - c0
    outs = ["M", "f", "qdot", "C"]
    t0 = time.perf_counter()
    jac = jacobian_program(eqs.program, outs, wrt=("q", "u", "inputs"))
    t_form = time.perf_counter() - t0
    t0 = time.perf_counter()
    compile_program(jac, outs + [jacobian_name(o, g) for o in outs for g in ("q", "u", "inputs")])
    t_print = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(50):
        lz.at(op_q, op_u, warn=False)
    t_point = (time.perf_counter() - t0) / 50
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
          f"linearization {t_first:.3f} s ({c_first:.3f} s CPU); its parts: forming the Jacobian program "
          f"{t_form:.3f} s ({jac.count_ops().total} operations), printing and compiling it {t_print:.3f} s; "
          f"then {t_point * 1e3:.2f} ms per point")
    print(f"bicycle: sweep of {points} speeds {t_sweep:.2f} s one by one, {t_batch:.2f} s batched (after its compile)")
    print(f"bicycle: weave speed {weave:.10f} m/s (paper 4.292382, its linear model {ref_w:.10f}); capsize speed "
          f"{capsize:.10f} m/s (paper 6.024262, its linear model {ref_c:.10f})")
    t_sympy, c_sympy, lam_sympy = _sympy_bicycle(sympy_timeout)
    lam = lin.eigenvalues(reduced=True)
    lam = lam[np.abs(lam) > 1e-9]
    if lam_sympy is None:
        print(f"bicycle: sympy's linearize did not finish ({t_sympy:.0f} s of it before the {sympy_timeout:.0f} s "
              f"limit on the child): ratio > {t_sympy / t_first:.0f} x")
    else:
        print(f"bicycle: sympy's linearize {t_sympy:.1f} s ({c_sympy:.1f} s CPU), ratio {t_sympy / t_first:.0f} x "
              f"({c_sympy / c_first:.0f} x in CPU time); eigenvalues at 5 m/s: kane {np.sort_complex(lam)}, sympy "
              f"{np.sort_complex(lam_sympy)}")
    return {"derive_s": t_derive, "form_s": t_form, "print_s": t_print, "first_s": t_first, "first_cpu_s": c_first,
            "point_s": t_point, "sweep_s": t_sweep, "batch_s": t_batch, "weave": weave, "capsize": capsize,
            "weave_ref": ref_w, "capsize_ref": ref_c, "sympy_s": t_sympy, "sympy_cpu_s": c_sympy,
            "sympy_finished": lam_sympy is not None, "ratio": t_sympy / t_first}


def _sympy_bicycle(timeout) -> tuple:
    """(seconds, CPU seconds, eigenvalues at 5 m/s) of sympy's linearize on its Whipple bicycle in a child
    process, or (the seconds its linearize had run when stopped, None, None) when the child does not finish in
    ``timeout`` seconds."""
    try:
        done = subprocess.run([sys.executable, __file__, "--sympy-bicycle-child", "5.0"], capture_output=True,
                              text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired as stopped:
        out = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else (stopped.stdout or "")
        started = [json.loads(line)["linearize_started"] for line in out.splitlines() if "linearize_started" in line]
        return (time.time() - started[0] if started else 0.0), None, None
    res = json.loads(done.stdout.strip().splitlines()[-1])
    return res["seconds"], res["cpu_seconds"], np.array([complex(*z) for z in res["eigenvalues"]])


def _sympy_bicycle_child(speed):
    """Run in a subprocess: sympy's linearize of its Whipple bicycle (derivation excluded), A evaluated at
    ``speed`` [m/s]; prints the time and the eigenvalues of the lean/steer block as JSON."""
    km, op, values, v = sympy_whipple()
    print(json.dumps({"linearize_started": time.time()}), flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    A, _, _ = km.linearize(A_and_B=True, op_point=op, linear_solver="CRAMER")
    A = np.array(A.xreplace(values).xreplace({v: speed}).evalf(), dtype=float)[np.ix_([1, 2, 3, 5], [1, 2, 3, 5])]
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    lam = np.linalg.eigvals(A)
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "eigenvalues": [[z.real, z.imag] for z in lam]}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[2, 3, 4])
    ap.add_argument("--sympy-timeout", type=float, default=600.0,
                    help="seconds sympy's linearize of the bicycle may take (default 600)")
    ap.add_argument("--quick", action="store_true", help="pendulums n = 2, 3, 200 sweep points, sympy 60 s")
    ap.add_argument("--sympy-bicycle-child", type=float, metavar="SPEED", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.sympy_bicycle_child is not None:
        _sympy_bicycle_child(a.sympy_bicycle_child)
    elif a.quick:
        run((2, 3), 200, 60.0)
    else:
        run(tuple(a.sizes), 1000, a.sympy_timeout)
