"""kane.model.contact: the contact material's checks and the tangent basis of a contact point."""

import numpy as np
import pytest

from kane.errors import ModelError
from kane.model.contact import ContactMaterial, ContactPoint


def test_material_defaults_kinetic_to_static_and_refuses_bad_values_by_key():
    assert ContactMaterial(mu_static=0.7).mu_kinetic == 0.7
    for kwargs, key in [({"mu_static": -0.1}, "mu_static"), ({"mu_static": 0.3, "mu_kinetic": 0.5}, "mu_kinetic"),
                        ({"restitution": 1.5}, "restitution"), ({"restitution": -0.1}, "restitution"),
                        ({"rolling": -1e-3}, "rolling"), ({"mu_static": float("nan")}, "mu_static")]:
        with pytest.raises(ModelError, match=f"collision 'box' of body 'b1': key '{key}'"):
            ContactMaterial(**kwargs, where="collision 'box' of body 'b1'")


@pytest.mark.parametrize("seed", range(5))
def test_tangents_form_a_right_handed_orthonormal_frame_with_the_normal(seed):
    n = np.random.default_rng(seed).normal(size=3)
    n /= np.linalg.norm(n)
    c = ContactPoint("ground", "b", "floor", "ball", np.zeros(3), np.zeros(3), n, 0.0, ContactMaterial())
    t1, t2 = c.tangents_world()
    R = np.column_stack([t1, t2, n])
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)
    assert c.name == "floor|ball"
