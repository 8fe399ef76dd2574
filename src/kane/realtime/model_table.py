"""The ``[realtime]`` table of a model file: the default coupling point, coupler gains, device, loop rate and the
simulated hand's path, so that ``kane realtime MODEL --device sim`` runs with no other option.

Keys (all optional; a command-line option given overrides the file)::

    [realtime]
    body = "B"                 # the coupled body (required when the command has no --couple)
    point = [-0.3, 0, 0]       # the coupled point in body axes [m], numbers or expressions of the parameters
                               # (default the body's origin)
    stiffness = 500.0          # coupler K [N/m]
    damping = 5.0              # coupler B [N s/m] (default K k T, twice the sampled-data passivity bound at the
                               # dynamics' period k T)
    max_force = 40.0           # the device's force limit [N]
    device = "sim"             # sim, udp or replay
    udp_port = 5005            # the UDP device's port
    udp_host = "127.0.0.1"     # the address it listens on (loopback; another one is explicit and warned of)
    udp_peer = "10.0.0.2:6000" # the device's HOST or HOST:PORT (default: the first valid sender pairs)
    rate = 1000.0              # loop rate [Hz]
    duration = 10.0            # run time [s]
    substeps = 1               # dynamics steps per period
    dynamics_every = 1         # k > 1: the dynamics step once every k periods over k T, in a process of their own
    workspace = 2.0            # half-width [m] of the box around the coupled point the handle may reach
    hand_path = "circle"       # the simulated hand's target: circle (radius, period) or line (direction, speed)
    hand_radius = 0.05         # [m]
    hand_period = 2.0          # [s] once round the circle
    hand_direction = [1, 0, 0] # ground axes, normalised
    hand_speed = 0.2           # [m/s] along the line (reached smoothly over the first 0.5 s)
    rotational_stiffness = 2.0 # K_r [N m/rad]: couple the body's orientation too (a full pose; a torque on it)
    rotational_damping = 0.01  # B_r [N m s/rad] (default K_r k T)
    max_torque = 1.0           # the device's torque limit [N m] (default none)
    hand_turn = [0, 0, 0.5]    # the simulated hand turns its handle about this axis by up to its length [rad],
                               # to and fro once every hand_period

Values are TOML numbers (no expressions). Errors are :class:`kane.io.model_context.ModelFileError` naming the file,
the table, the key and its line; a body that does not exist is named with the bodies there are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ArgumentError
from .udp import parse_peer

__all__ = ["RealtimeSettings", "realtime_settings", "DEVICES", "HAND_PATHS"]

DEVICES = ("sim", "udp", "replay")
HAND_PATHS = ("circle", "line")
_NUMBERS = ("stiffness", "damping", "max_force", "rate", "duration", "workspace", "hand_radius", "hand_period",
            "hand_speed", "rotational_stiffness", "rotational_damping", "max_torque")
_KEYS = {"body", "point", "device", "udp_port", "udp_host", "udp_peer", "substeps", "dynamics_every", "hand_path",
         "hand_direction", "hand_turn", *_NUMBERS}
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
    ctx.check_keys(_KEYS)
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
