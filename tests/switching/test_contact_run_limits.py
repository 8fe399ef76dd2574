"""Contact runs written as they go (kane.switching.contact_stream): a run stopped by its step limit, by Ctrl-C or
SIGTERM, or by a Painleve-type inconsistency keeps every sample up to the stop (the same, to 1e-12, as an
uninterrupted run's or the in-memory run's), its status, the stop time, the contact modes there and the last good
state, readable by plain h5py; the CLI names the time, the modes and the file."""

import json
import math
import os
import signal
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.cli import main
from kane.io import load_model
from kane.io.trajectory import TrajectoryWriter
from kane.model.contact import ContactMaterial, ContactPoint
from kane.simulate.simulator import SimulationError
from kane.switching import ContactOptions, ContactScheme, FreeBodies, simulate_contacts
from kane.switching.contact_run import ContactJob, ContactRunOptions, pair_block_outputs, run_contacts
from kane.switching.contact_stream import STREAM_EVERY, run_scheme, write_contact_stream

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UP = np.array([0.0, 0.0, 1.0])
STEPS = 2 * STREAM_EVERY + 30  # three blocks: the records of a step cross a block's end


@pytest.fixture(scope="module")
def incline():
    loaded = load_model(EXAMPLES / "box_on_incline.toml")
    dyn = loaded.derive().compile()
    return loaded, dyn


def _job(incline, path, progress=None, **options):
    loaded, dyn = incline
    job = ContactJob(loaded, ContactRunOptions(dt=1e-3, t_end=STEPS * 1e-3, **options), dynamics=dyn)
    return job.start(TrajectoryWriter(path), progress)


@pytest.fixture(scope="module")
def full_run(incline, tmp_path_factory):
    path = tmp_path_factory.mktemp("full") / "full.h5"
    _job(incline, path)
    return kane.load_trajectory(path)


def _same_start(traj, full, n):
    assert traj.n_samples == n
    for name in ("t", "q", "u", "energy"):
        np.testing.assert_allclose(getattr(traj, name), getattr(full, name)[:n], rtol=0, atol=1e-12)
    for name, series in traj.residuals.items():
        np.testing.assert_allclose(series, full.residuals[name][:n], rtol=0, atol=1e-12, equal_nan=True)


def _stop(path):
    """(status, the stop record) read with plain h5py."""
    with h5py.File(path, "r") as f:
        status = f.attrs["status"]
        records = [json.loads(line) for line in bytes(f["events_jsonl"][()]).decode().splitlines()]
    stops = [r for r in records if r["kind"] == "stop"]
    assert len(stops) == 1
    return status, stops[0]


def test_the_streamed_run_is_the_in_memory_run_across_its_blocks(incline, full_run):
    loaded, dyn = incline
    mem = run_contacts(loaded, ContactRunOptions(dt=1e-3, t_end=STEPS * 1e-3), dyn)
    assert full_run.status == "completed" and full_run.n_samples == STEPS + 1
    np.testing.assert_allclose(full_run.q, mem.run.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(full_run.u, mem.run.u, rtol=0, atol=1e-12)
    np.testing.assert_allclose(full_run.energy, mem.run.energy, rtol=0, atol=1e-12)
    for name, series in mem.outputs.items():
        np.testing.assert_allclose(full_run.residuals[name], series, rtol=0, atol=1e-12, equal_nan=True)
    assert full_run.stats.n_steps == STEPS and full_run.residuals["block|slope.mode"][1:].min() == 2  # slides


def test_a_time_stepping_run_stopped_by_max_steps_keeps_every_sample(incline, full_run, tmp_path):
    path = tmp_path / "limited.h5"
    with pytest.raises(SimulationError, match=r"(?s)at t = 0\.13 s in contact modes 'block\|slope#0 slip.*step "
                                              r"limit.*results so far saved to .*limited\.h5") as info:
        _job(incline, path, max_steps=130)
    assert info.value.t == pytest.approx(0.13, abs=1e-15)
    traj = kane.load_trajectory(path)
    _same_start(traj, full_run, 131)
    status, stop = _stop(path)
    assert status.startswith("failed: the step limit was reached: 130 steps")
    assert stop["t"] == traj.t[-1] and stop["data"]["q"] == traj.q[-1].tolist()
    assert stop["data"]["u"] == traj.u[-1].tolist()
    assert set(stop["data"]["modes"].values()) == {"slip"} and len(stop["data"]["modes"]) >= 1


def test_ctrl_c_and_sigterm_keep_every_sample_up_to_the_stop(incline, full_run, tmp_path):
    def at_step(k, action):
        def progress(state):
            if state.stats.n_steps >= k:
                action()
        return progress

    def ctrl_c():
        raise KeyboardInterrupt

    path = tmp_path / "ctrl_c.h5"
    with pytest.raises(KeyboardInterrupt):
        _job(incline, path, at_step(170, ctrl_c))
    traj = kane.load_trajectory(path)
    _same_start(traj, full_run, 171)
    status, stop = _stop(path)
    assert status == "interrupted: KeyboardInterrupt" and stop["t"] == pytest.approx(0.17, abs=1e-15)

    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the run takes SIGTERM as an interrupt
    path = tmp_path / "sigterm.h5"
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        _job(incline, path, at_step(60, lambda: os.kill(os.getpid(), signal.SIGTERM)))
    traj = kane.load_trajectory(path)
    assert traj.status == "interrupted: SIGTERM"
    _same_start(traj, full_run, traj.n_samples)
    assert 61 <= traj.n_samples <= 62  # the signal is taken within the step it arrives in
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_the_cli_names_the_time_the_modes_and_the_file_of_a_stopped_contact_run(tmp_path):
    out = tmp_path / "run.h5"
    done = CliRunner().invoke(main, ["simulate", str(EXAMPLES / "box_on_incline.toml"), "-o", str(out),
                                     "--t-end", "0.2", "--max-steps", "40"])
    assert done.exit_code == 2, done.output
    assert "contact run failed at t = 0.04 s in contact modes 'block|slope#0 slip" in done.output
    assert f"results so far saved to {out}" in done.output and "Traceback" not in done.output
    traj = kane.load_trajectory(out)
    assert traj.n_samples == 41 and traj.status.startswith("failed: the step limit was reached")


def rough_patch_rod(theta, mu, edge, m=1.0, l=0.5):
    """Painleve's rod (Stewart 2000): a uniform rod of length 2 l at angle theta, its lower end sliding at 1 m/s
    away from its centre of mass on a plane of friction 0.2, onto a rough patch x < edge [m] of friction mu."""
    bodies = FreeBodies(["rod"], [m], [np.diag([1e-4, m * l * l / 3, m * l * l / 3])])
    end = np.array([-l, 0.0, 0.0])
    R = np.array([[math.cos(theta), 0, -math.sin(theta)], [0, 1, 0], [math.sin(theta), 0, math.cos(theta)]])

    def contacts(q):
        c, Rq = bodies.pose(q, "rod")
        p = c + Rq @ end
        material = ContactMaterial(mu if p[0] < edge else 0.2)
        return [ContactPoint("ground", "rod", "plane", "end", p * [1, 1, 0], p, UP, float(p[2]), material)]

    w, y = math.cos(-theta / 2), math.sin(-theta / 2)  # rotation by -theta about y; the end starts at x = 0
    return bodies, contacts, np.r_[-R @ end, w, 0.0, y, 0.0], np.r_[0, 0, 0, -1.0, 0, 0]


def test_an_event_driven_run_that_meets_a_painleve_inconsistency_keeps_its_samples(tmp_path):
    # beyond mu_c = (1 + 3 cos^2 theta) / (3 sin theta cos theta) neither slipping on nor leaving is consistent
    theta = math.radians(60)
    mu_c = (1 + 3 * math.cos(theta) ** 2) / (3 * math.sin(theta) * math.cos(theta))
    bodies, contacts, q0, u0 = rough_patch_rod(theta, 1.05 * mu_c, -0.0055)
    events = ContactOptions(ContactScheme.EVENT_DRIVEN)
    path = tmp_path / "rod.h5"
    writer = TrajectoryWriter(path)
    writer.open(q_names=[f"q{i}" for i in range(7)], u_names=[f"u{i}" for i in range(6)],
                residual_names=[f"plane|end.{f}" for f in ("normal_force", "mode")], has_energy=True)

    def outputs(block, previous):
        return pair_block_outputs(ContactScheme.EVENT_DRIVEN, block, ("plane|end",), contacts, previous)

    with pytest.raises(SimulationError, match=r"(?s)at t = 0\.0054\d* s in contact modes 'plane\|end#0 slip'.*"
                                              r"Painleve-type inconsistency.*saved to .*rod\.h5") as info:
        write_contact_stream(writer, ContactScheme.EVENT_DRIVEN,
                             run_scheme(ContactScheme.EVENT_DRIVEN, bodies, contacts, q0, u0, 1e-3, 0.01, events,
                                        bodies, None), outputs, 1e-3, q0, u0, method="contact event-driven")
    t_stop = info.value.t
    assert 0.0054 < t_stop < 0.0055  # the end reaches the patch at about 5.4 ms
    ref = simulate_contacts(bodies, contacts, q0, u0, 1e-3, 0.005, events)  # the same run, up to 5 ms
    with h5py.File(path, "r") as f:
        status = f.attrs["status"]
        t, q, u = f["t"][()], f["q"][()], f["u"][()]
        normal = f["residuals/plane|end.normal_force"][()]
    assert t.tolist() == ref.t.tolist()  # every sample before the stop
    np.testing.assert_allclose(q, ref.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(u, ref.u, rtol=0, atol=1e-9)
    np.testing.assert_allclose(normal, ref.contacts.normal_force, rtol=1e-9)
    assert status.startswith(f"failed: Painleve-type inconsistency at t = {t_stop:.12g} s: no consistent contact "
                             f"mode for plane|end#0")
    _, stop = _stop(path)
    assert stop["t"] == t_stop and stop["data"]["modes"] == {"plane|end#0": "slip"}
    assert stop["data"]["q"] == info.value.q.tolist()
    assert abs(contacts(info.value.q)[0].point_b_world[0] + 0.0055) < 1e-6  # the stop: the end at the patch
