"""The frozen, index-based ``Model`` that a :class:`kane.System` compiles into, and the symbols every model shares
(``t``, ``stretch``, ``stretch_rate``, the ground's name). Nothing downstream mutates a ``Model``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import ModelError
from .elements import Body, Constraint, Force, JointLoad, PlacedJoint, Spring, Torque

__all__ = ["Model", "GROUND", "t", "stretch", "stretch_rate"]

GROUND = "ground"
t = sp.Symbol("t")
stretch = sp.Symbol("stretch")
stretch_rate = sp.Symbol("stretch_rate")


@dataclass(frozen=True)
class Model:
    """A compiled, immutable multibody model (index-based; bodies ordered parent before child).

    ``joints[i]`` is the inboard joint of ``bodies[i]``; ``parent[i]`` is its parent body index (-1: ground).
    ``q`` (n_q) and ``u`` (n_u) are the sympy symbols of the coordinates and speeds in system order.
    """

    name: str
    bodies: tuple[Body, ...]
    joints: tuple[PlacedJoint, ...]
    parent: tuple[int, ...]
    q: tuple[sp.Symbol, ...]
    u: tuple[sp.Symbol, ...]
    t: sp.Symbol
    parameters: tuple[sp.Symbol, ...]
    parameter_defaults: tuple[float, ...]
    inputs: tuple[sp.Symbol, ...]
    input_defaults: tuple[float, ...]
    gravity: sp.ImmutableMatrix
    forces: tuple[Force, ...]
    torques: tuple[Torque, ...]
    springs: tuple[Spring, ...]
    joint_loads: tuple[JointLoad, ...]
    constraints: tuple[Constraint, ...]
    q0: tuple[float, ...]
    u0: tuple[float, ...]

    @property
    def n_q(self) -> int:
        return len(self.q)

    @property
    def n_u(self) -> int:
        return len(self.u)

    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    def body_index(self, name: str) -> int:
        """Index of a body by name; -1 for ``"ground"``."""
        if name == GROUND:
            return -1
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        raise ModelError(f"no body named {name!r}; bodies: {', '.join(b.name for b in self.bodies)}")

    def joint_index(self, name: str) -> int:
        for i, j in enumerate(self.joints):
            if j.name == name:
                return i
        raise ModelError(f"no joint named {name!r}; joints: {', '.join(j.name for j in self.joints)}")

    def parameter_values(self, params=None) -> np.ndarray:
        """Parameter vector in model order from defaults, updated by a dict name -> value (or a full array)."""
        return _values(self.parameters, self.parameter_defaults, params, "parameter")

    def input_values(self, inputs=None) -> np.ndarray:
        return _values(self.inputs, self.input_defaults, inputs, "input")


def _values(symbols, defaults, given, what) -> np.ndarray:
    out = np.array(defaults, dtype=float)
    if given is None:
        return out
    if isinstance(given, dict):
        names = [str(s) for s in symbols]
        for key, value in given.items():
            if str(key) not in names:
                raise ModelError(f"unknown {what} {str(key)!r}; known: {', '.join(names) or '(none)'}")
            out[names.index(str(key))] = value
        return out
    arr = np.asarray(given, dtype=float)
    if arr.shape != out.shape:
        raise ModelError(f"{what} values: expected {out.shape[0]} values in model order, got shape {arr.shape}")
    return arr
