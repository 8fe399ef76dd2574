"""The [[switching]] tables: the rule records they describe, a dropped ball that bounces as the hand derivation
says under its parsed contact rule, and errors naming the file, table, key and line for bad ones."""

import math
import re

import numpy as np
import pytest


from kane.io.model_context import ModelFileError
from kane.io.model_file import parse_model
from kane.switching.model_table import switching_rules
from kane.switching import Coulomb, Lock, UnilateralContact, simulate_switching

BALL = """
[model]
name = "ball"
gravity = [0, 0, "-g"]

[parameters]
g = 9.81
r = 0.1        # the ball's radius [m]
t1 = 3.0

[inputs]
F = 0.0

[[bodies]]
name = "slider"
mass = 1.0
com = [0, 0, 0]
inertia = [0.1, 0.1, 0.1]

[[bodies]]
name = "ball"
mass = 0.5
com = [0, 0, 0]
inertia = [0.1, 0.1, 0.1]

[[joints]]
name = "slide"
parent = "ground"
child = "slider"
type = "prismatic"
axis = "x"
coordinates = ["x"]
speed_names = ["vx"]

[[joints]]
name = "lift"
parent = "slider"
child = "ball"
type = "prismatic"
axis = "z"
coordinates = ["z"]
speed_names = ["vz"]
q0 = [0.5]

[[constraints]]
name = "floor"
type = "motion"
rows = ["vz"]
transient = true

[[constraints]]
name = "stick"
type = "motion"
rows = ["vx"]
transient = true

[[constraints]]
name = "brake"
type = "joint_lock"
joint = "slide"
transient = true

[[switching]]
type = "contact"
constraint = "floor"
gap = "z - r"
restitution = 0.5
"""

MORE = """
[[switching]]
type = "coulomb"
constraint = "stick"
normal = "floor"
mu_s = 0.6
mu_k = 0.4

[[switching]]
type = "lock"
constraint = "brake"
on = [[1, 2], ["t1", "t1 + 0.5"]]
"""


def test_the_tables_give_the_rule_records():
    lm = parse_model(BALL + MORE, "ball.toml")
    contact, friction, lock = switching_rules(lm)
    assert isinstance(contact, UnilateralContact) and contact.constraint == "floor"
    assert (contact.restitution, contact.v_min, contact.row) == (0.5, 1e-3, 0)
    # the gap z - r at x = 0.2 m, z = 0.7 m (q in the model's order x, z)
    assert contact.gap(0.0, np.array([0.2, 0.7])) == pytest.approx(0.6, abs=1e-15)
    assert friction == Coulomb("stick", "floor", 0.6, 0.4)
    assert lock == Lock("brake", [(1.0, 2.0), (3.0, 3.5)])  # the interval of expressions: t1 = 3 s
    assert switching_rules(parse_model(BALL.split("[[switching]]")[0], "plain.toml")) == ()


def test_the_parsed_contact_bounces_the_ball_at_the_hand_derived_time_and_speed():
    """Dropped from z0 = 0.5 m with radius r = 0.1 m: contact when z = r, at t* = sqrt(2 (z0 - r) / g), with the
    approach speed V = g t*; the plastic-to-elastic impulse is (1 + e) m V and the ball leaves at e V."""
    lm = parse_model(BALL, "ball.toml")
    eqs = lm.derive()
    g, z0, r, e, m = 9.81, 0.5, 0.1, 0.5, 0.5
    t_star = math.sqrt(2 * (z0 - r) / g)
    traj = simulate_switching(eqs, (0.0, t_star + 0.05), [0.0, z0], [0.0, 0.0], switching_rules(lm), output_dt=0.01)
    impact = traj.events[0]
    assert impact.kind == "impact" and impact.t == pytest.approx(t_star, abs=1e-8)
    assert impact.data["approach_speed"] == pytest.approx(-g * t_star, rel=1e-8)
    assert impact.data["impulse"][0] == pytest.approx((1 + e) * m * g * t_star, rel=1e-8)
    after = traj.t > impact.t + 1e-9
    k = np.flatnonzero(after)[0]
    assert traj.u[k, 1] == pytest.approx(e * g * t_star - g * (traj.t[k] - t_star), rel=1e-8)


@pytest.mark.parametrize("table, key, message", [
    ('type = "lock"\nconstraint = "flor"\non = [[1, 2]]', "constraint",
     "no transient constraint named 'flor'; the transient constraints: brake, floor, stick"),
    ('type = "lock"\nconstraint = "brake"\non = [1, 2]', "on", "expected a list of [t_on, t_off] intervals"),
    ('type = "lock"\nconstraint = "brake"\non = [[2, 1]]', "on", "every interval needs t_on < t_off"),
    ('type = "coulomb"\nconstraint = "stick"\nnormal = 4.9\nmu_s = 0.3\nmu_k = 0.5', "mu_k",
     "mu_k = 0.5 exceeds mu_s = 0.3"),
    ('type = "contact"\nconstraint = "brake"\ngap = "z - F"', "gap",
     "the gap may depend on t, the coordinates and the parameters only; it uses F"),
    ('type = "contact"\nconstraint = "brake"\ngap = "z - vz"', "gap", "bad expression 'z - vz'"),
    ('type = "contact"\nconstraint = "floor"\ngap = "z"', "constraint",
     "'floor' is already switched by [[switching]] #1"),
    ('type = "spring"\nconstraint = "brake"', "type", "expected one of"),
    ('type = "contact"\nconstraint = "brake"\ngap = "z"\nrow = -1', "row", "expected a row index"),
])
def test_bad_tables_are_named_with_the_key_and_line(table, key, message):
    text = BALL + "\n[[switching]]\n" + table + "\n"
    line = len((BALL + "\n[[switching]]\n").splitlines()) + 1  # the new table's first key
    with pytest.raises(ModelFileError) as info:
        switching_rules(parse_model(text, "ball.toml"))
    text = str(info.value)
    assert text.startswith("model file ball.toml: [[switching]] #2,") and f"key '{key}'" in text
    assert message in text
    assert re.search(r"line (\d+)", text) and int(re.search(r"line (\d+)", text).group(1)) >= line
