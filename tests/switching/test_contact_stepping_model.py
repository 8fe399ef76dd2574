"""Model files on the compiled time-stepping path (kane.switching.contact_stepping_model): a model of free bodies
runs FreeBodies built by hand from the file's masses and inertias to round-off; a model that is not (a free
joint's frame off the ground's origin) runs the general loop with the reason recorded and still carries the
weight; the general loop and the compiled loop agree on the incline; a capsule (coal's pair) takes the compiled
step; `kane simulate` records the loop."""

import math
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import kane
from kane import joints as J
from kane.cli import main
from kane.io import load_model
from kane.io.model_file import LoadedModel
from kane.mechanics.collision import CollisionData
from kane.mechanics.collision_batch import contacts_batch
from kane.model.collision import Box, HalfSpace
from kane.model.contact import ContactMaterial
from kane.spatial import quaternion_to_rotation
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_run import ContactRunOptions, model_contact_problem, run_contacts, write_contact_run
from kane.switching.contact_stepping import ContactOptions, simulate_contacts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
G = 9.81


def test_the_pile_file_steps_as_free_bodies_built_by_hand():
    result = run_contacts(load_model(EXAMPLES / "box_pile.toml"), ContactRunOptions(t_end=0.12))
    run = result.run
    assert run.engine == "compiled loop" and run.engine_reason == ""
    # the same boxes by hand: m = 1 kg, half side h = 0.05 m, I = 2 m h^2 / 3 (examples/box_pile.toml)
    names, m, h = ("box1", "box2", "box3"), 1.0, 0.05
    free = FreeBodies(names, [m] * 3, [np.eye(3) * 2 * m * h * h / 3] * 3, (0.0, 0.0, -G))
    model = result.dynamics.equations.model
    data = CollisionData(model)

    def contacts(q):
        qb = q.reshape(-1, 7)
        return contacts_batch(model, data, (qb[:, 0:3], qb[:, 3:7]))

    q0 = run.q[0]
    u0 = np.zeros(18)  # the file's u0 (at rest)
    ref = simulate_contacts(free, contacts, q0, u0, 1e-3, 0.12, ContactOptions())
    assert np.abs(run.q - ref.q).max() < 1e-12
    # the run's speeds are the model's: v in body axes, v_world = R v_body
    R = quaternion_to_rotation(run.q.reshape(-1, 3, 7)[:, :, 3:7])
    v_world = np.einsum("kbij,kbj->kbi", R, run.u.reshape(-1, 3, 6)[:, :, 3:])
    assert np.abs(v_world - ref.u.reshape(-1, 3, 6)[:, :, 3:]).max() < 1e-12
    assert np.abs(run.u.reshape(-1, 3, 6)[:, :, :3] - ref.u.reshape(-1, 3, 6)[:, :, :3]).max() < 1e-12
    assert run.contacts.step.size > 0 and np.array_equal(run.contacts.mode, ref.contacts.mode)
    # every box has landed and the energy only went down
    assert np.diff(run.energy).max() <= 1e-9 * abs(run.energy[0]) and run.contacts.step.max() == 119


def _offset_box(parent_point):
    s = kane.System("offset", gravity=(0, 0, -G))
    s.add_body("box", mass=3.0, inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "box", J.Free(), parent_point=parent_point, q0=[0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0])
    s.add_collision("box", Box((0.1, 0.1, 0.05)), name="block", material=ContactMaterial(0.5))
    s.add_collision("ground", HalfSpace((0.0, 0.0, 1.0), 0.0), name="floor")
    return s


def test_a_free_joint_off_the_grounds_origin_runs_the_general_loop_and_says_why(tmp_path):
    loaded = LoadedModel.from_system(_offset_box((0.3, 0.0, 0.0)))
    result = run_contacts(loaded, ContactRunOptions(dt=2e-3, t_end=0.02))
    assert result.run.engine == "python" and "frames" in result.run.engine_reason
    stats = kane.load_trajectory(write_contact_run(result, tmp_path / "offset.h5")).stats
    assert stats.loop == "python" and stats.loop_reason == result.run.engine_reason
    # resting on the floor 0.3 m from the joint frame's origin: the floor carries the 3 kg, nothing moves
    np.testing.assert_allclose(result.outputs["block|floor.normal_force"][1:], 3.0 * G, rtol=1e-12)
    assert np.abs(result.outputs["block|floor.point_x"][1:] - 0.3).max() < 1e-12
    assert np.abs(result.run.q - result.run.q[0]).max() < 1e-12
    # at the origin the same box takes the compiled loop, with the same forces
    at_origin = run_contacts(LoadedModel.from_system(_offset_box((0.0, 0.0, 0.0))),
                             ContactRunOptions(dt=2e-3, t_end=0.02))
    assert at_origin.run.engine == "compiled loop"
    np.testing.assert_allclose(at_origin.outputs["block|floor.normal_force"][1:], 3.0 * G, rtol=1e-12)


def test_the_general_loop_and_the_compiled_step_slide_the_box_down_the_incline_alike():
    loaded = load_model(EXAMPLES / "box_on_incline.toml")
    fast = run_contacts(loaded, ContactRunOptions(t_end=0.05))
    assert fast.run.engine == "compiled loop"
    dyn = fast.dynamics
    params = dict(loaded.parameters)
    bodies, points = model_contact_problem(dyn.equations, params)
    q0, u0 = loaded.initial_state(dyn)
    general = simulate_contacts(dyn, points, q0, u0, 1e-3, 0.05, ContactOptions(), bodies=bodies, params=params)
    # a box sliding without turning: both free motions are exact, the paths agree to round-off
    assert np.abs(fast.run.q - general.q).max() < 1e-9 and np.abs(fast.run.u - general.u).max() < 1e-9
    theta, mu_k = math.radians(30.0), 0.25
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    s = fast.run.q[:, :3] @ down
    assert np.abs(np.diff(s, 2) / 1e-6 - G * (math.sin(theta) - mu_k * math.cos(theta))).max() < 1e-9


def test_kane_simulate_writes_the_compiled_steps_run_in_the_models_speeds(tmp_path):
    out = tmp_path / "pile.h5"
    done = CliRunner().invoke(main, ["simulate", str(EXAMPLES / "box_pile.toml"), "-o", str(out), "--t-end", "0.25"])
    assert done.exit_code == 0, done.output
    traj = kane.load_trajectory(out)
    # watched at every step (limits, progress, Ctrl-C): the compiled step; two blocks of 100 steps and the rest
    assert traj.stats.loop == "compiled step" and traj.n_samples == 251
    ref = run_contacts(load_model(EXAMPLES / "box_pile.toml"), ContactRunOptions(t_end=0.25)).run
    assert np.abs(traj.q - ref.q).max() < 1e-12 and np.abs(traj.u - ref.u).max() < 1e-12


def test_a_capsule_on_the_floor_takes_the_compiled_step_and_carries_its_weight():
    from kane.model.collision import Capsule

    s = kane.System("capsule", gravity=(0, 0, -G))
    s.add_body("rod", mass=2.0, inertia=(0.01, 0.01, 0.002))
    s.add_joint("ground", "rod", J.Free(), q0=[0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0])
    s.add_collision("rod", Capsule(0.05, 0.3), (((0, 0, 1), (0, 1, 0), (-1, 0, 0)), (0, 0, 0)), name="rod",
                    material=ContactMaterial(0.5))
    s.add_collision("ground", Box((1.0, 1.0, 0.1)), (np.eye(3), (0.0, 0.0, -0.1)), name="table")
    result = run_contacts(LoadedModel.from_system(s), ContactRunOptions(dt=2e-3, t_end=0.02))
    assert result.run.engine == "compiled step"  # capsule-box goes to coal: the step compiled, not the loop
    np.testing.assert_allclose(result.outputs["rod|table.normal_force"][2:], 2.0 * G, rtol=1e-9)
