"""Reading a real-time log back (kane.realtime.log_reader): a log written row by row with known values, closed or
left partial, read back to the last digit; its deadline summary from the rows equals the loop's own statistics."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from kane import realtime as rt
from kane.errors import ArgumentError
from kane.io.trajectory import EventRecord
from kane.realtime.log_reader import is_realtime_log, load_realtime_log, read_log_columns
from kane.realtime.stats import DeadlineStats

T = 1e-3  # the period [s]
N = 50
LATE = {10: (0.6e-3, 0.5e-3), 30: (0.0, 1.2e-3)}  # row -> (lateness, compute) [s]: these two miss their deadline


def write_log(path, close=True, rows=N):
    """A log of ``rows`` periods: the hand at (k, 2k, 3k) mm, the force (k, -k, 0.5) N, q = (k, k^2), u = (-k,);
    compute 20 + k/10 us and lateness k/100 us but for the rows of LATE; one lock event at 0.0205 s."""
    log = rt.RealtimeLog(path, ["a", "b"], ["c"], flush_every=16)
    stats = DeadlineStats(T, capacity=rows)
    for k in range(rows):
        x, f = (1e-3 * k, 2e-3 * k, 3e-3 * k), (float(k), -float(k), 0.5)
        log.record([k * T, *x, 0.0, 0.0, 0.0, *x, 0.0, 0.0, 0.0, *f, 0.1 * k, 0.01 * k, 0.001 * k, k % 3 == 2,
                    k >= 20, 0.0, 0.0], np.array([k, k * k], dtype=float), np.array([-k], dtype=float))
        late, compute = LATE.get(k, (k * 1e-8, 20e-6 + k * 1e-7))
        log.set_timing(compute, late)
        stats.add(late, compute)
        log.housekeeping()
    if not close:  # as a killed run leaves it: the blocks handed over so far
        return log, stats
    events = [EventRecord(0.0205, "caster", "lock", {"impulse": [1.5]})]
    log.close("completed", stats.summary().as_dict(), {"refused": 0, "missing": 0, "saturated": 3, "engine": "compiled",
                                                       "plant": "compiled engine", "substeps": 2},
              modes=["free", "caster"], events=events)
    return log, stats


def test_a_closed_log_reads_back_every_row_its_summary_and_its_events(tmp_path):
    _, stats = write_log(tmp_path / "run.h5")
    rec = load_realtime_log(tmp_path / "run.h5")
    k = np.arange(N)
    assert rec.finished and rec.status == "completed" and rec.period == T
    assert rec.q_names == ("a", "b") and rec.u_names == ("c",) and rec.modes == ("free", "caster")
    np.testing.assert_array_equal(rec.t, k * T)
    np.testing.assert_array_equal(rec.hand_position, 1e-3 * np.outer(k, [1, 2, 3]))
    np.testing.assert_array_equal(rec.force, np.column_stack([k, -k, np.full(N, 0.5)]))
    np.testing.assert_array_equal(rec.q, np.column_stack([k, k * k]))
    np.testing.assert_array_equal(rec.sample_status, (k % 3 == 2).astype(np.int8))
    np.testing.assert_array_equal(rec.mode, (k >= 20).astype(int))
    assert np.all(np.isnan(rec.energy))
    assert rec.deadlines == stats.summary() and rec.deadlines.missed == 2
    np.testing.assert_array_equal(np.nonzero(rec.missed)[0], sorted(LATE))
    assert rec.counts["saturated"] == 3
    (event,) = rec.events
    assert (event.t, event.kind, event.constraint, event.data) == (0.0205, "lock", "caster", {"impulse": [1.5]})
    rows = dict(rec.summary_rows())
    assert rows["missed deadlines"] == "2 of 50 periods" and rows["modes"] == "free, caster"
    assert rows["stepped by"] == "compiled engine, 2 substep(s)"


def test_a_partial_log_gets_its_summary_from_the_rows(tmp_path):
    log, stats = write_log(tmp_path / "run.h5", close=False)
    rec = load_realtime_log(log.partial)
    assert not rec.finished and rec.status.startswith("unfinished")
    assert rec.t.shape == (48,)  # the flushed blocks: 3 of 16 rows
    assert rec.period == pytest.approx(T, rel=1e-12)
    assert rec.deadlines.missed == 2 and rec.deadlines.periods == 48 and rec.deadlines != stats.summary()
    assert rec.deadlines.compute_p50 == pytest.approx(np.percentile(rec.compute_time, 50), rel=1e-15)
    assert rec.modes == ("mode 0", "mode 1")  # the names are written at the close


def test_deadline_statistics_from_rows_equal_those_added_period_by_period():
    rng = np.random.default_rng(7)
    late, compute = rng.exponential(50e-6, 500), rng.exponential(300e-6, 500)
    one_by_one = DeadlineStats(T)
    for a, b in zip(late, compute):
        one_by_one.add(a, b)
    assert DeadlineStats.from_rows(T, late, compute).summary() == one_by_one.summary()
    assert one_by_one.summary().missed == int(np.sum(late + compute > T)) > 0


def test_files_that_are_not_logs_are_named(tmp_path):
    text = tmp_path / "note.h5"
    text.write_text("not hdf5")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["format"] = "kane.trajectory"
    assert not is_realtime_log(text) and not is_realtime_log(other) and not is_realtime_log(tmp_path / "none.h5")
    with pytest.raises(ArgumentError, match=r"realtime log .*note.h5': not a readable HDF5 file"):
        load_realtime_log(text)
    with pytest.raises(ArgumentError, match=r"not a log of kane realtime \(format attribute 'kane.trajectory'"):
        read_log_columns(other, ("t",))


def test_a_second_log_of_the_same_path_refuses_until_the_first_closes(tmp_path):
    from kane.io.output_path import OutputBusyError
    path = tmp_path / "run.h5"
    first = rt.RealtimeLog(path, ["a"], ["b"], flush_every=16)
    with pytest.raises(OutputBusyError, match=r"run\.h5 is being written by another kane run"):
        rt.RealtimeLog(tmp_path / "." / "run.h5", ["a"], ["b"], flush_every=16)
    first.close("completed", {}, {})
    assert not Path(f"{path}.lock").exists()
    write_log(path)  # the path is free again: a new run writes it whole
    rec = load_realtime_log(path)
    assert rec.finished and len(rec.t) == N
