"""Interrupted and runaway runs (issue 10, cases 7-10): `kane simulate` killed with SIGKILL or stopped with
SIGTERM keeps every flushed sample in a file that plain h5py and `kane info` read; SIGTERM in ``simulate()``;
the step and wall-time limits; an initial state too large for the first-step choice."""

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import ArgumentError
from kane.io.trajectory import load_trajectory
from kane.simulate import Method, SimulationError, simulate
from kane.simulate.dopri5 import _rms
from kane.simulate.run_limits import DEFAULT_MAX_STEPS, RunInterrupted, run_limits

ROOT = Path(__file__).resolve().parents[2]
CHAIN = ROOT / "examples" / "planar_chain.toml"  # conservative: energy is constant along the run
OUTPUT_DT = 0.01  # the chain's [simulation] output_dt [s]


def _committed(partial: Path) -> int:
    """Samples committed to a partial file so far (0 while it does not exist or is being written)."""
    try:
        with h5py.File(partial, "r") as f:
            return int(f["n_committed"][0])
    except (OSError, KeyError):
        return 0


@pytest.fixture(scope="module")
def stopped_runs(tmp_path_factory):
    """Two `kane simulate` runs of the chain over 10^4 s started together; once each has flushed at least twice,
    one gets SIGKILL and one SIGTERM. Returns {signal: (path, samples seen committed before, returncode, stderr)}."""
    tmp = tmp_path_factory.mktemp("stopped")
    runs = {}
    for sig in (signal.SIGKILL, signal.SIGTERM):
        path = tmp / f"{sig.name}.h5"
        # tight tolerances: in the compiled loop the run is hundreds of seconds in by its second flush, and the
        # energy check below must hold over that span (drift ~1.6e-6 J/s at the file's rtol 1e-8, ~1.5e-8 here)
        child = subprocess.Popen([sys.executable, "-m", "kane.cli", "simulate", str(CHAIN), "-o", str(path),
                                  "--t-end", "1e4", "--rtol", "1e-10", "--atol", "1e-10"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        runs[sig] = (path, child)
    out = {}
    try:
        for sig, (path, child) in runs.items():
            partial = Path(str(path) + ".partial")
            seen, first = 0, 0
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and child.poll() is None:
                seen = _committed(partial)
                first = first or seen
                if seen > first > 0:  # a second flush is visible
                    break
                time.sleep(0.05)
            assert seen > first > 0, f"the run to {path} flushed nothing: {child.stderr.read() if child.poll() else ''}"
            child.send_signal(sig)
            _, err = child.communicate(timeout=60)
            out[sig] = (path, seen, child.returncode, err)
    finally:
        for _, child in runs.values():
            if child.poll() is None:
                child.kill()
                child.communicate()
    return out


def _check_samples(t, energy, n_seen):
    """Every flushed sample: the output grid 0, dt, 2 dt, ... without a gap, and the energy of a conservative
    chain constant along it (an independent check that the rows are the run's states, not garbage), to 1e-6 of
    the energy it can exchange: m g l n^2 / 2 = 240.1 J for n = 7 unit links falling from horizontal."""
    assert t.shape[0] >= n_seen
    np.testing.assert_allclose(t, OUTPUT_DT * np.arange(t.shape[0]), rtol=0, atol=1e-9)
    assert np.max(np.abs(energy - energy[0])) <= 1e-6 * 9.8 * 7**2 / 2


def test_a_run_killed_with_sigkill_keeps_every_flushed_sample(stopped_runs):
    path, n_seen, rc, _ = stopped_runs[signal.SIGKILL]
    partial = Path(str(path) + ".partial")
    assert rc == -signal.SIGKILL and partial.exists() and not path.exists()
    with h5py.File(partial, "r") as f:  # plain h5py, no swmr flag
        n = int(f["n_committed"][0])
        t, energy, q = f["t"][:n], f["energy"][:n], f["q"][:n]
        assert f.attrs["status"] == "incomplete" and f["q"].shape[1] == 7
    _check_samples(t, energy, n_seen)
    tr = load_trajectory(path)
    assert tr.status == "incomplete" and tr.n_samples == n
    np.testing.assert_array_equal(tr.q, q)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "is incomplete" in text and f"it got to t = {t[-1]:g} s, {n} samples" in text
    assert f"samples {n}, t = 0 to {t[-1]:g} s" in text


def test_a_run_stopped_with_sigterm_closes_its_file_like_ctrl_c(stopped_runs):
    path, n_seen, rc, err = stopped_runs[signal.SIGTERM]
    assert rc == 130 and "Traceback" not in err, err
    assert path.exists() and not Path(str(path) + ".partial").exists()
    line = next(s for s in err.splitlines() if s.startswith("interrupted: SIGTERM at t = "))
    t_stop = float(line.split("t = ")[1].split()[0])
    assert f"saved in {path}" in line
    with h5py.File(path, "r") as f:
        t, energy = f["t"][:], f["energy"][:]
        assert f.attrs["status"] == "interrupted: SIGTERM" and int(f["n_committed"][0]) == t.shape[0]
    _check_samples(t, energy, n_seen)
    assert t[-1] <= t_stop * (1 + 1e-6) and t_stop - t[-1] < OUTPUT_DT + 0.1  # up to the last step taken
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "interrupted: SIGTERM" in text and f"{t.shape[0]} samples" in text


class Oscillator:
    """x'' = -k x (k [1/s^2]): x = cos(sqrt(k) t) from x = 1 at rest."""

    n_q, n_u = 1, 1
    q_names, u_names = ("x",), ("v",)

    def __init__(self, k=1.0, on_udot=None):
        self.k = k
        self.on_udot = on_udot

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        if self.on_udot:
            self.on_udot(t)
        return -self.k * q


def test_sigterm_during_simulate_saves_every_sample_as_interrupted(tmp_path):
    calls = []

    def send_sigterm_once(t):
        calls.append(t)
        if len(calls) == 400:
            os.kill(os.getpid(), signal.SIGTERM)

    path = tmp_path / "term.h5"
    with pytest.raises(RunInterrupted, match="SIGTERM"):
        simulate(Oscillator(on_udot=send_sigterm_once), (0.0, 1e6), [1.0], [0.0], method=Method.RK4, dt=1e-2,
                 path=path, flush_every=10**6, flush_seconds=math.inf)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler was only lent for the run
    tr = load_trajectory(path)
    assert tr.status == "interrupted: SIGTERM"
    assert tr.n_samples == 100  # RK4: 4 evaluations a step; the samples of the 99 finished steps, and t0
    np.testing.assert_allclose(tr.q[:, 0], np.cos(tr.t), atol=1e-8)


def test_the_step_limit_stops_a_stiff_run_with_its_state_saved(tmp_path):
    path = tmp_path / "stiff.h5"
    with pytest.raises(SimulationError, match=r"step limit was reached: 300 steps \(max_steps = 300\)") as info:
        simulate(Oscillator(k=1e8), (0.0, 10.0), [1.0], [0.0], rtol=1e-6, atol=1e-9, path=path, max_steps=300)
    err = info.value
    saved = load_trajectory(path)
    assert saved.status.startswith("failed: the step limit was reached") and saved.stats.n_steps == 300
    assert saved.t[-1] == err.t_good and saved.q[-1, 0] == err.q[0]
    # DOPRI5's stability bound |h omega| <= 3.3 limits 300 steps to about 300 * 3.3 / 1e4 s of the run
    assert 0 < err.t_good < 300 * 3.4 / 1e4
    np.testing.assert_allclose(saved.q[:, 0], np.cos(1e4 * saved.t), atol=1e-3)


def test_the_wall_time_limit_stops_an_endless_run_with_its_samples(tmp_path):
    path = tmp_path / "long.h5"
    with pytest.raises(SimulationError, match=r"wall-time limit was reached: .* \(max_wall_time = 0.2 s\)") as info:
        simulate(Oscillator(), (0.0, 1e9), [1.0], [0.0], method=Method.RK4, dt=1e-3, path=path, max_wall_time=0.2)
    saved = load_trajectory(path)
    assert saved.status.startswith("failed: the wall-time limit") and saved.t[-1] == info.value.t_good
    assert saved.stats.wall_time_s >= 0.2 and saved.n_samples == saved.stats.n_accepted + 1
    np.testing.assert_allclose(saved.q[:, 0], np.cos(saved.t), atol=1e-9)


def test_limit_defaults_and_bad_limits():
    assert run_limits(Method.DOPRI5, None, None) == (DEFAULT_MAX_STEPS, None) == (1_000_000, None)
    assert run_limits(Method.RK4, None, 60) == (None, 60.0)  # fixed step: (t_end - t0) / dt steps, known
    assert run_limits(Method.RK4, 5, None) == (5, None)
    for bad in (0, -3, 2.5, True, "100"):
        with pytest.raises(ArgumentError, match="max_steps must be a whole number of steps >= 1"):
            run_limits(Method.DOPRI5, bad, None)
    for bad in (0, -1.0, math.nan, "soon"):
        with pytest.raises(ArgumentError, match=r"max_wall_time must be a time > 0 \[s\]"):
            run_limits(Method.DOPRI5, None, bad)


def test_a_huge_initial_speed_stops_with_a_clear_error_not_zero_division():
    # u' = -q u^2 at u0 = 1e150: |f| = 1e300 is finite, but the old RMS norm squared it to inf and divided by 0
    class Quadratic(Oscillator):
        def udot(self, t, q, u, params=None, inputs=None):
            return -q * u * u

    with pytest.raises(SimulationError, match=r"simulation failed at t = 0.0 s.*step size .* fell below the minimum"):
        simulate(Quadratic(), (0.0, 1.0), [1.0], [1e150])
    v = np.array([1e158, -1e158, 1e158, 1e158])
    assert _rms(v) == 1e158 and _rms(np.array([3.0, 4.0])) == pytest.approx(math.sqrt(12.5), rel=1e-15)
