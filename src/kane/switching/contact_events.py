"""Event-driven stick/slip contact on 3-D Coulomb cones, seed 000 Figure 2's loop (delete or impose a constraint at
each event, integrate the mode's equations in between) for a few contacts between kane bodies.

Per contact (a :class:`kane.model.contact.ContactPoint` of ``contacts(q)``, keyed by its pair's name and its rank
among that pair's points, so a pair lists its points in a stable order while they touch), with J_i (3, n_u) the
(n, t1, t2) rows of the relative velocity of the witness points (:func:`.contact_stepping.dense_rows`):

* open: no rows, no force;
* stick: the 3 rows J_i u = 0 embedded; their multipliers are the normal force N [N] and the friction force
  f_t (2,) [N] on body b;
* slip: the normal row embedded, and the kinetic friction force -mu_k N s/|s| along the tangents, s = T_i u (2,)
  the slip velocity (a slip just begun at rest, slower than 1e-7 m/s: the direction chosen at its start), N the
  normal row's multiplier, solved together with u' (as :class:`.online.SlipForce` does for 1-D friction).

In a mode the equations M u' = f + A^T lambda + G lambda, A u' + A' u = 0 (A: the embedded rows, A' u their rate
along the motion by central differences of J(q) u over q +- delta q', contact points recomputed; G: the slip
friction columns) are one bordered linear system, solved in least squares so that redundant rows (a box flat on
its four corners) take the least-norm multipliers; u' is then unique whenever the mode is consistent.

Events, located by the integrator's dense output (DOP853) to its tolerance: an open contact's gap reaches 0
(impact: Newton restitution e with Coulomb friction during the impulse, solved on the cones by
:func:`.cone_solver.solve_cones` over every touching contact at once; then the modes of the post-impact state);
a closed contact's normal force reaches 0 (closed -> open); a sticking contact's tangential force reaches the cone
|f_t| = mu_s N (stick -> slip); a slipping contact's slip velocity reaches 0 along its direction (slip -> stick if
the sticking force fits the cone, else slip on). The modes after an event are chosen by trying every combination
of the touching contacts' candidate modes and keeping the consistent ones (open: gap acceleration >= 0; closed:
N >= 0; stick: inside the cone; slip from rest: accelerating along the chosen direction). None consistent, or
several with different accelerations, is a Painleve-type inconsistency: :class:`ContactInconsistencyError` names
the contacts and the time.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve

from ..errors import KaneError
from .cone_solver import solve_cones
from .contact_event_records import (ContactEvent, ContactInconsistencyError, EventContactRun, EventEngine,
                                    EventOptions)
from .contact_samples import SampleBlock, records_of, run_failure
from .contact_samples import mode_names as _named
from .contact_stepping import (ContactOptions, ContactRun, ContactScheme, _bodies_of,
                               _check_state, dense_rows, step_count)
from .contact_stepping import simulate_contacts as simulate_time_stepping

__all__ = ["ContactEvent", "ContactInconsistencyError", "EventContactRun", "EventEngine", "EventOptions",
           "simulate_contacts", "simulate_events"]

OPEN, STICK, SLIP = 0, 1, 2
_MOVING = 1e-7  # [m/s] a slip this fast has its own direction; slower, the mode's direction stands


@dataclass(frozen=True)
class _Mode:
    kind: int
    direction: np.ndarray | None = None  # slip: unit slip direction (2,) in (t1, t2)
    from_rest: bool = False  # slip: the mode began at zero slip speed (its slip->stick event is offset)


class _Problem:
    """The contact problem of one run (dynamics, contact points, bodies); every method is pure in its arguments."""

    def __init__(self, dynamics, contacts: Callable, bodies, params, options: EventOptions):
        self.dynamics, self.contacts, self.bodies, self.params, self.options = (dynamics, contacts, bodies, params,
                                                                                options)
        self.n_q, self.n_u = dynamics.n_q, dynamics.n_u

    def points(self, q) -> dict:
        out, seen = {}, {}
        for cp in self.contacts(q):
            k = seen.get(cp.name, 0)
            seen[cp.name] = k + 1
            out[(cp.name, k)] = cp
        return out

    def state(self, t, q, u, keys) -> dict:
        """M, f, points, J (3m, n_u) and the rate A' u (3m,) of the rows of ``keys``."""
        d = self.dynamics
        pts = self.points(q)
        missing = [k for k in keys if k not in pts]
        if missing:
            raise KaneError(f"contacts(q) at t = {t:.12g} s lists no point {missing[0][1]} of pair "
                            f"{missing[0][0]!r}, which touches; list a pair's touching points in a stable order")
        cps = [pts[k] for k in keys]
        J = dense_rows(q, cps, self.bodies, self.n_u)
        rate = np.zeros(3 * len(keys))
        qd = np.asarray(d.qdot(t, q, u, self.params), dtype=float)
        speed = float(np.linalg.norm(qd))
        if keys and speed > 0:
            delta = 1e-6 / speed
            vals = []
            for sgn in (1.0, -1.0):
                qs = self.bodies.normalize(q + sgn * delta * qd)
                ps = self.points(qs)
                if any(k not in ps for k in keys):
                    raise KaneError(f"contacts(q) near t = {t:.12g} s drops a touching point; list a pair's "
                                    f"touching points in a stable order")
                vals.append(dense_rows(qs, [ps[k] for k in keys], self.bodies, self.n_u) @ u)
            rate = (vals[0] - vals[1]) / (2 * delta)
        M = np.asarray(d.mass_matrix(t, q, self.params), dtype=float)
        f = np.asarray(d.forcing(t, q, u, self.params), dtype=float)
        return {"M": M, "f": f, "pts": pts, "cps": cps, "J": J, "rate": rate, "keys": list(keys), "u": u}

    def solve(self, data, modes: dict):
        """(u' (n_u,), N (m,), f_t (m, 2), residual) for the modes of data's keys (keys not in modes: open)."""
        n, keys, J = self.n_u, data["keys"], data["J"]
        rows, slips, normal_col, direction = [], [], {}, {}
        for i, k in enumerate(keys):
            mode = modes.get(k)
            if mode is None or mode.kind == OPEN:
                continue
            normal_col[i] = len(rows)
            rows += [3 * i, 3 * i + 1, 3 * i + 2] if mode.kind == STICK else [3 * i]
            if mode.kind == SLIP:  # against the slip velocity; a slip just begun at rest takes the mode's direction
                slips.append(i)
                s = J[3 * i + 1:3 * i + 3] @ data["u"]
                speed = float(np.linalg.norm(s))
                direction[i] = s / speed if speed > _MOVING else mode.direction
        r = len(rows)
        A = J[rows]
        K = np.zeros((n + r, n + r))
        K[:n, :n], K[:n, n:], K[n:, :n] = data["M"], -A.T, A
        for i in slips:
            mu_k = data["cps"][i].material.mu_kinetic
            K[:n, n + normal_col[i]] += mu_k * (J[3 * i + 1:3 * i + 3].T @ direction[i])
        rhs = np.concatenate([data["f"], -data["rate"][rows]])
        x = np.linalg.lstsq(K, rhs, rcond=1e-13)[0] if r else np.concatenate([cho_solve(cho_factor(data["M"]),
                                                                                        data["f"]), []])
        residual = float(np.linalg.norm(K @ x - rhs)) / (1.0 + float(np.linalg.norm(rhs)))
        udot, lam = x[:n], x[n:]
        N, ft = np.zeros(len(keys)), np.zeros((len(keys), 2))
        for i, c in normal_col.items():
            N[i] = lam[c]
            mode = modes[keys[i]]
            ft[i] = lam[c + 1:c + 3] if mode.kind == STICK else -direction[i] * (
                data["cps"][i].material.mu_kinetic * lam[c])
        return udot, N, ft, residual

    def consistent(self, data, modes, u, solved) -> bool:
        udot, N, ft, residual = solved
        tol = self.options.force_tolerance
        if residual > 1e-8:
            return False
        scale = tol * (1.0 + float(np.abs(data["f"]).max()))
        acc = data["J"] @ udot + data["rate"]
        for i, k in enumerate(data["keys"]):
            mode = modes.get(k)
            if mode is None or mode.kind == OPEN:
                if data["J"][3 * i] @ u <= self.options.velocity_tolerance and acc[3 * i] < -scale:
                    return False
                continue
            if N[i] < -scale:
                return False
            mu_s = data["cps"][i].material.mu_static
            if mode.kind == STICK and np.linalg.norm(ft[i]) > mu_s * N[i] + scale:
                return False
            v_t = data["J"][3 * i + 1:3 * i + 3] @ u
            if mode.kind == SLIP and np.linalg.norm(v_t) <= 1e-6 and acc[3 * i + 1:3 * i + 3] @ mode.direction < \
                    -scale:
                return False
        return True

    def choose(self, t, q, u, previous: dict, exclude: dict, rest: set) -> tuple[dict, dict]:
        """The modes of the touching contacts at (t, q, u) (module docstring); ``exclude`` maps a key to the mode
        kinds it may not take (the one its event left), ``rest`` holds keys whose slip speed counts as zero."""
        opt = self.options
        pts = self.points(q)
        keys = [k for k, cp in pts.items() if cp.distance <= opt.gap_tolerance or k in previous]
        data = self.state(t, q, u, keys)
        v = (data["J"] @ u).reshape(-1, 3)
        at_rest = {}
        for i, k in enumerate(keys):
            at_rest[k] = k in rest or np.hypot(v[i, 1], v[i, 2]) <= _MOVING  # slower: no direction of its own
        base = {}
        for i, k in enumerate(keys):
            if v[i, 0] > opt.velocity_tolerance:
                continue
            base[k] = _Mode(STICK) if at_rest[k] else _Mode(SLIP, v[i, 1:] / np.hypot(v[i, 1], v[i, 2]))
        _, _, ft0, _ = self.solve(data, base)
        options = []
        for i, k in enumerate(keys):
            cands = [_Mode(OPEN)]
            if v[i, 0] <= opt.velocity_tolerance:
                if at_rest[k]:
                    cands.insert(0, _Mode(STICK))
                    norm = float(np.linalg.norm(ft0[i]))
                    if norm > 0:
                        cands.insert(1, _Mode(SLIP, -ft0[i] / norm, True))
                else:
                    cands.insert(0, base[k])
            prev = previous.get(k)
            if prev is not None:
                cands.sort(key=lambda m: m.kind != prev.kind)
            cands = [m for m in cands if m.kind not in exclude.get(k, ())]
            options.append(cands)
        found = []
        for combo in itertools.product(*options):
            modes = dict(zip(keys, combo))
            solved = self.solve(data, modes)
            if self.consistent(data, modes, u, solved):
                found.append((modes, solved[0]))
        names = tuple(f"{k[0]}#{k[1]}" for k in keys)
        where = (q.copy(), u.copy(), _named(previous))
        if not found:
            raise ContactInconsistencyError(f"Painleve-type inconsistency at t = {t:.12g} s: no consistent contact "
                                            f"mode for {', '.join(names)}", t, names, "none", *where)
        first = found[0][1]
        for _, udot in found[1:]:
            if np.linalg.norm(udot - first) > 1e-6 * (1.0 + np.linalg.norm(first)):
                raise ContactInconsistencyError(f"Painleve-type inconsistency at t = {t:.12g} s: several contact "
                                                f"modes with different accelerations for {', '.join(names)}", t,
                                                names, "several", *where)
        modes = {k: m for k, m in found[0][0].items() if m.kind != OPEN}
        return modes, data

    def project(self, data, modes: dict, u) -> np.ndarray:
        """u with the embedded rows' velocities removed in the mass metric (u - M^-1 A^T (A M^-1 A^T)^+ A u)."""
        rows = []
        for i, k in enumerate(data["keys"]):
            mode = modes.get(k)
            if mode is not None:
                rows += [3 * i, 3 * i + 1, 3 * i + 2] if mode.kind == STICK else [3 * i]
        if not rows:
            return u
        A = data["J"][rows]
        MinvAT = cho_solve(cho_factor(data["M"]), A.T)
        return u - MinvAT @ np.linalg.lstsq(A @ MinvAT, A @ u, rcond=1e-13)[0]

    def impact(self, t, q, u, material_keys, plastic=()) -> np.ndarray:
        """u after the frictional Newton impact of every touching contact (cone solver); a rebound slower than
        ``velocity_tolerance``, and every one of the keys ``plastic``, is made plastic (e = 0)."""
        data = self.state(t, q, u, material_keys)
        J, cps = data["J"], data["cps"]
        v = (J @ u).reshape(-1, 3)
        e = np.array([0.0 if k in plastic else cp.material.restitution for k, cp in zip(material_keys, cps)])
        target = -e * np.minimum(v[:, 0], 0.0)
        target[target < self.options.velocity_tolerance] = 0.0  # a rebound this slow ends at rest (no chatter)
        slipping = np.hypot(v[:, 1], v[:, 2]) > 1e-9
        mu = np.array([cp.material.mu_kinetic if s else cp.material.mu_static for cp, s in zip(cps, slipping)])
        MinvJT = cho_solve(cho_factor(data["M"]), J.T)
        W = J @ MinvJT
        b = v.copy()
        b[:, 0] -= target
        sol = solve_cones(0.5 * (W + W.T), b.reshape(-1), mu)
        return u + MinvJT @ sol.impulse.reshape(-1)


def _event_functions(problem: _Problem, modes: dict, fields: Callable, slip_tolerance: float, y0) -> tuple[list,
                                                                                                         list]:
    """The segment's event functions g(t, y) (terminal, falling through 0) and what each one means: per open
    contact its gap; one touching at the start (gap d0 <= gap_tolerance, left open) meets the other body again at
    gap min(d0, 0) - gap_tolerance (at d0 it is found again at the start, and from a hair below 0 maybe never).
    A slip that began at rest ends when its slip velocity falls to -slip_tolerance along its direction (not at 0,
    which a contact held at zero slip by the others would cross at round-off)."""
    n_q = problem.n_q
    closed = list(modes)
    start = problem.points(y0[:n_q])
    known = [k for k in start if k not in modes]
    tol = problem.options.gap_tolerance
    lift = {k: tol - min(start[k].distance, 0.0) if start[k].distance <= tol else 0.0 for k in known}
    last: dict = {}

    def points(y):
        key = y[:n_q].tobytes()
        if last.get("key") != key:
            last["key"], last["points"] = key, problem.points(y[:n_q])
        return last["points"]

    def gap(t, y, k):
        cp = points(y).get(k)
        return 1.0 if cp is None else cp.distance + lift[k]

    def newcomers(t, y):  # contact points that contacts(q) did not list at the segment's start
        gaps = [cp.distance for k, cp in points(y).items() if k not in modes and k not in known]
        return min(gaps) if gaps else 1.0

    funcs = [newcomers] + [lambda t, y, k=k: gap(t, y, k) for k in known]
    meaning = [("impact", None)] + [("impact", k) for k in known]
    for k in closed:
        mode = modes[k]
        funcs.append(lambda t, y, k=k: fields(t, y)["N"][k])
        meaning.append(("open", k))
        if mode.kind == STICK:
            def cone(t, y, k=k):
                v = fields(t, y)
                return v["cps"][k].material.mu_static * v["N"][k] - float(np.linalg.norm(v["ft"][k]))
            funcs.append(cone)
            meaning.append(("stick->slip", k))
        else:
            offset = slip_tolerance if mode.from_rest else 0.0
            funcs.append(lambda t, y, k=k, s=mode.direction, o=offset: float(fields(t, y)["vt"][k] @ s) + o)
            meaning.append(("slip->stick", k))
    for g in funcs:
        g.terminal, g.direction = True, -1
    return funcs, meaning


def simulate_events(dynamics, contacts: Callable, q0, u0, h: float, t_end: float,
                    options: ContactOptions = ContactOptions(), bodies=None, params=None,
                    events: EventOptions = EventOptions(), sink: Callable | None = None,
                    window: int | None = None) -> EventContactRun:
    """The event-driven run (module docstring) from t = 0, (q0 (n_q,), u0 (n_u,)) to t_end [s], sampled every h
    [s] (the outputs of :func:`.contact_stepping.simulate_contacts`, forces at the samples' instants), with the
    events. Reached by :func:`simulate_contacts` with ``ContactOptions(scheme=ContactScheme.EVENT_DRIVEN)``.
    ``sink(block)`` gets every :class:`SampleBlock` as it is made (at each segment's end, before its event is
    resolved; it may raise to stop the run); ``window``: at most this many samples per integration (None: whole
    segments). An integrator failure or a Zeno run raise :class:`kane.simulate.SimulationError`, no consistent
    mode :class:`ContactInconsistencyError`, with the time, the modes and the last good state."""
    n = step_count(h, t_end)
    from . import contact_events_fast

    compiled, reason = contact_events_fast.choose_engine(dynamics, contacts, bodies, params, events.engine.value)
    fast = contact_events_fast if compiled else None
    bodies = _bodies_of(dynamics, bodies)
    q, u = _check_state(dynamics, q0, u0)
    problem = _Problem(dynamics, contacts, bodies, params, events)
    grid = np.arange(n + 1) * float(h)
    n_q = problem.n_q
    modes, data = problem.choose(0.0, q, u, {}, {}, set())
    u = problem.project(data, modes, u)
    cache: dict = {}

    def fields(t, y):
        key = (t, y.tobytes())
        if cache.get("key") != key:
            qy, uy = y[:n_q], y[n_q:]
            d = problem.state(t, qy, uy, list(modes))
            udot, N, ft, _ = problem.solve(d, modes)
            J = d["J"]
            cache["key"] = key
            cache["v"] = {"udot": udot, "N": dict(zip(d["keys"], N)), "ft": dict(zip(d["keys"], ft)),
                          "vt": {k: J[3 * i + 1:3 * i + 3] @ uy for i, k in enumerate(d["keys"])},
                          "cps": dict(zip(d["keys"], d["cps"])), "f": d["f"]}
        return cache["v"]

    calls = [0]

    def rhs(t, y):
        calls[0] += 1
        return np.concatenate([np.asarray(dynamics.qdot(t, y[:n_q], y[n_q:], params), dtype=float),
                               fields(t, y)["udot"]])

    Q, U = np.empty((n + 1, q.size)), np.empty((n + 1, u.size))
    has_energy = dynamics.capabilities.energy
    energy = np.empty(n + 1) if has_energy else None
    rec: dict = {k: [] for k in ("step", "name", "pn", "pt", "n", "slip", "mode")}
    iterations = np.zeros(max(n, 1), dtype=np.int64)
    log: list[ContactEvent] = []
    impacts: dict = {}  # contact -> time of its last impact
    sent = [0, 0, 0, 0]  # samples, record rows, events and evaluations given to the sink

    def send(evaluations):
        if sink is None or (k_next == sent[0] and len(log) == sent[2]):
            return
        lo = sent[0]
        block = SampleBlock(lo, grid[lo:k_next], Q[lo:k_next], U[lo:k_next],
                            None if energy is None else energy[lo:k_next], records_of(rec, sent[1]),
                            tuple(log[sent[2]:]), evaluations - sent[3], _named(modes))
        sent[:] = [k_next, len(rec["step"]), len(log), evaluations]
        sink(block)

    def sample(k, t, y):
        Q[k], U[k] = y[:n_q], y[n_q:]
        if has_energy:
            energy[k] = dynamics.energy(t, Q[k], U[k], params)
        if not modes:
            return
        v = fields(t, y)
        for key, mode in modes.items():
            cp = v["cps"][key]
            rec["step"].append(k)
            rec["name"].append(cp.name)
            rec["n"].append(np.asarray(cp.normal_world, dtype=float))
            rec["pn"].append(v["N"][key])
            rec["pt"].append(v["ft"][key])
            rec["slip"].append(v["vt"][key])
            rec["mode"].append(mode.kind)

    t, k_next, evaluations = 0.0, 0, 0
    y = np.concatenate([q, u])
    scene = fast.compiled_scene(dynamics, contacts, grid) if fast is not None else None
    while True:
        if scene is not None:  # the compiled segment (contact_events_fast): samples, records, the event
            k0 = k_next
            seg = fast.segment(scene, t, y, modes, k_next, events, options.slip_tolerance)
            fast.record_samples(scene, modes, k_next, seg.k_next, Q, U, n_q, rec)
            done, t_stop, y_stop, kind, key, k_next, calls[0] = (seg.done, seg.t, seg.y, seg.kind, seg.key,
                                                                 seg.k_next, seg.calls)
            if energy is not None and k_next > k0:
                energy[k0:k_next] = dynamics.energies(grid[k0:k_next], Q[k0:k_next], U[k0:k_next])
            status = 0 if done else 1
        else:
            funcs, meaning = _event_functions(problem, modes, fields, options.slip_tolerance, y)
            calls[0] = 0
            t_to = float(grid[-1] if window is None else grid[min(n, k_next + int(window))])
            sol = solve_ivp(rhs, (t, t_to), y, method="DOP853", rtol=events.rtol, atol=events.atol,
                            events=funcs, dense_output=True, max_step=events.max_step)
            status, t_stop, y_stop = sol.status, float(sol.t[-1]), sol.y[:, -1]
            while k_next <= n and (grid[k_next] < t_stop or (status == 0 and grid[k_next] <= t_stop)):
                sample(k_next, float(grid[k_next]), sol.sol(grid[k_next]))
                k_next += 1
        iterations[min(max(k_next - 1, 0), iterations.size - 1)] += calls[0]
        evaluations += calls[0]
        send(evaluations)
        if status < 0:
            raise run_failure("event-driven contact", f"the integrator failed at t = {t_stop:.12g} s: "
                              f"{sol.message}", t_stop, y_stop[:n_q], y_stop[n_q:], _named(modes))
        if status == 0:
            if t_stop >= grid[-1]:
                break
            t, y = t_stop, y_stop.copy()  # the window ends before the segment: go on in the same modes
            continue
        if len(log) >= events.max_events:
            raise run_failure("event-driven contact", f"more than {events.max_events} events by t = {t_stop:.12g} "
                              f"s (a Zeno run?); raise EventOptions.max_events or use ContactScheme.TIME_STEPPING",
                              t_stop, y_stop[:n_q], y_stop[n_q:], _named(modes))
        if scene is None:
            kind, key = meaning[min((float(te[0]), i) for i, te in enumerate(sol.t_events) if len(te))[1]]
        t = t_stop
        qe = bodies.normalize(y_stop[:n_q])
        ue = y_stop[n_q:].copy()
        exclude, rest = {}, set()
        if kind == "impact":
            pts = problem.points(qe)
            touching = [kk for kk, cp in pts.items() if cp.distance <= events.gap_tolerance or kk in modes]
            if key is None:  # a newcomer: the deepest point not in contact (the one whose gap fell through 0)
                key = min((kk for kk in pts if kk not in modes), key=lambda kk: pts[kk].distance)
            J = dense_rows(qe, [pts[key]], bodies, problem.n_u)
            if J[0] @ ue < -events.velocity_tolerance:
                plastic = {kk for kk in touching if t - impacts.get(kk, -math.inf) < events.accumulation_time}
                ue = problem.impact(t, qe, ue, touching, plastic)
                impacts[key] = t
            else:
                kind = "touch"
        elif kind in ("open", "stick->slip"):  # every closed contact at the same boundary (a symmetric box)
            v = fields(t_stop, np.concatenate([qe, ue]))
            scale = events.force_tolerance * (1.0 + float(np.abs(v["f"]).max()))
            for kk, mode in modes.items():
                cp = v["cps"][kk]
                if abs(v["N"][kk]) <= scale:
                    exclude[kk] = (STICK, SLIP)
                elif kind == "stick->slip" and mode.kind == STICK and abs(
                        cp.material.mu_static * v["N"][kk] - np.linalg.norm(v["ft"][kk])) <= scale:
                    exclude[kk] = (STICK,)
            exclude[key] = (STICK, SLIP) if kind == "open" else (STICK,)
        elif np.linalg.norm(dense_rows(qe, [problem.points(qe)[key]], bodies, problem.n_u)[1:3] @ ue) > 1e3 * _MOVING:
            kind = "slip turned"  # the slip velocity turned across its starting direction: slip on along the new one
        else:
            rest.add(key)
        previous = dict(modes)
        modes, data = problem.choose(t, qe, ue, previous, exclude, rest)
        ue = problem.project(data, modes, ue)
        cache.clear()
        if kind == "slip->stick" and key in modes and modes[key].kind == SLIP:
            kind = "slip->slip"
        log.append(ContactEvent(t, kind, f"{key[0]}#{key[1]}", _named(modes)))
        y = np.concatenate([qe, ue])
    return EventContactRun(grid, Q, U, energy, records_of(rec), iterations[:n], np.ones(n, dtype=bool), float(h),
                           options.scheme, engine="compiled" if fast is not None else "python", engine_reason=reason,
                           events=tuple(log))


def simulate_contacts(dynamics, contacts: Callable, q0, u0, h: float, t_end: float,
                      options: ContactOptions = ContactOptions(), bodies=None, params=None) -> ContactRun:
    """``kane.switching.simulate_contacts``: the run of ``options.scheme`` with the arguments of
    :func:`.contact_stepping.simulate_contacts`: velocity-level time stepping in steps of h [s], or the
    event-driven embedding (:func:`simulate_events`, default :class:`EventOptions`) sampled every h [s]."""
    if options.scheme is ContactScheme.EVENT_DRIVEN:
        return simulate_events(dynamics, contacts, q0, u0, h, t_end, options, bodies, params)
    return simulate_time_stepping(dynamics, contacts, q0, u0, h, t_end, options, bodies, params)
