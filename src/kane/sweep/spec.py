"""What a sweep is: parameter points (grids, seeded random draws, lists), run settings and per-run metrics.

A point assigns numbers to names: a model parameter (``m``), an initial coordinate (``q0.NAME``) or an initial
independent speed (``u0.NAME``). The points of a sweep are the Cartesian product of its axes: each :class:`Grid`
is one axis, a :class:`Draws` block (n random points, all its variables drawn together) is one axis, a
:class:`Points` list (rows of several names) is one axis. Names not on any axis keep the model's values.

Everything here is a small frozen dataclass checked on construction: an empty range, a count below 1 or a value
that is not a finite number raises :class:`kane.errors.ArgumentError` naming the option. Names are checked
against the model later (:func:`kane.sweep.execute.prepare`), where the model is known.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..options import Method
from ..simulate import Event
from ..simulate.run import RunOptions

__all__ = ["Grid", "Uniform", "Normal", "Draws", "Points", "RunSettings", "Metric", "Metrics", "Sweep", "number",
           "MAX_POINTS"]

MAX_POINTS = 1_000_000  # points of one sweep at most unless Sweep(max_points=...) (or --max-points) raises it


def number(value: Any, what: str, *, positive: bool = False) -> float:
    """``value`` as a finite float; otherwise an ArgumentError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"{what}: expected a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ArgumentError(f"{what}: expected a finite number, got {value!r}")
    if positive and v <= 0:
        raise ArgumentError(f"{what}: expected a positive number, got {value!r}")
    return v


def _count(value: Any, what: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ArgumentError(f"{what}: expected a whole number of at least {least}, got {value!r}")
    return int(value)


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"{what}: expected a name (a parameter, q0.NAME or u0.NAME), got {value!r}")
    return value.strip()


@dataclass(frozen=True)
class Grid:
    """``n`` evenly spaced values of ``name`` from ``start`` to ``stop`` inclusive (``n`` = 1: ``start`` alone)."""

    name: str
    start: float
    stop: float
    n: int

    def __post_init__(self):
        object.__setattr__(self, "name", _name(self.name, "grid name"))
        what = f"grid {self.name}"
        object.__setattr__(self, "start", number(self.start, f"{what}: start"))
        object.__setattr__(self, "stop", number(self.stop, f"{what}: stop"))
        object.__setattr__(self, "n", _count(self.n, f"{what}: n"))
        if self.n > 1 and self.start == self.stop:
            raise ArgumentError(f"{what}: the range {self.start}:{self.stop} is empty; give a stop unlike the start")

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def count(self) -> int:
        """The number of values on this axis."""
        return self.n

    def rows(self) -> np.ndarray:
        """Values (n, 1)."""
        return np.linspace(self.start, self.stop, self.n)[:, None]


@dataclass(frozen=True)
class Uniform:
    """``name`` drawn uniformly from [low, high)."""

    name: str
    low: float
    high: float

    def __post_init__(self):
        object.__setattr__(self, "name", _name(self.name, "random name"))
        what = f"random {self.name}~uniform"
        object.__setattr__(self, "low", number(self.low, f"{what}: low"))
        object.__setattr__(self, "high", number(self.high, f"{what}: high"))
        if not self.high > self.low:
            raise ArgumentError(f"{what}({self.low}, {self.high}): the range is empty; expected low < high")

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, n)


@dataclass(frozen=True)
class Normal:
    """``name`` drawn from a normal distribution of ``mean`` and standard deviation ``std`` > 0."""

    name: str
    mean: float
    std: float

    def __post_init__(self):
        object.__setattr__(self, "name", _name(self.name, "random name"))
        what = f"random {self.name}~normal"
        object.__setattr__(self, "mean", number(self.mean, f"{what}: mean"))
        object.__setattr__(self, "std", number(self.std, f"{what}: std", positive=True))

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(self.mean, self.std, n)


@dataclass(frozen=True)
class Draws:
    """``n`` random points of ``variables`` (Uniform, Normal) from ``numpy.random.default_rng(seed)``: the same
    seed gives the same points on every machine. One axis of the sweep."""

    variables: tuple
    n: int
    seed: int = 0

    def __post_init__(self):
        variables = tuple(self.variables)
        if not variables or not all(isinstance(v, (Uniform, Normal)) for v in variables):
            raise ArgumentError(f"random draws: expected one or more Uniform or Normal variables, got {variables!r}")
        object.__setattr__(self, "variables", variables)
        object.__setattr__(self, "n", _count(self.n, "random draws: n"))
        object.__setattr__(self, "seed", _count(self.seed, "random draws: seed", least=0))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variables)

    @property
    def count(self) -> int:
        """The number of points drawn."""
        return self.n

    def rows(self) -> np.ndarray:
        """Values (n, len(variables))."""
        rng = np.random.default_rng(self.seed)
        return np.column_stack([v.draw(rng, self.n) for v in self.variables])


@dataclass(frozen=True)
class Points:
    """An explicit list: ``values``, rows of numbers for ``names`` (one row per point), e.g. read from a CSV file."""

    names: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]

    def __post_init__(self):
        names = tuple(_name(n, "points name") for n in (self.names if not isinstance(self.names, str) else ()))
        if not names:
            raise ArgumentError(f"points: expected a list of names, got {self.names!r}")
        rows = tuple(tuple(r) for r in self.values)
        if not rows:
            raise ArgumentError(f"points {', '.join(names)}: the list of rows is empty")
        for i, r in enumerate(rows):
            if len(r) != len(names):
                raise ArgumentError(f"points row {i}: expected {len(names)} values ({', '.join(names)}), "
                                    f"got {len(r)}")
        rows = tuple(tuple(number(v, f"points row {i} {n}") for v, n in zip(r, names)) for i, r in enumerate(rows))
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "values", rows)

    @property
    def count(self) -> int:
        """The number of rows."""
        return len(self.values)

    def rows(self) -> np.ndarray:
        return np.array(self.values, dtype=float)

    @classmethod
    def from_csv(cls, path) -> Points:
        """The points of a CSV file: a header of names (parameters, ``q0.NAME``, ``u0.NAME``), then one row of
        numbers per point. A missing file, an empty header, a row of another length or a cell that is not a number
        raises ArgumentError naming the file, the line and the column."""
        p = Path(path)
        try:
            lines = list(csv.reader(p.read_text(encoding="utf-8").splitlines()))
        except (OSError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"points file {p}: cannot be read ({exc})") from None
        numbered = [(i + 1, [c.strip() for c in r]) for i, r in enumerate(lines) if any(c.strip() for c in r)]
        if not numbered:
            raise ArgumentError(f"points file {p}: empty; expected a header of names, then rows of numbers")
        (_, names), body = numbered[0], numbered[1:]
        if any(not n for n in names):
            raise ArgumentError(f"points file {p} line {numbered[0][0]}: a column has no name in the header "
                                f"{', '.join(names)}")
        if not body:
            raise ArgumentError(f"points file {p}: no rows after the header {', '.join(names)}")
        rows = []
        for line, cells in body:
            if len(cells) != len(names):
                raise ArgumentError(f"points file {p} line {line}: expected {len(names)} values "
                                    f"({', '.join(names)}), got {len(cells)}")
            row = []
            for name, cell in zip(names, cells):
                try:
                    value = float(cell)
                except ValueError:
                    raise ArgumentError(f"points file {p} line {line} column {name}: expected a number, "
                                        f"got {cell!r}") from None
                row.append(number(value, f"points file {p} line {line} column {name}"))
            rows.append(tuple(row))
        return cls(tuple(names), tuple(rows))


@dataclass(frozen=True)
class RunSettings:
    """One run: times ``t_span`` (t0, t1) [s], integration ``method``, tolerances, fixed step ``dt`` [s] (fixed-step
    methods), sampling interval ``output_dt`` [s] (None: every step) and ``max_step`` [s]. ``events`` are
    :class:`kane.simulate.Event` objects passed to every run (their times become metrics). ``options``: the
    :class:`kane.RunOptions` of these settings (to t_span[1]) that every run of the sweep goes through."""

    t_span: tuple[float, float] = (0.0, 1.0)
    method: Method = Method.DOPRI5
    rtol: float = 1e-8
    atol: float = 1e-10
    dt: float | None = None
    output_dt: float | None = None
    max_step: float = math.inf
    events: tuple = ()
    options: RunOptions = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        try:
            t0, t1 = self.t_span
        except (TypeError, ValueError):
            raise ArgumentError(f"run t_span: expected (t0, t1) [s], got {self.t_span!r}") from None
        t0, t1 = number(t0, "run t_span start"), number(t1, "run t_span end")
        if not t1 > t0:
            raise ArgumentError(f"run t_span = ({t0}, {t1}): the interval is empty; expected t0 < t1")
        object.__setattr__(self, "t_span", (t0, t1))
        object.__setattr__(self, "method", Method.parse(self.method))
        object.__setattr__(self, "rtol", number(self.rtol, "run rtol", positive=True))
        object.__setattr__(self, "atol", number(self.atol, "run atol", positive=True))
        for key in ("dt", "output_dt"):
            if getattr(self, key) is not None:
                object.__setattr__(self, key, number(getattr(self, key), f"run {key}", positive=True))
        if not (isinstance(self.max_step, (int, float)) and self.max_step > 0):
            raise ArgumentError(f"run max_step: expected a positive number [s], got {self.max_step!r}")
        events = tuple(self.events)
        if not all(isinstance(e, Event) for e in events):
            raise ArgumentError(f"run events: expected kane.simulate.Event objects, got {events!r}")
        object.__setattr__(self, "events", events)
        object.__setattr__(self, "options", RunOptions(
            t_end=t1, method=self.method, rtol=self.rtol, atol=self.atol, dt=self.dt, output_dt=self.output_dt,
            max_step=self.max_step, events=events))


@dataclass(frozen=True)
class Metric:
    """A user metric: ``fn(trajectory) -> float`` (a kane.Trajectory), stored in the column ``name``."""

    name: str
    fn: Callable[[Any], float]

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ArgumentError(f"metric name: expected an identifier, got {self.name!r}")
        if not callable(self.fn):
            raise ArgumentError(f"metric {self.name}: expected a function of the trajectory, got {self.fn!r}")


@dataclass(frozen=True)
class Metrics:
    """Per-run metrics: the ``final`` state (columns ``final.q.NAME``, ``final.u.NAME``, ``t_final`` [s]), the
    ``maxima`` of |q| and |u| (``max.q.NAME``, ``max.u.NAME``), the ``energy_drift`` max |E(t) - E(t0)| [J],
    the first time of each run event (``event.NAME`` [s], NaN when it never happened) and the user
    ``functions`` (:class:`Metric`)."""

    final: bool = True
    maxima: bool = True
    energy_drift: bool = True
    functions: tuple = ()

    def __post_init__(self):
        functions = tuple(self.functions)
        if not all(isinstance(f, Metric) for f in functions):
            raise ArgumentError(f"metrics functions: expected Metric(name, fn) objects, got {functions!r}")
        names = [f.name for f in functions]
        if len(set(names)) != len(names):
            raise ArgumentError(f"metrics functions: a name is given twice in {', '.join(names)}")
        object.__setattr__(self, "functions", functions)


@dataclass(frozen=True)
class Sweep:
    """A sweep: ``model`` (a kane.System, a loaded model file or its path), ``axes`` (Grid, Draws, Points; their
    Cartesian product gives the points), ``run`` settings, ``metrics``, the ``dependent`` speeds (None: the
    model file's choice, or automatic) and ``max_points``, the most points the sweep may have (checked from the
    axes' sizes, in Python integers, before anything is allocated)."""

    model: Any
    axes: tuple = ()
    run: RunSettings = field(default_factory=RunSettings)
    metrics: Metrics = field(default_factory=Metrics)
    dependent: tuple[str, ...] | None = None
    max_points: int = MAX_POINTS

    def __post_init__(self):
        if isinstance(self.model, (str, os.PathLike)):
            object.__setattr__(self, "model", Path(self.model))
        axes = tuple(self.axes) if not isinstance(self.axes, (Grid, Draws, Points)) else (self.axes,)
        if not all(isinstance(a, (Grid, Draws, Points)) for a in axes):
            raise ArgumentError(f"sweep axes: expected Grid, Draws or Points objects, got {axes!r}")
        seen = set()
        for a in axes:
            for n in a.names:
                if n in seen:
                    raise ArgumentError(f"sweep axes: {n!r} is swept twice; give each name on one axis")
                seen.add(n)
        object.__setattr__(self, "axes", axes)
        object.__setattr__(self, "max_points", _count(self.max_points, "sweep max_points"))
        if self.count > self.max_points:
            sizes = " x ".join(f"{a.count} ({', '.join(a.names)})" for a in axes)
            raise ArgumentError(f"sweep of {sizes} = {self.count:,} points: more than the limit of "
                                f"{self.max_points:,} points; give fewer points, or raise the limit with "
                                f"Sweep(max_points=N) (kane sweep --max-points N)")
        if not isinstance(self.run, RunSettings):
            raise ArgumentError(f"sweep run: expected a RunSettings, got {self.run!r}")
        if not isinstance(self.metrics, Metrics):
            raise ArgumentError(f"sweep metrics: expected a Metrics, got {self.metrics!r}")
        if self.dependent is not None:
            object.__setattr__(self, "dependent", tuple(self.dependent))

    @property
    def count(self) -> int:
        """The number of points: the product of the axes' sizes (a Python integer, exact at any size)."""
        return math.prod(a.count for a in self.axes)

    @property
    def names(self) -> tuple[str, ...]:
        """The swept names, axis by axis."""
        return tuple(n for a in self.axes for n in a.names)

    def points(self) -> list[dict[str, float]]:
        """Every point: {name: value}, the last axis varying fastest."""
        blocks = [a.rows() for a in self.axes]
        out = []
        for combo in itertools.product(*[range(len(b)) for b in blocks]):
            row = {}
            for axis, block, i in zip(self.axes, blocks, combo):
                row.update(zip(axis.names, (float(v) for v in block[i])))
            out.append(row)
        return out
