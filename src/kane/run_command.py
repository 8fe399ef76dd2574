"""The run and closing table of ``kane simulate`` (:mod:`kane.cli`): the progress shown while it goes, the Ctrl-C
that ends it with its file saved, and the table of evaluations, steps, energy drift, residuals, the loop and wall
time. Heavy modules (rich, numpy, the simulator) are imported when a run starts."""

from __future__ import annotations

import time

import click

__all__ = ["EXIT_INTERRUPTED", "RunProgress", "run_job", "print_run_summary"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
PROGRESS_EVERY_S = 5.0  # progress line interval [s] when stderr is not a terminal


class RunProgress:
    """``kane simulate``'s progress: a bar once the run has taken more than a second (on a terminal), else a line
    every ``PROGRESS_EVERY_S`` seconds; the deferred signals are taken at each call (Ctrl-C ends the run)."""

    def __init__(self, t0, t_end, err: Console, signals):
        self.t0, self.t_end, self.err, self.signals = t0, t_end, err, signals
        self.start = self.last = time.perf_counter()
        self.bar, self.task, self.sim = None, None, None

    def __call__(self, sim) -> None:
        self.sim = sim
        now, err, t0, t_end = time.perf_counter(), self.err, self.t0, self.t_end
        if not err.is_terminal and now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            done = 100 * (sim.t - t0) / (t_end - t0)
            err.print(f"simulating: t = {sim.t:.6g} s of {t_end:g} s ({done:.0f}%), {sim.stats.n_steps} steps, "
                      f"{now - self.start:.1f} s", markup=False)
        elif self.bar is None and now - self.start > 1.0 and err.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("simulating"), BarColumn(), TextColumn("t = {task.fields[t]} s"),
                                TimeElapsedColumn(), console=err, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("run", total=t_end - t0, t=f"{sim.t:.3f}")
        if self.bar is not None and now - self.last > 0.05:
            self.bar.update(self.task, completed=sim.t - t0, t=f"{sim.t:.3f}")
            self.last = now
        self.signals.check()

    def stop(self) -> None:
        self.bar = self.bar.stop() if self.bar is not None else None


def run_job(job, t0, t_end, err: Console, writer, signals):
    """Run ``job`` (a :class:`kane.simulate.RunRequest`) to t_end through :func:`kane.run` with
    :class:`RunProgress`. Signals are taken between steps or stretches of the compiled loop; an interrupted run
    closes its file, says where it is and exits with status 130."""
    from .simulate.run_limits import interrupted_status

    progress = RunProgress(t0, t_end, err, signals)
    signals.defer = True
    try:
        return job.start(writer, progress)
    except KeyboardInterrupt as exc:
        status = interrupted_status(exc)
        stats = progress.sim.stats if progress.sim is not None else None
        saved = writer.close(status, stats) if writer.is_open else writer.path
        progress.stop()
        t = f"t = {progress.sim.t:.6g} s" if progress.sim is not None else "the start"
        err.print(f"{status} at {t} of {t_end:g} s; the samples so far are saved in {saved} "
                  f"(kane info {saved})", markup=False, soft_wrap=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    finally:
        progress.stop()


def print_run_summary(console, lm, dyn, traj, path, total_s) -> None:
    import numpy as np
    from rich.markup import escape
    from rich.table import Table
    from .simulate.monitors import work_energy_balance
    from .switching.command import mode_change_rows

    st = traj.stats
    table = Table(title=escape(f"{lm.name}: {traj.status}"), title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    rej = "" if st.n_rejected is None else f" ({st.n_rejected} rejected)"
    rows = [("results", str(path)), ("time", f"{traj.t[0]:g} to {traj.t[-1]:g} s, {traj.n_samples} samples"),
            ("method", st.method), ("function evaluations", str(st.n_fev)), ("steps", f"{st.n_accepted}{rej}")]
    balance = work_energy_balance(dyn, traj, dict(lm.parameters)) if traj.energy is not None else None
    if balance is not None:
        rows += [(k, v) for k, v in balance.rows() if v]
    for name, label in (("constraint", "max constraint residual"),
                        ("configuration", "max configuration residual [m]"),
                        ("quaternion_norm", "max quaternion norm error")):
        if name in traj.residuals and traj.n_samples:
            rows.append((label, f"{float(np.max(traj.residuals[name])):.3e}"))
    rows += mode_change_rows(traj)
    rows += [("loop", st.loop_text or "(not recorded)"),
             ("wall time", f"{st.wall_time_s:.3f} s stepping, {total_s:.3f} s in all")]
    for k, v in rows:
        table.add_row(escape(k), escape(v))
    console.print(table)
