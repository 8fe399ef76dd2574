"""Two surfaces on two bodies (or a body and the ground) kept in tangent contact while assembling (seed 003,
Nelson & Cohen: the position and tangency constraints of the surface joint, the contact parameters
z = (u1, v1, u2, v2) extra unknowns solved with the configuration).

With S1 on body A and S2 on body B seen in ground axes (x1 = S1(u1, v1), x2 = S2(u2, v2), n1 the unit normal of
S1 at x1), the five rows are

    C = [x2 - x1 (3),  n1 . S2_u,  n1 . S2_v]   (the points coincide; S2's tangent plane is normal to n1),

and their exact rows in the speeds u and in z: for a material point x of a body, x' = (J_v - [x - o]x J_w) u
(J_v, J_w the velocity rows of the body origin o and the angular velocity, ground axes), so the position rows are
J_x2(B) - J_x1(A) in u and [-S1_u, -S1_v, S2_u, S2_v] in z; n1 turns with A and S2_u with B, so
d(n1 . S2_u) = (S2_u x n1) . (w_B - w_A) + (the common-normal Jacobian of
:func:`kane.surfaces.common_normal_conditions`) dz. Five rows in four extra unknowns: one condition on the bodies,
the single degree of freedom a point contact removes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError
from ..model.model import GROUND
from ..spatial import skew
from ..surfaces import MovedSurface, Surface, common_normal, common_normal_conditions
from ..surfaces.base import cross3
from .assembly import AssemblyError

__all__ = ["ContactPatchError", "SurfaceOnSurface"]

_PARAMS = ("u1", "v1", "u2", "v2")


class ContactPatchError(AssemblyError):
    """A contact parameter left its surface's patch (an assembly that cannot hold the contact): attributes
    ``contact``, ``surface``, ``parameter`` (one of u1, v1, u2, v2), ``value``, and ``q`` (n_q,) the last
    configuration reached (set by :meth:`kane.simulate.drag.DragSolver.solve`; None before)."""

    def __init__(self, message, contact, surface, parameter, value):
        super().__init__(message)
        self.contact, self.surface, self.parameter, self.value = contact, surface, parameter, value
        self.q = None


@dataclass
class SurfaceOnSurface:
    """``surface1`` fixed in ``body1`` and ``surface2`` fixed in ``body2`` (their points in the body's axes [m];
    ``"ground"`` for the ground) kept touching and tangent; ``params`` (4,) = (u1, v1, u2, v2) start the contact
    parameters and hold the last assembled ones (the next frame's warm start)."""

    name: str
    body1: str
    surface1: Surface
    body2: str
    surface2: Surface
    params: np.ndarray = field(default_factory=lambda: np.zeros(4))

    n_params = 4
    n_rows = 5

    def __post_init__(self):
        if self.body1 == self.body2:
            raise ArgumentError(f"surface contact {self.name!r}: both surfaces are on {self.body1!r}; a contact joins "
                                "two different bodies")
        for label, surface in (("surface1", self.surface1), ("surface2", self.surface2)):
            if not isinstance(surface, Surface):
                raise ArgumentError(f"surface contact {self.name!r}: {label} must be a kane.surfaces Surface, got "
                                    f"{type(surface).__name__}")
        self.params = self.checked(np.asarray(self.params, dtype=float))

    @property
    def bodies(self) -> tuple[str, ...]:
        """The bodies (not the ground) whose poses the rows need, in the order of :meth:`rows`' ``poses``."""
        return tuple(b for b in (self.body1, self.body2) if b != GROUND)

    def checked(self, z: np.ndarray) -> np.ndarray:
        """z (4,) with periodic parameters wrapped into their bounds; one leaving a patch raises
        :class:`ContactPatchError` naming the contact, the surface, the parameter and the value."""
        z = np.array(z, dtype=float).reshape(4)
        if not np.all(np.isfinite(z)):
            raise ArgumentError(f"surface contact {self.name!r}: contact parameters must be finite, got {z.tolist()}")
        for side, surface in enumerate((self.surface1, self.surface2)):
            for j, ((lo, hi), periodic) in enumerate(zip(surface.bounds, surface.periodic)):
                k = 2 * side + j
                value = float(z[k])
                if periodic and np.isfinite(lo) and np.isfinite(hi):
                    z[k] = lo + np.mod(value - lo, hi - lo)
                elif not lo - 1e-12 <= value <= hi + 1e-12:
                    raise ContactPatchError(f"surface contact {self.name!r}: parameter {_PARAMS[k]} of surface "
                                            f"{surface.name!r} = {value!r} left the patch [{lo!r}, {hi!r}]",
                                            self.name, surface.name, _PARAMS[k], value)
        return z

    def _placed(self, poses):
        """Both surfaces in ground axes and each side's (o, J_v, J_w) or None for the ground."""
        poses, out, sides = list(poses), [], []
        for body, surface in ((self.body1, self.surface1), (self.body2, self.surface2)):
            if body == GROUND:
                out.append(surface)
                sides.append(None)
            else:
                o, R, Jv, Jw = poses.pop(0)
                out.append(MovedSurface(surface, R, o))
                sides.append((o, Jv, Jw))
        return out, sides

    def settle(self, poses) -> None:
        """Move ``params`` to the common normal of the two surfaces at the bodies' ``poses`` (Newton from the
        current ones): a consistent start for z before the first assembly step."""
        (s1, s2), _ = self._placed(poses)
        found = common_normal(s1, s2, self.params)
        if found.converged:
            self.params = self.checked(found.params)

    def rows(self, poses, z: np.ndarray, n_u: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(C (5,), A_u (5, n_u), A_z (5, 4)) at contact parameters z (4,); ``poses``: per body of :attr:`bodies`
        (o (3,) [m], R (3, 3) body to ground, J_v (3, n_u) rows of o's velocity, J_w (3, n_u) of the angular
        velocity, ground axes)."""
        z = self.checked(z)
        (s1, s2), sides = self._placed(poses)
        F, Jz, d1, d2, n1 = common_normal_conditions(s1, s2, z)
        C = np.concatenate([d2.point - d1.point, F[2:]])
        A_u = np.zeros((5, n_u))
        tangency = np.array([cross3(d2.d_s, n1), cross3(d2.d_t, n1)])
        for sign, x, side in ((-1.0, d1.point, sides[0]), (1.0, d2.point, sides[1])):
            if side is not None:
                o, Jv, Jw = side
                A_u[:3] += sign * (Jv - skew(x - o) @ Jw)
                A_u[3:] += sign * tangency @ Jw
        A_z = np.vstack([np.stack([-d1.d_s, -d1.d_t, d2.d_s, d2.d_t], axis=1), Jz[2:]])
        return C, A_u, A_z
