"""Formulation stiffness: CRBM against ABM on an ill-conditioned 2-link planar chain (Cloutier 1995, seed 001 §5.2,
Figs. 5.3-5.6).

The chain is the thesis's two-link PRRRobot: flat rectangular links of uniform density (length l_i [m], mass m_i
[kg], width w [m]) hinged about parallel z axes, gravity g [m/s^2] along -y, no friction and no joint torques. The
joint-space inertia H (2 x 2) of the chain grows ill-conditioned as the distal link grows (Figs. 5.3-5.5) or as the
proximal link shrinks at constant total length and mass (Fig. 5.6).

* :func:`configuration_sweep` (Figs. 5.3-5.5): with l1 = m1 = 1, l2 = m2 swept up to 1e5 and theta1 = 0 at rest,
  the second joint angle is swept over [0, 2 pi]; at each configuration cond(H) and the joint accelerations of
  kane's ABA and CRBA (+ LDL^T) are compared with a 50-digit reference (mpmath) of the same closed-form 2-link
  equations. CRBM's relative error follows cond(H) times the unit round-off; ABM's stays at round-off.
* :func:`integration_study` (Fig. 5.6): for chains of total length and mass 10 (m, kg) whose proximal link is a
  fraction ``ratio`` of both, 10 s of motion from rest at theta = 0 are integrated by kane's DOPRI5 at a fixed
  rtol with each algorithm, counting right-hand-side evaluations; when CRBM's noise exceeds the tolerance the
  adaptive step control shrinks the steps (the thesis's "formulation stiffness").

:func:`run_study` runs both; :func:`write_results` writes CSV tables and PNG plots (``kane study conditioning``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import mpmath
import numpy as np

from ..algorithms import RecursiveDynamics
from ..options import Formulation
from ..errors import KaneError
from ..model import joints as J
from ..model.system import System
from ..simulate import Method, RunOptions, State
from ..simulate.run import run

__all__ = [
    "ConditioningResult",
    "ConfigurationSweep",
    "IntegrationRun",
    "configuration_sweep",
    "integration_study",
    "planar_chain",
    "reference_accelerations",
    "run_study",
    "write_results",
]

L2_VALUES = (1.0, 1e1, 1e2, 1e3, 1e4, 4e4, 5e4, 1e5)  # Figs. 5.3-5.5: l2 = m2 (m, kg)
RATIOS = (1e-1, 1e-3, 1e-5, 1e-6, 1e-7, 1e-8, 4e-9, 2e-9, 1e-9, 1e-10)  # Fig. 5.6: l1 / (l1 + l2)


def planar_chain() -> System:
    """The 2-link PRRRobot: parameters l1, m1, l2, m2 (defaults 1 m, 1 kg), w (1 m), g (9.8 m/s^2); speeds u1, u2
    are the joint rates [rad/s]. Link i's frame sits at its joint with x along the link; central inertia of a
    flat plate, Izz = m (l^2 + w^2) / 12."""
    s = System("prrrobot2")
    g, w = s.parameter("g", 9.8), s.parameter("w", 1.0)
    s.gravity = (0, -g, 0)
    parent, point = "ground", (0, 0, 0)
    for i in (1, 2):
        length, mass = s.parameter(f"l{i}", 1.0), s.parameter(f"m{i}", 1.0)
        s.add_body(f"link{i}", mass=mass, com=(length / 2, 0, 0),
                   inertia=(mass * w**2 / 12, mass * length**2 / 12, mass * (length**2 + w**2) / 12))
        s.add_joint(parent, f"link{i}", J.Revolute("z"), name=f"joint{i}", parent_point=point,
                    coordinates=[f"q{i}"], speeds=[f"u{i}"])
        parent, point = f"link{i}", (length, 0, 0)
    return s


def reference_accelerations(q, u, params: dict, digits: int = 50):
    """The 2-link equations H(q) u' = -c(q, u) - g(q) in ``digits``-digit arithmetic (mpmath), from the float
    inputs taken as exact. Returns (u' (2,) [rad/s^2] rounded to floats, H (2, 2) [kg m^2], cond(H) in 2-norm)."""
    with mpmath.workdps(digits):
        m = {k: mpmath.mpf(float(params[k])) for k in ("l1", "m1", "l2", "m2", "w", "g")}
        q1, q2, u1, u2 = (mpmath.mpf(float(x)) for x in (q[0], q[1], u[0], u[1]))
        I1 = m["m1"] * (m["l1"] ** 2 + m["w"] ** 2) / 12 + m["m1"] * m["l1"] ** 2 / 4
        a = m["m2"] * (m["l2"] ** 2 + m["w"] ** 2) / 12 + m["m2"] * m["l2"] ** 2 / 4
        b = m["m2"] * m["l1"] * m["l2"] / 2
        c2, s2 = mpmath.cos(q2), mpmath.sin(q2)
        H11, H12, H22 = I1 + a + m["m2"] * m["l1"] ** 2 + 2 * b * c2, a + b * c2, a
        grav1 = m["g"] * (m["m1"] * m["l1"] / 2 * mpmath.cos(q1) + m["m2"] * (m["l1"] * mpmath.cos(q1)
                                                                            + m["l2"] / 2 * mpmath.cos(q1 + q2)))
        grav2 = m["g"] * m["m2"] * m["l2"] / 2 * mpmath.cos(q1 + q2)
        f1, f2 = b * s2 * (2 * u1 * u2 + u2**2) - grav1, -b * s2 * u1**2 - grav2
        det = H11 * H22 - H12**2
        udot = np.array([float((H22 * f1 - H12 * f2) / det), float((H11 * f2 - H12 * f1) / det)])
        lam_max = (H11 + H22 + mpmath.sqrt((H11 - H22) ** 2 + 4 * H12**2)) / 2
        cond = float(lam_max**2 / det)
        H = np.array([[float(H11), float(H12)], [float(H12), float(H22)]])
    return udot, H, cond


def _dynamics():
    model = planar_chain().compile()
    return RecursiveDynamics(model, Formulation.ABA), RecursiveDynamics(model, Formulation.CRBA)


def _relative_error(a, ref):
    """|a - ref| per joint over max |ref| of the two joints (the sizes of the accelerations, no division by a
    crossing zero); shapes (..., 2)."""
    return np.abs(a - ref) / np.max(np.abs(ref), axis=-1, keepdims=True)


@dataclass(frozen=True)
class ConfigurationSweep:
    """Figs. 5.3-5.5. l2 (k,) distal length = mass [m, kg]; theta2 (n,) [rad]; cond (k, n) of H; udot_ref,
    udot_abm, udot_crbm (k, n, 2) [rad/s^2]; err_abm, err_crbm (k, n, 2) relative errors against the reference."""

    l2: np.ndarray
    theta2: np.ndarray
    cond: np.ndarray
    udot_ref: np.ndarray
    udot_abm: np.ndarray
    udot_crbm: np.ndarray

    @property
    def err_abm(self) -> np.ndarray:
        return _relative_error(self.udot_abm, self.udot_ref)

    @property
    def err_crbm(self) -> np.ndarray:
        return _relative_error(self.udot_crbm, self.udot_ref)


def configuration_sweep(l2_values=L2_VALUES, n_theta: int = 361, theta1: float = 0.0, digits: int = 50,
                        dynamics=None) -> ConfigurationSweep:
    """Sweep theta2 over [0, 2 pi] (``n_theta`` points) at rest for each l2 = m2 in ``l2_values`` (l1 = m1 = w = 1)."""
    abm, crbm = dynamics or _dynamics()
    th = np.linspace(0.0, 2 * np.pi, n_theta)
    k, zero = len(l2_values), np.zeros(2)
    cond, ref, ua, uc = np.zeros((k, n_theta)), np.zeros((k, n_theta, 2)), np.zeros((k, n_theta, 2)), np.zeros(
        (k, n_theta, 2))
    for i, l2 in enumerate(l2_values):
        p = {"l1": 1.0, "m1": 1.0, "l2": float(l2), "m2": float(l2), "w": 1.0, "g": 9.8}
        for n, t2 in enumerate(th):
            q = np.array([theta1, t2])
            ref[i, n], _, cond[i, n] = reference_accelerations(q, zero, p, digits)
            ua[i, n], uc[i, n] = abm.udot(0.0, q, zero, params=p), crbm.udot(0.0, q, zero, params=p)
    return ConfigurationSweep(np.array(l2_values, dtype=float), th, cond, ref, ua, uc)


@dataclass(frozen=True)
class IntegrationRun:
    """One row of Fig. 5.6: ``ratio`` = l1 / (l1 + l2) = m1 / (m1 + m2); ``cond_max`` of H along the ABM run's
    samples; ``crbm_error_max`` the largest relative CRBM acceleration error there (both NaN when the ABM run
    failed); ``n_abm``, ``n_crbm`` the
    right-hand-side evaluations for ``t_end`` seconds (None: more than the allowed maximum, or the step size
    collapsed: "failed to converge" in the thesis)."""

    ratio: float
    cond_max: float
    crbm_error_max: float
    n_abm: int | None
    n_crbm: int | None
    params: dict = field(default_factory=dict)

    @property
    def r_crbm(self) -> float:
        """n_crbm / n_abm (NaN when either failed)."""
        return self.n_crbm / self.n_abm if self.n_crbm and self.n_abm else float("nan")


class _TooManyEvaluations(Exception):
    """A run past its allowed right-hand-side evaluations (the thesis's "failed to converge")."""


def _count(dyn, params, options: RunOptions, max_evaluations: int):
    """(evaluations or None, the Trajectory or None) of :func:`kane.run` from rest at theta = 0: None when it
    takes more than ``max_evaluations`` or the step size collapses."""

    def cap(sim):
        if sim.stats.n_fev > max_evaluations:
            raise _TooManyEvaluations

    try:
        traj = run(dyn, State([0.0, 0.0], [0.0, 0.0]), options, params=params, progress=cap)
    except (KaneError, _TooManyEvaluations):
        return None, None
    return traj.stats.n_fev, traj


def integration_study(ratios=RATIOS, *, t_end: float = 10.0, rtol: float = 1e-6, atol: float = 1e-6,
                      total_length: float = 10.0, total_mass: float = 10.0, max_evaluations: int = 100_000,
                      output_dt: float = 0.05, digits: int = 50, dynamics=None) -> tuple[IntegrationRun, ...]:
    """Fig. 5.6: evaluations of kane's DOPRI5 (``rtol``, ``atol``) over ``t_end`` [s] with ABA and with CRBA, for
    each proximal-link fraction in ``ratios`` of a chain of ``total_length`` [m] and ``total_mass`` [kg]."""
    abm, crbm = dynamics or _dynamics()
    sampled = RunOptions(t_end=t_end, method=Method.DOPRI5, rtol=rtol, atol=atol, output_dt=output_dt,
                         record_energy=False)
    every_step = RunOptions(t_end=t_end, method=Method.DOPRI5, rtol=rtol, atol=atol, record_energy=False)
    runs = []
    for r in ratios:
        p = {"l1": r * total_length, "m1": r * total_mass, "l2": (1 - r) * total_length,
             "m2": (1 - r) * total_mass, "w": 1.0, "g": 9.8}
        n_abm, traj = _count(abm, p, sampled, max_evaluations)
        conds, errs = [], []
        for q, u in zip(*((traj.q, traj.u) if traj is not None else ((), ()))):
            ref, _, c = reference_accelerations(q, u, p, digits)
            conds.append(c)
            errs.append(float(np.max(_relative_error(crbm.udot(0.0, q, u, params=p), ref))))
        n_crbm, _ = _count(crbm, p, every_step, max_evaluations)
        runs.append(IntegrationRun(float(r), max(conds, default=np.nan), max(errs, default=np.nan), n_abm, n_crbm,
                                   p))
    return tuple(runs)


@dataclass(frozen=True)
class ConditioningResult:
    """The study: the configuration ``sweep`` (Figs. 5.3-5.5), the integration ``runs`` (Fig. 5.6) and the
    ``settings`` used."""

    sweep: ConfigurationSweep
    runs: tuple[IntegrationRun, ...]
    settings: dict


def run_study(*, quick: bool = False, l2_values=L2_VALUES, n_theta: int = 361, ratios=RATIOS,
              t_end: float = 10.0, rtol: float = 1e-6, atol: float = 1e-6,
              max_evaluations: int = 100_000) -> ConditioningResult:
    """Run both parts. ``quick``: 37 angles, three chains (ratios 1e-1, 1e-7, 1e-9) over 2 s (for smoke tests)."""
    if quick:
        n_theta, ratios, t_end = 37, (1e-1, 1e-7, 1e-9), 2.0
    dyn = _dynamics()
    sweep = configuration_sweep(l2_values, n_theta, dynamics=dyn)
    runs = integration_study(ratios, t_end=t_end, rtol=rtol, atol=atol, max_evaluations=max_evaluations,
                             dynamics=dyn)
    settings = {"l2_values": list(map(float, l2_values)), "n_theta": n_theta, "ratios": list(map(float, ratios)),
                "t_end": t_end, "rtol": rtol, "atol": atol, "max_evaluations": max_evaluations, "method": "dopri5",
                "total_length": 10.0, "total_mass": 10.0, "digits": 50}
    return ConditioningResult(sweep, runs, settings)


def write_results(result: ConditioningResult, out_dir) -> list[Path]:
    """Write ``sweep.csv``, ``integration.csv`` and the four figures (PNG) into ``out_dir``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s, paths = result.sweep, []
    path = out / "sweep.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["l2_m2", "theta2_rad", "cond_H", "udot1_ref", "udot1_abm", "udot1_crbm", "udot2_ref",
                    "udot2_abm", "udot2_crbm", "rel_err_abm", "rel_err_crbm"])
        ea, ec = s.err_abm.max(-1), s.err_crbm.max(-1)
        for i, l2 in enumerate(s.l2):
            for n, t2 in enumerate(s.theta2):
                w.writerow([f"{l2:g}", f"{t2:.6f}", f"{s.cond[i, n]:.6e}"]
                           + [f"{a[i, n, j]:.17g}" for j in range(2) for a in (s.udot_ref, s.udot_abm, s.udot_crbm)]
                           + [f"{ea[i, n]:.3e}", f"{ec[i, n]:.3e}"])
    paths.append(path)
    path = out / "integration.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["l1_over_L", "cond_max", "crbm_rel_err_max", "n_abm", "n_crbm", "r_crbm"])
        for r in result.runs:
            w.writerow([f"{r.ratio:g}", f"{r.cond_max:.3e}", f"{r.crbm_error_max:.3e}", r.n_abm or "failed",
                        r.n_crbm or "failed", f"{r.r_crbm:.3f}" if np.isfinite(r.r_crbm) else ""])
    paths.append(path)
    return paths + _plots(result, out)


def _plots(result: ConditioningResult, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s, paths = result.sweep, []
    deg = np.degrees(s.theta2)

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(out / name, dpi=120)
        plt.close(fig)
        paths.append(out / name)

    i = int(np.argmin(np.abs(np.log10(s.l2) - 2)))  # Fig. 5.3: l2 = m2 = 1e2
    fig, ax = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    ax[0].semilogy(deg, s.cond[i])
    ax[0].set_ylabel("cond(H)")
    ax[0].set_title(f"Fig. 5.3: 2-link chain, l2 = m2 = {s.l2[i]:g}")
    floor = np.finfo(float).eps / 4
    ax[1].semilogy(deg, np.maximum(s.err_crbm[i, :, 0], floor), label="CRBM")
    ax[1].semilogy(deg, np.maximum(s.err_abm[i, :, 0], floor), label="ABM")
    ax[1].set_xlabel("joint 2 angle [deg]")
    ax[1].set_ylabel("relative error, joint 1 accel.")
    ax[1].legend()
    save(fig, "fig5_3_configuration.png")
    fig, ax = plt.subplots(figsize=(7, 4.5))  # Fig. 5.4
    ax.loglog(s.l2, s.cond.max(1), "k-o", label="max cond(H)")
    ax.loglog(s.l2, np.maximum(s.err_crbm.max((1, 2)), floor), "r-s", label="max rel. error CRBM")
    ax.loglog(s.l2, np.maximum(s.err_abm.max((1, 2)), floor), "b-^", label="max rel. error ABM")
    ax.loglog(s.l2, s.cond.max(1) * np.finfo(float).eps / 2, "k:", label="cond(H) x unit round-off")
    ax.set_xlabel("l2 = m2 [m, kg]")
    ax.set_title("Fig. 5.4: effect of the distal link's size")
    ax.legend()
    save(fig, "fig5_4_link_length.png")
    big = range(max(0, len(s.l2) - 3), len(s.l2))  # Fig. 5.5: the three largest distal links
    fig, ax = plt.subplots(len(big), 1, figsize=(7, 2.6 * len(big)), squeeze=False)
    for a, k in zip(ax[:, 0], big):
        a.plot(deg, s.udot_crbm[k, :, 0], "r.", ms=3, label="CRBM")
        a.plot(deg, s.udot_abm[k, :, 0], "b-", lw=1, label="ABM")
        a.plot(deg, s.udot_ref[k, :, 0], "k:", lw=1, label="50-digit reference")
        a.set_title(f"l2 = m2 = {s.l2[k]:g}")
        a.set_ylabel("joint 1 accel. [rad/s^2]")
        a.ticklabel_format(axis="y", useOffset=False)
    ax[0, 0].legend(fontsize=8)
    ax[-1, 0].set_xlabel("joint 2 angle [deg]")
    save(fig, "fig5_5_accelerations.png")
    fig, ax = plt.subplots(figsize=(7, 4.5))  # Fig. 5.6
    runs = result.runs
    c = np.array([r.cond_max for r in runs])
    for attr, style, label in (("n_abm", "b-o", "ABM"), ("n_crbm", "r-s", "CRBM")):
        n = np.array([getattr(r, attr) or np.nan for r in runs], dtype=float)
        ax.loglog(c, n, style, label=label)
        failed = np.isnan(n)
        if failed.any():
            cap = result.settings["max_evaluations"]
            ax.plot(c[failed], np.full(failed.sum(), float(cap)), "rx", ms=10, label=f"{label}: over {cap} (failed)")
    ax.set_xlabel("max cond(H) along the run")
    ax.set_ylabel(f"evaluations for {result.settings['t_end']:g} s")
    ax.set_title(f"Fig. 5.6: DOPRI5 at rtol = {result.settings['rtol']:g}")
    ax.legend()
    save(fig, "fig5_6_evaluations.png")
    return paths
