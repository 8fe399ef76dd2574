"""Deadline statistics of a fixed-rate loop: compute time per period, lateness of each wake-up (jitter) and its
histogram, missed deadlines (a period whose work ends after the start of the next period)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["JITTER_EDGES_S", "DeadlineSummary", "DeadlineStats"]

# histogram bin edges of the wake-up lateness [s]: 0, 1 us, 2 us, 5 us, ... 10 ms, then everything later
JITTER_EDGES_S = (0.0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, np.inf)


@dataclass(frozen=True)
class DeadlineSummary:
    """Totals of a run: ``periods``, ``missed`` deadlines, compute time per period p50 / p99 / max [s], lateness
    of the wake-up p99 / max [s], and ``jitter_counts`` (periods per bin of :data:`JITTER_EDGES_S`)."""

    period: float
    periods: int
    missed: int
    compute_p50: float
    compute_p99: float
    compute_max: float
    lateness_p99: float
    lateness_max: float
    jitter_counts: tuple

    def as_dict(self) -> dict:
        """A JSON-ready dict of the fields."""
        d = asdict(self)
        d["jitter_counts"] = [int(c) for c in self.jitter_counts]
        return d

    def lines(self) -> list[str]:
        """The closing summary, starting with ``missed deadlines: N of M periods``."""
        us = 1e6
        return [f"missed deadlines: {self.missed} of {self.periods} periods",
                f"compute time per period: p50 {self.compute_p50 * us:.1f} us, p99 {self.compute_p99 * us:.1f} us, "
                f"max {self.compute_max * us:.1f} us (period {self.period * us:.0f} us)",
                f"wake-up lateness: p99 {self.lateness_p99 * us:.1f} us, max {self.lateness_max * us:.1f} us"]


class DeadlineStats:
    """Collects, for each period of length ``period`` [s], the compute time [s] (from the wake-up to the end of
    its work) and the lateness [s] of the wake-up after the scheduled start; the period misses its deadline when
    lateness + compute time exceeds the period."""

    def __init__(self, period: float, capacity: int = 1024):
        self.period = float(period)
        self._compute = np.full(capacity, 0.0)  # every page written now, not at the period that first reaches it
        self._late = np.full(capacity, 0.0)
        self.n = 0
        self.missed = 0

    @classmethod
    def from_rows(cls, period: float, lateness, compute) -> DeadlineStats:
        """The statistics of recorded periods: ``lateness`` and ``compute`` (n,) [s] (a log's columns)."""
        lateness, compute = np.asarray(lateness, dtype=float), np.asarray(compute, dtype=float)
        stats = cls(period, capacity=max(1, lateness.size))
        stats._late[: lateness.size], stats._compute[: compute.size] = lateness, compute
        stats.n = int(lateness.size)
        stats.missed = int(np.count_nonzero(lateness + compute > stats.period))
        return stats

    def add(self, lateness: float, compute: float) -> bool:
        """Record one period; returns whether it missed its deadline."""
        if self.n == self._compute.shape[0]:
            self._compute = np.concatenate([self._compute, np.zeros(self.n)])
            self._late = np.concatenate([self._late, np.zeros(self.n)])
        self._compute[self.n], self._late[self.n] = compute, lateness
        self.n += 1
        missed = lateness + compute > self.period
        self.missed += missed
        return missed

    @property
    def compute(self) -> np.ndarray:
        """Compute time of every period so far (n,) [s]."""
        return self._compute[: self.n]

    @property
    def lateness(self) -> np.ndarray:
        """Wake-up lateness of every period so far (n,) [s]."""
        return self._late[: self.n]

    def live_line(self, window: int = 1000) -> str:
        """One short line for a live display: loop time, periods, missed deadlines, and the mean and maximum
        compute time [us] of the last ``window`` periods (cheap: called while the loop runs)."""
        n = self.n
        recent = self._compute[max(0, n - window):n]
        mean, top = (float(recent.mean()), float(recent.max())) if recent.size else (0.0, 0.0)
        return (f"t {n * self.period:8.2f} s  periods {n}  missed {self.missed}  compute (last {recent.size}): "
                f"mean {mean * 1e6:.1f} us, max {top * 1e6:.1f} us")

    def summary(self) -> DeadlineSummary:
        c, late = self.compute, self.lateness
        pct = (lambda a, p: float(np.percentile(a, p)) if a.size else 0.0)
        inner = np.array(JITTER_EDGES_S[1:-1])
        counts = np.bincount(np.searchsorted(inner, np.maximum(late, 0.0), side="right"), minlength=inner.size + 1)
        return DeadlineSummary(self.period, self.n, int(self.missed), pct(c, 50), pct(c, 99),
                               float(c.max()) if c.size else 0.0, pct(late, 99),
                               float(late.max()) if late.size else 0.0, tuple(int(k) for k in counts))
