"""Contact outputs of a run drawn: a plot panel of every collision pair's normal force [N] and one of its mode
(open / stick / slip), and the contact forces as arrows for the viewer.

The outputs are the run file's ``"<pair>.<field>"`` series of a contact run
(:mod:`kane.switching.contact_run`, read by :func:`kane.switching.contact_run.contact_series`). The force on
shape b of a pair (the second name of ``"<a>|<b>"``) at its centre of pressure is

    F = N n + f_1 t1 + f_2 t2    [N], world axes,

n the pair's unit normal from a to b and (t1, t2) its tangents (:meth:`kane.model.contact.ContactPoint.
tangents_world`, a function of n alone); a pair that does not press has no arrow (NaN).
"""

from __future__ import annotations

import numpy as np

from ..model.contact import ContactPoint
from ..switching.contact_run import ContactSeries, contact_series
from .forces import ForceArrows

__all__ = ["CONTACT_PANELS", "contact_arrows", "contact_info_rows", "draw_contact_panel", "is_contact_series",
           "merge_arrows"]

CONTACT_PANELS = ("contact_force", "contact_mode")
"""The names of the two panels a run with contact outputs gets in :func:`kane.viz.plots.trajectory_figure`."""

_MODE_NAMES = ("open", "stick", "slip")


def is_contact_series(name: str, series: ContactSeries | None) -> bool:
    """True when the monitor ``name`` is one of ``series``' contact outputs (so it is not drawn as a monitor)."""
    return series is not None and name.rpartition(".")[0] in series.pairs


def draw_contact_panel(ax, panel: str, series: ContactSeries) -> None:
    """Draw ``panel`` (one of :data:`CONTACT_PANELS`) of ``series`` on the matplotlib Axes ``ax``."""
    t = series.t
    if panel == "contact_force":
        for k, pair in enumerate(series.pairs):
            ax.plot(t, series["normal_force"][:, k], lw=1.0, label=pair)
        ax.set_ylabel("contact normal force [N]")
    else:
        for k, pair in enumerate(series.pairs):
            ax.step(t, series.mode[:, k] + 0.04 * k, where="post", lw=1.0, label=pair)
        ax.set_yticks(range(len(_MODE_NAMES)), _MODE_NAMES)
        ax.set_ylim(-0.3, 2.3 + 0.04 * len(series.pairs))
        ax.set_ylabel("contact mode")
    if series.pairs:
        ax.legend(loc="best", fontsize=7, ncol=min(4, max(1, (len(series.pairs) + 5) // 6)), framealpha=0.8)


def _tangents(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t1, t2) (m, 3) of the unit normals (m, 3), as :meth:`ContactPoint.tangents_world` chooses them."""
    t1, t2 = np.full(normal.shape, np.nan), np.full(normal.shape, np.nan)
    for i, n in enumerate(normal):
        if np.all(np.isfinite(n)):
            cp = ContactPoint("ground", "ground", "", "", n, n, n, 0.0, None)
            t1[i], t2[i] = cp.tangents_world()
    return t1, t2


def contact_arrows(trajectory, body_of_shape: dict | None = None) -> ForceArrows | None:
    """The contact forces of ``trajectory`` (a :class:`kane.io.trajectory.Trajectory` of a contact run) as
    :class:`kane.viz.forces.ForceArrows`: per pair the force on shape b at its centre of pressure (module
    docstring), where the pair does not press a NaN force (the viewer draws no arrow) at the origin; ``body_of_shape`` maps a shape name to its body (default:
    the shape's name). None when the run has no contact outputs."""
    series = contact_series(trajectory)
    if series is None:
        return None
    n_samples, n_pairs = series.t.shape[0], len(series.pairs)
    point = np.stack([series[f"point_{k}"] for k in "xyz"], axis=-1)  # (N, P, 3)
    normal = np.stack([series[f"normal_{k}"] for k in "xyz"], axis=-1)
    flat = normal.reshape(-1, 3)
    t1, t2 = _tangents(flat)
    force = (series["normal_force"].reshape(-1, 1) * flat + series["friction_t1"].reshape(-1, 1) * t1
             + series["friction_t2"].reshape(-1, 1) * t2).reshape(n_samples, n_pairs, 3)
    shapes = [pair.partition("|")[2] for pair in series.pairs]
    bodies = tuple((body_of_shape or {}).get(s, s) for s in shapes)
    return ForceArrows(series.pairs, bodies, np.nan_to_num(point), force)  # open: NaN force (no arrow) at 0


def merge_arrows(first: ForceArrows | None, second: ForceArrows | None) -> ForceArrows | None:
    """The arrows of both (either may be None)."""
    if first is None or second is None:
        return first if second is None else second
    return ForceArrows(first.names + second.names, first.bodies + second.bodies,
                       np.concatenate([first.point, second.point], axis=1),
                       np.concatenate([first.force, second.force], axis=1))


def contact_info_rows(trajectory) -> tuple[tuple[str, str], ...]:
    """``kane info``'s rows of a contact run: the scheme and, per collision pair, how many samples it is open,
    sticks and slips, and its largest normal force [N]; () for a run without contact outputs."""
    series = contact_series(trajectory)
    if series is None:
        return ()
    method = trajectory.stats.method
    rows = [("contact scheme", method.partition(",")[0].removeprefix("contact ") if method.startswith("contact ")
             else "(not recorded)"),
            (f"contact pairs ({len(series.pairs)})", ", ".join(series.pairs))]
    for k, pair in enumerate(series.pairs):
        counts = np.bincount(np.clip(series.mode[:, k], 0, 2), minlength=3)
        force = series["normal_force"][:, k]
        largest = f"{np.nanmax(force):.6g} N" if np.isfinite(force).any() else "none"
        rows.append((f"contact {pair}", ", ".join(f"{name} {c}" for name, c in zip(_MODE_NAMES, counts)) +
                     f" samples; largest normal force {largest}"))
    return tuple(rows)
