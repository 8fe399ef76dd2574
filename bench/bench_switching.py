"""Constraint switching: on-line recombination (seed 000 Eqs. 44-46) against pre-derived modes (Figure 2's
hybrid state machine) on the shopping cart of seed 000 Ex. 3 whose caster locks and unlocks.

* on-line: one derivation with the caster's lock transient; ``simulate_switching`` with a ``Lock`` rule embeds
  the active constraints at every evaluation (state: q and all four speeds);
* pre-derived: :class:`kane.switching.hybrid.HybridSimulator`, the hybrid state machine: ``kane.derive`` of the
  cart with the lock permanent and without it (derived once, outside the timing), one compiled Dynamics per mode
  (state: q and the mode's independent speeds), switched by the same Lock rule; locking applies the on-line
  plastic impulse and maps the full speeds to the next mode's independent speeds.

Both are run with DOPRI5 at the same tolerances; the script checks that they give the same trajectory and prints
the wall time of each (best of ``repeat``, construction included), the evaluations of u', the ratio, and the cost
of one evaluation.
"""

from __future__ import annotations

import math
import time
import timeit

import numpy as np

import kane
from kane import joints as J
from kane.switching.hybrid import HybridSimulator
from kane.switching.online import OnlineDynamics
from kane.switching import Lock, simulate_switching
from kane.switching.settings import switching_run_options

__all__ = ["cart", "run", "run_hybrid", "run_online"]

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


def run_hybrid(system, eqs, mode_equations, q0, u0, t_end, intervals, output_dt, inputs_need_speeds=False):
    """The hybrid state machine on the modes derived beforehand (``mode_equations``: active set -> Dynamics)."""
    options = switching_run_options(rtol=RTOL, atol=ATOL, output_dt=output_dt)
    runner = HybridSimulator(system, q0, u0, [Lock("caster_stick", on=intervals)], options, equations=eqs,
                             mode_equations=mode_equations, on_missing="error", inputs=push,
                             inputs_need_speeds=inputs_need_speeds)
    return runner.run(t_end)


def _deviation(traj, ref):
    """Largest differences of q and u at the reference's samples; samples at one time (before and after a jump)
    are matched in order."""
    dev_q = dev_u = 0.0
    seen = {}
    for t, q, u in zip(ref.t, ref.q, ref.u):
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
    system = cart("transient")
    eqs = kane.derive(system)
    free = kane.derive(cart("none")).compile()
    intervals = schedule(t_end, period)
    q0 = np.array([0.0, 0.0, 0.0, 0.3])
    u0 = free.full_speeds(0.0, q0, np.array([0.5, 0.2]))
    t0 = time.perf_counter()
    modes = HybridSimulator(system, q0, u0, equations=eqs, modes=[(), ("caster_stick",)]).mode_equations
    t_derive = time.perf_counter() - t0
    t_on, traj = _best(lambda: run_online(eqs, q0, u0, t_end, intervals, output_dt), repeat)
    t_np, traj_np = _best(lambda: run_online(eqs, q0, u0, t_end, intervals, output_dt, project=False), repeat)
    t_pre, ref = _best(lambda: run_hybrid(system, eqs, modes, q0, u0, t_end, intervals, output_dt), repeat)
    t_full, _ = _best(lambda: run_hybrid(system, eqs, modes, q0, u0, t_end, intervals, output_dt, True),
                             repeat)
    dev_q, dev_u = _deviation(traj, ref)
    dev_q_np, dev_u_np = _deviation(traj_np, ref)
    locked = modes[("caster_stick",)]
    online = OnlineDynamics(eqs, active=["caster_stick"])
    q, u = np.array([0.1, -0.2, 0.3, 0.4]), online.project_velocity(np.array([0.1, -0.2, 0.3, 0.4]), u0)
    inputs = push(0.0)

    def eval_online():
        online._cache_key = None  # time the evaluation, not the cache
        online.udot(0.0, q, u, inputs=inputs)

    reps = 2000
    us_online = min(timeit.repeat(eval_online, number=reps, repeat=3)) / reps * 1e6
    ui = u[[online.u_names.index(n) for n in locked.u_names]]
    us_pre = min(timeit.repeat(lambda: locked.udot(0.0, q, ui, inputs=inputs), number=reps, repeat=3)) / reps * 1e6
    out = {"switches": len(traj.events), "online_s": t_on, "online_unprojected_s": t_np, "pre_derived_s": t_pre,
           "pre_derived_full_speed_inputs_s": t_full, "derive_modes_s": t_derive, "ratio": t_on / t_pre,
           "online_fev": traj.stats.n_fev, "online_unprojected_fev": traj_np.stats.n_fev,
           "pre_derived_fev": ref.stats.n_fev, "max_dq": dev_q, "max_du": dev_u, "max_dq_unprojected": dev_q_np,
           "max_du_unprojected": dev_u_np, "udot_online_us": us_online, "udot_pre_derived_us": us_pre}
    print(f"cart, {t_end:g} s, caster locked and unlocked {out['switches']} times, DOPRI5 rtol {RTOL:g}:")
    print(f"  on-line recombination, projected every step: {t_on:.3f} s ({out['online_fev']} evaluations of u'); "
          f"max |dq| = {dev_q:.1e}, max |du| = {dev_u:.1e} from the pre-derived run")
    print(f"  on-line recombination, no projection:        {t_np:.3f} s ({traj_np.stats.n_fev} evaluations); "
          f"max |dq| = {dev_q_np:.1e}, max |du| = {dev_u_np:.1e}")
    print(f"  pre-derived modes (HybridSimulator):          {t_pre:.3f} s ({ref.stats.n_fev} evaluations); "
          f"{t_full:.3f} s with the inputs given the full speeds; the two modes derived once in {t_derive:.2f} s")
    print(f"  on-line / pre-derived: {out['ratio']:.2f}x (no projection: {t_np / t_pre:.2f}x)")
    print(f"  one u' (locked mode): on-line {us_online:.1f} us, pre-derived {us_pre:.1f} us "
          f"({us_online / us_pre:.1f}x)")
    return out


if __name__ == "__main__":
    run()
