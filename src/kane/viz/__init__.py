"""Showing results: plots of trajectories (matplotlib, drawn off-screen with the Agg canvas)."""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    "plot_trajectory": ".plots",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["plot_trajectory"]
