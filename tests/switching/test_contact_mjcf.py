"""Contact time stepping against MuJoCo from ONE MJCF file (written here): kane imports it (kane.io.load_mjcf: the
free bodies, their geoms as collision shapes, kane.switching.contact_mjcf's FreeBodies adapter, coal's contact
points) and MuJoCo compiles it (elliptic cones, impratio 100, solver tolerance 1e-12, Euler, the same step). MuJoCo's
contact is soft (default solref 0.02 s, solimp 0.9-0.95), kane's hard. Measured (dt = 1 ms, MuJoCo 4.0.0):

* a block sliding 0.3 s down a plane tilted to tan(theta) = 0.8, mu = 0.4: kane = a T^2 / 2 + a h T / 2 (the
  semi-implicit step's offset) to 1e-9 (138.35 mm); MuJoCo slides 0.067 mm less; kane stays on the plane (to
  1e-12), MuJoCo's block pitches by 3.3e-4 (quaternion) and its centre is 0.168 mm further from the plane;
* a ball (r = 5 cm, mu = 0.5) thrown at 0.4 m/s onto a static box: kane ends rolling at 5/7 v0 (to 1e-9) on the top
  face (z = top + r to 1e-9); MuJoCo rolls 7.2 mm/s (2.5 %) slower, rests 0.365 mm lower and 0.99 mm behind.

The slide's first run also compiles the cone solver (numba): about 14 s of its 17 s on this shared 2-core VM.
"""

import math
import warnings

import numpy as np
import pytest

from kane.errors import ModelError
from kane.io.mjcf import MjcfWarning, parse_mjcf
from kane.switching.contact_mjcf import mjcf_contact_scene
from kane.switching.contact_stepping import simulate_contacts

mujoco = pytest.importorskip("mujoco")

DT, G = 1e-3, 9.81
OPTION = (f'<option timestep="{DT}" cone="elliptic" impratio="100" tolerance="1e-12" iterations="500" '
          'ls_iterations="100" integrator="Euler"/>')


def both(xml, T, qvel=None):
    """(kane's qpos, qvel, MuJoCo's qpos, qvel) after T [s] from the same MJCF text and the same start."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)  # undrawn world geoms
        mm = parse_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if qvel is not None:
        d.qvel[:] = qvel
    scene = mjcf_contact_scene(mm)
    np.testing.assert_allclose(scene.model.q0, m.qpos0, rtol=0, atol=1e-15)  # the same start
    q0, u0 = scene.state(d.qpos, d.qvel)
    np.testing.assert_allclose(np.concatenate(scene.qpos_qvel(q0, u0)), np.concatenate([d.qpos, d.qvel]), atol=1e-15)
    run = simulate_contacts(scene.bodies, scene.contacts, q0, u0, DT, T)
    for _ in range(int(round(T / DT))):
        mujoco.mj_step(m, d)
    return (*scene.qpos_qvel(run.q[-1], run.u[-1]), d.qpos.copy(), d.qvel.copy())


def test_block_sliding_down_a_tilted_plane():
    theta, mu, half, T = math.atan(0.8), 0.4, (0.2, 0.1, 0.05), 0.3
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])  # the plane's normal
    x0, z0 = (float(v) for v in n[[0, 2]] * half[2])
    xml = f"""<mujoco><compiler angle="radian"/>{OPTION}<worldbody>
      <geom name="ramp" type="plane" size="5 5 0.1" euler="0 {theta!r} 0" friction="{mu} 0 0"/>
      <body name="block" pos="{x0!r} 0 {z0!r}" euler="0 {theta!r} 0"><freejoint/>
        <geom name="brick" type="box" size="{half[0]} {half[1]} {half[2]}" mass="2" friction="{mu} 0 0"/>
      </body></worldbody></mujoco>"""
    qk, _, qm, _ = both(xml, T)
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])  # down the slope
    a = G * (math.sin(theta) - mu * math.cos(theta))
    s_kane, s_mj = ((q[:3] - n * half[2]) @ down for q in (qk, qm))
    assert s_kane == pytest.approx(a * T * T / 2 + a * DT * T / 2, abs=1e-9)
    assert abs(qk[:3] @ n - half[2]) < 1e-12 and np.abs(qk[3:7] - qm[3:7]).max() < 1e-3
    assert abs(s_mj - s_kane) < 2e-4  # measured 0.067 mm
    assert 0 < qm[:3] @ n - half[2] < 3e-4  # measured 0.168 mm: MuJoCo's block pitches (quaternion 3.3e-4 off)


def test_ball_thrown_onto_a_box_rolls_at_five_sevenths():
    r, v0, T = 0.05, 0.4, 0.4
    xml = f"""<mujoco>{OPTION}<worldbody>
      <body name="table" pos="0 0 0.2"><geom name="top" type="box" size="0.5 0.5 0.1" friction="0.5 0 0"/></body>
      <body name="ball" pos="-0.2 0 0.5"><freejoint/><geom name="ball" size="{r}" mass="0.3" friction="0.5 0 0"/>
      </body></worldbody></mujoco>"""
    qk, vk, qm, vm = both(xml, T, qvel=[v0, 0, 0, 0, 0, 0])
    assert vk[0] == pytest.approx(5 / 7 * v0, abs=1e-9) and vk[4] == pytest.approx(5 / 7 * v0 / r, abs=1e-7)
    assert qk[2] == pytest.approx(0.3 + r, abs=1e-9)
    assert 0 < vk[0] - vm[0] < 0.01  # measured 7.2 mm/s (2.5 %) slower: MuJoCo's soft contact dissipates rolling
    assert 0 < qk[2] - qm[2] < 5e-4  # measured 0.365 mm lower: its penetration
    assert abs(qm[0] - qk[0]) < 2e-3  # measured 0.99 mm behind


def test_scene_refuses_jointed_models_and_heavy_welded_parts():
    hinge = '<mujoco><worldbody><body name="arm"><joint name="elbow"/><geom size="0.1"/></body></worldbody></mujoco>'
    with pytest.raises(ModelError, match=r"joints \['elbow'\].*free bodies only"):
        mjcf_contact_scene(parse_mjcf(hinge))
    welded = ('<mujoco><worldbody><body name="a"><freejoint/><geom size="0.1"/><body name="b" pos="0.2 0 0">'
              '<geom size="0.1"/></body></body></worldbody></mujoco>')
    with pytest.raises(ModelError, match=r"body 'b' is welded below the free body 'a' and has mass"):
        mjcf_contact_scene(parse_mjcf(welded))
