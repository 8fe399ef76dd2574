"""Running a sweep: the plan (names checked, points keyed by content hash), in-process or on Dask, into HDF5.

:func:`prepare` derives the model once, checks the swept names against it and gives every point its key, a
SHA-256 of the model's equations, the point's full parameter values and initial state, the run settings and the
metric definitions (user functions by their bytecode and constants). :func:`run_sweep` computes the points whose
keys are not yet in the output file, in-process (a loop over the compiled model) or on Dask (an embedded
``distributed.LocalCluster`` by default, or the scheduler at ``Execution.scheduler``), and appends each batch of
finished runs to the file (a failed run is in the file too, and is not retried). On Dask the runs go in chunks
of up to 16 (about four per worker thread), so the per-task cost of the scheduler is shared. The equations
travel once to every worker (``Client.scatter(broadcast=True)``) and each worker process compiles them once
(the C library comes from the on-disk cache under ``$KANE_CACHE_DIR``). A run that fails
(:class:`kane.SimulationError`, :class:`kane.errors.SingularStateError`) is recorded with its message and last
good state, and the sweep goes on. Points with the same key (repeated) run once. A model file's ``[inputs]``
schedules drive every run at its own parameter values (:class:`kane.io.input_schedule.InputSchedule`, sent to
the workers with the equations); their text is part of every key.

Each run starts from its point's q0 assembled at the point's own parameters (:func:`kane.assemble`: the nearest
configuration on the holonomic constraints, moving only the dependent coordinates), so a swept radius or length
never starts the run off its constraints; a q0 that cannot be assembled is the run's failure, with the reason.
The warnings a run raises (on whichever worker) are counted per kind in its row (``warnings``), reach
:class:`SweepResult` and the file. Catching warnings changes process-wide state, so the runs of one process take
turns (a lock); the parallelism of a sweep is its worker processes.
"""

from __future__ import annotations

import collections
import enum
import hashlib
import json
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, KaneError
from ..io.input_schedule import InputSchedule
from ..io.model_file import LoadedModel, load_model
from ..model.system import System
from ..simulate import AssemblyError, SimulationError, assemble
from ..simulate.run import State
from ..simulate.run import run as run_dynamics
from ..switching.model_table import switching_rules
from .batch import BatchModel, check_batchable, run_batch
from .switched import run_switched, switching_text
from .metrics import evaluate_metrics, failed_metrics, metric_columns
from .spec import Draws, Grid, Metrics, Points, RunSettings, Sweep, number
from .results import load_sweep, open_results
from .store import SweepTable

__all__ = ["SchedulerError", "Execution", "Backend", "Plan", "Task", "SweepResult", "prepare", "run_task",
           "run_sweep", "start_configuration"]


class SchedulerError(KaneError, ConnectionError):
    """The Dask scheduler cannot be reached; the message names its address."""


class Backend(enum.Enum):
    """Where the runs go: ``IN_PROCESS`` (a loop in this process), ``BATCH`` (in this process, RK4 over numpy
    batches of ``Execution.batch_size`` points: :mod:`kane.sweep.batch`) or ``DASK`` (a LocalCluster or a
    scheduler)."""

    IN_PROCESS = "in_process"
    BATCH = "batch"
    DASK = "dask"


@dataclass(frozen=True)
class Execution:
    """How to run: ``backend``; for Dask the ``scheduler`` address (None: an embedded LocalCluster of
    ``workers`` processes with ``threads_per_worker`` threads, or threads of this process when ``processes`` is
    False) and the ``connect_timeout`` [s] for a scheduler address; for a batch the points per batch."""

    backend: Backend = Backend.IN_PROCESS
    scheduler: str | None = None
    workers: int = 2
    threads_per_worker: int = 1
    processes: bool = True
    connect_timeout: float = 5.0
    batch_size: int = 1024

    def __post_init__(self):
        object.__setattr__(self, "backend", Backend(self.backend))
        for key in ("workers", "threads_per_worker", "batch_size"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(f"execution {key}: expected a whole number of at least 1, got {v!r}")
        object.__setattr__(self, "connect_timeout", number(self.connect_timeout, "execution connect_timeout",
                                                           positive=True))


@dataclass(frozen=True)
class Task:
    """One run: its ``key``, the swept ``values`` (in the order of the sweep's names), the full ``params``
    {name: value}, q0 (n_q,) and u0 (n_u,) (independent speeds; every speed of a switching model), and the
    switching ``rules`` at its parameters (() for a model without [[switching]] tables)."""

    key: str
    values: tuple[float, ...]
    params: dict
    q0: tuple[float, ...]
    u0: tuple[float, ...]
    rules: tuple = ()


@dataclass(frozen=True)
class Plan:
    """A sweep ready to run: the ``equations`` (kane.Equations), their ``model_hash``, the ``names`` swept, the
    metric ``columns``, the ``tasks`` in the sweep's order and the model file's input ``schedule`` (None without
    one)."""

    sweep: Sweep
    model_name: str
    equations: object
    model_hash: str
    names: tuple[str, ...]
    columns: tuple[str, ...]
    tasks: tuple[Task, ...]
    schedule: InputSchedule | None = None
    u_names: tuple[str, ...] = ()
    switched: bool = False


@dataclass(frozen=True)
class SweepResult:
    """The outcome of :func:`run_sweep`: ``table`` (every run of the sweep, in the sweep's order), ``done``
    (runs computed now and completed), ``failed`` (runs computed now that failed), ``skipped`` (already in the
    file), the output ``path`` (None in memory) and ``warnings``, {warning kind: count} raised by the runs
    computed now (on any worker)."""

    table: SweepTable
    done: int
    failed: int
    skipped: int
    path: Path | None
    warnings: dict = field(default_factory=dict)


def _hex(v: float) -> str:
    return float(v).hex()


def _code_digest(fn: Callable, depth: int = 0) -> str:
    """A digest of a function's bytecode, constants, names and closure values (not its file or line)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{type(fn).__module__}.{type(fn).__qualname__}:{fn!r}" if depth else getattr(fn, "__qualname__", "")
    parts = [code.co_code.hex(), repr(code.co_names)]
    for c in code.co_consts:
        parts.append(_code_digest(types.FunctionType(c, {}), depth + 1) if isinstance(c, types.CodeType) else repr(c))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        parts.append(_code_digest(value, depth + 1) if callable(value) else repr(value))
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def _settings_text(run: RunSettings, metrics: Metrics, schedule: InputSchedule | None = None,
                   switching: str | None = None) -> str:
    settings = {
        "t_span": [_hex(v) for v in run.t_span], "method": run.method.value, "rtol": _hex(run.rtol),
        "atol": _hex(run.atol), "dt": None if run.dt is None else _hex(run.dt),
        "output_dt": None if run.output_dt is None else _hex(run.output_dt), "max_step": _hex(run.max_step),
        "events": [[e.name, e.direction, bool(e.terminal), _code_digest(e.function)] for e in run.events],
        "metrics": [metrics.final, metrics.maxima, metrics.energy_drift,
                    [[f.name, _code_digest(f.fn)] for f in metrics.functions]]}
    if schedule is not None:  # (only then: the keys of a sweep without schedules are those of earlier versions)
        settings["inputs"] = schedule.text()
    if switching is not None:
        settings["switching"] = switching
    return json.dumps(settings, sort_keys=True)


def _model_hash(equations) -> str:
    prog = equations.program
    text = [prog.assignment_text(), *(f"{k} = {prog.outputs[k]}" for k in sorted(prog.outputs)),
            ",".join(map(str, equations.model.q)), ",".join(map(str, equations.u_independent))]
    return hashlib.sha256("\n".join(text).encode()).hexdigest()


def _loaded(model) -> LoadedModel:
    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, System):
        return LoadedModel.from_system(model)
    if isinstance(model, Path):
        return load_model(model)
    raise ArgumentError(f"sweep model: expected a kane.System or the path of a model file, got {model!r}")


def prepare(sweep: Sweep) -> Plan:
    """Derive the model, check the swept names and key every point. Unknown names raise ArgumentError listing
    the model's parameters, coordinates (``q0.NAME``) and independent speeds (``u0.NAME``)."""
    lm = _loaded(sweep.model)
    equations = lm.derive(dependent=sweep.dependent)
    switching = switching_text(lm, sweep.run)  # [[switching]]: every speed is a state (kane.sweep.switched)
    q_names = [str(s) for s in equations.model.q]
    u_names = [str(s) for s in (equations.model.u if switching else equations.u_independent)]
    p_names = [str(s) for s in equations.model.parameters]
    for name in sweep.names:
        kind, _, rest = name.partition(".")
        ok = (rest in q_names) if kind == "q0" and rest else (rest in u_names) if kind == "u0" and rest else \
            name in p_names
        if not ok:
            raise ArgumentError(
                f"sweep of model {lm.name!r}: no parameter, q0.NAME or u0.NAME called {name!r}; the model's "
                f"parameters: {', '.join(p_names) or '(none)'}; coordinates: {', '.join(q_names)}; "
                f"{'' if switching else 'independent '}speeds: {', '.join(u_names)}")
    model_hash = _model_hash(equations)
    schedule = lm.input_schedule()
    settings = _settings_text(sweep.run, sweep.metrics, schedule, switching)
    base_p = {n: float(lm.parameters[n]) for n in p_names}
    tasks, seen = [], set()
    for point in sweep.points():
        params = {**base_p, **{n: v for n, v in point.items() if "." not in n}}
        q0 = tuple(point.get(f"q0.{n}", float(lm.q0[n])) for n in q_names)
        u0 = tuple(point.get(f"u0.{n}", float(lm.u0.get(n, 0.0))) for n in u_names)
        text = json.dumps([model_hash, settings, sorted((k, _hex(v)) for k, v in params.items()),
                           [_hex(v) for v in q0], [_hex(v) for v in u0]])
        key = hashlib.sha256(text.encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            tasks.append(Task(key, tuple(point[n] for n in sweep.names), params, q0, u0,
                              switching_rules(lm, params, equations.model) if switching else ()))
    columns = metric_columns(sweep.metrics, sweep.run, q_names, u_names)
    return Plan(sweep, lm.name, equations, model_hash, sweep.names, columns, tuple(tasks), schedule, tuple(u_names),
                switching is not None)


_CHUNK_MAX = 64  # runs per Dask task at most
_COMPILED: dict[str, object] = {}  # model hash -> Dynamics, once per process (each Dask worker compiles once)


def _dynamics(equations, model_hash: str):
    dyn = _COMPILED.get(model_hash)
    if dyn is None:
        dyn = _COMPILED[model_hash] = equations.compile()
    return dyn


_WARNINGS_LOCK = threading.Lock()  # catch_warnings swaps process-wide state: one run of a process at a time


def start_configuration(dyn, task: Task, run: RunSettings) -> np.ndarray:
    """The q0 (n_q,) of ``task`` assembled at its own parameters (:func:`kane.assemble`); an AssemblyError naming
    the point when no consistent configuration is found near it."""
    q0 = np.array(task.q0, dtype=float)
    if not dyn.capabilities.holonomic:
        return q0
    try:
        return assemble(dyn, run.t_span[0], q0, params=task.params).q
    except (KaneError, ArithmeticError, np.linalg.LinAlgError) as exc:
        values = ", ".join(f"{n}={v:.6g}" for n, v in task.params.items())
        reason = str(exc) if isinstance(exc, AssemblyError) else f"{type(exc).__name__}: {exc}"
        raise AssemblyError(f"the start q0 cannot be made consistent with the constraints at this run's "
                            f"parameters ({values}): {reason}") from None


def _counts(caught) -> dict:
    return dict(collections.Counter(w.category.__name__ for w in caught))


def run_task(task: Task, equations, model_hash: str, run: RunSettings, metrics: Metrics, n_columns: int,
             keep: bool = False, schedule: InputSchedule | None = None) -> tuple:
    """Run one point and return its row (key, status, message, values, metrics, trajectory, warnings): the
    trajectory (t, q, u, energy) when ``keep`` and the run completed, else None; ``warnings`` {kind: count} of the
    warnings the run raised; ``schedule`` gives the inputs at the point's parameters. The run starts from the
    point's q0 assembled at its parameters (:func:`start_configuration`). A failure of the run
    (kane.SimulationError, a start that cannot be assembled, kane.errors.SingularStateError, an arithmetic
    error) is a row with status "failed"."""
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = _run_task(task, equations, model_hash, run, metrics, n_columns, keep, schedule)
    return (*row, _counts(caught))


def _run_task(task, equations, model_hash, run, metrics, n_columns, keep, schedule) -> tuple:
    try:
        if task.rules:
            traj = run_switched(task, equations, run, schedule)
            return (task.key, "done", "", task.values, evaluate_metrics(metrics, run, traj),
                    (traj.t, traj.q, traj.u, traj.energy) if keep else None)
        dyn = _dynamics(equations, model_hash)
        q0 = start_configuration(dyn, task, run)
        inputs = None if schedule is None else schedule.bind(dyn, task.params)
        traj = run_dynamics(dyn, State(q0, task.u0, run.t_span[0]), run.options, params=task.params,
                            inputs=inputs)
        return (task.key, "done", "", task.values, evaluate_metrics(metrics, run, traj),
                (traj.t, traj.q, traj.u, traj.energy) if keep else None)
    except SimulationError as exc:
        return (task.key, "failed", str(exc), task.values,
                failed_metrics(metrics, n_columns, exc.t_good, exc.q, exc.u), None)
    except (KaneError, ArithmeticError) as exc:
        return (task.key, "failed", f"{type(exc).__name__}: {exc}", task.values,
                failed_metrics(metrics, n_columns, None, None, None), None)


def _in_process(plan: Plan, tasks, sink, keep: bool) -> None:
    if not plan.switched:  # (a switching run embeds its constraints on line: nothing to compile)
        _COMPILED.setdefault(plan.model_hash, plan.equations.compile())
    s = plan.sweep
    for task in tasks:
        sink([run_task(task, plan.equations, plan.model_hash, s.run, s.metrics, len(plan.columns), keep,
                       plan.schedule)])


def _in_batch(plan: Plan, tasks, sink, execution: Execution, keep: bool) -> None:
    s = plan.sweep
    bm = BatchModel(plan.equations)

    def alone(task):
        return run_task(task, plan.equations, plan.model_hash, s.run, s.metrics, len(plan.columns), keep,
                        plan.schedule)

    layout = plan.equations.constraint_layout
    started = list(tasks)
    if any(b.holonomic is not None for b in layout.values()):  # each start assembled at its parameters
        dyn = _dynamics(plan.equations, plan.model_hash)
        started = []
        for task in tasks:
            try:
                started.append(replace(task, q0=tuple(start_configuration(dyn, task, s.run))))
            except AssemblyError:  # run alone, where it is recorded as failed with the reason
                sink([alone(task)])
    for i in range(0, len(started), execution.batch_size):
        sink(run_batch(plan, started[i: i + execution.batch_size], bm, alone, keep))


def _client(execution: Execution):
    from distributed import Client, LocalCluster

    if execution.scheduler is None:
        cluster = LocalCluster(n_workers=execution.workers, threads_per_worker=execution.threads_per_worker,
                               processes=execution.processes, dashboard_address=None)
        return Client(cluster), cluster
    try:
        return Client(execution.scheduler, timeout=f"{execution.connect_timeout}s"), None
    except (OSError, TimeoutError) as exc:
        raise SchedulerError(f"cannot reach the Dask scheduler at {execution.scheduler} within "
                             f"{execution.connect_timeout:g} s ({type(exc).__name__}: {exc}); start one with "
                             f"`dask scheduler` or leave the address out for a local cluster") from None


def _run_chunk(tasks, equations, model_hash: str, run: RunSettings, metrics: Metrics, n_columns: int,
               keep: bool, schedule=None) -> list:
    return [run_task(t, equations, model_hash, run, metrics, n_columns, keep, schedule) for t in tasks]


def _dynamics_ready(equations, model_hash: str, task: Task) -> bool:
    """Compile (or load from the C cache) this worker's dynamics: its right-hand side and energy at ``task``'s
    start (a start that cannot be evaluated is the run's own failure, recorded when it runs)."""
    dyn = _dynamics(equations, model_hash)
    q0, u0 = np.array(task.q0), np.array(task.u0)
    try:
        dyn.rhs(0.0, q0, u0, params=task.params)
        dyn.energy(0.0, q0, u0, params=task.params)
    except (KaneError, ArithmeticError, NotImplementedError):
        pass
    return True


def _on_dask(plan: Plan, tasks, sink, execution: Execution, keep: bool) -> None:
    from distributed import as_completed

    client, cluster = _client(execution)
    try:
        s = plan.sweep
        threads = max(1, sum(client.nthreads().values()))
        size = max(1, min(_CHUNK_MAX, len(tasks) // (4 * threads)))  # about 4 chunks a thread, results streaming
        chunks = [tasks[i: i + size] for i in range(0, len(tasks), size)]
        shared = client.scatter([plan.equations, s.run, s.metrics, plan.schedule], broadcast=True)
        # every worker compiles (or loads from the C cache) before the runs are handed out, all at once, so no
        # worker spends its share of the sweep compiling while the others run (a switching model compiles nothing)
        if not plan.switched:
            client.gather([client.submit(_dynamics_ready, shared[0], plan.model_hash, tasks[0], workers=[w],
                                         pure=False) for w in client.nthreads()])
        futures = client.map(_run_chunk, chunks, equations=shared[0], model_hash=plan.model_hash, run=shared[1],
                             metrics=shared[2], n_columns=len(plan.columns), keep=keep, schedule=shared[3],
                             pure=False)
        for batch in as_completed(futures, with_results=True).batches():
            sink([row for _, rows in batch for row in rows])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _axes(sweep: Sweep) -> tuple:
    kinds = {Grid: "grid", Draws: "random", Points: "points"}
    return tuple((kinds[type(a)], a.names) for a in sweep.axes)


def run_sweep(sweep: Sweep | Plan, path=None, execution: Execution = Execution(),
              progress: Callable[[int, int], None] | None = None, trajectories: bool = False) -> SweepResult:
    """Run ``sweep`` and return a :class:`SweepResult`. With ``path``, runs are appended to that HDF5 file as
    they finish and the keys already there are skipped (resumable); ``progress(finished, total)`` is called after
    each batch. With ``trajectories``, each completed run's samples (every ``output_dt``) go into the file too
    (:func:`kane.sweep.load_sweep_trajectory` reads them); runs skipped as already done keep what they have."""
    plan = sweep if isinstance(sweep, Plan) else prepare(sweep)
    if trajectories and path is None:
        raise ArgumentError("sweep trajectories are kept in the results file: give an output path")
    if execution.backend is Backend.BATCH:
        check_batchable(plan.sweep.run, plan.schedule, plan.switched)
    store = None if path is None else open_results(path, plan.model_name, plan.names, plan.columns, _axes(plan.sweep))
    have = store.keys() if store is not None else set()
    todo = [t for t in plan.tasks if t.key not in have]
    rows: list[tuple] = []
    counts = {"done": 0, "failed": 0}
    warned: collections.Counter = collections.Counter()

    def sink(batch):
        rows.extend(batch)
        for r in batch:
            counts[r[1]] += 1
            warned.update(r[6] if len(r) > 6 else {})
        if store is not None:
            store.append(batch, [str(v) for v in plan.equations.model.q],
                         list(plan.u_names))
        if progress is not None:
            progress(len(rows), len(todo))

    if todo:
        if execution.backend is Backend.DASK:
            _on_dask(plan, todo, sink, execution, trajectories)
        elif execution.backend is Backend.BATCH:
            _in_batch(plan, todo, sink, execution, trajectories)
        else:
            _in_process(plan, todo, sink, trajectories)
    if store is not None:
        table = load_sweep(store.path).sorted_by([t.key for t in plan.tasks])
    else:
        table = SweepTable(plan.names, plan.columns, tuple(r[0] for r in rows), tuple(r[1] for r in rows),
                           tuple(r[2] for r in rows), np.array([r[3] for r in rows], dtype=float).reshape(
                               len(rows), len(plan.names)),
                           np.array([r[4] for r in rows], dtype=float).reshape(len(rows), len(plan.columns)),
                           _axes(plan.sweep), tuple(r[6] if len(r) > 6 else {} for r in rows), plan.model_name)
        table = table.sorted_by([t.key for t in plan.tasks])
    return SweepResult(table, counts["done"], counts["failed"], len(plan.tasks) - len(todo),
                       None if store is None else store.path, dict(sorted(warned.items())))
