"""URDF loading time: kane's load of a serial chain of 1,000, 4,000 and 10,000 revolute links against Pinocchio's
``buildModelFromXML`` on the same text, in the same process (Pinocchio in a thread with a large stack: its recursive parser overflows the
default one on long chains).

The chain has seeded, varied masses, inertias, origins and axes (no value repeats, so no cache flatters it). Printed
per size: kane's wall and CPU time [s], Pinocchio's wall time [s], their ratio kane / Pinocchio, and kane's time
per link [ms] (linear loading keeps it flat; the issue's quadratic loader took 0.9 s for 1,000 links and 11.3 s
for 4,000). The target: 10,000 links in under 5 s. Run: ``python bench/bench_urdf.py [--sizes 1000 4000 10000]``.
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np

from kane.io.urdf import parse_urdf

__all__ = ["chain", "run"]


def chain(n: int, seed: int = 7) -> str:
    """URDF text of a chain of ``n`` revolute joints (``n + 1`` links) with seeded, varied numbers."""
    rng = np.random.default_rng(seed)
    mass, xyz, axis = (rng.uniform(0.5, 2, n + 1).tolist(), rng.uniform(-0.2, 0.2, (n, 3)).tolist(),
                       rng.normal(size=(n, 3)).tolist())
    links = "".join(f'<link name="l{i}"><inertial><origin xyz="0 0 {0.05 * mass[i]!r}"/><mass value="{mass[i]!r}"/>'
                    f'<inertia ixx="{0.01 * mass[i]!r}" iyy="{0.02 * mass[i]!r}" izz="{0.025 * mass[i]!r}" ixy="0" '
                    'ixz="0" iyz="0"/></inertial></link>\n' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="{" ".join(map(repr, xyz[i]))}"/><axis xyz="{" ".join(map(repr, axis[i]))}"/>'
                     '<limit lower="-3" upper="3" effort="10" velocity="5"/></joint>\n' for i in range(n))
    return f'<?xml version="1.0"?>\n<robot name="chain">\n{links}{joints}</robot>\n'


def _pinocchio(pin, text: str) -> tuple[float, int]:
    """(wall time [s], nq) of Pinocchio's buildModelFromXML, run in a thread with a 1 GiB stack: its parser recurses
    once per link and overflows the default 8 MiB stack (a segmentation fault) past about 2,000 links."""
    out = {}

    def build():
        t0 = time.perf_counter()
        model = pin.buildModelFromXML(text)
        out["s"], out["nq"] = time.perf_counter() - t0, model.nq

    previous = threading.stack_size(1 << 30)
    try:
        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(previous)
    return out["s"], out["nq"]


def run(sizes=(1000, 4000, 10000)) -> list[dict]:
    """One row per size: n, kane_s, kane_cpu_s, pinocchio_s, ratio, ms_per_link."""
    import pinocchio as pin

    rows = []
    parse_urdf(chain(50))  # warm: imports and sympy's caches are not the first size's
    _pinocchio(pin, chain(50))
    for n in sizes:
        text = chain(n)
        t0, c0 = time.perf_counter(), time.process_time()
        robot = parse_urdf(text)
        kane_s, kane_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(robot.links) == n + 1
        pin_s, nq = _pinocchio(pin, text)
        assert nq == n
        rows.append({"n": n, "kane_s": kane_s, "kane_cpu_s": kane_cpu, "pinocchio_s": pin_s,
                     "ratio": kane_s / pin_s, "ms_per_link": 1e3 * kane_s / n})
    return rows


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 10000])
    rows = run(ap.parse_args(argv).sizes)
    print(f"{'links':>7} {'kane [s]':>9} {'cpu [s]':>8} {'pin [s]':>8} {'kane/pin':>9} {'ms/link':>8}")
    for r in rows:
        print(f"{r['n']:>7} {r['kane_s']:>9.2f} {r['kane_cpu_s']:>8.2f} {r['pinocchio_s']:>8.3f} {r['ratio']:>9.2f} "
              f"{r['ms_per_link']:>8.3f}")
    return rows


if __name__ == "__main__":
    main()
