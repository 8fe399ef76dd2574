"""The ``kane`` command: derive, simulate, plot and inspect multibody models from the shell.

    kane derive MODEL [--format text|latex|json] [-o FILE] [--dependent v2,w4]
    kane simulate MODEL [-o run.h5] [--t-end 10] [--method dopri5] [--rtol] [--atol] [--dt] [--output-dt]
    kane plot run.h5 [-o run.png]
    kane info run.h5

MODEL is a TOML model file (see :mod:`kane.io.model_file`) or a Python script that defines a module-level
``system`` (a :class:`kane.System`) or a function ``build()`` returning one (and optionally a ``simulation``
dict with the keys of a model file's ``[simulation]`` table). A bad model, a failed derivation or a failed run
prints a one-paragraph message and exits with status 2 (Ctrl-C or SIGTERM: 130). Times in s, energies in J.
"""

from __future__ import annotations

import functools
import runpy
import signal
import time
from dataclasses import fields, replace
from pathlib import Path

import click

from .errors import ArgumentError, KaneError, ModelError
from .command_group import LazyGroup
from .run_command import EXIT_INTERRUPTED
from .options import Method
from .simulate.run_limits import DEFAULT_MAX_STEPS

# Start-up (issue 28 item 8): `kane --version` and `kane --help` import only click and the modules above; each
# command imports what it needs in its body, and the commands of other packages load when used (LazyGroup).

__all__ = ["main", "load_model_or_script"]

EXIT_ERROR = 2
_FLUSH_EVERY = 10_000  # samples between writes of a run's file (it is also written every second)
_METHODS = [m.value for m in Method]


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, emoji=False)
    if not console.is_terminal:
        console.width = 120
    return console


def _errors(fn):
    """Print a KaneError (or an unreadable file) as one paragraph on stderr and exit with status 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (KaneError, OSError, ValueError) as exc:
            from .io.h5_read import printable
            from .simulate.simulator import SimulationError

            text = str(exc).strip() or type(exc).__name__
            if not isinstance(exc, SimulationError):
                text = " ".join(text.split())
            text = "\n".join(printable(line) for line in text.split("\n"))
            _console(stderr=True).print(f"error: {text}", markup=False, soft_wrap=True)
            raise click.exceptions.Exit(EXIT_ERROR) from None

    return wrapper


def load_model_or_script(path) -> LoadedModel:
    """A :class:`LoadedModel` from a ``.toml`` model file, an MJCF ``.xml`` or a ``.urdf`` file, or from a ``.py``
    script (run with runpy: the user's own code) defining ``system`` or ``build()``."""
    from .io.model_file import MODEL_DATA_SUFFIXES, LoadedModel, SimulationSettings, load_model_data
    from .model.system import System

    p = Path(path)
    if p.suffix.lower() in MODEL_DATA_SUFFIXES:
        return load_model_data(p)
    if p.suffix.lower() != ".py":
        raise ModelError(f"{p}: expected a .toml model file, an MJCF .xml, a .urdf or a .py script defining a "
                         "kane.System")
    namespace = runpy.run_path(str(p), run_name="__kane_model__")
    system = namespace.get("system")
    if system is None and callable(namespace.get("build")):
        system = namespace["build"]()
    if not isinstance(system, System):
        raise ModelError(f"{p}: expected a module-level variable 'system' (a kane.System) or a function build() "
                         f"returning one; found {type(system).__name__ if system is not None else 'neither'}")
    settings = namespace.get("simulation")
    if isinstance(settings, dict):
        known = {f.name for f in fields(SimulationSettings)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ModelError(f"{p}: variable 'simulation' has unknown keys {', '.join(unknown)}; allowed keys: "
                             f"{', '.join(sorted(known))}")
        settings = SimulationSettings(**settings)
    elif settings is not None and not isinstance(settings, SimulationSettings):
        raise ModelError(f"{p}: variable 'simulation' must be a dict or a kane.io.SimulationSettings")
    return LoadedModel.from_system(system, p, settings)


def _checked(lm: LoadedModel, command: str, what: str) -> LoadedModel:
    """``lm``, refused when it has [[contacts]] (``command`` would leave them out), with a note on stderr when it
    has [[switching]] rules (``what`` holds in the free mode)."""
    from .io.model_surfaces import refuse_contacts
    from .switching.contact_run import refuse_collisions
    from .switching.model_table import switching_note

    refuse_contacts(lm, command)
    refuse_collisions(lm, command)
    if note := switching_note(lm, what):
        _console(stderr=True).print(note, markup=False, soft_wrap=True)
    return lm


def _dependent(values) -> list[str] | None:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return names or None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kane", prog_name="kane")
def main():
    """kane: dynamics of multibody systems by Kane's method.

    Describe a system in a TOML model file (or a Python script), then derive its equations of motion, simulate
    it to an HDF5 file, plot the run and inspect it. Errors in a model print one paragraph naming the file,
    table and key, and exit with status 2.
    """
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "kane_startup", False) and click.get_current_context().invoked_subcommand != "simulate":
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the commands' own Ctrl-C handling from here


# ---- derive ------------------------------------------------------------------------------------------------
@main.command(short_help="Derive the equations of motion; print DOFs and operation counts.")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "latex", "json"]), default="text", show_default=True,
              help="Form of the written equations.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the equations to this file ('-' for stdout alone, without the summary); "
                   "without it they follow the summary on stdout.")
@click.option("--dependent", multiple=True, metavar="NAMES",
              help="Dependent speeds, comma-separated or repeated (default: the file's [simulation] "
                   "dependent, else chosen automatically).")
@_errors
def derive(model, fmt, output, dependent):
    """Derive the equations of motion of MODEL (.toml or .py).

    Prints the degrees of freedom, the partition of every joint's axes into degrees of freedom and constraints
    (rot x/y/z, trn x/y/z in the joint frame), and the operation counts of M, f and q' (multiplications and
    divisions, additions and subtractions, function calls); then writes the equations.
    """
    lm = load_model_or_script(model)
    eqs = lm.derive(_dependent(dependent))
    text = {"text": eqs.to_text, "latex": eqs.to_latex, "json": eqs.to_json}[fmt]()
    if output == "-":
        click.echo(text, nl=False)
        return
    console = _console()
    _print_summary(console, eqs)
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text, encoding="utf-8")
        console.print(f"wrote the equations ({fmt}) to {output}", markup=False)
    else:
        console.rule("equations")
        click.echo(text, nl=False)


def _print_summary(console: Console, eqs) -> None:
    from rich.table import Table

    model = eqs.model
    dof = len(eqs.u_independent)
    console.print(f"{model.name}: {dof} degree{'s' if dof != 1 else ''} of freedom", style="bold", markup=False)
    console.print(f"  q ({model.n_q}): {', '.join(map(str, model.q))}", markup=False)
    line = f"  u ({model.n_u}): {', '.join(map(str, model.u))}"
    if eqs.u_dependent:
        line += (f"; independent: {', '.join(map(str, eqs.u_independent))}; dependent: "
                 f"{', '.join(map(str, eqs.u_dependent))}")
    console.print(line, markup=False)
    permanent = [n for n in eqs.constraint_names if n not in eqs.transient_names]
    if eqs.constraint_names:
        console.print(f"  constraints: {', '.join(permanent) or '(none)'} embedded"
                      + (f"; transient: {', '.join(eqs.transient_names)}" if eqs.transient_names else ""),
                      markup=False)
    table = Table(title="joint axes: degree of freedom (DOF) or constraint", title_justify="left")
    for col in ("joint", "type", "parent -> child", "rot x", "rot y", "rot z", "trn x", "trn y", "trn z"):
        table.add_column(col, no_wrap=True)
    n_dof = 0
    for pj in model.joints:
        rot, trn = pj.joint.axis_partition()
        n_dof += sum(a == "DOF" for a in rot + trn)
        parent = "ground" if pj.parent < 0 else model.bodies[pj.parent].name
        table.add_row(pj.name, pj.joint.kind, f"{parent} -> {model.bodies[pj.child].name}",
                      *(_cell(a) for a in rot + trn))
    console.print(table)
    nb = model.n_bodies
    console.print(f"  6 x {nb} bodies = {6 * nb} potential DOFs: {n_dof} joint DOFs + {6 * nb - n_dof} joint "
                  f"constraints; {model.n_u - dof} embedded motion constraints leave {dof}", markup=False)
    counts = eqs.count_ops()
    ops = Table(title="operation counts per evaluation", title_justify="left")
    for col in ("", "mul/div", "add/sub", "functions", "total"):
        ops.add_column(col, justify="right" if col else "left")
    for key, label in (("M", "M (mass matrix)"), ("f", "f (forcing)"), ("qdot", "q' (kinematics)"),
                       ("M+f", "M and f together")):
        c = counts[key]
        ops.add_row(label, str(c.mul_div), str(c.add_sub), str(c.functions), str(c.total))
    console.print(ops)


def _cell(a: str) -> str:
    return "[bold green]DOF[/]" if a == "DOF" else "[dim]constraint[/]"


# ---- simulate ----------------------------------------------------------------------------------------------
@main.command(short_help="Simulate a model and write the run to an HDF5 file.")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(), help="HDF5 results file [default: MODEL's "
              "name with .h5, in the current directory].")
@click.option("--t-end", type=float, help="End time [s] (default: the file's t_end).")
@click.option("--method", type=click.Choice(_METHODS, case_sensitive=False), help="Integration method.")
@click.option("--rtol", type=click.FloatRange(min=0, min_open=True), help="Relative tolerance (adaptive methods).")
@click.option("--atol", type=click.FloatRange(min=0, min_open=True), help="Absolute tolerance (adaptive methods).")
@click.option("--dt", type=click.FloatRange(min=0, min_open=True), help="Step [s] (fixed-step methods).")
@click.option("--output-dt", type=click.FloatRange(min=0, min_open=True), help="Sampling interval [s].")
@click.option("--dependent", multiple=True, metavar="NAMES", help="Dependent speeds, comma-separated.")
@click.option("--project/--no-project", default=True, show_default=True,
              help="Correct the drift of configuration constraints (loop closures, contact heights) by Newton "
                   "projection after every step.")
@click.option("--max-steps", type=click.IntRange(min=1), help="Stop after this many attempted steps, keeping "
              f"the results [default: {DEFAULT_MAX_STEPS:,} for adaptive methods, none for fixed-step ones].")
@click.option("--max-wall-time", type=click.FloatRange(min=0), default=3600.0, show_default=True,
              help="Stop after this many seconds of stepping, keeping the results (0: no limit).")
@click.option("--loop", type=click.Choice(["auto", "compiled", "python"], case_sensitive=False), default="auto",
              show_default=True, help="auto: the compiled loop where the run allows it (the closing table says which "
              "ran and why); compiled: that or an error; python: step in Python.")
@click.option("--contact-scheme", type=click.Choice(["time-stepping", "event-driven"], case_sensitive=False),
              default="time-stepping", show_default=True, help="Models with [[collision]] shapes: velocity-level "
              "time stepping in steps of --dt (default 1 ms), or event-driven stick/slip sampled every --dt.")
@_errors
def simulate(model, output, t_end, method, rtol, atol, dt, output_dt, dependent, project, max_steps,
             max_wall_time, loop, contact_scheme):
    """Derive, compile and simulate MODEL from its initial conditions; write the run to an HDF5 file.

    Settings come from the model's [simulation] table, overridden by the options. The run is saved while it
    goes; a failure, --max-steps or --max-wall-time stops it with the last good state, keeping the samples;
    Ctrl-C or SIGTERM closes the file (status "interrupted: ...") and exits with status 130. A closing table
    gives evaluations, steps, the relative energy drift, the largest constraint residual and the wall time.
    A model with [[switching]] tables runs under its rules: the table adds the mode changes. A
    model with [[contacts]] rolls them in absolute coordinates and is written in its joint coordinates. A model
    with [[collision]] shapes runs by --contact-scheme in steps of --dt (default 1 ms; --method, --rtol, --atol
    and --output-dt do not apply), each pair's contact forces and mode recorded in the file.
    """
    from .io.output_path import claim
    from .io.trajectory import check_output_path, load_trajectory
    from .run_command import print_run_summary, run_job
    from .simulate.run_limits import interrupt_signals

    start = time.perf_counter()
    console, err = _console(), _console(stderr=True)
    path = check_output_path(output or f"{Path(model).stem}.h5")
    with claim(path), interrupt_signals() as signals:  # one run per output path: a second one refuses here
        try:
            lm, dyn, job, writer, s = _start(model, path, t_end, method, rtol, atol, dt, output_dt, dependent,
                                             project, max_steps, max_wall_time, loop, err, contact_scheme)
        except KeyboardInterrupt:
            err.print(f"interrupted during start-up of {model}; nothing was simulated or saved", markup=False,
                      soft_wrap=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        traj = run_job(job, s.t_start, s.t_end, err, writer, signals) or load_trajectory(path)  # (or: not in memory)
    print_run_summary(console, lm, dyn, traj, path, time.perf_counter() - start)


def _start(model, path, t_end, method, rtol, atol, dt, output_dt, dependent, project, max_steps, max_wall_time,
           loop, err, contact_scheme="time-stepping"):
    """Load, derive and compile MODEL and check its initial state; (model, dynamics, the run (a
    :class:`kane.simulate.RunRequest`), its writer to ``path``, the settings)."""
    from .io.trajectory import TrajectoryWriter
    from .simulate.rolling_run import rolling_simulation
    from .simulate.run import ProjectionMode, RunOptions, RunRequest, State
    from .simulate.start_check import check_start
    from .switching.command import switching_simulation

    lm = load_model_or_script(model)
    overrides = {k: v for k, v in (("t_end", t_end), ("method", method), ("rtol", rtol), ("atol", atol),
                                   ("dt", dt), ("output_dt", output_dt)) if v is not None}
    s = replace(lm.simulation, **overrides)
    if not s.t_end > s.t_start:
        raise ModelError(f"--t-end: expected an end time after the start t = {s.t_start:g} s, got {s.t_end:g}")
    from .switching.contact_run import contact_simulation, has_collisions

    if has_collisions(lm):  # [[collision]] shapes: a contact scheme runs it
        with err.status("deriving the equations of motion and the contact geometry"):
            dyn, job, writer = contact_simulation(lm, s, path, contact_scheme, f"{lm.name} ({model})", max_steps,
                                                  max_wall_time or None)
        return lm, dyn, job, writer, s
    if not Method.parse(s.method).adaptive and s.dt is None:
        raise ModelError(f"method {s.method!r} is fixed-step: give --dt [s] (or dt in [simulation])")
    if lm.tables.get("contacts"):  # rolling contacts: absolute coordinates, written in joint coordinates
        with err.status("building the rolling contacts"):
            dyn, job, writer = rolling_simulation(lm, s, path, project=project, max_steps=max_steps,
                                                  max_wall_time=max_wall_time or None)
        return lm, dyn, job, writer, s
    if lm.tables.get("switching"):  # seed 000's loop: the rules switch the transient constraints during the run
        with err.status("deriving the equations of motion"):
            job = switching_simulation(lm, s, dependent=_dependent(dependent), project=project,
                                       max_steps=max_steps, max_wall_time=max_wall_time or None, loop=loop)
        return lm, job.dynamics, job, TrajectoryWriter(path), s
    with err.status("deriving and compiling the equations of motion"):
        dyn = lm.derive(_dependent(dependent)).compile()
    q0, u0 = lm.initial_state(dyn)
    inputs = lm.input_function(dyn)
    check_start(dyn, s.t_start, q0, u0, dict(lm.parameters), inputs)
    options = RunOptions(t_end=s.t_end, method=s.method, rtol=s.rtol, atol=s.atol, dt=s.dt, output_dt=s.output_dt,
                         max_step=s.max_step, projection=ProjectionMode.AUTO if project else ProjectionMode.NONE,
                         standard_monitors=True, description=f"{lm.name} ({model})", max_steps=max_steps,
                         max_wall_time=max_wall_time or None, loop=loop)
    return lm, dyn, RunRequest(dyn, State(q0, u0, s.t_start), options, dict(lm.parameters), inputs), \
        TrajectoryWriter(path, flush_every=_FLUSH_EVERY), s


# ---- plot and info -----------------------------------------------------------------------------------------
@main.command(short_help="Plot a run, a sweep or a real-time log.")
@click.argument("run", type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Image file; the format follows the extension (.png, .svg, .pdf) [default: RUN with .png].")
@_errors
def plot(run, output):
    """Plot a run (an HDF5 file from `kane simulate`): coordinates, speeds, energy and residuals against time,
    with events marked; a sweep's results file (`kane sweep`): metric maps and histograms; or a log of `kane
    realtime`: hand and point, coupler force, energies, compute time and lateness per period, histograms."""
    from .io.h5_read import printable
    from .viz.file_info import plot_file

    written = plot_file(run, output)
    if written.note:
        _console(stderr=True).print(f"note: {printable(written.note)}", markup=False, soft_wrap=True)
    _console().print(f"wrote {printable(written.path)}", markup=False)


@main.command(short_help="Describe a run: model, status, samples, statistics, parameters.")
@click.argument("run", type=click.Path(dir_okay=False))
@_errors
def info(run):
    """Describe a run: model, status, samples, statistics, parameters, coordinates, speeds and events.

    RUN may be a run that was interrupted, killed or is still going: then its RUN.partial file is read when
    it is newer than RUN (or RUN is missing), and the status says how far it got. A log of `kane realtime` gets
    its deadline summary, counts and modes; a sweep's results file its runs, parameters and metrics. The file's
    layout is checked before it is read, and its text is printed with control characters and markup escaped."""
    from rich.table import Table
    from .viz.file_info import describe_file

    described = describe_file(run)
    console = _console()
    console.print(_table(str(run), described.rows))
    if described.params:
        pt = Table(title="parameters", title_justify="left")
        pt.add_column("name")
        pt.add_column("value", justify="right")
        for k, v in described.params:
            pt.add_row(_text(k), _text(v))
        console.print(pt)


def _text(value) -> str:
    """Text read from a file, safe to print: control characters escaped (kane.io.h5_read.printable), then Rich
    markup ("[link=...]" is printed as written)."""
    from rich.markup import escape
    from .io.h5_read import printable

    return escape(printable(value))


def _table(title: str, rows) -> Table:
    from rich.table import Table

    table = Table(title=_text(title), title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    for k, v in rows:
        table.add_row(_text(k), _text(v))
    return table


@main.command(short_help="Linearize about a state; eigenvalues; steady motions; stability along a sweep.")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--at", "at", multiple=True, metavar="NAME=VALUE", help="Change a coordinate, speed, parameter or input.")
@click.option("--steady", multiple=True, metavar="NAMES", help="Unknowns solved first for a steady motion.")
@click.option("--sweep", metavar="NAME=START:STOP:N", help="Eigenvalues along NAME; prints the stability changes.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), help="Eigenvalue plot of the sweep (PNG).")
@click.option("--dependent", multiple=True, metavar="NAMES", help="Dependent speeds, as for derive.")
@click.option("--ignorable", multiple=True, metavar="NAMES", help="Cyclic coordinates and symmetries to take out.")
@_errors
def linearize(model, at, steady, sweep, plot_file, dependent, ignorable):
    """Linearize MODEL about its initial state changed by --at; print the linear model and its eigenvalues."""
    from .analysis.command import linearize_report

    lm = _checked(load_model_or_script(model), "kane linearize", "the linearization")
    click.echo(linearize_report(lm, lm.derive(_dependent(dependent)), at, _dependent(steady) or (), sweep, plot_file,
                                _dependent(ignorable)), nl=False)


@main.command(short_help="Parameter sweep or Monte Carlo on Dask into a resumable HDF5 file.")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--grid", multiple=True, metavar="NAME=START:STOP:N", help="A grid axis (parameter, q0.NAME, u0.NAME).")
@click.option("--random", "randoms", multiple=True, metavar="NAME~uniform(A,B)", help="A random variable.")
@click.option("-n", type=click.IntRange(min=1), default=100, help="Random points.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random points: the same seed gives the same points on every machine.")
@click.option("--t-end", type=float, help="End time [s] of each run (default: the file's t_end).")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address [default: a local cluster].")
@click.option("--workers", type=click.IntRange(min=1), default=2, help="Local cluster workers.")
@click.option("--in-process", is_flag=True, help="Run in this process (no Dask).")
@click.option("--points", type=click.Path(dir_okay=False), help="CSV of points (header: names).")
@click.option("--trajectories", is_flag=True, help="Keep each run's samples in OUTPUT.")
@click.option("--max-points", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="The most points the sweep may have.")
@click.option("-o", "--output", type=click.Path(), default="sweep.h5", help="HDF5 file, or NAME.zarr (Zarr).")
@_errors
def sweep(model, grid, randoms, n, seed, t_end, scheduler, workers, in_process, points, trajectories, max_points,
          output):
    """Sweep MODEL over a grid or random points; runs already in OUTPUT are skipped."""
    from .sweep.command import sweep_command
    click.echo(sweep_command(load_model_or_script(model), output, grid, randoms, n, seed, t_end, scheduler, workers,
                             in_process, _console(stderr=True), points, trajectories, max_points))


# ---- export-c ----------------------------------------------------------------------------------------------
@main.command("export-c", short_help="Write the equations as C99: model.c, model.h, main.c and a Makefile.")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "out_dir", type=click.Path(), help="Directory [default: MODEL's name with _c].")
@click.option("--dt", type=click.FloatRange(min=0, min_open=True), help="RK4 step [s] of main.c [default: dt, 1e-3].")
@click.option("--steps", type=click.IntRange(min=1), default=10, show_default=True, help="RK4 steps of main.c.")
@click.option("--servo", is_flag=True, help="Write a standalone haptic servo program instead (servo.c, period.c, "
              "model.c, Makefile): the model's [realtime] settings, a UDP device, a CSV log, SCHED_FIFO.")
@click.option("--couple", metavar="BODY:X,Y,Z", help="With --servo: coupled body and point [default: [realtime]].")
@_errors
def export_c(model, out_dir, dt, steps, servo, couple):
    """Derive MODEL and write it as self-contained C99 with a demo main.c; inputs are arguments."""
    from .codegen.c_export import CExportOptions, export_c as write_c

    if couple and not servo:
        raise ArgumentError("--couple: only with --servo (the servo program's coupled body and point)")
    if servo:
        from .realtime.servo_export import export_servo

        res = export_servo(load_model_or_script(model), Path(out_dir or f"{Path(model).stem}_servo"), couple=couple)
        _console().print(f"wrote {', '.join(res.files)}; build and run: make -C {res.directory} && "
                         f"{res.directory / 'servo'} --help", markup=False, soft_wrap=True)
        return
    lm = _checked(load_model_or_script(model), "kane export-c", "the exported C code")
    opts = CExportOptions(dt=dt or lm.simulation.dt or 1e-3, steps=steps, t0=lm.simulation.t_start)
    res = write_c(lm.derive(), Path(out_dir or f"{Path(model).stem}_c"), q0=lm.q0, u0=lm.u0,
                  params=dict(lm.parameters), inputs=dict(lm.inputs), options=opts)
    _console().print(f"wrote model.c, model.h, main.c, Makefile; build and run: make -C {res.directory} && "
                     f"{res.directory / 'model_demo'}", markup=False, soft_wrap=True)


# ---- export-fmu --------------------------------------------------------------------------------------------
@main.command("export-fmu", short_help="Write the equations as an FMI 2.0 FMU (Model Exchange, Co-Simulation).")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "out_path", type=click.Path(), help="The .fmu file [default: MODEL's name .fmu].")
@click.option("--dt", type=click.FloatRange(min=0, min_open=True),
              help="Default step and longest RK4 step of doStep [s] [default: dt, 1e-3].")
@click.option("--fmi-type", type=click.Choice(["both", "me", "cs"]), default="both", show_default=True,
              help="The FMI interfaces: Model Exchange, Co-Simulation or both.")
@_errors
def export_fmu(model, out_path, dt, fmi_type):
    """Derive MODEL and write it as an FMU with its C sources and a binary built for this platform."""
    from .codegen.fmu_export import FmuOptions, export_fmu as write_fmu

    lm = _checked(load_model_or_script(model), "kane export-fmu", "the exported FMU")
    res = write_fmu(lm, Path(out_path or f"{Path(model).stem}.fmu"), FmuOptions(fmi_type=fmi_type, dt=dt))
    _console().print(f"wrote {res.path} (FMI 2.0 {' + '.join(res.fmi_types)}, {res.platform}, "
                     f"{len(res.value_references)} variables)", markup=False, soft_wrap=True)


# the commands whose logic is in other packages, imported when one is run or asked for: name -> (module, its click
# command from the module, the short help `kane --help` shows; tests/test_cli.py checks it equals the command's own)
main.lazy_commands = _PACKAGE_COMMANDS = {
    "study": ("kane.studies.command", lambda m: m.study_command(_errors),
              "Numerical studies from the seed papers (tables and plots)."),
    "realtime": ("kane.realtime.command", lambda m: m.realtime_command(load_model_or_script, _errors),
                 "Run a model in a fixed-rate haptic loop with a virtual coupler."),
    "assemble": ("kane.simulate.drag_command", lambda m: m.assemble_command(load_model_or_script, _errors),
                 "Drag a part of a mechanism along a path, assembling every frame."),
    "view": ("kane.viz.command", lambda m: m.view_command(load_model_or_script, _errors),
             "Play a run back in the browser (viser), or simulate a model live (--live)."),
}

if __name__ == "__main__":
    main()
