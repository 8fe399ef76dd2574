"""``kane realtime`` on a model with [[collision]] shapes (kane.realtime.contact_plant): the simulated hand pushes
a box across a table through the coupler's spring at 1 kHz, the contact stepped every 10 periods; the box stays
put while the coupler's force is below mu_s m g and slides once it is above."""

import h5py
import numpy as np
from click.testing import CliRunner

from kane.cli import main

MASS, MU_S, MU_K, G = 1.0, 0.5, 0.4, 9.81

BOX_ON_TABLE = f"""
[model]
name = "box_on_table"
gravity = [0, 0, -{G}]

[[bodies]]
name = "box"
mass = {MASS}
inertia = [0.004, 0.004, 0.006]

[[joints]]
name = "float"
parent = "ground"
child = "box"
type = "free"
coordinates = ["x", "y", "z", "e0", "e1", "e2", "e3"]
speed_names = ["w1", "w2", "w3", "v1", "v2", "v3"]
q0 = [0, 0, 0.05, 1, 0, 0, 0]
u0 = [0, 0, 0, 0, 0, 0]

[[collision]]
name = "block"
body = "box"
shape = "box"
half_extents = [0.1, 0.1, 0.05]
mu_static = {MU_S}
mu_kinetic = {MU_K}

[[collision]]
name = "table"
body = "ground"
shape = "halfspace"
mu_static = {MU_S}
mu_kinetic = {MU_K}

[realtime]
body = "box"                   # the hand pulls the box's centre along +x through the coupler's spring
rate = 1000.0
dynamics_every = 10            # a contact step every 10 periods (10 ms)
hand_path = "line"
hand_direction = [1, 0, 0]
hand_speed = 0.2
duration = 0.5
"""


def test_the_hand_pushes_the_box_once_the_force_exceeds_static_friction(tmp_path):
    model = tmp_path / "box_on_table.toml"
    model.write_text(BOX_ON_TABLE)
    out = tmp_path / "push.h5"
    res = CliRunner().invoke(main, ["realtime", str(model), "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "status: completed (contacts by time stepping, the dynamics every 10 periods" in res.output
    with h5py.File(out, "r") as f:
        t, q, force = f["t"][:], f["q"][:], f["force"][:]
        x_h, x_b = f["hand_position"][:], f["point_position"][:]
        v_h, v_b = f["hand_velocity"][:], f["point_velocity"][:]
    limit = MU_S * MASS * G  # the static friction the table holds at most [N]
    moved = np.abs(q[:, 0] - q[0, 0]) > 1e-9
    assert moved.any() and not moved[0]
    first = int(np.argmax(moved))
    # below the limit throughout: the box has not moved (it sticks exactly: no creep)
    below = np.flatnonzero(force[:, 0] < limit)
    assert below.size > 100 and not moved[below[below < first]].any()
    assert np.all(np.abs(q[:first, :3] - q[0, :3]) < 1e-12)
    # it starts to move only after the force (the coupler law's, from the hand's reference) passes mu_s m g, and
    # within two contact steps (20 ms: the mean force of a step, seen a step behind) of it doing so
    crossing = int(np.argmax(force[:, 0] > limit))
    assert force[crossing, 0] > limit and np.all(force[:crossing, 0] <= limit)
    assert crossing <= first <= crossing + 2 * 10 + 1
    assert q[-1, 0] - q[0, 0] > 1e-3  # it slides on
    assert np.abs(q[:, 2] - 0.05).max() < 1e-6  # on the table throughout
    # the force is the coupler law's with the default gains, K = 1000 N/m and B = K k T = 10 N s/m (below 20 N)
    assert np.max(np.abs(force)) < 20.0
    np.testing.assert_allclose(force, 1000.0 * (x_h - x_b) + 10.0 * (v_h - v_b), rtol=0, atol=1e-9)
