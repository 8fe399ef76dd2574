"""Exceptions raised by kane. Every message names the body, joint, file or field at fault."""

__all__ = ["KaneError", "ModelError", "DerivationError", "ArgumentError", "ComplexArgumentError"]


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
