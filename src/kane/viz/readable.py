"""Charts that read right: the monitors of a run sorted into panels by their unit, and curves whose spread shows.

A run records, beside its states, monitors of different kinds (:func:`kane.simulate.monitors.standard_monitors`):
constraint residuals (motion constraints A u + b [m/s, rad/s], configuration constraints C(q) [m]), unit-quaternion
norm errors [-], the power [W] of the loads without a potential and the condition number of the dependent-speed
block. :func:`monitor_panels` puts each kind in its own panel with its unit, so a power of 10 W never shares a
log axis with a residual of 1e-15. :func:`spread_of` rescales a curve that varies by 1e-9 of its value (a conserved
energy) to a start value plus a deviation in a power of ten, so tick labels differ; :func:`spread_formatter` is the
matplotlib formatter that does the same on an axis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MonitorPanel", "monitor_panels", "Spread", "spread_of", "spread_formatter"]


@dataclass(frozen=True)
class MonitorPanel:
    """One panel of monitors: its ``title``, the y-axis ``ylabel`` with the unit, the monitor ``names`` drawn in it,
    whether it is drawn as absolute values on a ``log`` axis, and there the ``floor`` of the values drawn (1e-17
    for a residual that is 0; 1 for a condition number)."""

    title: str
    ylabel: str
    names: tuple[str, ...]
    log: bool
    floor: float = 1e-17


# (title, ylabel, log) of the monitors kane records, in the order of the panels
_KINDS = {
    "constraint": ("motion-constraint residual", "|A u + b| [m/s, rad/s]", True),
    "configuration": ("configuration-constraint residual", "|C(q)| [m, rad]", True),
    "quaternion_norm": ("unit-quaternion norm error", "| |quaternion| - 1 | [-]", True),
    "power": ("power of the non-conservative loads", "power [W]", False),
    "dependent_block_condition": ("dependent-block condition number", "condition number [-]", True),
}


def monitor_panels(names) -> tuple[MonitorPanel, ...]:
    """The panels of the monitors ``names`` (a run's residual names): one per kind kane records, in the order
    residuals, power, condition number, then one "other monitors" panel (linear axis, "value") for the rest."""
    names = tuple(names)
    panels = [MonitorPanel(title, ylabel, (name,), log, 1.0 if name == "dependent_block_condition" else 1e-17)
              for name, (title, ylabel, log) in _KINDS.items() if name in names]
    rest = tuple(n for n in names if n not in _KINDS)
    if rest:
        panels.append(MonitorPanel("other monitors", "value", rest, False))
    return tuple(panels)


@dataclass(frozen=True)
class Spread:
    """A curve as ``offset`` + ``values`` x 10^``exponent``: ``values`` (N,) the rescaled deviation, ``offset`` its
    rounded start value (0 when the curve's own values read well) and ``label`` the axis label with ``unit``."""

    values: np.ndarray
    offset: float
    exponent: int
    label: str


def spread_of(values, quantity: str, unit: str, relative: float = 1e-3) -> Spread:
    """``values`` (N,) of ``quantity`` [``unit``] as a :class:`Spread`: when they vary by less than ``relative``
    of their size, the deviation from the first value rounded to the decimal digit where the values part (a
    short offset, printed exactly in the label); scaled by a power of ten that is a multiple of 3 when the
    deviation is under 1e-2 or over 1e4, so three-digit tick labels tell the values apart."""
    v = np.asarray(values, dtype=float).reshape(-1)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return Spread(v, 0.0, 0, f"{quantity} [{unit}]")
    size = float(np.max(np.abs(finite)))
    offset = 0.0
    if float(np.ptp(finite)) < relative * size:  # the start value rounded to the digit where the values part
        start = float(finite[0])
        apart = float(np.max(np.abs(finite - start)))
        offset = round(start, -math.floor(math.log10(apart))) if apart > 0 else start
    deviation = float(np.max(np.abs(finite - offset)))
    exponent = 0
    if deviation > 0 and not 1e-2 <= deviation < 1e4:
        exponent = 3 * math.floor(math.log10(deviation) / 3)
    scaled = (v - offset) / 10.0 ** exponent
    what = f"{quantity} - {offset:.15g} {unit}" if offset else quantity
    scale = f"1e{exponent} {unit}" if exponent else unit
    return Spread(scaled, offset, exponent, f"{what} [{scale}]")


def spread_formatter():
    """A matplotlib tick formatter that shows the spread of the values: an offset (a common leading part, shown at
    the axis's end) and a power of ten beyond 1e-3 .. 1e4, so the labels of a curve that varies by 1e-9 of its
    value differ."""
    from matplotlib.ticker import ScalarFormatter

    formatter = ScalarFormatter(useOffset=True, useMathText=True)
    formatter.set_powerlimits((-3, 4))
    return formatter
