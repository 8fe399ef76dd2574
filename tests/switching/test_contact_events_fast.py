"""The compiled event-driven path (kane.switching.contact_events_fast) against the Python loop on the same scenes
(event kinds, contacts, modes and times, samples, forces) and against closed forms: a box sliding or sticking on a
tilted plane, a sphere thrown sliding and spinning, a box dropped flat bouncing to e^2 h; the scenes that do not
qualify run the Python loop with the reason recorded; the model file through the CLI records the compiled path."""

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.errors import ArgumentError, NotSupportedError
from kane.model.contact import ContactMaterial, ContactPoint
from kane.switching import (ContactOptions, ContactScheme, EventEngine, EventOptions, FreeBodies, PlaneContacts,
                            simulate_events)

G = 9.81
EVENTS = ContactOptions(ContactScheme.EVENT_DRIVEN)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def box_inertia(m, half):
    a, b, c = 2 * np.asarray(half, dtype=float)
    return m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def both(bodies, contacts, q0, u0, h, t_end):
    """The compiled and the Python runs of one scene, checked equal: events (kind, contact, modes; times to
    1e-9 s), samples (1e-9), per-contact records (modes equal, forces to 1e-8 of the weight)."""
    fast = simulate_events(bodies, contacts, q0, u0, h, t_end, EVENTS, events=EventOptions(engine="compiled"))
    slow = simulate_events(bodies, contacts, q0, u0, h, t_end, EVENTS, events=EventOptions(engine=EventEngine.PYTHON))
    assert (fast.engine, fast.engine_reason) == ("compiled", "")
    assert (slow.engine, slow.engine_reason) == ("python", "EventOptions.engine = python")
    assert [(e.kind, e.contact, e.modes) for e in fast.events] == [(e.kind, e.contact, e.modes) for e in slow.events]
    assert all(abs(a.t - b.t) < 1e-9 for a, b in zip(fast.events, slow.events))
    assert np.abs(fast.q - slow.q).max() < 1e-9 and np.abs(fast.u - slow.u).max() < 1e-9
    cf, cs = fast.contacts, slow.contacts
    assert np.array_equal(cf.step, cs.step) and cf.name == cs.name and np.array_equal(cf.mode, cs.mode)
    weight = G * bodies.masses.sum()
    assert np.abs(cf.normal_force - cs.normal_force).max(initial=0.0) < 1e-8 * weight
    assert np.abs(cf.friction_force - cs.friction_force).max(initial=0.0) < 1e-8 * weight
    assert np.abs(cf.slip_velocity - cs.slip_velocity).max(initial=0.0) < 1e-9
    return fast, slow


def tilted_box(theta, mu_s, mu_k, mass=2.0, half=(0.2, 0.1, 0.05)):
    """A box resting flat on the plane n . x = 0, n = (sin theta, 0, cos theta), under vertical gravity."""
    half = np.asarray(half)
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    bodies = FreeBodies(["box"], [mass], [box_inertia(mass, half)])
    contacts = PlaneContacts.of_shapes(bodies, boxes={"box": half}, normal=n, material=ContactMaterial(mu_s, mu_k))
    q0 = np.r_[half[2] * n, math.cos(theta / 2), 0.0, math.sin(theta / 2), 0.0]
    return bodies, contacts, q0


def test_box_on_a_tilted_plane_slides_with_coulomb_acceleration_and_sticks_below_atan_mu_s():
    mass, mu_s, mu_k = 2.0, 0.5, 0.4
    theta = 0.6  # tan 0.6 = 0.684 > mu_s: slides from rest
    bodies, contacts, q0 = tilted_box(theta, mu_s, mu_k, mass)
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    a = G * (math.sin(theta) - mu_k * math.cos(theta))
    for run in both(bodies, contacts, q0, np.zeros(6), 0.01, 0.3):
        assert run.events == () and np.all(run.contacts.mode == 2)
        assert np.abs((run.q[:, :3] - q0[:3]) @ down - a * run.t ** 2 / 2).max() < 1e-9
        assert np.abs(run.u[:, 3:] @ down - a * run.t).max() < 1e-9
        per_sample = np.bincount(run.contacts.step, run.contacts.normal_force)
        assert np.abs(per_sample - mass * G * math.cos(theta)).max() < 1e-9 * mass * G
        assert np.abs(np.linalg.norm(run.contacts.friction_force, axis=1) - mu_k * run.contacts.normal_force).max() \
            < 1e-9 * mass * G
    theta = 0.3  # tan 0.3 = 0.309 < mu_s: held by static friction on its four bottom corners
    bodies, contacts, q0 = tilted_box(theta, mu_s, mu_k, mass)
    for run in both(bodies, contacts, q0, np.zeros(6), 0.05, 0.3):
        assert run.events == () and np.all(run.contacts.mode == 1) and np.abs(run.q - q0).max() < 1e-12
        assert np.abs(np.bincount(run.contacts.step, run.contacts.normal_force) - mass * G * math.cos(theta)).max() \
            < 1e-9 * mass * G


def test_sphere_thrown_sliding_and_spinning_rolls_at_the_closed_form_time_on_both_paths():
    m, r, mu = 1.5, 0.1, 0.3
    bodies = FreeBodies(["ball"], [m], [0.4 * m * r * r * np.eye(3)])
    contacts = PlaneContacts.of_shapes(bodies, spheres={"ball": r}, material=ContactMaterial(mu))
    v0, w0 = 2.0, -5.0  # backspin: slip velocity v - r w_y = 2.5 m/s
    fast, slow = both(bodies, contacts, np.r_[0, 0, r, 1, 0, 0, 0.0], np.r_[0, w0, 0, v0, 0, 0], 0.01, 0.6)
    t_roll = 2 * (v0 - r * w0) / (7 * mu * G)
    for run in (fast, slow):
        assert [e.kind for e in run.events] == ["slip->stick"] and abs(run.events[0].t - t_roll) < 1e-8
        assert run.events[0].modes == (("plane|ball#0", "stick"),)
        after = run.t > t_roll
        assert np.abs(run.u[after, 3] - (5 * v0 + 2 * r * w0) / 7).max() < 1e-8
        assert np.abs(run.u[after, 3] - r * run.u[after, 1]).max() < 1e-8
        assert np.abs(run.u[~after, 3] - (v0 - mu * G * run.t[~after])).max() < 1e-9
    assert fast.iterations.sum() > 0


def test_box_dropped_flat_bounces_to_e_squared_h_with_the_python_loops_events():
    e, h, mass = 0.6, 0.2, 2.0
    half = np.array([0.2, 0.1, 0.05])
    bodies = FreeBodies(["box"], [mass], [box_inertia(mass, half)])
    contacts = PlaneContacts.of_shapes(bodies, boxes={"box": half}, material=ContactMaterial(0.5, restitution=e))
    fast, slow = both(bodies, contacts, np.r_[0, 0, half[2] + h, 1, 0, 0, 0.0], np.zeros(6), 0.01, 0.3)
    t_hit = math.sqrt(2 * h / G)
    for run in (fast, slow):
        assert run.events[0].kind == "impact" and abs(run.events[0].t - t_hit) < 1e-9
        flight = (run.t > t_hit) & (run.t < t_hit + 2 * e * math.sqrt(2 * G * h) / G)
        apex = run.q[flight, 2] - half[2] + run.u[flight, 5] ** 2 / (2 * G)
        assert flight.sum() >= 10 and np.abs(apex - e * e * h).max() < 1e-8


def test_scenes_that_do_not_qualify_run_the_python_loop_with_the_reason_recorded():
    mass, half = 2.0, np.array([0.2, 0.1, 0.05])
    ramped = FreeBodies(["box"], [mass], [box_inertia(mass, half)],
                        gravity=lambda t: G * np.array([math.sin(0.5 * t), 0.0, -math.cos(0.5 * t)]))
    scene = PlaneContacts.of_shapes(ramped, boxes={"box": half}, material=ContactMaterial(0.5, 0.4))
    q0 = np.r_[0, 0, half[2], 1, 0, 0, 0.0]
    run = simulate_events(ramped, scene, q0, np.zeros(6), 0.05, 0.1, EVENTS)
    assert (run.engine, run.engine_reason) == ("python", "gravity varies with time")
    bodies = FreeBodies(["box"], [mass], [box_inertia(mass, half)])

    def corners(q):  # a plain callable: the compiled path cannot see its geometry
        c, R = bodies.pose(q, "box")
        return [ContactPoint("ground", "box", "plane", "box", p * [1, 1, 0], p, np.array([0.0, 0, 1]), float(p[2]),
                             ContactMaterial(0.5)) for p in c + (np.array([[-1, -1, -1.0], [1, 1, -1]]) * half) @ R.T]

    run = simulate_events(bodies, corners, q0, np.zeros(6), 0.05, 0.1, EVENTS)
    assert run.engine == "python" and "not a PlaneContacts" in run.engine_reason
    assert np.abs(run.q - q0).max() < 1e-12  # at rest on its two corners' line
    with pytest.raises(NotSupportedError, match="engine = compiled, but contacts is a function"):
        simulate_events(bodies, corners, q0, np.zeros(6), 0.05, 0.1, EVENTS, events=EventOptions(engine="compiled"))
    with pytest.raises(ArgumentError, match="EventOptions: engine: expected one of auto, compiled"):
        EventOptions(engine="fast")


BOX_ON_BOX = """
[model]
name = "box_on_box"
gravity = [0, 0, -9.81]

[[bodies]]
name = "lower"
mass = 2.0
inertia = [0.01, 0.01, 0.01]

[[bodies]]
name = "upper"
mass = 1.0
inertia = [0.005, 0.005, 0.005]

[[joints]]
name = "j1"
parent = "ground"
child = "lower"
type = "free"
q0 = [0, 0, 0.5, 1, 0, 0, 0]

[[joints]]
name = "j2"
parent = "ground"
child = "upper"
type = "free"
q0 = [0, 0, 0.8, 1, 0, 0, 0]

[[collision]]
name = "a"
body = "lower"
shape = "box"
half_extents = [0.1, 0.1, 0.1]

[[collision]]
name = "b"
body = "upper"
shape = "box"
half_extents = [0.1, 0.1, 0.1]

[[collision]]
name = "floor"
body = "ground"
shape = "halfspace"

[simulation]
t_end = 0.02
dt = 0.01
"""


def test_a_model_with_a_box_box_pair_runs_the_python_loop_and_names_the_pair(tmp_path):
    from kane.io import load_model
    from kane.switching import ContactRunOptions, run_contacts

    path = tmp_path / "box_on_box.toml"
    path.write_text(BOX_ON_BOX)
    result = run_contacts(load_model(path), ContactRunOptions(scheme="event-driven", dt=0.01))
    assert result.run.engine == "python"
    assert result.run.engine_reason.startswith("pair a|b: Box against Box")
    t = result.run.t  # both in free fall, apart
    assert np.abs(result.run.q[:, [2, 9]] - (np.array([0.5, 0.8]) - G * t[:, None] ** 2 / 2)).max() < 1e-9


def test_the_model_file_event_driven_run_takes_the_compiled_path_from_the_cli(tmp_path):
    from kane.cli import main
    from kane.switching import contact_series

    out = tmp_path / "run.h5"
    done = CliRunner().invoke(main, ["simulate", str(EXAMPLES / "box_on_incline.toml"), "-o", str(out), "--t-end",
                                     "0.2", "--dt", "0.01", "--contact-scheme", "event-driven"])
    assert done.exit_code == 0, done.output
    traj = kane.load_trajectory(out)
    assert traj.stats.loop == "compiled" and traj.stats.loop_reason == ""
    theta, mass, mu_k = math.radians(30.0), 2.0, 0.25
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    a = G * (math.sin(theta) - mu_k * math.cos(theta))
    assert np.abs((traj.q[:, :3] - traj.q[0, :3]) @ down - a * traj.t ** 2 / 2).max() < 1e-9
    assert np.abs(traj.u[:, 3] - a * traj.t).max() < 1e-9  # v1 of the free joint: along the box's x = down
    c = contact_series(traj)
    assert np.all(c.mode[:, 0] == 2)
    assert np.abs(c["normal_force"][:, 0] - mass * G * math.cos(theta)).max() < 1e-9 * mass * G


def test_compiled_runs_from_several_threads_equal_the_serial_run():
    from concurrent.futures import ThreadPoolExecutor

    bodies, contacts, q0 = tilted_box(0.6, 0.5, 0.4)
    speeds = [np.r_[0, 0, 0, 0.1 * k, 0, 0] for k in range(6)]

    def run(u0):
        return simulate_events(bodies, contacts, q0, u0, 0.05, 0.2, EVENTS).q

    serial = [run(u0) for u0 in speeds]
    with ThreadPoolExecutor(3) as pool:
        threaded = list(pool.map(run, speeds))
    assert all(np.array_equal(a, b) for a, b in zip(serial, threaded))
    assert not np.array_equal(serial[0], serial[-1])


def test_a_segment_that_starts_at_the_end_samples_the_state_after_the_event():
    from kane.switching.contact_events import _Mode
    from kane.switching.contact_events_fast import compiled_scene, segment

    m, r = 1.5, 0.1
    bodies = FreeBodies(["ball"], [m], [0.4 * m * r * r * np.eye(3)])
    contacts = PlaneContacts.of_shapes(bodies, spheres={"ball": r}, material=ContactMaterial(0.3))
    grid = np.arange(5) * 0.25
    scene = compiled_scene(bodies, contacts, grid)
    y = np.r_[0.3, 0, r, 1, 0, 0, 0, 0, 2.0, 0, 2.0 * r, 0, 0]  # rolling: v = r w_y
    seg = segment(scene, grid[-1], y, {("plane|ball", 0): _Mode(1)}, 4, EventOptions(), 1e-6)
    assert seg.done and seg.t == 1.0 and seg.k_next == 5 and seg.calls == 0
    assert np.array_equal(scene.Y[4], y) and scene.NS[4, 0] == pytest.approx(m * G, rel=1e-12)
    assert np.abs(scene.FS[4, 0]).max() < 1e-12  # rolling at constant speed: no friction
