"""Switching runs through kane.run (issue 28): a SwitchedDynamics under kane.run, and kane simulate's
switching_simulation request, give the samples, events and modes of the SwitchingSimulator stepped by hand (the
path before) to 1e-12; the run records the Python loop and why; SwitchedDynamics satisfies the Dynamics protocol
(energy = the hand formula); the settings are checked and the earlier keyword options warn."""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import kane
from kane.errors import ArgumentError, NotSupportedError
from kane.io.model_file import parse_model
from kane.io.trajectory import TrajectoryWriter, load_trajectory
from kane.simulate.run import RunOptions, State, run
from kane.switching import SwitchedDynamics, SwitchingSettings, SwitchingSimulator, switching_rules, \
    switching_simulation
from kane.switching.dynamics import LOOP_REASON
from kane.switching.hybrid import HybridSimulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _switching_files import BLOCKS, SLIDER  # noqa: E402

Q0, U0 = [0.0, 1.0], [1.5, -0.5]  # the blocks' file state: xa, xb [m]; va, vb [m/s]


def _same(new, old):
    """The same samples, residuals, events and modes to 1e-12, and the same work."""
    assert new.t.shape == old.t.shape and new.t.size > 10
    for a, b in ((new.t, old.t), (new.q, old.q), (new.u, old.u), (new.energy, old.energy)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert set(new.residuals) == set(old.residuals)
    for k in old.residuals:
        np.testing.assert_allclose(new.residuals[k], old.residuals[k], rtol=0, atol=1e-12)
    assert [(e.t, e.name, e.kind) for e in new.events] == [(e.t, e.name, e.kind) for e in old.events]
    assert new.modes == old.modes
    assert (new.stats.n_fev, new.stats.n_accepted) == (old.stats.n_fev, old.stats.n_accepted)


def test_kane_run_of_switched_dynamics_gives_the_switching_simulators_samples():
    lm = parse_model(BLOCKS, "blocks.toml")
    eqs, rules = lm.derive(), switching_rules(lm)
    with pytest.warns(FutureWarning, match="rtol, t_end"):
        sim = SwitchingSimulator(eqs, Q0, U0, rules, rtol=1e-10, atol=1e-12, output_dt=0.01, t_end=2.0)
    sim.run(2.0)
    old = sim.finish()
    options = RunOptions(t_end=2.0, rtol=1e-10, atol=1e-12, output_dt=0.01, projection="dynamics")
    new = run(SwitchedDynamics(eqs, rules), State(Q0, U0), options)
    _same(new, old)
    assert [(e.kind, e.t) for e in new.events] == [("lock", 0.5), ("unlock", 1.25)]  # the file's interval
    assert new.stats.loop == "python" and new.stats.loop_reason == LOOP_REASON
    assert new.stats.loop_text == "python loop: constraint switching runs its rules in Python"
    assert "lambda_latch" in new.residuals


def test_kane_simulates_request_streams_to_the_file_what_the_old_simulator_recorded(tmp_path):
    """kane simulate's run of the pushed slider (slide, stick, slip; inputs F = c t; the balance monitors)."""
    lm = parse_model(SLIDER, "slider.toml")
    s = lm.simulation
    with pytest.warns(FutureWarning):
        sim = SwitchingSimulator(lm.derive(), [lm.q0.get("x", 0.0)], [lm.u0.get("v", 0.0)], switching_rules(lm),
                                 t0=s.t_start, params=dict(lm.parameters), inputs=lm.input_function(),
                                 method=s.method, rtol=s.rtol, atol=s.atol, max_step=s.max_step,
                                 output_dt=s.output_dt, record_balance=True, t_end=s.t_end,
                                 description=f"{lm.name} (slider.toml)")
    assert sim.dynamics.q_names == ("x",) and sim.dynamics.u_names == ("v",)
    sim.run(s.t_end)
    old = sim.finish()
    request = switching_simulation(lm, s)
    calls = []
    new = request.start(TrajectoryWriter(tmp_path / "run.h5"), progress=lambda st: calls.append(st.t))
    _same(new, old)
    assert {"power", "constraint"} <= set(new.residuals) and [e.kind for e in new.events][:2] == ["stick", "slip"]
    assert len(calls) == new.stats.n_accepted and calls == sorted(calls)  # after every step, in time order
    saved = load_trajectory(tmp_path / "run.h5")
    _same(saved, old)
    assert saved.status == "completed" and saved.stats.loop_text.endswith(LOOP_REASON)
    assert isinstance(request.dynamics, SwitchedDynamics) and request.options.standard_monitors


def test_a_compiled_loop_is_refused_naming_why():
    lm = parse_model(BLOCKS, "blocks.toml")
    sd = SwitchedDynamics(lm.derive(), switching_rules(lm))
    with pytest.raises(ArgumentError, match="loop=compiled.*constraint switching runs its rules in Python"):
        run(sd, State(Q0, U0), RunOptions(t_end=1.0, loop="compiled"))


def test_switched_dynamics_satisfies_the_protocol():
    """Free mode of the blocks: no loads, so u' = 0; energy = mA va^2 / 2 + mB vb^2 / 2 by hand."""
    lm = parse_model(BLOCKS, "blocks.toml")
    sd = SwitchedDynamics(lm.derive(), switching_rules(lm))
    assert isinstance(sd, kane.Dynamics) and sd.capabilities.steps_itself and not sd.capabilities.compiled_loop
    assert sd.energy(0.0, Q0, U0) == pytest.approx(0.5 * 2.0 * 1.5**2 + 0.5 * 3.0 * 0.5**2, rel=1e-14)
    np.testing.assert_array_equal(sd.udot(0.0, Q0, U0), [0.0, 0.0])
    assert sd.description == "blocks" and sd.u_names == ("va", "vb")
    for call in (lambda: sd.mass_matrix(0.0, Q0), lambda: sd.loop_function()):
        with pytest.raises(NotSupportedError, match="SwitchedDynamics"):
            call()


def test_bad_settings_and_mixed_options_are_refused():
    lm = parse_model(BLOCKS, "blocks.toml")
    eqs, rules = lm.derive(), switching_rules(lm)
    with pytest.raises(ArgumentError, match="max_switches must be an integer >= 1"):
        SwitchingSettings(max_switches=0)
    with pytest.raises(ArgumentError, match="force_tol"):
        SwitchingSettings(force_tol=-1.0)
    with pytest.raises(ArgumentError, match="not both"):
        SwitchingSimulator(eqs, Q0, U0, rules, RunOptions(t_end=1.0), rtol=1e-9)
    with pytest.raises(ArgumentError, match="unknown options frobnicate"):
        SwitchingSimulator(eqs, Q0, U0, rules, frobnicate=1)
    with pytest.raises(ArgumentError, match="events are not taken by a switching run"):
        event = kane.Event("x", lambda t, q, u: q[0] - 1.0)
        SwitchingSimulator(eqs, Q0, U0, rules, replace(RunOptions(t_end=1.0), events=(event,)))


def test_hybrid_simulator_takes_run_options_as_its_keywords_did():
    """The blocks with pre-derived modes: RunOptions + SwitchingSettings give the earlier keywords' run, and the
    latch's plastic impulse keeps the momentum: v = (mA va + mB vb) / (mA + mB) = 0.3 m/s by hand."""
    lm = parse_model(BLOCKS, "blocks.toml")
    rules = switching_rules(lm)
    with pytest.warns(FutureWarning, match="HybridSimulator: the keyword options atol, output_dt, rtol"):
        old = HybridSimulator(lm.system, Q0, U0, rules, rtol=1e-10, atol=1e-12, output_dt=0.01).run(2.0)
    options = RunOptions(t_end=2.0, rtol=1e-10, atol=1e-12, output_dt=0.01, projection="dynamics")
    new = HybridSimulator(lm.system, Q0, U0, rules, options, SwitchingSettings()).run(2.0)
    _same(new, old)
    np.testing.assert_allclose(new.u[-1], [0.3, 0.3], rtol=1e-12)
    with pytest.raises(ArgumentError, match="record=False is not taken"):
        HybridSimulator(lm.system, Q0, U0, rules, replace(options, record=False))
