"""Contact time stepping against MuJoCo on the same scenes (MJCF written here; elliptic cones, impratio 100 so that
friction is nearly hard, solver tolerance 1e-12, Euler integrator, the same time step): a block sliding down an
incline, a block resting below the friction angle, a box dropped tilted that comes to rest. MuJoCo's contacts are
soft (default solref 0.02 s, solimp 0.9-0.95): a resting box sinks by about m g / k and a sticking one creeps;
kane's are hard. The measured differences (dt = 0.5 ms, MuJoCo 4.0.0):

* sliding 0.5 s down tan(theta) = 0.8 with mu = 0.4: kane and MuJoCo both within 0.4 mm of a T^2 / 2 = 383.0 mm
  (kane +0.383 mm = a h T / 2, the semi-implicit step's offset; MuJoCo +0.365 mm), 0.02 mm apart;
* resting at tan(theta) = 0.3 < mu = 0.4 for 0.5 s: kane moves 0 (to 1e-12 m), MuJoCo creeps 0.019 mm;
* the tilted drop's resting pose: both flat (tilt < 1e-6 rad), MuJoCo 0.108 mm lower (its penetration), the
  landing slides the box 14.12 mm (kane) and 14.50 mm (MuJoCo) sideways: 0.4 mm apart.
"""

import math
import pathlib
import sys

import numpy as np
import pytest

from kane.model.contact import ContactMaterial
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_stepping import simulate_contacts

mujoco = pytest.importorskip("mujoco")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _contact_scenes import G, box_inertia, plane_contacts, state  # noqa: E402

HALF = np.array([0.2, 0.1, 0.05])
MASS, DT = 2.0, 5e-4


def mjcf(gravity, mu, z0, quat=(1.0, 0.0, 0.0, 0.0)):
    """The box on a plane as MJCF: elliptic cones, impratio 100, tight solver, Euler (as kane's step)."""
    g = " ".join(f"{x:.17g}" for x in gravity)
    return f"""<mujoco>
  <option timestep="{DT}" cone="elliptic" impratio="100" tolerance="1e-12" iterations="500" ls_iterations="100"
          gravity="{g}" integrator="Euler"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1" friction="{mu} 0 0"/>
    <body pos="0 0 {z0}" quat="{' '.join(f'{x:.17g}' for x in quat)}">
      <freejoint/>
      <geom type="box" size="{HALF[0]} {HALF[1]} {HALF[2]}" mass="{MASS}" friction="{mu} 0 0"/>
    </body>
  </worldbody>
</mujoco>"""


def mujoco_run(gravity, mu, z0, t_end, quat=(1.0, 0.0, 0.0, 0.0)):
    model = mujoco.MjModel.from_xml_string(mjcf(gravity, mu, z0, quat))
    assert np.allclose(model.body_inertia[1], np.diag(box_inertia(MASS, HALF)))  # the same body
    data = mujoco.MjData(model)
    for _ in range(int(round(t_end / DT))):
        mujoco.mj_step(model, data)
    return data.qpos.copy()


def kane_run(gravity, mu, z0, t_end, quat=(1.0, 0.0, 0.0, 0.0)):
    bodies = FreeBodies(["box"], [MASS], [box_inertia(MASS, HALF)], gravity)
    q0, u0 = state(((0.0, 0.0, z0), quat, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    contacts = plane_contacts(bodies, boxes={"box": HALF}, material=ContactMaterial(mu))
    return simulate_contacts(bodies, contacts, q0, u0, DT, t_end).q[-1]


def incline(tan_theta):
    theta = math.atan(tan_theta)
    return theta, G * np.array([math.sin(theta), 0.0, -math.cos(theta)])


def test_sliding_block_distance_agrees_with_mujoco_and_the_closed_form():
    theta, gravity = incline(0.8)
    T, mu = 0.5, 0.4
    exact = 0.5 * G * (math.sin(theta) - mu * math.cos(theta)) * T * T
    x_kane = kane_run(gravity, mu, HALF[2], T)[0]
    x_mj = mujoco_run(gravity, mu, HALF[2], T)[0]
    a = G * (math.sin(theta) - mu * math.cos(theta))
    assert x_kane - exact == pytest.approx(a * DT * T / 2, abs=1e-9)  # the semi-implicit step's offset, exactly
    assert abs(x_mj - exact) < 5e-4  # measured +0.365 mm: MuJoCo's own O(dt) and soft-contact difference
    assert abs(x_kane - x_mj) < 1e-4  # measured 0.02 mm


def test_block_below_the_friction_angle_rests_where_mujoco_creeps_a_little():
    _, gravity = incline(0.3)
    q_kane = kane_run(gravity, 0.4, HALF[2], 0.5)
    q_mj = mujoco_run(gravity, 0.4, HALF[2], 0.5)
    assert abs(q_kane[0]) < 1e-12 and abs(q_kane[2] - HALF[2]) < 1e-12
    assert 0 < q_mj[0] < 1e-4  # measured 0.019 mm of creep (soft elliptic cone, impratio 100)
    assert 0 < HALF[2] - q_mj[2] < 2e-4  # measured 0.103 mm of penetration


def test_tilted_drop_comes_to_the_same_resting_pose_as_mujoco():
    tilt = 0.3
    quat = (math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0)
    q_kane = kane_run((0.0, 0.0, -G), 0.5, 0.1, 1.0, quat)
    q_mj = mujoco_run((0.0, 0.0, -G), 0.5, 0.1, 1.0, quat)
    for q in (q_kane, q_mj):
        assert abs(abs(q[3]) - 1.0) < 1e-12  # flat on a face: the identity rotation, to 1e-6 rad
        assert np.abs(q[4:7]).max() < 1e-6
    assert abs(q_kane[2] - HALF[2]) < 1e-8  # kane: on the plane (hard contact)
    assert 0 < HALF[2] - q_mj[2] < 2e-4  # measured 0.108 mm below: MuJoCo's soft penetration
    assert abs(q_kane[1] - q_mj[1]) < 1e-3 and q_kane[1] > 0.01  # the landing slide, measured 14.12 vs 14.50 mm
    assert abs(q_kane[0]) < 1e-8 and abs(q_mj[0]) < 1e-8
