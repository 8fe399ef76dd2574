"""Events: crossing times against analytic ones, direction, terminal stop, restart, NaN from an event function."""

import math

import numpy as np
import pytest

from kane.simulate import Event, EventDetector, EventFunctionError, Method, SimulationError, Simulator, simulate

G = 9.81
H0 = 10.0
T_FLOOR = math.sqrt(2 * H0 / G)


class FallingMass:
    """Height z [m] and vertical speed w [m/s] of a mass in uniform gravity: z = H0 - g t^2 / 2."""

    n_q, n_u = 1, 1
    q_names, u_names = ("z",), ("w",)

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return np.array([-G])


class Oscillator:
    """x'' = -x from x = 1, v = 0: x = cos t."""

    n_q, n_u = 1, 1

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return -q


FLOOR = Event("floor", lambda t, q, u: q[0], direction=-1, terminal=True)


@pytest.mark.parametrize("method, dt, tol", [
    (Method.DOPRI5, None, 1e-10),
    (Method.RK4, 0.1, 1e-10),
    (Method.RADAU, None, 1e-10),
    (Method.BDF, None, 1e-5),
])
def test_falling_mass_reaches_floor_at_analytic_time(method, dt, tol):
    tr = simulate(FallingMass(), (0.0, 5.0), [H0], [0.0], method=method, dt=dt, events=[FLOOR], output_dt=0.05)
    assert len(tr.events) == 1
    rec = tr.events[0]
    assert rec.name == "floor" and rec.kind == "terminal" and rec.data["direction"] == -1
    assert abs(rec.t - T_FLOOR) < tol
    assert tr.t[-1] == rec.t  # the run stops at the event: its state is the last sample
    assert abs(tr.q[-1, 0]) < 10 * tol * G * T_FLOOR
    assert tr.u[-1, 0] == pytest.approx(-G * T_FLOOR, abs=100 * tol)
    assert tr.status == "completed" and tr.t[-2] < rec.t


def test_terminal_event_stops_the_run_before_t_end():
    tr = simulate(FallingMass(), (0.0, 100.0), [H0], [0.0], events=[FLOOR])
    assert tr.t[-1] < 1.5 and tr.t[-1] == pytest.approx(T_FLOOR, abs=1e-10)
    assert tr.modes == [(0.0, tr.t[-1], "default")]


def test_nonterminal_crossings_with_directions():
    both = Event("zero", lambda t, q, u: q[0])
    rising = Event("rising", lambda t, q, u: q[0], direction=+1)
    falling = Event("falling", lambda t, q, u: q[0], direction=-1)
    for method, dt in ((Method.DOPRI5, None), (Method.RK4, 0.01), (Method.SEMI_IMPLICIT_EULER, 1e-3)):
        tr = simulate(Oscillator(), (0.0, 10.0), [1.0], [0.0], method=method, dt=dt, rtol=1e-11, atol=1e-13,
                      events=[both, rising, falling])
        tol = 1e-3 if method is Method.SEMI_IMPLICIT_EULER else 1e-8
        times = {name: [r.t for r in tr.events if r.name == name] for name in ("zero", "rising", "falling")}
        np.testing.assert_allclose(times["zero"], [math.pi / 2, 3 * math.pi / 2, 5 * math.pi / 2], atol=tol)
        np.testing.assert_allclose(times["rising"], [3 * math.pi / 2], atol=tol)
        np.testing.assert_allclose(times["falling"], [math.pi / 2, 5 * math.pi / 2], atol=tol)
        assert all(r.kind == "crossing" for r in tr.events)
        assert [r.t for r in tr.events] == sorted(r.t for r in tr.events)
        assert tr.t[-1] == 10.0


def test_bouncing_mass_restarts_after_terminal_event_without_refiring():
    sim = Simulator(FallingMass(), q0=[H0], u0=[0.0], events=[FLOOR], rtol=1e-10, atol=1e-12)
    impacts = []
    for _ in range(3):
        sim.run(20.0)
        assert sim.terminated
        impacts.append(sim.t)
        z, w = sim.state
        with pytest.raises(RuntimeError, match="terminal event 'floor'"):
            sim.step()
        sim.reset(q=z, u=-w, mode=f"flight{len(impacts)}")  # elastic bounce
    np.testing.assert_allclose(impacts, [T_FLOOR, 3 * T_FLOOR, 5 * T_FLOOR], atol=1e-9)
    tr = sim.trajectory()
    assert [m[2] for m in tr.modes] == ["default", "flight1", "flight2", "flight3"]
    assert tr.modes[1][:2] == (impacts[0], impacts[1])


def test_nan_from_event_function_names_event_and_time():
    bad = Event("sensor", lambda t, q, u: float("nan") if t > 1.0 else 1.0)
    with pytest.raises(SimulationError, match=r"event function 'sensor' returned nan at t = 1\.25 s") as info:
        simulate(Oscillator(), (0.0, 3.0), [1.0], [0.0], method=Method.RK4, dt=0.25, events=[bad])
    assert isinstance(info.value.__cause__, EventFunctionError)
    assert info.value.trajectory.t[-1] == 1.0
    det = EventDetector([bad], n_q=1)
    with pytest.raises(EventFunctionError, match="'sensor'.*t = 2.5"):
        det.start(2.5, np.array([0.0, 0.0]))


def test_event_validation():
    with pytest.raises(ValueError, match="direction"):
        Event("e", lambda t, q, u: 0.0, direction=2)
    with pytest.raises(ValueError, match="name"):
        Event("", lambda t, q, u: 0.0)
    with pytest.raises(ValueError, match="unique"):
        EventDetector([FLOOR, FLOOR], n_q=1)
