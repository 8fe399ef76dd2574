"""Rolling on NURBS terrain (issue 16 item 3): the embedded Kane formulation (kane.simulate.terrain: 3 speeds, the
terrain's normal and its rate as inputs, the contact by Newton each evaluation) against the Cartesian rolling joint
(kane.algorithms.cartesian_contact: 6 speeds, 3 multipliers, 4 contact coordinates), on the rational bicubic bump
of tests/simulate/test_terrain.py, for a ball and a torus wheel.

Printed per body: one evaluation of (q', u') [us] for each formulation and their ratio; a run (DOPRI5, rtol 1e-10,
atol 1e-12) of ``t_end`` seconds: evaluations, wall time [s], the largest difference of the centre and quaternion
between the two, the relative energy change and the embedded formulation's height drift max |h - rho| [m] without
projection (the Cartesian run projects every 5 steps).

Run: ``python bench/bench_terrain.py [--quick]`` (quick: 0.3 s runs instead of 1 s).
"""

from __future__ import annotations

import pathlib
import sys
import time
import timeit

import numpy as np

import kane
from kane.surfaces import Sphere, Torus

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "simulate"))
from test_terrain import COM, COMW, INERTIA, IW, MASS, MW, R_BALL, _bump, _cartesian  # noqa: E402

from kane.simulate.terrain import RollingSphereOnTerrain, RollingWheelOnTerrain  # noqa: E402

__all__ = ["compare", "run"]

_START = (0.3, 0.45)


def _bodies():
    """(label, embedded dynamics, q0, u0, Cartesian dynamics) for the ball and the torus wheel on the bump."""
    terrain, out = _bump(), []
    ball = RollingSphereOnTerrain(terrain, R_BALL, MASS, com=COM, inertia=INERTIA)
    q0, u0 = ball.initial_state(ball.touching_centre(*_START), *_START, omega=[0.3, -2.0, 0.5])
    turn = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])
    out.append(("ball", ball, q0, u0, _cartesian(terrain, _START, Sphere(R_BALL, rotation=turn, name="shell"))))
    wheel = RollingWheelOnTerrain(terrain, 0.25, MW, IW, tube_radius=0.05, com=COMW)
    up = np.array([1.0, 0.0, 0.0, 0.0])
    q0, u0 = wheel.initial_state(wheel.touching_centre(*_START, up), *_START, up, omega=[0.0, 6.0, 0.5])
    turn = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
    out.append(("torus wheel", wheel, q0, u0,
                _cartesian(terrain, _START, Torus(0.25, 0.05, rotation=turn, name="tyre"), MW, COMW, IW)))
    return out


def compare(t_end: float = 1.0) -> list[dict]:
    """One row per body (see the module docstring)."""
    rows = []
    for label, emb, q0, u0, cd in _bodies():
        qc, uc = cd.initial_state(q0, emb.full_speeds(0.0, q0, u0))
        timings = []
        for dyn, q, u in ((emb, q0, u0), (cd, qc, uc)):
            step = [0.0]

            def once(dyn=dyn, q=q, u=u):  # a new time each call: no cached contact is reused
                step[0] += 1e-9
                dyn.qdot(step[0], q, u)
                dyn.udot(step[0], q, u)

            timings.append(min(timeit.repeat(once, number=50, repeat=3)) / 50)
        emb.initial_state(q0[:3], *_START, q0[3:])  # the contact's warm start back at the start
        runs = []
        for dyn, q, u, extra in ((emb, q0, u0, {}),
                                 (cd, qc, uc, {"projection": cd.make_projection(), "project_every": 5})):
            start = time.perf_counter()
            tr = kane.simulate.simulate(dyn, (0.0, t_end), q, u, rtol=1e-10, atol=1e-12, output_dt=t_end / 4, **extra)
            runs.append((tr, time.perf_counter() - start))
        (te, we), (tc, wc) = runs
        rows.append({"body": label, "eval_us": (1e6 * timings[0], 1e6 * timings[1]),
                     "n_fev": (te.stats.n_fev, tc.stats.n_fev), "wall": (we, wc),
                     "diff": float(np.abs(tc.q[:, :7] - te.q).max()),
                     "dE": (float(np.ptp(te.energy) / abs(te.energy[0])), float(np.ptp(tc.energy) / abs(tc.energy[0]))),
                     "drift": max(abs(emb.contact(t, q).gap) for t, q in zip(te.t, te.q))})
    return rows


def run(quick: bool = False) -> None:
    t_end = 0.3 if quick else 1.0
    print(f"{'body':12s} {'eval embedded':>14s} {'eval Cartesian':>15s} {'ratio':>6s} {'fev':>11s} {'wall [s]':>12s} "
          f"{'max diff':>9s} {'dE/E emb, cart':>18s} {'drift [m]':>9s}")
    for r in compare(t_end):
        print(f"{r['body']:12s} {r['eval_us'][0]:11.0f} us {r['eval_us'][1]:12.0f} us "
              f"{r['eval_us'][1] / r['eval_us'][0]:6.2f} {r['n_fev'][0]:5d} {r['n_fev'][1]:5d} "
              f"{r['wall'][0]:5.2f} {r['wall'][1]:5.2f}  {r['diff']:8.1e} {r['dE'][0]:8.1e} {r['dE'][1]:8.1e} "
              f"{r['drift']:9.1e}")
    print(f"(runs of {t_end:g} s; the Cartesian/embedded ratio of one evaluation: > 1 means embedded is faster)")


if __name__ == "__main__":
    run(quick="--quick" in sys.argv[1:])
