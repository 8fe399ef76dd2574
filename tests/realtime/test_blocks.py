"""The C period's supervisor works in blocks (kane.realtime.devices.Replay.read_block and check_samples, fill of
kane.realtime.c_period, RealtimeLog.record_block): each block gives, to the bit, what the per-sample and per-row
paths give (Replay.read and check_sample sample by sample, RealtimeLog.record row by row), and a C run filled by
blocks logs the same rows as one filled sample by sample."""

import h5py
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kane import realtime as rt
from kane.realtime.devices import check_samples
from kane.realtime.log import ROW_FIELDS, RealtimeLog

WS = rt.Workspace((-1.0, -1.0, -1.0), (1.0, 1.0, 1.0), max_speed=10.0, max_angular_speed=50.0)


def _replay(pose: bool, hold: float = 0.0) -> rt.Replay:
    """40 records at 1 ms with every kind of sample check_sample judges: NaN and inf, outside the box and on its
    faces, a speed on and above the maximum; with ``pose`` also a reflection, a matrix off a rotation by 1e-3 and
    one within 1e-7, a NaN orientation and an angular speed on and above the maximum."""
    rng = np.random.default_rng(7)
    n = 40
    t = 0.01 + 1e-3 * np.arange(n)
    pos = rng.uniform(-0.9, 0.9, (n, 3))
    vel = rng.uniform(-3.0, 3.0, (n, 3))
    pos[1, 0], pos[2, 2], vel[3, 1] = np.nan, np.inf, -np.inf
    pos[4] = (1.0, -1.0, 1.0)  # on the faces: used
    pos[5, 1] = 1.0 + 1e-12  # just outside: refused
    vel[6] = (6.0, 8.0, 0.0)  # speed 10 exactly: used
    vel[7] = (6.0, 8.0, 1e-6)  # above: refused
    if not pose:
        return rt.Replay(t, pos, vel, workspace=WS, hold=hold)
    R = Rotation.random(n, random_state=3).as_matrix()
    w = rng.uniform(-20.0, 20.0, (n, 3))
    R[8] = -R[8]  # det -1
    R[9, 0, 0] += 1e-3
    R[10, 1, 2] += 1e-7
    R[11, 2, 1] = np.nan
    w[12] = (30.0, 40.0, 0.0)  # 50 rad/s exactly: used
    w[13] = (30.0, 40.0, 1e-5)
    return rt.Replay(t, pos, vel, workspace=WS, hold=hold, orientation=R, angular_velocity=w)


@pytest.mark.parametrize("pose", [False, True])
@pytest.mark.parametrize("hold", [0.0, 2.5e-3])
def test_read_block_and_check_samples_equal_read_and_check_sample_to_the_bit(pose, hold):
    dev = _replay(pose, hold)
    times = 0.0085 + 0.25e-3 * np.arange(200)  # before the first record, between records, past the last + hold
    block = dev.read_block(times)
    for rot in (False, True) if pose else (False,):
        ok = check_samples(block, dev.workspace, rot)
        kinds = {"missing": 0, "used": 0, "refused": 0}
        for i, t in enumerate(times):
            one = dev.read(float(t))
            assert block.present[i] == (one is not None), i
            if one is None:
                kinds["missing"] += 1
                assert np.isnan(block.position[i]).all()
                continue
            assert ok[i] == (rt.check_sample(one, dev.workspace, rot) is None), (i, rt.check_sample(one, WS, rot))
            kinds["used" if ok[i] else "refused"] += 1
            assert block.t[i] == one.t
            assert block.position[i].tobytes() == one.position.tobytes()
            assert block.velocity[i].tobytes() == one.velocity.tobytes()
            if pose:
                assert block.orientation[i].tobytes() == one.orientation.tobytes()
                assert block.angular_velocity[i].tobytes() == one.angular_velocity.tobytes()
        assert min(kinds.values()) >= 6, kinds  # every branch taken, many times


def test_a_replay_without_a_pose_is_refused_by_a_pose_check_as_sample_by_sample():
    dev = _replay(False)
    block = dev.read_block(dev.times)
    assert not check_samples(block, WS, True).any()
    assert all(rt.check_sample(dev.read(float(t)), WS, True) is not None for t in dev.times)


class _PerSample(rt.Replay):
    """A Replay with its own ``read`` (the same records): the C supervisor fills its ring sample by sample."""

    def read(self, t):
        return super().read(t)


def test_a_c_run_filled_by_blocks_logs_the_rows_of_one_filled_sample_by_sample(chain, tmp_path):
    dyn, port = chain
    files = []
    for kind in (rt.Replay, _PerSample):
        cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 2.0), max_force=20.0)
        q0, u0 = np.linspace(0.1, -0.2, 7), np.zeros(7)
        x0, _ = cp.point_state(0.0, q0, u0)
        t = np.delete(np.arange(1500) * 1e-3, np.arange(150, 153))
        w = 2 * np.pi
        pos = x0 + 0.5 * np.stack([np.sin(w * t), 1 - np.cos(w * t), 0 * t], 1)
        vel = 0.5 * w * np.stack([np.cos(w * t), np.sin(w * t), 0 * t], 1)
        pos[100], vel[700] = np.nan, 50.0  # refused
        dev = kind(t, pos, vel, max_force=20.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
        opts = rt.LoopOptions(rate=1000.0, duration=1.6, clock=rt.ClockMode.VIRTUAL, loop_path=rt.LoopPath.C,
                              flush_every=300, device_timeout=0.05)
        result = rt.RealtimeLoop(cp, dev, q0, u0, options=opts, log=tmp_path / f"{kind.__name__}.h5").run()
        assert result.loop_path == "c" and result.refused == 2
        files.append(h5py.File(tmp_path / f"{kind.__name__}.h5", "r"))
    fa, fb = files
    assert fa["t"].shape[0] == fb["t"].shape[0] > 1400  # the record ends at 1.499 s: the device stops answering
    assert list(fa["sample_status"][()]).count(1) == 2
    names = [n for n in fa if isinstance(fa[n], h5py.Dataset) and n != "compute_time"]
    assert len(names) >= 15
    for name in names:
        assert fa[name][()].tobytes() == fb[name][()].tobytes(), name


@pytest.mark.parametrize("energy", [False, True])
def test_record_block_leaves_the_ring_and_the_file_that_record_row_by_row_does(tmp_path, energy):
    rng = np.random.default_rng(11)
    nq, nu, n = 3, 2, 700
    width = sum(3 if f in ("hand_position", "hand_velocity", "point_position", "point_velocity", "force") else 1
                for f in ROW_FIELDS)
    values, q, u = rng.normal(size=(n, width)), rng.normal(size=(n, nq)), rng.normal(size=(n, nu))
    values[:, 0] = np.arange(n) * 1e-3
    fn = (lambda t, Q, U: (Q * Q).sum(1) + (U * U).sum(1) + t) if energy else None
    logs = []
    for name in ("rows", "blocks"):
        log = RealtimeLog(tmp_path / f"{name}.h5", ["a", "b", "c"], ["x", "y"], flush_every=16, energy=fn)
        logs.append(log)
    by_row, by_block = logs
    for i in range(n):
        by_row.record(values[i], q[i], u[i])
        if i % 50 == 49:
            by_row.housekeeping(None)
    # the ring holds 128 rows: blocks across its end, longer than it, and one (100 after 88 rows pending since the
    # last commit at 112) that would overwrite uncommitted rows without the wait at the row record would wait at
    sizes = [112, 1, 87, 100, 150, 250]
    assert sum(sizes) == n
    at = 0
    for size in sizes:
        by_block.record_block(values[at:at + size], q[at:at + size], u[at:at + size])
        at += size
    assert by_block.n_rows == by_row.n_rows == n
    assert by_block.n_committed > 0  # it waited for the writer where record would (the ring is 128 rows)
    by_row.flush()
    by_block.flush()
    assert by_row._ring.tobytes() == by_block._ring.tobytes()
    paths = [log.close("completed", {}, {}) for log in logs]
    with h5py.File(paths[0], "r") as fa, h5py.File(paths[1], "r") as fb:
        assert fa["t"].shape[0] == n
        for name in fa:
            if isinstance(fa[name], h5py.Dataset):
                assert fa[name][()].tobytes() == fb[name][()].tobytes(), name
        # and each dataset holds what was recorded (kane.realtime.log_writer.write_block), cast as numpy casts
        energies = fn(values[:, 0], q, u) if energy else np.full(n, np.nan)
        rows = np.hstack([values, q, u, energies[:, None]])
        assert len(logs[1]._layout["columns"]) == 16
        for name, (a, b, vector) in logs[1]._layout["columns"].items():
            want = (rows[:, a:b] if vector else rows[:, a]).astype(fb[name].dtype)
            assert fb[name][()].tobytes() == want.tobytes(), name
        np.testing.assert_array_equal(fa["force"][()], values[:, 13:16])
