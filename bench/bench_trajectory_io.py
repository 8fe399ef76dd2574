"""Trajectory writing: kane's crash-safe TrajectoryWriter against plain h5py in the same process.

kane buffers samples and, every ``flush_every`` samples, opens the partial file, appends, records n_committed
and closes it again (so a SIGKILL leaves a consistent file). The peer keeps one h5py file open and appends the
same blocks to resizable datasets (no crash safety: a killed writer leaves a file that may not open). Printed:
seconds per 100,000 samples of a 7-DOF run (t, q, u, energy, one residual) at flush_every 1000 and 100, and the
ratio kane / h5py. Run: ``python bench/bench_trajectory_io.py``.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from kane.io.trajectory import TrajectoryWriter

__all__ = ["run"]

N_SAMPLES = 100_000
N_DOF = 7


def _kane(path: Path, block: int) -> float:
    w = TrajectoryWriter(path, flush_every=block, flush_seconds=math.inf)
    w.open(q_names=tuple(f"q{i}" for i in range(N_DOF)), u_names=tuple(f"u{i}" for i in range(N_DOF)),
           has_energy=True, residual_names=("c",))
    x = np.arange(float(N_DOF))
    start = time.perf_counter()
    for k in range(N_SAMPLES):
        w.append(k * 1e-3, x, x, energy=1.0, residuals=(0.0,))
    w.close()
    return time.perf_counter() - start


def _h5py(path: Path, block: int) -> float:
    x = np.arange(float(N_DOF))
    start = time.perf_counter()
    with h5py.File(path, "w") as f:
        names = {"t": (), "q": (N_DOF,), "u": (N_DOF,), "energy": (), "c": ()}
        ds = {k: f.create_dataset(k, shape=(0, *s), maxshape=(None, *s), dtype="f8", chunks=(block, *s))
              for k, s in names.items()}
        rows: list[tuple] = []
        for k in range(N_SAMPLES):
            rows.append((k * 1e-3, x, x, 1.0, 0.0))
            if len(rows) == block or k == N_SAMPLES - 1:
                n = ds["t"].shape[0]
                for i, name in enumerate(names):
                    data = np.array([r[i] for r in rows], dtype=float)
                    ds[name].resize(n + len(rows), axis=0)
                    ds[name][n:] = data
                f.flush()
                rows.clear()
    return time.perf_counter() - start


def run() -> None:
    """Print seconds per 100,000 samples for kane and plain h5py, best of 3, and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        for block in (1000, 100):
            kane_s = min(_kane(Path(tmp) / "k.h5", block) for _ in range(3))
            peer_s = min(_h5py(Path(tmp) / "p.h5", block) for _ in range(3))
            print(f"flush every {block:5d} samples: kane {kane_s:.3f} s, h5py kept open {peer_s:.3f} s, "
                  f"ratio {kane_s / peer_s:.2f}")


if __name__ == "__main__":
    run()
