"""The switching cart in the C period (kane.realtime.c_switching, native_loop.why_not_c): the plan of its switches
read from the model's [[switching]] table (the caster lock's time intervals, lock = impulse, unlock = identity), and
a loop asked for the C period that runs the cart on the Python path with the reason in its log, the same rows and
events as a Python run, the lock and unlock at the file's times."""

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from kane import realtime as rt
from kane.io import load_model
from kane.realtime.c_switching import ScheduledSwitch, switch_plan
from kane.realtime.mode_plant import ModePlant
from kane.switching import Lock
from kane.switching.model_table import switching_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
T = 1e-3  # [s]
POINT = (-0.3, 0.0, 0.0)


def _cart_file(tmp_path, on):
    """A copy of the caster-lock cart with its lock intervals replaced by ``on`` (TOML text)."""
    text = (EXAMPLES / "shopping_cart_caster_lock.toml").read_text()
    old = "on = [[2.0, 4.0], [6.0, 7.5]]"
    assert old in text
    path = tmp_path / "cart.toml"
    path.write_text(text.replace(old, f"on = {on}"))
    return path


def _loop(model_path, loop_path, log, duration=0.15, rules=None, compiled=True):
    """The cart pushed by a replayed hand (a recorded line with a sideways swing) through the coupler."""
    loaded = load_model(model_path)
    port = rt.add_coupler(loaded.system, "B", POINT)
    dyn = rt.SwitchingDynamics(loaded.derive(), rules or switching_rules(loaded),
                               system=loaded.system if compiled else None)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    params = dict(loaded.parameters)
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(500.0, 5.0), max_force=40.0, params=params)
    x0, _ = cp.point_state(0.0, q0, np.zeros(dyn.n_u))
    t = np.arange(int(round(duration / T))) * T
    w = 2 * np.pi * 3.0
    pos = x0 + np.stack([0.3 * t, 0.02 * np.sin(w * t), 0 * t], 1)
    vel = np.stack([0.3 + 0 * t, 0.02 * w * np.cos(w * t), 0 * t], 1)
    dev = rt.Replay(t, pos, vel, max_force=40.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL, loop_path=loop_path)
    return rt.RealtimeLoop(cp, dev, q0, np.zeros(dyn.n_u), params=params, options=opts, log=log)


def test_the_plan_of_the_example_cart_is_its_lock_table(tmp_path):
    loop = _loop(EXAMPLES / "shopping_cart_caster_lock.toml", rt.LoopPath.PYTHON, None)
    assert isinstance(loop.plant, ModePlant)
    plan = switch_plan(loop.plant, 0.0)
    # the file: locked from 2 s to 4 s and from 6 s to 7.5 s, plastic (restitution 0)
    assert plan.switches == (ScheduledSwitch(2.0, "caster_lock", "lock", False, 0.0),
                             ScheduledSwitch(4.0, "caster_lock", "unlock", True, 0.0),
                             ScheduledSwitch(6.0, "caster_lock", "lock", False, 0.0),
                             ScheduledSwitch(7.5, "caster_lock", "unlock", True, 0.0))
    assert plan.reason == ("locking 'caster_lock' at t = 2 s is an impulse (restitution 0) that changes the speeds, "
                           "and the impulse is not compiled to C")
    # from 5 s on: the switches before the start are gone
    assert [s.t for s in switch_plan(loop.plant, 5.0).switches] == [6.0, 7.5]


def test_the_switching_cart_asked_for_c_runs_on_python_with_the_reason_logged(tmp_path):
    model = _cart_file(tmp_path, "[[0.0505, 0.1003]]")
    runs = {}
    for path in (rt.LoopPath.PYTHON, rt.LoopPath.C):
        log = tmp_path / f"{path.value}.h5"
        loop = _loop(model, path, log)
        result = loop.run()
        runs[path] = (result, [(e.kind, round(e.t, 12)) for e in loop.plant.events], h5py.File(log, "r"))
    (a, ev_a, fa), (b, ev_b, fb) = runs[rt.LoopPath.PYTHON], runs[rt.LoopPath.C]
    assert (a.loop_path, b.loop_path) == ("python", "python") and a.deadlines.periods == b.deadlines.periods == 150
    assert ev_a == ev_b == [("lock", 0.0505), ("unlock", 0.1003)]  # the file's interval
    counts = json.loads(fb.attrs["counts"])
    assert counts["loop_path"] == "python"
    assert counts["loop_path_reason"] == ("locking 'caster_lock' at t = 0.0505 s is an impulse (restitution 0) that "
                                          "changes the speeds, and the impulse is not compiled to C")
    assert json.loads(fa.attrs["counts"])["loop_path_reason"] is None
    for name in ("force", "mode", "point_position", "hand_position"):
        np.testing.assert_array_equal(fb[name][()], fa[name][()], err_msg=name)
    assert np.max(np.abs(fa["force"][()])) > 1.0 and set(np.unique(fa["mode"][()]).tolist()) == {0.0, 1.0}


@pytest.mark.parametrize("on, reason", [
    (lambda t, q, u: t > 0.05, "the Lock on 'caster_lock' is switched by a Python function on(t, q, u), not by "
                               "time intervals"),
    (((-1.0, 0.0505),), "the compiled modes' switches are not run in the C period yet (issue 32)"),
])
def test_what_the_plan_refuses_is_named(tmp_path, on, reason):
    model = _cart_file(tmp_path, "[[2.0, 4.0]]")
    loop = _loop(model, rt.LoopPath.C, tmp_path / "log.h5", duration=0.01, rules=[Lock("caster_lock", on=on)])
    plan = switch_plan(loop.plant, 0.0)
    assert plan.reason == reason
    assert loop.path_reason == reason
    if not callable(on):  # started locked: the one switch is the unlock at 0.0505 s, the identity on (q, u)
        assert plan.switches == (ScheduledSwitch(0.0505, "caster_lock", "unlock", True, 0.0),)


def test_a_switching_plant_without_compiled_modes_is_refused_by_name(tmp_path):
    loop = _loop(_cart_file(tmp_path, "[[0.0505, 0.1003]]"), rt.LoopPath.C, None, duration=0.01, compiled=False)
    assert not isinstance(loop.plant, ModePlant)
    assert loop.path_reason == ("the switching plant's modes are not compiled (SwitchingDynamics without its system "
                                "embeds the constraints on line)")
    assert loop.run().loop_path == "python"
