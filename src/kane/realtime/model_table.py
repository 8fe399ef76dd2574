"""The ``[realtime]`` table of a model file: the default coupling point, coupler gains, device, loop rate and the
simulated hand's path, so that ``kane realtime MODEL --device sim`` runs with no other option.

Its keys (all optional; a command-line option given overrides the file) are declared in :data:`REALTIME` (see the
model-file reference, docs/reference/model-file.md)::

    [realtime]
    body = "B"
    point = [-0.3, 0, 0]
    stiffness = 500.0

Values are TOML numbers (no expressions). Errors are :class:`kane.io.model_context.ModelFileError` naming the file,
the table, the key and its line; a body that does not exist is named with the bodies there are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ArgumentError
from ..io.model_schema import KeySpec as K
from ..io.model_schema import TableSpec
from .udp import parse_peer

__all__ = ["REALTIME", "RealtimeSettings", "realtime_settings", "DEVICES", "HAND_PATHS"]

DEVICES = ("sim", "udp", "replay")
HAND_PATHS = ("circle", "line")
_NUMBERS = ("stiffness", "damping", "max_force", "rate", "duration", "workspace", "hand_radius", "hand_period",
            "hand_speed", "rotational_stiffness", "rotational_damping", "max_torque")
REALTIME = TableSpec(
    "realtime", "Defaults of `kane realtime`: the coupling point, coupler gains, device, loop rate and the simulated "
    "hand's path, so that `kane realtime MODEL --device sim` runs with no other option. Values are TOML numbers "
    "(no expressions) but for `point`.", keys=(
        K("body", "name", "the coupled body (required when the command has no --couple)", example='"B"'),
        K("point", "vec", "the coupled point in body axes (expressions of the parameters)", unit="m",
          default="the body's origin", example="[-0.3, 0, 0]"),
        K("stiffness", "number", "coupler K", unit="N/m", default="1000.0", example="500.0"),
        K("damping", "number", "coupler B (>= 0)", unit="N s/m",
          default="K k T, twice the sampled-data passivity bound at the dynamics' period k T", example="5.0"),
        K("max_force", "number", "the device's force limit", unit="N", default="20.0", example="40.0"),
        K("device", "string", "the device", allowed=DEVICES, default='"sim"', example='"sim"'),
        K("udp_port", "integer", "the UDP device's port (0-65535)", default="5005", example="5005"),
        K("udp_host", "string", "the address the UDP bridge listens on (another than loopback is warned of)",
          default='"127.0.0.1"', example='"127.0.0.1"'),
        K("udp_peer", "string", "the device's HOST or HOST:PORT", default="the first valid sender pairs",
          example='"10.0.0.2:6000"'),
        K("rate", "number", "loop rate", unit="Hz", default="1000.0", example="1000.0"),
        K("duration", "number", "run time", unit="s", default="10.0", example="10.0"),
        K("substeps", "integer", "dynamics steps per period (1-10000)", default="1", example="1"),
        K("dynamics_every", "integer", "k > 1: the dynamics step once every k periods over k T, in a process of "
          "their own (1-10000)", default="1", example="1"),
        K("workspace", "number", "half-width of the box around the coupled point the handle may reach", unit="m",
          default="2.0", example="2.0"),
        K("hand_path", "string", "the simulated hand's target: circle (hand_radius, hand_period) or line "
          "(hand_direction, hand_speed)", allowed=HAND_PATHS, default='"circle"', example='"line"'),
        K("hand_radius", "number", "the circle's radius", unit="m", default="0.05", example="0.05"),
        K("hand_period", "number", "once round the circle (and the period of hand_turn)", unit="s",
          default="2.0", example="2.0"),
        K("hand_direction", "numbers", "the line's direction, ground axes (normalised)", default="[1, 0, 0]",
          example="[1, 0, 0]"),
        K("hand_speed", "number", "the speed along the line (reached smoothly over the first 0.5 s; >= 0)",
          unit="m/s", default="0.2", example="0.2"),
        K("rotational_stiffness", "number", "K_r: couple the body's orientation too (a full pose; >= 0)",
          unit="N m/rad", example="2.0"),
        K("rotational_damping", "number", "B_r (>= 0)", unit="N m s/rad", default="K_r k T", example="0.01"),
        K("max_torque", "number", "the device's torque limit", unit="N m", default="none", example="1.0"),
        K("hand_turn", "numbers", "the hand turns its handle about this axis by up to its length, to and fro once "
          "every hand_period", unit="rad", default="[0, 0, 0.5]", example="[0, 0, 0.5]"),
    ), reader="kane.realtime.model_table.realtime_settings")
_NONNEGATIVE = ("damping", "hand_speed", "rotational_stiffness", "rotational_damping")


@dataclass(frozen=True)
class RealtimeSettings:
    """What a ``[realtime]`` table sets (None where it does not): ``body`` and ``point`` (3,) [m] of the coupling,
    gains ``stiffness`` [N/m] and ``damping`` [N s/m], ``max_force`` [N], ``device``, ``udp_port``, ``udp_host``,
    ``udp_peer``, ``rate`` [Hz],
    ``duration`` [s], ``substeps``, ``dynamics_every``, ``workspace`` [m], and the hand's path: ``hand_path``,
    ``hand_radius`` [m], ``hand_period`` [s], ``hand_direction`` (3,), ``hand_speed`` [m/s]; a full pose:
    ``rotational_stiffness`` [N m/rad], ``rotational_damping`` [N m s/rad], ``max_torque`` [N m], ``hand_turn``
    (3,) [rad]."""

    body: str | None = None
    point: tuple | None = None
    stiffness: float | None = None
    damping: float | None = None
    max_force: float | None = None
    device: str | None = None
    udp_port: int | None = None
    udp_host: str | None = None
    udp_peer: str | None = None
    rate: float | None = None
    duration: float | None = None
    substeps: int | None = None
    dynamics_every: int | None = None
    workspace: float | None = None
    hand_path: str | None = None
    hand_radius: float | None = None
    hand_period: float | None = None
    hand_direction: tuple | None = None
    hand_speed: float | None = None
    rotational_stiffness: float | None = None
    rotational_damping: float | None = None
    max_torque: float | None = None
    hand_turn: tuple | None = None


def _number(ctx, key, nonnegative=False) -> float | None:
    v = ctx.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ctx.error(key, f"expected a finite number, got {v!r}")
    if (v < 0) if nonnegative else (v <= 0):
        raise ctx.error(key, f"expected a number {'>= 0' if nonnegative else '> 0'}, got {v!r}")
    return float(v)


def _integer(ctx, key, low, high) -> int | None:
    v = ctx.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise ctx.error(key, f"expected an integer from {low} to {high}, got {v!r}")
    return v


def _triple(ctx, key) -> tuple | None:
    v = ctx.get(key)
    if v is None:
        return None
    if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         and math.isfinite(x) for x in v)):
        raise ctx.error(key, f"expected a list of 3 finite numbers, got {v!r}")
    return tuple(float(x) for x in v)


def _peer(ctx) -> str | None:
    """The device's address, HOST or HOST:PORT, checked."""
    v = ctx.string("udp_peer")
    if v is not None:
        try:
            parse_peer(v)
        except ArgumentError as exc:
            raise ctx.error("udp_peer", str(exc)) from None
    return v


def _point(ctx) -> tuple | None:
    """The coupled point [m, body axes]: three numbers or expressions of the parameters (at their values)."""
    if ctx.get("point") is None:
        return None
    return tuple(ctx.evaluate("point", e, item=f" (item {i + 1})")
                 for i, e in enumerate(ctx.vector("point", ctx.loader.scope())))


def realtime_settings(loaded) -> RealtimeSettings:
    """The ``[realtime]`` table of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`), checked; all None when
    the file has none."""
    if not loaded.tables.get("realtime"):
        return RealtimeSettings()
    ctx = loaded.context("realtime")
    REALTIME.check(ctx)
    body = None
    if ctx.get("body") is not None:
        bodies = {b.name for b in loaded.system.compile().bodies}
        body = ctx.ref("body", bodies, ground=False)
    direction = _triple(ctx, "hand_direction")
    if direction is not None:
        norm = math.sqrt(sum(x * x for x in direction))
        if norm == 0:
            raise ctx.error("hand_direction", "expected a nonzero direction")
        direction = tuple(x / norm for x in direction)
    return RealtimeSettings(
        body=body, point=_point(ctx), device=ctx.string("device", choices=DEVICES),
        udp_port=_integer(ctx, "udp_port", 0, 65535), udp_host=ctx.string("udp_host"), udp_peer=_peer(ctx),
        substeps=_integer(ctx, "substeps", 1, 10000),
        dynamics_every=_integer(ctx, "dynamics_every", 1, 10000),
        hand_path=ctx.string("hand_path", choices=HAND_PATHS), hand_direction=direction,
        hand_turn=_triple(ctx, "hand_turn"),
        **{k: _number(ctx, k, k in _NONNEGATIVE) for k in _NUMBERS})
