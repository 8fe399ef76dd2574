"""``kane study``: the seed papers' numerical experiments from the shell (``kane study conditioning``)."""

from __future__ import annotations

import math

import click
from rich.console import Console
from rich.table import Table

__all__ = ["study_command"]


def _console() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = 120
    return console


def study_command(errors) -> click.Group:
    """The ``kane study`` click group; ``errors`` wraps each command as cli.py's others (one paragraph on
    stderr, exit status 2)."""

    @click.group("study", short_help="Numerical studies from the seed papers (tables and plots).")
    def study():
        """Reproduce the seed papers' numerical experiments with kane's own formulations."""

    @study.command(short_help="CRBM vs ABM on an ill-conditioned 2-link chain (seed 001, Figs. 5.3-5.6).")
    @click.option("--out", "out_dir", type=click.Path(file_okay=False), default="conditioning", show_default=True,
                  help="Directory for the CSV tables and PNG plots.")
    @click.option("--quick", is_flag=True, help="A coarse sweep and three chains over 2 s (a smoke run).")
    @click.option("--rtol", type=click.FloatRange(min=0, min_open=True), default=1e-6, show_default=True,
                  help="DOPRI5 relative tolerance (atol is the same) for the evaluation counts.")
    @click.option("--max-evaluations", type=click.IntRange(min=1), default=100_000, show_default=True,
                  help="A run needing more is reported as failed, as in the thesis.")
    @errors
    def conditioning(out_dir, quick, rtol, max_evaluations):
        """Condition number of the joint-space inertia H of a 2-link planar chain with a growing distal link, the
        relative error of CRBM (CRBA + LDL^T) and ABM (ABA) accelerations against a 50-digit reference over a sweep
        of the second joint angle (Figs. 5.3-5.5), and the function evaluations DOPRI5 needs to simulate 10 s with
        each (Fig. 5.6). Writes sweep.csv, integration.csv and four PNG plots to --out."""
        from .conditioning import run_study, write_results

        console, err = _console(), Console(stderr=True, highlight=False)
        with err.status("running the conditioning study (Cloutier 1995, §5.2)"):
            result = run_study(quick=quick, rtol=rtol, atol=rtol, max_evaluations=max_evaluations)
            paths = write_results(result, out_dir)
        s = result.sweep
        table = Table(title="Figs. 5.3-5.5: sweep of the joint 2 angle at rest (l1 = m1 = 1)", title_justify="left")
        for col in ("l2 = m2", "max cond(H)", "max rel. error CRBM", "max rel. error ABM"):
            table.add_column(col, justify="right")
        for i, l2 in enumerate(s.l2):
            table.add_row(f"{l2:g}", f"{s.cond[i].max():.2e}", f"{s.err_crbm[i].max():.2e}",
                          f"{s.err_abm[i].max():.2e}")
        console.print(table)
        st = result.settings
        table = Table(title=f"Fig. 5.6: DOPRI5 evaluations for {st['t_end']:g} s at rtol = {st['rtol']:g}",
                      title_justify="left")
        for col in ("l1 / L", "max cond(H)", "max rel. error CRBM", "n ABM", "n CRBM", "n CRBM / n ABM"):
            table.add_column(col, justify="right")
        for r in result.runs:
            table.add_row(f"{r.ratio:g}", f"{r.cond_max:.1e}", f"{r.crbm_error_max:.1e}", str(r.n_abm or "failed"),
                          str(r.n_crbm or "failed"), f"{r.r_crbm:.2f}" if math.isfinite(r.r_crbm) else "-")
        console.print(table)
        for p in paths:
            console.print(f"wrote {p}", markup=False)

    return study
