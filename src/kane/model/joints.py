"""Joint models: one small contract, written once, used by every formulation.

A joint connects a frame F fixed in the parent body to a frame M fixed in the child body. Its contract:

* ``nq`` coordinates q (the joint's own slice of the system's q) and ``nu`` generalized speeds u;
* ``transform(q) -> (R_F_M, p_F_M)``: the rotation taking M components to F components (3x3) and the position
  of M's origin from F's origin in F components (3,);
* ``kinematics(q) -> JointKinematics``: the motion subspace ``S_M`` (6 x nu) with the relative twist of M in F
  expressed in M axes as ``S_M u + sigma_M`` (angular part first, then the velocity of M's origin), and the
  kinematic map ``q' = W u + X`` (seed 000 Eqs. 1-2);
* ``axis_partition()``: for every rotational and translational axis, whether it is a degree of freedom or a
  constraint (the joint table of seed 004).

Joints are written over sympy scalars; numeric formulations evaluate the same expressions. Algorithms never branch
on the joint kind. The speeds of a joint are chosen by :class:`Speeds` or by a user map :class:`SpeedMap`
(u = Y q' + Z).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import sympy as sp

from ..errors import ModelError
from .values import _scalar

__all__ = [
    "Speeds", "SpeedMap", "JointKinematics", "Joint", "Revolute", "Prismatic", "Cylindrical", "Universal",
    "Planar", "Gimbal", "Spherical", "Free", "Weld", "rotation_about", "euler_rotation",
]


class Speeds(enum.Enum):
    """Built-in choices of a joint's generalized speeds."""

    RATES = "rates"  # u = q', the joint rates
    BODY = "body"  # u = components of the relative angular (and linear) velocity in the child joint frame M


@dataclass(frozen=True)
class SpeedMap:
    """A user's definition of a joint's speeds, u = Y(q) q' + Z(q, t) (seed 000 Eq. 1).

    ``Y`` is nu x nq (square and invertible), ``Z`` has nu entries; both are sympy expressions in the joint's
    coordinate symbols, ``t`` and parameters.
    """

    Y: tuple
    Z: tuple | None = None


@dataclass(frozen=True)
class JointKinematics:
    """Relative kinematics of a joint for a given choice of speeds (all sympy).

    S_M: (6, nu) motion subspace in M axes; sigma_M: (6,) velocity bias (nonzero only for rheonomic maps);
    W: (nq, nu) and X: (nq,) with q' = W u + X.
    """

    S_M: sp.Matrix
    sigma_M: sp.Matrix
    W: sp.Matrix
    X: sp.Matrix


def _axis_vector(axis) -> sp.Matrix:
    if isinstance(axis, str):
        table = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1), "1": (1, 0, 0), "2": (0, 1, 0), "3": (0, 0, 1)}
        key = axis.lower().lstrip("+")
        sign = -1 if key.startswith("-") else 1
        key = key.lstrip("-")
        if key not in table:
            raise ModelError(f"joint axis {axis!r}: expected 'x', 'y', 'z' (optionally signed) or a 3-vector")
        return sp.Matrix(table[key]) * sign
    vec = sp.Matrix([_axis_component(a, axis) for a in axis]) if not isinstance(axis, sp.MatrixBase) \
        else sp.Matrix(axis)
    if vec.shape != (3, 1):
        raise ModelError(f"joint axis {axis!r}: expected 3 components")
    norm2 = sum(c**2 for c in vec)
    if norm2.is_number:
        if float(norm2) == 0.0:
            raise ModelError(f"joint axis {axis!r}: expected a nonzero vector")
        return vec / sp.sqrt(sp.nsimplify(norm2))
    # an axis of parameters is a direction too: normalized symbolically (its norm is a constant of the run)
    return vec / sp.sqrt(norm2)


def _check_axis(axis) -> None:
    """Refuse an axis of the wrong kind (a string component, NaN) at once; a zero axis is refused when the joint
    is placed in a model, with the joint's name."""
    if isinstance(axis, str):
        _axis_vector(axis)
    elif not isinstance(axis, sp.MatrixBase):
        try:
            components = list(axis)
        except TypeError:
            raise ModelError(f"joint axis {axis!r}: expected 'x', 'y', 'z' (optionally signed) or a 3-vector") from None
        for c in components:
            _axis_component(c, axis)


def _axis_component(value, axis):
    """A number or sympy expression; strings are refused (never sympified: model files parse theirs safely)."""
    return _scalar(value, f"joint axis {axis!r} component {value!r}")


def _skew(v) -> sp.Matrix:
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def rotation_about(axis, angle) -> sp.Matrix:
    """R (3x3) of a right-handed rotation by ``angle`` about the unit ``axis``: v_F = R v_M (Rodrigues)."""
    a = _axis_vector(axis)
    for k in range(3):  # coordinate axes give the familiar sparse matrices
        e = sp.zeros(3, 1)
        e[k] = 1
        if a == e or a == -e:
            c, s = sp.cos(angle), sp.sin(angle) * (1 if a == e else -1)
            i, j = (k + 1) % 3, (k + 2) % 3
            R = sp.eye(3)
            R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
            return R
    K = _skew(a)
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


def euler_rotation(sequence: str, angles) -> sp.Matrix:
    """R_F_M of a body-fixed (intrinsic) rotation sequence such as ``"213"`` with the given angles."""
    R = sp.eye(3)
    for digit, angle in zip(sequence, angles):
        R = R * rotation_about(digit, angle)
    return R


class Joint:
    """Base class of the joint contract. Subclasses set ``nq``, ``nu``, ``kind`` and implement the methods."""

    kind = "joint"
    nq = 0
    nu = 0
    speeds: Speeds | SpeedMap = Speeds.RATES
    unit_quaternion: tuple[int, ...] = ()  # positions in this joint's q of a scalar-first unit quaternion, if any

    def coordinate_suffixes(self) -> tuple[str, ...]:
        return tuple(str(i + 1) for i in range(self.nq))

    def transform(self, q) -> tuple[sp.Matrix, sp.Matrix]:
        raise NotImplementedError

    def rate_subspace(self, q) -> sp.Matrix:
        """Relative twist of M in F, in M axes, per unit coordinate rate: (6, nq)."""
        raise NotImplementedError

    def body_selection(self) -> tuple[int, ...] | None:
        """Rows of the twist (0-2 angular, 3-5 linear) whose components are the BODY speeds, or None."""
        return None

    def axis_partition(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """('DOF' | 'constraint') for the 3 rotational and the 3 translational axes of the joint frame."""
        raise NotImplementedError

    def kinematics(self, q, t=None) -> JointKinematics:
        nq, nu = self.nq, self.nu
        if nq == 0:
            return JointKinematics(sp.zeros(6, 0), sp.zeros(6, 1), sp.zeros(0, 0), sp.zeros(0, 1))
        S_rate = self.rate_subspace(q)
        if self.speeds is Speeds.RATES:
            return JointKinematics(S_rate, sp.zeros(6, 1), sp.eye(nq), sp.zeros(nq, 1))
        if self.speeds is Speeds.BODY:
            rows = self.body_selection()
            if rows is None:
                raise ModelError(f"{self.kind} joint: body-fixed speeds are not defined for this joint kind; "
                                 "use Speeds.RATES or a SpeedMap")
            Y = S_rate.extract(list(rows), list(range(nq)))
            W = _inverse_simplified(Y, self.kind)
            S = sp.zeros(6, nu)
            for col, row in enumerate(rows):
                S[row, col] = 1
            return JointKinematics(S, sp.zeros(6, 1), W, sp.zeros(nq, 1))
        if isinstance(self.speeds, SpeedMap):
            Y = sp.Matrix(self.speeds.Y)
            if Y.shape != (nu, nq):
                raise ModelError(f"{self.kind} joint: SpeedMap.Y must be {nu}x{nq}, got {Y.shape[0]}x{Y.shape[1]}")
            Z = sp.Matrix(self.speeds.Z) if self.speeds.Z is not None else sp.zeros(nu, 1)
            W = _inverse_simplified(Y, self.kind)
            X = -W * Z
            return JointKinematics(S_rate * W, S_rate * X, W, X)
        raise ModelError(f"{self.kind} joint: speeds must be a kane.joints.Speeds or a SpeedMap, got {self.speeds!r}")


def _inverse_simplified(Y: sp.Matrix, kind: str) -> sp.Matrix:
    det = sp.trigsimp(Y.det())
    if det == 0:
        raise ModelError(f"{kind} joint: the speed definition u = Y q' + Z has a singular Y; expected invertible")
    adj = Y.adjugate().applyfunc(sp.trigsimp)
    return (adj / det).applyfunc(lambda e: sp.factor_terms(e))


def _partition(rot: int, trn: int, rot_axes=(), trn_axes=()):
    r = tuple("DOF" if i in rot_axes else "constraint" for i in range(3)) if rot_axes else ("constraint",) * 3
    t = tuple("DOF" if i in trn_axes else "constraint" for i in range(3)) if trn_axes else ("constraint",) * 3
    if rot == 3:
        r = ("DOF",) * 3
    if trn == 3:
        t = ("DOF",) * 3
    return r, t


def _dominant_axis(a: sp.Matrix) -> int:
    vals = [abs(float(c)) if c.is_number else 0.0 for c in a]
    return max(range(3), key=lambda i: vals[i])


class _FixedAxis(Joint):
    """A joint about or along one ``axis`` fixed in F and M: its rates are already body-fixed components, so
    Speeds.BODY is Speeds.RATES."""

    def __post_init__(self):
        _check_axis(self.axis)  # strings and non-finite numbers fail when the joint is made

    def kinematics(self, q, t=None):
        if self.speeds is Speeds.BODY:
            return replace_speeds(self, Speeds.RATES).kinematics(q, t)
        return Joint.kinematics(self, q, t)


@dataclass(frozen=True)
class Revolute(_FixedAxis):
    """One rotation q about ``axis`` (fixed in F and M). nq = nu = 1."""

    axis: object = "z"
    speeds: Speeds | SpeedMap = Speeds.RATES
    kind = "revolute"
    nq = 1
    nu = 1

    def transform(self, q):
        return rotation_about(self.axis, q[0]), sp.zeros(3, 1)

    def rate_subspace(self, q):
        return sp.Matrix.vstack(_axis_vector(self.axis), sp.zeros(3, 1))

    def axis_partition(self):
        return _partition(1, 0, rot_axes=(_dominant_axis(_axis_vector(self.axis)),))


@dataclass(frozen=True)
class Prismatic(_FixedAxis):
    """One translation q along ``axis``. nq = nu = 1."""

    axis: object = "x"
    speeds: Speeds | SpeedMap = Speeds.RATES
    kind = "prismatic"
    nq = 1
    nu = 1

    def transform(self, q):
        return sp.eye(3), _axis_vector(self.axis) * q[0]

    def rate_subspace(self, q):
        return sp.Matrix.vstack(sp.zeros(3, 1), _axis_vector(self.axis))

    def axis_partition(self):
        return _partition(0, 1, trn_axes=(_dominant_axis(_axis_vector(self.axis)),))


@dataclass(frozen=True)
class Cylindrical(_FixedAxis):
    """Rotation q1 about and translation q2 along the same ``axis``. nq = nu = 2."""

    axis: object = "z"
    speeds: Speeds | SpeedMap = Speeds.RATES
    kind = "cylindrical"
    nq = 2
    nu = 2

    def transform(self, q):
        return rotation_about(self.axis, q[0]), _axis_vector(self.axis) * q[1]

    def rate_subspace(self, q):
        a = _axis_vector(self.axis)
        return sp.Matrix.hstack(sp.Matrix.vstack(a, sp.zeros(3, 1)), sp.Matrix.vstack(sp.zeros(3, 1), a))


    def axis_partition(self):
        k = _dominant_axis(_axis_vector(self.axis))
        return _partition(1, 1, rot_axes=(k,), trn_axes=(k,))


@dataclass(frozen=True)
class Gimbal(Joint):
    """Body-fixed rotation sequence such as ``"213"`` (42's ``RotDOF Seq GIMBAL``) with ``n_free`` free axes.

    The first ``n_free`` digits of ``sequence`` are the joint's rotations (q1 about the first digit, ...).
    Speeds.RATES: u = q'. Speeds.BODY (three free axes only): u = relative angular velocity in M axes.
    """

    sequence: str = "123"
    n_free: int = 3
    speeds: Speeds | SpeedMap = Speeds.RATES
    kind = "gimbal"

    def __post_init__(self):
        seq = str(self.sequence)
        if len(seq) != 3 or any(c not in "123" for c in seq) or seq[0] == seq[1] or seq[1] == seq[2]:
            raise ModelError(f"gimbal joint: sequence {self.sequence!r}; expected three axis digits 1-3 with "
                             "no two neighbours equal, such as '213' or '313'")
        if self.n_free not in (1, 2, 3):
            raise ModelError(f"gimbal joint: n_free = {self.n_free!r}; expected 1, 2 or 3")

    @property
    def nq(self):
        return self.n_free

    @property
    def nu(self):
        return self.n_free

    def transform(self, q):
        return euler_rotation(self.sequence[: self.n_free], q), sp.zeros(3, 1)

    def rate_subspace(self, q):
        cols = []
        n = self.n_free
        for k in range(n):  # axis k seen from M: rotate back through the later rotations of the sequence
            axis = _axis_vector(self.sequence[k])
            tail = euler_rotation(self.sequence[k + 1: n], q[k + 1: n])
            cols.append(sp.Matrix.vstack(tail.T * axis, sp.zeros(3, 1)))
        return sp.Matrix.hstack(*cols)

    def body_selection(self):
        return (0, 1, 2) if self.n_free == 3 else None

    def axis_partition(self):
        return _partition(self.n_free, 0, rot_axes=tuple(int(c) - 1 for c in self.sequence[: self.n_free]))


def Universal(sequence: str = "12", speeds: Speeds | SpeedMap = Speeds.RATES) -> Gimbal:
    """Two rotations about perpendicular axes (a Gimbal with two free axes, e.g. ``"12"``)."""
    seq = str(sequence)
    if len(seq) != 2 or seq[0] == seq[1] or any(c not in "123" for c in seq):
        raise ModelError(f"universal joint: sequence {sequence!r}; expected two different axis digits such as '12'")
    third = ({"1", "2", "3"} - {seq[1]}).pop()
    return Gimbal(sequence=seq + third, n_free=2, speeds=speeds)


@dataclass(frozen=True)
class Planar(Joint):
    """Motion in F's xy-plane: q = (x, y, theta), theta about z.

    Speeds.RATES: u = (x', y', theta'); Speeds.BODY: u = (v_x, v_y, omega_z), the velocity of M's origin in M
    axes and the rotation rate.
    """

    speeds: Speeds | SpeedMap = Speeds.RATES
    kind = "planar"
    nq = 3
    nu = 3

    def coordinate_suffixes(self):
        return ("x", "y", "theta")

    def transform(self, q):
        return rotation_about("z", q[2]), sp.Matrix([q[0], q[1], 0])

    def rate_subspace(self, q):
        c, s = sp.cos(q[2]), sp.sin(q[2])
        return sp.Matrix([[0, 0, 0], [0, 0, 0], [0, 0, 1], [c, s, 0], [-s, c, 0], [0, 0, 0]])

    def body_selection(self):
        return (3, 4, 2)

    def axis_partition(self):
        return _partition(1, 2, rot_axes=(2,), trn_axes=(0, 1))


def _quaternion_rotation(e) -> sp.Matrix:
    w, x, y, z = e
    return sp.Matrix([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def _quaternion_rate_map(e) -> sp.Matrix:
    """(4, 3): e' = 0.5 * E(e) omega_M for a scalar-first unit quaternion and body-axis angular velocity."""
    w, x, y, z = e
    half = sp.Rational(1, 2)
    return half * sp.Matrix([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]])


@dataclass(frozen=True)
class Spherical(Joint):
    """Three rotations by a scalar-first unit quaternion q = (w, x, y, z); u = angular velocity in M axes."""

    speeds: Speeds | SpeedMap = Speeds.BODY
    kind = "spherical"
    nq = 4
    nu = 3
    unit_quaternion = (0, 1, 2, 3)

    def coordinate_suffixes(self):
        return ("qw", "qx", "qy", "qz")

    def transform(self, q):
        return _quaternion_rotation(q), sp.zeros(3, 1)

    def kinematics(self, q, t=None):
        if self.speeds is not Speeds.BODY:
            raise ModelError("spherical joint: only Speeds.BODY (angular velocity in M axes) is defined for a "
                             "quaternion joint; use a Gimbal joint for angle rates")
        S = sp.Matrix.vstack(sp.eye(3), sp.zeros(3, 3))
        return JointKinematics(S, sp.zeros(6, 1), _quaternion_rate_map(q), sp.zeros(4, 1))

    def axis_partition(self):
        return _partition(3, 0)


@dataclass(frozen=True)
class Free(Joint):
    """Six degrees of freedom: q = (x, y, z, w, qx, qy, qz) with position in F and a scalar-first quaternion.

    u = (angular velocity, velocity of M's origin), both in M axes (Pinocchio's local convention).
    """

    speeds: Speeds | SpeedMap = Speeds.BODY
    kind = "free"
    nq = 7
    nu = 6
    unit_quaternion = (3, 4, 5, 6)

    def coordinate_suffixes(self):
        return ("x", "y", "z", "qw", "qx", "qy", "qz")

    def transform(self, q):
        return _quaternion_rotation(q[3:7]), sp.Matrix(q[0:3])

    def kinematics(self, q, t=None):
        if self.speeds is not Speeds.BODY:
            raise ModelError("free joint: only Speeds.BODY (angular and linear velocity in M axes) is defined")
        R = _quaternion_rotation(q[3:7])
        W = sp.zeros(7, 6)
        W[0:3, 3:6] = R
        W[3:7, 0:3] = _quaternion_rate_map(q[3:7])
        return JointKinematics(sp.eye(6), sp.zeros(6, 1), W, sp.zeros(7, 1))

    def axis_partition(self):
        return _partition(3, 3)


@dataclass(frozen=True)
class Weld(Joint):
    """A rigid attachment: no coordinates, no speeds."""

    kind = "weld"
    nq = 0
    nu = 0
    speeds: Speeds | SpeedMap = field(default=Speeds.RATES)

    def transform(self, q):
        return sp.eye(3), sp.zeros(3, 1)

    def axis_partition(self):
        return _partition(0, 0)


def replace_speeds(joint: Joint, speeds) -> Joint:
    """A copy of ``joint`` with another choice of speeds."""
    from dataclasses import replace

    return replace(joint, speeds=speeds)
