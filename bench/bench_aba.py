"""ABA benchmark: kane's traced articulated-body method against Pinocchio's, on the 7-link chain of models.py.

Both are called from Python in the same process on the same chain (pendulum_chain_kane(7), rebuilt joint by
joint in Pinocchio). Printed: one u' (kane numpy backend, kane numba backend, pin.aba) and a batch of 10,000
states (kane numpy batch, kane numba prange batch, pin.abaInParallel with as many threads as cores, or a loop of
pin.aba if abaInParallel is missing), with the ratios kane / Pinocchio. Targets (issue 4): one u' within 3x of
pin.aba; the batch within 2x of abaInParallel per state. Run: ``python bench/bench_aba.py`` (needs pin; numba
optional).
"""

from __future__ import annotations

import os
import time
import timeit

import numpy as np

from kane import Formulation
from kane.algorithms import RecursiveDynamics

from models import pendulum_chain_kane

__all__ = ["run", "pinocchio_chain"]


def pinocchio_chain(n: int, params: dict):
    """The chain of models.pendulum_chain_kane(n) built in Pinocchio (joints RX, RY, RX, ...)."""
    import pinocchio as pin

    model = pin.Model()
    model.gravity = pin.Motion(np.array([0, 0, -params["g"], 0, 0, 0]))
    L, parent = params["L"], 0
    for i in range(n):
        joint = pin.JointModelRX() if i % 2 == 0 else pin.JointModelRY()
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.0 if i == 0 else -L]))
        jid = model.addJoint(parent, joint, placement, f"j{i}")
        p = {k: params[f"I{i}{k}"] for k in ("xx", "yy", "zz", "xy", "yz", "zx")}
        I = np.array([[p["xx"], p["xy"], p["zx"]], [p["xy"], p["yy"], p["yz"]], [p["zx"], p["yz"], p["zz"]]])
        model.appendBodyToJoint(jid, pin.Inertia(params[f"m{i}"], np.array([0, 0, -L / 2]), I), pin.SE3.Identity())
        parent = jid
    return model


def _best(fn, number, repeat=5):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def run(n: int = 7, batch: int = 10_000) -> dict:
    try:
        import pinocchio as pin
    except ImportError:
        print("pinocchio (pip install pin) is not installed: nothing to compare with")
        return {}
    system = pendulum_chain_kane(n)
    t0 = time.perf_counter()
    dyn = RecursiveDynamics(system, Formulation.ABA)
    rng = np.random.default_rng(0)
    q, u, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    dyn.udot(0.0, q, u, tau=tau)
    t_numpy_build = time.perf_counter() - t0
    params = dict(zip(dyn.parameter_names, dyn.model.parameter_defaults))
    pmodel = pinocchio_chain(n, params)
    pdata = pmodel.createData()
    a_pin = pin.aba(pmodel, pdata, q, u, tau)
    assert np.allclose(dyn.udot(0.0, q, u, tau=tau), a_pin, rtol=1e-10, atol=1e-10), "kane and pin.aba disagree"
    out = {"ops": dyn.program(["udot_aba"]).count_ops(["udot_aba"]).total, "build_s": t_numpy_build}
    reps = 20_000
    out["pin_us"] = _best(lambda: pin.aba(pmodel, pdata, q, u, tau), reps) * 1e6
    out["numpy_us"] = _best(lambda: dyn.udot(0.0, q, u, tau=tau), reps // 10) * 1e6
    fast = None
    try:
        t0 = time.perf_counter()
        fast = RecursiveDynamics(system, Formulation.ABA, backend="numba")
        fast.udot(0.0, q, u, tau=tau)
        out["numba_build_s"] = time.perf_counter() - t0
        assert np.allclose(fast.udot(0.0, q, u, tau=tau), a_pin, rtol=1e-10, atol=1e-10)
        out["numba_us"] = _best(lambda: fast.udot(0.0, q, u, tau=tau), reps) * 1e6
        out["pin_us"] = min(out["pin_us"], _best(lambda: pin.aba(pmodel, pdata, q, u, tau), reps) * 1e6)
    except ImportError:
        print("numba is not installed: the numba backend is skipped")
    print(f"{n}-link chain, one u' by ABA ({out['ops']} operations traced; numpy build {out['build_s']:.1f} s"
          + (f", numba build {out['numba_build_s']:.1f} s" if fast else "") + ")")
    print(f"  pin.aba from Python      {out['pin_us']:8.2f} us")
    print(f"  kane numpy backend       {out['numpy_us']:8.2f} us   ratio {out['numpy_us'] / out['pin_us']:6.2f}x")
    if fast:
        print(f"  kane numba backend       {out['numba_us']:8.2f} us   ratio {out['numba_us'] / out['pin_us']:6.2f}x"
              "   (target: within 3x)")

    Q, U, T = rng.normal(size=(batch, n)), rng.normal(size=(batch, n)), rng.normal(size=(batch, n))
    ref = dyn.udot(0.0, Q, U, tau=T)
    out["numpy_batch_us"] = _best(lambda: dyn.udot(0.0, Q, U, tau=T), 1, 3) / batch * 1e6
    threads = os.cpu_count() or 1
    if hasattr(pin, "abaInParallel"):
        pool = pin.ModelPool(pmodel, threads)
        Qp, Up, Tp = (np.asfortranarray(x.T) for x in (Q, U, T))
        A = np.asfortranarray(np.zeros((n, batch)))
        pin.abaInParallel(threads, pool, Qp, Up, Tp, A)
        assert np.allclose(A.T, ref, rtol=1e-10, atol=1e-10)
        out["pin_batch_us"] = _best(lambda: pin.abaInParallel(threads, pool, Qp, Up, Tp, A), 1, 5) / batch * 1e6
        label = f"pin.abaInParallel ({threads} threads)"
    else:
        out["pin_batch_us"] = _best(lambda: [pin.aba(pmodel, pdata, Q[k], U[k], T[k]) for k in range(batch)],
                                    1, 3) / batch * 1e6
        label = "pin.aba loop"
    print(f"batch of {batch} states, per state:")
    print(f"  {label:<24} {out['pin_batch_us']:8.3f} us")
    print(f"  kane numpy batch         {out['numpy_batch_us']:8.3f} us   ratio "
          f"{out['numpy_batch_us'] / out['pin_batch_us']:6.2f}x")
    if fast:
        assert np.allclose(fast.udot(0.0, Q, U, tau=T), ref, rtol=1e-10, atol=1e-10)
        out["numba_batch_us"] = _best(lambda: fast.udot(0.0, Q, U, tau=T), 1, 5) / batch * 1e6
        print(f"  kane numba prange batch  {out['numba_batch_us']:8.3f} us   ratio "
              f"{out['numba_batch_us'] / out['pin_batch_us']:6.2f}x   (target: within 2x)")
    return out


if __name__ == "__main__":
    run()
