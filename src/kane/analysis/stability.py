"""Eigenvalues of the linearized equations along one parameter, and the parameter values where stability changes
(a real part crosses zero), refined by Brent's method where the largest real part changes sign and by bisection
where the stable side is only marginally stable (a conservative system, whose real parts stay zero there).

The swept name may be a parameter, an input, an independent coordinate or an independent speed (the forward speed
of a bicycle, the spin of a disk); with ``steady`` unknowns, every point is first made a steady motion
(:func:`kane.analysis.steady_motion`), continuing from the previous solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..errors import ArgumentError, KaneError
from .linearize import linearizer
from .steady import steady_motion

__all__ = ["Crossing", "EigenSweep", "eigenvalue_sweep"]


@dataclass(frozen=True)
class Crossing:
    """A change of stability at ``value`` of the swept name: ``direction`` "destabilizing" (stable below, unstable
    above) or "stabilizing"; ``eigenvalues`` [1/s] those with the largest real part at the crossing."""

    value: float
    direction: str
    eigenvalues: np.ndarray


@dataclass(frozen=True)
class EigenSweep:
    """Eigenvalues [1/s] (N, n) at the swept ``values`` (N,) of ``name``, sorted by decreasing real part, of the
    states ``state_names``; ``unstable`` (N,) whether a real part exceeds the threshold; ``crossings`` in order."""

    name: str
    values: np.ndarray
    eigenvalues: np.ndarray
    state_names: tuple
    unstable: np.ndarray
    crossings: tuple

    def plot(self, path=None, ax=None):
        """Real parts (solid) and imaginary parts (dots) of the eigenvalues against the swept value, crossings as
        vertical lines; written to ``path`` when given. Returns the matplotlib figure."""
        import matplotlib

        if ax is None:
            matplotlib.use("Agg") if path is not None and matplotlib.get_backend() == "" else None
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(7, 4.5))
        else:
            fig = ax.figure
        for k in range(self.eigenvalues.shape[1]):
            ax.plot(self.values, self.eigenvalues[:, k].real, "-", color="C0", lw=1.2,
                    label="real part" if k == 0 else None)
            ax.plot(self.values, np.abs(self.eigenvalues[:, k].imag), ".", color="C1", ms=2.5,
                    label="|imaginary part|" if k == 0 else None)
        for c in self.crossings:
            ax.axvline(c.value, color="k", ls="--", lw=0.8)
            ax.annotate(f"{c.value:.6g}", (c.value, 0), textcoords="offset points", xytext=(3, 4), fontsize=8)
        ax.axhline(0.0, color="0.5", lw=0.6)
        ax.set_xlabel(self.name)
        ax.set_ylabel("eigenvalue [1/s]")
        ax.legend(loc="best", fontsize=8)
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig

    def table(self) -> str:
        """The crossings as text lines (value, direction, eigenvalues)."""
        if not self.crossings:
            return f"no change of stability for {self.name} in [{self.values[0]:g}, {self.values[-1]:g}]"
        return "\n".join(f"{self.name} = {c.value:.12g}: {c.direction} ("
                         + ", ".join(f"{z.real:.4g}{z.imag:+.4g}j" for z in c.eigenvalues) + ")"
                         for c in self.crossings)


class _Point:
    """Eigenvalues of the (reduced) A at one value of the swept name."""

    def __init__(self, equations, name, q, u, t, params, inputs, steady, reduced, dependent_q, ignorable=None):
        self.lz = linearizer(equations)
        lz = self.lz
        self.q, self.u, self.p, self.w = lz.arguments(q, u, params, inputs)
        self.t, self.steady, self.reduced, self.dependent_q = t, tuple(steady or ()), reduced, dependent_q
        self.ignorable = ignorable
        self.equations = equations
        for group, known in (("q", lz.q_names), ("u", lz.u_names), ("params", lz.param_names),
                             ("inputs", lz.input_names)):
            if name in known:
                self.group, self.index = group, known.index(name)
                break
        else:
            raise ArgumentError(f"sweep: unknown name {name!r}; known: parameters {', '.join(lz.param_names) or 'none'}"
                                f"; inputs {', '.join(lz.input_names) or 'none'}; coordinates {', '.join(lz.q_names)}"
                                f"; independent speeds {', '.join(lz.u_names)}")

    def __call__(self, value):
        arrays = {"q": self.q.copy(), "u": self.u.copy(), "params": self.p.copy(), "inputs": self.w.copy()}
        arrays[self.group][self.index] = value
        if self.steady:
            sm = steady_motion(self.equations, arrays["q"], arrays["u"], self.steady, self.t, arrays["params"],
                               arrays["inputs"], dependent_q=self.dependent_q, ignorable=self.ignorable)
            self.q, self.u = sm.q, sm.u  # continuation: the next point starts here
            lin = sm.linearization
        else:
            lin = self.lz.at(arrays["q"], arrays["u"], self.t, arrays["params"], arrays["inputs"],
                             dependent_q=self.dependent_q, warn=False, ignorable=self.ignorable)
        return lin.reduced() if self.reduced else lin

    def batch(self, values) -> list:
        """Eigenvalues at every value, the program evaluated for all of them at once (no steady-motion solve)."""
        arrays = {"q": self.q, "u": self.u, "params": self.p, "inputs": self.w}
        n = len(values)
        tiled = {k: np.tile(a, (n, 1)) for k, a in arrays.items()}
        tiled[self.group][:, self.index] = values
        p = tiled["params"] if self.group == "params" else self.p
        w = tiled["inputs"] if self.group == "inputs" else self.w
        out = []
        for k, v in enumerate(self.lz.evaluate_batch(self.t, tiled["q"], tiled["u"], p, w)):
            lin = self.lz.from_arrays(self.t, tiled["q"][k], tiled["u"][k], tiled["params"][k], tiled["inputs"][k],
                                      dependent_q=self.dependent_q, warn=False, values=v, ignorable=self.ignorable)
            lin = lin.reduced() if self.reduced else lin
            out.append((lin.eigenvalues(), lin.state_names))
        return out

    def eigenvalues(self, value):
        lin = self(value)
        return lin.eigenvalues(), lin.state_names


def eigenvalue_sweep(equations, name: str, values, q, u, t: float = 0.0, params=None, inputs=None, *,
                     steady=None, reduced: bool = True, dependent_q=None, threshold: float = 1e-8,
                     xtol: float = 1e-12, batch: bool = False, ignorable=None) -> EigenSweep:
    """Eigenvalues of A along ``values`` (N,) of ``name`` with everything else at (t, q, u, params, inputs) as for
    :func:`kane.analysis.linearize`; ``steady``: names of unknowns solved at every value to make it a steady motion;
    ``reduced``: of A without the cyclic coordinates (their eigenvalues are zero). A point is unstable when the
    largest real part exceeds ``threshold`` times max(1, the largest |eigenvalue|); each change between two
    neighbouring values is refined to ``xtol`` (absolute, in the swept quantity's units). ``batch``: evaluate all
    values in one vectorized call (without ``steady``); it compiles a second program once, which pays off for long
    or repeated sweeps of one model. ``ignorable``: as for :func:`kane.analysis.linearize`."""
    values = np.asarray(values, dtype=float).reshape(-1)
    if values.size < 2 or not np.all(np.isfinite(values)):
        raise ArgumentError(f"sweep of {name!r}: expected at least two finite values, got {values!r}")
    point = _Point(equations, str(name), q, u, t, params, inputs, steady, reduced, dependent_q, ignorable)
    results = point.batch(values) if batch and not point.steady else [point.eigenvalues(v) for v in values]
    states = results[0][1]
    for v, (lam, names) in zip(values, results):
        if names != states:
            raise KaneError(f"sweep of {name!r}: the states that stay put at {name} = {v:g} ({', '.join(names)}) "
                            f"differ from those at {values[0]:g} ({', '.join(states)}); sweep a narrower range")
    eig = np.array([lam for lam, _ in results])
    growth = eig.real.max(axis=1)
    tol = threshold * np.maximum(1.0, np.abs(eig).max(axis=1))
    unstable = growth > tol
    crossings = []
    for k in np.flatnonzero(unstable[1:] != unstable[:-1]):
        a, b = values[k], values[k + 1]
        crossings.append(_refine(point, a, b, unstable[k], threshold, xtol))
    return EigenSweep(str(name), values, eig, states, unstable, tuple(crossings))


def _polynomial(lam, zeros: int) -> np.ndarray:
    """Monic characteristic polynomial (highest power first) with ``zeros`` roots at 0 divided out. Its
    coefficients are well conditioned even where the roots are not (clustered, defective eigenvalues)."""
    c = np.real(np.poly(lam))
    return c[: len(c) - zeros] if zeros else c


def _hurwitz(c) -> float:
    """The Hurwitz determinant Delta_{d-1} of the monic polynomial c (degree d): zero where a complex pair of
    roots is on the imaginary axis."""
    d = len(c) - 1
    if d < 2:
        return 1.0
    H = np.zeros((d - 1, d - 1))
    for i in range(d - 1):
        for j in range(d - 1):
            k = 2 * (j + 1) - (i + 1)
            H[i, j] = c[k] if 0 <= k <= d else 0.0
    return float(np.linalg.det(H))


def _structural_zeros(*lams) -> int:
    """Roots at zero at both ends of a bracket: the trailing characteristic-polynomial coefficients that vanish."""
    counts = []
    for lam in lams:
        c = np.real(np.poly(lam))
        scale = np.maximum(1.0, np.abs(lam).max()) ** np.arange(len(c))
        small = np.abs(c) <= 1e-9 * scale
        n = 0
        while n < len(c) - 1 and small[len(c) - 1 - n]:
            n += 1
        counts.append(n)
    return min(counts)


def _refine(point, a, b, unstable_at_a, threshold, xtol) -> Crossing:
    """The crossing between a and b: Brent on a function that changes sign transversally there, the constant
    coefficient of the characteristic polynomial (a real root through zero, or a pair through zero) or its
    Hurwitz determinant (a complex pair across the imaginary axis), structural zero roots divided out; else Brent
    on the largest real part, or bisection on the unstable test when the stable side is only marginally stable."""

    def growth(v):
        lam = point.eigenvalues(v)[0]
        return float(lam.real.max()), threshold * max(1.0, float(np.abs(lam).max()))

    zeros = _structural_zeros(point.eigenvalues(a)[0], point.eigenvalues(b)[0])
    for fn in (lambda v: _polynomial(point.eigenvalues(v)[0], zeros)[-1],
               lambda v: _hurwitz(_polynomial(point.eigenvalues(v)[0], zeros))):
        fa, fb = fn(a), fn(b)
        if fa * fb < 0:
            x = brentq(fn, a, b, xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=200)
            return _crossing(point, x, unstable_at_a)
    stable_end = b if unstable_at_a else a
    g_s, tol_s = growth(stable_end)
    if g_s < -tol_s:
        x = brentq(lambda v: growth(v)[0], a, b, xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=200)
    else:
        lo, hi = a, b  # the unstable test is True at the unstable end
        for _ in range(200):
            if abs(hi - lo) <= xtol:
                break
            mid = 0.5 * (lo + hi)
            g, tl = growth(mid)
            if (g > tl) == unstable_at_a:
                lo = mid
            else:
                hi = mid
        x = 0.5 * (lo + hi)
    return _crossing(point, x, unstable_at_a)


def _crossing(point, x, unstable_at_a) -> Crossing:
    lam = point.eigenvalues(x)[0]
    top = lam[np.abs(lam.real - lam.real.max()) <= 1e-6 * max(1.0, float(np.abs(lam).max()))]
    return Crossing(float(x), "stabilizing" if unstable_at_a else "destabilizing", top)
