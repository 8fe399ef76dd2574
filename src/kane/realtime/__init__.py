"""Real-time haptic display (issue 14): a fixed-rate loop in its own thread, the virtual coupler with its
sampled-data passivity bound, devices (a simulated hand, the replay of a log, a device bridge over UDP), deadline
statistics, an HDF5 log written outside the periods, and the ``[realtime]`` table of model files.

    >>> port = kane.realtime.add_coupler(system, "B6", (0, 0, -1))
    >>> dyn = kane.derive(system).compile()
    >>> coupler = kane.realtime.VirtualCoupler(dyn, port, kane.realtime.CouplerGains(2000.0, 5.0), max_force=20.0)
    >>> loop = kane.realtime.RealtimeLoop(coupler, hand, q0, u0, log="run.h5")
    >>> result = loop.run()

A full pose: ``add_coupler(system, body, point, rotational=True)`` adds a torque on the body, with ``CouplerGains(K,
B, rotational_stiffness=K_r, rotational_damping=B_r)``; the device's samples then carry the handle's orientation and
it displays the torque (``write_torque``), as :class:`SimulatedHand` does for a path that turns. Constraint changes
inside the period: ``SwitchingDynamics(equations, rules)`` in place of the compiled dynamics (the loop then runs a
:class:`SwitchingPlant`; the mode and the events go into the log); multi-rate: ``LoopOptions(substeps=N)`` or
``LoopOptions(dynamics_every=k)`` (:class:`SlowDynamics`; with ``dynamics_process=True`` in a worker process, a step
behind: :class:`AsyncDynamics`). Rolling contacts (a model file's ``[[contacts]]``):
``RollingRealtime(joint_dynamics, rolling_model)`` in place of the compiled dynamics; collision shapes
(``[[collision]]``): ``ContactRealtime(dynamics)``, contact time stepping at the dynamics' step. Scheduled inputs:
``RealtimeLoop(..., inputs=inputs(t, q, u))``, held over each period. The gains' stable region on the coupled
point's effective mass, for each of these schemes: :func:`coupler_stability`. A log read back:
:func:`load_realtime_log`; plotted: :func:`kane.viz.realtime_plot.plot_realtime_log` (``kane plot LOG.h5``).
"""

from .coupler import (
    CouplerForce,
    CouplerGains,
    CouplerPort,
    PassivityWarning,
    VirtualCoupler,
    add_coupler,
    check_gains,
    passivity_bound,
)
from .coupler_stability import (
    CouplerStability,
    check_stability,
    coupler_stability,
    effective_mass,
    point_mobility,
    spectral_radius,
)
from .devices import Device, DeviceSample, Replay, SimulatedHand, Workspace, check_sample
from .log import LOG_FORMAT, RealtimeLog
from .log_reader import LogEvent, RealtimeRecord, load_realtime_log
from .loop import ClockMode, Engine, LoopOptions, LoopPath, LoopResult, RealtimeLoop
from .model_table import RealtimeSettings, realtime_settings
from .async_dynamics import AsyncDynamics
from .contact_plant import ContactPlant, ContactRealtime
from .multirate import SlowDynamics
from .rolling_plant import RollingPlant, RollingRealtime
from .stats import JITTER_EDGES_S, DeadlineStats, DeadlineSummary
from .switching_plant import SwitchingDynamics, SwitchingOptions, SwitchingPlant
from .udp import FORCE_SIZE, STATE_SIZE, UdpDevice, pack_state, unpack_force

__all__ = [
    "CouplerForce", "CouplerGains", "CouplerPort", "PassivityWarning", "VirtualCoupler", "add_coupler",
    "check_gains", "passivity_bound", "check_stability", "coupler_stability", "CouplerStability",
    "spectral_radius", "effective_mass", "point_mobility", "Device",
    "DeviceSample", "Replay", "SimulatedHand", "Workspace", "check_sample", "LOG_FORMAT", "RealtimeLog",
    "ClockMode", "Engine", "LoopOptions", "LoopPath", "LoopResult", "RealtimeLoop", "JITTER_EDGES_S", "DeadlineStats",
    "DeadlineSummary", "RealtimeSettings", "realtime_settings", "AsyncDynamics", "UdpDevice", "FORCE_SIZE",
    "STATE_SIZE", "pack_state", "unpack_force", "SlowDynamics", "SwitchingDynamics", "SwitchingOptions",
    "SwitchingPlant", "RollingRealtime", "RollingPlant", "ContactRealtime", "ContactPlant", "LogEvent", "RealtimeRecord", "load_realtime_log",
]
