"""Assembly with general surface-surface contacts (issue 16, seed 003): the contact parameters (u1, v1, u2, v2) are
extra unknowns solved with the configuration. The ball in a bowl (examples/ball_in_bowl.toml) dragged around stays
in contact every frame (position and tangency residuals from the surfaces themselves, the centre against its closed
form); the rows' Jacobian against central differences; a NURBS ball on a NURBS floor; the same model file simulated
with RollingContactDynamics against the system built in Python; bad contacts named."""

from pathlib import Path

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from kane.errors import ArgumentError, ModelError
from kane.io.model_file import load_model
from kane.io.model_surfaces import rolling_dynamics
from kane.simulate.drag import DragSolver, Target
from kane.simulate.drag_command import surface_contacts
from kane.simulate.surface_pair import ContactPatchError, SurfaceOnSurface
from kane.spatial import quaternion_to_rotation
from kane.surfaces import NurbsSurface, Sphere, nurbs_sphere

BOWL = Path(__file__).parents[2] / "examples" / "ball_in_bowl.toml"
R, r, M, G, A0 = 1.0, 0.2, 1.5, 9.81, 0.2  # the example's bowl and ball radii [m], mass [kg], g, start angle
CENTRE = np.array([0.0, 0.0, R])
TURN = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])


@pytest.fixture(scope="module")
def bowl():
    loaded = load_model(BOWL)
    return loaded, loaded.derive().compile()


def _residuals(contact, q, z):
    """(position (3,), tangency (2,)) of the ball (free joint q) in the bowl, from the surfaces themselves."""
    Rb = quaternion_to_rotation(q[3:7] / np.linalg.norm(q[3:7]))
    x1 = contact.surface1.point(z[0], z[1])
    x2 = q[:3] + Rb @ contact.surface2.point(z[2], z[3])
    n1 = contact.surface1.normal(z[0], z[1])
    tangents = [Rb @ d for d in contact.surface2.tangents(z[2], z[3])]
    return x2 - x1, np.array([n1 @ d / np.linalg.norm(d) for d in tangents])


def test_the_ball_dragged_around_the_bowl_stays_in_contact_at_the_closed_form_every_frame(bowl):
    loaded, dyn = bowl
    (contact,) = surface_contacts(loaded)
    solver = DragSolver(dyn, [Target("ball")], contacts=[contact])
    q = np.array([loaded.q0[n] for n in dyn.q_names])
    for k, angle in enumerate(np.linspace(0.0, 2 * np.pi, 13)):
        # targets inside the bowl 0.5 m from its centre: the nearest reachable centre is on the sphere R - r
        direction = np.array([np.sin(0.4) * np.cos(angle), np.sin(0.4) * np.sin(angle), -np.cos(0.4)])
        solver.move(0, position=CENTRE + 0.5 * direction)
        res = solver.solve(q)
        q, z = res.q, np.array(res.contact_parameters[0])
        position, tangency = _residuals(contact, q, z)
        assert np.abs(position).max() < 1e-10 and np.abs(tangency).max() < 1e-10, k
        assert np.abs(q[:3] - (CENTRE + (R - r) * direction)).max() < 1e-9, k
        assert np.abs(contact.surface1.point(z[0], z[1]) - (CENTRE + R * direction)).max() < 1e-9  # bowl point
        assert abs(res.distance - ((R - r) - 0.5)) < 1e-9 and res.converged and not res.reachable
    assert np.array_equal(contact.params, z)  # the last frame's parameters warm-start the next


def test_the_contact_rows_are_the_exact_derivatives_in_the_speeds_and_the_parameters(bowl):
    loaded, dyn = bowl
    (contact,) = surface_contacts(loaded)
    solver = DragSolver(dyn, [Target("ball", position=(0.1, 0.2, 0.3))], contacts=[contact])
    rng = np.random.default_rng(16)
    e = rng.normal(size=4)
    qa = np.concatenate([[0.1, -0.2, 0.3], e / np.linalg.norm(e), [0.3, 0.1, -0.4, 0.2]])  # apart, not tangent
    W = dyn.holonomic_rows(0.0, qa[:7], dict(loaded.parameters))[2]
    W = np.block([[W, np.zeros((7, 4))], [np.zeros((4, 6)), np.eye(4)]])
    _, J_soft, C, A, _ = solver.errors(0.0, qa)
    assert C.shape == (5,) and A.shape == (5, 10) and J_soft.shape == (3, 10)
    h = 1e-6
    for du in np.eye(10):
        plus, minus = (solver.errors(0.0, dyn.model.normalize_quaternions(qa + s * h * W @ du))[2] for s in (1, -1))
        assert np.abs((plus - minus) / (2 * h) - A @ du).max() < 1e-8


def test_a_nurbs_ball_on_a_nurbs_floor_comes_down_under_a_target_below_the_floor():
    s = kane.System("arm")
    for name, parent, at in (("upper", "ground", (0, 0, 0)), ("fore", "upper", (1.0, 0, 0))):
        s.add_body(name, mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
        s.add_joint(parent, name, J.Revolute("z"), parent_point=at, coordinates=[f"q_{name}"],
                    speeds=[f"w_{name}"])
    dyn = kane.derive(s).compile()
    P = np.array([[[-3, -0.5, -1], [3, -0.5, -1]], [[-3, -0.5, 1], [3, -0.5, 1]]], float)
    floor = NurbsSurface(P, np.ones((2, 2)), [0, 0, 1, 1], [0, 0, 1, 1], 1, 1, name="floor")
    ball = nurbs_sphere(0.1, (1.0, 0.0, 0.0), name="ball")  # poles on the body z axis: the contact stays off them
    # s2 = 0.75 starts the ball's parameters at its body -y side (the common normal also holds at its top)
    contact = SurfaceOnSurface("foot", "ground", floor, "fore", ball, np.array([0.5, 0.7, 0.75, 0.5]))
    solver = DragSolver(dyn, [Target("fore", (1.0, 0, 0))], contacts=[contact])
    q = np.array([-0.3, 0.2])
    for x in np.linspace(1.6, 0.6, 6):
        solver.move(0, position=(x, -1.0, 0.0))
        res = solver.solve(q)
        q = res.q
        tip = np.array([np.cos(q[0]) + np.cos(q[0] + q[1]), np.sin(q[0]) + np.sin(q[0] + q[1])])
        assert res.converged and res.residual < 1e-10 and np.abs(tip - [x, -0.4]).max() < 1e-9
        assert abs(res.distance - 0.6) < 1e-9  # the centre 0.6 m above the target
        assert abs(contact.params[1] - (x + 3) / 6) < 1e-9  # the floor's v follows the ball (x = 6 v - 3)


def _python_bowl():
    s = kane.System("ball_in_bowl", gravity=(0, 0, -G))
    s.add_body("ball", mass=M, inertia=[0.4 * M * r * r] * 3)
    s.add_joint("ground", "ball", J.Free(), name="float")
    bowl = Sphere(R, origin=(0.0, 0.0, R), rotation=TURN, name="bowl")
    shell = Sphere(r, rotation=TURN, name="shell")
    cd = RollingContactDynamics(s, [RollingContact("rim", "ground", bowl, "ball", shell, (A0, 0.0, A0, 0.0))],
                                alpha=1.0, beta=1.0)
    start = [(R - r) * np.sin(A0), 0.0, R - (R - r) * np.cos(A0), 1.0, 0.0, 0.0, 0.0]
    return cd, *cd.initial_state(start)


def test_the_model_file_simulates_as_the_same_system_built_in_python(bowl):
    loaded, _ = bowl
    got = rolling_dynamics(loaded)
    cd, q0, u0 = _python_bowl()
    assert np.abs(got.q0 - q0).max() < 1e-12 and np.abs(got.u0 - u0).max() < 1e-12
    span, opts = (0.0, 1.0), dict(rtol=1e-10, atol=1e-12, output_dt=0.25, project_every=5)
    a = kane.simulate.simulate(got.dynamics, span, got.q0, got.u0, projection=got.dynamics.make_projection(), **opts)
    b = kane.simulate.simulate(cd, span, q0, u0, projection=cd.make_projection(), **opts)
    assert np.abs(a.q - b.q).max() < 1e-10 and np.abs(a.u - b.u).max() < 1e-10
    # and the physics: the centre stays on the sphere R - r, the energy is conserved (no slip does no work)
    assert np.abs(np.linalg.norm(a.q[:, :3] - CENTRE, axis=1) - (R - r)).max() < 1e-9
    assert a.q[-1, 0] < 0  # it rocked past the bottom (half a period is about 1.06 s)
    energy = [0.5 * M * a.u[k, 3:] @ a.u[k, 3:] + 0.2 * M * r * r * a.u[k, :3] @ a.u[k, :3] + M * G * a.q[k, 2]
              for k in range(len(a.t))]
    assert np.ptp(energy) < 1e-8


def test_bad_surface_contacts_are_named(bowl, tmp_path):
    loaded, dyn = bowl
    bowl_surface = Sphere(R, origin=(0.0, 0.0, R), rotation=TURN, name="bowl")
    with pytest.raises(ArgumentError, match="surface contact 'x': both surfaces are on 'ball'"):
        SurfaceOnSurface("x", "ball", bowl_surface, "ball", bowl_surface)
    with pytest.raises(ContactPatchError, match=r"surface contact 'x': parameter v1 of surface 'bowl' = 2.0 left "
                                                r"the patch \[-1.57"):
        SurfaceOnSurface("x", "ground", bowl_surface, "ball", bowl_surface, np.array([0.0, 2.0, 0.0, 0.0]))
    with pytest.raises(ArgumentError, match="contact 'x': body 'hand' is not in the model"):
        DragSolver(dyn, [], contacts=[SurfaceOnSurface("x", "ground", bowl_surface, "hand", bowl_surface)])
    text = BOWL.read_text()
    path = tmp_path / "apart.toml"
    path.write_text(text.replace('q0 = ["(R - r)*sin(a)", 0, "R - (R - r)*cos(a)"', 'q0 = [0, 0, 0.5'))
    with pytest.raises(ModelError, match=r"apart.toml: \[\[contacts\]\]: rolling contact 'rim': surfaces 'bowl' and "
                                         r"'shell' do not touch at the start: gap = "):
        rolling_dynamics(load_model(path))
    path.write_text(text[:text.index("[[surfaces]]")])
    with pytest.raises(ModelError, match=r"apart.toml: rolling_dynamics needs at least one \[\[contacts\]\] table"):
        rolling_dynamics(load_model(path))
