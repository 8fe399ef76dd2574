"""ABA benchmark: kane's traced articulated-body method against Pinocchio's, on the 7-link chain of models.py.

Both are called from Python in the same process on the same chain (pendulum_chain_kane(7), rebuilt joint by
joint in Pinocchio). Printed: one u' (kane numpy backend, kane numba backend, pin.aba) and a batch of 10,000
states (kane numpy batch, kane numba prange batch, pin.abaInParallel with as many threads as cores, or a loop of
pin.aba if abaInParallel is missing), with the ratios kane / Pinocchio. Targets (issue 4): one u' within 3x of
pin.aba; the batch within 2x of abaInParallel per state. Run: ``python bench/bench_aba.py`` (needs pin; numba
optional).

``--ready`` (issue 28, item 7) measures the generic compiled kernel (kane.algorithms.kernel) in one process: the
one-time build of the kernel library in a fresh KANE_CACHE_DIR, then in that cache the time from
``kane.dynamics(system)`` (the System compiled, formulation "auto") to the first u' for the 30- and 100-link
chains and the largest robot of example-robot-data that kane imports (tiago_dual.urdf, 101 DOF, read from the
package's data files: the ``example_robot_data`` Python module itself is not needed), and u' per call against
``pin.aba`` on the same models (best of interleaved rounds). ``--traced`` adds the traced C ABA's time to the
first u', cold (a per-model C build: tens of seconds) and with its library cached (the tracing remains), and its
u' against the kernel's. Targets: ready in under 1 s cold, u' within 1.2x of pin.aba.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sysconfig
import tempfile
import time
import timeit
import warnings

import numpy as np

from kane import Formulation
from kane.algorithms import RecursiveDynamics

from models import pendulum_chain_kane

__all__ = ["run", "run_ready", "pinocchio_chain"]


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


def _tiago():
    """(kane System, pin.Model) of example-robot-data's tiago_dual.urdf, or None when the data is missing."""
    import pinocchio as pin
    from kane.io.urdf import load_urdf

    path = (pathlib.Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
            / "tiago_description/robots/tiago_dual.urdf")
    if not path.is_file():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_urdf(path, mimic="independent").system, pin.buildModelFromUrdf(str(path))


def _to_pin(model, pmodel, q):
    """(v_idx, q_pin): Pinocchio's speed k is kane's u[v_idx[k]] (one-speed joints matched by name); its q, with
    (cos, sin) for a continuous joint (two coordinates, one speed)."""
    idx, qp = [], np.zeros(pmodel.nq)
    for jid in range(1, pmodel.njoints):
        pj, jm = model.joints[model.joint_index(pmodel.names[jid])], pmodel.joints[jid]
        k = range(model.n_q)[pj.q_slice].start
        qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(q[k]), np.sin(q[k])] if jm.nq == 2 else [q[k]]
        idx += list(range(model.n_u)[pj.u_slice])
    return np.array(idx), qp


def run_ready(traced: bool = False, rounds: int = 15) -> dict:
    """The kernel's cold start and u' per call against pin.aba (see the module docstring)."""
    import pinocchio as pin

    import kane
    from kane.codegen.c_kernel import kernel_library

    t0 = time.perf_counter()  # in the caller's KANE_CACHE_DIR: a fresh one for a cold start (see __main__)
    built = kernel_library().built
    out = {"kernel_build_s": time.perf_counter() - t0}
    print(f"kernel library, one-time build in a fresh cache: {out['kernel_build_s']:.2f} s (compiler ran: {built})")
    cases = [(f"{n}-link chain", pendulum_chain_kane(n), None) for n in (30, 100)]
    robot = _tiago()
    if robot is None:
        print("example-robot-data's tiago_dual.urdf is not installed: the robot is skipped")
    else:
        cases.append(("tiago_dual (URDF)", *robot))
    rng = np.random.default_rng(0)
    for label, system, pmodel in cases:
        t0 = time.perf_counter()  # kane.dynamics(system) compiles the System: done first here to time it apart
        model = system.compile()
        t1 = time.perf_counter()
        dyn = kane.dynamics(model)
        q, u = np.array(dyn.model.q0, dtype=float) + rng.normal(0, 0.3, dyn.n_q), rng.normal(size=dyn.n_u)
        tau = rng.normal(size=dyn.n_u)
        dyn.udot(0.0, q, u, tau=tau)
        ready = time.perf_counter() - t0
        if pmodel is None:
            n = dyn.n_u
            pmodel = pinocchio_chain(n, dict(zip(dyn.parameter_names, dyn.model.parameter_defaults)))
        order, qp = _to_pin(model, pmodel, q)
        pdata = pmodel.createData()
        up, tp = u[order], tau[order]
        a_pin = pin.aba(pmodel, pdata, qp, up, tp)
        err = float(np.max(np.abs(dyn.udot(0.0, q, u, tau=tau)[order] - a_pin)))
        k_us, p_us = [], []
        for _ in range(rounds):  # interleaved, so a busy machine slows both alike
            k_us.append(_best(lambda: dyn.udot(0.0, q, u, tau=tau), 2000, 1) * 1e6)
            p_us.append(_best(lambda: pin.aba(pmodel, pdata, qp, up, tp), 2000, 1) * 1e6)
        out[label] = dict(ready_s=ready, compile_s=t1 - t0, kernel_us=min(k_us), pin_us=min(p_us), err=err,
                          backend=getattr(dyn, "backend", "?"))
        print(f"{label}: {dyn.n_u} DOF, {type(dyn).__name__} ({dyn.formulation_choice.reason})")
        print(f"  ready for the first u' cold {ready:6.3f} s (of which System.compile {t1 - t0:.3f} s)   "
              "(target: under 1 s)")
        print(f"  u' per call: kernel {min(k_us):7.2f} us, pin.aba {min(p_us):7.2f} us, ratio "
              f"{min(k_us) / min(p_us):5.2f}x (target: within 1.2x); max |u' - pin| {err:.1e}")
        if traced:
            t0 = time.perf_counter()
            old = kane.dynamics(system, "aba", backend="c")
            old.udot(0.0, q, u, tau=tau)
            out[label]["traced_ready_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()  # again, its library now in the cache: the tracing remains
            old = kane.dynamics(model, "aba", backend="c")
            old.udot(0.0, q, u, tau=tau)
            out[label]["traced_cached_s"] = time.perf_counter() - t0
            t_us, k_us = [], []
            for _ in range(rounds):
                t_us.append(_best(lambda: old.udot(0.0, q, u, tau=tau), 2000, 1) * 1e6)
                k_us.append(_best(lambda: dyn.udot(0.0, q, u, tau=tau), 2000, 1) * 1e6)
            out[label]["traced_us"] = min(t_us)
            print(f"  traced C ABA: ready cold {out[label]['traced_ready_s']:6.1f} s, with its library cached "
                  f"{out[label]['traced_cached_s']:5.1f} s; u' {min(t_us):7.2f} us (kernel {min(k_us):7.2f} us, "
                  "interleaved)")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ready", action="store_true", help="the generic kernel's cold start and u' vs pin.aba")
    ap.add_argument("--traced", action="store_true", help="with --ready: the traced C ABA's cold start too")
    args = ap.parse_args()
    if args.ready:
        cold = tempfile.mkdtemp(prefix="kane-bench-cold-")
        os.environ["KANE_CACHE_DIR"] = cold
        try:
            run_ready(args.traced)
        finally:
            shutil.rmtree(cold, ignore_errors=True)
    else:
        run()
