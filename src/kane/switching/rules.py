"""Contact mechanics of switched constraints: the rule records, impulses and projections (seed 000 Figure 2's
impulse resolver; Kane's impulse equations as in Djerassi 1994).

Rules, small frozen records checked on construction (a bad coefficient is a :class:`kane.ModelError` before any
run), are read by :class:`kane.switching.SwitchingSimulator`:

* :class:`UnilateralContact`: a one-sided contact on a transient constraint whose row ``row`` is the rate of the
  gap [m/s] (positive when separating), so that its multiplier is the normal force, compressive when >= 0;
* :class:`Coulomb`: friction along a one-row stick constraint whose row is a slip velocity [m/s];
* :class:`Lock`: a constraint switched by a callable or by time intervals.

Impulses (:func:`resolve_impulse`) act on an :class:`~kane.switching.online.OnlineDynamics` ``dyn``: the jump
u+ = u- + M^-1 A^T Lambda onto the active constraints and the newly imposed ones keeps the generalized momentum in
the permitted directions, C^T M (u+ - u-) = 0 (C: the embedding's map from independent speeds), and sets
A u+ + b = -e (A u- + b). With e = 0 and no new constraint it is the kinetic-energy-nearest projection of u onto
the active constraints. :func:`project_positions` corrects q onto the active holonomic constraints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import KaneError, ModelError

__all__ = ["UnilateralContact", "Coulomb", "Lock", "ImpulseResult", "resolve_impulse", "project_positions",
           "lock_step_limit", "check_rules", "gap_value"]


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ModelError(f"{what}: expected the name of a declared transient constraint, got {value!r}")
    return value


def _number(value, what: str, lo: float = 0.0, hi: float = math.inf) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: expected a number, got {value!r}") from None
    if not lo <= x <= hi:
        raise ModelError(f"{what}: expected a number in [{lo}, {hi}], got {x!r}")
    return x


@dataclass(frozen=True)
class UnilateralContact:
    """A one-sided contact on ``constraint`` (its row ``row`` is the gap rate [m/s]); ``gap(t, q) -> float`` [m]
    (> 0 apart); ``restitution`` e in [0, 1]; rebounds slower than ``v_min`` [m/s] are made plastic."""

    constraint: str
    gap: Callable[[float, np.ndarray], float]
    restitution: float = 0.0
    v_min: float = 1e-3
    row: int = 0

    def __post_init__(self) -> None:
        _name(self.constraint, "UnilateralContact constraint")
        if not callable(self.gap):
            raise ModelError(f"UnilateralContact {self.constraint!r}: gap must be callable gap(t, q) -> float [m]")
        _number(self.restitution, f"UnilateralContact {self.constraint!r} restitution", 0.0, 1.0)
        _number(self.v_min, f"UnilateralContact {self.constraint!r} v_min [m/s]")


@dataclass(frozen=True)
class Coulomb:
    """Coulomb friction on the one-row ``stick_constraint``; ``normal``: a contact constraint's name (its
    multiplier in row ``normal_row``), a callable N(t, q, u) [N] or a constant [N]; ``mu_s`` >= ``mu_k`` >= 0.
    After an impact the contact sticks if the slip speed is below ``v_stick`` [m/s]."""

    stick_constraint: str
    normal: str | Callable | float
    mu_s: float
    mu_k: float
    normal_row: int = 0
    v_stick: float = 1e-6

    def __post_init__(self) -> None:
        what = f"Coulomb {self.stick_constraint!r}"
        _name(self.stick_constraint, "Coulomb stick_constraint")
        mu_s = _number(self.mu_s, f"{what} mu_s (friction coefficients are >= 0)")
        mu_k = _number(self.mu_k, f"{what} mu_k (friction coefficients are >= 0)")
        if mu_k > mu_s:
            raise ModelError(f"{what}: mu_k = {mu_k} exceeds mu_s = {mu_s}; kinetic friction must not exceed static")
        if not (isinstance(self.normal, str) or callable(self.normal)):
            _number(self.normal, f"{what} normal force [N]")
        _number(self.v_stick, f"{what} v_stick [m/s]")

    @property
    def constraint(self) -> str:
        """The constraint this rule switches (the stick constraint)."""
        return self.stick_constraint


@dataclass(frozen=True)
class Lock:
    """``constraint`` active while ``on(t, q, u)`` is true, or during the (t_on, t_off) intervals [s] given as a
    sequence; locking is an impulse of restitution ``restitution`` (0: plastic)."""

    constraint: str
    on: Callable | Sequence
    restitution: float = 0.0

    def __post_init__(self) -> None:
        _name(self.constraint, "Lock constraint")
        _number(self.restitution, f"Lock {self.constraint!r} restitution", 0.0, 1.0)
        if not callable(self.on):
            try:
                pairs = [(float(a), float(b)) for a, b in self.on]
            except (TypeError, ValueError):
                raise ModelError(f"Lock {self.constraint!r}: on must be a callable on(t, q, u) -> bool or a "
                                 "sequence of (t_on, t_off) intervals [s]") from None
            if any(not a < b for a, b in pairs):
                raise ModelError(f"Lock {self.constraint!r}: every interval needs t_on < t_off, got {pairs}")
            object.__setattr__(self, "on", tuple(pairs))

    def is_on(self, t: float, q, u) -> bool:
        """Whether the lock holds at (t, q, u)."""
        if callable(self.on):
            return bool(self.on(t, q, u))
        return any(a <= t < b for a, b in self.on)


def lock_step_limit(rules) -> float:
    """The longest step [s] that holds at most one boundary of the interval locks among ``rules`` (half the shortest
    distance between two of their boundaries; inf without): a lock's event function is negative outside its
    intervals and positive inside, so a step spanning a whole interval (or a gap between two) would see no sign
    change and skip both switches."""
    edges = np.unique([x for r in rules if isinstance(r, Lock) and not callable(r.on) for pair in r.on for x in pair])
    return 0.5 * float(np.min(np.diff(edges))) if edges.size > 1 else math.inf


def gap_value(rule: UnilateralContact, t: float, q) -> float:
    """The contact's gap [m] at (t, q); NaN where its function cannot be evaluated."""
    try:
        return float(rule.gap(t, q))
    except (TypeError, ValueError):
        return math.nan


def check_rules(rules, dyn, t0: float, q0: np.ndarray, params=None) -> None:
    """Raise :class:`kane.ModelError` for rules that do not fit the constraints of ``dyn`` (an OnlineDynamics):
    an unknown or permanent constraint, two rules on one, a stick constraint of more than one row, a normal or a row
    that does not exist, a gap that is not finite at (t0 [s], q0) or whose rate runs against the constraint's row."""
    seen = {}
    for rule in rules:
        if not isinstance(rule, (UnilateralContact, Coulomb, Lock)):
            raise ModelError(f"rules must be UnilateralContact, Coulomb or Lock records, got {rule!r}")
        name, kind = rule.constraint, type(rule).__name__
        if name not in dyn.layout:
            raise ModelError(f"{kind} rule names constraint {name!r}, which is not declared; declared "
                             f"constraints: {', '.join(dyn.layout) or '(none)'}")
        if not dyn.layout[name].transient:
            raise ModelError(f"{kind} rule names constraint {name!r}, which is permanent: declare it with "
                             "transient=True to switch it during a run")
        if name in seen:
            raise ModelError(f"constraint {name!r} has two rules ({seen[name]} and {kind}); give it one")
        seen[name] = kind
        rows = dyn.layout[name].rows
        n_rows = rows.stop - rows.start
        if isinstance(rule, Coulomb):
            if n_rows != 1:
                raise ModelError(f"Coulomb rule on {name!r}: the stick constraint has {n_rows} rows; only "
                                 "one-row stick constraints (a slip velocity [m/s]) are supported")
            if isinstance(rule.normal, str):
                if rule.normal not in dyn.layout:
                    raise ModelError(f"Coulomb rule on {name!r}: normal constraint {rule.normal!r} is not "
                                     f"declared; declared constraints: {', '.join(dyn.layout)}")
                nr = dyn.layout[rule.normal].rows
                if not 0 <= rule.normal_row < nr.stop - nr.start:
                    raise ModelError(f"Coulomb rule on {name!r}: normal_row {rule.normal_row} out of range")
        if isinstance(rule, UnilateralContact):
            if not 0 <= rule.row < n_rows:
                raise ModelError(f"UnilateralContact {name!r}: row {rule.row} out of range (0..{n_rows - 1})")
            _check_gap(rule, dyn, t0, q0, params)


def _check_gap(rule: UnilateralContact, dyn, t0, q0, params) -> None:
    """The gap is finite at the start and its rate (a central difference along q' of random speeds) has the sign
    of the constraint's row."""
    g0 = gap_value(rule, t0, q0)
    if not math.isfinite(g0):
        raise ModelError(f"UnilateralContact {rule.constraint!r}: gap(t0, q0) = {g0!r}; expected a finite "
                         "distance [m]")
    u = np.random.default_rng(0).normal(size=dyn.n_u)
    qd = dyn.qdot(t0, q0, u, params)
    h = 1e-6 / max(1.0, float(np.max(np.abs(qd))))
    rate = (gap_value(rule, t0, q0 + h * qd) - gap_value(rule, t0, q0 - h * qd)) / (2 * h)
    row = dyn.constraint_residual(t0, q0, u, [rule.constraint], params)[rule.row]
    if rate * row < 0 and min(abs(rate), abs(row)) > 1e-6 * (1 + abs(row)):
        raise ModelError(f"UnilateralContact {rule.constraint!r}: row {rule.row} of the constraint is oriented "
                         f"against the gap (gap rate {rate:.6g}, row {row:.6g}); write the row as the gap's "
                         "rate (positive when separating)")


@dataclass(frozen=True)
class ImpulseResult:
    """A velocity jump: ``u_plus`` (n_u,), ``impulses`` name -> generalized impulse multipliers Lambda (rows of
    that constraint; N s for rows in m/s), ``delta_kinetic`` [J] (T+ - T-)."""

    u_plus: np.ndarray
    impulses: dict
    delta_kinetic: float


class _Cholesky:
    """M~ = L L^T of the embedded mass matrix (p x p, symmetric positive definite) and solves with it (closed forms
    for p = 1 and 2, LAPACK above)."""

    def __init__(self, Mt: np.ndarray):
        self.p = p = Mt.shape[0]
        if p <= 2:
            a = float(Mt[0, 0])
            if p == 2 and a > 0.0:
                l10 = float(Mt[1, 0]) / math.sqrt(a)
                d = float(Mt[1, 1]) - l10 * l10
            if not (a > 0.0 and (p == 1 or d > 0.0)):
                raise KaneError("the embedded mass matrix C^T M C is not positive definite (a speed moves no "
                                "mass in this mode)")
            self.L = (math.sqrt(a),) if p == 1 else (math.sqrt(a), l10, math.sqrt(d))
            return
        try:
            self.L = np.linalg.cholesky(Mt)
        except np.linalg.LinAlgError:
            raise KaneError("the embedded mass matrix C^T M C is not positive definite (a speed moves no mass "
                            "in this mode)") from None

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """x (p,) with M~ x = rhs (p,): L y = rhs, L^T x = y."""
        if self.p == 1:
            return rhs / (self.L[0] * self.L[0])
        if self.p == 2:
            l00, l10, l11 = self.L
            y0 = rhs[0] / l00
            x1 = (rhs[1] - l10 * y0) / (l11 * l11)
            return np.array([(y0 - l10 * x1) / l00, x1])
        return np.linalg.solve(self.L.T, np.linalg.solve(self.L, rhs))


def resolve_impulse(dyn, q, u_minus, names=(), restitution=0.0, *, t: float = 0.0, params=None,
                    details: bool = True) -> ImpulseResult:
    """The jump of ``dyn``'s speeds at (t [s], q) onto its active constraints and the constraints ``names``.

    ``restitution``: e (a number, or name -> e) for the rows of ``names``; the other rows get A u+ + b = 0.
    With ``details=False`` only ``u_plus`` is computed (impulses empty, delta_kinetic 0).
    """
    q, u_minus = np.asarray(q, dtype=float), np.asarray(u_minus, dtype=float)
    p, w = dyn._pw(params, None)
    M, A, b = dyn._fn_Ab(t, q, u_minus, p, w)
    names = tuple(names)
    if names:
        S = tuple(n for n in dyn.layout if n in set(dyn.active_all) | set(names))
        idx = dyn._rows(S)
    else:  # a projection onto the current mode: its rows are known
        S, idx = dyn.active_all, dyn._idx
    if idx.size == 0:
        return ImpulseResult(u_minus.copy(), {}, 0.0)
    A_S, b_S = A[idx], b[idx]
    target = -b_S  # A_S u+ = target
    if names:
        e, k = np.zeros(idx.size), 0
        for n in S:
            m = dyn.layout[n].rows.stop - dyn.layout[n].rows.start
            if n in names:
                e[k:k + m] = float(restitution.get(n, 0.0) if isinstance(restitution, dict) else restitution)
            k += m
        target = target - e * (A_S @ u_minus + b_S)
    mode = S == dyn.active_all
    known = (dyn._part or dyn._parts.get(dyn.active)) if mode else None
    part = known if known is not None and not dyn._cond_exceeds(A_S, known, dyn.cond_max) else dyn._choose(A_S)
    if mode and known is None:  # the first choice in this mode (A_S depends on q only): the evaluations keep it
        dyn._parts[dyn.active] = part
    C, u_part, block = dyn._embed(part, A_S, target[part.rows, None])
    u_part = u_part[:, 0]
    u_plus = C @ _Cholesky(C.T @ M @ C).solve(C.T @ (M @ (u_minus - u_part))) + u_part if C.shape[1] else u_part
    if not details:
        return ImpulseResult(u_plus, {}, 0.0)
    lam = dyn._multipliers(part, block, A_S, M @ (u_plus - u_minus))
    out, k = {}, 0
    for n in S:
        m = dyn.layout[n].rows.stop - dyn.layout[n].rows.start
        out[n] = lam[k:k + m].copy()
        k += m
    dT = 0.5 * (u_plus @ M @ u_plus - u_minus @ M @ u_minus)
    return ImpulseResult(u_plus, out, float(dT))


def project_positions(dyn, t, q, *, params=None, tol: float = 1e-12, max_iter: int = 20) -> np.ndarray:
    """q (n_q,) corrected onto C(q) = 0 of ``dyn``'s active holonomic constraints: minimum-norm Newton steps
    through the speeds, dq = W du with A_C du = -C, quaternions renormalized."""
    q = np.array(q, dtype=float)
    hol = [r for n in dyn.active_all if dyn.layout[n].holonomic is not None
           for r in range(dyn.layout[n].holonomic.start, dyn.layout[n].holonomic.stop)]
    if not hol:
        return q
    p, w = dyn._pw(params, None)
    for _ in range(max_iter):
        C, A_C, W = dyn._fn_holo(t, q, np.zeros(dyn.n_u), p, w)
        res = C[hol]
        if np.max(np.abs(res)) <= tol:
            break
        du = np.linalg.lstsq(A_C[hol], -res, rcond=None)[0]
        q = dyn.model.normalize_quaternions(q + W @ du)
    return q
