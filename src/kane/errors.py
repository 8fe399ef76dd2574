"""Exceptions raised by kane. Every message names the body, joint, file or field at fault."""

__all__ = ["KaneError", "ModelError", "DerivationError", "ArgumentError", "ComplexArgumentError", "SingularStateError",
           "NotSupportedError"]


class KaneError(Exception):
    """Base class of every error raised on purpose by kane."""


class ModelError(KaneError, ValueError):
    """A system description is invalid: the message names the body, joint or field and what was expected."""


class DerivationError(KaneError):
    """The equations of motion could not be formed (for example a singular constraint block)."""


class ArgumentError(KaneError, ValueError):
    """A numeric argument has the wrong shape, type or value: the message names it and what was expected."""


class ComplexArgumentError(KaneError, TypeError):
    """A complex argument was given where kane evaluates in real arithmetic (complex-step derivatives are not
    supported by these functions: they would silently drop the imaginary part)."""


class SingularStateError(KaneError, ArithmeticError):
    """The equations cannot be evaluated at this state: a division by zero, the square root or logarithm of a
    negative number, or an overflow (a gimbal at its singular angle, a force 1/t at t = 0, a dependent-speed block
    or a mass matrix that loses rank). One state and a batch of states raise it alike. ``quantity`` names the
    intermediate or output that failed, in the model's own names; ``state`` is the index in a batch (or None)."""

    def __init__(self, message: str, *, quantity: str = "", state: int | None = None):
        super().__init__(message)
        self.quantity = quantity
        self.state = state


class NotSupportedError(KaneError, NotImplementedError):
    """A dynamics object was asked for something its formulation does not provide (its
    :class:`kane.protocol.Capabilities` say False): the message names the class, the capability and why."""
