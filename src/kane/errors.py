"""Exceptions raised by kane. Every message names the body, joint, file or field at fault."""

__all__ = ["KaneError", "ModelError", "DerivationError"]


class KaneError(Exception):
    """Base class of every error raised on purpose by kane."""


class ModelError(KaneError, ValueError):
    """A system description is invalid: the message names the body, joint or field and what was expected."""


class DerivationError(KaneError):
    """The equations of motion could not be formed (for example a singular constraint block)."""
