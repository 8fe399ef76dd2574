"""Event-driven contact (kane.switching.contact_events): the compiled path (kane.switching.contact_events_fast:
numba DOPRI5 segments, analytic rows and rates, events on the dense output) against the Python loop (scipy's DOP853
on the Python right-hand side, rates by central differences) on the same model in the same process, best of
``repeat`` after a warm-up run that compiles. Issue 30's target: the event-driven block on the incline at least
10x faster than the same model in the Python loop.

Scenes (all constant inclines, sliding from rest, checked against x = a t^2 / 2, a = g (sin th - mu_k cos th)):

* ``block``: a block whose contact point is its centre of mass on the plane z = 0 under gravity tilted by th;
* ``box``: a box on the plane n . x = 0 tilted by th (its 8 corners, 4 touching: redundant rows);
* ``model``: examples/box_on_incline.toml (what run_contacts runs: the compiled path on the model's FreeBodies,
  built and checked in each run) against the Python loop on the model's own equations (KaneDynamics, SystemBodies
  point Jacobians, coal contact points), both given the model's compiled equations.

The ramped incline (gravity turning with t) does not take the compiled path (FreeBodies with gravity(t) is a
Python callable): its Python-loop time is printed for reference only.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from kane.model.contact import ContactMaterial
from kane.switching import (ContactOptions, ContactScheme, EventOptions, FreeBodies, PlaneContacts, simulate_contacts,
                            simulate_events)

__all__ = ["run"]

G = 9.81
EVENTS = ContactOptions(ContactScheme.EVENT_DRIVEN)
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "box_on_incline.toml"


def _best(fn, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _block(theta, mu_s, mu_k, gravity=None):
    bodies = FreeBodies(["block"], [2.0], [np.diag([0.1, 0.2, 0.3])],
                        gravity=G * np.array([math.sin(theta), 0.0, -math.cos(theta)]) if gravity is None else gravity)
    scene = PlaneContacts(bodies, [{"body": "block", "rho": np.zeros(3), "normal": (0, 0, 1.0), "offset": 0.0,
                                    "shape_a": "plane", "shape_b": "block", "material": ContactMaterial(mu_s, mu_k)}])
    return bodies, scene, np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], np.array([1.0, 0.0, 0.0])


def _box(theta, mu_s, mu_k):
    half = np.array([0.2, 0.1, 0.05])
    a, b, c = 2 * half
    bodies = FreeBodies(["box"], [2.0], [2.0 / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])])
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    scene = PlaneContacts.of_shapes(bodies, boxes={"box": half}, normal=n, material=ContactMaterial(mu_s, mu_k))
    q0 = np.r_[half[2] * n, math.cos(theta / 2), 0.0, math.sin(theta / 2), 0.0]
    return bodies, scene, q0, np.array([math.cos(theta), 0.0, -math.sin(theta)])


def _scene_runs(bodies, scene, q0, h, t_end):
    def compiled():
        return simulate_events(bodies, scene, q0, np.zeros(6), h, t_end, EVENTS, events=EventOptions(engine="compiled"))

    def python():
        return simulate_events(bodies, scene, q0, np.zeros(6), h, t_end, EVENTS, events=EventOptions(engine="python"))

    return compiled, python


def _model_runs(h, t_end):
    from kane.io import load_model
    from kane.switching.contact_events_model import model_event_run
    from kane.switching.contact_run import model_contact_problem

    loaded = load_model(EXAMPLE)
    dyn = loaded.derive().compile()
    params = dict(loaded.parameters)
    bodies, points = model_contact_problem(dyn.equations, params)
    q0, u0 = loaded.initial_state(dyn)

    def compiled():  # what run_contacts runs for --contact-scheme event-driven (the model's FreeBodies built here)
        return model_event_run(dyn, params, bodies, points, points, q0, u0, h, t_end, EVENTS)[0]

    def python():
        return simulate_contacts(dyn, points, q0, u0, h, t_end, EVENTS, bodies=bodies, params=params)

    return compiled, python


def run(repeat: int = 3, h: float = 0.01, t_end: float = 1.0) -> dict:
    theta, mu_s, mu_k = 0.6, 0.5, 0.4
    a = G * (math.sin(theta) - mu_k * math.cos(theta))
    th_model = math.radians(30.0)
    a_model = G * (math.sin(th_model) - 0.25 * math.cos(th_model))
    down_model = np.array([math.cos(th_model), 0.0, -math.sin(th_model)])
    results = {}
    cases = (("block", _block(theta, mu_s, mu_k), a), ("box", _box(theta, mu_s, mu_k), a),
             ("model", None, a_model))
    for name, scene, acc in cases:
        if scene is None:
            compiled, python = _model_runs(h, 0.5)
            down = down_model
        else:
            bodies, contacts, q0, down = scene
            compiled, python = _scene_runs(bodies, contacts, q0, h, t_end)
        compiled()  # warm-up: numba compiles (or loads its cache)
        fast_s, fast = _best(compiled, repeat)
        slow_s, slow = _best(python, repeat)
        errors = [float(np.abs((r.q[:, :3] - r.q[0, :3]) @ down - acc * r.t ** 2 / 2).max()) for r in (fast, slow)]
        results[name] = {"compiled_s": fast_s, "python_s": slow_s, "ratio": slow_s / fast_s,
                         "compiled_rhs": int(fast.iterations.sum()), "python_rhs": int(slow.iterations.sum()),
                         "compiled_error_m": errors[0], "python_error_m": errors[1], "engine": fast.engine}
        print(f"{name:6s} compiled {fast_s * 1e3:8.2f} ms ({results[name]['compiled_rhs']} RHS, error "
              f"{errors[0]:.1e} m) | python loop {slow_s * 1e3:8.1f} ms ({results[name]['python_rhs']} RHS, error "
              f"{errors[1]:.1e} m) | python / compiled = {slow_s / fast_s:.1f}x")
    k = 0.5
    ramp = _block(theta, mu_s, mu_k, gravity=lambda t: G * np.array([math.sin(k * t), 0.0, -math.cos(k * t)]))
    ramp_s, ramp_run = _best(lambda: simulate_events(ramp[0], ramp[1], ramp[2], np.zeros(6), h, 1.5, EVENTS), 1)
    switch_error = abs(ramp_run.events[0].t - math.atan(mu_s) / k)
    results["ramped"] = {"python_s": ramp_s, "engine": ramp_run.engine, "reason": ramp_run.engine_reason,
                         "switch_error_s": switch_error}
    print(f"ramped {ramp_run.engine} loop ({ramp_run.engine_reason}) {ramp_s * 1e3:8.1f} ms, stick->slip time error "
          f"{switch_error:.1e} s")
    print("(a shared 2-core VM when recorded)")
    return results


if __name__ == "__main__":
    run()
