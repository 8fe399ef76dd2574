"""Simulator and simulate(): monitors, inputs, output grid, failures with saved results, projection, modes."""

import math

import numpy as np
import pytest

from kane.errors import KaneError
from scipy.integrate import solve_ivp

from kane.io.trajectory import TrajectoryWriter, load_trajectory
from kane.simulate import Event, Method, SimulationError, Simulator, simulate

G, L, M = 9.81, 0.7, 1.3


class Pendulum:
    """theta'' = -(g / L) sin(theta); energy = m L^2 omega^2 / 2 - m g L cos(theta) [J]."""

    n_q, n_u = 1, 1
    q_names, u_names = ("theta",), ("omega",)

    def __init__(self, nan_after=math.inf, raise_after=math.inf):
        self.nan_after = nan_after
        self.raise_after = raise_after

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        if t > self.raise_after:
            raise ValueError("joint table lookup out of range")
        if t > self.nan_after:
            return np.array([np.nan])
        return -(G / L) * np.sin(q)

    def energy(self, t, q, u, params=None):
        return 0.5 * M * L**2 * u[0] ** 2 - M * G * L * math.cos(q[0])


class SpringMass:
    """m x'' = -k x + F with params k, m [SI] and input F [N]; no energy method."""

    n_q, n_u = 1, 1
    q_names, u_names = ("x",), ("v",)

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return (-params["k"] * q + inputs["F"]) / params["m"]


class NoEnergy(SpringMass):
    def energy(self, t, q, u, params=None):
        raise NotImplementedError


def test_pendulum_energy_monitor_is_conserved():
    tr = simulate(Pendulum(), (0.0, 10.0), [2.5], [0.0], rtol=1e-11, atol=1e-13, output_dt=0.01)
    e0 = 0.5 * M * L**2 * 0.0 - M * G * L * math.cos(2.5)
    assert tr.energy[0] == pytest.approx(e0, rel=1e-15)
    assert np.max(np.abs(tr.energy - e0)) < 1e-8 * abs(e0)
    assert tr.n_samples == 1001 and tr.t[-1] == 10.0
    assert tr.stats.method == "dopri5" and tr.stats.wall_time_s > 0 and tr.stats.n_fev > 0


def test_constant_and_callable_inputs_with_params():
    k, m, F = 4.0, 0.5, 2.0
    w = math.sqrt(k / m)
    params = {"k": k, "m": m}
    tr = simulate(SpringMass(), (0.0, 5.0), [1.0], [0.0], params=params, inputs={"F": F}, output_dt=0.1,
                  rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.q[:, 0], F / k + (1.0 - F / k) * np.cos(w * tr.t), atol=1e-8)
    assert tr.energy is None and tr.params == params
    # ramp force F = t: x = t / k + A cos(wt) + B sin(wt), A = x0, B = (v0 - 1/k) / w
    calls = []

    def ramp(t, q, u):
        calls.append(t)
        return {"F": t}

    tr = simulate(NoEnergy(), (0.0, 5.0), [0.3], [0.1], params=params, inputs=ramp, method=Method.RK4, dt=1e-3,
                  output_dt=0.5)
    t = tr.t
    exact = t / k + 0.3 * np.cos(w * t) + (0.1 - 1 / k) / w * np.sin(w * t)
    np.testing.assert_allclose(tr.q[:, 0], exact, atol=1e-10)
    # one more call than counted evaluations: the check of the dynamics at the initial state
    assert tr.energy is None and len(calls) == tr.stats.n_fev + 1


def test_residual_monitors_and_output_grid():
    circle = {"radius": lambda t, q, u: q[0] ** 2 + u[0] ** 2 - 1.0, "time": lambda t, q, u: t}
    tr = simulate(SpringMass(), (0.0, 1.0), [1.0], [0.0], params={"k": 1.0, "m": 1.0}, inputs={"F": 0.0},
                  monitors=circle, output_dt=0.3, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.t, [0.0, 0.3, 0.6, 0.9, 1.0], atol=1e-15)
    np.testing.assert_array_equal(tr.residuals["time"], tr.t)
    assert np.max(np.abs(tr.residuals["radius"])) < 1e-9
    np.testing.assert_allclose(tr.q[:, 0], np.cos(tr.t), atol=1e-9)


@pytest.mark.parametrize("method, dt", [(Method.DOPRI5, None), (Method.RK4, 0.01)])
def test_nan_in_dynamics_stops_with_time_state_and_saved_results(tmp_path, method, dt):
    path = tmp_path / "nan.h5"
    with pytest.raises(SimulationError) as info:
        simulate(Pendulum(nan_after=1.0), (0.0, 3.0), [0.5], [0.0], method=method, dt=dt, path=path,
                 output_dt=0.05, flush_every=7)
    err = info.value
    assert isinstance(err, KaneError)
    msg = str(err)
    assert "in mode 'default'" in msg and "theta=" in msg and "omega=" in msg and "NaN" in msg
    assert str(path) in msg
    assert err.t == pytest.approx(1.0, abs=0.011) and err.t_good <= 1.0 + 1e-12
    assert f"t = {err.t!r} s" in msg
    tr = err.trajectory
    assert tr.status.startswith("failed: ") and "NaN" in tr.status
    assert tr.t[-1] <= 1.0 and tr.t[-1] >= 0.95
    ref = solve_ivp(lambda t, y: [y[1], -(G / L) * math.sin(y[0])], (0.0, 1.0), [0.5, 0.0], method="DOP853",
                    rtol=1e-13, atol=1e-14, dense_output=True)
    np.testing.assert_allclose(tr.q[:, 0], ref.sol(tr.t)[0], atol=1e-7)
    np.testing.assert_allclose(np.r_[err.q, err.u], ref.sol(err.t_good), atol=1e-7)
    saved = load_trajectory(path)
    assert saved.status == tr.status and saved.n_samples == tr.n_samples
    np.testing.assert_array_equal(saved.q, tr.q)
    assert not (tmp_path / "nan.h5.partial").exists()


def test_exception_from_dynamics_becomes_simulation_error():
    with pytest.raises(SimulationError, match="ValueError raised during the step from t = .*lookup") as info:
        simulate(Pendulum(raise_after=0.5), (0.0, 1.0), [0.5], [0.0], method=Method.RK4, dt=0.1)
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.t_good == pytest.approx(0.5)
    assert info.value.trajectory.t[-1] == pytest.approx(0.5)


def test_step_size_below_minimum_fails_clearly():
    class Stiff(SpringMass):
        def udot(self, t, q, u, params=None, inputs=None):
            return -1e6 * q

    with pytest.raises(SimulationError, match="fell below the minimum 0.01 s"):
        simulate(Stiff(), (0.0, 1.0), [1.0], [0.0], min_step=0.01)


def test_projection_hook_every_k_steps_against_a_manual_loop():
    h, n = 0.1, 40
    calls = []

    def onto_circle(t, q, u):
        calls.append(t)
        r = math.hypot(q[0], u[0])
        return q / r, u / r

    tr = simulate(SpringMass(), (0.0, h * n), [1.0], [0.0], method=Method.SEMI_IMPLICIT_EULER, dt=h,
                  params={"k": 1.0, "m": 1.0}, inputs={"F": 0.0}, projection=onto_circle, project_every=3)
    assert len(calls) == n // 3
    np.testing.assert_allclose(calls, [3 * h * (j + 1) for j in range(n // 3)], atol=1e-12)
    q, u = 1.0, 0.0
    ref = [(q, u)]
    for k in range(1, n + 1):
        u = u - h * q
        q = q + h * u
        if k % 3 == 0:
            r = math.hypot(q, u)
            q, u = q / r, u / r
        ref.append((q, u))
    ref = np.array(ref)
    np.testing.assert_allclose(tr.q[:, 0], ref[:, 0], atol=1e-13)
    np.testing.assert_allclose(tr.u[:, 0], ref[:, 1], atol=1e-13)
    radius = np.hypot(tr.q[:, 0], tr.u[:, 0])
    np.testing.assert_allclose(radius[3::3], 1.0, atol=1e-14)
    assert np.max(np.abs(radius - 1)) > 1e-3  # in between, the scheme does drift


def test_stepwise_simulator_modes_and_state():
    sim = Simulator(Pendulum(), q0=[0.2], u0=[0.0], method="rk4", dt=0.05, mode="swing")
    info = sim.step()
    assert (info.t_old, info.t_new) == (0.0, 0.05) and sim.t == 0.05
    q, u = sim.state
    w2 = G / L
    assert q[0] == pytest.approx(0.2 - 0.5 * w2 * math.sin(0.2) * 0.05**2, abs=1e-5)
    sim.run(1.0)
    sim.set_mode("held")
    sim.run(1.5)
    tr = sim.finish()
    assert tr.modes == [(0.0, 1.0, "swing"), (1.0, 1.5, "held")]
    assert tr.n_samples == 31 and tr.stats.n_accepted == 30
    with pytest.raises(ValueError, match="q0 has 2 entries, expected 1"):
        Simulator(Pendulum(), q0=[0.1, 0.2])
    with pytest.raises(ValueError, match="t_span"):
        simulate(Pendulum(), (1.0, 0.0), [0.1], [0.0])


def test_saved_run_and_writer_only_simulator(tmp_path):
    zero = Event("zero", lambda t, q, u: q[0])
    tr = simulate(Pendulum(), (0.0, 1.0), [0.3], [0.0], path=tmp_path / "ok.h5", output_dt=0.1, events=[zero],
                  description='{"model": "pendulum"}')
    ref = solve_ivp(lambda t, y: [y[1], -(G / L) * math.sin(y[0])], (0.0, 1.0), [0.3, 0.0], method="DOP853",
                    rtol=1e-13, atol=1e-14, t_eval=tr.t)
    np.testing.assert_allclose(tr.q[:, 0], ref.y[0], atol=1e-8)
    back = load_trajectory(tmp_path / "ok.h5")
    assert back.status == "completed" and back.stats == tr.stats and back.events == tr.events
    assert back.description == '{"model": "pendulum"}' and back.q_names == ("theta",)
    np.testing.assert_array_equal(back.q, tr.q)
    np.testing.assert_array_equal(back.energy, tr.energy)
    quarter = math.pi / 2 / math.sqrt(G / L)  # small-angle estimate of the first zero crossing
    assert len(back.events) == 1 and back.events[0].t == pytest.approx(quarter, rel=0.01)

    sim = Simulator(Pendulum(), q0=[0.3], u0=[0.0], output_dt=0.1, record=False,
                    writer=TrajectoryWriter(tmp_path / "w.h5", flush_every=3))
    assert sim.run(0.5) is None
    with pytest.raises(RuntimeError, match="reached its end"):
        sim.step()
    sim.run(1.0)
    assert sim.finish() is None
    streamed = load_trajectory(tmp_path / "w.h5")
    np.testing.assert_allclose(streamed.t, tr.t, atol=1e-15)
    np.testing.assert_allclose(streamed.q[:, 0], ref.y[0], atol=1e-8)


def test_failing_monitor_is_a_simulation_error():
    def gap(t, q, u):
        if t > 0.35:
            raise ZeroDivisionError("gap undefined")
        return 0.0

    with pytest.raises(SimulationError, match="ZeroDivisionError.*gap undefined") as info:
        simulate(Pendulum(), (0.0, 1.0), [0.3], [0.0], monitors={"gap": gap}, method="rk4", dt=0.1)
    assert info.value.trajectory.t[-1] == pytest.approx(0.3)


@pytest.mark.parametrize("method", list(Method))
def test_stepwise_runs_resets_and_extended_bounds(method):
    params, inputs = {"k": 1.0, "m": 1.0}, {"F": 0.0}
    sim = Simulator(SpringMass(), q0=[1.0], u0=[0.0], method=method, dt=0.005, params=params, inputs=inputs,
                    rtol=1e-10, atol=1e-12)
    for _ in range(5):
        sim.step()
    t_restart = sim.t
    sim.reset(q=[1.0], u=[0.0])  # start the cosine again from here
    sim.run(1.0)
    sim.reset()  # a restart exactly on the previous end
    tr = sim.run(2.0)
    tol = 0.6 * 0.005 if method is Method.SEMI_IMPLICIT_EULER else 1e-7  # Euler: error ~ dt/2
    assert sim.t == 2.0 and tr.t[-1] == 2.0
    jump = np.flatnonzero(tr.t == t_restart)
    assert len(jump) == 2 and tr.q[jump[1], 0] == 1.0  # the state before and after the reset
    later = slice(jump[1], None)
    np.testing.assert_allclose(tr.q[later, 0], np.cos(tr.t[later] - t_restart), atol=tol)
    assert np.all(np.diff(tr.t) >= 0) and len(np.flatnonzero(tr.t == 1.0)) == 1
