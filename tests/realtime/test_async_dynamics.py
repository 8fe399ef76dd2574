"""The dynamics in a process of their own (kane.realtime.async_dynamics): the plant's steps against an offline RK4
integration of the same mean forces (whatever the timing), the coupler one slow step behind, a worker that fails
or dies."""

import os
import signal
import time

import h5py
import numpy as np
import pytest

from kane import realtime as rt
from kane.errors import ArgumentError, KaneError
from kane.options import Method
from kane.simulate import Simulator

T, K = 1e-3, 4  # the loop's period [s] and the periods per dynamics step


def _loop(chain, closed_path, tmp_path, clock, duration=0.4):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(500.0, 500.0 * K * T), max_force=50.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    hand = rt.SimulatedHand(closed_path(x0, period=1.0, radius=0.2), max_force=50.0,
                            workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    options = rt.LoopOptions(rate=1 / T, duration=duration, dynamics_every=K, dynamics_process=True, clock=clock)
    return rt.RealtimeLoop(cp, hand, np.zeros(7), np.zeros(7), options=options, log=tmp_path / f"{clock.name}.h5")


@pytest.mark.parametrize("clock", [rt.ClockMode.VIRTUAL, rt.ClockMode.REAL])
def test_each_step_holds_the_mean_coupler_force_of_its_periods(chain, closed_path, tmp_path, clock):
    loop = _loop(chain, closed_path, tmp_path, clock)
    assert isinstance(loop.plant, rt.AsyncDynamics)
    assert (loop.plant.pid is not None) == (clock is rt.ClockMode.REAL)  # a worker process on the real clock
    result = loop.run()
    assert result.status == "completed" and loop.plant.pid is None  # the worker has ended
    with h5py.File(tmp_path / f"{clock.name}.h5", "r") as f:
        force, q = f["force"][:], f["q"][:]
        assert len(force) == 400 and "late_dynamics_steps" in f.attrs["counts"]
    assert np.max(np.abs(force)) > 1.0
    # offline, on the Python Simulator (RK4 in numpy, not the C stepper the plant runs): 100 steps of K T, each
    # with the mean of its K periods' coupler forces held; the run's last state is the plant's after all of them
    dyn, port = chain
    w = dyn.model.input_values()
    index = [dyn.input_names.index(n) for n in port.inputs]
    sim = Simulator(dyn, t0=0.0, q0=np.zeros(7), u0=np.zeros(7), method=Method.RK4, dt=K * T,
                    inputs=lambda t, q, u: w, record=False, record_energy=False)
    states = [sim.state]
    for mean in force.reshape(-1, K, 3).mean(axis=1):
        w[index] = mean
        sim.step()
        states.append(sim.state)
    assert result.t == pytest.approx(0.4, abs=1e-12)
    np.testing.assert_allclose(result.q, sim.state[0], rtol=0, atol=1e-11)
    np.testing.assert_allclose(result.u, sim.state[1], rtol=0, atol=1e-10)
    # the log keeps the plant's own states at its steps (its rows hold the extrapolations the coupler saw), with
    # their energies: every one of them is the offline run's
    steps = rt.load_realtime_log(tmp_path / f"{clock.name}.h5").steps
    np.testing.assert_allclose(steps.t, K * T * np.arange(101), rtol=0, atol=1e-12)
    np.testing.assert_allclose(steps.q, [s[0] for s in states], rtol=0, atol=1e-11)
    np.testing.assert_allclose(steps.u, [s[1] for s in states], rtol=0, atol=1e-10)
    np.testing.assert_allclose(steps.energy, dyn.energy(steps.t, steps.q, steps.u), rtol=1e-12, atol=1e-12)
    # the coupler one step behind: nothing of the first step is seen before it is handed over (the chain starts at
    # rest, so until then the state it sees is the start); on the virtual clock it is taken back K periods later
    assert np.all(q[:K + 1] == 0.0)
    if clock is rt.ClockMode.VIRTUAL:
        assert np.all(q[:2 * K] == 0.0) and np.any(q[2 * K] != 0.0)


def test_a_worker_that_dies_fails_the_run_with_zero_force_and_the_log_saved(chain, closed_path, tmp_path):
    loop = _loop(chain, closed_path, tmp_path, rt.ClockMode.REAL, duration=30.0)
    writes = []
    device_write = loop.device.write_force
    loop.device.write_force = lambda t, force: (writes.append(tuple(force)), device_write(t, force))
    loop.start()
    while len(writes) < 100:
        time.sleep(0.01)
    os.kill(loop.plant.pid, signal.SIGKILL)
    result = loop.join()
    assert result.status.startswith("failed: the dynamics process ended (exit code -9)")
    assert writes[-1] == (0.0, 0.0, 0.0) and result.deadlines.periods < 20000
    with h5py.File(tmp_path / "REAL.h5", "r") as f:
        assert f.attrs["status"] == result.status and f["t"].shape == (result.deadlines.periods,)


class _Breaking:
    """A plant whose third step raises KaneError (as a rolling contact leaving its patch does)."""

    def __init__(self):
        self.w, self.t, self.steps = np.zeros(3), 0.0, 0

    def state(self):
        return self.t, np.array([self.t]), np.array([1.0])

    def advance(self, period, n, force):
        self.steps += 1
        if self.steps == 3:
            raise KaneError("contact 'rim' left its patch at t = 0.02 s")
        self.t += period


class _Dynamics:
    def qdot(self, t, q, u, params=None):
        return np.array([1.0])


@pytest.mark.parametrize("process", [True, False])
def test_a_step_that_fails_in_the_worker_raises_with_its_message(process):
    plant = rt.AsyncDynamics(_Breaking(), 2, _Dynamics(), process=process)
    with pytest.raises(KaneError, match=r"the dynamics failed: KaneError: contact 'rim' left its patch"):
        for _ in range(20):
            plant.advance(0.005, 1, (1.0, 0.0, 0.0))
        plant.close()
    plant.close()  # the worker ends
    t, q, _ = plant.state()  # extrapolated from the last good step: q' = 1
    assert q[0] == pytest.approx(t, abs=1e-12)


def test_a_worker_without_a_slower_rate_is_refused():
    with pytest.raises(ArgumentError,
                       match="dynamics_process steps the dynamics every dynamics_every periods in a worker; it needs "
                             "dynamics_every >= 2, got 1"):
        rt.LoopOptions(dynamics_process=True)
