"""The fixed-rate loop in virtual-clock mode (no result depends on the machine's timing): passivity of the coupled
system, the work-energy balance, the compiled and Python engines, the stiff wall, bad device samples, the log."""

import json
import time
import warnings

import h5py
import numpy as np
import pytest

from kane import realtime as rt

T = 1e-3  # the loop's period [s] (1 kHz)


def _virtual(duration, substeps=1, engine=rt.Engine.AUTO, **kw):
    return rt.LoopOptions(rate=1 / T, duration=duration, substeps=substeps, clock=rt.ClockMode.VIRTUAL,
                          engine=engine, **kw)


def _read(path):
    with h5py.File(path, "r") as f:  # plain h5py: the log is an ordinary HDF5 file
        n = int(f["n_committed"][0])
        data = {k: f[k][:n] for k in f if k not in ("n_committed", "events")}
        data["attrs"] = dict(f.attrs)
    return data


def _chain_run(chain, closed_path, tmp_path, engine, name, duration=2.5):
    dyn, port = chain
    gains = rt.CouplerGains(2000.0, 2.0)  # the bound: 2000 * 0.001 / 2 = 1 N s/m
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rt.check_gains(gains, T)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=50.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    hand = rt.SimulatedHand(closed_path(x0, period=2.0, radius=0.3), max_force=50.0,
                            workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    loop = rt.RealtimeLoop(cp, hand, q0, u0, options=_virtual(duration, substeps=2, engine=engine),
                           log=tmp_path / name)
    return loop.run(), _read(tmp_path / name)


def test_chain_is_passive_over_a_closed_hand_path(chain, closed_path, tmp_path):
    result, log = _chain_run(chain, closed_path, tmp_path, rt.Engine.AUTO, "chain.h5")
    assert result.status == "completed" and log["attrs"]["status"] == "completed"
    assert result.deadlines.periods == 2500 and log["t"].shape == (2500,)
    assert result.refused == result.missing == 0
    assert json.loads(log["attrs"]["modes"]) == ["single"] and np.all(log["mode"] == 0)  # no switching
    # the hand did work on the virtual side: never negative at any period, positive at the end
    assert log["port_energy"].min() >= 0.0
    assert log["port_energy"][-1] > 0.5
    assert np.max(np.linalg.norm(log["force"], axis=1)) > 5.0  # the path really pulled the chain
    # work-energy balance of the virtual system: the coupler force, held over each period, does work
    # F_k . (x_b(k+1) - x_b(k)) on the body point; its sum is the change of the chain's energy (RK4 error aside)
    work = np.sum(np.einsum("ki,ki->k", log["force"][:-1], np.diff(log["point_position"], axis=0)))
    change = log["energy"][-1] - log["energy"][0]
    assert change > 0.1
    assert work == pytest.approx(change, rel=2e-3)
    # what the virtual side keeps (chain energy + coupler spring) never exceeds what the hand put in
    stored = log["energy"] - log["energy"][0] + log["spring_energy"]
    assert np.all(log["port_energy"] >= stored - 1e-3 * log["port_energy"].max())


def test_compiled_and_python_engines_agree(chain, closed_path, tmp_path):
    dyn, _ = chain
    if dyn.backend != "c":
        pytest.skip("no C compiler: only the Python engine exists here")
    a, log_a = _chain_run(chain, closed_path, tmp_path, rt.Engine.COMPILED, "c.h5", duration=1.0)
    b, log_b = _chain_run(chain, closed_path, tmp_path, rt.Engine.PYTHON, "py.h5", duration=1.0)
    assert (a.engine, b.engine) == (rt.Engine.COMPILED, rt.Engine.PYTHON)
    np.testing.assert_allclose(log_a["q"], log_b["q"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(log_a["force"], log_b["force"], rtol=0, atol=1e-7)


def _wall_run(wall, damping, path_):
    dyn, port = wall

    def path(t):  # into the wall by 2 cm in 0.2 s, then held there
        return (np.array([0.1 * min(t, 0.2), 0, 0]), np.array([0.1 if t < 0.2 else 0.0, 0, 0]))

    gains = rt.CouplerGains(2e4, damping)  # bound: 2e4 * 1e-3 / 2 = 10 N s/m
    hand = rt.SimulatedHand(path, mass=0.5, stiffness=200.0, damping=0.5, max_force=1e3)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=1e3)
    inside = rt.check_gains(gains, T)
    rt.RealtimeLoop(cp, hand, [0.0], [0.0], options=_virtual(1.0, substeps=10), log=path_).run()
    log = _read(path_)
    return inside, log, log["energy"] + log["spring_energy"]


def test_stiff_wall_inside_the_bound_is_passive(wall, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inside, log, stored = _wall_run(wall, 20.0, tmp_path / "wall_ok.h5")
    assert inside
    assert log["port_energy"].min() >= 0.0
    # held still against the wall, the force settles at the static value of three springs in series: the hand's
    # (200 N/m, target 2 cm in), the coupler's and the wall's; the ZOH spring eats K T / 2 = 10 of the 20.5 N s/m
    # of damping, so the oscillation decays as exp(-10.5 t / (2 * 0.5 kg))
    f_static = 0.02 / (1 / 200.0 + 1 / 2e4 + 1 / 1e5)
    assert log["force"][-1, 0] == pytest.approx(f_static, rel=1e-2)
    assert stored[-100:].max() < 1.01 * stored[150:200].max()


def test_stiff_wall_below_the_bound_gains_energy_and_warns(wall, tmp_path):
    with pytest.warns(rt.PassivityWarning) as caught:
        inside, log, stored = _wall_run(wall, 1.0, tmp_path / "wall_bad.h5")
    assert not inside
    # the loop checks the gains itself as it is built: the passivity bound, and the step map on the particle's
    # 0.1 kg (its spring to the wall is a force, not a constraint: a = K T^2 / m = 0.2, b = B T / m = 0.01 < a / 2)
    texts = [str(w.message) for w in caught]
    assert sum("below the sampled-data passivity bound B >= K T / 2" in t for t in texts) == 2  # the test's, the loop's
    assert any(t.startswith("virtual coupler: unstable on the coupled point with the force held over each step") and
               "a = K h^2 / m = 0.2, b = B h / m = 0.01" in t and "m = 0.1 kg" in t for t in texts)
    assert stored[-100:].max() > 100 * stored[150:200].max()
    assert log["port_energy"].min() < 0.0  # the virtual side returned more energy than it got


class _Silent:
    """A simulated hand whose device stops answering (read returns None) from ``t_silent`` [s]."""

    def __init__(self, hand, t_silent):
        self.hand, self.t_silent = hand, t_silent
        self.max_force, self.workspace = hand.max_force, hand.workspace
        self.writes = []

    def open(self):
        self.hand.open()

    def read(self, t):
        return None if t >= self.t_silent else self.hand.read(t)

    def write_force(self, t, force):
        self.writes.append(np.array(force))
        self.hand.write_force(t, force)

    def close(self):
        self.hand.close()


def test_a_device_that_stops_answering_stops_the_loop_with_zero_force(chain, closed_path, tmp_path):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 2.0), max_force=50.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    dev = _Silent(rt.SimulatedHand(closed_path(x0), workspace=rt.Workspace((-2, -2, -9), (2, 2, 0))), 0.5)
    loop = rt.RealtimeLoop(cp, dev, np.zeros(7), np.zeros(7), log=tmp_path / "silent.h5",
                           options=_virtual(2.0, device_timeout=0.01))
    result = loop.run()
    assert result.status == "device stopped answering at t = 0.5 s"
    assert result.missing == 10 and result.deadlines.periods == 510
    assert np.linalg.norm(dev.writes[499]) > 0.1  # force before the silence
    assert all(np.all(w == 0.0) for w in dev.writes[500:])  # zero from the first missing sample on
    log = _read(tmp_path / "silent.h5")
    assert log["attrs"]["status"] == result.status
    assert log["t"].shape == (510,) and np.all(log["sample_status"][500:] == 2)
    assert np.all(log["force"][500:] == 0.0)


class _Noisy(_Silent):
    """A simulated hand whose readings at the given periods are NaN or 100 m away."""

    def __init__(self, hand, bad):
        super().__init__(hand, np.inf)
        self.bad = bad

    def read(self, t):
        s = self.hand.read(t)
        k = int(round(t / T))
        if k in self.bad:
            return rt.DeviceSample(s.t, np.add(s.position, np.nan if self.bad[k] == "nan" else 100.0), s.velocity)
        return s


def test_nan_and_absurd_samples_are_refused_and_counted(wall, tmp_path):
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2e4, 12.0), max_force=1e3)

    def path(t):
        return np.array([0.01, 0.0, 0.0]), np.zeros(3)

    bad = {100: "nan", 101: "far", 300: "nan"}
    dev = _Noisy(rt.SimulatedHand(path, x0=[0.0, 0, 0]), bad)
    result = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=_virtual(0.5, substeps=10),
                             log=tmp_path / "noisy.h5").run()
    assert result.status == "completed" and result.refused == 3 and result.missing == 0
    log = _read(tmp_path / "noisy.h5")
    assert np.flatnonzero(log["sample_status"]).tolist() == [100, 101, 300]
    assert np.all(log["force"][[100, 101, 300]] == 0.0) and np.all(np.isfinite(log["q"]))
    assert np.all(np.isfinite(log["port_energy"]))


def test_replaying_a_log_reproduces_its_forces(chain, closed_path, tmp_path):
    # the virtual system sees only the handle's states: replayed, they give the same forces
    dyn, port = chain
    first, log = _chain_run(chain, closed_path, tmp_path, rt.Engine.AUTO, "first.h5")
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 2.0), max_force=50.0)
    replay = rt.Replay.from_log(tmp_path / "first.h5", workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    again = rt.RealtimeLoop(cp, replay, np.zeros(7), np.zeros(7), options=_virtual(2.5, substeps=2),
                            log=tmp_path / "again.h5").run()
    assert again.status == "completed"
    np.testing.assert_allclose(_read(tmp_path / "again.h5")["force"], log["force"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(-replay.forces[1000][1], log["force"][1000], rtol=0, atol=1e-12)


def test_deadline_statistics_against_numpy():
    rng = np.random.default_rng(7)
    late, comp = rng.uniform(0, 3e-4, 500), rng.uniform(1e-4, 9e-4, 500)
    stats = rt.DeadlineStats(1e-3, capacity=16)  # grows past its first capacity
    missed = [stats.add(a, b) for a, b in zip(late, comp)]
    s = stats.summary()
    assert s.periods == 500 and s.missed == int(np.sum(late + comp > 1e-3)) == sum(missed)
    assert s.compute_p50 == pytest.approx(np.median(comp), rel=1e-15)
    assert s.compute_p99 == pytest.approx(np.percentile(comp, 99), rel=1e-15)
    assert s.compute_max == comp.max() and s.lateness_max == late.max()
    edges = np.array(rt.JITTER_EDGES_S)
    expected = [int(np.sum((late >= lo) & (late < hi))) for lo, hi in zip(edges[:-1], edges[1:])]
    assert list(s.jitter_counts) == expected
    assert s.lines()[0] == f"missed deadlines: {s.missed} of 500 periods"


def test_stop_ends_with_zero_force_and_the_log_saved(wall, tmp_path):
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2e4, 12.0), max_force=1e3)

    def path(t):
        return np.array([0.01, 0.0, 0.0]), np.zeros(3)

    dev = _Silent(rt.SimulatedHand(path, x0=[0.0, 0, 0]), np.inf)
    loop = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=_virtual(np.inf, substeps=10), log=tmp_path / "stop.h5")
    loop.start()
    while len(dev.writes) < 50:  # the loop runs in its own thread; let it run a few periods
        loop.join(0.01)
    loop.stop()
    result = loop.join()
    assert result.status == "stopped" and not loop.running
    assert np.linalg.norm(dev.writes[-2]) > 1.0 and np.all(dev.writes[-1] == 0.0)
    log = _read(tmp_path / "stop.h5")
    assert log["attrs"]["status"] == "stopped" and log["t"].shape == (result.deadlines.periods,)
    assert result.t == pytest.approx(result.deadlines.periods * T, rel=1e-12)


def test_the_log_writer_process_writes_what_the_thread_writes(tmp_path):
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(2600, 23))
    rows[:, 19] = rng.integers(0, 3, 2600)  # sample_status
    rows[:, 20] = rng.integers(0, 4, 2600)  # mode
    q, u = rng.normal(size=(2600, 2)), rng.normal(size=(2600, 1))

    def energy(t, q, u):  # any batch function of the block: here sum q^2 + u^2 + t
        return np.sum(q * q, axis=1) + np.sum(u * u, axis=1) + t

    data = []
    for process in (False, True):
        log = rt.RealtimeLog(tmp_path / f"p{process}.h5", ["a", "b"], ["c"], flush_every=1000, energy=energy,
                             process=process)
        for k in range(2600):
            log.record([*rows[k, :21], 0.0, 0.0], q[k], u[k])
            log.set_timing(*rows[k, 21:])
        log.close("completed", {}, {})
        data.append(_read(tmp_path / f"p{process}.h5"))
    a, b = data
    assert set(a) == set(b) and a["t"].shape == (2600,)
    for key in a:
        if key != "attrs":
            np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(a["force"], rows[:, 13:16])
    np.testing.assert_array_equal(a["compute_time"], rows[:, 21])
    np.testing.assert_allclose(a["energy"], np.sum(q * q, axis=1) + u[:, 0] ** 2 + rows[:, 0], rtol=1e-15)
    assert a["sample_status"].tolist() == rows[:, 19].astype(int).tolist()
    assert a["mode"].tolist() == rows[:, 20].astype(int).tolist()


def test_housekeeping_works_only_in_the_time_it_is_given(tmp_path):
    calls = []

    def energy(t, q, u):  # records the batch sizes it is asked for
        calls.append(len(t))
        return np.sum(q * q, axis=1) + np.sum(u * u, axis=1)

    log = rt.RealtimeLog(tmp_path / "h.h5", ["a", "b"], ["c"], flush_every=100, energy=energy, process=True)
    log.warm_up(0.0, np.zeros(2), np.zeros(1))
    calls.clear()
    rng = np.random.default_rng(4)
    q, u = rng.normal(size=(250, 2)), rng.normal(size=(250, 1))
    for k in range(250):
        log.record([k * 1e-3, *np.zeros(18), 0.0, 0.0, 0.0, 0.0], q[k], u[k])
        log.set_timing(1e-5, 0.0)
    log.housekeeping(time.perf_counter() - 1.0)  # no time left: nothing computed, nothing handed over
    assert calls == [] and log.n_energy == 0 and log.n_sent == 0
    log.housekeeping(time.perf_counter() + 10.0)  # time for all: the energies, then the rows to the writer
    assert sum(calls) == 250 and log.n_energy == 250 and log.n_sent == 250  # more than a block: all of it
    log.close("completed", {}, {})
    data = _read(tmp_path / "h.h5")
    np.testing.assert_allclose(data["energy"], np.sum(q * q, axis=1) + u[:, 0] ** 2, rtol=1e-15)
    assert data["q"].shape == (250, 2) and data["attrs"]["status"] == "completed"
