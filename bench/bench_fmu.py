"""FMU benchmark (issue 31, item 2): the exported FMU's ``fmi2DoStep`` of the 7-link chain (examples/
planar_chain.toml) against kane's own compiled RK4 step (``Dynamics.stepper``: the C backend's ``kane_step``), per
RK4 step at dt = 1 ms. Target: within 1.5x.

Printed, per step (the best of ``--repeats`` timings of ``--steps`` steps each):

* one step per call from Python: ``fmi2DoStep(t, dt)`` called directly through ctypes on the FMU's binary, against
  ``Stepper.step(1, dt)`` (cffi); and FMPy's ``FMU2Slave.doStep`` (its Python wrapper: argument checks, logging);
* the compiled step alone: one ``fmi2DoStep`` of 1000 dt with ``rk4_max_step`` = dt (1000 RK4 steps in C), against
  ``Stepper.step(1000, dt)``.

Run: ``python bench/bench_fmu.py [--steps 20000] [--repeats 9]``. Times depend on the machine (the project's VM
has 2 shared cores: say so next to any number quoted).
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import tempfile
import time
import zipfile

import numpy as np

from kane.cli import load_model_or_script
from kane.codegen.fmu_export import FmuOptions, export_fmu

__all__ = ["run"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
DT = 1e-3


def _best(fns, n: int, repeats: int) -> list[float]:
    """The best time per unit [s] of each ``fn()`` of ``fns`` doing ``n`` units, over ``repeats`` timings taken in
    turn (so that a noisy stretch of a shared machine falls on both sides alike)."""
    best = [np.inf] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / n)
    return best


class _Direct:
    """The FMU's binary through ctypes: instantiate as Co-Simulation, initialize, then ``do_step(t, h)``."""

    def __init__(self, so: pathlib.Path, guid: str, refs: dict):
        lib = self.lib = ctypes.CDLL(str(so))
        lib.fmi2Instantiate.restype = ctypes.c_void_p
        lib.fmi2Instantiate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self._callbacks = (ctypes.c_void_p * 5)()  # no logger, memory functions unused (canNotUse... = true)
        c = self.c = lib.fmi2Instantiate(b"bench", 1, guid.encode(), b"", ctypes.addressof(self._callbacks), 0, 0)
        assert c, "fmi2Instantiate failed"
        for name in ("fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode",
                     "fmi2DoStep", "fmi2SetReal", "fmi2GetReal", "fmi2FreeInstance"):
            getattr(lib, name).restype = ctypes.c_int
        lib.fmi2SetupExperiment.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                                            ctypes.c_int, ctypes.c_double]
        lib.fmi2DoStep.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_int]
        lib.fmi2SetReal.argtypes = lib.fmi2GetReal.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                                               ctypes.c_void_p]
        lib.fmi2EnterInitializationMode.argtypes = lib.fmi2ExitInitializationMode.argtypes = [ctypes.c_void_p]
        assert lib.fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0) == 0
        assert lib.fmi2EnterInitializationMode(c) == 0 and lib.fmi2ExitInitializationMode(c) == 0
        self.refs = refs
        self.do_step = lib.fmi2DoStep

    def set(self, name: str, value: float) -> None:
        vr, v = (ctypes.c_uint * 1)(self.refs[name]), (ctypes.c_double * 1)(value)
        assert self.lib.fmi2SetReal(self.c, vr, 1, v) == 0

    def get(self, names) -> np.ndarray:
        vr = (ctypes.c_uint * len(names))(*(self.refs[n] for n in names))
        out = (ctypes.c_double * len(names))()
        assert self.lib.fmi2GetReal(self.c, vr, len(names), out) == 0
        return np.array(out)


def run(steps: int = 20000, repeats: int = 9) -> dict:
    lm = load_model_or_script(ROOT / "examples" / "planar_chain.toml")
    dyn = lm.derive().compile(backend="c")
    q0, u0 = lm.initial_state(dyn)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        res = export_fmu(lm, tmp / "chain.fmu", FmuOptions(dt=DT))
        with zipfile.ZipFile(res.path) as zf:
            zf.extractall(tmp / "fmu")
        so = tmp / "fmu" / "binaries" / res.platform / f"{res.model_identifier}.so"
        fmu = _Direct(so, res.guid, res.value_references)
        stepper = dyn.stepper(0.0, q0, u0)
        states = [f"q{k}" for k in range(1, 8)] + [f"u{k}" for k in range(1, 8)]

        def fmu_single():
            t = fmu_single.t
            for _ in range(steps):
                fmu.do_step(fmu.c, t, DT, 1)
                t += DT
            fmu_single.t = t

        def kane_single():
            for _ in range(steps):
                stepper.step(1, DT)

        # the same start and the same number of steps: the two agree before anything is timed
        for k in range(100):
            fmu.do_step(fmu.c, k * DT, DT, 1)
        fmu_single.t = 100 * DT
        stepper.step(100, DT)
        diff = np.max(np.abs(fmu.get(states) - np.concatenate([stepper.q, stepper.u])))
        print(f"state after 100 steps: max |FMU - kane| = {diff:.1e}")
        out["agreement"] = float(diff)

        from fmpy import instantiate_fmu, read_model_description

        md = read_model_description(str(res.path))
        slave = instantiate_fmu(str(tmp / "fmu"), md, fmi_type="CoSimulation")
        slave.setupExperiment(startTime=0.0)
        slave.enterInitializationMode()
        slave.exitInitializationMode()

        def fmpy_single():
            t = 0.0
            for _ in range(steps):
                slave.doStep(t, DT)
                t += DT

        fmu_us, kane_us, fmpy_us = _best([fmu_single, kane_single, fmpy_single], steps, repeats)
        out["fmu_direct_us"], out["kane_step1_us"], out["fmpy_dostep_us"] = 1e6 * fmu_us, 1e6 * kane_us, 1e6 * fmpy_us
        batch = 1000
        fmu.set("rk4_max_step", DT)
        fmu_us, kane_us = _best([lambda: fmu.do_step(fmu.c, 0.0, batch * DT, 1), lambda: stepper.step(batch, DT)],
                                batch, repeats * 4)
        out["fmu_batch_us"], out["kane_batch_us"] = 1e6 * fmu_us, 1e6 * kane_us
        slave.terminate()
        slave.freeInstance()
    out["ratio_single"] = out["fmu_direct_us"] / out["kane_step1_us"]
    out["ratio_batch"] = out["fmu_batch_us"] / out["kane_batch_us"]
    out["ratio_fmpy"] = out["fmpy_dostep_us"] / out["kane_step1_us"]
    print("7-link chain, RK4 at dt = 1 ms, time per step (best of rounds; on the project's VM: 2 shared cores):")
    print(f"  one step per call:  FMU fmi2DoStep via ctypes {out['fmu_direct_us']:.2f} us, kane Stepper.step(1) "
          f"{out['kane_step1_us']:.2f} us: ratio {out['ratio_single']:.2f} (target <= 1.5)")
    print(f"  1000 steps a call:  FMU fmi2DoStep(1000 dt), rk4_max_step = dt {out['fmu_batch_us']:.3f} us, kane "
          f"Stepper.step(1000) {out['kane_batch_us']:.3f} us: ratio {out['ratio_batch']:.2f} (target <= 1.5)")
    print(f"  FMPy FMU2Slave.doStep (its Python wrapper): {out['fmpy_dostep_us']:.2f} us, ratio "
          f"{out['ratio_fmpy']:.2f} to Stepper.step(1)")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=9)
    a = ap.parse_args()
    run(a.steps, a.repeats)
