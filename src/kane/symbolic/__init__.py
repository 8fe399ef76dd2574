"""Kane's method with named intermediates, constraint embedding and recombination."""

from .derive import Embedding, Equations, Redundant, RedundantConstraintWarning, derive

__all__ = ["derive", "Embedding", "Equations", "Redundant", "RedundantConstraintWarning"]
