"""The mechanical form M q'' + C q' + K q of the nonholonomic Whipple bicycle in its reduced coordinates (roll,
steer) against Meijaard et al. (2007), Table 2 (M, C1, K0, K2 to 14 digits), with and without a constraint row
dropped as redundant; reduced() keeps the roll angle at g = 0 (it is decided from the equations' structure) and
says what it dropped; models without a second-order form are refused by name."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kane
from kane.analysis import linearize, linearizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import BICYCLE_DEPENDENT, rolling_disk, whipple_bicycle  # noqa: E402

# Meijaard, Papadopoulos, Ruina & Schwab (2007), Proc. R. Soc. A 463, Table 2 (the benchmark's printed digits)
M_REF = np.array([[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]])
C1_REF = np.array([[0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]])
K0_REF = np.array([[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]])
K2_REF = np.array([[0, 76.59734589573222], [0, 2.65431523794604]])
T = np.diag([1.0, -1.0])  # kane's steer axis points up the head tube, Meijaard's down: the steer angle's sign flips
RR, V = 0.3, 5.0  # rear wheel radius [m], forward speed [m/s]


def _bicycle(redundant):
    s = whipple_bicycle()
    if not redundant:
        return kane.derive(s, dependent=BICYCLE_DEPENDENT)
    s.add_rolling_disk("rear_again", "rear_wheel", RR, axis=(0, 1, 0), plane_normal=(0, 0, 1))  # 3 redundant rows
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'rear_again' row"):
        return kane.derive(s, dependent=BICYCLE_DEPENDENT, redundant="drop")


def _rel(actual, expected):
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


@pytest.mark.parametrize("redundant", [False, True], ids=["plain", "dropped_rows"])
def test_bicycle_mechanical_form_is_meijaards(redundant):
    eqs = _bicycle(redundant)
    if redundant:  # the dropped rows are gone from the linearizer too (it refused "dC/dq loses rank" before)
        assert linearizer(eqs).dropped_rows == ("'rear_again' configuration row 0",)
    at_rest = linearize(eqs, {"z": RR}, [0, 0, 0]).mechanical()  # K = g K0
    no_gravity = linearize(eqs, {"z": RR}, [0, V / RR, 0], params={"g": 0.0}).mechanical()  # K = v^2 K2
    rolling = linearize(eqs, {"z": RR}, [0, V / RR, 0]).mechanical()  # C = v C1, K = g K0 + v^2 K2
    assert rolling.coordinate_names == ("roll", "steer") and rolling.speed_names == ("w_roll", "w_steer")
    assert set(rolling.dropped) == {"x", "y", "yaw", "rear", "front", "w_rear"}
    assert _rel(T @ rolling.M @ T, M_REF) < 1e-12
    assert _rel(T @ rolling.C @ T / V, C1_REF) < 1e-12
    assert _rel(T @ at_rest.K @ T / 9.81, K0_REF) < 1e-12
    assert _rel(T @ no_gravity.K @ T / V ** 2, K2_REF) < 1e-12
    assert _rel(T @ rolling.K @ T, 9.81 * K0_REF + V ** 2 * K2_REF) < 1e-12
    assert np.max(np.abs(no_gravity.C - rolling.C)) < 1e-12  # C does not depend on g


def test_reduced_decides_from_the_structure_not_from_one_parameter_set():
    eqs = _bicycle(False)
    for g in (9.81, 0.0):  # at g = 0 the roll angle enters no rate at the point, but it does at other g
        lin = linearize(eqs, {"z": RR}, [0, V / RR, 0], params={"g": g})
        assert lin.steady and set(lin.cyclic) == {"x", "y", "yaw", "rear", "front"}
        assert lin.reduced().state_names == ("roll", "steer", "w_roll", "w_rear", "w_steer")
        assert "ignorable (left out of the eigenvalues): x, y, yaw, rear, front" in str(lin)


def test_no_second_order_form_is_named():
    disk = kane.derive(rolling_disk(), dependent=["vx", "vy", "vz"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = linearize(disk, {"z": 0.4}, [0, 0, 4])  # spinning upright: the spin couples into the lean rate
    with pytest.raises(kane.KaneError, match=r"the speed w_heading .*enters the rate of w_lean.*no second-order form "
                                             r"in the coordinates \(lean\)"):
        lin.mechanical()
