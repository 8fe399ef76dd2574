"""The result of a linearization: :class:`Linearization` (x' = A x + B r about an operating point, its reduction to
the states that stay put, modes and state-space forms), :class:`Modes` and :class:`NotSteadyWarning`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import KaneError
from .mechanical import MechanicalForm, mechanical_form

__all__ = ["Linearization", "Modes", "NotSteadyWarning", "not_steady_text"]


class NotSteadyWarning(UserWarning):
    """The operating point is not a steady motion: A and B describe the tangent of one passing trajectory."""


@dataclass(frozen=True)
class Modes:
    """Eigenvalues [1/s] (n,), sorted by decreasing real part, and eigenvectors as columns of ``vectors``
    (n, n), each scaled so that its largest component is 1; rows named by ``state_names``."""

    eigenvalues: np.ndarray
    vectors: np.ndarray
    state_names: tuple

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Damped frequencies |Im(lambda)| / (2 pi) [Hz] (n,)."""
        return np.abs(self.eigenvalues.imag) / (2 * np.pi)

    @property
    def damping_ratios(self) -> np.ndarray:
        """-Re(lambda) / |lambda| (n,); nan for a zero eigenvalue."""
        mag = np.abs(self.eigenvalues)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mag > 0, -self.eigenvalues.real / mag, np.nan)


@dataclass(frozen=True)
class Linearization:
    """x' = A x + B r about an operating point, x = (independent coordinates, independent speeds).

    A (n_x, n_x) and B (n_x, n_r) in SI units of the state and inputs; the coordinates are those of
    :mod:`kane.analysis.manifold` (each quaternion's rotation vector ``<joint>.rx/ry/rz`` in body axes in place of
    its 4 components). ``rates`` (n_x,) is x' at the operating point. The ``cyclic`` states are what
    :meth:`reduced` drops: the coordinates that no speed's rate depends on, even through other coordinates (such as
    position and heading on a plane; found at random generic states and parameters, not at this point's values),
    and one coordinate per rotational symmetry in ``symmetries`` (a quaternion joint's heading or spin) that the
    motion follows, at rates ``frame_rates`` [rad/s]. ``residual`` (named by ``residual_names``, the states of
    :meth:`reduced`) is the rate of the other states once the motion along the symmetries is taken out: it is zero
    exactly at a steady motion (a relative equilibrium; an equilibrium when nothing moves), where A is taken in the
    frame that moves with the symmetries so that it is the same all along the motion. ``q`` (n_q,) holds every
    coordinate of the model, the dependent ones included; ``u`` (p,) the independent speeds.
    """

    A: np.ndarray
    B: np.ndarray
    state_names: tuple
    input_names: tuple
    coordinate_names: tuple
    speed_names: tuple
    dependent_coordinates: tuple
    cyclic: tuple
    rates: np.ndarray
    residual: np.ndarray
    residual_names: tuple
    steady: bool
    t: float
    q: np.ndarray
    u: np.ndarray
    params: np.ndarray
    inputs: np.ndarray
    mass_matrix: np.ndarray = field(repr=False)
    symmetries: tuple = ()
    frame_rates: tuple = ()
    quotient: object = field(default=None, repr=False)

    @property
    def n_coordinates(self) -> int:
        return len(self.coordinate_names)

    def eigenvalues(self, reduced: bool = False) -> np.ndarray:
        """Eigenvalues of A [1/s] (n_x,), by decreasing real part; ``reduced``: of :meth:`reduced`'s A."""
        lin = self.reduced() if reduced else self
        lam = np.linalg.eigvals(lin.A)
        return lam[np.lexsort((-lam.imag, -lam.real))]

    def modes(self, reduced: bool = False) -> Modes:
        """Eigenvalues and eigenvectors of A (or of :meth:`reduced`'s A) as :class:`Modes`."""
        lin = self.reduced() if reduced else self
        lam, vec = np.linalg.eig(lin.A)
        order = np.lexsort((-lam.imag, -lam.real))
        lam, vec = lam[order], vec[:, order]
        if vec.size:
            big = vec[np.argmax(np.abs(vec), axis=0), np.arange(vec.shape[1])]
            vec = vec / big
        return Modes(lam, vec, lin.state_names)

    def reduced(self) -> "Linearization":
        """The linearization of the states that stay put: the ``cyclic`` states dropped (and, at a relative
        equilibrium, the other states taken modulo the motion along the symmetries); the same all along a steady
        motion."""
        qt = self.quotient
        if qt is None or not self.cyclic:
            return self
        names = tuple(self.state_names[k] for k in qt.states)
        coords = tuple(n for n in names if n in self.coordinate_names)
        return replace(self, A=qt.A, B=qt.B, state_names=names, coordinate_names=coords, cyclic=(), rates=qt.residual,
                       quotient=None)

    def mechanical(self) -> MechanicalForm:
        """M x'' + C x' + K x = B r in the reduced coordinates: see :func:`kane.analysis.mechanical.mechanical_form`."""
        return mechanical_form(self)

    def state_space(self):
        """``scipy.signal.StateSpace(A, B, I, 0)``: every state an output (n_x outputs, n_r inputs)."""
        from scipy.signal import StateSpace

        n, m = self.A.shape[0], self.B.shape[1]
        return StateSpace(self.A, self.B, np.eye(n), np.zeros((n, m)))

    def to_control(self):
        """A python-control ``StateSpace`` (A, B, I, 0) with the state and input names, when python-control is
        installed (else a :class:`KaneError` saying so)."""
        try:
            import control
        except ImportError:
            raise KaneError("to_control needs python-control (pip install control); state_space() gives "
                            "scipy.signal's form") from None
        n, m = self.A.shape[0], self.B.shape[1]
        return control.ss(self.A, self.B, np.eye(n), np.zeros((n, m)), states=list(self.state_names),
                          inputs=list(self.input_names) or None, outputs=list(self.state_names))

    def __str__(self) -> str:
        lines = [f"linearization: {len(self.state_names)} states ({', '.join(self.state_names)}), "
                 f"{len(self.input_names)} inputs"]
        if self.steady:
            moving = [f"{n}' = {v:.6g} rad/s" for n, v in self.frame_rates if v != 0.0]
            kind = "a steady motion (relative equilibrium" + (f" along {'; '.join(moving)})" if moving else ")")
            lines.append(f"operating point: {kind} (residual {np.max(np.abs(self.residual), initial=0.0):.3g})")
        else:
            lines.append(not_steady_text(self))
        if self.cyclic:
            lines.append(f"ignorable (left out of the eigenvalues): {', '.join(self.cyclic)}"
                         + (f"; symmetries: {'; '.join(self.symmetries)}" if self.symmetries else ""))
        lam = self.eigenvalues(reduced=True)
        lines.append("eigenvalues [1/s]: " + ", ".join(f"{z.real:.6g}{z.imag:+.6g}j" for z in lam))
        return "\n".join(lines)


def not_steady_text(lin: Linearization) -> str:
    """The line that says why the operating point is no steady motion: the largest rate of a kept state."""
    k = int(np.argmax(np.abs(lin.residual)))
    return (f"operating point: not a steady motion: {lin.residual_names[k]}' = {lin.residual[k]:.6g} (the largest "
            "rate of a state the dynamics depends on); A and B describe the tangent of the trajectory through it")
