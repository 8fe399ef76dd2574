"""The tutorials of the documentation site run as a reader would copy them (every ```python block of a page, in
order, in one namespace, in a fresh directory), and each gets a number checked against an independent reference:
the pendulum's period against the small-angle formula with its first amplitude correction, the shopping cart's
no-slip constraint and kinetic energy from numerically differentiated positions, the bicycle's weave and capsize
speeds against Meijaard et al. (2007), the UR5 against Pinocchio, the haptic wall's force against three springs in
series, the sweep's largest speeds against energy conservation, the box on the incline against Coulomb's law."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tutorial_pages import DOCS, python_blocks, run_page  # noqa: E402

TUTORIALS = DOCS / "tutorials"
PAGES = ("pendulum", "shopping_cart", "bicycle", "ur5_pinocchio", "haptic_loop", "dask_sweep", "contact")


@pytest.fixture(autouse=True)
def _agg_backend():
    import matplotlib

    matplotlib.use("Agg")


def _run(name, tmp_path):
    return run_page(TUTORIALS / f"{name}.md", tmp_path)


def test_every_tutorial_page_is_tested_and_in_the_toctree():
    pages = sorted(p.stem for p in TUTORIALS.glob("*.md") if p.stem != "index")
    assert pages == sorted(PAGES)
    index = (TUTORIALS / "index.md").read_text()
    assert all(f"\n{name}\n" in index for name in PAGES)
    assert all(len(python_blocks(TUTORIALS / f"{name}.md")) >= 3 for name in PAGES)


def test_the_pendulum_period_is_the_small_angle_period_corrected_for_amplitude(tmp_path):
    ns = _run("pendulum", tmp_path)
    # T = 2 pi sqrt(I_O / (m g d)) (1 + theta0^2 / 16 + ...), I_O = 0.02 + 1 * 0.5^2 kg m^2, m g d = 9.81 * 0.5 N m
    T0 = 2 * np.pi * np.sqrt(0.27 / (9.81 * 0.5))
    assert ns["period_small_angle"] == pytest.approx(T0, rel=1e-15)
    assert ns["period"] == pytest.approx(T0 * (1 + 0.05**2 / 16), rel=1e-5)
    assert ns["period"] != pytest.approx(T0, rel=1e-4)  # the amplitude correction (1.6e-4) is seen
    assert (tmp_path / "pendulum.png").stat().st_size > 10_000


def test_the_shopping_cart_rolls_without_slip_and_its_energy_is_the_hand_computed_one(tmp_path):
    ns = _run("shopping_cart", tmp_path)
    traj, forward = ns["traj"], ns["forward"]
    assert traj.status == "completed" and traj.t[-1] == pytest.approx(8.0)
    assert forward.max() > 0.5  # the cart moves ...
    assert np.abs(ns["sideways"]).max() < 1e-5 * forward.max()  # ... and P1 never slides along its axle
    kinetic, energy = ns["kinetic"][1:-1], traj.energy[1:-1]
    assert energy.max() > 1.0
    assert np.abs(kinetic - energy).max() < 1e-4 * energy.max()


def test_the_bicycle_is_self_stable_between_the_benchmark_weave_and_capsize_speeds(tmp_path):
    ns = _run("bicycle", tmp_path)
    # Meijaard, Papadopoulos, Ruina & Schwab (2007), Table 2 [m/s]
    assert ns["weave"] == pytest.approx(4.292382, abs=1e-6)
    assert ns["capsize"] == pytest.approx(6.024262, abs=1e-6)
    assert [c.direction for c in ns["sweep"].crossings] == ["stabilizing", "destabilizing"]
    assert (tmp_path / "bicycle_eigenvalues.png").is_file()


def test_the_ur5_agrees_with_pinocchio(tmp_path):
    pytest.importorskip("pinocchio")
    ns = _run("ur5_pinocchio", tmp_path)
    M_pin = ns["M_pin"]
    assert M_pin.shape == (6, 6) and np.all(np.linalg.eigvalsh(M_pin) > 0)
    np.testing.assert_allclose(ns["M_kane"], M_pin, rtol=0, atol=1e-12 * np.abs(M_pin).max())
    scale = np.abs(ns["a_pin"]).max()
    assert scale > 1.0  # the arm falls
    np.testing.assert_allclose(ns["a_kane"], ns["a_pin"], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(ns["a_aba"], ns["a_pin"], rtol=0, atol=1e-10 * scale)


def test_the_haptic_wall_pushes_back_as_three_springs_in_series(tmp_path):
    ns = _run("haptic_loop", tmp_path)
    result = ns["result"]
    assert result.status == "completed" and result.saturated == 0 and result.deadlines.periods == 200
    # 2 cm of the hand's target into the wall, three springs in series: 0.02 / (1/2000 + 1/2e4 + 1/1e5) N
    assert ns["force"] == pytest.approx(0.02 / (1 / 2000 + 1 / 2e4 + 1 / 1e5), rel=1e-3)
    assert (tmp_path / "wall.h5").is_file()


def test_the_sweep_on_dask_gives_the_largest_speeds_of_energy_conservation(tmp_path):
    ns = _run("dask_sweep", tmp_path)
    assert (ns["result"].done, ns["result"].failed) == (4, 0)
    assert (ns["again"].done, ns["again"].skipped) == (0, 4)
    np.testing.assert_allclose(ns["theta0"], [0.2, 0.4, 0.6, 0.8], rtol=1e-12)
    # at the bottom of the swing: w = sqrt(2 g (1 - cos theta0) / L), L = 1 m
    np.testing.assert_allclose(ns["w_max"], np.sqrt(2 * 9.81 * (1 - np.cos([0.2, 0.4, 0.6, 0.8]))), rtol=1e-5)


def test_the_box_slides_by_coulombs_law_sticks_below_atan_mu_s_and_the_pile_loses_energy(tmp_path):
    ns = _run("contact", tmp_path)
    g, m, mu_k = 9.81, 2.0, 0.25
    theta, gentle = np.radians(30.0), np.radians(10.0)
    # sliding: a = g (sin theta - mu_k cos theta) at every step, N = m g cos theta, friction mu_k N, mode slip
    np.testing.assert_allclose(ns["acceleration"], g * (np.sin(theta) - mu_k * np.cos(theta)), rtol=0, atol=1e-9)
    # N to the solver's tolerance (velocities to 1e-12 of the free velocity; 4 corners share N)
    np.testing.assert_allclose(ns["normal_force"][1:], m * g * np.cos(theta), rtol=1e-10)
    assert np.all(ns["mode"][1:] == 2) and ns["run"].engine.startswith("compiled")
    # held: tan(10 deg) = 0.18 < mu_s = 0.3, the friction is the constraint force m g sin theta
    assert ns["moved"] < 1e-12 and ns["held"].scheme.value == "event-driven"
    np.testing.assert_allclose(ns["friction"][1:], m * g * np.sin(gentle), rtol=1e-9)
    # the pile: no step gains energy; boxes fell, so some was lost
    energy = ns["energy"]
    assert np.diff(energy).max() <= 1e-9 * abs(energy[0]) and energy[-1] < energy[0] - 0.1
    assert (tmp_path / "pile.png").stat().st_size > 10_000
