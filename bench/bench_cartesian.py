"""Absolute Cartesian coordinates with multipliers (seed 003) against Kane's embedded equations (seed 004's cost
argument: 6 Nb + Nc unknowns against 6 Nb - Nc degrees of freedom).

Printed:

* the closed four-bar over 20 s (DOPRI5, rtol 1e-6, atol 1e-8): the largest constraint error max |C| [m, rad] of
  the embedded Kane equations without and with position projection, and of the Cartesian formulation without
  stabilization, with Baumgarte (alpha = beta = 5 and 20 1/s) and with projection; evaluations and wall time;
* system sizes and the time of one forward-dynamics evaluation (Cartesian, ABA, embedded Kane) on the 7-link
  chain of models.py and on the four-bar.

Run: ``python bench/bench_cartesian.py``.
"""

from __future__ import annotations

import pathlib
import sys
import time
import timeit

import numpy as np

import kane
from kane.algorithms import RecursiveDynamics
from kane.algorithms.cartesian import CartesianDynamics
from kane.simulate import assemble, make_projection, simulate

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "algorithms"))
from models import pendulum_chain_kane
from test_cartesian import closure_by_hand, four_bar_system

__all__ = ["four_bar_drift", "run", "sizes_and_timings"]


def _best(fn, number=200, repeat=5):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def four_bar_drift(t_end: float = 20.0, rtol: float = 1e-6, atol: float = 1e-8) -> list[dict]:
    """Rows (formulation, max |C|, evaluations, wall [s], relative energy change) for the four-bar."""
    s = four_bar_system()
    dyn = kane.derive(s, dependent=["u2", "u3"]).compile()
    q0 = assemble(dyn, 0.0, np.array([0.7, -0.3, 2.0])).q
    u0 = np.array([2.0])
    u_full = dyn.full_speeds(0.0, q0, u0)
    opts = {"rtol": rtol, "atol": atol, "output_dt": 0.1}
    rows = []

    def record(name, dynamics, q, u, monitor, **kw):
        start = time.perf_counter()
        tr = simulate(dynamics, (0.0, t_end), q, u, monitors={"C": monitor}, **opts, **kw)
        rows.append({"name": name, "C": float(tr.residuals["C"].max()), "n_fev": tr.stats.n_fev,
                     "wall": time.perf_counter() - start, "dE": float(np.ptp(tr.energy)) / abs(float(tr.energy[0]))})

    by_hand = lambda t, q, u: float(np.abs(closure_by_hand(q)).max())
    record("Kane, embedded (1 equation)", dyn, q0, u0, by_hand)
    record("Kane, embedded + projection", dyn, q0, u0, by_hand, projection=make_projection(dyn))
    for label, gains, proj in (("Cartesian, no stabilization", (0.0, 0.0), False),
                               ("Cartesian, Baumgarte 5, 5", (5.0, 5.0), False),
                               ("Cartesian, Baumgarte 20, 20", (20.0, 20.0), False),
                               ("Cartesian + projection", (0.0, 0.0), True)):
        cd = CartesianDynamics(s, alpha=gains[0], beta=gains[1])
        xq, xu = cd.from_joint_state(q0, u_full)
        mon = lambda t, q, u, cd=cd: float(np.abs(cd.configuration_residual(t, q)).max())
        record(f"{label} ({cd.n_unknowns} unknowns)", cd, xq, xu, mon,
               **({"projection": cd.make_projection()} if proj else {}))
    return rows


def sizes_and_timings() -> list[dict]:
    """Per model: Nb, Nc, 6 Nb + Nc, degrees of freedom, and one evaluation of u' [us] for each formulation."""
    out = []
    chain = pendulum_chain_kane(7)
    model = chain.compile()
    rng = np.random.default_rng(0)
    q, u = rng.normal(size=model.n_q), rng.normal(size=model.n_u)
    cd, rd, sym = CartesianDynamics(model), RecursiveDynamics(model), kane.derive(model).compile()
    xq, xu = cd.from_joint_state(q, u)
    rd.udot(0.0, q, u), sym.udot(0.0, q, u)
    out.append({"model": "7-link chain", "Nb": cd.n_bodies, "Nc": cd.n_constraints, "unknowns": cd.n_unknowns,
                "dof": model.n_u, "cart": _best(lambda: cd.udot(0.0, xq, xu), 50),
                "aba": _best(lambda: rd.udot(0.0, q, u)), "kane": _best(lambda: sym.udot(0.0, q, u))})
    s = four_bar_system()
    dyn = kane.derive(s, dependent=["u2", "u3"]).compile()
    q0 = assemble(dyn, 0.0, np.array([0.7, -0.3, 2.0])).q
    cd = CartesianDynamics(s)
    xq, xu = cd.from_joint_state(q0, dyn.full_speeds(0.0, q0, np.array([2.0])))
    dyn.udot(0.0, q0, np.array([2.0]))
    out.append({"model": "four-bar", "Nb": cd.n_bodies, "Nc": cd.n_constraints, "unknowns": cd.n_unknowns,
                "dof": dyn.n_u, "cart": _best(lambda: cd.udot(0.0, xq, xu), 50), "aba": float("nan"),
                "kane": _best(lambda: dyn.udot(0.0, q0, np.array([2.0])))})
    return out


def run() -> None:
    print("closed four-bar, 20 s, DOPRI5 rtol 1e-6 atol 1e-8: largest constraint error over the run")
    print(f"  {'formulation':<46} {'max |C|':>10} {'evaluations':>12} {'wall [s]':>9} {'|dE|/E0':>9}")
    for r in four_bar_drift():
        print(f"  {r['name']:<46} {r['C']:>10.2e} {r['n_fev']:>12d} {r['wall']:>9.2f} {r['dE']:>9.1e}")
    print("\nsystem sizes (6 Nb + Nc unknowns against the minimal count) and one evaluation of u' [us]")
    print(f"  {'model':<14} {'Nb':>3} {'Nc':>4} {'6Nb+Nc':>7} {'DOF':>4} {'Cartesian':>10} {'ABA':>8} {'Kane':>8}"
          f" {'Cart/Kane':>10}")
    for r in sizes_and_timings():
        print(f"  {r['model']:<14} {r['Nb']:>3} {r['Nc']:>4} {r['unknowns']:>7} {r['dof']:>4} {r['cart'] * 1e6:>10.0f}"
              f" {r['aba'] * 1e6:>8.0f} {r['kane'] * 1e6:>8.0f} {r['cart'] / r['kane']:>10.0f}")


if __name__ == "__main__":
    run()
