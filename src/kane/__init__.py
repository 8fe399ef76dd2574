"""kane: dynamics of multibody systems by Kane's method.

Describe bodies, joints, loads and constraints once on a :class:`System`; :func:`derive` forms compact equations
of motion with the constraints embedded; :meth:`Equations.compile` gives a numeric :class:`Dynamics`, and
:func:`dynamics` is the front door to every formulation (:class:`Formulation`). Every name here imports its module
on first use (:mod:`kane.lazy`), so ``import kane`` itself is quick.
"""


def _quiet_ctrl_c_while_the_kane_command_starts() -> None:
    """Run as the ``kane`` command, Ctrl-C while the packages load (seconds) ends with one line on stderr and
    status 130, not a traceback; kane.cli hands SIGINT back (or to its own handlers) when its command starts."""
    import os
    import signal
    import sys
    import threading

    if (os.path.basename(sys.argv[0] if sys.argv else "") not in ("kane", "kane.exe")
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return

    def interrupted(signum, frame):
        os.write(2, b"kane: interrupted (Ctrl-C)\n")
        os._exit(130)

    interrupted.kane_startup = True
    signal.signal(signal.SIGINT, interrupted)


_quiet_ctrl_c_while_the_kane_command_starts()

from .lazy import lazy_exports  # noqa: E402

# the public names and the modules that define them: each is imported on first use (kane.lazy), so that
# ``import kane`` (and the ``kane`` command's --version and --help) load no sympy, scipy, h5py or numba
_EXPORTS = {
    "DerivationError": ".errors", "KaneError": ".errors", "ModelError": ".errors", "SingularStateError": ".errors",
    "Trajectory": ".io.trajectory", "load_trajectory": ".io.trajectory",
    "SpeedMap": ".model.joints", "Speeds": ".model.joints",
    "GROUND": ".model.model", "Model": ".model.model", "stretch": ".model.model", "stretch_rate": ".model.model",
    "t": ".model.model",
    "System": ".model.system",
    "Formulation": ".options", "Method": ".options",
    "Event": ".simulate.events", "SimulationError": ".simulate.simulator", "assemble": ".simulate.assembly",
    "project_positions": ".simulate.assembly",
    "Embedding": ".symbolic.derive", "Equations": ".symbolic.derive", "Redundant": ".symbolic.derive",
    "derive": ".symbolic.derive",
    "to_sympy": ".symbolic.to_sympy",
    "from_sympy": ".symbolic.from_sympy",
    "Capabilities": ".protocol", "Dynamics": ".protocol",  # the protocol every dynamics class satisfies
    "KaneDynamics": ".symbolic.dynamics",
    "Loop": ".simulate.run", "RunOptions": ".simulate.run", "State": ".simulate.run",
    "run": ".simulate.run",  # the one run pipeline
    "dynamics": ".symbolic.formulation",  # Kane's equations or a recursive algorithm
    "linearize": ".analysis.linearize",
}
# subpackages reachable as attributes of kane (``kane.symbolic.RedundantConstraintWarning``), imported on first use
_MODULES = ("joints", "algorithms", "simulate", "switching", "analysis", "codegen", "errors", "io", "mechanics",
            "model", "options", "protocol", "realtime", "spatial", "studies", "surfaces", "sweep", "symbolic", "viz")
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _MODULES)

__all__ = [
    "System", "Model", "GROUND", "joints", "algorithms", "Speeds", "SpeedMap", "derive", "Embedding", "Equations",
    "Redundant", "Dynamics", "KaneDynamics", "Capabilities", "SingularStateError",
    "KaneError", "ModelError", "DerivationError", "t", "stretch", "stretch_rate",
    "simulate", "switching", "Method", "Event", "SimulationError", "Trajectory", "load_trajectory", "assemble",
    "project_positions", "linearize", "Formulation", "dynamics", "run", "RunOptions", "State", "Loop",
    "to_sympy", "from_sympy",
]

__version__ = "0.1.0"
