"""Kane's method with named intermediates, constraint embedding and recombination."""

from .derive import (Embedding, Equations, Immobile, InconsistentInitialStateWarning, Redundant,
                     RedundantConstraintWarning, derive)

__all__ = ["derive", "Embedding", "Equations", "Immobile", "InconsistentInitialStateWarning", "Redundant",
           "RedundantConstraintWarning"]
