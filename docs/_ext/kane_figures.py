"""Sphinx extension: the figures of the site are drawn by kane when the site is built (never committed), into
``docs/_figures/``; a figure is drawn again when it is missing or older than the model file it comes from.

- ``bicycle_eigenvalues.png``: the benchmark bicycle's eigenvalues against its forward speed
  (:func:`kane.analysis.eigenvalue_sweep`, examples/bicycle.toml);
- ``cart.png``: the shopping cart's run as ``make run`` plots it (:func:`kane.viz.plot_trajectory`,
  examples/shopping_cart.toml).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["FIGURES", "draw_bicycle", "draw_cart", "setup"]


def draw_bicycle(model: Path, out: Path) -> None:
    """The eigenvalues of upright straight running of ``model`` for v from 0 to 10 m/s, plotted to ``out``."""
    import numpy as np

    from kane.analysis import eigenvalue_sweep
    from kane.io import load_model

    lm = load_model(model)
    eqs = lm.derive()
    q = {str(n): float(lm.q0[str(n)]) for n in eqs.model.q}
    u = {str(n): float(lm.u0[str(n)]) for n in eqs.u_independent}
    eigenvalue_sweep(eqs, "v", np.linspace(0.0, 10.0, 41), q, u, 0.0, dict(lm.parameters)).plot(out)


def draw_cart(model: Path, out: Path) -> None:
    """The run of ``model`` from its [simulation] settings with kane simulate's monitors, plotted to ``out``."""
    import kane
    from kane.io import load_model
    from kane.viz import plot_trajectory

    lm = load_model(model)
    dyn = lm.derive().compile()
    q0, u0 = lm.initial_state(dyn)
    s = lm.simulation
    options = kane.RunOptions(t_end=s.t_end, method=s.method, rtol=s.rtol, atol=s.atol, output_dt=s.output_dt,
                              standard_monitors=True)  # the residuals and power kane simulate records
    traj = kane.run(dyn, kane.State(q0, u0), options, params=dict(lm.parameters), inputs=lm.input_function(dyn))
    plot_trajectory(traj, out, title=lm.description)


FIGURES = {"bicycle_eigenvalues.png": ("bicycle.toml", draw_bicycle), "cart.png": ("shopping_cart.toml", draw_cart)}


def _draw(app) -> None:
    import matplotlib

    matplotlib.use("Agg")
    docs = Path(app.srcdir)
    figures, examples = docs / "_figures", docs.parent / "examples"
    figures.mkdir(exist_ok=True)
    for name, (model, draw) in FIGURES.items():
        out, source = figures / name, examples / model
        if not out.exists() or out.stat().st_mtime < source.stat().st_mtime:
            draw(source, out)


def setup(app):
    app.connect("builder-inited", _draw)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
