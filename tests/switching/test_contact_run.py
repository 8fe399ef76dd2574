"""Contact runs of model files with [[collision]] shapes through `kane simulate` and run_contacts: the incline's
acceleration and forces against Coulomb's law, the pile's energy, the outputs read back, refusals."""

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.cli import main
from kane.errors import ArgumentError
from kane.io import load_model
from kane.switching.contact_run import (PAIR_FIELDS, ContactRunOptions, ContactScheme, collision_pairs,
                                        contact_series, run_contacts, write_contact_run)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
G, THETA, MASS, MU_S, MU_K = 9.81, math.radians(30.0), 2.0, 0.3, 0.25
DOWN = np.array([math.cos(THETA), 0.0, -math.sin(THETA)])  # down the slope of examples/box_on_incline.toml


def _simulate(tmp_path, model, *args):
    out = tmp_path / "run.h5"
    done = CliRunner().invoke(main, ["simulate", str(model), "-o", str(out), *args])
    assert done.exit_code == 0, done.output
    return kane.load_trajectory(out)


def _slope_acceleration(traj) -> np.ndarray:
    s = traj.q[:, :3] @ DOWN
    h = np.diff(traj.t)
    return np.diff(s, 2) / (h[1:] * h[:-1])


def test_box_on_incline_slides_with_coulomb_acceleration_by_time_stepping_from_the_cli(tmp_path):
    traj = _simulate(tmp_path, EXAMPLES / "box_on_incline.toml", "--t-end", "0.05")
    assert traj.stats.method.startswith("contact time-stepping")
    a = _slope_acceleration(traj)
    a_ref = G * (math.sin(THETA) - MU_K * math.cos(THETA))
    assert np.abs(a - a_ref).max() < 1e-9
    c = contact_series(traj)
    assert c.pairs == ("block|slope",)
    assert np.all(c.mode[1:, 0] == 2) and c.mode[0, 0] == 0  # sample 0: no step has acted yet
    N = c["normal_force"][1:, 0]
    f_t = np.hypot(c["friction_t1"][1:, 0], c["friction_t2"][1:, 0])
    assert np.abs(N - MASS * G * math.cos(THETA)).max() < 1e-9 * MASS * G
    assert np.abs(f_t - MU_K * N).max() < 1e-9 * MASS * G
    # the slip velocity is the box's velocity down the slope (finite difference of the positions)
    slip = np.hypot(c["slip_t1"][1:, 0], c["slip_t2"][1:, 0])
    v = np.diff(traj.q[:, :3] @ DOWN) / np.diff(traj.t)
    assert np.abs(slip - v).max() < 1e-9
    normal = np.column_stack([c[f"normal_{k}"][1:, 0] for k in "xyz"])  # block -> slope: into the slope
    assert np.abs(normal + [math.sin(THETA), 0, math.cos(THETA)]).max() < 1e-12
    assert np.all(np.isnan(c["normal_force"][0]))


def test_box_on_incline_event_driven_from_the_cli_records_its_scheme(tmp_path):
    traj = _simulate(tmp_path, EXAMPLES / "box_on_incline.toml", "--t-end", "0.1", "--dt", "0.01",
                     "--contact-scheme", "event-driven")
    assert traj.stats.method.startswith("contact event-driven")
    a = _slope_acceleration(traj)
    assert np.abs(a - G * (math.sin(THETA) - MU_K * math.cos(THETA))).max() < 1e-9
    c = contact_series(traj)
    assert np.all(c.mode[1:, 0] == 2)
    assert np.abs(c["normal_force"][1:, 0] - MASS * G * math.cos(THETA)).max() < 1e-9 * MASS * G


def test_a_gentle_incline_holds_the_box_by_static_friction(tmp_path):
    text = (EXAMPLES / "box_on_incline.toml").read_text().replace("theta = 0.5235987755982988",
                                                                  "theta = 0.2")
    model = tmp_path / "gentle.toml"
    model.write_text(text)
    result = run_contacts(load_model(model), ContactRunOptions(dt=0.002, t_end=0.04))
    theta = 0.2  # tan(0.2) = 0.203 < mu_s = 0.3
    assert result.scheme is ContactScheme.TIME_STEPPING
    assert np.abs(result.run.q[:, :3] - result.run.q[0, :3]).max() < 1e-12
    out = result.outputs
    assert np.all(out["block|slope.mode"][1:] == 1)
    f_t = np.hypot(out["block|slope.friction_t1"][1:], out["block|slope.friction_t2"][1:])
    assert np.abs(f_t - MASS * G * math.sin(theta)).max() < 1e-9
    assert np.abs(out["block|slope.normal_force"][1:] - MASS * G * math.cos(theta)).max() < 1e-9
    # the centre of pressure lies on the slope, shifted downhill from under the centre of mass by c tan(theta)
    # (moments about the centre of mass: N x offset = f_t x c with f_t = N tan(theta))
    p = np.column_stack([out[f"block|slope.point_{k}"][1:] for k in "xyz"])
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    c0, c = result.run.q[0, :3], 0.05
    assert np.abs(p @ n).max() < 1e-12
    assert np.abs(p - (c0 - c * n + c * math.tan(theta) * down)).max() < 1e-9
    path = write_contact_run(result, tmp_path / "gentle.h5")
    back = contact_series(kane.load_trajectory(path))
    assert np.array_equal(back["normal_force"][:, 0], out["block|slope.normal_force"], equal_nan=True)


def test_box_pile_energy_never_increases_and_forces_stay_in_their_cones(tmp_path):
    done = CliRunner().invoke(main, ["simulate", str(EXAMPLES / "box_pile.toml"), "-o", str(tmp_path / "run.h5"),
                                     "--t-end", "0.15"])
    assert done.exit_code == 0, done.output
    traj = kane.load_trajectory(tmp_path / "run.h5")
    assert np.diff(traj.energy).max() <= 1e-9 * abs(traj.energy[0])
    # the closing table: the energy lost is the contacts' (gravity is in the energy), not an unknown load's
    text = " ".join(done.output.replace("\u2502", " ").split())  # the table's rows joined, its borders dropped
    assert f"{traj.energy[-1] - traj.energy[0]:.6g} J (a contact run: the contacts' dissipation" in text
    assert "no known potential" not in text
    c = contact_series(traj)
    lm = load_model(EXAMPLES / "box_pile.toml")
    assert c.pairs == collision_pairs(lm.derive().model)
    assert set(c.pairs) == {"box1|box2", "box1|box3", "box2|box3", "box1|floor", "box2|floor", "box3|floor"}
    touching = c.mode > 0
    assert touching[:, c.pairs.index("box1|floor")].any() and touching[:, c.pairs.index("box1|box2")].any()
    N = c["normal_force"][touching]
    f_t = np.hypot(c["friction_t1"][touching], c["friction_t2"][touching])
    assert N.min() > 0 and np.all(f_t <= 0.6 * N * (1 + 1e-9) + 1e-12)
    assert np.all(np.isnan(c["normal_force"][~touching]))
    # a box pressing on the floor does so on the floor (the floor's witness points, z = 0)
    floor = [k for k, p in enumerate(c.pairs) if p.endswith("|floor")]
    z = c["point_z"][:, floor][touching[:, floor]]
    assert z.size > 50 and np.abs(z).max() < 1e-12
    names = {f"{p}.{f}" for p in c.pairs for f in PAIR_FIELDS}
    assert names == set(traj.residuals)


def test_commands_that_cannot_run_collisions_refuse_them_by_name(tmp_path):
    for command in (["linearize"], ["view", "--live"]):
        done = CliRunner().invoke(main, [*command, str(EXAMPLES / "box_on_incline.toml")])
        assert done.exit_code == 2, done.output
        assert "[[collision]]" in done.output and f"kane {' '.join(command)}" in done.output


def test_bad_contact_run_options_are_named():
    with pytest.raises(ArgumentError, match="scheme"):
        ContactRunOptions(scheme="implicit")
    with pytest.raises(ArgumentError, match="dt"):
        ContactRunOptions(dt=-1.0)
    lm = load_model(EXAMPLES / "box_on_incline.toml")
    with pytest.raises(ArgumentError, match="whole number"):
        run_contacts(lm, ContactRunOptions(dt=0.003, t_end=0.01))


SCRIPT = '''
import kane
from kane import joints as J
from kane.model.collision import Box, HalfSpace
from kane.model.contact import ContactMaterial

simulation = {"t_end": 0.02, "dt": 0.002}


def build():
    s = kane.System("resting", gravity=(0, 0, -9.81))
    s.add_body("box", mass=3.0, inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "box", J.Free(), q0=[0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0])
    s.add_collision("box", Box((0.1, 0.1, 0.05)), name="block", material=ContactMaterial(0.5))
    s.add_collision("ground", HalfSpace((0.0, 0.0, 1.0), 0.0), name="floor")
    return s
'''


def test_a_script_with_add_collision_runs_by_contact_time_stepping(tmp_path):
    script = tmp_path / "resting.py"
    script.write_text(SCRIPT)
    traj = _simulate(tmp_path, script)
    assert traj.stats.method.startswith("contact time-stepping") and traj.n_samples == 11
    c = contact_series(traj)
    assert c.pairs == ("block|floor",)
    # at rest on the floor: the floor carries the weight (3 kg x g) and no friction; the box does not move
    np.testing.assert_allclose(c["normal_force"][1:, 0], 3.0 * G, rtol=1e-12)
    assert np.abs(np.hypot(c["friction_t1"][1:, 0], c["friction_t2"][1:, 0])).max() < 1e-9
    assert np.all(c.mode[1:, 0] == 1) and np.abs(traj.q - traj.q[0]).max() < 1e-12


def test_ctrl_c_stops_a_contact_run_with_its_file_closed_as_interrupted(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "pile.h5"
    proc = subprocess.Popen([sys.executable, "-m", "kane.cli", "simulate", str(EXAMPLES / "box_pile.toml"), "-o",
                             str(out), "--t-end", "100"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ}, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "pile.h5.partial").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # stepping
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    traj = kane.load_trajectory(out)
    assert traj.status == "interrupted: SIGINT" and traj.n_samples > 0  # written as it went
    assert traj.stats.n_steps == traj.n_samples - 1 and traj.stats.method.startswith("contact time-stepping")
    stop = [e for e in traj.events if e.kind == "stop"]
    assert len(stop) == 1 and stop[0].t == traj.t[-1] and np.array_equal(stop[0].data["q"], traj.q[-1])
