"""The shopping cart of seed 000 Example 3, built in Python: the same system as ``shopping_cart.toml``.

    kane derive examples/shopping_cart.py
    kane simulate examples/shopping_cart.py -o out/cart_py.h5

The ``kane`` command runs this file and takes the System returned by ``build()``; ``simulation`` holds the run
settings of a model file's [simulation] table. Lengths [m], masses [kg], inertia [kg m^2], time [s].
"""

import kane
from kane import joints as J

simulation = {"t_end": 8.0, "method": "dopri5", "output_dt": 0.01, "dependent": ("v2", "w4")}


def build(sticking: bool = False) -> kane.System:
    """Basket B on a planar joint with body-axis speeds (u1 = v_P1 . b1, v2 = v_P1 . b2, u2 = omega_B), rear
    wheels at P1 that cannot slip along b2, a caster C swivelling about the vertical at P2 = L2 b1 whose wheel
    (a particle of mass mC at P3 = P2 - L3 c1) cannot slip along c2. A force F b1 and a couple tau b3 push.
    With ``sticking`` the caster's swivel is locked (seed 000 Eq. 64)."""
    s = kane.System("shopping_cart", gravity=(0, 0, -9.81))
    mB, IB, mC, L1, L2, L3 = (s.parameter(n, v) for n, v in (("mB", 20.0), ("IB", 2.0), ("mC", 1.0),
                                                              ("L1", 0.4), ("L2", 0.9), ("L3", 0.1)))
    F, tau = s.input("F"), s.input("tau")
    s.add_body("B", mass=mB, com=(L1, 0, 0), inertia=(IB, IB, IB))
    s.add_body("C", mass=mC, com=(-L3, 0, 0))
    s.add_joint("ground", "B", J.Planar(J.Speeds.BODY), name="floor", coordinates=["q1", "q2", "q3"],
                speeds=["u1", "v2", "u2"])
    s.add_joint("B", "C", J.Revolute("z"), name="swivel", parent_point=(L2, 0, 0), coordinates=["q4"],
                speeds=["w4"], q0=[0.3])
    s.add_force("B", (F, 0, 0), frame="B")
    s.add_torque("B", (0, 0, tau), frame="B")
    s.add_no_slip("back_wheels", "B", (0, 0, 0), (0, 1, 0))
    s.add_no_slip("caster_wheel", "C", (-L3, 0, 0), (0, 1, 0))
    if sticking:
        s.add_joint_lock("caster_stick", "swivel")
    return s


if __name__ == "__main__":
    eqs = kane.derive(build(), dependent=["v2", "w4"])
    print(eqs.to_text())
