"""A small sweep as one numpy batch: classical RK4 (fixed step) over every point at once, no Dask, no loop per run.

The equations are compiled once by the numpy backend for a batch (q (B, n_q), u (B, n_u) and the parameters
(B, n_p) with a leading axis), and the B runs step together on the common grid t0 + k dt [s], with the arithmetic
of :class:`kane.simulate.fixed_step.RK4` in the same order, samples on the ``output_dt`` grid by the same cubic
Hermite interpolant as the Simulator, and the energy [J] at every sample. Each run's samples become a
:class:`kane.Trajectory`, so the metrics (and user functions) are those of a run made alone.

The metrics equal those of the one-by-one runs to round-off, not bit for bit: a run made alone evaluates the
same expressions by the C (or numba) backend, whose floating-point operations are grouped differently from
numpy's vectorized ones; the step grid, the sampling and the RK4 combination are the same.

A point the batch cannot carry (parameters out of their bounds, a state where the equations cannot be
evaluated, a state that becomes NaN or inf) leaves the batch and is run alone by
:func:`kane.sweep.execute.run_task`, so its failure is recorded with the same message and last good state as in
a one-by-one sweep. Only RK4 without run events is batched: other methods raise ArgumentError.

The batch pays for many short runs, where a large batch spreads numpy's cost per operation over many points;
a few long runs go faster one by one in the compiled C loop (``bench/bench_sweep.py`` measures both).
"""

from __future__ import annotations

import numpy as np

from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError, KaneError, SingularStateError
from ..io.trajectory import Trajectory
from ..options import Method
from .metrics import evaluate_metrics

__all__ = ["BatchModel", "check_batchable", "run_batch"]


def check_batchable(run, schedule=None, switched: bool = False) -> None:
    """Raise ArgumentError unless ``run`` (RunSettings) can be batched: RK4 with a step ``dt``, no events, no
    input ``schedule`` (the batch holds the inputs at their defaults) and no switching rules (``switched``)."""
    if switched:
        raise ArgumentError("the batch backend runs one set of equations; a model with [[switching]] rules changes "
                            "them during a run: use Backend.IN_PROCESS or Backend.DASK for this sweep")
    if schedule is not None:
        raise ArgumentError(f"the batch backend holds the inputs at their defaults; this model schedules "
                            f"{', '.join(schedule.names)}: use Backend.IN_PROCESS or Backend.DASK for this sweep")
    if run.method is not Method.RK4 or run.dt is None or run.events:
        raise ArgumentError(f"the batch backend runs fixed-step RK4 with a step dt and no run events; got method "
                            f"{run.method.value}, dt {run.dt}, {len(run.events)} event(s): use Backend.IN_PROCESS "
                            f"or Backend.DASK for this sweep")


class BatchModel:
    """The numpy batch functions of ``equations``: the right-hand side (q', u') and the energy [J] (None when a
    load has no known potential), compiled once."""

    def __init__(self, equations):
        prog = equations.program
        self.model = equations.model
        self.n_q, self.n_u = equations.model.n_q, len(equations.u_independent)
        self.q_names = tuple(str(s) for s in equations.model.q)
        self.u_names = tuple(str(s) for s in equations.u_independent)
        self.inputs = equations.model.input_values()
        self._rhs = compile_program(prog, ["qdot"], batch=True, linear_solve=("M", "f", "udot"))
        self._ke = compile_program(prog, ["kinetic"], batch=True)
        self._pe = compile_program(prog, ["potential"], batch=True) if equations.has_potential else None

    def rhs(self, t: float, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """x' (B, n_q + n_u) at the states x (B, n_q + n_u) and parameters p (B, n_p)."""
        qd, ud = self._rhs(t, x[:, : self.n_q], x[:, self.n_q:], p, self.inputs)
        return np.concatenate([np.reshape(qd, (len(x), -1)), np.reshape(ud, (len(x), -1))], axis=1)

    def energy(self, t: float, x: np.ndarray, p: np.ndarray) -> np.ndarray | None:
        """Kinetic + potential energy (B,) [J], or None."""
        if self._pe is None:
            return None
        q, u = x[:, : self.n_q], x[:, self.n_q:]
        return self._ke(t, q, u, p, self.inputs)[0][..., 0] + self._pe(t, q, u, p, self.inputs)[0][..., 0]


def _hermite(t0, x0, f0, t1, x1, f1, t):
    """The cubic Hermite interpolant of kane.simulate.fixed_step at t, on (B, n) arrays."""
    h = t1 - t0
    s = (t - t0) / h
    s2 = s * s
    s3 = s2 * s
    return (2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * (h * f0) + (3 * s2 - 2 * s3) * x1 + (s3 - s2) * (h * f1)


class _Dropped(Exception):
    """Rows (indices into the active batch) that must leave it."""

    def __init__(self, rows):
        super().__init__(rows)
        self.rows = rows


def _eval(fn, *args):
    """fn(*args); a row that cannot be evaluated or gives NaN/inf raises _Dropped with its index."""
    try:
        out = fn(*args)
    except SingularStateError as exc:
        if exc.state is None:
            raise
        raise _Dropped([exc.state]) from None
    if out is not None:
        bad = ~np.isfinite(np.reshape(out, (len(out), -1))).all(axis=1)
        if bad.any():
            raise _Dropped(list(np.flatnonzero(bad)))
    return out


def _integrate(bm: BatchModel, run, x0: np.ndarray, p: np.ndarray):
    """RK4 of the batch from x0 (B, n) with parameters p (B, n_p): (t (N,), x (N, B, n), energy (N, B) or None).
    Raises _Dropped naming the rows to take out (the caller removes them and starts again)."""
    t0, t1 = run.t_span
    dt, dt_out = run.dt, run.output_dt
    ts, xs, es = [t0], [x0], [_eval(bm.energy, t0, x0, p)]
    t, x, f = t0, x0, _eval(bm.rhs, t0, x0, p)
    t_start, k, grid_k, t_sampled = t0, 0, 1, t0
    while t < t1:
        t_new = t_start + (k + 1) * dt
        last = t_new >= t1 - 1e-6 * dt
        t_new = t1 if last else t_new
        h = t_new - t
        hh = 0.5 * h
        k2 = _eval(bm.rhs, t + hh, x + hh * f, p)
        k3 = _eval(bm.rhs, t + hh, x + hh * k2, p)
        k4 = _eval(bm.rhs, t_new, x + h * k3, p)
        k2 += k3
        k2 *= 2.0
        k2 += f
        k2 += k4
        x_new = x + (h / 6.0) * k2
        bad = ~np.isfinite(x_new).all(axis=1)
        if bad.any():
            raise _Dropped(list(np.flatnonzero(bad)))
        f_new = _eval(bm.rhs, t_new, x_new, p)
        if dt_out is None:
            ts.append(t_new), xs.append(x_new), es.append(_eval(bm.energy, t_new, x_new, p))
            t_sampled = t_new
        else:
            tol = 1e-9 * dt_out
            while (tk := t0 + grid_k * dt_out) <= t_new + tol:
                grid_k += 1
                xk = x_new if tk >= t_new - tol else _hermite(t, x, f, t_new, x_new, f_new, tk)
                tk = t_new if tk >= t_new - tol else tk
                ts.append(tk), xs.append(xk), es.append(_eval(bm.energy, tk, xk, p))
                t_sampled = tk
        t, x, f = t_new, x_new, f_new
        k += 1
    if t_sampled < t:
        ts.append(t), xs.append(x), es.append(_eval(bm.energy, t, x, p))
    return np.array(ts), np.stack(xs), (None if es[0] is None else np.stack(es))


def run_batch(plan, tasks, bm: BatchModel, run_alone, keep: bool = False) -> list[tuple]:
    """The rows (key, status, message, values, metrics, trajectory) of ``tasks`` (a list of kane.sweep.Task of
    ``plan``), run as one batch of ``bm``; the trajectory (t, q, u, energy) when ``keep``, else None.
    ``run_alone(task)`` gives the row of a point that leaves the batch."""
    s = plan.sweep
    check_batchable(s.run)
    rows, alone, active = {}, [], []
    for task in tasks:
        try:
            bm.model.parameter_values(task.params)
            active.append(task)
        except KaneError:
            alone.append(task)
    while active:
        x0 = np.array([[*t.q0, *t.u0] for t in active], dtype=float).reshape(len(active), bm.n_q + bm.n_u)
        p = np.array([bm.model.parameter_values(t.params) for t in active])
        try:
            t, x, e = _integrate(bm, s.run, x0, p)
        except _Dropped as d:
            out = set(int(i) for i in d.rows)
            alone += [active[i] for i in sorted(out)]
            active = [task for i, task in enumerate(active) if i not in out]
            continue
        for i, task in enumerate(active):
            traj = Trajectory(t=t, q=x[:, i, : bm.n_q], u=x[:, i, bm.n_q:], energy=None if e is None else e[:, i],
                              q_names=bm.q_names, u_names=bm.u_names, params=task.params)
            rows[task.key] = (task.key, "done", "", task.values, evaluate_metrics(s.metrics, s.run, traj),
                              (traj.t, traj.q, traj.u, traj.energy) if keep else None)
        break
    for task in alone:
        rows[task.key] = run_alone(task)
    return [rows[t.key] for t in tasks]
