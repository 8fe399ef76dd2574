"""Contact time stepping: 20 boxes falling into a pile (dt = 1 ms, elliptic cones), kane's
:func:`kane.switching.contact_stepping.simulate_contacts` against MuJoCo's ``mj_step`` on the same scene.

The boxes (0.1 x 0.08 x 0.06 m half extents, 1 kg) start above 2 x 2 columns (0.12 m pitch: each box overlaps
its neighbours' footprints, so they land on each other), one box per height, 0.17 m apart (none touches another at
the start), tilted about a random axis by up to 0.4 rad and spinning (seed 0): they fall into a heap of box-box
and box-plane contacts; the last lands at ~0.8 s, the run is 1.5 s.
kane finds the contacts through its coal geometry, the batched path (:func:`kane.mechanics.collision_batch.
contacts_batch`, margin 5 mm, coal's contact patches) and steps them on the compiled free-body path
(:mod:`kane.switching.contact_fast`); MuJoCo gets the same scene as MJCF (cone="elliptic", its Newton solver at
tolerance 1e-8, the Euler integrator, its box-box and box-plane colliders). Both start from the same state. The
script prints the cost per step of each (best of ``repeat`` whole runs), the contacts per step (mean and at the
end), kane's solver sweeps, the resting heights (both must have settled), kane's stepping alone (everything but
the collision: the recorded contact batches replayed through the same run, :func:`stepping_alone`) with the
sweeps per step with and without the warm start, and kane's time split (a profile of one run: collision, step,
the rest). :func:`run_plane` keeps the earlier scene (the boxes onto the plane apart, an
analytic corner callable).
"""

from __future__ import annotations

import cProfile
import math
import pstats
import time

import numpy as np

from kane import System
from kane import joints as J
from kane.mechanics.collision import CollisionData, CollisionOptions
from kane.mechanics.collision_batch import contacts_batch
from kane.model.collision import Box, HalfSpace
from kane.model.contact import ContactMaterial, ContactPoint
from kane.switching.contact_bodies import FreeBodies
from kane.switching.cone_solver import ConeSolverOptions
from kane.switching.contact_loop import BatchContacts
from kane.switching.contact_stepping import ContactOptions, contact_step, simulate_contacts

__all__ = ["pile_scene", "run", "run_plane", "scene", "stepping_alone"]

HALF = np.array([0.1, 0.08, 0.06])
MASS, MU, DT = 1.0, 0.6, 1e-3
CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
UP = np.array([0.0, 0.0, 1.0])


def scene(n_rows: int = 4, n_cols: int = 5, seed: int = 0):
    """(names, q0 (7 N,), u0 (6 N,)) of the grid of boxes."""
    rng = np.random.default_rng(seed)
    names, q, u = [], [], []
    for i in range(n_rows):
        for j in range(n_cols):
            axis = rng.normal(size=3)
            angle = rng.uniform(0.0, 0.4)
            e = np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis / np.linalg.norm(axis)]
            names.append(f"box{i}_{j}")
            q.append(np.r_[0.5 * i, 0.5 * j, rng.uniform(0.1, 0.6) + HALF.max(), e])
            u.append(np.r_[rng.normal(scale=1.0, size=3), 0.0, 0.0, 0.0])
    return names, np.concatenate(q), np.concatenate(u)


def plane_contacts(bodies: FreeBodies, material: ContactMaterial, margin: float = 0.05):
    """contacts(q): every box corner within ``margin`` of the plane z = 0 (vectorized over the boxes)."""
    names = bodies.names

    def contacts(q):
        from kane.spatial import quaternion_to_rotation

        qb = np.asarray(q).reshape(-1, 7)
        R = quaternion_to_rotation(qb[:, 3:7])  # (N, 3, 3)
        corners = qb[:, None, 0:3] + np.einsum("bij,kj->bki", R, CORNERS * HALF)  # (N, 8, 3)
        out = []
        for b, k in zip(*np.nonzero(corners[:, :, 2] <= margin)):
            x = corners[b, k]
            out.append(ContactPoint("ground", names[b], "plane", names[b], x * [1.0, 1.0, 0.0], x, UP, float(x[2]),
                                    material))
        return out

    return contacts


def mjcf(names, q0, u0) -> str:
    bodies = []
    for i, name in enumerate(names):
        p, e = q0[7 * i:7 * i + 3], q0[7 * i + 3:7 * i + 7]
        bodies.append(f'<body name="{name}" pos="{p[0]:.17g} {p[1]:.17g} {p[2]:.17g}" '
                      f'quat="{e[0]:.17g} {e[1]:.17g} {e[2]:.17g} {e[3]:.17g}"><freejoint/>'
                      f'<geom type="box" size="{HALF[0]} {HALF[1]} {HALF[2]}" mass="{MASS}" '
                      f'friction="{MU} 0 0"/></body>')
    return (f'<mujoco><option timestep="{DT}" cone="elliptic" integrator="Euler"/><worldbody>'
            f'<geom type="plane" size="20 20 0.1" friction="{MU} 0 0"/>{"".join(bodies)}</worldbody></mujoco>')


TIGHT = ContactOptions()
LOOSE = ContactOptions(solver=ConeSolverOptions(max_iterations=100, tolerance=1e-6))


def run_kane(names, q0, u0, steps: int, options: ContactOptions = TIGHT):
    bodies = FreeBodies(names, [MASS] * len(names), [np.diag(MASS / 3 * np.array(
        [HALF[1] ** 2 + HALF[2] ** 2, HALF[0] ** 2 + HALF[2] ** 2, HALF[0] ** 2 + HALF[1] ** 2]))] * len(names),
        (0.0, 0.0, -9.81))
    contacts = plane_contacts(bodies, ContactMaterial(MU))
    q, u, warm = q0.copy(), u0.copy(), {}
    counts, sweeps = np.zeros(steps, dtype=int), np.zeros(steps, dtype=int)
    start = time.perf_counter()
    for k in range(steps):
        s = contact_step(bodies, contacts, k * DT, q, u, DT, options, bodies=bodies, warm_start=warm)
        q, u = s.q, s.u
        warm = {}
        for i, cp in enumerate(s.points):
            warm.setdefault(cp.name, []).append(s.impulse[i])
        counts[k], sweeps[k] = len(s.points), s.iterations
    return (time.perf_counter() - start) / steps, q, counts, sweeps


def run_mujoco(names, q0, u0, steps: int):
    import mujoco

    model = mujoco.MjModel.from_xml_string(mjcf(names, q0, u0))
    data = mujoco.MjData(model)
    for i in range(len(names)):  # MuJoCo's free joint: linear velocity in world axes, angular in body axes
        data.qvel[6 * i:6 * i + 3] = u0[6 * i + 3:6 * i + 6]
        data.qvel[6 * i + 3:6 * i + 6] = u0[6 * i:6 * i + 3]
    counts = np.zeros(steps, dtype=int)
    start = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        counts[k] = data.ncon
    return (time.perf_counter() - start) / steps, data.qpos.copy(), counts


def run_plane(t_end: float = 1.5, repeat: int = 2) -> dict:
    """The earlier scene: 20 boxes onto a plane, apart (box-plane contacts only, an analytic corner callable)."""
    names, q0, u0 = scene()
    steps = int(round(t_end / DT))
    run_kane(names, q0, u0, 400)  # numba compiles the solver's sweeps once (the first contacts come at ~0.2 s)
    best = {"tight": math.inf, "loose": math.inf, "mujoco": math.inf}
    for _ in range(repeat):
        for key, options in (("tight", TIGHT), ("loose", LOOSE)):
            cost, q, n_kane, sweeps = run_kane(names, q0, u0, steps, options)
            if cost < best[key]:
                best[key] = cost
            if key == "tight":
                q_kane, sweeps_tight = q, sweeps
            else:
                q_loose, sweeps_loose = q, sweeps
        cost, q_mj, n_mj = run_mujoco(names, q0, u0, steps)
        best["mujoco"] = min(best["mujoco"], cost)
    z = {k: 1e3 * np.sort(v.reshape(-1, 7)[:, 2]) for k, v in (("tight", q_kane), ("loose", q_loose),
                                                                ("mujoco", q_mj))}
    out = {"kane_us_per_step": 1e6 * best["tight"], "kane_loose_us_per_step": 1e6 * best["loose"],
           "mujoco_us_per_step": 1e6 * best["mujoco"], "ratio": best["tight"] / best["mujoco"],
           "ratio_loose": best["loose"] / best["mujoco"], "kane_contacts_mean": n_kane.mean(),
           "kane_contacts_end": int(n_kane[-1]), "mujoco_contacts_mean": n_mj.mean(),
           "mujoco_contacts_end": int(n_mj[-1]), "sweeps_tight": sweeps_tight, "sweeps_loose": sweeps_loose,
           "resting_height_mm": z}
    print(f"20 boxes onto a plane, dt = 1 ms, {steps} steps ({t_end} s), elliptic cones, box-plane contacts only "
          f"(2-core shared VM)")
    for key, label, sw in (("tight", "tol 1e-12, <= 20000 sweeps", sweeps_tight),
                           ("loose", "tol 1e-6, <= 100 sweeps", sweeps_loose)):
        print(f"  kane contact_step ({label}): {1e6 * best[key]:9.1f} us/step, PGS sweeps median "
              f"{np.median(sw):.0f}, p95 {np.percentile(sw, 95):.0f}, max {sw.max()}; ratio to MuJoCo "
              f"{best[key] / best['mujoco']:.1f}")
    print(f"  MuJoCo mj_step: {out['mujoco_us_per_step']:9.1f} us/step")
    print(f"  contacts per step: kane mean {out['kane_contacts_mean']:.1f}, at the end {out['kane_contacts_end']}; "
          f"MuJoCo mean {out['mujoco_contacts_mean']:.1f}, at the end {out['mujoco_contacts_end']}")
    for key in ("tight", "loose", "mujoco"):
        print(f"  resting heights [mm] {key:6s}: min {z[key].min():.3f}, max {z[key].max():.3f}")
    return out


def pile_scene(seed: int = 0):
    """(names, q0 (7 N,), u0 (6 N,)) of the pile: 2 x 2 columns, one box per height (module docstring)."""
    rng = np.random.default_rng(seed)
    names, q, u = [], [], []
    for k in range(20):
        axis = rng.normal(size=3)
        angle = rng.uniform(0.0, 0.4)
        e = np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis / np.linalg.norm(axis)]
        names.append(f"box{k}")
        q.append(np.r_[0.12 * (k % 2) + rng.uniform(-0.01, 0.01), 0.12 * (k // 2 % 2) + rng.uniform(-0.01, 0.01),
                       HALF.max() + 0.05 + 0.17 * k, e])
        u.append(np.r_[rng.normal(scale=1.0, size=3), 0.0, 0.0, 0.0])
    return names, np.concatenate(q), np.concatenate(u)


def pile_model(names):
    """kane's model of the pile: one free body and one box collision per box, a ground half-space; all MU."""
    s = System("pile")
    for name in names:
        s.add_body(name, MASS, inertia=tuple(MASS / 3 * np.array([HALF[1] ** 2 + HALF[2] ** 2,
                                                                 HALF[0] ** 2 + HALF[2] ** 2,
                                                                 HALF[0] ** 2 + HALF[1] ** 2])))
        s.add_joint("ground", name, J.Free(), name=f"j_{name}")
        s.add_collision(name, Box(tuple(HALF)), name=name, material=ContactMaterial(MU))
    s.add_collision("ground", HalfSpace(), name="plane", material=ContactMaterial(MU))
    return s.compile()


def box_bodies(names) -> FreeBodies:
    inertia = np.diag(MASS / 3 * np.array([HALF[1] ** 2 + HALF[2] ** 2, HALF[0] ** 2 + HALF[2] ** 2,
                                           HALF[0] ** 2 + HALF[1] ** 2]))
    return FreeBodies(names, [MASS] * len(names), [inertia] * len(names), (0.0, 0.0, -9.81))


def run_kane_pile(names, q0, u0, steps: int, options: ContactOptions = TIGHT, margin: float = 5e-3,
                  loop: bool = False):
    """(seconds per step, q at the end, active contacts per step (steps,), PGS sweeps per step (steps,)); ``loop``:
    the contacts as :class:`kane.switching.contact_loop.BatchContacts` (the compiled multi-step loop), else a plain
    contacts_batch callable (the per-step path)."""
    model, bodies = pile_model(names), box_bodies(names)
    data = CollisionData(model, CollisionOptions(margin=margin))

    def contacts(q):
        qb = q.reshape(-1, 7)
        return contacts_batch(model, data, (qb[:, 0:3], qb[:, 3:7]))

    if loop:
        contacts = BatchContacts(model, bodies, CollisionOptions(margin=margin))

    start = time.perf_counter()
    out = simulate_contacts(bodies, contacts, q0, u0, DT, steps * DT, options)
    cost = (time.perf_counter() - start) / steps
    return cost, out.q[-1], np.bincount(out.contacts.step, minlength=steps), out.iterations


def profile_kane_pile(names, q0, u0, steps: int) -> dict:
    """Seconds per step (loose solver) inside contacts_batch (collision: candidate_pairs the broad phase, _coal_pair
    coal's narrow phase), step_arrays (the step: _step, its one compiled call) and in all (cProfile inflates)."""
    profile = cProfile.Profile()
    profile.enable()
    run_kane_pile(names, q0, u0, steps, LOOSE)
    profile.disable()
    stats = pstats.Stats(profile).stats
    total = max(v[3] for v in stats.values())
    part = {name: sum(v[3] for k, v in stats.items() if k[2] == name) / steps
            for name in ("contacts_batch", "step_arrays", "candidate_pairs", "_coal_pair", "_step")}
    part["total"] = total / steps
    return part


def stepping_alone(names, q0, u0, steps: int, options: ContactOptions = LOOSE, repeat: int = 3) -> dict:
    """The stepping without the collision: one run records the ContactBatch of every step, then the same run
    (:func:`simulate_contacts`, the same states: the step is deterministic) replays them, timed (best of
    ``repeat``). Also the whole step of the recording run, the sweeps per step with and without the warm start,
    the active contacts per step."""
    model, bodies = pile_model(names), box_bodies(names)
    data = CollisionData(model, CollisionOptions(margin=5e-3))
    batches = []

    def recording(q):
        qb = q.reshape(-1, 7)
        batches.append(contacts_batch(model, data, (qb[:, 0:3], qb[:, 3:7])))
        return batches[-1]

    start = time.perf_counter()
    ref = simulate_contacts(bodies, recording, q0, u0, DT, steps * DT, options)
    whole = (time.perf_counter() - start) / steps
    best = math.inf
    for _ in range(repeat):
        replay = iter(batches)
        start = time.perf_counter()
        out = simulate_contacts(bodies, lambda q: next(replay), q0, u0, DT, steps * DT, options)
        best = min(best, (time.perf_counter() - start) / steps)
        assert np.array_equal(out.q, ref.q), "the replay left the recorded trajectory"
    replay = iter(batches)  # the same contacts, each step from the recorded state, without the warm start
    cold = np.array([contact_step(bodies, lambda q: next(replay), k * DT, ref.q[k], ref.u[k], DT, options,
                                  bodies=bodies).iterations for k in range(steps)])
    return {"stepping_s": best, "whole_s": whole, "sweeps_warm": ref.iterations, "sweeps_cold": cold,
            "active": np.bincount(ref.contacts.step, minlength=steps),
            "candidates": np.array([len(b) for b in batches])}


def run(t_end: float = 1.5, repeat: int = 3, tight_steps: int | None = None) -> dict:
    """The pile: kane with the loose and the tight solver (the tight one over the first ``tight_steps``, default
    all), MuJoCo, each over t_end [s]; the stepping alone (:func:`stepping_alone`)."""
    names, q0, u0 = pile_scene()
    steps = int(round(t_end / DT))
    tight_steps = steps if tight_steps is None else tight_steps
    run_kane_pile(names, q0, u0, 300, LOOSE)  # numba compiles the kernels once (the first box lands at ~0.1 s)
    run_kane_pile(names, q0, u0, 300, LOOSE, loop=True)
    best = {"tight": math.inf, "loose": math.inf, "mujoco": math.inf, "loop": math.inf}
    for _ in range(repeat):
        cost, q_loop, n_loop, sweeps_loop = run_kane_pile(names, q0, u0, steps, LOOSE, loop=True)
        best["loop"] = min(best["loop"], cost)
        for key, options, n in (("tight", TIGHT, tight_steps), ("loose", LOOSE, steps)):
            cost, q, n_kane, sweeps = run_kane_pile(names, q0, u0, n, options)
            best[key] = min(best[key], cost)
            if key == "tight":
                q_kane, sweeps_tight = q, sweeps
            else:
                q_loose, sweeps_loose = q, sweeps
        cost, q_mj, n_mj = run_mujoco(names, q0, u0, steps)
        best["mujoco"] = min(best["mujoco"], cost)
    z = {k: 1e3 * np.sort(v.reshape(-1, 7)[:, 2]) for k, v in (("loose", q_loose), ("mujoco", q_mj))}
    alone = stepping_alone(names, q0, u0, steps)
    part = profile_kane_pile(names, q0, u0, steps)
    out = {"kane_us_per_step": 1e6 * best["tight"], "kane_loose_us_per_step": 1e6 * best["loose"],
           "kane_loop_us_per_step": 1e6 * best["loop"], "ratio_loop": best["loop"] / best["mujoco"],
           "mujoco_us_per_step": 1e6 * best["mujoco"], "ratio": best["tight"] / best["mujoco"],
           "ratio_loose": best["loose"] / best["mujoco"], "kane_contacts_mean": n_kane.mean(),
           "kane_contacts_end": int(n_kane[-1]), "mujoco_contacts_mean": n_mj.mean(),
           "mujoco_contacts_end": int(n_mj[-1]), "sweeps_tight": sweeps_tight, "sweeps_loose": sweeps_loose,
           "loop_equals_per_step": bool(np.array_equal(q_loop, q_loose) and np.array_equal(n_loop, n_kane)
                                        and np.array_equal(sweeps_loop, sweeps_loose)),
           "resting_height_mm": z, "profile_us_per_step": {k: 1e6 * v for k, v in part.items()},
           "stepping_us_per_step": 1e6 * alone["stepping_s"], "whole_us_per_step": 1e6 * alone["whole_s"],
           "sweeps_warm": alone["sweeps_warm"], "sweeps_cold": alone["sweeps_cold"]}
    print(f"20 boxes falling into a pile, dt = 1 ms, {steps} steps ({t_end} s), elliptic cones, box-box and "
          f"box-plane contacts (2-core shared VM)")
    print(f"  kane compiled loop (BatchContacts, tol 1e-6, <= 100 sweeps): {out['kane_loop_us_per_step']:9.1f} "
          f"us/step, ratio to MuJoCo {out['ratio_loop']:.2f}; the same run as the per-step path: "
          f"{out['loop_equals_per_step']}")
    for key, label, sw in (("tight", f"tol 1e-12, <= 20000 sweeps, first {tight_steps} steps", sweeps_tight),
                           ("loose", "tol 1e-6, <= 100 sweeps, per-step path", sweeps_loose)):
        print(f"  kane whole step ({label}): {1e6 * best[key]:9.1f} us/step, PGS sweeps median "
              f"{np.median(sw):.0f}, p95 {np.percentile(sw, 95):.0f}, max {sw.max()}; ratio to MuJoCo "
              f"{best[key] / best['mujoco']:.1f}")
    print(f"  MuJoCo mj_step: {out['mujoco_us_per_step']:9.1f} us/step")
    print(f"  kane stepping alone (loose, recorded contact batches replayed): {out['stepping_us_per_step']:.1f} "
          f"us/step ({out['stepping_us_per_step'] / out['mujoco_us_per_step']:.2f} of mj_step); the whole step of "
          f"that run {out['whole_us_per_step']:.1f} us/step")
    rest = slice(steps * 2 // 3, steps)
    for key in ("sweeps_warm", "sweeps_cold"):
        sw = out[key]
        print(f"  sweeps per step, {key[7:]:4s} start: mean {sw.mean():.1f}, median {np.median(sw):.0f}, at the "
              f"cap {np.sum(sw >= LOOSE.solver.max_iterations)}; last third mean {sw[rest].mean():.1f}")
    print(f"  contacts per step: kane active mean {out['kane_contacts_mean']:.1f}, at the end "
          f"{out['kane_contacts_end']} (candidates mean {alone['candidates'].mean():.1f}); MuJoCo mean "
          f"{out['mujoco_contacts_mean']:.1f}, at the end {out['mujoco_contacts_end']}")
    for key in ("loose", "mujoco"):
        print(f"  heights at the end [mm] {key:6s}: " + " ".join(f"{x:.0f}" for x in z[key]))
    print("  kane profile (loose, us/step, cProfile inflates): " + ", ".join(
        f"{k} {v:.0f}" for k, v in out["profile_us_per_step"].items()))
    return out


if __name__ == "__main__":
    run()
