"""Event-driven stick/slip contact (kane.switching.contact_events) and the point Jacobians of kane Systems
(kane.switching.system_bodies) against closed-form results: finite differences of point positions, a free joint
against FreeBodies, a sphere on a prismatic + revolute arm at rest (torque balance), a block on an incline (stick,
slide, ramped angle), a sphere thrown sliding and spinning, a box bouncing flat, a box pushed until it tips or
slides, a ball rolling on a box's face; energy and cones on every run."""

import math

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.model.contact import ContactMaterial, ContactPoint
from kane.switching import (ContactInconsistencyError, ContactOptions, ContactScheme, EventContactRun, FreeBodies,
                            SystemBodies, simulate_contacts)

G = 9.81
UP = np.array([0.0, 0.0, 1.0])
EVENTS = ContactOptions(ContactScheme.EVENT_DRIVEN)
BOTTOM = np.array([[sx, sy, -1.0] for sx in (-1, 1) for sy in (-1, 1)])


def box_inertia(m, half):
    a, b, c = 2 * np.asarray(half, dtype=float)
    return m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def check_energy_and_cones(run, mu_s, tol=1e-9):
    """No sample gains energy beyond round-off; every recorded force lies in its cone (N >= 0, |f_t| <= mu_s N)."""
    scale = 1.0 + np.abs(run.energy).max()
    assert np.diff(run.energy).max() <= 1e-11 * scale
    c = run.contacts
    assert np.all(c.normal_force >= -tol)
    assert np.all(np.linalg.norm(c.friction_force, axis=1) <= mu_s * c.normal_force + tol)


# ---- item 1: point Jacobians of any kane model --------------------------------------------------------------------

def arm_system(m1=1.0, m2=0.5, L=0.6):
    """A slider on a prismatic x joint, an arm of length L on a revolute y joint, its centre of mass at L/2."""
    s = kane.System("arm", gravity=(0, 0, -G))
    s.add_body("slider", mass=m1, inertia=(0.01, 0.01, 0.01))
    s.add_body("arm", mass=m2, com=(L / 2, 0, 0), inertia=(0.001, m2 * L * L / 12, m2 * L * L / 12))
    s.add_joint("ground", "slider", J.Prismatic("x"), parent_point=(0, 0, 0.5), coordinates=["x"], speeds=["vx"])
    s.add_joint("slider", "arm", J.Revolute("y"), coordinates=["phi"], speeds=["w"])
    return s


def test_point_jacobians_of_a_system_match_finite_differences_and_free_bodies():
    eqs = kane.derive(arm_system())
    sb = SystemBodies(eqs)
    rng = np.random.default_rng(3)
    q = rng.normal(size=2)
    point_body = np.array([0.45, 0.02, -0.03])  # fixed in the arm, in its axes
    o, R = sb.pose(q, "arm")
    J_arm = sb.point_jacobian(q, "arm", o + R @ point_body)
    for k in range(2):  # u = q' for these joints: columns are d(position)/dq_k
        dq = np.zeros(2)
        dq[k] = 1e-6
        (op, Rp), (om, Rm) = sb.pose(q + dq, "arm"), sb.pose(q - dq, "arm")
        fd = ((op + Rp @ point_body) - (om + Rm @ point_body)) / 2e-6
        assert np.abs(J_arm[:, k] - fd).max() < 1e-9
    R_all, r_all = sb.poses(q)
    assert R_all.shape == (2, 3, 3) and np.allclose(r_all[1], o, atol=1e-15)
    s = kane.System("free")
    inertia = (0.1, 0.2, 0.3)
    s.add_body("b", mass=2.0, inertia=inertia)
    s.add_joint("ground", "b", J.Free())
    sbf = SystemBodies(kane.derive(s))
    fb = FreeBodies(["b"], [2.0], [np.diag(inertia)])
    e = rng.normal(size=4)
    q = np.r_[rng.normal(size=3), e / np.linalg.norm(e)]
    u = rng.normal(size=6)  # (omega body, v body): FreeBodies has (omega body, v world)
    p = rng.normal(size=3)
    c, R = fb.pose(q, "b")
    assert np.abs(sbf.pose(q, "b")[1] - R).max() < 1e-15
    v_free = fb.point_jacobian(q, "b", p) @ np.r_[u[:3], R @ u[3:]]
    assert np.abs(sbf.point_jacobian(q, "b", p) @ u - v_free).max() < 1e-14
    assert np.abs(sbf.point_jacobian(q, "ground", p)).max() == 0.0


def test_a_sphere_on_a_prismatic_revolute_arm_rests_on_the_ground_by_torque_balance():
    m1, m2, L, r = 1.0, 0.5, 0.6, 0.05
    eqs = kane.derive(arm_system(m1, m2, L))
    dyn = kane.KaneDynamics(eqs)
    sb = SystemBodies(eqs)
    material = ContactMaterial(0.8)
    tip = np.array([L, 0.0, 0.0])

    def contacts(q):
        o, R = sb.pose(q, "arm")
        c = o + R @ tip  # the sphere of radius r at the arm's tip, ground plane z = 0
        return [ContactPoint("ground", "arm", "plane", "tip", c * [1, 1, 0], c - r * UP, UP, float(c[2] - r),
                             material)]

    phi_rest = math.asin((0.5 - r) / L)  # y axis: positive phi lowers the tip (z = 0.5 - L sin phi)
    run = simulate_contacts(dyn, contacts, [0.0, phi_rest - 0.05], [0.0, 0.0], 2e-3, 0.6, ContactOptions(),
                            bodies=sb)
    # resting on the ground; the impact step leaves its penetration (< h x the impact speed, by the scheme's design)
    assert abs(contacts(run.q[-1])[0].distance) < 1e-3
    # at rest: the normal force N at the tip balances the arm's weight about the revolute axis, and the slider's
    # horizontal balance leaves no friction: N L cos(phi) = m2 g (L / 2) cos(phi)
    last = run.contacts.step == run.contacts.step.max()
    assert run.contacts.normal_force[last][0] == pytest.approx(m2 * G / 2, rel=1e-6)
    assert np.abs(run.u[-1]).max() < 1e-9


# ---- item 2: the event-driven scheme ------------------------------------------------------------------------------

def incline(mu_s, mu_k, gravity, t_end, h=0.01, mass=2.0):
    """A block on the plane z = 0 with gravity tilted by the incline angle; its contact point is its centre of
    mass (the tipping-free analysis of a particle: the friction has no moment)."""
    bodies = FreeBodies(["block"], [mass], [np.diag([0.1, 0.2, 0.3])], gravity=gravity)
    material = ContactMaterial(mu_s, mu_k)

    def contacts(q):
        c, _ = bodies.pose(q, "block")
        return [ContactPoint("ground", "block", "plane", "block", c * [1, 1, 0], c, UP, float(c[2]), material)]

    q0, u0 = np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], np.zeros(6)
    return simulate_contacts(bodies, contacts, q0, u0, h, t_end, EVENTS)


def tilted(theta):
    return G * np.array([math.sin(theta), 0.0, -math.cos(theta)])


def test_block_on_an_incline_sticks_below_atan_mu_s_and_slides_above_it():
    mass, mu_s, mu_k = 2.0, 0.5, 0.4
    theta = 0.3  # tan 0.3 = 0.309 < 0.5
    run = incline(mu_s, mu_k, tilted(theta), 1.0)
    assert isinstance(run, EventContactRun) and run.scheme is ContactScheme.EVENT_DRIVEN and run.events == ()
    assert np.abs(run.q[:, :3]).max() < 1e-12 and np.all(run.contacts.mode == 1)
    assert np.abs(run.contacts.normal_force - mass * G * math.cos(theta)).max() < 1e-9
    assert np.abs(np.linalg.norm(run.contacts.friction_force, axis=1) - mass * G * math.sin(theta)).max() < 1e-9
    theta = 0.6  # tan 0.6 = 0.684 > 0.5
    run = incline(mu_s, mu_k, tilted(theta), 1.0)
    a = G * (math.sin(theta) - mu_k * math.cos(theta))
    assert np.abs(run.q[:, 0] - a * run.t ** 2 / 2).max() < 1e-9
    assert np.abs(run.u[:, 3] - a * run.t).max() < 1e-9
    assert np.all(run.contacts.mode == 2) and run.events == ()
    assert np.abs(np.linalg.norm(run.contacts.friction_force, axis=1) - mu_k * mass * G * math.cos(theta)).max() \
        < 1e-9
    check_energy_and_cones(run, mu_s)


def test_ramped_incline_switches_from_stick_to_slip_at_atan_mu_s_over_k():
    mu_s, mu_k, k = 0.5, 0.4, 0.5
    run = incline(mu_s, mu_k, lambda t: tilted(k * t), 1.5)
    assert [e.kind for e in run.events] == ["stick->slip"]
    assert abs(run.events[0].t - math.atan(mu_s) / k) < 1e-9
    assert run.events[0].modes == (("plane|block#0", "slip"),)
    moving = run.t > run.events[0].t
    assert np.abs(run.q[~moving, 0]).max() < 1e-12 and np.all(run.q[moving, 0] > 0)


def test_sphere_thrown_sliding_and_spinning_reaches_rolling_at_the_closed_form_time():
    m, r, mu = 1.5, 0.1, 0.3
    bodies = FreeBodies(["ball"], [m], [0.4 * m * r * r * np.eye(3)])
    material = ContactMaterial(mu)

    def contacts(q):
        c, _ = bodies.pose(q, "ball")
        return [ContactPoint("ground", "ball", "plane", "ball", c * [1, 1, 0], c - r * UP, UP, float(c[2] - r),
                             material)]

    v0, w0 = 2.0, -5.0  # slip velocity of the contact point v - r w_y = 2.5 m/s forward, backspin
    run = simulate_contacts(bodies, contacts, np.r_[0, 0, r, 1, 0, 0, 0.0], np.r_[0, w0, 0, v0, 0, 0], 0.01, 0.6,
                            EVENTS)
    t_roll = 2 * (v0 - r * w0) / (7 * mu * G)
    assert [e.kind for e in run.events] == ["slip->stick"] and abs(run.events[0].t - t_roll) < 1e-8
    after = run.t > t_roll
    assert np.abs(run.u[after, 3] - (5 * v0 + 2 * r * w0) / 7).max() < 1e-8
    assert np.abs(run.u[after, 3] - r * run.u[after, 1]).max() < 1e-8  # rolling: v = r w
    before = ~after
    assert np.abs(run.u[before, 3] - (v0 - mu * G * run.t[before])).max() < 1e-9
    check_energy_and_cones(run, mu)


def bouncing_box(e, h, half=(0.2, 0.1, 0.05), mass=2.0, mu=0.5):
    half = np.asarray(half)
    bodies = FreeBodies(["box"], [mass], [box_inertia(mass, half)])
    material = ContactMaterial(mu, restitution=e)

    def contacts(q):
        c, R = bodies.pose(q, "box")
        return [ContactPoint("ground", "box", "plane", "box", p * [1, 1, 0], p, UP, float(p[2]), material)
                for p in c + (BOTTOM * half) @ R.T]

    return bodies, contacts, np.r_[0, 0, half[2] + h, 1, 0, 0, 0.0]


@pytest.mark.parametrize("e", [0.6, 0.0])
def test_box_dropped_flat_bounces_to_e_squared_h_on_four_simultaneous_corners(e):
    h, half_z = 0.2, 0.05
    bodies, contacts, q0 = bouncing_box(e, h)
    run = simulate_contacts(bodies, contacts, q0, np.zeros(6), 0.01, 0.4, EVENTS)
    t_hit = math.sqrt(2 * h / G)
    assert run.events[0].kind == "impact" and abs(run.events[0].t - t_hit) < 1e-9
    after = run.t > t_hit
    if e > 0:
        flight = after & (run.t < t_hit + 2 * e * math.sqrt(2 * G * h) / G)
        apex = run.q[flight, 2] - half_z + run.u[flight, 5] ** 2 / (2 * G)
        assert np.abs(apex - e * e * h).max() < 1e-8
        # no spin, no drift: the impact's impulses come from the cone solver, iterated to its residual tolerance
        assert np.abs(run.u[flight][:, [0, 1, 2, 3, 4]]).max() < 1e-10
    else:
        assert np.abs(run.q[after, 2] - half_z).max() < 1e-10 and np.abs(run.u[after]).max() < 1e-10
        assert len(run.events) == 1 and all(m == "stick" for _, m in run.events[0].modes)
        last = run.contacts.step == run.contacts.step.max()
        assert run.contacts.normal_force[last].sum() == pytest.approx(2.0 * G, rel=1e-10)
    check_energy_and_cones(run, 0.5)


class PushedBox(FreeBodies):
    """A box on the plane z = 0 pushed at the middle of its top back edge by a force (c t, 0, 0) [N] (a growing
    push), as a generalized force J_p^T F."""

    def __init__(self, mass, half, rate):
        super().__init__(["box"], [mass], [box_inertia(mass, half)])
        self.half, self.rate = np.asarray(half, dtype=float), rate

    def forcing(self, t, q, u, params=None, inputs=None):
        c, R = self.pose(q, "box")
        p = c + R @ (self.half * [-1.0, 0.0, 1.0])
        return super().forcing(t, q, u) + self.point_jacobian(q, "box", p).T @ np.array([self.rate * t, 0, 0])


@pytest.mark.parametrize("mu_s", [0.2, 0.3])
def test_box_pushed_at_its_top_tips_or_slides_by_the_analytic_threshold(mu_s):
    # A box of width w (along the push) and height H, pushed at height H by F = c t: it tips about its front
    # bottom edge when F H = m g w / 2 (moments about that edge), it slides when F = mu_s m g; so it tips first
    # when mu_s > w / (2 H) (0.25 here: w = 0.2 m, H = 0.4 m).
    mass, half, rate = 2.0, np.array([0.1, 0.1, 0.2]), 10.0
    w, height = 2 * half[0], 2 * half[2]
    bodies = PushedBox(mass, half, rate)
    material = ContactMaterial(mu_s, mu_s)  # mu_k = mu_s: the box slides once the total friction reaches mu_s m g

    def contacts(q):
        c, R = bodies.pose(q, "box")
        return [ContactPoint("ground", "box", "plane", "box", p * [1, 1, 0], p, UP, float(p[2]), material)
                for p in c + (BOTTOM * half) @ R.T]

    t_tip, t_slide = mass * G * w / (2 * height) / rate, mu_s * mass * G / rate
    q0 = np.r_[0, 0, half[2], 1, 0, 0, 0.0]
    after = 0.05 if mu_s > w / (2 * height) else 0.02  # how long it runs past the threshold (tips, or slides)
    run = simulate_contacts(bodies, contacts, q0, np.zeros(6), 0.01, round(min(t_tip, t_slide) + after, 2), EVENTS)
    last = run.events[-1]
    if mu_s > w / (2 * height):  # tips: the back corners (x < 0: #0, #1) lift off, the front ones stick
        assert last.kind == "open" and abs(last.t - t_tip) < 1e-9
        assert dict(last.modes) == {"plane|box#2": "stick", "plane|box#3": "stick"}
        c, R = bodies.pose(run.q[-1], "box")
        front = c + (BOTTOM[2:] * half) @ R.T  # the box turns about its front edge: those corners stay still
        assert run.u[-1, 1] > 0.01 and max(np.abs(bodies.point_jacobian(run.q[-1], "box", p) @ run.u[-1]).max()
                                           for p in front) < 1e-9
    else:  # slides: the last corner to reach the cone sets every corner slipping
        assert last.kind == "stick->slip" and abs(last.t - t_slide) < 1e-9
        assert set(dict(last.modes).values()) == {"slip"}
        moving = run.t > t_slide
        assert np.abs(run.q[~moving, 0]).max() < 1e-12 and np.all(run.u[moving, 3] > 0)
        assert np.abs(run.u[:, :3]).max() < 1e-9  # no rotation
    assert np.all(run.contacts.normal_force >= -1e-9)
    assert np.all(np.linalg.norm(run.contacts.friction_force, axis=1) <= mu_s * run.contacts.normal_force + 1e-9)


def test_a_ball_on_a_resting_boxs_face_reaches_rolling_and_keeps_rolling_like_on_the_ground():
    m, r, mu, big, half = 1.0, 0.1, 0.3, 20.0, np.array([0.5, 0.3, 0.1])
    bodies = FreeBodies(["box", "ball"], [big, m], [box_inertia(big, half), 0.4 * m * r * r * np.eye(3)])
    ground, face = ContactMaterial(1.0), ContactMaterial(mu)

    def contacts(q):
        c, R = bodies.pose(q, "box")
        out = [ContactPoint("ground", "box", "plane", "box", p * [1, 1, 0], p, UP, float(p[2]), ground)
               for p in c + (BOTTOM * half) @ R.T]
        cb, _ = bodies.pose(q, "ball")
        n = R[:, 2]  # the box's top face: normal from the box (a) to the ball (b)
        height = float(n @ (cb - c)) - half[2]
        out.append(ContactPoint("box", "ball", "top", "ball", cb - height * n, cb - r * n, n, height - r, face))
        return out

    v0, w0 = 1.0, -2.0
    q0 = np.r_[0, 0, half[2], 1, 0, 0, 0, -0.3, 0, 2 * half[2] + r, 1, 0, 0, 0]
    u0 = np.r_[np.zeros(6), 0, w0, 0, v0, 0, 0]
    run = simulate_contacts(bodies, contacts, q0, u0, 0.01, 0.3, EVENTS)
    t_roll = 2 * (v0 - r * w0) / (7 * mu * G)
    assert [(e.kind, e.contact) for e in run.events] == [("slip->stick", "top|ball#0")]
    assert abs(run.events[0].t - t_roll) < 1e-8
    after = run.t > t_roll
    assert np.abs(run.u[after, 9] - (5 * v0 + 2 * r * w0) / 7).max() < 1e-8
    assert np.abs(run.u[after, 9] - r * run.u[after, 7]).max() < 1e-8  # no slip on the face
    assert np.abs(run.u[:, :6]).max() < 1e-10  # the box, sticking on the ground, does not move
    check_energy_and_cones(run, 1.0)


def sliding_rod(theta, mu, m=1.0, l=0.5):
    """A uniform rod of length 2 l at angle theta to the ground, its lower end on the plane sliding at 1 m/s away
    from its centre of mass, no angular velocity."""
    bodies = FreeBodies(["rod"], [m], [np.diag([1e-4, m * l * l / 3, m * l * l / 3])])
    material, end = ContactMaterial(mu), np.array([-l, 0.0, 0.0])
    R = np.array([[math.cos(theta), 0, -math.sin(theta)], [0, 1, 0], [math.sin(theta), 0, math.cos(theta)]])

    def contacts(q):
        c, Rq = bodies.pose(q, "rod")
        p = c + Rq @ end
        return [ContactPoint("ground", "rod", "plane", "end", p * [1, 1, 0], p, UP, float(p[2]), material)]

    w, x, y, z = math.cos(-theta / 2), 0.0, math.sin(-theta / 2), 0.0  # R = rotation by -theta about y
    return bodies, contacts, np.r_[-R @ end, w, x, y, z], np.r_[0, 0, 0, -1.0, 0, 0]


def test_painleve_rod_is_reported_by_name_and_time_beyond_the_critical_friction():
    # Painleve's rod (Stewart 2000): for the end sliding away from the centre of mass, N enters the end's normal
    # acceleration with the factor (1 + 3 cos^2 theta - 3 mu sin theta cos theta) / m; gravity alone pulls the end
    # down, so beyond mu_c = (1 + 3 cos^2 theta) / (3 sin theta cos theta) neither open nor slipping is consistent.
    theta = math.radians(60)
    mu_c = (1 + 3 * math.cos(theta) ** 2) / (3 * math.sin(theta) * math.cos(theta))
    bodies, contacts, q0, u0 = sliding_rod(theta, 0.95 * mu_c)
    run = simulate_contacts(bodies, contacts, q0, u0, 0.01, 0.05, EVENTS)
    assert run.contacts.mode[0] == 2 and np.all(run.contacts.normal_force > 0)  # slides, then sticks quickly
    assert [e.kind for e in run.events] == ["slip->stick"]
    bodies, contacts, q0, u0 = sliding_rod(theta, 1.05 * mu_c)
    with pytest.raises(ContactInconsistencyError, match=r"Painleve-type inconsistency at t = 0 s: .*plane\|end#0") \
            as info:
        simulate_contacts(bodies, contacts, q0, u0, 0.01, 0.05, EVENTS)
    assert info.value.kind == "none" and info.value.t == 0.0 and info.value.contacts == ("plane|end#0",)


def test_the_scheme_option_selects_the_run_and_the_run_records_it():
    bodies, contacts, q0 = bouncing_box(0.0, 0.01)
    stepped = simulate_contacts(bodies, contacts, q0, np.zeros(6), 0.01, 0.1, ContactOptions())
    evented = simulate_contacts(bodies, contacts, q0, np.zeros(6), 0.01, 0.1, EVENTS)
    assert stepped.scheme is ContactScheme.TIME_STEPPING and not isinstance(stepped, EventContactRun)
    assert evented.scheme is ContactScheme.EVENT_DRIVEN and evented.t.shape == stepped.t.shape
    assert abs(evented.q[-1, 2] - 0.05) < 1e-12 and abs(stepped.q[-1, 2] - 0.05) < 1e-6  # both at rest on the plane


def test_bad_options_are_named_and_system_bodies_serve_several_threads():
    from concurrent.futures import ThreadPoolExecutor

    from kane.errors import ArgumentError, ModelError
    from kane.switching import EventOptions

    with pytest.raises(ArgumentError, match="EventOptions: rtol"):
        EventOptions(rtol=0.0)
    with pytest.raises(ArgumentError, match="EventOptions: max_events"):
        EventOptions(max_events=0)
    with pytest.raises(ModelError, match="mu_static"):
        ContactMaterial(-0.1)
    bodies, contacts, q0 = bouncing_box(0.0, 0.01)
    with pytest.raises(ArgumentError, match="whole number of steps"):
        simulate_contacts(bodies, contacts, q0, np.zeros(6), 0.03, 0.1, EVENTS)
    sb = SystemBodies(kane.derive(arm_system()))
    with pytest.raises(ModelError, match="no body 'wheel'"):
        sb.point_jacobian([0.0, 0.0], "wheel", np.zeros(3))
    states = np.random.default_rng(5).normal(size=(64, 2))
    serial = [sb.point_jacobian(q, "arm", np.array([0.3, 0.0, 0.1])) for q in states]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda q: sb.point_jacobian(q, "arm", np.array([0.3, 0.0, 0.1])), states))
    assert all(np.array_equal(a, b) for a, b in zip(serial, threaded))
