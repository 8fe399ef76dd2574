"""Velocity-level contact time stepping (kane.switching.contact_stepping) against closed-form results: a block on
an incline (stick, slide, a ramped angle), a sphere thrown sliding and spinning, a box bouncing with restitution,
energy and cones over random scenes, and the cone solver's local problem."""

import math
import pathlib
import sys

import numpy as np
import pytest

from kane.errors import ArgumentError, NotSupportedError
from kane.model.contact import ContactMaterial
from kane.switching.cone_solver import solve_cones
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_stepping import (MODES, ContactOptions, ContactScheme, contact_step,
                                             simulate_contacts)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _contact_scenes import G, box_inertia, plane_contacts, sphere_inertia, sphere_pairs, state  # noqa: E402

HALF = np.array([0.2, 0.1, 0.05])
MASS = 2.0


def incline(theta):
    """Gravity of an incline at angle theta [rad] (or a function of t) seen in the incline's axes: down the slope
    is +x, the plane is z = 0."""
    if callable(theta):
        return lambda t: G * np.array([math.sin(theta(t)), 0.0, -math.cos(theta(t))])
    return G * np.array([math.sin(theta), 0.0, -math.cos(theta)])


def block_run(gravity, material, t_end=0.5, h=1e-3):
    bodies = FreeBodies(["block"], [MASS], [box_inertia(MASS, HALF)], gravity)
    q0, u0 = state(((0.0, 0.0, HALF[2]), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    return simulate_contacts(bodies, plane_contacts(bodies, boxes={"block": HALF}, material=material), q0, u0, h,
                             t_end)


def test_block_on_an_incline_sticks_when_tan_theta_is_below_mu_static():
    material = ContactMaterial(mu_static=0.6, mu_kinetic=0.4)
    run = block_run(incline(math.atan(0.55)), material)
    assert run.scheme is ContactScheme.TIME_STEPPING and run.converged.all()
    assert np.abs(run.u).max() < 1e-12 and np.abs(run.q[:, 0:3] - run.q[0, 0:3]).max() < 1e-12
    assert set(run.contacts.mode.tolist()) == {MODES.index("stick")}
    # the contacts carry the weight: sum of normal forces m g cos(theta), friction m g sin(theta) up the slope
    step0 = run.contacts.step == 10
    assert abs(run.contacts.normal_force[step0].sum() - MASS * G * math.cos(math.atan(0.55))) < 1e-9
    friction = run.contacts.friction_force[step0].sum(axis=0)  # along (t1, t2) = (-y, x) for the normal +z
    assert np.abs(friction - [0.0, -MASS * G * math.sin(math.atan(0.55))]).max() < 1e-9


def test_block_on_a_steeper_incline_slides_with_kinetic_friction_exactly_per_step():
    material = ContactMaterial(mu_static=0.6, mu_kinetic=0.4)
    theta = math.atan(0.8)
    h = 1e-3
    run = block_run(incline(theta), material, t_end=0.5, h=h)
    a = G * (math.sin(theta) - 0.4 * math.cos(theta))
    assert np.abs(run.u[:, 3] - a * run.t).max() < 1e-9  # v_k = a t_k: velocity-level, constant forces
    x_ref = a * h * h * np.arange(run.t.size) * (np.arange(run.t.size) + 1) / 2  # x_k = h sum_j v_j (semi-implicit)
    assert np.abs(run.q[:, 0] - x_ref).max() < 1e-9
    assert np.abs(run.u[:, [0, 1, 2, 4, 5]]).max() < 1e-9 and np.abs(run.q[:, 2] - HALF[2]).max() < 1e-12
    assert set(run.contacts.mode.tolist()) == {MODES.index("slip")}
    slip = run.contacts.slip_velocity
    friction = run.contacts.friction_force
    # maximal dissipation: the friction force opposes the slip, on the cone's rim (mu_k N)
    cos = np.einsum("ki,ki->k", slip, friction) / np.linalg.norm(slip, axis=1) / np.linalg.norm(friction, axis=1)
    assert np.abs(cos + 1).max() < 1e-9
    assert np.abs(np.linalg.norm(friction, axis=1) - 0.4 * run.contacts.normal_force).max() < 1e-9


def test_ramped_incline_switches_from_stick_to_slip_in_the_step_the_angle_passes_atan_mu_static():
    material = ContactMaterial(mu_static=0.5, mu_kinetic=0.3)
    theta0, rate, h = 0.3, 0.4, 1e-3  # theta(t) = 0.3 + 0.4 t passes atan(0.5) = 0.46365 at t = 0.40912 s
    run = block_run(incline(lambda t: theta0 + rate * t), material, t_end=0.6, h=h)
    t_switch = (math.atan(0.5) - theta0) / rate
    k_first = int(np.nonzero(~(run.contacts.mode == MODES.index("stick")))[0][0])  # the first slipping record
    k_first = int(run.contacts.step[k_first])
    # the switch lands within one step of the analytic time (forces act at a step's start; at 0.1 step from the
    # threshold tan(theta) is 1e-4 from mu_s, where the solver's tolerance decides which side the step falls on)
    assert abs(run.t[k_first] - t_switch) < h
    assert np.abs(run.u[:k_first + 1]).max() < 1e-9 and np.abs(run.u[k_first + 1:, 3]).min() > 1e-4
    modes = run.contacts.mode
    assert (modes[run.contacts.step < k_first] == MODES.index("stick")).all()
    assert (modes[run.contacts.step >= k_first] == MODES.index("slip")).all()
    # while sliding, each step adds h g (sin theta(t_k) - mu_k cos theta(t_k)) exactly
    k = np.arange(k_first, run.t.size - 1)
    th = theta0 + rate * run.t[k]
    dv = h * G * (np.sin(th) - 0.3 * np.cos(th))
    assert np.abs(np.diff(run.u[:, 3])[k] - dv).max() < 1e-12


def sphere_roll(h, v0=3.0, w0=-5.0, r=0.1, mu=0.3, t_end=0.6):
    bodies = FreeBodies(["ball"], [1.5], [sphere_inertia(1.5, r)], (0.0, 0.0, -G))
    q0, u0 = state(((0.0, 0.0, r), (1.0, 0.0, 0.0, 0.0), (0.0, w0, 0.0), (v0, 0.0, 0.0)))
    return simulate_contacts(bodies, plane_contacts(bodies, spheres={"ball": r}, material=ContactMaterial(mu)),
                             q0, u0, h, t_end)


def test_sphere_thrown_sliding_and_spinning_reaches_pure_rolling_at_the_analytic_time():
    v0, w0, r, mu = 3.0, -5.0, 0.1, 0.3
    t_roll = 2 * (v0 - r * w0) / (7 * mu * G)  # 0.4854 s
    v_roll = (5 * v0 + 2 * r * w0) / 7
    errors = []
    for h in (2e-3, 1e-3, 5e-4):
        run = sphere_roll(h)
        modes = run.contacts.mode
        first_stick = run.contacts.step[np.nonzero(modes == MODES.index("stick"))[0][0]]
        assert (modes[:first_stick] == MODES.index("slip")).all() and (modes[first_stick:] == 1).all()
        assert 0.0 <= run.t[first_stick + 1] - t_roll < h  # the slip ends within the step that holds t_roll
        after = run.t > t_roll + h
        # momentum about the contact point is conserved by the friction impulses: v_roll exactly, then rolling
        assert np.abs(run.u[after, 3] - v_roll).max() < 1e-9
        assert np.abs(run.u[after, 3] - r * run.u[after, 1]).max() < 1e-9
        x_exact = v0 * t_roll - 0.5 * mu * G * t_roll ** 2 + v_roll * (0.6 - t_roll)
        errors.append(abs(run.q[-1, 0] - x_exact))
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.15) and errors[1] / errors[2] == pytest.approx(2.0,
                                                                                                            rel=0.15)


def test_box_dropped_flat_bounces_to_e_squared_h():
    e, drop = 0.6, 0.3
    heights = []
    for h in (1e-3, 5e-4):
        bodies = FreeBodies(["box"], [MASS], [box_inertia(MASS, HALF)], (0.0, 0.0, -G))
        q0, u0 = state(((0.0, 0.0, HALF[2] + drop), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
        material = ContactMaterial(0.5, restitution=e)
        run = simulate_contacts(bodies, plane_contacts(bodies, boxes={"box": HALF}, material=material), q0, u0, h,
                                0.7)
        bounce = np.nonzero(run.u[:, 5] > 0)[0][0]
        up = np.nonzero((run.u[:, 5] <= 0) & (np.arange(run.t.size) > bounce))[0][0]
        heights.append(run.q[bounce:up + 1, 2].max() - HALF[2])
        assert np.abs(run.u[:, [0, 1, 2, 3, 4]]).max() < 1e-9  # flat: no tilt, no drift (to the solver tolerance)
    v_impact = math.sqrt(2 * G * drop)
    for h, top in zip((1e-3, 5e-4), heights):
        assert abs(top - e * e * drop) < 2 * v_impact * h  # O(h): the impact is resolved at a step's start
    assert abs(heights[1] - e * e * drop) < abs(heights[0] - e * e * drop)


def random_scene(seed):
    """Seeded spheres and cubes (isotropic inertia) thrown onto the plane and onto each other."""
    rng = np.random.default_rng(seed)
    names, masses, inertias, spheres, cubes, parts = [], [], [], {}, {}, []
    for i in range(6):
        m = rng.uniform(0.5, 2.0)
        if i % 2 == 0:
            r = rng.uniform(0.05, 0.12)
            spheres[f"s{i}"], inertia = r, sphere_inertia(m, r)
        else:
            a = rng.uniform(0.04, 0.1)
            cubes[f"c{i}"], inertia = np.full(3, a), box_inertia(m, np.full(3, a))
        names.append(f"s{i}" if i % 2 == 0 else f"c{i}")
        masses.append(m)
        inertias.append(inertia)
        e = rng.normal(size=4)
        # spheres: s0 and s2 thrown at each other, s4 dropped onto s0; cubes in a row beside them
        centre = {0: (0.0, 0.0, 0.15), 2: (0.35, 0.0, 0.15), 4: (0.03, 0.02, 0.55)}.get(i, (0.3 * i, 0.5, 0.3))
        v = rng.normal(scale=0.3, size=3) + {0: (1.5, 0, 0), 2: (-1.5, 0, 0)}.get(i, (0, 0, 0))
        parts.append((np.array(centre) + rng.uniform(-0.01, 0.01, size=3), e / np.linalg.norm(e),
                      rng.normal(scale=3.0, size=3), v))
    bodies = FreeBodies(names, masses, inertias, (0.0, 0.0, -G))
    material = ContactMaterial(rng.uniform(0.2, 0.8), restitution=rng.uniform(0.0, 0.5))
    ground = plane_contacts(bodies, boxes=cubes, spheres=spheres, material=material)
    pairs = sphere_pairs(bodies, spheres, material, margin=1.0)
    return bodies, (lambda q: ground(q) + pairs(q)), state(*parts), material.mu_static


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_energy_never_increases_and_impulses_stay_in_their_cones_over_random_scenes(seed):
    bodies, contacts, (q0, u0), mu = random_scene(seed)
    run = simulate_contacts(bodies, contacts, q0, u0, 2e-3, 0.8)
    scale = np.abs(run.energy).max()
    assert np.diff(run.energy).max() < 1e-12 * scale
    assert run.energy[-1] < run.energy[0] - 0.1 * abs(run.energy[0])  # it did dissipate (impacts, sliding)
    c = run.contacts
    assert c.step.size > 100 and (c.normal_force >= 0).all()
    assert set(c.mode.tolist()) >= {MODES.index("stick"), MODES.index("slip")}
    between = np.array(["plane" not in name for name in c.name])
    assert (c.normal_force[between] > 0).any()  # the spheres hit each other too (1 to 4 impact steps a scene)
    radius = np.linalg.norm(c.friction_force, axis=1)
    assert (radius <= mu * c.normal_force * (1 + 1e-12) + 1e-15).all()


def test_cone_solver_matches_the_closed_form_single_contact_and_keeps_coulombs_law():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    W = A @ A.T + 0.1 * np.eye(3)
    for b, mu in ((np.array([-1.0, 0.0, 0.0]), 0.5), (np.array([-1.0, 2.0, -1.0]), 0.3),
                  (np.array([0.5, 1.0, 1.0]), 0.5), (np.array([-1.0, 0.01, 0.0]), 2.0)):
        sol = solve_cones(W, b, [mu])
        p, v = sol.impulse[0], sol.velocity[0]
        assert sol.converged and np.abs(v - (W @ p + b)).max() < 1e-10
        assert p[0] >= 0 and v[0] >= -1e-10 and abs(p[0] * v[0]) < 1e-10  # Signorini
        pt, vt = p[1:], v[1:]
        assert np.linalg.norm(pt) <= mu * p[0] * (1 + 1e-12) + 1e-15
        if p[0] > 0 and np.linalg.norm(vt) > 1e-8:  # slipping: on the rim, opposite the slip
            assert np.linalg.norm(pt) == pytest.approx(mu * p[0], rel=1e-9)
            assert abs(pt[0] * vt[1] - pt[1] * vt[0]) < 1e-9 * np.linalg.norm(vt) and pt @ vt < 0
    W = np.eye(3) + 0.1 * (A + A.T)
    p_stick = np.linalg.solve(W, [1.0, -0.01, 0.0])  # sticking: v = 0, p = -W^-1 b, inside the cone
    assert p_stick[0] > 0 and np.linalg.norm(p_stick[1:]) < 2.0 * p_stick[0]
    sol = solve_cones(W, np.array([-1.0, 0.01, 0.0]), [2.0])
    assert np.abs(sol.impulse[0] - p_stick).max() < 1e-10 and np.abs(sol.velocity).max() < 1e-10


def test_bad_input_and_the_event_driven_scheme_are_named():
    bodies = FreeBodies(["block"], [MASS], [box_inertia(MASS, HALF)])
    q0, u0 = state(((0.0, 0.0, HALF[2]), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    with pytest.raises(NotSupportedError, match="event-driven contact: not yet"):
        simulate_contacts(bodies, lambda q: [], q0, u0, 1e-3, 0.01, ContactOptions(ContactScheme.EVENT_DRIVEN))
    with pytest.raises(ArgumentError, match="scheme"):
        ContactOptions("implicit")
    with pytest.raises(ArgumentError, match="q0"):
        simulate_contacts(bodies, lambda q: [], q0[:3], u0, 1e-3, 0.01)
    with pytest.raises(NotSupportedError, match="point_jacobian"):
        contact_step(object(), lambda q: [], 0.0, q0, u0, 1e-3)
