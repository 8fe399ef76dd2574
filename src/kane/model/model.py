"""The frozen, index-based ``Model`` that a :class:`kane.System` compiles into, and the symbols every model shares
(``t``, ``stretch``, ``stretch_rate``, the ground's name). Nothing downstream mutates a ``Model``."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from ..errors import ModelError
from .elements import Body, Constraint, Force, JointLoad, PlacedJoint, Spring, Torque

__all__ = ["Model", "GROUND", "KaneSymbol", "t", "stretch", "stretch_rate", "float_value"]


def _heaviside(x: float, h0: float = 0.5) -> float:
    return 1.0 if x > 0 else 0.0 if x < 0 else h0


_FLOAT_FUNCTIONS = {
    sp.sin: math.sin, sp.cos: math.cos, sp.tan: math.tan, sp.asin: math.asin, sp.acos: math.acos,
    sp.atan: math.atan, sp.atan2: math.atan2, sp.sinh: math.sinh, sp.cosh: math.cosh, sp.tanh: math.tanh,
    sp.exp: math.exp, sp.log: math.log, sp.Abs: abs, sp.sign: lambda x: float(np.sign(x)), sp.Min: min,
    sp.Max: max, sp.Heaviside: _heaviside, sp.sqrt: math.sqrt, sp.cot: lambda x: 1.0 / math.tan(x),
    sp.sec: lambda x: 1.0 / math.cos(x), sp.csc: lambda x: 1.0 / math.sin(x),
}


def float_value(expr, values: Mapping, partial: bool = False) -> float | None:
    """The value of a sympy expression in double precision, its symbols taken from ``values`` (symbol -> float).

    Every operation is done in floats, so a tower such as exp(exp(exp(exp(exp(1))))) or a**a**a**a is refused at
    once instead of being evaluated exactly. Raises OverflowError for a value (or an intermediate value) beyond the
    range of a double or not finite, ValueError for a value that is not real (log(-1), acos(2)), ZeroDivisionError,
    and TypeError for an operation it does not know. With ``partial``, a symbol missing from ``values`` gives None
    (and so does every expression containing it), after every sub-expression that can be evaluated was checked;
    without it, KeyError.
    """
    if expr.is_Symbol:
        if expr in values:
            return float(values[expr])
        if partial:
            return None
        raise KeyError(str(expr))
    if expr.is_Number or expr.is_NumberSymbol:
        if expr.is_Rational:
            value = expr.p / expr.q
        elif expr.is_Float or expr.is_NumberSymbol:
            value = float(expr)
        else:
            raise ValueError(f"{expr} is not a real number")
        return _finite(value)
    args = [float_value(a, values, partial) for a in expr.args]
    if any(a is None for a in args):
        return None
    if expr.is_Add:
        value = math.fsum(args)
    elif expr.is_Mul:
        value = math.prod(args)
    elif expr.is_Pow:
        base, exponent = args
        if base == 0.0 and exponent < 0:
            raise ZeroDivisionError("zero to a negative power")
        value = math.pow(base, exponent)
    elif expr.func in _FLOAT_FUNCTIONS:
        value = float(_FLOAT_FUNCTIONS[expr.func](*args))
    else:
        raise TypeError(f"cannot evaluate {type(expr).__name__} in floating point")
    return _finite(value)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise OverflowError("the value is beyond the range of a double")
    return value


class KaneSymbol(sp.Symbol):
    """A symbol of kane's own (time, a spring's stretch, the named intermediates of a Program, traced inputs).

    sympy compares symbols by class and name, so a ``KaneSymbol("z0")`` is never the user's ``Symbol("z0")``: any
    name a user gives a coordinate, speed, parameter or input is safe, whatever kane calls its own quantities.
    """


GROUND = "ground"
t = KaneSymbol("t")  # time [s]
stretch = KaneSymbol("stretch")  # a spring's length minus its rest length [m]
stretch_rate = KaneSymbol("stretch_rate")  # its rate [m/s]


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
    parameter_bounds: tuple[tuple[float, float], ...] = ()  # (lower, upper) per parameter
    visuals: tuple = ()  # Visual records (display only), from System.add_visual
    collisions: tuple = ()  # Collision records (kane.model.collision), from System.add_collision
    collision_excludes: tuple = ()  # frozensets of two body or collision names never tested for contact

    def name_constants(self, assign) -> Model:
        """This model with every expression of parameters alone (not a symbol or a number) in the bodies' mass,
        centre of mass and inertia, the joints' placements and gravity replaced by ``assign(expr)``: a named
        constant of the derivation, computed once per parameter set (the parameter prelude), so that a long
        expression of parameters never enters the kinematics or the equations as a whole."""
        params = set(self.parameters)

        def name(e):
            return assign(e) if not e.is_Atom and e.free_symbols <= params else e

        def matrix(m):
            return sp.ImmutableMatrix(m.shape[0], m.shape[1], [name(e) for e in m])

        bodies = tuple(replace(b, mass=name(b.mass), com=matrix(b.com), inertia=matrix(b.inertia))
                       for b in self.bodies)
        joints = tuple(replace(j, R_parent_F=matrix(j.R_parent_F), r_parent_F=matrix(j.r_parent_F),
                               R_child_M=matrix(j.R_child_M), r_child_M=matrix(j.r_child_M)) for j in self.joints)
        return replace(self, bodies=bodies, joints=joints, gravity=matrix(self.gravity))

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

    def quaternion_indices(self) -> tuple[tuple[str, list[int]], ...]:
        """(joint name, the 4 positions in q of its scalar-first unit quaternion) for every quaternion joint."""
        return tuple((pj.name, [pj.q_slice.start + k for k in pj.joint.unit_quaternion]) for pj in self.joints
                     if pj.joint.unit_quaternion)

    def normalize_quaternions(self, q: np.ndarray) -> np.ndarray:
        """Scale every quaternion of q (n_q,) to unit norm, in place; returns q."""
        for _, idx in self.quaternion_indices():
            q[idx] /= np.linalg.norm(q[idx])
        return q

    def check_quaternions(self, q, what: str = "q0", tol: float = 1e-6) -> None:
        """Refuse a configuration q (n_q,) whose quaternions are not unit quaternions within ``tol`` (a zero
        quaternion is no rotation at all), naming the joint and the norm."""
        q = np.asarray(q, dtype=float)
        for name, idx in self.quaternion_indices():
            norm = float(np.linalg.norm(q[idx]))
            if not abs(norm - 1.0) <= tol:
                raise ModelError(f"joint {name!r}: {what} holds the quaternion {np.array2string(q[idx], precision=6)} "
                                 f"of norm {norm:.6g}; expected a unit quaternion (scalar first, norm 1 to {tol:g})")

    def parameter_values(self, params=None) -> np.ndarray:
        """Parameter vector in model order from defaults, updated by a dict name -> value (or a full array)."""
        return _values(self.parameters, self.parameter_defaults, params, "parameter", self.parameter_bounds)

    def input_values(self, inputs=None) -> np.ndarray:
        return _values(self.inputs, self.input_defaults, inputs, "input")


@functools.lru_cache(maxsize=256)
def _name_index(symbols: tuple) -> dict:
    """name -> position of each symbol (printing a sympy symbol's name costs microseconds: once per tuple)."""
    return {str(s): k for k, s in enumerate(symbols)}


def _values(symbols, defaults, given, what, bounds=()) -> np.ndarray:
    """Values in model order: the defaults updated from a dict name -> value, or a full array; every value a
    finite real number (not a string, None or bool) within its declared bounds."""
    out = np.array(defaults, dtype=float)
    if given is None:
        return out
    if isinstance(given, dict):
        index = _name_index(tuple(symbols))
        for key, value in given.items():
            k = index.get(str(key))
            if k is None:
                raise ModelError(f"unknown {what} {str(key)!r}; known: {', '.join(index) or '(none)'}")
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ModelError(f"{what} {str(key)!r}: expected a real number, got {value!r}")
            out[k] = value
    else:
        arr = np.asarray(given)
        if arr.dtype.kind not in "iuf":
            raise ModelError(f"{what} values: expected an array of real numbers, got {given!r}")
        if arr.shape != out.shape:
            raise ModelError(f"{what} values: expected {out.shape[0]} values in model order, got shape {arr.shape}")
        out = arr.astype(float)
    if not bounds and np.isfinite(out).all():  # nothing to report (the simulators' per-evaluation path)
        return out
    for k, value in enumerate(out):
        lo, hi = bounds[k] if k < len(bounds) else (-np.inf, np.inf)
        if not (np.isfinite(value) and lo <= value <= hi):
            rng = "a finite number" if (lo, hi) == (-np.inf, np.inf) else f"a finite number in [{lo:g}, {hi:g}]"
            raise ModelError(f"{what} {str(symbols[k])!r}: expected {rng}, got {value:g}")
    return out
