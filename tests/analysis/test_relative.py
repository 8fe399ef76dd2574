"""Linearization on the configuration manifold about relative equilibria: the rolling disk example in its own
quaternion coordinates against the classical upright eigenvalues +-sqrt(4/5 (g/r - 3 w^2)) and stability change
w = sqrt(g / (3 r)) (API and ``kane linearize``), and against a second formulation (the Euler-angle disk) in a
steady turn; points that are no steady motion and bad quaternions are named."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.analysis import NotSteadyWarning, eigenvalue_sweep, linearize, steady_motion
from kane.cli import main
from kane.errors import KaneError
from kane.io import load_model

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _analysis_models import rolling_disk  # noqa: E402

DISK = HERE.parents[1] / "examples" / "rolling_disk.toml"
R, G = 0.4, 9.81  # the example's radius [m] and gravity [m/s^2]


@pytest.fixture(scope="module")
def disk():
    return load_model(DISK).derive()


@pytest.mark.parametrize("w", [1.0, 2.0, 5.0, 10.0])
def test_upright_disk_in_its_quaternions_has_the_classical_eigenvalues(disk, w):
    lin = linearize(disk, {}, {"w1": 0.0, "w2": w, "w3": 0.0})
    assert lin.steady and np.max(np.abs(lin.residual), initial=0.0) <= 1e-12
    assert set(lin.cyclic) == {"x", "y", "float.ry", "float.rz"}  # position, spin and heading
    assert [s.split(":")[0] for s in lin.symmetries] == ["float.turn_z", "float.spin_y"]
    assert dict(lin.frame_rates)["float.spin_y"] == pytest.approx(w, abs=1e-12)
    pair = np.sqrt(complex(0.8 * (G / R - 3 * w ** 2)))
    for lam in (lin.eigenvalues(reduced=True), lin.eigenvalues()):  # reduced, and the full tangent-space A
        big = lam[np.argsort(-np.abs(lam))[:2]]
        np.testing.assert_allclose(np.sort_complex(big), np.sort_complex(np.array([pair, -pair])), rtol=0,
                                   atol=1e-10)
        assert np.max(np.sort(np.abs(lam))[:-2]) < 1e-10  # no other nonzero eigenvalue


def test_the_sweep_finds_the_stability_change_through_the_api_and_the_cli(disk, tmp_path):
    w_c = np.sqrt(G / (3 * R))
    sw = eigenvalue_sweep(disk, "w2", np.linspace(0, 10, 21), {}, {"w1": 0.0, "w2": 0.0, "w3": 0.0})
    assert len(sw.crossings) == 1 and sw.crossings[0].direction == "stabilizing"
    assert abs(sw.crossings[0].value - w_c) < 1e-8
    plot = tmp_path / "disk.png"
    res = CliRunner().invoke(main, ["linearize", str(DISK), "--at", "w1=0", "--steady", "w3", "--sweep",
                                    "w2=0:10:21", "--plot", str(plot)])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("w2 = "))
    assert abs(float(line.split()[2].rstrip(":")) - w_c) < 1e-8 and "stabilizing" in line
    assert plot.stat().st_size > 5000
    res = CliRunner().invoke(main, ["linearize", str(DISK), "--at", "w1=0", "--steady", "w3"])
    assert res.exit_code == 0, res.output
    assert "relative equilibrium along float.spin_y' = 10 rad/s" in res.output
    eig = next(x for x in res.output.splitlines() if x.startswith("eigenvalues"))
    assert "+14.8452j" in eig and "3.556" not in eig


def test_a_steady_turn_in_quaternions_equals_the_euler_angle_disk(disk):
    """The same leaning, turning disk in a second formulation (heading, lean, spin angles; the Euler disk of
    _analysis_models): the quaternion model is at a relative equilibrium there, turning at the heading rate and
    spinning at the spin rate, and its reduced eigenvalues are the Euler model's."""
    euler = kane.derive(rolling_disk(r=R, m=1.5, g=G), dependent=["vx", "vy", "vz"])
    lean = 0.3
    sm = steady_motion(euler, {"z": R * np.cos(lean), "lean": lean}, {"w_heading": 1.2, "w_spin": 3.0}, ["w_spin"])
    psi_dot, phi_dot = 1.2, sm.values["w_spin"]
    q = {"z": R * np.cos(lean), "e0": np.cos(lean / 2), "e1": np.sin(lean / 2), "e2": 0.0, "e3": 0.0}
    u = {"w1": 0.0, "w2": psi_dot * np.sin(lean) + phi_dot, "w3": psi_dot * np.cos(lean)}  # R_x(lean)^T psi' z + phi' y
    lin = linearize(disk, q, u)
    assert lin.steady and np.max(np.abs(lin.residual)) <= 1e-12
    rates = dict(lin.frame_rates)
    assert rates["float.turn_z"] == pytest.approx(psi_dot, abs=1e-12)
    assert rates["float.spin_y"] == pytest.approx(phi_dot, abs=1e-12)
    mine, ref = lin.eigenvalues(reduced=True), sm.linearization.eigenvalues(reduced=True)
    np.testing.assert_allclose(np.sort_complex(mine), np.sort_complex(ref), rtol=0, atol=1e-9)
    assert np.max(np.abs(ref)) > 1.0  # a real oscillation, not only zeros
    # steady_motion finds the same relative equilibrium in quaternions: the spin rate that keeps the turn
    solved = steady_motion(disk, q, dict(u, w2=u["w2"] + 0.5), ["w2"])
    assert abs(solved.values["w2"] - u["w2"]) < 1e-9 and solved.linearization.steady


def test_a_point_that_is_no_steady_motion_is_not_called_one(disk):
    lean = 0.3  # leaning but not turning: it falls
    q = {"z": R * np.cos(lean), "e0": np.cos(lean / 2), "e1": np.sin(lean / 2), "e2": 0.0, "e3": 0.0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin = linearize(disk, q, {"w1": 0.0, "w2": 3.0, "w3": 0.0})
    assert not lin.steady and any(issubclass(w.category, NotSteadyWarning) for w in caught)
    assert "not a steady motion" in str(lin) and "w1'" in str(lin)  # the lean rate's rate is named
    at = [a for n, v in q.items() for a in ("--at", f"{n}={float(v)!r}")]
    res = CliRunner().invoke(main, ["linearize", str(DISK)] + at)
    assert "not a steady motion" in res.output and "relative equilibrium" not in res.output


def test_a_quaternion_that_is_no_rotation_is_named(disk):
    with pytest.raises(KaneError, match="joint 'float'.*unit quaternion"):
        linearize(disk, {"e0": 2.0}, {"w2": 1.0})
    res = CliRunner().invoke(main, ["linearize", str(DISK), "--at", "e0=0"])
    assert res.exit_code != 0 and "'float'" in res.output and "Traceback" not in res.output


def test_surface_contact_dynamics_are_refused_by_name():
    from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
    from kane.simulate.terrain import RollingSphereOnTerrain
    from kane.surfaces import NurbsSurface, Sphere

    floor = NurbsSurface(np.array([[[a, b, 0.0] for b in (-5, 5)] for a in (-5, 5)]), None, [0, 0, 1, 1],
                         [0, 0, 1, 1], 1, 1, name="floor")
    ball = RollingSphereOnTerrain(floor, 0.3, 2.0)
    s = kane.System("body", gravity=(0, 0, -9.81))
    s.add_body("body", mass=2.0, inertia=(0.05, 0.06, 0.07))
    s.add_joint("ground", "body", kane.joints.Free(), name="free")
    cart = RollingContactDynamics(s, [RollingContact("roll", "ground", floor, "body", Sphere(0.3), (0, 0, 0, 0))])
    for dyn, kind in ((ball, "RollingSphereOnTerrain"), (cart, "RollingContactDynamics")):
        with pytest.raises(KaneError, match=f"linearize: {kind} holds surface contacts .*no program of M, f"):
            linearize(dyn, np.zeros(7), np.zeros(6))
    with pytest.raises(KaneError, match="expected derived equations .*got str"):
        linearize("disk.toml", [0.0], [0.0])


def test_ignorable_coordinates_and_symmetries_named_by_the_user(disk):
    u = {"w1": 0.0, "w2": 5.0, "w3": 0.0}
    pair = np.sqrt(complex(0.8 * (G / R - 25 * 3)))
    lin = linearize(disk, {}, u, ignorable=["x", "y", "float.spin_y"])  # the heading kept in the states
    assert set(lin.cyclic) == {"x", "y", "float.ry"} and lin.symmetries == ("float.spin_y: rotation of 'float' "
                                                                            "about its body's y axis",)
    lam = lin.eigenvalues(reduced=True)
    assert len(lam) == 5 and np.min(np.abs(lam - pair)) < 1e-10 and np.min(np.abs(lam + pair)) < 1e-10
    assert np.sort(np.abs(lam))[2] < 1e-10  # the rest zero
    errors = {"float.rx": "the speeds' rates depend on it", "float.spin_x": "not a symmetry of these equations",
              "z": "it follows from the configuration constraints", "tilt": "unknown; expected a coordinate"}
    for name, why in errors.items():
        with pytest.raises(KaneError, match=f"ignorable '{name}': {why}"):
            linearize(disk, {}, u, ignorable=[name])
    euler = kane.derive(rolling_disk(r=R, m=1.5, g=G), dependent=["vx", "vy", "vz"])
    with pytest.raises(KaneError, match="ignorable 'heading': the rate of 'x', which is kept, depends on it"):
        linearize(euler, {"z": R}, {"w_spin": 5.0}, ignorable=["heading"])
    res = CliRunner().invoke(main, ["linearize", str(DISK), "--ignorable", "x,y,float.rx"])
    assert res.exit_code != 0 and "ignorable 'float.rx'" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["linearize", str(DISK), "--at", "w1=0", "--ignorable", "x,y,float.spin_y"])
    assert res.exit_code == 0 and "ignorable (left out of the eigenvalues): x, y, float.ry;" in res.output


def test_a_fresh_linearizer_gives_the_serial_results_from_8_threads(disk):
    from concurrent.futures import ThreadPoolExecutor

    from kane.analysis import Linearizer

    spins = np.linspace(0.5, 8.0, 16)
    one = Linearizer(disk)
    serial = [one.at({}, {"w2": w}, warn=False).eigenvalues(reduced=True) for w in spins]
    fresh = Linearizer(disk)  # its structure (cyclic coordinates, symmetries) is found on the first calls
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(lambda w: fresh.at({}, {"w2": w}, warn=False).eigenvalues(reduced=True), spins))
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_symmetries_are_those_of_the_parameter_set():
    """A free body under gravity g: rotations about the vertical are symmetries at any g, about the horizontal axes
    only at g = 0, where spinning about its largest principal axis is a relative equilibrium (Euler's equations:
    omega-block eigenvalues +-i s sqrt((I1 - I2)(I1 - I3) / (I2 I3)), the body-axis velocity's +-i s)."""
    s = kane.System("brick")
    g = s.parameter("g", 9.81)
    s.set_gravity((0, 0, -g))
    s.add_body("brick", mass=1.0, inertia=(0.4, 0.3, 0.2))
    s.add_joint("ground", "brick", kane.joints.Free(), name="free")
    eqs = kane.derive(s)
    spin = [2.0, 0, 0, 0, 0, 0]
    falling = linearize(eqs, np.r_[0, 0, 0, 1.0, 0, 0, 0], spin, warn=False)
    assert [x.split(":")[0] for x in falling.symmetries] == ["free.turn_z"] and not falling.steady
    lin = linearize(eqs, np.r_[0, 0, 0, 1.0, 0, 0, 0], spin, params={"g": 0.0})
    assert [x.split(":")[0] for x in lin.symmetries] == ["free.turn_x", "free.turn_y", "free.turn_z"]
    assert lin.steady and dict(lin.frame_rates)["free.turn_x"] == pytest.approx(2.0, abs=1e-12)
    lam = lin.eigenvalues(reduced=True)
    expected = 2.0 * np.sqrt((0.4 - 0.3) * (0.4 - 0.2) / (0.3 * 0.2))  # 1.1547
    assert np.max(np.abs(lam.real)) < 1e-10
    assert np.allclose(np.sort(np.abs(lam.imag[np.abs(lam) > 1e-9])), np.sort([expected, expected, 2.0, 2.0]),
                       rtol=0, atol=1e-10)
