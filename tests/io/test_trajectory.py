"""Trajectory records and their HDF5 files: round trip, chunked writing, a run killed mid-way."""

import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from kane.simulate import EventRecord, Stats, Trajectory, TrajectoryWriter, load_trajectory

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _sample_trajectory():
    t = np.linspace(0.0, 2.0, 41)
    return Trajectory(
        t=t, q=np.column_stack([np.cos(t), np.sin(t)]), u=np.column_stack([-np.sin(t), np.cos(t)]),
        energy=0.5 + 0.0 * t, residuals={"radius": np.cos(t) ** 2 + np.sin(t) ** 2 - 1, "gap": t - 1.0},
        events=[EventRecord(1.0, "gap", "crossing", {"direction": 1, "note": "touch"}),
                EventRecord(1.5, "stop", "terminal", {})],
        modes=[(0.0, 1.0, "free"), (1.0, 2.0, "stuck")],
        stats=Stats(n_fev=123, n_steps=20, n_accepted=18, n_rejected=2, wall_time_s=0.25, method="dopri5"),
        q_names=("x", "y"), u_names=("vx", "vy"), description='{"model": "circle"}',
        params={"m": 2.0, "g": 9.81}, status="completed")


def test_hdf5_round_trip(tmp_path):
    tr = _sample_trajectory()
    path = tr.save(tmp_path / "run.h5")
    assert path == tmp_path / "run.h5" and not (tmp_path / "run.h5.partial").exists()
    back = load_trajectory(path)
    for name in ("t", "q", "u", "energy"):
        np.testing.assert_array_equal(getattr(back, name), getattr(tr, name))
    assert back.residuals.keys() == tr.residuals.keys()
    for k in tr.residuals:
        np.testing.assert_array_equal(back.residuals[k], tr.residuals[k])
    assert back.events == tr.events
    assert back.modes == tr.modes
    assert back.stats == tr.stats
    assert (back.q_names, back.u_names) == (("x", "y"), ("vx", "vy"))
    assert back.description == '{"model": "circle"}' and back.params == {"m": 2.0, "g": 9.81}
    assert back.status == "completed"
    with h5py.File(path, "r") as f:  # plain h5py sees named, documented datasets
        assert f["q"].shape == (41, 2) and f.attrs["format"] == "kane.trajectory"


def test_trajectory_fields_and_validation():
    tr = _sample_trajectory()
    np.testing.assert_array_equal(tr["vy"], np.cos(tr.t))
    np.testing.assert_array_equal(tr["gap"], tr.t - 1.0)
    assert tr.x.shape == (41, 4) and tr.n_samples == 41
    with pytest.raises(ValueError):
        tr.q[0, 0] = 1.0
    with pytest.raises(KeyError, match="no series named 'z'"):
        tr["z"]
    with pytest.raises(ValueError, match="q_names"):
        Trajectory(t=[0.0, 1.0], q=[[0.0], [1.0]], u=[[0.0], [1.0]], q_names=("a", "b"))
    empty = Trajectory(t=[], q=[], u=[], q_names=("a",), u_names=("b",), energy=None)
    assert empty.q.shape == (0, 1)


def test_writer_flushes_by_count_and_by_time(tmp_path):
    w = TrajectoryWriter(tmp_path / "a.h5", flush_every=4, flush_seconds=math.inf)
    w.open(q_names=("x",), u_names=("v",), residual_names=("r",), has_energy=True)
    for k in range(10):
        w.append(0.1 * k, np.array([k]), np.array([-k]), energy=float(k), residuals=(2.0 * k,))
    assert (w.n_written, w.n_flushed) == (10, 8)
    assert (tmp_path / "a.h5.partial").exists() and not (tmp_path / "a.h5").exists()
    w.close("completed", Stats(n_fev=7))
    back = load_trajectory(tmp_path / "a.h5")
    np.testing.assert_array_equal(back.q[:, 0], np.arange(10.0))
    np.testing.assert_array_equal(back.residuals["r"], 2.0 * np.arange(10.0))
    assert back.stats.n_fev == 7 and back.status == "completed"
    w2 = TrajectoryWriter(tmp_path / "b.h5", flush_every=1000, flush_seconds=0.0)
    w2.open(q_names=("x",), u_names=("v",))
    w2.append(0.0, np.array([1.0]), np.array([2.0]))
    assert w2.n_flushed == 1
    w2.close()


CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from kane.simulate import Event, Method, Simulator, TrajectoryWriter

    class Oscillator:
        n_q, n_u = 1, 1
        q_names, u_names = ("x",), ("v",)
        def qdot(self, t, q, u, params=None, inputs=None):
            return u
        def udot(self, t, q, u, params=None, inputs=None):
            return -q
        def energy(self, t, q, u, params=None):
            return 0.5 * (q[0] ** 2 + u[0] ** 2)

    writer = TrajectoryWriter(sys.argv[1], flush_every=50, flush_seconds=60.0)
    sim = Simulator(Oscillator(), q0=[1.0], u0=[0.0], method=Method.RK4, dt=4e-3, writer=writer,
                    events=[Event("zero", lambda t, q, u: q[0])], monitors={"radius": lambda t, q, u: q[0]**2 + u[0]**2})
    told = False
    while True:
        sim.step()
        if not told and writer.n_flushed >= 1000:
            print(writer.n_flushed, flush=True)
            told = True
""")


def test_killed_run_leaves_a_readable_partial_file(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path = tmp_path / "killed.h5"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = child.stdout.readline()
        assert line, "the child simulation died before flushing"
        n_told = int(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert not path.exists() and Path(str(path) + ".partial").exists()
    tr = load_trajectory(path)
    assert tr.status == "incomplete"
    assert tr.n_samples >= n_told and tr.n_samples % 50 == 0
    np.testing.assert_allclose(tr.t, 4e-3 * np.arange(tr.n_samples), atol=1e-12)
    np.testing.assert_allclose(tr.q[:, 0], np.cos(tr.t), atol=1e-10)
    np.testing.assert_allclose(tr.energy, 0.5, atol=1e-10)
    np.testing.assert_allclose(tr.residuals["radius"], 1.0, atol=1e-10)
    crossings = [e.t for e in tr.events]
    assert len(crossings) >= 1
    np.testing.assert_allclose(crossings, (np.arange(len(crossings)) + 0.5) * np.pi, atol=1e-9)
    assert tr.modes == [(0.0, tr.t[-1], "default")] and tr.q_names == ("x",)
