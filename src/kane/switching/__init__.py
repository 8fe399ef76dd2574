"""Constraints that come and go during a run (seed 000 Figure 2): on-line embedding by recombination, contact,
friction and lock rules, impulses, contact shapes, pre-derived hybrid mode sequences, and the rules of a model
file's ``[[switching]]`` tables (:func:`switching_rules`; :func:`switching_simulation` is ``kane simulate``'s run), and
velocity-level time stepping of many frictional contacts on Coulomb cones (:func:`simulate_contacts`), or their
event-driven stick/slip embedding (:func:`simulate_events`), on free bodies or any kane model (:class:`SystemBodies`).

    >>> traj = kane.switching.simulate_switching(eqs, (0.0, 5.0), q0, u0, rules=[UnilateralContact(...)])
"""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    "switching_simulation": ".command",
    **dict.fromkeys(("ConeSolution", "ConeSolverOptions", "solve_cones"), ".cone_solver"),
    "FreeBodies": ".contact_bodies",
    **dict.fromkeys(("ContactRunOptions", "ContactRunResult", "ContactSeries", "contact_series", "run_contacts",
                     "write_contact_run"), ".contact_run"),
    **dict.fromkeys(("ContactEvent", "ContactInconsistencyError", "EventContactRun", "EventOptions",
                     "simulate_contacts", "simulate_events"), ".contact_events"),
    **dict.fromkeys(("ContactOptions", "ContactRecords", "ContactRun", "ContactScheme", "ContactStep", "contact_step"),
                    ".contact_stepping"),
    **dict.fromkeys(("HybridSimulator", "mode_system", "robust_dependent", "simulate_hybrid"), ".hybrid"),
    "SwitchedDynamics": ".dynamics",
    "switching_rules": ".model_table",
    "SwitchingSettings": ".settings",
    "SystemBodies": ".system_bodies",
    **dict.fromkeys(("ImpulseResult", "OnlineDynamics", "SlipForce", "constraint_layout"), ".online"),
    **dict.fromkeys(("Coulomb", "Lock", "UnilateralContact", "resolve_impulse"), ".rules"),
    **dict.fromkeys(("Contact", "Disk", "Gap", "Plane", "Point", "Sphere", "contact"), ".shapes"),
    **dict.fromkeys(("SwitchingSimulator", "simulate_switching"), ".simulator"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ConeSolution",
    "ConeSolverOptions",
    "solve_cones",
    "FreeBodies",
    "ContactRunOptions",
    "ContactRunResult",
    "ContactSeries",
    "contact_series",
    "run_contacts",
    "write_contact_run",
    "ContactEvent",
    "ContactInconsistencyError",
    "EventContactRun",
    "EventOptions",
    "simulate_events",
    "ContactOptions",
    "ContactRecords",
    "ContactRun",
    "ContactScheme",
    "ContactStep",
    "contact_step",
    "simulate_contacts",
    "HybridSimulator",
    "mode_system",
    "robust_dependent",
    "simulate_hybrid",
    "ImpulseResult",
    "OnlineDynamics",
    "SlipForce",
    "constraint_layout",
    "Coulomb",
    "Lock",
    "UnilateralContact",
    "resolve_impulse",
    "Contact",
    "Disk",
    "Gap",
    "Plane",
    "Point",
    "Sphere",
    "contact",
    "SwitchedDynamics",
    "SwitchingSettings",
    "SystemBodies",
    "SwitchingSimulator",
    "simulate_switching",
    "switching_rules",
    "switching_simulation",
]
