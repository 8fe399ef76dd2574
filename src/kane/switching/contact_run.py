"""Contact runs of a model with collision shapes (``[[collision]]`` tables, ``System.add_collision``): the dynamics,
point Jacobians and contact points built from the model, the run by either contact scheme, and its per-pair outputs
written to a kane run file (``kane simulate MODEL.toml -o run.h5``).

:func:`run_contacts` derives the model's equations (:class:`kane.KaneDynamics` of the compiled model), its point
Jacobians and body poses (:class:`.system_bodies.SystemBodies`) and the contact points of its shapes at each
configuration (:func:`kane.mechanics.collision.contacts`), then runs the scheme of :class:`ContactRunOptions`
(velocity-level time stepping by default, or the event-driven embedding) in steps of ``dt`` [s], and returns a
:class:`ContactRunResult`. A model of free bodies under gravity runs on the compiled paths instead, with its
contacts from :func:`kane.mechanics.collision_batch.contacts_batch` (time stepping:
:mod:`.contact_stepping_model`; event-driven on ground half-spaces: :mod:`.contact_events_model`); the run file
records which loop ran and, for the general one, why.

Outputs: every allowed pair of collision shapes (:func:`collision_pairs`, named ``"<shape_a>|<shape_b>"`` as
:attr:`kane.model.contact.ContactPoint.name`) has the same columns at every sample (:data:`PAIR_FIELDS`):
``normal_force`` [N] (sum over the pair's points), ``friction_t1``, ``friction_t2`` [N] (sum, along the pair's
tangents :meth:`~kane.model.contact.ContactPoint.tangents_world`), ``slip_t1``, ``slip_t2`` [m/s] (mean over the
points), ``mode`` (0 open, 1 stick, 2 slip: slip when a point slips, else stick when one presses), the world
position of the force's point of application ``point_x/y/z`` [m] (the normal-force-weighted mean of the points on
shape b) and the unit normal ``normal_x/y/z`` (from a to b). A pair that does not press (mode open) has NaN in
every column but ``mode``. They are stored as the run file's monitor series ``"<pair>.<field>"`` (as
:class:`kane.io.trajectory.TrajectoryWriter` stores monitors), read back with :func:`kane.load_trajectory` and
sorted by :func:`contact_series`. In time stepping a step's forces act over [t_k, t_k+1] and are recorded at the
sample t_k+1 that ends it (sample 0 is open); the event-driven scheme records the forces at each sample's instant.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, ModelError
from ..jit import HAVE_NUMBA
from ..options import Method
from ..simulate.run_limits import run_limits
from .contact_stepping import ContactOptions, ContactRun, ContactScheme

__all__ = ["PAIR_FIELDS", "ContactRunOptions", "ContactRunResult", "ContactSeries", "collision_pairs",
           "contact_series", "has_collisions", "model_contact_problem", "refuse_collisions", "run_contacts",
           "write_contact_run", "ContactJob", "contact_simulation", "pair_block_outputs"]

PAIR_FIELDS = ("normal_force", "friction_t1", "friction_t2", "slip_t1", "slip_t2", "mode", "point_x", "point_y",
               "point_z", "normal_x", "normal_y", "normal_z")
"""The output columns of every collision pair, stored as ``"<pair>.<field>"``."""


@dataclass(frozen=True)
class ContactRunOptions:
    """``scheme`` (:class:`ContactScheme` or its value), ``dt`` [s] the contact step (time stepping) or sampling
    interval (event-driven), ``t_end`` [s] (None: the model's ``[simulation] t_end``), ``contact`` the
    :class:`ContactOptions` of the scheme (its ``scheme`` is replaced by ``scheme``); ``max_steps`` (contact
    steps or sample intervals) and ``max_wall_time`` [s] stop a run written by :class:`ContactJob` (None: no
    limit) with its samples saved."""

    scheme: ContactScheme = ContactScheme.TIME_STEPPING
    dt: float = 1e-3
    t_end: float | None = None
    contact: ContactOptions = field(default_factory=ContactOptions)
    max_steps: int | None = None
    max_wall_time: float | None = None

    def __post_init__(self):
        if not isinstance(self.scheme, ContactScheme):
            try:
                object.__setattr__(self, "scheme", ContactScheme(self.scheme))
            except ValueError:
                raise ArgumentError(f"contact run: scheme: expected one of "
                                    f"{', '.join(s.value for s in ContactScheme)}, got {self.scheme!r}") from None
        if not (np.isfinite(float(self.dt)) and float(self.dt) > 0):
            raise ArgumentError(f"contact run: dt: expected a step > 0 [s], got {self.dt!r}")
        if self.t_end is not None and not float(self.t_end) > 0:
            raise ArgumentError(f"contact run: t_end: expected an end time > 0 [s], got {self.t_end!r}")
        try:
            limits = run_limits(Method.RK4, self.max_steps, self.max_wall_time)  # fixed steps: no default limit
        except ArgumentError as exc:
            raise ArgumentError(f"contact run: {exc}") from None
        object.__setattr__(self, "max_steps", limits[0])
        object.__setattr__(self, "max_wall_time", limits[1])


@dataclass(frozen=True)
class ContactRunResult:
    """A contact run of a model: ``run`` (the scheme's :class:`ContactRun`), ``pairs`` (the collision pairs'
    names), ``outputs`` (``"<pair>.<field>"`` -> (N+1,) at the samples ``run.t``), ``q_names``, ``u_names``,
    ``params`` (name -> value), ``dynamics`` (the model's compiled dynamics), ``wall_time_s`` [s]."""

    run: ContactRun
    pairs: tuple[str, ...]
    outputs: dict
    q_names: tuple[str, ...]
    u_names: tuple[str, ...]
    params: dict
    dynamics: object = field(repr=False)
    wall_time_s: float = 0.0

    @property
    def scheme(self) -> ContactScheme:
        """The scheme that ran."""
        return self.run.scheme


@dataclass(frozen=True)
class ContactSeries:
    """The contact outputs of a run file, by field: ``pairs`` (P names), ``t`` (N,) [s], and per field of
    :data:`PAIR_FIELDS` an (N, P) array in ``fields``; ``mode`` (N, P) int (0 open, 1 stick, 2 slip)."""

    pairs: tuple[str, ...]
    t: np.ndarray
    fields: dict

    def __getitem__(self, name: str) -> np.ndarray:
        return self.fields[name]

    @property
    def mode(self) -> np.ndarray:
        return np.nan_to_num(self.fields["mode"]).astype(int)


def has_collisions(loaded) -> bool:
    """True when ``loaded`` (a :class:`kane.io.LoadedModel`) has collision shapes that kane's contact schemes run:
    ``[[collision]]`` tables, or a script's ``System.add_collision`` shapes. An imported URDF's or MJCF's collision
    geometry does not count (it is drawn and queried, and the robot runs as before, without contact)."""
    if loaded.tables.get("collision"):
        return True
    if loaded.path is not None and Path(loaded.path).suffix.lower() in (".urdf", ".xml"):
        return False
    return bool(loaded.system.collisions)


def refuse_collisions(loaded, command: str) -> None:
    """Raise :class:`kane.ModelError` when ``loaded`` has ``[[collision]]`` shapes, which ``command`` does not
    handle (its bodies would pass through each other)."""
    if has_collisions(loaded):
        raise ModelError(f"{getattr(loaded, 'path', None) or loaded.name}: {command} does not handle the "
                         f"[[collision]] shapes of this model (without them its bodies would pass through each "
                         f"other); run it with kane simulate (contact time stepping or --contact-scheme "
                         f"event-driven)")


def collision_pairs(model) -> tuple[str, ...]:
    """The names ``"<shape_a>|<shape_b>"`` of every pair of ``model``'s collision shapes that may touch (the pair
    filter of :func:`kane.mechanics.collision.collision_model`), in collision order."""
    from ..mechanics.collision import collision_model

    cm = collision_model(model)
    n = len(cm.collisions)
    return tuple(f"{cm.collisions[i].name}|{cm.collisions[j].name}" for i in range(n) for j in range(i + 1, n)
                 if cm.allowed[i, j])


def model_contact_problem(equations, params=None):
    """(bodies, contacts): the :class:`.system_bodies.SystemBodies` of ``equations`` (a :class:`kane.Equations`)
    and the callable q -> contact points of the model's collision shapes at q."""
    from ..mechanics.collision import CollisionData, contacts
    from .system_bodies import SystemBodies

    model = equations.model
    if not model.collisions:
        raise ModelError(f"model {model.name!r}: no collision shapes (add [[collision]] tables or "
                         f"System.add_collision)")
    bodies = SystemBodies(equations, params)
    data = CollisionData(model)

    def contact_points(q):
        return contacts(model, data, bodies.poses(q))

    return bodies, contact_points


def _pair_outputs(run: ContactRun, pairs: tuple[str, ...], points: np.ndarray) -> dict:
    """``"<pair>.<field>"`` -> (N+1,) from the run's per-contact records and their points of application
    ``points`` (K, 3) [m] (module docstring)."""
    n = run.t.shape[0]
    rec = run.contacts
    index = {p: k for k, p in enumerate(pairs)}
    sums = {f: np.zeros((n, len(pairs))) for f in ("pn", "ft1", "ft2", "s1", "s2", "count", "px", "py", "pz")}
    mode = np.zeros((n, len(pairs)))
    normal = np.full((n, len(pairs), 3), np.nan)
    shift = 1 if run.scheme is ContactScheme.TIME_STEPPING else 0  # time stepping: a step's forces end at k+1
    for r in range(rec.step.shape[0]):
        k, p = int(rec.step[r]) + shift, index.get(rec.name[r])
        if p is None or k >= n:
            continue
        pn = float(rec.normal_force[r])
        if int(rec.mode[r]) == 0 or not pn > 0:
            continue
        sums["pn"][k, p] += pn
        sums["ft1"][k, p] += rec.friction_force[r, 0]
        sums["ft2"][k, p] += rec.friction_force[r, 1]
        sums["s1"][k, p] += rec.slip_velocity[r, 0]
        sums["s2"][k, p] += rec.slip_velocity[r, 1]
        sums["count"][k, p] += 1
        for axis, key in enumerate(("px", "py", "pz")):
            sums[key][k, p] += pn * points[r, axis]
        normal[k, p] = rec.normal_world[r]
        mode[k, p] = max(mode[k, p], float(rec.mode[r]))
    closed = mode > 0
    nan = np.where(closed, 1.0, np.nan)
    count = np.where(closed, sums["count"], 1.0)
    pn = np.where(closed, sums["pn"], 1.0)
    cols = {"normal_force": sums["pn"] * nan, "friction_t1": sums["ft1"] * nan, "friction_t2": sums["ft2"] * nan,
            "slip_t1": sums["s1"] / count * nan, "slip_t2": sums["s2"] / count * nan, "mode": mode}
    for axis, key in zip("xyz", ("px", "py", "pz")):
        cols[f"point_{axis}"] = sums[key] / pn * nan
    for axis, c in zip("xyz", range(3)):
        cols[f"normal_{axis}"] = normal[:, :, c] * nan
    return {f"{pair}.{f}": np.ascontiguousarray(cols[f][:, p]) for p, pair in enumerate(pairs) for f in PAIR_FIELDS}


def _points_of_records(run: ContactRun, contact_points) -> np.ndarray:
    """(K, 3): the witness point on shape b of every record, from the contact points of the configuration the
    record's step found them at. A pair whose m records are fewer than its points there (some were apart, not
    taking part in the step) takes its m deepest points (smallest signed distance), in the order they were found
    (the order of the records)."""
    rec = run.contacts
    out = np.full((rec.step.shape[0], 3), np.nan)
    rows: dict = {}
    for r in range(rec.step.shape[0]):
        rows.setdefault((int(rec.step[r]), rec.name[r]), []).append(r)
    found: dict = {}
    for (k, name), records in rows.items():
        if k not in found:
            by_pair: dict = {}
            for cp in contact_points(run.q[k]):
                by_pair.setdefault(cp.name, []).append(cp)
            found = {k: by_pair}  # records come step by step: one configuration at a time
        cps = found[k].get(name, [])
        if len(cps) > len(records):
            keep = sorted(np.argsort([cp.distance for cp in cps], kind="stable")[:len(records)])
            cps = [cps[i] for i in keep]
        for r, cp in zip(records, cps):
            out[r] = cp.point_b_world
    return out


def pair_block_outputs(scheme: ContactScheme, block, pairs: tuple[str, ...], contact_points, previous) -> dict:
    """``"<pair>.<field>"`` -> (m,) of a :class:`.contact_events.SampleBlock` of a run (as :func:`_pair_outputs`
    of the whole run gives them); ``previous``: (index, t, q) of the sample before the block (time stepping's
    records of a step are found at its first sample), or None for the first block."""
    stepping = scheme is ContactScheme.TIME_STEPPING
    lead = 1 if stepping and previous is not None else 0
    t, q = block.t, block.q
    if lead:
        t, q = np.concatenate([[previous[1]], t]), np.vstack([previous[2], q])
    rec = block.contacts
    local = type(rec)(rec.step - (block.start - lead), rec.name, rec.normal_force, rec.friction_force,
                      rec.normal_world, rec.slip_velocity, rec.mode)
    run = ContactRun(t, q, np.zeros((t.shape[0], 0)), None, local, np.zeros(0, dtype=np.int64),
                     np.zeros(0, dtype=bool), 0.0, scheme)
    outputs = _pair_outputs(run, pairs, _points_of_records(run, contact_points))
    return {k: v[lead:] for k, v in outputs.items()}


def _setup(loaded, options, dynamics):
    """(t_end [s], params, dynamics, bodies, contact_points, q0, u0, ContactOptions) of a contact run of
    ``loaded`` by ``options``, checked (:func:`run_contacts`)."""
    from dataclasses import replace

    if not isinstance(options, ContactRunOptions):
        raise ArgumentError(f"run_contacts: options: expected a ContactRunOptions, got {type(options).__name__}")
    t_end = float(options.t_end if options.t_end is not None else loaded.simulation.t_end)
    t_start = float(loaded.simulation.t_start)
    if t_start != 0.0:
        raise ModelError(f"{loaded.path or loaded.name}: [simulation] t_start: a contact run starts at t = 0, got "
                         f"{t_start:g}")
    steps = round(t_end / options.dt)
    if steps < 1 or abs(steps * options.dt - t_end) > 1e-9 * max(1.0, t_end):
        raise ArgumentError(f"{loaded.path or loaded.name}: t_end = {t_end:g} s is not a whole number of contact "
                            f"steps dt = {options.dt:g} s")
    if getattr(loaded, "input_laws", None) or getattr(loaded, "tables", {}).get("inputs"):
        raise ModelError(f"{loaded.path or loaded.name}: a contact run does not take [inputs] schedules yet")
    params = dict(loaded.parameters)
    dyn = loaded.derive().compile() if dynamics is None else dynamics
    bodies, contact_points = model_contact_problem(dyn.equations, params)
    q0, u0 = loaded.initial_state(dyn)
    return steps * options.dt, params, dyn, bodies, contact_points, q0, u0, replace(options.contact,
                                                                                    scheme=options.scheme)


def run_contacts(loaded, options: ContactRunOptions = ContactRunOptions(), dynamics=None,
                 watch=None) -> ContactRunResult:
    """Run ``loaded`` (a :class:`kane.io.LoadedModel` with collision shapes) from its initial state by the contact
    scheme of ``options`` to ``options.t_end`` (default: the model's) in steps of ``options.dt`` [s], in memory
    (:class:`ContactJob` writes a run as it goes); ``dynamics``: the model's compiled dynamics when already built
    (default: derived and compiled here); ``watch()``: called before every contact query (once per step in time
    stepping)."""
    t_end, params, dyn, bodies, contact_points, q0, u0, contact = _setup(loaded, options, dynamics)
    start = time.perf_counter()

    def watched(q):
        watch()
        return contact_points(q)

    points = contact_points if watch is None else watched
    if contact.scheme is ContactScheme.EVENT_DRIVEN:  # free bodies on ground half-spaces: the compiled path
        from .contact_events_model import model_event_run
        run, contact_points = model_event_run(dyn, params, bodies, points, contact_points, q0, u0, options.dt,
                                              t_end, contact)
    else:  # free bodies: the compiled step
        from .contact_stepping_model import model_stepping
        stepping = model_stepping(dyn, params, bodies, contact_points)
        run = stepping.run(q0, u0, options.dt, t_end, contact, bodies, params,
                           watch=None if watch is None else (lambda k, t: watch()))
        contact_points = stepping.records
    wall = time.perf_counter() - start
    pairs = collision_pairs(dyn.equations.model)
    outputs = _pair_outputs(run, pairs, _points_of_records(run, contact_points))
    q_names = tuple(str(s) for s in dyn.equations.model.q)
    u_names = tuple(str(s) for s in dyn.equations.u_independent)
    return ContactRunResult(run, pairs, outputs, q_names, u_names, params, dyn, wall)


def write_contact_run(result: ContactRunResult, writer, description: str = ""):
    """Write ``result`` to ``writer`` (a :class:`kane.io.trajectory.TrajectoryWriter`, or a path): the samples,
    energy, the per-pair outputs as monitor series, the method ``"contact <scheme>"`` (the scheme that ran), the
    events of the event-driven scheme, and its statistics; returns the file's path."""
    from ..io.trajectory import EventRecord, Stats, TrajectoryWriter

    run = result.run
    if not isinstance(writer, TrajectoryWriter):
        writer = TrajectoryWriter(Path(writer), flush_every=max(run.t.shape[0], 1))
    method = f"contact {run.scheme.value}"
    if not writer.is_open:
        writer.open(q_names=result.q_names, u_names=result.u_names, residual_names=tuple(result.outputs),
                    has_energy=run.energy is not None, description=description or f"contact run ({method})",
                    params=result.params, method=method)
    for ev in getattr(run, "events", ()) or ():
        writer.add_event(EventRecord(float(ev.t), f"{ev.kind} {ev.contact}", "contact",
                                     {"contact": ev.contact, "modes": dict(ev.modes)}))
    writer.append_block(run.t, run.q, run.u, run.energy, result.outputs)
    n = run.t.shape[0] - 1
    evaluations = int(np.sum(run.iterations)) if run.scheme is ContactScheme.EVENT_DRIVEN else n
    loop = getattr(run, "engine", "python")  # the event-driven scheme records its path and why
    reason = getattr(run, "engine_reason", "") or ("" if loop.startswith("compiled") else
                                                   f"contact {run.scheme.value} loop")
    stats = Stats(n_fev=evaluations, n_steps=n, n_accepted=n, n_rejected=None,
                  wall_time_s=result.wall_time_s, method=f"{method}, h = {run.h:g} s", loop=loop, loop_reason=reason)
    return writer.close("completed", stats)


def contact_series(traj) -> ContactSeries | None:
    """The contact outputs of ``traj`` (a :class:`kane.io.trajectory.Trajectory`) by field, or None when it has
    none. A pair is listed when all of its :data:`PAIR_FIELDS` columns are present."""
    names = tuple(traj.residuals)
    pairs = []
    for name in names:
        if name.endswith(".mode"):
            pair = name[:-len(".mode")]
            if all(f"{pair}.{f}" in traj.residuals for f in PAIR_FIELDS) and pair not in pairs:
                pairs.append(pair)
    if not pairs:
        return None
    fields = {f: np.column_stack([np.asarray(traj.residuals[f"{p}.{f}"], dtype=float) for p in pairs])
              for f in PAIR_FIELDS}
    return ContactSeries(tuple(pairs), np.asarray(traj.t, dtype=float), fields)


class ContactJob:
    """``kane simulate``'s run of a model with collision shapes: ``start(writer, progress)`` opens the run file
    (its layout known from the model) and runs the scheme with the samples, energy and per-pair outputs written
    as they are made, closing the file as completed, interrupted or failed (:mod:`.contact_stream`); returns None
    (the CLI reads the file back). ``progress(state)`` (the CLI's :class:`kane.run_command.RunProgress`) is
    called with ``state.t`` [s] (the last sample written) and ``state.stats`` before each time step, and at each
    block of the event-driven scheme; it takes Ctrl-C. A limit of the options or a failure raises
    :class:`kane.simulate.SimulationError` naming the time, the contact modes and the file."""

    def __init__(self, loaded, options: ContactRunOptions, description: str = "", dynamics=None):
        self.loaded, self.options, self.description, self.dynamics = loaded, options, description, dynamics

    def start(self, writer, progress=None):
        from .contact_stream import write_contact_stream

        opts = self.options
        t_end, params, dyn, bodies, contact_points, q0, u0, contact = _setup(self.loaded, opts, self.dynamics)
        method = f"contact {opts.scheme.value}"
        pairs = collision_pairs(dyn.equations.model)
        writer.open(q_names=tuple(str(s) for s in dyn.equations.model.q),
                    u_names=tuple(str(s) for s in dyn.equations.u_independent),
                    residual_names=tuple(f"{p}.{f}" for p in pairs for f in PAIR_FIELDS),
                    has_energy=dyn.capabilities.energy, description=self.description or f"contact run ({method})",
                    params=params, method=method)
        records = contact_points
        if opts.scheme is ContactScheme.EVENT_DRIVEN:  # free bodies on ground half-spaces: the compiled path
            from .contact_events_model import model_event_run, model_scene
            from .contact_stream import STREAM_EVERY

            _, scene, why = model_scene(dyn, params, bodies)
            records = scene or contact_points  # the compiled path's own contact points

            def run(sink, watch):
                if scene is None or not HAVE_NUMBA:
                    sink.loop = ("python", why or "numba is not installed")
                else:
                    sink.loop = ("compiled", "")
                model_event_run(dyn, params, bodies, contact_points, contact_points, q0, u0, opts.dt, t_end,
                                contact, sink=sink, window=STREAM_EVERY)
        else:  # free bodies: the compiled step
            from .contact_stepping_model import model_stepping
            from .contact_stream import STREAM_EVERY

            stepping = model_stepping(dyn, params, bodies, contact_points)
            records = stepping.records

            def run(sink, watch):
                sink.loop = (stepping.step_loop, stepping.reason)  # watched: limits and signals per step
                stepping.run(q0, u0, opts.dt, t_end, contact, bodies, params, sink=sink, every=STREAM_EVERY,
                             watch=watch)

        def outputs(block, previous):
            return pair_block_outputs(opts.scheme, block, pairs, records, previous)

        write_contact_stream(writer, opts.scheme, run, outputs, opts.dt, q0, u0, method=method, progress=progress,
                             limits=(opts.max_steps, opts.max_wall_time))
        return None


def contact_simulation(loaded, settings, path, scheme="time-stepping", description: str = "", max_steps=None,
                       max_wall_time=None):
    """``kane simulate`` of a model with collision shapes: (the model's compiled dynamics, a :class:`ContactJob`
    of ``settings`` (a :class:`kane.io.SimulationSettings`: ``t_end``, ``dt`` the contact step, default 1 ms) by
    ``scheme`` with ``max_steps`` and ``max_wall_time`` [s] (None: no limit), its
    :class:`kane.io.trajectory.TrajectoryWriter` to ``path``)."""
    from ..io.trajectory import TrajectoryWriter

    options = ContactRunOptions(scheme=scheme, dt=settings.dt or 1e-3, t_end=settings.t_end, max_steps=max_steps,
                                max_wall_time=max_wall_time)
    dyn = loaded.derive().compile()
    return dyn, ContactJob(loaded, options, description, dyn), TrajectoryWriter(path)
