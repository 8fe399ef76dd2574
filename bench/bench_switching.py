"""Constraint switching: on-line recombination (seed 000 Eqs. 44-46) against pre-derived modes (Figure 2's
hybrid state machine) on the shopping cart of seed 000 Ex. 3 whose caster locks and unlocks.

* on-line: one derivation with the caster's lock transient; ``simulate_switching`` with a ``Lock`` rule embeds
  the active constraints at every evaluation (state: q and all four speeds);
* pre-derived: ``kane.derive`` with the lock permanent and without it, one compiled Dynamics per mode (state: q
  and the mode's independent speeds), switched at the lock times by a small state machine; locking applies the
  plastic impulse C^T M_free (u+ - u-) = 0 computed from the two modes' own equations.

Both are run with DOPRI5 at the same tolerances; the script checks that they give the same trajectory and prints
the wall time of each (best of ``repeat``), the evaluations of u' and the cost of one evaluation.
"""

from __future__ import annotations

import math
import time
import timeit

import numpy as np

import kane
from kane import joints as J
from kane.simulate.online import OnlineDynamics
from kane.simulate.switching import Lock, simulate_switching

__all__ = ["cart", "run", "run_online", "run_pre_derived"]

RTOL, ATOL = 1e-10, 1e-12


def cart(lock: str) -> kane.System:
    """The cart of seed 000 Ex. 3; ``lock``: "transient", "permanent" or "none" for the caster's lock."""
    s = kane.System("cart")
    mB, IB, mC, L1, L2, L3 = (s.parameter(n, v) for n, v in (("mB", 20.0), ("IB", 2.0), ("mC", 1.0),
                                                              ("L1", 0.4), ("L2", 0.9), ("L3", 0.1)))
    F, tau = s.input("F"), s.input("tau")
    s.add_body("B", mass=mB, com=(L1, 0, 0), inertia=(IB, IB, IB))
    s.add_body("C", mass=mC, com=(-L3, 0, 0))
    s.add_joint("ground", "B", J.Planar(J.Speeds.BODY), coordinates=["q1", "q2", "q3"], speeds=["u1", "v2", "u2"])
    s.add_joint("B", "C", J.Revolute("z"), parent_point=(L2, 0, 0), coordinates=["q4"], speeds=["w4"])
    s.add_force("B", (F, 0, 0), frame="B")
    s.add_torque("B", (0, 0, tau), frame="B")
    s.add_no_slip("back_wheels", "B", (0, 0, 0), (0, 1, 0))
    s.add_no_slip("caster_wheel", "C", (-L3, 0, 0), (0, 1, 0))
    if lock != "none":
        s.add_joint_lock("caster_stick", "B_C", transient=lock == "transient")
    return s


def push(t, q=None, u=None) -> dict:
    """The user's push: force F [N] along b1 and couple tau [N m] about b3."""
    return {"F": 12.0 * math.sin(1.3 * t) + 4.0, "tau": 3.0 * math.cos(2.1 * t)}


def schedule(t_end: float, period: float) -> list:
    """Lock intervals: locked during the second half of every ``period`` [s]."""
    n = int(t_end / period)
    return [(k * period + period / 2, (k + 1) * period) for k in range(n)]


def run_online(eqs, q0, u0, t_end, intervals, output_dt, project=True):
    return simulate_switching(eqs, (0.0, t_end), q0, u0, [Lock("caster_stick", on=intervals)], inputs=push,
                              rtol=RTOL, atol=ATOL, output_dt=output_dt, project=project)


def run_pre_derived(free, locked, q0, u0_full, t_end, intervals, output_dt):
    """The hybrid state machine; returns (t, q, u_full, evaluations of u')."""
    times = sorted({0.0, t_end, *[x for pair in intervals for x in pair if x < t_end]})
    q, u_full = np.array(q0, float), np.array(u0_full, float)
    names = [str(s) for s in free.equations.model.u]
    idx = {id(d): [names.index(n) for n in d.u_names] for d in (free, locked)}
    ts, qs, us, n_fev = [], [], [], 0
    for a, b in zip(times[:-1], times[1:]):
        dyn = locked if any(x <= a < y for x, y in intervals) else free
        if dyn is locked:
            C = locked.full_speeds(a, q, np.ones(1))[idx[id(free)]][:, None]
            Mf = free.mass_matrix(a, q)
            x = np.linalg.solve(C.T @ Mf @ C, C.T @ Mf @ u_full[idx[id(free)]])
            u_full = locked.full_speeds(a, q, x)
        traj = kane.simulate(dyn, (a, b), q, u_full[idx[id(dyn)]], inputs=push, rtol=RTOL, atol=ATOL,
                             output_dt=output_dt, record_energy=False)
        q, u_full = traj.q[-1], dyn.full_speeds(b, traj.q[-1], traj.u[-1])
        ts.append(traj.t)
        qs.append(traj.q)
        us.append(np.array([dyn.full_speeds(t, qk, uk) for t, qk, uk in zip(traj.t, traj.q, traj.u)]))
        n_fev += traj.stats.n_fev
    return np.concatenate(ts), np.concatenate(qs), np.concatenate(us), n_fev


def _deviation(traj, t_ref, q_ref, u_ref):
    """Largest differences of q and u at the reference's samples; samples at one time (before and after a jump)
    are matched in order."""
    dev_q = dev_u = 0.0
    seen = {}
    for t, q, u in zip(t_ref, q_ref, u_ref):
        k = np.flatnonzero(np.isclose(traj.t, t, rtol=0, atol=1e-12))
        j = k[min(seen.get(t, 0), k.size - 1)]
        seen[t] = seen.get(t, 0) + 1
        dev_q = max(dev_q, float(np.max(np.abs(traj.q[j] - q))))
        dev_u = max(dev_u, float(np.max(np.abs(traj.u[j] - u))))
    return dev_q, dev_u


def _best(fn, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(t_end: float = 10.0, period: float = 1.0, output_dt: float = 0.05, repeat: int = 3) -> dict:
    eqs = kane.derive(cart("transient"))
    free = kane.derive(cart("none")).compile()
    locked = kane.derive(cart("permanent")).compile()
    intervals = schedule(t_end, period)
    q0 = np.array([0.0, 0.0, 0.0, 0.3])
    u0 = free.full_speeds(0.0, q0, np.array([0.5, 0.2]))
    t_on, traj = _best(lambda: run_online(eqs, q0, u0, t_end, intervals, output_dt), repeat)
    t_np, traj_np = _best(lambda: run_online(eqs, q0, u0, t_end, intervals, output_dt, project=False), repeat)
    t_pre, (t_ref, q_ref, u_ref, fev_pre) = _best(
        lambda: run_pre_derived(free, locked, q0, u0, t_end, intervals, output_dt), repeat)
    dev_q, dev_u = _deviation(traj, t_ref, q_ref, u_ref)
    dev_q_np, dev_u_np = _deviation(traj_np, t_ref, q_ref, u_ref)
    online = OnlineDynamics(eqs, active=["caster_stick"])
    q, u = np.array([0.1, -0.2, 0.3, 0.4]), online.project_velocity(np.array([0.1, -0.2, 0.3, 0.4]), u0)
    inputs = push(0.0)

    def eval_online():
        online._cache_key = None  # time the evaluation, not the cache
        online.udot(0.0, q, u, inputs=inputs)

    reps = 2000
    us_online = min(timeit.repeat(eval_online, number=reps, repeat=3)) / reps * 1e6
    us_pre = min(timeit.repeat(lambda: locked.udot(0.0, q, u[[0]], inputs=inputs), number=reps,
                               repeat=3)) / reps * 1e6
    out = {"switches": len(traj.events), "online_s": t_on, "online_unprojected_s": t_np, "pre_derived_s": t_pre,
           "ratio": t_on / t_pre, "online_fev": traj.stats.n_fev, "online_unprojected_fev": traj_np.stats.n_fev,
           "pre_derived_fev": fev_pre, "max_dq": dev_q, "max_du": dev_u, "max_dq_unprojected": dev_q_np,
           "max_du_unprojected": dev_u_np, "udot_online_us": us_online, "udot_pre_derived_us": us_pre}
    print(f"cart, {t_end:g} s, caster locked and unlocked {out['switches']} times, DOPRI5 rtol {RTOL:g}:")
    print(f"  on-line recombination, projected every step: {t_on:.3f} s ({out['online_fev']} evaluations of u'); "
          f"max |dq| = {dev_q:.1e}, max |du| = {dev_u:.1e} from the pre-derived run")
    print(f"  on-line recombination, no projection:        {t_np:.3f} s ({traj_np.stats.n_fev} evaluations); "
          f"max |dq| = {dev_q_np:.1e}, max |du| = {dev_u_np:.1e}")
    print(f"  pre-derived modes (hybrid state machine):    {t_pre:.3f} s ({fev_pre} evaluations)")
    print(f"  on-line / pre-derived: {out['ratio']:.2f}x (no projection: {t_np / t_pre:.2f}x)")
    print(f"  one u' (locked mode): on-line {us_online:.1f} us, pre-derived {us_pre:.1f} us "
          f"({us_online / us_pre:.1f}x)")
    return out


if __name__ == "__main__":
    run()
