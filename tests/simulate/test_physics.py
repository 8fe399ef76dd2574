"""Physics checks of whole simulations: Cloutier's planar chains (seed 001) and the rolling disk (seed 002)."""

import numpy as np
import pytest
from scipy.optimize import brentq

import kane
from kane import joints as J
from kane.simulate import Event, Method, simulate


def planar_chain(n, length=1.0, mass=1.0, width=0.1):
    """Seed 001's PRRRobot: n uniform flat rectangular links hinged about z, gravity 9.8 along -y."""
    s = kane.System(f"prr{n}", gravity=(0, -9.8, 0))
    parent, point = "ground", (0, 0, 0)
    for i in range(n):
        I = (mass * width**2 / 12, mass * length**2 / 12, mass * (length**2 + width**2) / 12)
        s.add_body(f"l{i}", mass=mass, com=(length / 2, 0, 0), inertia=I)
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent, point = f"l{i}", (length, 0, 0)
    return kane.derive(s).compile()


def test_seven_link_chain_keeps_energy_to_1e8_over_10_s():
    dyn = planar_chain(7)
    traj = simulate(dyn, (0.0, 10.0), np.zeros(7), np.zeros(7), method=Method.DOPRI5, rtol=1e-10, atol=1e-10,
                    output_dt=0.05)
    # started horizontal at rest the total energy is 0; measure the drift against the energy exchanged
    scale = np.max(np.abs([dyn.kinetic_energy(0.0, q, u) for q, u in zip(traj.q, traj.u)]))
    assert scale > 100.0  # the chain really falls and swings
    assert np.max(np.abs(traj.energy - traj.energy[0])) / scale < 1e-8


@pytest.mark.parametrize("n", [2, 5, 9, 14])
def test_cloutier_chains_conserve_energy_far_better_than_0p04_percent(n):
    dyn = planar_chain(n)
    traj = simulate(dyn, (0.0, 10.0), np.zeros(n), np.zeros(n), method=Method.DOPRI5, rtol=1e-8, atol=1e-10,
                    output_dt=0.1)
    scale = np.max([dyn.kinetic_energy(0.0, q, u) for q, u in zip(traj.q, traj.u)])
    assert np.max(np.abs(traj.energy - traj.energy[0])) / scale < 4e-4 / 100


# ---- the rolling disk --------------------------------------------------------------------------------------
R_DISK, M_DISK, G = 0.4, 1.5, 9.81


@pytest.fixture(scope="module")
def disk():
    s = kane.System("rolling_disk", gravity=(0, 0, -G))
    m, r = M_DISK, R_DISK
    s.add_body("disk", mass=m, inertia=(m * r**2 / 4, m * r**2 / 2, m * r**2 / 4))
    s.add_joint("ground", "disk", J.Free(), coordinates=["x", "y", "z", "e0", "e1", "e2", "e3"],
                speeds=["w1", "w2", "w3", "v1", "v2", "v3"])
    s.add_rolling_disk("contact", "disk", radius=r, axis=(0, 1, 0))
    return kane.derive(s, dependent=["v1", "v2", "v3"]).compile()


def _leaning(lean):
    """Configuration of the disk leaning by ``lean`` about the ground x axis, its contact point at the origin."""
    e = np.array([np.cos(lean / 2), np.sin(lean / 2), 0.0, 0.0])
    return np.concatenate([[0.0, -R_DISK * np.sin(lean), R_DISK * np.cos(lean)], e])


def _axis_z(q):
    w, x, y, z = q[3:7]
    return 2 * (y * z + w * x)  # z component of the disk axis (body y) in ground axes: sin(lean)


def _heading(q):
    w, x, y, z = q[3:7]
    ax, ay = 2 * (x * y - w * z), 1 - 2 * (x * x + z * z)
    return np.arctan2(ay, ax)


@pytest.mark.parametrize("factor, stable", [(1.15, True), (1.05, True), (0.9, False), (0.8, False)])
def test_upright_rolling_disk_is_stable_above_omega2_g_over_3r(disk, factor, stable):
    spin = factor * np.sqrt(G / (3 * R_DISK))
    q0, w0 = _leaning(0.0), np.array([0.05, spin, 0.0])  # a small lean rate disturbs the upright roll
    fall = Event("fallen", lambda t, q, u: abs(_axis_z(q)) - 0.6, direction=1, terminal=True)
    traj = simulate(disk, (0.0, 12.0), q0, w0, rtol=1e-9, atol=1e-11, output_dt=0.02, events=[fall])
    lean = np.abs([_axis_z(q) for q in traj.q])
    if stable:  # the lean stays near its small initial disturbance
        assert traj.t[-1] == pytest.approx(12.0) and lean.max() < 0.05
    else:  # the lean grows until the disk falls (or nearly so within the run, close to the threshold)
        assert lean.max() > 0.3


def test_disk_set_in_steady_turning_keeps_its_turning_rate(disk):
    lean0, yaw_rate = 0.3, 1.2

    def state(spin):
        R = np.array([[1, 0, 0], [0, np.cos(lean0), -np.sin(lean0)], [0, np.sin(lean0), np.cos(lean0)]])
        w_body = R.T @ np.array([0.0, 0.0, yaw_rate]) + np.array([0.0, spin, 0.0])
        return _leaning(lean0), w_body

    def lean_after(spin, T=0.25):
        q0, w0 = state(spin)
        traj = simulate(disk, (0.0, T), q0, w0, rtol=1e-11, atol=1e-12)
        return np.arcsin(_axis_z(traj.q[-1])) - lean0

    spin = brentq(lean_after, -40.0, -3.0, xtol=1e-12)  # the spin that keeps the lean (found by shooting)
    q0, w0 = state(spin)
    traj = simulate(disk, (0.0, 5.0), q0, w0, rtol=1e-11, atol=1e-12, output_dt=0.05)
    lean = np.arcsin([_axis_z(q) for q in traj.q])
    heading = np.unwrap([_heading(q) for q in traj.q])
    rate = np.diff(heading) / np.diff(traj.t)
    assert np.abs(lean - lean0).max() < 1e-5
    assert np.abs(rate - rate.mean()).max() < 1e-4 * abs(rate.mean())
    assert rate.mean() == pytest.approx(yaw_rate, rel=1e-4)
