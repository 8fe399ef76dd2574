"""kane.simulate.run.make_simulator (issue 28): the step-wise Simulator built from RunOptions + State, the one
place options become a Simulator, for the interactive callers (realtime plants, the live viewer)."""

import math

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.errors import ArgumentError
from kane.simulate import Method, Simulator
from kane.simulate.run import ProjectionMode, RunOptions, State, make_simulator, run

G, M, L = 9.81, 1.3, 0.7


@pytest.fixture(scope="module")
def pendulum():
    """A bob on a rod about y with a torque input tau [N m]: (m L^2) w' = -m g L sin(th) + tau."""
    s = kane.System("pendulum", gravity=(0, 0, -G))
    s.add_body("bob", mass=M, com=(0, 0, -L), inertia=(0.0, 0.0, 0.0))
    s.add_joint("ground", "bob", J.Revolute("y"), name="pivot", coordinates=["th"], speeds=["w"])
    s.add_joint_torque("pivot", s.input("tau"))
    return kane.derive(s).compile("numpy")


def test_a_step_wise_simulator_without_end_equals_the_restated_one(pendulum):
    """RK4 steps of make_simulator(RunOptions(t_end=inf)) = the Simulator with its keywords restated, bit for bit;
    and the energy changes by the input's work tau (th - th0) (E' = tau w) to RK4's error."""
    opts = RunOptions(t_end=math.inf, method=Method.RK4, dt=1e-3, record=False, record_energy=False)
    sim = make_simulator(pendulum, State([1.2], [0.0], 0.5), opts, inputs={"tau": 0.2})
    ref = Simulator(pendulum, t0=0.5, q0=[1.2], u0=[0.0], method=Method.RK4, dt=1e-3, inputs={"tau": 0.2},
                    record=False, record_energy=False)
    for _ in range(2000):
        sim.step()
        ref.step()
    (q, u), (q_ref, u_ref) = sim.state, ref.state
    assert sim.t == ref.t == pytest.approx(2.5, abs=1e-12)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(u, u_ref)
    energy = pendulum.energy(sim.t, q, u) - pendulum.energy(0.5, np.array([1.2]), np.array([0.0]))
    assert energy == pytest.approx(0.2 * (q[0] - 1.2), abs=1e-9)


def test_run_refuses_an_endless_run_and_both_refuse_bad_arguments(pendulum):
    endless = RunOptions(t_end=math.inf, method="rk4", dt=1e-3)
    with pytest.raises(ArgumentError, match=r"t_end = inf: run needs a finite end"):
        run(pendulum, State([1.2], [0.0]), endless)
    with pytest.raises(ArgumentError, match=r"state must be a kane.State"):
        make_simulator(pendulum, ([1.2], [0.0]), endless)
    with pytest.raises(ArgumentError, match=r"t_end = 1.0 s is before the state's time t = 2.0 s"):
        make_simulator(pendulum, State([1.2], [0.0], 2.0), RunOptions(t_end=1.0))
    with pytest.raises(ArgumentError, match=r"projection dynamics needs a projection of the dynamics' own"):
        make_simulator(pendulum, State([1.2], [0.0]), RunOptions(t_end=1.0, projection=ProjectionMode.DYNAMICS))
    with pytest.raises(ArgumentError, match=r"t_end must be a finite time \[s\] \(or inf"):
        RunOptions(t_end=-math.inf)
