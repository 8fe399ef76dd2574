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

from models import pendulum_chain_kane, pendulum_chain_sympy

__all__ = ["run", "bicycle", "whipple_sympy"]

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


def whipple_sympy():
    """(KanesMethod, parameter values): the Whipple bicycle of sympy's test_kane3.py (Meijaard et al. 2007), its
    equations formed by ``kanes_equations``; the values are the benchmark's, in that model's parameters."""
    import sympy.physics.mechanics as me

    q1, q2, q4, q5 = me.dynamicsymbols("q1 q2 q4 q5")
    q1d, q2d, q4d, q5d = me.dynamicsymbols("q1 q2 q4 q5", 1)
    u1, u2, u3, u4, u5, u6 = me.dynamicsymbols("u1 u2 u3 u4 u5 u6")
    names = ("WFrad WRrad htangle forkoffset forklength framelength forkcg1 forkcg3 framecg1 framecg3 Iwr11 Iwr22 "
             "Iwf11 Iwf22 Iframe11 Iframe22 Iframe33 Iframe31 Ifork11 Ifork22 Ifork33 Ifork31 g mframe mfork mwf mwr")
    P = dict(zip(names.split(), sp.symbols(names)))
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    Frame = R.orientnew("Frame", "Axis", [q4 + P["htangle"], R.y])
    WR, WF = me.ReferenceFrame("WR"), me.ReferenceFrame("WF")
    TempFrame = Frame.orientnew("TempFrame", "Axis", [-P["htangle"], Frame.y])
    Fork = Frame.orientnew("Fork", "Axis", [q5, Frame.x])
    TempFork = Fork.orientnew("TempFork", "Axis", [-P["htangle"], Fork.y])
    WR_cont = me.Point("WR_cont")
    WR_mc = WR_cont.locatenew("WR_mc", P["WRrad"] * R.z)
    Steer = WR_mc.locatenew("Steer", P["framelength"] * Frame.z)
    Frame_mc = WR_mc.locatenew("Frame_mc", -P["framecg1"] * Frame.x + P["framecg3"] * Frame.z)
    Fork_mc = Steer.locatenew("Fork_mc", -P["forkcg1"] * Fork.x + P["forkcg3"] * Fork.z)
    WF_mc = Steer.locatenew("WF_mc", P["forklength"] * Fork.x + P["forkoffset"] * Fork.z)
    WF_cont = WF_mc.locatenew("WF_cont", P["WFrad"] * (me.dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    bodies = [me.RigidBody("BodyFrame", Frame_mc, Frame, P["mframe"], (me.inertia(
                  TempFrame, P["Iframe11"], P["Iframe22"], P["Iframe33"], 0, 0, P["Iframe31"]), Frame_mc)),
              me.RigidBody("BodyFork", Fork_mc, Fork, P["mfork"], (me.inertia(
                  TempFork, P["Ifork11"], P["Ifork22"], P["Ifork33"], 0, 0, P["Ifork31"]), Fork_mc)),
              me.RigidBody("BodyWR", WR_mc, WR, P["mwr"],
                           (me.inertia(Frame, P["Iwr11"], P["Iwr22"], P["Iwr11"]), WR_mc)),
              me.RigidBody("BodyWF", WF_mc, WF, P["mwf"],
                           (me.inertia(Fork, P["Iwf11"], P["Iwf22"], P["Iwf11"]), WF_mc))]
    loads = [(pt, -P[m] * P["g"] * Y.z) for pt, m in ((Frame_mc, "mframe"), (Fork_mc, "mfork"), (WF_mc, "mwf"),
                                                      (WR_mc, "mwr"))]
    km = me.KanesMethod(N, q_ind=[q1, q2, q5], q_dependent=[q4],
                        configuration_constraints=[WF_cont.pos_from(WR_cont) & Y.z],
                        u_ind=[u2, u3, u5], u_dependent=[u1, u4, u6],
                        velocity_constraints=[WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z],
                        kd_eqs=[q1d - u1, q2d - u2, q4d - u4, q5d - u5], constraint_solver="CRAMER")
    km.kanes_equations(bodies, loads)
    hta = (sp.pi / 2 - sp.pi / 10).evalf()
    rr, rf, trail, wb = 0.3, 0.35, 0.08, 1.02
    rake = (-(trail * sp.sin(hta) - rf * sp.cos(hta))).evalf()
    ta, tb = 0.9 - rf, wb - 0.9  # fork centre of mass height above the front axle, behind it
    tc = sp.sqrt(ta**2 + tb**2).evalf()
    fork_l = (wb * sp.cos(hta) - (rf - rr) * sp.sin(hta)).evalf()
    values = dict(WFrad=rf, WRrad=rr, htangle=hta, forkoffset=rake, forklength=fork_l,
                  framelength=(wb * sp.sin(hta) - (rake - (rf - rr) * sp.cos(hta))).evalf(),
                  forkcg1=(tc * sp.cos((sp.pi / 2 - hta) - sp.acos(ta / tc)) - fork_l).evalf(),
                  forkcg3=(rake + tc * sp.sin(sp.pi / 2 - hta - sp.acos(ta / tc))).evalf(),
                  framecg1=((0.9 - rr - (0.3 / sp.sin(hta)) * sp.cos(hta)) * sp.sin(hta)).evalf(),
                  framecg3=(0.3 / sp.sin(hta) + (0.9 - rr - 0.3 / sp.sin(hta) * sp.cos(hta)) * sp.cos(hta)).evalf(),
                  Iwr11=0.0603, Iwr22=0.12, Iwf11=0.1405, Iwf22=0.28, Ifork11=0.05892, Ifork22=0.06, Ifork33=0.00708,
                  Ifork31=0.00756, Iframe11=9.2, Iframe22=11, Iframe33=2.8, Iframe31=-2.4, mfork=4, mframe=85, mwf=3,
                  mwr=2, g=9.81)
    return km, {P[k]: sp.sympify(v) for k, v in values.items()}


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
        km, values = whipple_sympy()
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
