"""One interface for parametric surfaces S(s, t) in R^3 (seed 003: the contact surfaces of a rolling joint).

A surface maps parameters (s, t) inside its bounds to points [m]; it gives the tangents S_s, S_t [m per unit
parameter], the second derivatives S_ss, S_st, S_tt and the unit normal n = S_s x S_t / |S_s x S_t|. Every method
is vectorized: s and t broadcast against each other, and each result has the broadcast shape followed by 3.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, ModelError
from ..mechanics.arguments import real_array
from ..spatial import cross3

__all__ = ["Surface", "SurfaceDerivatives", "cross3", "finite_vector", "positive_length"]

# a point is degenerate where |S_s x S_t| is below this fraction of |S_s| |S_t| (parallel tangents) or of the
# product of the surface's typical tangent lengths (a vanishing tangent: a pole, a collapsed edge of the net)
_DEGENERATE = 1e-12
_SCALARS = (float, int, np.float64)


@dataclass(frozen=True)
class SurfaceDerivatives:
    """S and its partial derivatives at a set of parameters; each field is an array (..., 3) [m per unit
    parameter to the given order]. Fields beyond the requested order are None."""

    point: np.ndarray
    d_s: np.ndarray | None = None
    d_t: np.ndarray | None = None
    d_ss: np.ndarray | None = None
    d_st: np.ndarray | None = None
    d_tt: np.ndarray | None = None


class Surface(ABC):
    """A parametric surface. Subclasses set ``name``, ``bounds`` ((s_min, s_max), (t_min, t_max)),
    ``periodic`` (a flag per parameter: a periodic parameter may take any value) and ``tangent_scale`` (the typical
    |S_s|, |S_t| [m per unit parameter], for telling a vanishing tangent) and implement ``_evaluate``."""

    name: str = "surface"
    bounds: tuple[tuple[float, float], tuple[float, float]] = ((-np.inf, np.inf), (-np.inf, np.inf))
    periodic: tuple[bool, bool] = (False, False)
    tangent_scale: tuple[float, float] = (1.0, 1.0)

    @abstractmethod
    def _evaluate(self, s: np.ndarray, t: np.ndarray, order: int) -> list[np.ndarray]:
        """[S] (order 0), [S, S_s, S_t] (order 1) or [S, S_s, S_t, S_ss, S_st, S_tt] (order 2), each (n, 3), at
        checked 1-D parameter arrays s, t (n,)."""

    def parameters(self, s, t) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        """(s (n,), t (n,), shape): the parameters as flat float arrays and their broadcast shape. Non-numeric,
        non-finite or out-of-bounds values raise :class:`ArgumentError` naming the surface, parameter and value."""
        s_arr, t_arr = real_array(s, f"surface {self.name!r}: parameter s"), real_array(t, f"surface {self.name!r}: "
                                                                                          "parameter t")
        try:
            s_arr, t_arr = np.broadcast_arrays(s_arr, t_arr)
        except ValueError:
            raise ArgumentError(f"surface {self.name!r}: parameters s {s_arr.shape} and t {t_arr.shape} do not "
                                "broadcast against each other") from None
        shape = s_arr.shape
        s_arr, t_arr = s_arr.ravel(), t_arr.ravel()
        for label, values, (lo, hi), periodic in zip("st", (s_arr, t_arr), self.bounds, self.periodic):
            bad = ~np.isfinite(values)
            if not periodic:
                slack = 1e-12 * max(1.0, abs(lo) if np.isfinite(lo) else 1.0, abs(hi) if np.isfinite(hi) else 1.0)
                bad |= (values < lo - slack) | (values > hi + slack)
            if bad.any():
                value = float(values[np.argmax(bad)])
                raise ArgumentError(f"surface {self.name!r}: parameter {label} = {value!r} is outside its bounds "
                                    f"[{lo!r}, {hi!r}]" + (" (it must be finite)" if not np.isfinite(value) else ""))
        return s_arr, t_arr, shape

    def scalar_parameters(self, s, t) -> list[float] | None:
        """[s, t] as floats, periodic ones wrapped into the bounds, when both are Python or numpy float scalars
        inside the bounds; else None (then :meth:`Surface.parameters` checks them and names what is wrong)."""
        if type(s) not in _SCALARS or type(t) not in _SCALARS:
            return None
        z = []
        for x, (lo, hi), periodic in zip((s, t), self.bounds, self.periodic):
            if not lo <= x <= hi:  # outside (or NaN): wrapped if periodic, else refused
                if not (periodic and math.isfinite(x)):
                    return None
                x = lo + (x - lo) % (hi - lo)
            z.append(float(x))
        return z

    def derivatives(self, s, t, order: int = 2) -> SurfaceDerivatives:
        """S and its derivatives up to ``order`` (0, 1 or 2) at (s, t); each field (..., 3)."""
        if order not in (0, 1, 2):
            raise ArgumentError(f"surface {self.name!r}: derivative order must be 0, 1 or 2, got {order!r}")
        z = self.scalar_parameters(s, t)
        if z is not None:  # one point inside the bounds: the checks of parameters() are already done
            return SurfaceDerivatives(*(part[0] for part in self._evaluate(np.array(z[:1]), np.array(z[1:]), order)))
        s_arr, t_arr, shape = self.parameters(s, t)
        parts = [np.reshape(a, shape + (3,)) for a in self._evaluate(s_arr, t_arr, order)]
        return SurfaceDerivatives(*parts)

    def point(self, s, t) -> np.ndarray:
        """S(s, t) (..., 3) [m]."""
        return self.derivatives(s, t, 0).point

    def tangents(self, s, t) -> tuple[np.ndarray, np.ndarray]:
        """(S_s, S_t), each (..., 3) [m per unit parameter]."""
        d = self.derivatives(s, t, 1)
        return d.d_s, d.d_t

    def second_derivatives(self, s, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(S_ss, S_st, S_tt), each (..., 3)."""
        d = self.derivatives(s, t, 2)
        return d.d_ss, d.d_st, d.d_tt

    def normal(self, s, t) -> np.ndarray:
        """The unit normal S_s x S_t / |S_s x S_t| (..., 3). A point where the tangents vanish or are parallel
        (a collapsed edge of the control net, a pole) raises :class:`ModelError` naming the surface and (s, t)."""
        d = self.derivatives(s, t, 1)
        return self.unit_normal(d, s, t)

    def unit_normal(self, d: SurfaceDerivatives, s, t) -> np.ndarray:
        """The unit normal from already evaluated tangents ``d`` at (s, t) (used for the error message)."""
        n = cross3(d.d_s, d.d_t)
        if n.shape == (3,):  # one point: the same test on floats
            size = float(n @ n) ** 0.5
            scale = max(float(d.d_s @ d.d_s) ** 0.5 * float(d.d_t @ d.d_t) ** 0.5,
                        self.tangent_scale[0] * self.tangent_scale[1])
            if size > _DEGENERATE * scale:
                return n / size
        size = np.linalg.norm(n, axis=-1)
        scale = np.linalg.norm(d.d_s, axis=-1) * np.linalg.norm(d.d_t, axis=-1)
        bad = size <= _DEGENERATE * np.maximum(scale, self.tangent_scale[0] * self.tangent_scale[1])
        if np.any(bad):
            k = int(np.argmax(np.ravel(bad)))
            s_b, t_b = (float(np.ravel(np.broadcast_to(a, np.shape(bad)))[k]) for a in (s, t))
            raise ModelError(f"surface {self.name!r}: degenerate at (s, t) = ({s_b!r}, {t_b!r}): the normal "
                             f"S_s x S_t vanishes (|S_s| = {float(np.ravel(np.linalg.norm(d.d_s, axis=-1))[k]):.3g}, "
                             f"|S_t| = {float(np.ravel(np.linalg.norm(d.d_t, axis=-1))[k]):.3g}): repeated control "
                             "points or parallel tangents; move the point or fix the control net")
        return n / size[..., None]


def positive_length(surface: str, field: str, value) -> float:
    """``value`` as a float > 0 and finite, else :class:`ModelError` naming the surface and field."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"surface {surface!r}: field {field!r} must be a positive number, got {value!r}") from None
    if not (np.isfinite(x) and x > 0.0):
        raise ModelError(f"surface {surface!r}: field {field!r} must be a positive finite number [m], got {x!r}")
    return x


def placement(surface: str, origin, rotation) -> tuple[np.ndarray, np.ndarray]:
    """(origin (3,) [m], rotation R (3, 3), world from local) of a surface's placement, None giving the identity:
    finite, R a proper rotation (R^T R = I as np.allclose, det R = +1), else :class:`ModelError` naming the surface and
    the field."""
    o = finite_vector(surface, "origin", np.zeros(3) if origin is None else origin, (3,))
    R = finite_vector(surface, "rotation", np.eye(3) if rotation is None else rotation, (3, 3))
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-10) and np.linalg.det(R) > 0):
        raise ModelError(f"surface {surface!r}: field 'rotation' must be a proper rotation matrix "
                         f"(R^T R = I, det R = +1), got {R.tolist()!r}")
    return o, R


def finite_vector(surface: str, field: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as a finite float array of ``shape``, else :class:`ModelError` naming the surface and field."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"surface {surface!r}: field {field!r} must be an array of numbers of shape {shape}, got "
                         f"{value!r}") from None
    if arr.shape != shape or not np.all(np.isfinite(arr)):
        raise ModelError(f"surface {surface!r}: field {field!r} must be finite of shape {shape}, got shape "
                         f"{arr.shape}" + ("" if arr.shape != shape else " with non-finite entries"))
    return arr
