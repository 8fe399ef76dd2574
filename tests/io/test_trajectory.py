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

from kane.io.trajectory import (EventRecord, Stats, Trajectory, TrajectoryFileError, TrajectoryWriter,
                                check_output_path, load_trajectory)

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
    from kane.io.trajectory import TrajectoryWriter
    from kane.simulate import Event, Method, Simulator

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


def _open_writer(path, n, flush_every=5):
    """A writer that has flushed samples t = 0.1 k, q = k, u = -k (k < n) and is left open (as by a SIGKILL)."""
    w = TrajectoryWriter(path, flush_every=flush_every, flush_seconds=math.inf)
    w.open(q_names=("x",), u_names=("v",), has_energy=True)
    w.start_mode(0.0, "free")
    for k in range(n):
        w.append(0.1 * k, np.array([k]), np.array([-k]), energy=0.5 * k * k)
    return w


def test_a_file_left_open_by_a_killed_writer_opens_with_plain_h5py(tmp_path):
    w = _open_writer(tmp_path / "open.h5", 13)  # 10 samples flushed, 3 buffered in memory (lost to a SIGKILL)
    assert (w.n_written, w.n_flushed) == (13, 10)
    with h5py.File(tmp_path / "open.h5.partial", "r") as f:  # no swmr flag, while the writer is still "running"
        assert int(f["n_committed"][0]) == 10 and f.attrs["status"] == "incomplete"
        np.testing.assert_array_equal(f["q"][:10, 0], np.arange(10.0))
        assert np.isnan(f["t"][10:]).all()  # the reserve beyond the committed samples: NaN until written
    tr = load_trajectory(tmp_path / "open.h5")
    assert tr.status == "incomplete" and tr.source == str(tmp_path / "open.h5.partial")
    np.testing.assert_array_equal(tr.energy, 0.5 * np.arange(10.0) ** 2)
    assert tr.modes == [(0.0, 0.9, "free")]
    w.close()
    assert load_trajectory(tmp_path / "open.h5").n_samples == 13
    with h5py.File(tmp_path / "open.h5", "r") as f:  # a closed file has no reserve
        assert f["t"].shape == (13,) and f["q"].shape == (13, 1) and int(f["n_committed"][0]) == 13


def test_a_newer_partial_file_is_never_hidden_by_an_older_complete_one(tmp_path):
    path = tmp_path / "run.h5"
    _sample_trajectory().save(path)  # an earlier complete run: 41 samples
    w = _open_writer(path, 7)  # a later run of the same name, killed after 5 flushed samples
    previous = Path(str(path) + ".previous")  # the earlier run is set aside when the later one starts
    assert not path.exists() and load_trajectory(previous).n_samples == 41
    future = path.stat().st_mtime_ns if path.exists() else previous.stat().st_mtime_ns + 10**10
    os.utime(previous, ns=(future, future))  # whatever its clock says, it is no longer read for run.h5
    tr = load_trajectory(path)
    assert (tr.status, tr.n_samples, tr.source) == ("incomplete", 5, str(path) + ".partial")
    partial = Path(str(path) + ".partial")
    t_partial = partial.stat().st_mtime_ns
    os.utime(partial, ns=(t_partial - 10**10, t_partial - 10**10))  # a stale partial file beside a newer run
    _sample_trajectory().save(tmp_path / "copy.h5")
    os.replace(tmp_path / "copy.h5", path)  # (put there by hand: a run of the same name would wait for the lock)
    back = load_trajectory(path)
    assert (back.status, back.n_samples, back.source) == ("completed", 41, str(path))
    w.close()
    assert load_trajectory(path).n_samples == 7 and not previous.exists()  # the later run completed


def test_a_flush_cut_short_is_written_again_without_duplicates(tmp_path, monkeypatch):
    w = _open_writer(tmp_path / "cut.h5", 3, flush_every=100)
    w.add_event(EventRecord(0.15, "gap", "crossing", {}))
    original = TrajectoryWriter._commit

    def commit_then_interrupt(self, f, *args):
        original(self, f, *args)  # the data reached the file, but the flush did not finish (Ctrl-C, SIGTERM)
        raise KeyboardInterrupt

    monkeypatch.setattr(TrajectoryWriter, "_commit", commit_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        w.flush()
    monkeypatch.undo()
    w.close("interrupted: SIGINT")
    tr = load_trajectory(tmp_path / "cut.h5")
    np.testing.assert_array_equal(tr.t, [0.0, 0.1, 0.2])
    assert [e.name for e in tr.events] == ["gap"] and tr.status == "interrupted: SIGINT"
    assert [m for _, _, m in tr.modes] == ["free"]


def test_unreadable_trajectory_files_are_named_in_plain_words(tmp_path):
    with pytest.raises(TrajectoryFileError, match=r"no trajectory file .*missing\.h5 \(nor .*missing\.h5\.partial"):
        load_trajectory(tmp_path / "missing.h5")
    text = tmp_path / "notes.h5"
    text.write_text("these are notes, not numbers")
    with pytest.raises(TrajectoryFileError, match=r"notes\.h5 is not an HDF5 file"):
        load_trajectory(text)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = [1.0]
    with pytest.raises(TrajectoryFileError, match="is an HDF5 file but not a kane trajectory"):
        load_trajectory(tmp_path / "other.h5")


@pytest.mark.parametrize("where, words", [
    ("/proc/kane_run.h5", "/proc is a virtual file system"),
    ("{tmp}", "is a directory; give a file name such as"),
    ("{tmp}/afile/run.h5", "afile is a file, not a directory"),
])
def test_output_paths_are_checked_before_anything_is_written(tmp_path, where, words):
    (tmp_path / "afile").write_text("x")
    path = where.format(tmp=tmp_path)
    with pytest.raises(TrajectoryFileError, match=words):
        check_output_path(path)
    w = TrajectoryWriter(path)
    with pytest.raises(TrajectoryFileError, match=words):
        w.open(q_names=("x",), u_names=("v",))
    assert not w.is_open and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_the_writer_goes_on_while_another_process_reads_the_file(tmp_path, monkeypatch):
    import kane.io.trajectory_file as trajectory_module  # where h5open waits

    monkeypatch.setattr(trajectory_module, "_LOCK_WAIT_S", 0.2)
    w = _open_writer(tmp_path / "read.h5", 0, flush_every=2)
    reader = subprocess.Popen([sys.executable, "-c", "import sys, h5py\nf = h5py.File(sys.argv[1], 'r')\n"
                               "print(f['t'].shape[0], flush=True)\nsys.stdin.read()", str(w.partial_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "0"  # the reader holds the file (and its lock) open
        for k in range(6):
            w.append(0.1 * k, np.array([k]), np.array([-k]), energy=0.5 * k * k)
        assert w.n_flushed == 6
    finally:
        reader.communicate("")
    w.close()
    np.testing.assert_array_equal(load_trajectory(tmp_path / "read.h5").q[:, 0], np.arange(6.0))


OLD_SWMR_CHILD = textwrap.dedent("""
    import json, os, signal, sys
    import h5py, numpy as np
    f = h5py.File(sys.argv[1], "w", libver="latest")  # the version-1 layout, written in SWMR mode
    f.attrs.update({"format": "kane.trajectory", "version": 1, "status": "incomplete", "description": "",
                    "method": "rk4", "q_names": '["x"]', "u_names": '["v"]', "residual_names": "[]", "params": "{}"})
    for name, shape in (("t", (0,)), ("q", (0, 1)), ("u", (0, 1))):
        f.create_dataset(name, shape=shape, maxshape=(None,) + shape[1:], dtype="f8", chunks=(8,) + shape[1:])
    f.create_group("residuals")
    for name in ("events_jsonl", "modes_jsonl"):
        f.create_dataset(name, shape=(0,), maxshape=(None,), dtype="u1", chunks=(64,))
    f.create_dataset("n_committed", data=np.zeros(1, dtype=np.int64))
    f.swmr_mode = True
    for name, data in (("t", np.arange(5.0)), ("q", np.arange(5.0)[:, None]), ("u", -np.arange(5.0)[:, None])):
        f[name].resize(5, axis=0)
        f[name][:] = data
    f.flush()
    f["n_committed"][0] = 5
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_run_of_the_old_swmr_format_is_still_read(tmp_path):
    partial = tmp_path / "old.h5.partial"
    subprocess.run([sys.executable, "-c", OLD_SWMR_CHILD, str(partial)], check=False)
    with pytest.raises(OSError, match="already open for write"):
        h5py.File(partial, "r")  # what plain h5py says of such a file
    tr = load_trajectory(tmp_path / "old.h5")
    assert tr.status == "incomplete" and tr.events == [] and tr.modes == []
    np.testing.assert_array_equal(tr.t, np.arange(5.0))
    np.testing.assert_array_equal(tr.u[:, 0], -np.arange(5.0))


def test_blocks_and_rows_are_buffered_and_written_in_order(tmp_path):
    """append_block buffers like append (a write every flush_every samples or flush_seconds), and blocks and
    single rows mixed come back in the order given, with their energies and residuals."""
    import math

    from kane.io.trajectory import TrajectoryWriter, load_trajectory

    path = tmp_path / "mixed.h5"
    w = TrajectoryWriter(path, flush_every=6, flush_seconds=math.inf)
    w.open(q_names=("x",), u_names=("v",), residual_names=("r",), has_energy=True)
    t = np.arange(12, dtype=float)
    w.append_block(t[:3], t[:3, None], -t[:3, None], 10 * t[:3], {"r": t[:3] + 0.5})
    assert w.n_flushed == 0 and w.n_written == 3  # buffered
    w.append(t[3], t[3:4], -t[3:4], None, (3.5,))  # no energy for this one: NaN
    w.append_block(t[4:9], t[4:9, None], -t[4:9, None], 10 * t[4:9], {"r": t[4:9] + 0.5})  # rows go first
    assert w.n_flushed == 4  # the 4 samples before the block were written first; the block waits (5 < 6)
    w.append_block(t[9:], t[9:, None], -t[9:, None], None, {"r": t[9:] + 0.5})
    assert w.n_flushed == w.n_written == 12  # 8 >= 6 waiting: written
    w.close()
    back = load_trajectory(path)
    np.testing.assert_array_equal(back.t, t)
    np.testing.assert_array_equal(back.q[:, 0], t)
    np.testing.assert_array_equal(back.u[:, 0], -t)
    np.testing.assert_array_equal(back.residuals["r"], t + 0.5)
    want = 10 * t
    want[3] = want[9:] = np.nan
    np.testing.assert_array_equal(back.energy, want)
