"""Simulation in C (issue 12, item 3) against Pinocchio + scipy and MuJoCo, on the 7-link chain of models.py.

In one process, best of several interleaved repeats:
* 10 s released at rest (q = 0.3 rad at every joint), rtol = atol = 1e-6: ``kane.simulate`` (DOPRI5, the loop in
  C, a sample at every step with the energy) against ``scipy.integrate.solve_ivp`` (RK45) over ``pin.aba``.
  Target: kane at least 10x faster.
* Fixed-step RK4 at dt = 1 ms: kane's ``Stepper.step`` (one step per call from Python, and 1000 steps per call),
  and ``kane.simulate`` with method RK4, against MuJoCo's ``mj_step`` with its RK4 integrator on the same chain
  (built here as MJCF; checked against kane's u' first), one step per call, and ``mujoco.rollout`` (steps in C).
  Target: kane at least 3x faster per step.
Run: ``python bench/bench_sim_c.py`` (needs pin, mujoco and a C compiler).
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kane  # noqa: E402

from models import pendulum_chain_kane  # noqa: E402

__all__ = ["mujoco_chain", "run"]


def mujoco_chain(n: int, params: dict, dt: float = 1e-3) -> str:
    """MJCF of the chain of models.pendulum_chain_kane(n): hinges about x, y, x, ..., full inertia tensors, RK4."""
    body, close = [], []
    for i in range(n):
        p = {k: params[f"I{i}{k}"] for k in ("xx", "yy", "zz", "xy", "yz", "zx")}
        axis = "1 0 0" if i % 2 == 0 else "0 1 0"
        pos = "0 0 0" if i == 0 else f"0 0 {-params['L']}"
        body.append(f'<body name="B{i}" pos="{pos}"><joint name="j{i}" type="hinge" axis="{axis}"/>'
                    f'<inertial pos="0 0 {-params["L"] / 2}" mass="{params[f"m{i}"]}" fullinertia="{p["xx"]} '
                    f'{p["yy"]} {p["zz"]} {p["xy"]} {p["zx"]} {p["yz"]}"/>')
        close.append("</body>")
    return (f'<mujoco model="chain{n}"><option timestep="{dt}" integrator="RK4" gravity="0 0 {-params["g"]}">'
            f'<flag contact="disable" constraint="disable"/></option><worldbody>{"".join(body)}{"".join(close)}'
            f"</worldbody></mujoco>")


def _best(fn, number=1, repeat=5):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def run(n: int = 7) -> dict:
    try:
        import mujoco
        import pinocchio as pin
        from scipy.integrate import solve_ivp
    except ImportError as exc:
        print(f"{exc.name} is not installed: nothing to compare with")
        return {}
    from bench_aba import pinocchio_chain

    eqs = kane.derive(pendulum_chain_kane(n))
    dyn = eqs.compile(backend="c")
    params = dict(zip(dyn.parameter_names, eqs.model.parameter_defaults))
    q0, u0, tau = np.full(n, 0.3), np.zeros(n), np.zeros(n)
    out = {}

    pmodel = pin.Model(pinocchio_chain(n, params))
    pdata = pmodel.createData()

    def f(t, x):
        return np.concatenate([x[n:], pin.aba(pmodel, pdata, x[:n], x[n:], tau)])

    def scipy_run():
        return solve_ivp(f, (0.0, 10.0), np.concatenate([q0, u0]), method="RK45", rtol=1e-6, atol=1e-6)

    def kane_run():
        return kane.simulate.simulate(dyn, (0.0, 10.0), q0, u0, method="dopri5", rtol=1e-6, atol=1e-6)

    sol, traj = scipy_run(), kane_run()
    err = np.abs(traj.q[-1] - sol.y[:n, -1]).max()
    for _ in range(2):
        out["scipy_s"] = min(out.get("scipy_s", 1e9), _best(scipy_run, 1, 5))
        out["kane_sim_s"] = min(out.get("kane_sim_s", 1e9), _best(kane_run, 1, 5))
    print(f"10 s of the {n}-link chain, rtol = atol = 1e-6 (end states differ by {err:.1e} rad):")
    print(f"  pin.aba + solve_ivp RK45   {out['scipy_s'] * 1e3:8.2f} ms   {sol.nfev} evaluations")
    print(f"  kane.simulate DOPRI5 in C  {out['kane_sim_s'] * 1e3:8.2f} ms   {traj.stats.n_fev} evaluations, "
          f"{traj.n_samples} samples with energy   speed-up {out['scipy_s'] / out['kane_sim_s']:5.1f}x "
          "(target: at least 10x)")

    mmodel = mujoco.MjModel.from_xml_string(mujoco_chain(n, params))
    mdata = mujoco.MjData(mmodel)
    rng = np.random.default_rng(1)
    q, u = rng.normal(size=n), rng.normal(size=n)
    mdata.qpos[:], mdata.qvel[:] = q, u
    mujoco.mj_forward(mmodel, mdata)
    assert np.allclose(mdata.qacc, dyn.udot(0.0, q, u), rtol=1e-9, atol=1e-9), "the MJCF chain is another chain"
    steps = 1000

    def mj_steps():
        for _ in range(steps):
            mujoco.mj_step(mmodel, mdata)

    from mujoco import rollout

    state0 = np.zeros((1, mujoco.mj_stateSize(mmodel, mujoco.mjtState.mjSTATE_FULLPHYSICS)))
    mdata.qpos[:], mdata.qvel[:] = q0, u0
    mujoco.mj_getState(mmodel, mdata, state0[0], mujoco.mjtState.mjSTATE_FULLPHYSICS)

    def mj_rollout():
        rollout.rollout(mmodel, mdata, state0, nstep=steps)

    stepper = dyn.stepper(0.0, q0, u0)

    def kane_one():
        for _ in range(steps):
            stepper.step(1, 1e-3)

    def kane_many():
        stepper.step(steps, 1e-3)

    def kane_sim_rk4():
        return kane.simulate.simulate(dyn, (0.0, 1.0), q0, u0, method="rk4", dt=1e-3, output_dt=1e-3)

    for _ in range(2):
        for key, fn in (("mj_step_us", mj_steps), ("mj_rollout_us", mj_rollout), ("kane_step1_us", kane_one),
                        ("kane_step1000_us", kane_many), ("kane_sim_rk4_us", kane_sim_rk4)):
            out[key] = min(out.get(key, 1e9), _best(fn, 1, 5) / steps * 1e6)
    mj = out["mj_step_us"]
    print(f"RK4 at dt = 1 ms, per step ({steps} steps):")
    print(f"  mujoco mj_step (RK4), one call per step   {mj:8.3f} us")
    print(f"  mujoco rollout (steps in C)               {out['mj_rollout_us']:8.3f} us")
    for key, what in (("kane_step1_us", "kane Stepper.step(1), one call per step"),
                      ("kane_step1000_us", "kane Stepper.step(1000)"),
                      ("kane_sim_rk4_us", "kane.simulate RK4 (sample every step)")):
        print(f"  {what:40s}  {out[key]:8.3f} us   mj_step / kane {mj / out[key]:5.1f}x, rollout / kane "
              f"{out['mj_rollout_us'] / out[key]:5.1f}x")
    print("  (target: kane at least 3x faster per step than mj_step)")
    return out


if __name__ == "__main__":
    run()
