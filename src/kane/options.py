"""Option enums that more than one layer takes (the integration method is named in model files, read by
:mod:`kane.io`, and used by :mod:`kane.simulate`)."""

from __future__ import annotations

import enum

__all__ = ["Method", "parse_enum"]


class Method(enum.Enum):
    """Integration method: fixed-step ``RK4`` and ``SEMI_IMPLICIT_EULER``, adaptive ``DOPRI5``, ``RADAU``, ``BDF``."""

    RK4 = "rk4"
    SEMI_IMPLICIT_EULER = "semi_implicit_euler"
    DOPRI5 = "dopri5"
    RADAU = "radau"
    BDF = "bdf"

    @property
    def adaptive(self) -> bool:
        """True for the error-controlled methods (DOPRI5, RADAU, BDF)."""
        return self in (Method.DOPRI5, Method.RADAU, Method.BDF)

    @classmethod
    def parse(cls, value: Method | str) -> Method:
        """Return ``value`` as a Method; strings match the name or value, case-insensitively ("rk4", "DOPRI5")."""
        found = parse_enum(cls, value)
        if found is None:
            raise ValueError(f"unknown integration method {value!r}; expected one of {[m.value for m in cls]}")
        return found


def parse_enum(cls: type[enum.Enum], value):
    """``value`` as a member of the enum ``cls``: a member, or a string matching a member's value or name
    case-insensitively; None when nothing matches (the caller raises its own error, naming its option)."""
    if isinstance(value, cls):
        return value
    key = str(value).strip().lower()
    return next((m for m in cls if key in (str(m.value).lower(), m.name.lower())), None)
