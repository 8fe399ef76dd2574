"""The gyroscopic term of the contact time stepping (kane.switching.contact_bodies.free_velocities, the implicit
midpoint rule of Euler's equations): no kinetic energy gained for any inertia, second order against scipy's
integration of Euler's equations, and the energy of boxes of random proportions never increasing, without contact
and on the plane, on the general and the compiled path."""

import pathlib
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from kane.model.contact import ContactMaterial
from kane.switching.cone_solver import ConeSolverOptions
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_stepping import ContactOptions, simulate_contacts

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _contact_scenes import box_inertia, plane_contacts, state  # noqa: E402
from test_contact_fast import as_batch  # noqa: E402


def random_boxes(seed, n=4, height=0.3):
    """n boxes of random proportions (half extents 0.02 to 0.12 m), orientations and spins (seeded)."""
    rng = np.random.default_rng(seed)
    names, masses, inertias, halves, parts = [], [], [], {}, []
    for i in range(n):
        half = rng.uniform(0.02, 0.12, size=3)
        m = rng.uniform(0.5, 2.0)
        names.append(f"b{i}")
        masses.append(m)
        inertias.append(box_inertia(m, half))
        halves[f"b{i}"] = half
        e = rng.normal(size=4)
        parts.append(((0.4 * i, 0.0, height + rng.uniform(0.0, 0.1)), e / np.linalg.norm(e),
                      rng.normal(scale=8.0, size=3), rng.normal(scale=0.5, size=3)))
    return FreeBodies(names, masses, inertias), halves, state(*parts)


def kinetic_rotation(bodies, u):
    w = u.reshape(-1, 6)[:, 0:3]
    return 0.5 * np.einsum("bi,bij,bj->b", w, bodies.inertias, w)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_free_step_keeps_kinetic_energy_and_body_momentum_where_the_explicit_term_gains(seed):
    bodies, _, (q, u) = random_boxes(seed)
    h = 1e-2
    u_free = bodies.free_velocity(0.0, q, u, h)
    w, w_free = u.reshape(-1, 6)[:, 0:3], u_free.reshape(-1, 6)[:, 0:3]
    # omega+^T I omega+ = omega^T I omega and |I omega+| = |I omega| per body, to round-off
    np.testing.assert_allclose(kinetic_rotation(bodies, u_free), kinetic_rotation(bodies, u), rtol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(np.einsum("bij,bj->bi", bodies.inertias, w_free), axis=1),
                               np.linalg.norm(np.einsum("bij,bj->bi", bodies.inertias, w), axis=1), rtol=1e-13)
    # the midpoint equation holds: I (omega+ - omega) = -h omega_m x I omega_m
    mid = 0.5 * (w + w_free)
    lhs = np.einsum("bij,bj->bi", bodies.inertias, w_free - w)
    rhs = -h * np.cross(mid, np.einsum("bij,bj->bi", bodies.inertias, mid))
    np.testing.assert_allclose(lhs, rhs, rtol=0, atol=1e-14 * np.abs(rhs).max())
    # the explicit term u + h M^-1 f (the former free step) gains kinetic energy: this test can tell them apart
    explicit = u + h * bodies.udot(0.0, q, u)
    assert (kinetic_rotation(bodies, explicit) - kinetic_rotation(bodies, u)).max() > 1e-6
    np.testing.assert_allclose(u_free.reshape(-1, 6)[:, 3:6], u.reshape(-1, 6)[:, 3:6] + h * bodies.gravity(0.0),
                               rtol=0, atol=1e-15)


def test_the_spin_of_a_free_box_converges_at_second_order_to_eulers_equations():
    bodies, _, (q, u) = random_boxes(3, n=1)
    I = bodies.inertias[0]
    w0 = u[0:3]

    def euler(t, w):
        return np.linalg.solve(I, -np.cross(w, I @ w))

    t_end = 0.5
    ref = solve_ivp(euler, (0.0, t_end), w0, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    errors = []
    for h in (2e-3, 1e-3):
        run = simulate_contacts(bodies, lambda q: [], q, u, h, t_end)
        errors.append(np.abs(run.u[-1, 0:3] - ref).max())
        assert np.abs(np.diff(run.energy)).max() > 0 and np.diff(run.energy).max() < 0  # gravity's h^2 loss only
    assert errors[0] < 1e-2 * np.abs(w0).max()
    assert 3.6 < errors[0] / errors[1] < 4.4  # second order


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_energy_of_boxes_of_random_proportions_never_increases_on_the_plane_on_both_paths(seed):
    bodies, halves, (q0, u0) = random_boxes(seed, n=3, height=0.15)
    material = ContactMaterial(0.5, restitution=0.3 * (seed % 2))
    general = plane_contacts(bodies, boxes=halves, material=material)
    empty = as_batch(general(np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], len(halves))), bodies.names)

    def batched(q):
        points = general(q)
        return as_batch(points, bodies.names) if points else empty.take(np.zeros(0, dtype=np.int64))

    options = ContactOptions(solver=ConeSolverOptions(max_iterations=500))  # a box on 4 corners: slow at 1e-12
    runs = [simulate_contacts(bodies, contacts, q0, u0, 1e-3, 0.4, options) for contacts in (general, batched)]
    for run in runs:
        scale = np.abs(run.energy).max()
        assert np.diff(run.energy).max() < 1e-12 * scale
        assert run.contacts.step.size > 200 and run.converged.mean() > 0.9
        rotation = kinetic_rotation(bodies, run.u[-1]).sum()
        assert run.energy[-1] < run.energy[0] - rotation  # the contacts dissipated (impacts, sliding)
    assert isinstance(runs[1].contacts.name, tuple) and runs[1].contacts.name[:50] == runs[0].contacts.name[:50]
