"""The joint contract: transforms, motion subspaces and kinematic maps agree with each other (by finite
differences of the transform, an independent route) for every joint kind and speed choice."""

import numpy as np
import pytest
import sympy as sp

from kane import joints as J

KINDS = [
    J.Revolute("x"), J.Revolute((0.3, -0.4, 1.2)), J.Revolute("-y"), J.Prismatic((1, 1, 0)), J.Cylindrical("z"),
    J.Universal("12"), J.Universal("31"), J.Planar(), J.Planar(J.Speeds.BODY), J.Gimbal("213"),
    J.Gimbal("313", speeds=J.Speeds.BODY), J.Gimbal("321", n_free=2), J.Spherical(), J.Free(),
    J.Revolute("z", speeds=J.SpeedMap(Y=((2.5,),))),
]


def _numeric(joint, seed):
    q = sp.symbols(f"q0:{joint.nq}")
    u = sp.symbols(f"u0:{joint.nu}")
    R, p = joint.transform(sp.Matrix(q))
    jk = joint.kinematics(sp.Matrix(q))
    fR = sp.lambdify([q], R, "numpy")
    fp = sp.lambdify([q], p, "numpy")
    fS = sp.lambdify([q], jk.S_M, "numpy")
    fW = sp.lambdify([q], jk.W, "numpy")
    rng = np.random.default_rng(seed)
    qn = rng.normal(size=joint.nq)
    if joint.kind in ("spherical", "free"):
        qn[-4:] /= np.linalg.norm(qn[-4:])
    un = rng.normal(size=joint.nu)
    return (lambda x: np.array(fR(x), float)), (lambda x: np.array(fp(x), float).ravel()), \
        np.array(fS(qn), float), np.array(fW(qn), float), qn, un


@pytest.mark.parametrize("joint", KINDS, ids=lambda j: f"{j.kind}-{getattr(j, 'speeds', '')}")
def test_motion_subspace_is_the_derivative_of_the_transform(joint):
    fR, fp, S, W, q, u = _numeric(joint, 0)
    R = fR(q)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12) and np.linalg.det(R) == pytest.approx(1.0)
    qdot = W @ u
    h = 1e-6
    Rdot = (fR(q + h * qdot) - fR(q - h * qdot)) / (2 * h)
    pdot = (fp(q + h * qdot) - fp(q - h * qdot)) / (2 * h)
    w_skew = R.T @ Rdot  # relative angular velocity in M axes
    omega = np.array([w_skew[2, 1], w_skew[0, 2], w_skew[1, 0]])
    v_M = R.T @ pdot  # velocity of M's origin in M axes
    twist = S @ u
    assert np.allclose(twist[:3], omega, atol=1e-7)
    assert np.allclose(twist[3:], v_M, atol=1e-7)


def test_gimbal_body_speeds_invert_the_rate_map():
    g = J.Gimbal("323", speeds=J.Speeds.BODY)
    q = sp.symbols("q1:4")
    W = g.kinematics(sp.Matrix(q)).W
    S_rate = g.rate_subspace(sp.Matrix(q))[:3, :]
    assert sp.simplify(S_rate * W - sp.eye(3)) == sp.zeros(3, 3)


@pytest.mark.parametrize("joint, rot, trn", [
    (J.Revolute("y"), ("constraint", "DOF", "constraint"), ("constraint",) * 3),
    (J.Prismatic("z"), ("constraint",) * 3, ("constraint", "constraint", "DOF")),
    (J.Gimbal("213"), ("DOF",) * 3, ("constraint",) * 3),
    (J.Universal("12"), ("DOF", "DOF", "constraint"), ("constraint",) * 3),
    (J.Planar(), ("constraint", "constraint", "DOF"), ("DOF", "DOF", "constraint")),
    (J.Free(), ("DOF",) * 3, ("DOF",) * 3),
    (J.Weld(), ("constraint",) * 3, ("constraint",) * 3),
])
def test_axis_partition_is_the_dof_constraint_table_of_seed_004(joint, rot, trn):
    assert joint.axis_partition() == (rot, trn)


def test_bad_joint_arguments_are_model_errors():
    import kane

    with pytest.raises(kane.ModelError, match="sequence"):
        J.Gimbal("112")
    with pytest.raises(kane.ModelError, match="axis"):
        J.Revolute("w").transform(sp.Matrix([sp.Symbol("q")]))
    with pytest.raises(kane.ModelError, match="body-fixed"):
        J.Universal("12", speeds=J.Speeds.BODY).kinematics(sp.Matrix(sp.symbols("a b")))
