"""The event-driven contact scheme (kane.switching.contact_events) on seeded random scenes: spheres dropped and
thrown on a plane never gain energy between samples and keep every force in its cone; Painleve's spinning rod
beyond the critical friction has two consistent modes with different accelerations (kind "several"). The tumbling
boxes of :func:`tumbling_box` are run by bench/bench_contact_event_drops.py (not every seed comes to rest yet)."""

import math
import pathlib
import sys

import numpy as np
import pytest

from kane.model.contact import ContactMaterial
from kane.switching import (ContactInconsistencyError, ContactOptions, ContactScheme, FreeBodies,
                            simulate_contacts)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _contact_scenes import box_inertia, plane_contacts, sphere_inertia  # noqa: E402
from test_contact_events import check_energy_and_cones, sliding_rod  # noqa: E402

EVENTS = ContactOptions(ContactScheme.EVENT_DRIVEN)
HALF = np.array([0.1, 0.07, 0.05])


def tumbling_box(seed, mu=0.5, e=0.3):
    """A box of random orientation, spin and sideways speed, its centre 0.1 m above the height of its farthest
    corner; every corner listed at every configuration (a stable order)."""
    rng = np.random.default_rng(seed)
    bodies = FreeBodies(["box"], [1.0], [box_inertia(1.0, HALF)])
    quat = rng.normal(size=4)
    q0 = np.r_[0.0, 0.0, 0.1 + np.linalg.norm(HALF), quat / np.linalg.norm(quat)]
    u0 = np.r_[rng.normal(scale=3.0, size=3), rng.normal(scale=0.3, size=2), 0.0]
    contacts = plane_contacts(bodies, boxes={"box": HALF}, material=ContactMaterial(mu, restitution=e), margin=1.0)
    return bodies, contacts, q0, u0


def thrown_scene(seed):
    """Two spheres dropped from random heights with random speeds along the plane, spins, friction and restitution."""
    rng = np.random.default_rng(100 + seed)
    r, mu, e = np.array([0.05, 0.08]), rng.uniform(0.1, 0.8), rng.uniform(0.0, 0.7)
    bodies = FreeBodies(["a", "b"], [0.5, 1.5], [sphere_inertia(0.5, r[0]), sphere_inertia(1.5, r[1])])
    contacts = plane_contacts(bodies, spheres={"a": r[0], "b": r[1]},
                              material=ContactMaterial(mu, mu_kinetic=0.8 * mu, restitution=e), margin=1.0)
    height = rng.uniform(0.0, 0.02, size=2)
    q0 = np.r_[0.0, 0.0, r[0] + height[0], 1.0, 0, 0, 0, 1.0, 0.0, r[1] + height[1], 1.0, 0, 0, 0]
    u0 = np.r_[rng.normal(scale=5.0, size=3), rng.normal(size=2), 0.0,
               rng.normal(scale=5.0, size=3), rng.normal(size=2), 0.0]
    return bodies, contacts, q0, u0, mu


@pytest.mark.parametrize("seed", [1, 4, 5])  # 10 to 26 impacts each, a few seconds (seeds 0, 2, 3: 8 to 34 s)
def test_seeded_dropped_and_thrown_spheres_never_gain_energy_and_keep_their_forces_in_the_cones(seed):
    bodies, contacts, q0, u0, mu = thrown_scene(seed)
    run = simulate_contacts(bodies, contacts, q0, u0, 0.02, 0.3, EVENTS)
    check_energy_and_cones(run, mu)
    assert "impact" in {e.kind for e in run.events} and run.contacts.step.size > 0  # they land and press


def test_painleves_spinning_rod_beyond_the_critical_friction_has_several_modes():
    # the rod's end slides away from its centre of mass; spinning at w, the free end accelerates up,
    # a0 = w^2 l sin(theta) - g > 0: beyond mu_c the slip's normal force N = -a0 / B (B < 0) is positive, so
    # leaving (open) and sliding on are both consistent, with different accelerations (Stewart 2000)
    theta, l, w = math.radians(60), 0.5, 6.0
    assert w * w * l * math.sin(theta) > 9.81
    mu_c = (1 + 3 * math.cos(theta) ** 2) / (3 * math.sin(theta) * math.cos(theta))
    bodies, contacts, q0, u0 = sliding_rod(theta, 1.05 * mu_c)
    end = np.array([-l * math.cos(theta), 0.0, -l * math.sin(theta)])
    u0 = np.r_[0.0, w, 0.0, u0[3:] - np.cross([0.0, w, 0.0], end)]  # the end still slides at 1 m/s, v_n = 0
    with pytest.raises(ContactInconsistencyError, match=r"at t = 0 s: several contact modes with different "
                                                        r"accelerations for plane\|end#0") as info:
        simulate_contacts(bodies, contacts, q0, u0, 0.01, 0.02, EVENTS)
    assert info.value.kind == "several" and info.value.contacts == ("plane|end#0",) and info.value.t == 0.0
    bodies, contacts, q0, _ = sliding_rod(theta, 0.95 * mu_c)  # below mu_c: one mode, the end leaves
    run = simulate_contacts(bodies, contacts, q0, u0, 0.01, 0.02, EVENTS)
    assert run.contacts.step.size == 0 and contacts(run.q[-1])[0].distance > 0
