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
        kane.simulate(dyn, (0.0, t_end), q0, u0, params=dict(lm.parameters), inputs=lm.input_function(dyn),
                      output_dt=output_dt, path=run, description=f"{lm.name} ({CART})")
        return run

    return make
