"""Assembly and drift correction of holonomic constraints handled at velocity level (a closed four-bar)."""

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.simulate import Method, assemble, make_projection, project_positions, simulate


def four_bar(directions=((1, 0, 0), (0, 1, 0)), **options):
    """Crank 1 m, coupler 2 m, rocker 1.5 m, ground link 2 m, all hinged about z; gravity along -y; the rocker's
    tip closed on the ground pivot by a loop closure at velocity level along ``directions``; ``options`` for
    kane.derive."""
    s = kane.System("four_bar", gravity=(0, -9.81, 0))
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate((1.0, 2.0, 1.5)):
        m = 1.0 + i
        s.add_body(f"l{i}", mass=m, com=(L / 2, 0, 0), inertia=(1e-3, m * L**2 / 12, m * L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0), directions=list(directions))
    return kane.derive(s, dependent=["u2", "u3"], **options).compile()


def closure_by_hand(q):
    """Tip of the rocker minus the ground pivot, from the angles (independent of kane's kinematics)."""
    a1, a2, a3 = q[0], q[0] + q[1], q[0] + q[1] + q[2]
    x = np.cos(a1) + 2 * np.cos(a2) + 1.5 * np.cos(a3) - 2.0
    y = np.sin(a1) + 2 * np.sin(a2) + 1.5 * np.sin(a3)
    return np.array([x, y])


@pytest.fixture(scope="module")
def dyn():
    return four_bar()


def test_assemble_keeps_the_crank_and_closes_the_loop(dyn):
    res = assemble(dyn, 0.0, np.array([0.7, -0.3, 2.0]))
    assert res.q[0] == 0.7  # the independent coordinate is kept as given
    assert np.abs(closure_by_hand(res.q)).max() < 1e-12
    assert res.residual < 1e-12 and res.iterations > 0


def test_projection_holds_the_closure_over_20_s_and_drift_is_reported_without_it(dyn):
    q0 = assemble(dyn, 0.0, np.array([0.7, -0.3, 2.0])).q
    u0 = np.array([2.0])
    free = simulate(dyn, (0.0, 20.0), q0, u0, method=Method.DOPRI5, rtol=1e-6, atol=1e-8, output_dt=0.1,
                    monitors={"closure": lambda t, q, u: float(np.abs(closure_by_hand(q)).max())})
    drift = free.residuals["closure"].max()
    held = simulate(dyn, (0.0, 20.0), q0, u0, method=Method.DOPRI5, rtol=1e-6, atol=1e-8, output_dt=0.1,
                    projection=make_projection(dyn), project_every=1,
                    monitors={"closure": lambda t, q, u: float(np.abs(closure_by_hand(q)).max())})
    assert held.residuals["closure"].max() < 1e-10
    assert drift > 1e-8  # without projection the closure drifts by the integration error
    assert drift > 100 * held.residuals["closure"].max()


def test_project_positions_fails_clearly_when_unreachable():
    s = kane.System("unreachable")
    s.add_body("l", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("ground", "l", J.Revolute("z"), coordinates=["q"], speeds=["u"])
    s.add_loop_closure("reach", "l", (1.0, 0, 0), "ground", (5.0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)],
                       transient=True)
    dyn = kane.derive(s).compile()
    with pytest.raises(kane.KaneError, match="could not be satisfied"):
        project_positions(dyn, 0.0, np.array([0.1]), max_iter=10)


@pytest.mark.parametrize("third", [(0, 0, 1), (3, 0, 0)], ids=["zero_row", "multiple_of_x"])
def test_a_dropped_closure_row_assembles_and_projects_to_the_same_q(dyn, third):
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'closure' row 2"):
        dropped = four_bar(((1, 0, 0), (0, 1, 0), third), redundant="drop")
    assert dropped.equations.constraint_layout["closure"].dropped == (2,)
    assert dropped.equations.kept_holonomic == (0, 1)
    guess = np.array([0.7, -0.3, 2.0])
    for solve in (assemble, project_positions):
        res, ref = solve(dropped, 0.0, guess), solve(dyn, 0.0, guess)
        np.testing.assert_allclose(res.q, ref.q, rtol=0, atol=1e-12)
        assert np.abs(closure_by_hand(res.q)).max() < 1e-12 and res.iterations == ref.iterations
