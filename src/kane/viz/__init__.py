"""Showing results: plots of trajectories (matplotlib, drawn off-screen with the Agg canvas)."""

from .plots import plot_trajectory

__all__ = ["plot_trajectory"]
