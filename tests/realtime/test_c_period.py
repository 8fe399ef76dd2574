"""The haptic period in C (kane.realtime.c_period, native_loop): on a replayed device log and the virtual clock, the
C period gives the same forces, states and log rows as the Python period (kane.realtime.loop), period by period, for
the point coupler, the pose coupler and the slow-rate scheme; its deadline statistics are those of stats.py computed
from its own rows; what it cannot run stays on the Python path and says why; SIGKILL of a process running it leaves
a log readable by plain h5py up to the last committed row."""

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import kane
from kane import joints as J
from kane import realtime as rt
from kane.realtime.stats import JITTER_EDGES_S

T = 1e-3  # [s] the loop's period
SRC = Path(kane.__file__).resolve().parents[1]


def _options(duration, path, **kw):
    return rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL, loop_path=path, **kw)


def _twice(make, options_kw, tmp_path, duration):
    """(Python result, C result, Python log, C log, Python device, C device) of the same run."""
    out = []
    for path in (rt.LoopPath.PYTHON, rt.LoopPath.C):
        coupler, device, q0, u0 = make()
        log = tmp_path / f"{path.value}.h5"
        result = rt.RealtimeLoop(coupler, device, q0, u0, options=_options(duration, path, **options_kw),
                                 log=log).run()
        out.append((result, h5py.File(log, "r"), device))
    (a, fa, da), (b, fb, db) = out
    return a, b, fa, fb, da, db


def _same_rows(fa, fb):
    """Every column but the timings equal to 1e-12 (NaN where NaN), the sample statuses exactly."""
    names = [n for n in fa if isinstance(fa[n], h5py.Dataset) and n not in ("compute_time", "lateness")]
    assert set(names) <= set(fb) and len(names) >= 15
    for name in names:
        x, y = fa[name][()], fb[name][()]
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-12, err_msg=name)
    return fa["t"].shape[0]


def _chain_run(chain, duration):
    """The 7-link chain with a replayed circle at its tip (0.5 m radius, so the 20 N limit cuts part of it), one
    NaN sample (refused) and a hole in the record (missing samples)."""
    dyn, port = chain

    def make():
        cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 2.0), max_force=20.0)
        q0, u0 = np.linspace(0.1, -0.2, 7), np.zeros(7)
        x0, _ = cp.point_state(0.0, q0, u0)
        t = np.arange(int(duration / T)) * T
        t = np.delete(t, np.arange(150, 153))  # periods 150..152: the last record is held, no sample is missing
        w = 2 * np.pi
        pos = x0 + 0.5 * np.stack([np.sin(w * t), 1 - np.cos(w * t), 0 * t], 1)
        vel = 0.5 * w * np.stack([np.cos(w * t), np.sin(w * t), 0 * t], 1)
        pos[100] = np.nan
        dev = rt.Replay(t, pos, vel, max_force=20.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
        return cp, dev, q0, u0

    return make


def test_the_c_period_matches_the_python_period_on_the_chain_point_coupler(chain, tmp_path):
    a, b, fa, fb, da, db = _twice(_chain_run(chain, 1.0), {}, tmp_path, 1.0)
    assert (a.loop_path, b.loop_path) == ("python", "c")
    assert _same_rows(fa, fb) == 1000
    assert a.status == b.status == "completed"
    assert a.refused == b.refused == 1 and a.missing == b.missing == 0
    assert 0 < b.saturated == a.saturated < 1000  # the limit cut some periods, not all
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.u, a.u, rtol=0, atol=1e-12)
    assert abs(b.port_energy - a.port_energy) <= 1e-12 * max(1.0, abs(a.port_energy)) and a.port_energy != 0
    shown_a, shown_b = np.array([f for _, f in da.forces]), np.array([f for _, f in db.forces])
    np.testing.assert_allclose(shown_b, shown_a, rtol=0, atol=1e-12)  # what the device displayed, zero at the end
    assert np.all(shown_b[-1] == 0.0) and shown_b.shape == (1001, 3)
    assert json.loads(fb.attrs["counts"])["loop_path"] == "c"
    assert json.loads(fa.attrs["counts"])["loop_path"] == "python"


def test_the_c_period_matches_the_slow_rate_scheme(chain, tmp_path):
    # the dynamics every 3 periods with the mean force, the point extrapolated in between (multirate.py)
    a, b, fa, fb, _, _ = _twice(_chain_run(chain, 0.5), {"dynamics_every": 3, "substeps": 2}, tmp_path, 0.5)
    assert _same_rows(fa, fb) == 500
    for name in ("t", "q", "u", "energy"):  # the plant's own states at its steps
        assert fa["dynamics"][name].shape == fb["dynamics"][name].shape
        np.testing.assert_allclose(fb["dynamics"][name][()], fa["dynamics"][name][()], rtol=0, atol=1e-12)
    assert fb["dynamics/t"].shape[0] == 1 + 500 // 3
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-12)  # between steps: extrapolated in both
    assert b.t == pytest.approx(a.t, abs=1e-12)


def test_the_c_period_matches_the_pose_coupler_on_a_ball_joint(tmp_path):
    # a body on a ball joint (a quaternion): a handle turning about a tilted axis, the torque cut at 0.5 N m
    s = kane.System("ball")
    s.add_body("b", 1.0, inertia=(0.01, 0.02, 0.03))
    s.add_joint("ground", "b", J.Spherical(), name="ball")
    port = rt.add_coupler(s, "b", rotational=True)
    dyn = kane.derive(s).compile()
    t = np.arange(400) * T
    angle = 1.5 * np.sin(4 * t)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    R = Rotation.from_rotvec(angle[:, None] * axis).as_matrix()
    w = (6 * np.cos(4 * t))[:, None] * axis

    def make():
        cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(10.0, 1.0, rotational_stiffness=1.0,
                                                          rotational_damping=0.05), max_torque=0.5)
        dev = rt.Replay(t, np.zeros((400, 3)), np.zeros((400, 3)), orientation=R, angular_velocity=w)
        return cp, dev, np.array(dyn.model.q0), np.zeros(dyn.n_u)

    a, b, fa, fb, da, db = _twice(make, {"substeps": 2}, tmp_path, 0.4)
    assert _same_rows(fa, fb) == 400 and "body_orientation" in fb
    assert 0 < b.saturated == a.saturated < 400
    assert np.abs(fb["torque"][()]).max() > 0.1
    shown_a, shown_b = np.array([f for _, f in da.torques]), np.array([f for _, f in db.torques])
    np.testing.assert_allclose(shown_b, shown_a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-12)


def test_a_replay_that_ends_stops_both_periods_at_the_same_time(chain, tmp_path):
    a, b, fa, fb, _, _ = _twice(_chain_run(chain, 0.2), {"device_timeout": 0.005}, tmp_path, 0.3)
    assert a.status == b.status and a.status.startswith("device stopped answering at t = 0.2")
    assert a.missing == b.missing == 5
    assert _same_rows(fa, fb) == 205


def test_the_c_statistics_mean_what_stats_py_means(chain, tmp_path):
    # C counts the misses and bins the lateness itself; stats.py's DeadlineStats on the C run's own rows agrees
    dyn, port = chain
    make = _chain_run(chain, 0.3)
    cp, dev, q0, u0 = make()
    opts = rt.LoopOptions(rate=1 / T, duration=0.3, loop_path=rt.LoopPath.C, spin=2e-4)  # the real clock
    result = rt.RealtimeLoop(cp, dev, q0, u0, options=opts, log=tmp_path / "real.h5").run()
    assert result.loop_path == "c" and result.deadlines.periods == 300
    with h5py.File(tmp_path / "real.h5", "r") as f:
        late, compute = f["lateness"][()], f["compute_time"][()]
        stats = json.loads(f.attrs["stats"])
    reference = rt.DeadlineStats.from_rows(T, late, compute).summary()
    d = result.deadlines
    assert d.missed == reference.missed and d.jitter_counts == reference.jitter_counts
    assert sum(d.jitter_counts) == 300 and len(d.jitter_counts) == len(JITTER_EDGES_S) - 1
    assert d.compute_max == reference.compute_max and d.lateness_max == reference.lateness_max
    assert d.compute_p99 == reference.compute_p99 and stats["missed"] == d.missed
    assert np.all(compute > 0) and np.all(late >= 0)


def test_what_c_cannot_run_stays_on_the_python_path_and_says_why(chain, tmp_path):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 1.0), max_force=20.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    hand = rt.SimulatedHand(lambda t: (x0, np.zeros(3)), max_force=20.0,
                            workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    loop = rt.RealtimeLoop(cp, hand, np.zeros(7), np.zeros(7), options=_options(0.01, rt.LoopPath.C),
                           log=tmp_path / "sim.h5")
    result = loop.run()
    assert result.loop_path == "python" and result.deadlines.periods == 10
    with h5py.File(tmp_path / "sim.h5", "r") as f:
        counts = json.loads(f.attrs["counts"])
    assert counts["loop_path"] == "python"
    assert counts["loop_path_reason"] == ("the device (SimulatedHand) is neither sampled ahead (a Replay is) nor "
                                          "read in C (a UdpDevice is)")


_KILLED = textwrap.dedent("""
    import sys
    import numpy as np
    import kane
    from kane import joints as J
    from kane import realtime as rt
    s = kane.System("wall")
    s.add_particle("P", 0.1)
    s.add_joint("ground", "P", J.Prismatic("x"), name="slide", coordinates=["x"], speeds=["v"])
    s.add_joint_spring("slide", 100.0)
    port = rt.add_coupler(s, "P")
    dyn = kane.derive(s).compile()
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(100.0, 1.0), max_force=20.0)
    t = np.arange(2) * 1e-3
    dev = rt.Replay(t, np.full((2, 3), 0.01), np.zeros((2, 3)), hold=1e9)
    opts = rt.LoopOptions(rate=5000.0, duration=1000.0, loop_path=rt.LoopPath.C, flush_every=500)
    rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=opts, log=sys.argv[1]).run()
""")


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="POSIX signals, /proc")
def test_sigkill_of_a_c_loop_leaves_a_log_readable_up_to_its_last_committed_row(tmp_path):
    killed = tmp_path / "killed.h5"
    partial = Path(str(killed) + ".partial")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(killed)], env={"PYTHONPATH": str(SRC),
                            **{k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 90
        while _committed(partial) < 1000:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "the run did not write its first blocks"
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL and not killed.exists()
    end = time.monotonic() + 30
    while True:  # the writer (its own session) commits the block in hand, then ends at the end of its input
        try:
            with h5py.File(partial, "r") as f:  # plain h5py
                n = int(f["n_committed"][0])
                assert n >= 1000 and f.attrs["status"] == "running"
                np.testing.assert_allclose(f["t"][:n], np.arange(n) * 2e-4, rtol=0, atol=1e-9)
                assert np.all(np.isfinite(f["q"][:n])) and np.all(f["sample_status"][:n] == 0)
                assert np.all(np.isfinite(f["force"][:n])) and np.all(np.isfinite(f["energy"][:n]))
                assert np.all(np.isnan(f["t"][n:]))
                break
        except OSError:
            assert time.monotonic() < end, f"{partial} stayed locked"
            time.sleep(0.05)


def _committed(path) -> int:
    try:
        with h5py.File(path, "r", locking=False) as f:
            return int(f["n_committed"][0])
    except (OSError, KeyError):
        return 0


def test_kane_realtime_loop_c_replays_a_log_with_the_same_forces(tmp_path):
    # the chain run on the Python path with the simulated hand, then its log replayed with --loop c: the replayed
    # hand is the recorded one, so the forces are the recorded ones (the same model, gains and start)
    from click.testing import CliRunner

    from kane.cli import main

    chain_file = Path(__file__).resolve().parents[2] / "examples" / "planar_chain.toml"
    common = [str(chain_file), "--couple", "link7:1,0,0", "--duration", "0.3", "--virtual-clock"]
    first = CliRunner().invoke(main, ["realtime", *common, "-o", str(tmp_path / "first.h5")])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, ["realtime", *common, "--loop", "c", "--device", "replay", "--replay",
                                      str(tmp_path / "first.h5"), "-o", str(tmp_path / "again.h5")])
    assert again.exit_code == 0, again.output
    assert "period: C, in a native thread" in again.output and "period: Python" in first.output
    with h5py.File(tmp_path / "first.h5", "r") as f, h5py.File(tmp_path / "again.h5", "r") as g:
        assert g["force"].shape == (300, 3) and np.abs(f["force"][()]).max() > 0.1
        np.testing.assert_allclose(g["force"][()], f["force"][()], rtol=0, atol=1e-12)
        np.testing.assert_allclose(g["q"][()], f["q"][()], rtol=0, atol=1e-12)


def test_stop_ends_the_c_loop_with_zero_force_and_the_whole_log(wall, tmp_path):
    # Python supervises the native thread: stop() from another thread ends it at its next period on the real clock
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(100.0, 1.0), max_force=20.0)
    dev = rt.Replay([0.0, 1e-3], np.full((2, 3), 0.01), np.zeros((2, 3)), hold=1e9)
    opts = rt.LoopOptions(rate=2000.0, duration=1e4, loop_path=rt.LoopPath.C)
    loop = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=opts, log=tmp_path / "stopped.h5")
    loop.start()
    time.sleep(0.5)
    assert loop.running
    loop.stop()
    result = loop.join(30)
    n = result.deadlines.periods
    assert result.status == "stopped" and result.loop_path == "c" and n > 100
    assert len(dev.forces) == n + 1 and np.all(dev.forces[-1][1] == 0.0) and abs(dev.forces[-2][1][0]) > 0.1
    with h5py.File(tmp_path / "stopped.h5", "r") as f:
        assert f.attrs["status"] == "stopped" and int(f["n_committed"][0]) == n == f["t"].shape[0]
        np.testing.assert_allclose(f["t"][()], np.arange(n) / 2000.0, rtol=0, atol=1e-12)
