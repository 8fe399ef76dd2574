"""The switching cart in the C period (kane.realtime.c_switching, c_switching_text, native_loop): the plan of its
switches read from the model's [[switching]] table; on a replayed hand, the C period's forces, states, modes and
log rows equal the Python period's (kane.realtime.mode_plant) to 1e-12 period by period, with the same events
(time, kind, constraint, impulse), for a plastic and a restitution lock and a run that starts locked; the lock
impulse obeys Newton's law of restitution; the conditioning guard fires at the same period on both paths; what C
does not run (a Lock switched by a Python function, modes not compiled) stays on Python with the reason logged."""

import json
import warnings
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
ON = "[[0.1505, 0.3503], [0.5507, 0.7001]]"  # two locks and two unlocks, mid-period, 150 to 200 periods apart


def _cart_file(tmp_path, on):
    """A copy of the caster-lock cart with its lock intervals replaced by ``on`` (TOML text)."""
    text = (EXAMPLES / "shopping_cart_caster_lock.toml").read_text()
    old = "on = [[2.0, 4.0], [6.0, 7.5]]"
    assert old in text
    path = tmp_path / "cart.toml"
    path.write_text(text.replace(old, f"on = {on}"))
    return path


_BUILT: dict = {}  # (model text, rules, options, compiled) -> (loaded, port, dynamics): derived and compiled once


def _cart(model_path, rules, compiled, options, rotational=False):
    """(loaded model, coupler port, SwitchingDynamics) of a cart file, built once for the same arguments (a rule
    with a Python function is built each time); ``rotational``: the coupler couples the cart's pose."""
    plain = rules is None or not any(callable(r.on) for r in rules)
    key = (Path(model_path).read_text(), tuple(rules or ()), compiled, options, rotational) if plain else None
    if key not in _BUILT:
        loaded = load_model(model_path)
        port = rt.add_coupler(loaded.system, "B", POINT, rotational=rotational)
        dyn = rt.SwitchingDynamics(loaded.derive(), rules or switching_rules(loaded), options,
                                   system=loaded.system if compiled else None)
        if key is None:
            return loaded, port, dyn
        _BUILT[key] = loaded, port, dyn
    return _BUILT[key]


def _loop(model_path, loop_path, log, duration=0.15, rules=None, compiled=True, options=rt.SwitchingOptions(),
          rotational=False, **loop_kw):
    """The cart pushed by a replayed hand (a recorded line with a sideways swing) through the coupler; with
    ``rotational`` the hand also turns about the vertical (0.2 rad at 2 Hz) and the coupler holds the cart's yaw."""
    loaded, port, dyn = _cart(model_path, rules, compiled, options, rotational)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    params = dict(loaded.parameters)
    gains = rt.CouplerGains(500.0, 5.0, rotational_stiffness=5.0, rotational_damping=0.1) if rotational else \
        rt.CouplerGains(500.0, 5.0)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=40.0, params=params)
    x0, _ = cp.point_state(0.0, q0, np.zeros(dyn.n_u))
    t = np.arange(int(round(duration / T))) * T
    w = 2 * np.pi * 3.0
    pos = x0 + np.stack([0.3 * t, 0.02 * np.sin(w * t), 0 * t], 1)
    vel = np.stack([0.3 + 0 * t, 0.02 * w * np.cos(w * t), 0 * t], 1)
    pose = {}
    if rotational:
        R0, _ = cp.pose_state(0.0, q0, np.zeros(dyn.n_u))
        yaw, rate = 0.2 * np.sin(4 * np.pi * t), 0.8 * np.pi * np.cos(4 * np.pi * t)
        c, s = np.cos(yaw), np.sin(yaw)
        Rz = np.zeros((len(t), 3, 3))
        Rz[:, 0, 0], Rz[:, 0, 1], Rz[:, 1, 0], Rz[:, 1, 1], Rz[:, 2, 2] = c, -s, s, c, 1.0
        pose = {"orientation": Rz @ R0, "angular_velocity": np.stack([0 * t, 0 * t, rate], 1)}
    dev = rt.Replay(t, pos, vel, max_force=40.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)), **pose)
    opts = rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL, loop_path=loop_path, **loop_kw)
    return rt.RealtimeLoop(cp, dev, q0, np.zeros(dyn.n_u), params=params, options=opts, log=log)


def _both(tmp_path, model, duration, **kw):
    """{path: (result, events, log file, loop)} of the same run on the Python and the C period."""
    runs = {}
    for path in (rt.LoopPath.PYTHON, rt.LoopPath.C):
        log = tmp_path / f"{path.value}.h5"
        loop = _loop(model, path, log, duration, **kw)
        result = loop.run()
        runs[path] = (result, list(loop.plant.events), h5py.File(log, "r"), loop)
    return runs[rt.LoopPath.PYTHON], runs[rt.LoopPath.C]


def _same_runs(a, b):
    """The C run (b) against the Python run (a): every log column but the timings to 1e-12, the modes and sample
    statuses exactly, the events' times to 1e-12 and their kinds, constraints, modes and impulses; the final state."""
    (ra, ea, fa, _), (rb, eb, fb, _) = a, b
    assert (ra.loop_path, rb.loop_path) == ("python", "c") and ra.status == rb.status == "completed"
    names = [n for n in fa if isinstance(fa[n], h5py.Dataset) and n not in ("compute_time", "lateness")]
    assert len(names) >= 15 and set(names) <= set(fb)
    for name in names:
        x, y = fa[name][()], fb[name][()]
        assert x.shape == y.shape, name
        if x.dtype.kind == "f":
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(y, x, err_msg=name)
    assert fb.attrs["modes"] == fa.attrs["modes"]
    assert len(ea) == len(eb)
    for x, y in zip(ea, eb):
        assert (y.name, y.kind, y.data["mode"]) == (x.name, x.kind, x.data["mode"])
        assert abs(y.t - x.t) <= 1e-12
        np.testing.assert_allclose(y.data["impulse"], x.data["impulse"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rb.q, ra.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rb.u, ra.u, rtol=0, atol=1e-12)
    assert json.loads(fb.attrs["counts"])["loop_path"] == "c"


def test_the_plan_of_the_example_cart_is_its_lock_table(tmp_path):
    loop = _loop(EXAMPLES / "shopping_cart_caster_lock.toml", rt.LoopPath.PYTHON, None)
    assert isinstance(loop.plant, ModePlant)
    plan = switch_plan(loop.plant, 0.0)
    # the file: locked from 2 s to 4 s and from 6 s to 7.5 s, plastic (restitution 0): all of it runs in C
    assert plan.switches == (ScheduledSwitch(2.0, "caster_lock", "lock", False, 0.0),
                             ScheduledSwitch(4.0, "caster_lock", "unlock", True, 0.0),
                             ScheduledSwitch(6.0, "caster_lock", "lock", False, 0.0),
                             ScheduledSwitch(7.5, "caster_lock", "unlock", True, 0.0))
    assert plan.reason is None
    # from 5 s on: the switches before the start are gone
    assert [s.t for s in switch_plan(loop.plant, 5.0).switches] == [6.0, 7.5]


@pytest.mark.parametrize("e", [0.0, 0.5])
def test_the_c_period_runs_the_switching_cart_as_the_python_period(tmp_path, e):
    model = _cart_file(tmp_path, ON)
    a, b = _both(tmp_path, model, 0.8, rules=[Lock("caster_lock", on=json.loads(ON), restitution=e)])
    _same_runs(a, b)
    (_, ea, fa, _), (_, eb, fb, _) = a, b
    # the file's intervals, each switch inside its period (not on a period's boundary)
    assert [(x.kind, round(x.t, 12)) for x in eb] == [("lock", 0.1505), ("unlock", 0.3503), ("lock", 0.5507),
                                                      ("unlock", 0.7001)]
    mode, u, t = fb["mode"][()], fb["u"][()], fb["t"][()]
    assert json.loads(fb.attrs["modes"]) == ["free", "caster_lock"]
    np.testing.assert_array_equal(mode, ((t > 0.1505) & (t < 0.3503) | (t > 0.5507) & (t < 0.7001)).astype(int))
    # the caster swivels before each lock and is held by it (w4, the swivel rate, is 0 in the locked mode)
    w4 = u[:, 3]
    assert abs(w4[150]) > 0.05 and np.max(np.abs(w4[mode == 1])) < 1e-12
    lock = eb[0].data
    assert abs(lock["impulse"][0]) > 1e-3 and lock["delta_kinetic"] < 0.0
    assert np.max(np.abs(fb["force"][()])) > 1.0
    if e:  # Newton's law: the same state before the first lock, the impulse (1 + e) times the plastic one
        plastic = _loop(model, rt.LoopPath.PYTHON, None, 0.16)  # the file's rule: restitution 0
        plastic.run()
        np.testing.assert_allclose(lock["impulse"][0], (1 + e) * plastic.plant.events[0].data["impulse"][0],
                                   rtol=1e-12)


def test_a_cart_that_starts_locked_unlocks_in_c(tmp_path):
    model = _cart_file(tmp_path, "[[2.0, 4.0]]")  # 3 RK4 steps a period: the unlock after the first of its period
    a, b = _both(tmp_path, model, 0.12, rules=[Lock("caster_lock", on=((-1.0, 0.0505),))], substeps=3)
    _same_runs(a, b)
    assert [(x.kind, round(x.t, 12)) for x in b[1]] == [("unlock", 0.0505)]
    assert json.loads(b[2].attrs["modes"]) == ["caster_lock", "free"]


def test_the_pose_coupled_cart_runs_in_c_as_on_python(tmp_path):
    model = _cart_file(tmp_path, "[[0.0505, 0.1003]]")
    a, b = _both(tmp_path, model, 0.15, rotational=True)
    _same_runs(a, b)
    assert [(x.kind, round(x.t, 12)) for x in b[1]] == [("lock", 0.0505), ("unlock", 0.1003)]
    assert np.max(np.abs(b[2]["torque"][()])) > 0.1 and "body_orientation" in b[2]


def test_the_guard_fires_at_the_same_period_on_both_paths(tmp_path):
    # cond_max 10: the free mode's dependent block has ||A||_F / sigma_min = 22.3 at the start (hand computed from
    # the rows [[0, 1, 0, 0], [-z5, z4, -z59, -L3]] at q0), checked every 8th period
    model = _cart_file(tmp_path, "[[2.0, 4.0]]")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        a, b = _both(tmp_path, model, 0.02, options=rt.SwitchingOptions(cond_max=10.0))
    python_says = [str(w.message) for w in seen if "cond_max = 10" in str(w.message)]
    assert len(python_says) == 1 and python_says[0].startswith("real-time loop: at t = 0.008 s")
    (ra, _, fa, la), (rb, _, fb, lb) = a, b
    assert ra.status == "completed" and la.plant.online_periods == 13  # the 8th period (again) and the 12 after it
    assert rb.loop_path == "c" and rb.status.startswith("failed: at t = 0.008 s the dependent speeds of mode free "
                                                         "have condition number 22")
    cond_py = float(python_says[0].split("condition number ")[1].split(" ")[0])
    cond_c = float(rb.status.split("condition number ")[1].split(" ")[0])
    assert cond_py == pytest.approx(cond_c, rel=1e-2)  # both printed to 3 digits
    assert fb["t"].shape[0] == 8  # the periods before it, equal to the Python run's
    np.testing.assert_allclose(fb["q"][()], fa["q"][:8], rtol=0, atol=1e-12)


def test_too_many_switches_fail_alike(tmp_path):
    # max_switches 1: the unlock at 0.1003 s is the second switch; both paths fail there, the plant left at the
    # start of that period (t = 0.1 s) with the lock the only event
    model = _cart_file(tmp_path, "[[0.0505, 0.1003]]")
    a, b = _both(tmp_path, model, 0.15, options=rt.SwitchingOptions(max_switches=1))
    (ra, ea, fa, _), (rb, eb, fb, _) = a, b
    first = ("failed: switching simulation failed at t = 0.1003 s in mode 'caster_lock': more than 1 mode changes "
             "(Zeno behaviour?)")
    assert ra.status.splitlines()[0] == rb.status == first and rb.loop_path == "c"
    assert [e.kind for e in ea] == [e.kind for e in eb] == ["lock"]
    assert rb.t == ra.t == pytest.approx(0.1, abs=1e-12)
    np.testing.assert_allclose(rb.u, ra.u, rtol=0, atol=1e-12)
    assert fb["t"].shape == fa["t"].shape == (101,)


def test_a_lock_switched_by_a_function_runs_on_python_with_the_reason_logged(tmp_path):
    model = _cart_file(tmp_path, "[[2.0, 4.0]]")
    reason = "the Lock on 'caster_lock' is switched by a Python function on(t, q, u), not by time intervals"
    loop = _loop(model, rt.LoopPath.C, tmp_path / "log.h5", duration=0.08,
                 rules=[Lock("caster_lock", on=lambda t, q, u: t > 0.05)])
    assert switch_plan(loop.plant, 0.0).reason == loop.path_reason == reason
    result = loop.run()
    assert result.loop_path == "python" and [e.kind for e in loop.plant.events] == ["lock"]
    with h5py.File(tmp_path / "log.h5", "r") as f:
        counts = json.loads(f.attrs["counts"])
    assert (counts["loop_path"], counts["loop_path_reason"]) == ("python", reason)


def test_the_slow_rate_scheme_over_a_switching_plant_stays_on_python(tmp_path):
    loop = _loop(_cart_file(tmp_path, "[[0.0505, 0.1003]]"), rt.LoopPath.C, None, duration=0.01, dynamics_every=2)
    assert loop.path_reason == "the slow-rate scheme over a switching plant is not run in C"
    assert loop.run().loop_path == "python"


def test_a_switching_plant_without_compiled_modes_is_refused_by_name(tmp_path):
    loop = _loop(_cart_file(tmp_path, "[[0.0505, 0.1003]]"), rt.LoopPath.C, None, duration=0.01, compiled=False)
    assert not isinstance(loop.plant, ModePlant)
    assert loop.path_reason == ("the switching plant's modes are not compiled (SwitchingDynamics without its system "
                                "embeds the constraints on line)")
    assert loop.run().loop_path == "python"
