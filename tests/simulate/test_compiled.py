"""The simulation loops in C (issue 12, item 3) against the Python loop: same steps, same evaluations, states to
1e-12; events located as the Python detector does; failures stop the run with the same SimulationError."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.codegen import c_backend
from kane.io.trajectory import load_trajectory
from kane.simulate import Event, Simulator, make_projection
from kane.simulate.compiled import EventExpression, compiled_runner

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from models import pendulum_chain_kane  # noqa: E402

pytestmark = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")


@pytest.fixture(scope="module")
def chain():
    return kane.derive(pendulum_chain_kane(7)).compile(backend="c")


def python_loop(dyn, t_span, q0, u0, **kw):
    """The Python loop on the same compiled dynamics (the Simulator stepped from Python)."""
    sim = Simulator(dyn, t0=t_span[0], q0=q0, u0=u0, t_end=t_span[1], **kw)
    sim.run(t_span[1])
    return sim.finish()


def runs_in_c(dyn, q0, u0, t_end, **kw) -> bool:
    """Whether kane.simulate takes the C loop for this run."""
    sim = Simulator(dyn, q0=q0, u0=u0, t_end=t_end, **kw)
    options = {k: kw[k] for k in ("rtol", "atol", "dt", "min_step") if k in kw}
    return compiled_runner(sim, dyn, kw.get("method", "dopri5"), t_end=t_end, **options) is not None


def assert_same_run(a, b, tol=1e-12):
    """Same work counts, the same sample times, states and energies to ``tol`` relative to their scale."""
    for field in ("n_fev", "n_accepted", "n_rejected"):
        assert getattr(a.stats, field) == getattr(b.stats, field), field
    assert a.t.shape == b.t.shape
    np.testing.assert_allclose(a.t, b.t, rtol=0, atol=tol * max(1.0, abs(b.t[-1])))
    scale = max(1.0, float(np.abs(b.x).max()))
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=tol * scale)
    if b.energy is not None:
        np.testing.assert_allclose(a.energy, b.energy, rtol=0, atol=tol * max(1.0, float(np.abs(b.energy).max())))


def test_chain_dopri5_in_c_reproduces_the_python_loop(chain, tmp_path):
    q0, u0 = np.full(7, 0.3), np.linspace(-0.5, 0.5, 7)
    kw = dict(method="dopri5", rtol=1e-8, atol=1e-10, output_dt=0.01)
    fast = kane.simulate.simulate(chain, (0.0, 2.0), q0, u0, path=tmp_path / "run.h5", **kw)
    ref = python_loop(chain, (0.0, 2.0), q0, u0, **kw)
    assert fast.stats.n_rejected > 0 and fast.stats.n_accepted > 100  # the controller rejected and accepted
    assert_same_run(fast, ref)
    on_disk = load_trajectory(tmp_path / "run.h5")
    np.testing.assert_array_equal(on_disk.x, fast.x)
    np.testing.assert_array_equal(on_disk.energy, fast.energy)
    assert on_disk.stats.n_fev == ref.stats.n_fev
    # Sampled at every step: the same steps, their sizes equal to 1e-8 relative only, because the error estimate
    # (a sum of seven stages that cancels to ~1e-8 of their size) is summed in another order by numpy's BLAS
    # (with fused multiply-adds) than in C; the states on the output grid above agree to 1e-12.
    every = kane.simulate.simulate(chain, (0.0, 0.5), q0, u0, method="dopri5", rtol=1e-8, atol=1e-10)
    ref = python_loop(chain, (0.0, 0.5), q0, u0, method="dopri5", rtol=1e-8, atol=1e-10)
    assert every.stats.n_fev == ref.stats.n_fev and every.t.shape == ref.t.shape
    np.testing.assert_allclose(np.diff(every.t), np.diff(ref.t), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(every.x, ref.x, rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["rk4", "semi_implicit_euler"])
def test_fixed_step_methods_in_c_reproduce_the_python_loop(chain, method):
    q0, u0 = np.full(7, 0.3), np.zeros(7)
    kw = dict(method=method, dt=1e-3, output_dt=0.0125)  # samples between steps: dense output costs evaluations
    fast = kane.simulate.simulate(chain, (0.0, 0.3), q0, u0, **kw)
    ref = python_loop(chain, (0.0, 0.3), q0, u0, **kw)
    if method == "semi_implicit_euler":
        assert fast.stats.n_fev > fast.stats.n_accepted  # the evaluations of the dense output are counted
    assert_same_run(fast, ref)


def test_monitors_are_evaluated_in_python_at_the_samples_c_takes(chain):
    q0, u0 = np.full(7, 0.3), np.zeros(7)
    kw = dict(method="dopri5", rtol=1e-8, atol=1e-10, output_dt=0.05,
              monitors={"height": lambda t, q, u: float(np.cos(q[0]) + t)})
    assert runs_in_c(chain, q0, u0, 1.0, **kw)
    fast = kane.simulate.simulate(chain, (0.0, 1.0), q0, u0, **kw)
    np.testing.assert_array_equal(fast.residuals["height"], np.cos(fast.q[:, 0]) + fast.t)
    assert_same_run(fast, python_loop(chain, (0.0, 1.0), q0, u0, **kw))


def test_constant_inputs_go_to_c_and_a_callable_input_keeps_the_python_loop(chain):
    sim = Simulator(chain, q0=np.zeros(7), u0=np.zeros(7), t_end=1.0, method="rk4", dt=1e-3)
    assert compiled_runner(sim, chain, "rk4", dt=1e-3, t_end=1.0) is not None
    assert compiled_runner(sim, chain, "rk4", inputs=lambda t, q, u: {}, dt=1e-3, t_end=1.0) is None
    numpy_dyn = kane.derive(pendulum_chain_kane(2)).compile(backend="numpy")
    sim2 = Simulator(numpy_dyn, q0=np.zeros(2), u0=np.zeros(2), t_end=1.0)
    assert compiled_runner(sim2, numpy_dyn, "dopri5", t_end=1.0) is None


@pytest.fixture(scope="module")
def disk():
    s = kane.System("rolling_disk", gravity=(0, 0, -9.81))
    m, r = 1.5, 0.4
    s.add_body("disk", mass=m, inertia=(m * r**2 / 4, m * r**2 / 2, m * r**2 / 4))
    s.add_joint("ground", "disk", J.Free(), coordinates=["x", "y", "z", "e0", "e1", "e2", "e3"],
                speeds=["w1", "w2", "w3", "v1", "v2", "v3"])
    s.add_rolling_disk("contact", "disk", radius=r, axis=(0, 1, 0))
    return kane.derive(s, dependent=["v1", "v2", "v3"]).compile(backend="c")


def test_rolling_disk_with_projection_in_c_reproduces_the_python_loop(disk):
    lean, r = 0.2, 0.4
    q0 = np.array([0.0, -r * np.sin(lean), r * np.cos(lean), np.cos(lean / 2), np.sin(lean / 2), 0.0, 0.0])
    u0 = np.array([0.3, 5.0, 0.1])
    kw = dict(method="dopri5", rtol=1e-8, atol=1e-10, output_dt=0.05, projection=make_projection(disk),
              project_every=1)
    assert runs_in_c(disk, q0, u0, 1.0, **kw)
    fast = kane.simulate.simulate(disk, (0.0, 1.0), q0, u0, **kw)
    ref = python_loop(disk, (0.0, 1.0), q0, u0, **kw)
    assert_same_run(fast, ref)
    for name in ref.residuals:  # the Python monitors (the dependent block's condition), at the same samples
        np.testing.assert_allclose(fast.residuals[name], ref.residuals[name], rtol=1e-10)
    C = np.array([disk.configuration_residual(0.0, q) for q in fast.q])
    assert np.abs(C).max() < 1e-10  # the projection held the contact


def test_terminal_event_compiled_in_c_is_located_as_in_the_python_loop(chain):
    q1 = chain.model.q[0]
    down = Event("q1_zero", EventExpression(chain, q1), direction=-1, terminal=True)
    half = Event("q1_half", EventExpression(chain, q1 - sp.Rational(1, 2) * sp.Float(0.3)), direction=0)
    q0, u0 = np.full(7, 0.3), np.zeros(7)
    kw = dict(method="dopri5", rtol=1e-8, atol=1e-10, output_dt=0.01, events=[half, down])
    assert runs_in_c(chain, q0, u0, 5.0, **kw)
    assert not runs_in_c(chain, q0, u0, 5.0, events=[Event("python", lambda t, q, u: q[0])])
    fast = kane.simulate.simulate(chain, (0.0, 5.0), q0, u0, **kw)
    ref = python_loop(chain, (0.0, 5.0), q0, u0, **kw)
    assert [e.name for e in fast.events] == [e.name for e in ref.events] == ["q1_half", "q1_zero"]
    for a, b in zip(fast.events, ref.events):
        assert a.t == pytest.approx(b.t, abs=1e-12)
    assert fast.t[-1] == fast.events[-1].t == pytest.approx(ref.t[-1], abs=1e-12) and fast.t[-1] < 5.0
    assert abs(fast.q[-1, 0]) < 1e-10  # q1 = 0 at the terminal event
    assert_same_run(fast, ref)
    for kw_fixed in (dict(method="rk4", dt=2e-3), dict(method="semi_implicit_euler", dt=2e-3)):
        fast = kane.simulate.simulate(chain, (0.0, 2.0), q0, u0, events=[down], output_dt=0.01, **kw_fixed)
        ref = python_loop(chain, (0.0, 2.0), q0, u0, events=[down], output_dt=0.01, **kw_fixed)
        assert fast.events[-1].t == pytest.approx(ref.events[-1].t, abs=1e-12)
        assert_same_run(fast, ref)


def test_event_expression_names_symbols_it_cannot_use(chain):
    with pytest.raises(kane.KaneError, match="stranger"):
        EventExpression(chain, sp.Symbol("stranger") + chain.model.q[0])


def _runaway():
    """A unit mass on a stiff spring (k = 1e6 N/m): RK4 at dt = 0.01 s multiplies its amplitude ~1e5 per step."""
    s = kane.System("runaway", gravity=(0, 0, 0))
    s.add_body("m", mass=1.0, inertia=(1e-3, 1e-3, 1e-3))
    s.add_joint("ground", "m", J.Prismatic("x"), coordinates=["x"], speeds=["v"])
    s.add_spring("ground", (0, 0, 0), "m", (0, 0, 0), stiffness=1e6)
    return kane.derive(s).compile(backend="c")


def test_a_non_finite_state_in_c_stops_as_the_python_loop_does(tmp_path):
    dyn = _runaway()
    kw = dict(method="rk4", dt=0.01, output_dt=0.01)
    assert runs_in_c(dyn, [1e-3], [0.0], 10.0, **kw)
    with pytest.raises(kane.simulate.SimulationError) as fast:
        kane.simulate.simulate(dyn, (0.0, 10.0), [1e-3], [0.0], path=tmp_path / "fast.h5", **kw)
    with pytest.raises(kane.simulate.SimulationError) as ref:
        python_loop(dyn, (0.0, 10.0), np.array([1e-3]), np.array([0.0]), **kw)
    a, b = fast.value, ref.value
    assert "NaN or inf" in a.reason and a.reason == b.reason and a.mode == b.mode == "default"
    assert a.t == b.t and a.t_good == b.t_good and 0.0 < a.t_good < 10.0
    np.testing.assert_array_equal(a.q, b.q)
    assert np.isfinite(a.q).all() and np.isfinite(a.u).all()
    saved = load_trajectory(tmp_path / "fast.h5")
    assert saved.status.startswith("failed") and saved.t[-1] == pytest.approx(a.t_good)
    np.testing.assert_array_equal(saved.q[-1], a.q)
    with pytest.raises(kane.simulate.SimulationError) as fast:  # DOPRI5 asked for steps it cannot take
        kane.simulate.simulate(dyn, (0.0, 1.0), [1e-3], [0.0], method="dopri5", min_step=0.5)
    with pytest.raises(kane.simulate.SimulationError) as ref:
        python_loop(dyn, (0.0, 1.0), np.array([1e-3]), np.array([0.0]), method="dopri5", min_step=0.5)
    assert "below the minimum" in fast.value.reason and fast.value.reason == ref.value.reason
    assert fast.value.t == ref.value.t


def test_a_singular_mass_matrix_in_c_stops_as_the_python_loop_does(tmp_path):
    """A bead sliding on a massless arm through the pivot: M = diag(m r^2, m) is singular at r = 0, which RK4
    reaches exactly (r = 1 - t, dt = 1/8), so u' = 0/0 there."""
    s = kane.System("bead", gravity=(0, 0, 0))
    s.add_body("arm", mass=0.0, inertia=(0, 0, 0))
    s.add_body("bead", mass=1.0, inertia=(0, 0, 0))
    s.add_joint("ground", "arm", J.Revolute("z"), coordinates=["th"], speeds=["w"])
    s.add_joint("arm", "bead", J.Prismatic("x"), coordinates=["r"], speeds=["v"])
    dyn = kane.derive(s).compile(backend="c")
    np.testing.assert_allclose(dyn.mass_matrix(0.0, np.array([0.0, 0.5])), np.diag([0.25, 1.0]), atol=1e-15)
    q0, u0 = np.array([0.0, 1.0]), np.array([0.0, -1.0])
    kw = dict(method="rk4", dt=0.125)
    assert runs_in_c(dyn, q0, u0, 2.0, **kw)
    with pytest.raises(kane.simulate.SimulationError) as fast:
        kane.simulate.simulate(dyn, (0.0, 2.0), q0, u0, path=tmp_path / "bead.h5", **kw)
    with pytest.raises(kane.simulate.SimulationError) as ref:
        python_loop(dyn, (0.0, 2.0), q0, u0, **kw)
    assert fast.value.reason == ref.value.reason and fast.value.t == ref.value.t == 1.0
    assert fast.value.t_good == 0.875 and fast.value.mode == "default"
    np.testing.assert_array_equal(fast.value.q, [0.0, 0.125])
    saved = load_trajectory(tmp_path / "bead.h5")
    assert saved.status.startswith("failed") and saved.t[-1] == 0.875 and saved.q[-1, 1] == 0.125


def test_samples_beyond_the_buffer_are_all_stored(chain):
    """More samples in one step than the C buffer holds (1024): C hands them over in parts, none lost."""
    q0, u0 = np.full(7, 0.3), np.zeros(7)
    kw = dict(method="rk4", dt=0.05, output_dt=1e-5)
    fast = kane.simulate.simulate(chain, (0.0, 0.1), q0, u0, **kw)
    ref = python_loop(chain, (0.0, 0.1), q0, u0, **kw)
    assert fast.n_samples == ref.n_samples == 10001
    assert_same_run(fast, ref)


def test_the_step_limit_stops_the_c_loop_where_it_stops_the_python_loop(chain):
    q0, u0 = np.full(7, 0.3), np.zeros(7)
    kw = dict(method="dopri5", rtol=1e-8, atol=1e-10, output_dt=0.01, max_steps=57)
    with pytest.raises(kane.simulate.SimulationError, match="step limit") as fast:
        kane.simulate.simulate(chain, (0.0, 5.0), q0, u0, **kw)
    with pytest.raises(kane.simulate.SimulationError, match="step limit") as ref:
        python_loop(chain, (0.0, 5.0), q0, u0, **kw)
    # a step's end, not a grid time: equal to the step sizes' 1e-8 (see the first test)
    assert fast.value.t_good == pytest.approx(ref.value.t_good, rel=1e-8) and fast.value.t_good > 0.0
    np.testing.assert_allclose(fast.value.q, ref.value.q, rtol=0, atol=1e-8)
    assert fast.value.trajectory.stats.n_steps == ref.value.trajectory.stats.n_steps == 57
