"""kane: dynamics of multibody systems by Kane's method.

Describe bodies, joints, loads and constraints once on a :class:`System`; :func:`derive` forms compact equations
of motion with the constraints embedded; :meth:`Equations.compile` gives a numeric :class:`Dynamics`.
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

from . import algorithms, joints, simulate, switching  # noqa: E402
from .errors import DerivationError, KaneError, ModelError, SingularStateError  # noqa: E402
from .io.trajectory import Trajectory, load_trajectory  # noqa: E402
from .model.joints import SpeedMap, Speeds  # noqa: E402
from .model.model import GROUND, Model, stretch, stretch_rate, t  # noqa: E402
from .model.system import System  # noqa: E402
from .options import Method  # noqa: E402
from .simulate import Event, SimulationError, assemble, project_positions  # noqa: E402
from .simulate.run import Loop, RunOptions, State, run  # noqa: E402; the one run pipeline (issue 28)
from .symbolic.derive import Embedding, Equations, Redundant, derive  # noqa: E402
from .protocol import Capabilities, Dynamics  # noqa: E402; the protocol every dynamics class satisfies
from .symbolic.dynamics import KaneDynamics  # noqa: E402
from .symbolic.formulation import Formulation, dynamics  # noqa: E402; Kane's equations or a recursive algorithm
from .analysis import linearize  # noqa: E402; also Equations.linearize (attached by kane.analysis)

__all__ = [
    "System", "Model", "GROUND", "joints", "algorithms", "Speeds", "SpeedMap", "derive", "Embedding", "Equations",
    "Redundant", "Dynamics", "KaneDynamics", "Capabilities", "SingularStateError",
    "KaneError", "ModelError", "DerivationError", "t", "stretch", "stretch_rate",
    "simulate", "switching", "Method", "Event", "SimulationError", "Trajectory", "load_trajectory", "assemble",
    "project_positions", "linearize", "Formulation", "dynamics", "run", "RunOptions", "State", "Loop",
]

__version__ = "0.1.0"
