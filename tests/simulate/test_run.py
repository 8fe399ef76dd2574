"""kane.run, RunOptions and State (issue 28): options refused by name and unit, run() = the step-wise Simulator
sample for sample, the loop taken (and why not the compiled one) recorded in the trajectory and its file."""

import json
import math
import re
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics
from kane.errors import ArgumentError
from kane.io.trajectory import TrajectoryWriter, load_trajectory
from kane.simulate import Loop, ProjectionMode, RunOptions, Simulator, State
from kane.simulate.run import run

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _four_bar import four_bar_system  # noqa: E402

G, M, L = 9.81, 1.3, 0.7


def _pendulum():
    """A bob on a rod about y with a torque input tau [N m]: (m L^2) w' = -m g L sin(th) + tau."""
    s = kane.System("pendulum", gravity=(0, 0, -G))
    s.add_body("bob", mass=M, com=(0, 0, -L), inertia=(0.0, 0.0, 0.0))
    s.add_joint("ground", "bob", J.Revolute("y"), name="pivot", coordinates=["th"], speeds=["w"])
    s.add_joint_torque("pivot", s.input("tau"))
    return s


@pytest.fixture(scope="module")
def c_pendulum():
    return kane.derive(_pendulum()).compile("c")


@pytest.fixture(scope="module")
def np_pendulum():
    return kane.derive(_pendulum()).compile("numpy")


@pytest.mark.parametrize("field, value, words", [
    ("t_end", math.nan, "t_end must be a finite time [s]"),
    ("method", "leapfrog", "method: unknown integration method 'leapfrog'"),
    ("rtol", 0.0, "rtol must be a finite number > 0"),
    ("atol", -1e-9, "atol must be a finite number > 0 [state units]"),
    ("atol", [[1e-9]], "atol must be a finite number > 0 [state units]"),
    ("dt", 0.0, "dt must be a finite time > 0 s"),
    ("output_dt", -0.01, "output_dt must be a finite time > 0 s"),
    ("max_step", 0.0, "max_step must be a time > 0 s"),
    ("first_step", math.inf, "first_step must be a finite time > 0 s"),
    ("min_step", -1.0, "min_step must be a finite time >= 0 s"),
    ("max_wall_time", 0.0, "max_wall_time must be a time > 0 s"),
    ("max_steps", 0, "max_steps must be an integer >= 1 step"),
    ("project_every", 1.5, "project_every must be an integer >= 1 accepted step"),
    ("projection", "sideways", "projection must be one of"),
    ("loop", "gpu", "loop must be one of"),
    ("monitors", {"a": 3.0}, "monitors must map names to functions"),
    ("mode", "", "mode must be a non-empty name"),
])
def test_run_options_refuse_bad_values_by_field_and_unit(field, value, words):
    kw = {"t_end": 1.0, field: value}
    with pytest.raises(ArgumentError, match="run options: " + re.escape(words)):
        RunOptions(**kw)


def test_run_options_are_frozen_and_parse_names():
    opts = RunOptions(t_end=2, method="rk4", dt=1e-3, loop="python", projection="auto", atol=[1e-9, 1e-8])
    assert opts.method is kane.Method.RK4 and opts.loop is Loop.PYTHON and opts.projection is ProjectionMode.AUTO
    assert opts.atol == (1e-9, 1e-8) and opts.t_end == 2.0
    with pytest.raises(AttributeError):
        opts.rtol = 1.0
    with pytest.raises(ArgumentError, match="state: t must be a finite time"):
        State([0.0], [0.0], t=math.inf)


def test_run_equals_the_step_wise_simulator_sample_for_sample(np_pendulum):
    """run() (the Python loop for the numpy backend) against Simulator.run, the step-wise object, and simulate()."""
    q0, u0, kw = [1.2], [0.0], dict(rtol=1e-10, atol=1e-10, output_dt=0.01)
    traj = run(np_pendulum, State(q0, u0), RunOptions(t_end=3.0, **kw), inputs={"tau": 0.2})
    ref = Simulator(np_pendulum, q0=q0, u0=u0, t_end=3.0, inputs={"tau": 0.2}, **kw).run(3.0)
    old = kane.simulate.simulate(np_pendulum, (0.0, 3.0), q0, u0, inputs={"tau": 0.2}, **kw)
    assert traj.n_samples == 301
    for other in (ref, old):
        np.testing.assert_array_equal(traj.t, other.t)
        np.testing.assert_array_equal(traj.x, other.x)
        np.testing.assert_array_equal(traj.energy, other.energy)
        assert traj.stats.n_fev == other.stats.n_fev and traj.stats.n_accepted == other.stats.n_accepted
    # the physics: m L^2 w' = -m g L sin(th) + tau, so E' = tau w and E(t) - E(0) = tau (th(t) - th(0))
    np.testing.assert_allclose(traj.energy - traj.energy[0], 0.2 * (traj.q[:, 0] - q0[0]), atol=1e-8)


def test_compiled_loop_is_chosen_recorded_and_read_back(c_pendulum, tmp_path):
    q0, u0, opts = [1.2], [0.0], RunOptions(t_end=3.0, rtol=1e-10, atol=1e-10, output_dt=0.01)
    path = tmp_path / "c.h5"
    fast = run(c_pendulum, State(q0, u0), opts, TrajectoryWriter(path), inputs={"tau": 0.2})
    assert (fast.stats.loop, fast.stats.loop_reason, fast.stats.loop_text) == ("compiled", "", "compiled loop")
    slow = run(c_pendulum, State(q0, u0), RunOptions(t_end=3.0, rtol=1e-10, atol=1e-10, output_dt=0.01,
                                                     loop=Loop.PYTHON), inputs={"tau": 0.2})
    assert slow.stats.loop_text == "python loop: requested (loop=python)"
    np.testing.assert_allclose(fast.x, slow.x, rtol=0, atol=1e-12)  # the compiled loop repeats the Python one
    assert fast.stats.n_fev == slow.stats.n_fev and fast.stats.n_accepted == slow.stats.n_accepted
    back = load_trajectory(path)
    assert (back.stats.loop, back.stats.loop_reason) == ("compiled", "")
    np.testing.assert_array_equal(back.x, fast.x)
    from kane.viz.file_info import describe_file  # what `kane info` prints
    assert ("loop", "compiled loop") in describe_file(path).rows


@pytest.mark.parametrize("which, reason", [
    ("callable inputs", "python loop: the inputs are a function of (t, q, u)"),
    ("recursive", "python loop: the C loop runs Kane's equations (KaneDynamics), not RecursiveDynamics"),
    ("numpy backend", "python loop: backend 'numpy', not 'c'"),
    ("method", "python loop: method bdf has no compiled loop"),
])
def test_python_loop_is_recorded_with_its_reason(which, reason, c_pendulum, np_pendulum, tmp_path):
    dyn, inputs, method = c_pendulum, {"tau": 0.2}, "dopri5"
    if which == "callable inputs":
        inputs = lambda t, q, u: {"tau": 0.2}  # noqa: E731
    elif which == "recursive":
        dyn = RecursiveDynamics(_pendulum(), "aba")
    elif which == "numpy backend":
        dyn = np_pendulum
    else:
        method = "bdf"
    path = tmp_path / "py.h5"
    traj = run(dyn, State([1.2], [0.0]), RunOptions(t_end=0.5, method=method, output_dt=0.1),
               TrajectoryWriter(path), inputs=inputs)
    assert traj.stats.loop == "python" and traj.stats.loop_text.startswith(reason)
    assert load_trajectory(path).stats.loop_text == traj.stats.loop_text
    # the same motion whichever loop ran: th(0.5) of the C-backend compiled run to the integrators' tolerance
    ref = run(c_pendulum, State([1.2], [0.0]), RunOptions(t_end=0.5, output_dt=0.1, rtol=1e-10, atol=1e-12),
              inputs={"tau": 0.2})
    assert traj.q[-1, 0] == pytest.approx(ref.q[-1, 0], abs=1e-5)


def test_loop_compiled_refuses_a_run_that_cannot_take_it():
    with pytest.raises(ArgumentError, match="loop=compiled, but .*not RecursiveDynamics"):
        run(RecursiveDynamics(_pendulum(), "aba"), State([1.0], [0.0]), RunOptions(t_end=0.1, loop="compiled"))


def test_a_file_without_the_loop_fields_still_reads(np_pendulum, tmp_path):
    path = tmp_path / "old.h5"
    run(np_pendulum, State([1.0], [0.0]), RunOptions(t_end=0.2, output_dt=0.1), TrajectoryWriter(path))
    with h5py.File(path, "r+") as f:
        stats = json.loads(f.attrs["stats"])
        del stats["loop"], stats["loop_reason"]
        f.attrs["stats"] = json.dumps(stats)
    back = load_trajectory(path)
    assert (back.stats.loop, back.stats.loop_text) == ("", "") and back.stats.n_steps > 0


@pytest.mark.parametrize("dyn_kind", ["c", "numpy"])
def test_progress_is_called_and_may_stop_the_run(dyn_kind, c_pendulum, np_pendulum, tmp_path):
    dyn = c_pendulum if dyn_kind == "c" else np_pendulum
    seen = []

    def progress(sim):
        seen.append(sim.t)
        if len(seen) == 2:
            raise KeyboardInterrupt

    path = tmp_path / "stopped.h5"
    opts = RunOptions(t_end=1e4, method="rk4", dt=1e-3, output_dt=0.5)
    with pytest.raises(KeyboardInterrupt):
        run(dyn, State([1.0], [0.0]), opts, TrajectoryWriter(path), progress=progress)
    back = load_trajectory(path)
    assert back.status.startswith("interrupted") and len(seen) == 2 and 0 < seen[0] < seen[1] < 1e4
    assert back.t[-1] <= seen[1] + 1e-12


def test_projection_modes(np_pendulum):
    with pytest.raises(ArgumentError, match="projection dynamics"):
        run(RecursiveDynamics(_pendulum(), "aba"), State([1.0], [0.0]),
            RunOptions(t_end=0.1, projection=ProjectionMode.DYNAMICS))
    # AUTO on a model without holonomic rows and without a projection of its own: no projection, same run
    a = run(np_pendulum, State([1.0], [0.0]), RunOptions(t_end=0.5, output_dt=0.1, projection="auto"))
    b = run(np_pendulum, State([1.0], [0.0]), RunOptions(t_end=0.5, output_dt=0.1))
    np.testing.assert_array_equal(a.x, b.x)


def test_the_compiled_loop_calls_progress_within_long_stretches(c_pendulum, monkeypatch):
    """20,000 RK4 steps with one sample at the end: one stretch in C without progress; with it, stretches of the
    steps that take PROGRESS_S (here ~0 s: the floor of 16 steps); the samples and counts are those of the run
    without progress (a stretch ends before a step)."""
    import kane.simulate.compiled as compiled
    monkeypatch.setattr(compiled, "PROGRESS_S", 1e-12)
    opts = RunOptions(t_end=20.0, method="rk4", dt=1e-3, output_dt=20.0)
    calls = []
    with_progress = run(c_pendulum, State([1.0], [0.0]), opts, progress=lambda sim: calls.append(sim.stats.n_steps))
    plain = run(c_pendulum, State([1.0], [0.0]), opts)
    assert with_progress.stats.loop == plain.stats.loop == "compiled"
    assert len(calls) > 1000 and calls == sorted(calls) and calls[-1] == 20000 and calls[1] - calls[0] == 16
    np.testing.assert_array_equal(with_progress.x, plain.x)
    assert with_progress.stats.n_fev == plain.stats.n_fev and with_progress.t.tolist() == [0.0, 20.0]


def test_projection_auto_puts_a_four_bar_back_on_its_loop():
    """AUTO on Kane's equations with a loop closure: the assembly projection (kane.simulate.make_projection) every
    step; the largest |C(q)| over the run stays at the projection's tolerance, well below the run without it."""
    s = four_bar_system(G)
    dyn = kane.derive(s).compile("numpy")
    q0 = kane.assemble(dyn, 0.0, [0.7, -0.4, 1.9]).q
    worst = {}
    for mode in ("auto", "none"):
        traj = run(dyn, State(q0, [1.0]), RunOptions(t_end=2.0, rtol=1e-6, atol=1e-6, output_dt=0.05, projection=mode))
        worst[mode] = max(float(np.max(np.abs(dyn.holonomic_rows(0.0, q)[0]))) for q in traj.q)
    assert worst["auto"] < 1e-10 < worst["none"]
    c_dyn = kane.derive(s).compile("c")
    traj = run(c_dyn, State(q0, [1.0]), RunOptions(t_end=0.2, output_dt=0.05, projection="auto"))
    assert traj.stats.loop_text == ("compiled loop: one step at a time, the projection onto the constraints in "
                                    "Python after each")
