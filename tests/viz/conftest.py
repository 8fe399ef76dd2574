"""A shopping-cart run as `kane simulate` writes it (the model file's path recorded in its description), shared by
the viewer tests."""

from pathlib import Path

import pytest

import kane
from kane.io.model_file import load_model

CART = Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml"


@pytest.fixture(scope="module")
def make_cart_run(tmp_path_factory):
    """make_cart_run(t_end, output_dt) -> the path of a new run file of the cart from its model file."""

    def make(t_end: float, output_dt: float) -> Path:
        lm = load_model(CART)
        dyn = lm.derive().compile()
        q0, u0 = lm.initial_state(dyn)
        run = tmp_path_factory.mktemp("view") / "cart.h5"
        kane.simulate.simulate(dyn, (0.0, t_end), q0, u0, params=dict(lm.parameters), inputs=lm.input_function(dyn),
                               output_dt=output_dt, path=run, description=f"{lm.name} ({CART})")
        return run

    return make


@pytest.fixture(scope="module")
def cart_monitored_run():
    """(the loaded cart model, its 0.5 s run through kane.run with the standard monitors of kane simulate: power,
    the dependent-block condition and the constraint residual), in memory."""
    from kane.simulate.run import RunOptions, State, run

    lm = load_model(CART)
    dyn = lm.derive().compile()
    q0, u0 = lm.initial_state(dyn)
    traj = run(dyn, State(q0, u0), RunOptions(t_end=0.5, output_dt=0.05, standard_monitors=True),
               params=dict(lm.parameters), inputs=lm.input_function(dyn))
    return lm, traj


@pytest.fixture(scope="module")
def chromium():
    """One headless Debian Chromium (Playwright with ``executable_path``; never Playwright's own download) for a
    module's browser tests; a failure, never a skip, when it is not installed."""
    from playwright.sync_api import sync_playwright

    from kane.viz.screenshots import chromium_path, launch_chromium

    path = chromium_path()
    if path is None:
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium (.ci/run and `make install` "
                    "install it); the browser tests are never skipped")
    with sync_playwright() as p:
        browser = launch_chromium(p, path)
        yield browser
        browser.close()
