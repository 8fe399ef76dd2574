"""Forward-mode differentiation of Programs: exact Jacobians against symbolic differentiation of the expanded
expressions (small models) and against central differences (random trees of every joint kind)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.codegen import compile_program
from kane.codegen.forward import jacobian_name, jacobian_program

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "algorithms"))
from _trees import random_state, random_tree  # noqa: E402


def _double_pendulum():
    s = kane.System("double", gravity=(0, 0, -9.81))
    m = s.parameter("m", 1.3)
    s.add_body("a", mass=m, com=(0.1, 0, -0.4), inertia=(0.03, 0.04, 0.01))
    s.add_body("b", mass=0.7, com=(0, 0.05, -0.3), inertia=(0.02, 0.02, 0.005))
    s.add_joint("ground", "a", J.Revolute("y"), coordinates=["q1"], speeds=["u1"])
    s.add_joint("a", "b", J.Revolute("x"), coordinates=["q2"], speeds=["u2"], parent_point=(0, 0, -0.8))
    return s


def _evaluate(program, names, t, q, u, p, w):
    fn = compile_program(program, names)
    return dict(zip(names, fn(t, q, u, p, w)))


def test_jacobians_equal_symbolic_derivatives_of_the_expanded_equations():
    eqs = kane.derive(_double_pendulum())
    prog = eqs.program
    jac = jacobian_program(prog, ["M", "f"], wrt=("q", "u"))
    q, u = np.array([0.3, -0.7]), np.array([1.1, -0.4])
    p, w = eqs.model.parameter_values(), eqs.model.input_values()
    names = [jacobian_name(o, g) for o in ("M", "f") for g in ("q", "u")]
    got = _evaluate(jac, names, 0.0, q, u, p, w)
    subs = dict(zip(eqs.model.q, q)) | dict(zip(eqs.model.u, u)) | dict(zip(eqs.model.parameters, p))
    for out in ("M", "f"):
        expr = sp.Matrix(prog.expression(out)).reshape(len(prog.outputs[out]), 1)
        for group, syms in (("q", eqs.model.q), ("u", eqs.model.u)):
            ref = np.array(expr.jacobian(sp.Matrix(syms)).xreplace(subs).evalf(30), dtype=float)
            np.testing.assert_allclose(got[jacobian_name(out, group)], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed, kinds", [
    (3, ["revolute", "prismatic", "cylindrical", "universal", "planar_body"]),
    (11, ["gimbal_rates", "gimbal_body", "spherical", "free", "weld"]),
])
def test_jacobians_agree_with_central_differences_on_random_trees(seed, kinds):
    """Every joint kind across the two trees; loads include a spring, joint springs, a time-dependent force."""
    s = random_tree(seed, kinds=kinds, extra_revolute=0)
    eqs = kane.derive(s)
    model, prog = eqs.model, eqs.program
    rng = np.random.default_rng(seed)
    q, u = random_state(model, rng)
    p, w = model.parameter_values(), model.input_values()
    jac = jacobian_program(prog, ["f", "qdot"], wrt=("q", "u"))
    names = [jacobian_name(o, g) for o in ("f", "qdot") for g in ("q", "u")]
    got = _evaluate(jac, names, 0.4, q, u, p, w)
    base = compile_program(prog, ["f", "qdot"])
    for group, x in (("q", q), ("u", u)):
        for k in range(len(x)):
            h = 1e-6 * max(1.0, abs(x[k]))
            xp, xm = x.copy(), x.copy()
            xp[k] += h
            xm[k] -= h
            args_p = (0.4, xp, u, p, w) if group == "q" else (0.4, q, xp, p, w)
            args_m = (0.4, xm, u, p, w) if group == "q" else (0.4, q, xm, p, w)
            for out, vp, vm in zip(("f", "qdot"), base(*args_p), base(*args_m)):
                fd = (vp - vm) / (2 * h)
                col = got[jacobian_name(out, group)][:, k]
                np.testing.assert_allclose(col, fd, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(fd).max()),
                                           err_msg=f"d{out}/d{group}[{k}]")


def test_structural_zeros_stay_zero_and_unknown_groups_are_named():
    eqs = kane.derive(_double_pendulum())
    jac = jacobian_program(eqs.program, ["M"], wrt=("u",))
    assert all(e == 0 for e in jac.outputs["dM_du"])  # the mass matrix does not depend on the speeds
    with pytest.raises(KeyError, match="no input group 'x'.*q"):
        jacobian_program(eqs.program, ["M"], wrt=("x",))


def _constrained(name):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from _analysis_models import four_bar, rolling_disk

    if name == "cart":
        from kane.io import load_model

        return load_model(Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml").derive()
    return kane.derive(rolling_disk(), dependent=["vx", "vy", "vz"]) if name == "disk" else kane.derive(four_bar())


@pytest.mark.parametrize("case", ["tree", "disk", "cart", "four_bar"])
def test_jacobians_equal_the_complex_step_of_the_numpy_backend(case):
    """d f/d x = Im f(x + i h) / h (h = 1e-30, no cancellation): the numpy backend evaluates the program in
    complex arithmetic for complex arguments, one state and a batch alike; Jacobians agree to 1e-12."""
    eqs = kane.derive(random_tree(11, kinds=["gimbal_body", "spherical"], extra_revolute=0)) \
        if case == "tree" else _constrained(case)
    model, prog = eqs.model, eqs.program
    rng = np.random.default_rng(5)
    q, u = random_state(model, rng) if case == "tree" else (np.array(model.q0, dtype=float) + 0.1,
                                                           rng.normal(0, 1, len(eqs.u_independent)))
    p, w = model.parameter_values(), model.input_values()
    outs = ["M", "f", "qdot"]
    jac = jacobian_program(prog, outs, wrt=("q", "u"))
    got = _evaluate(jac, [jacobian_name(o, g) for o in outs for g in ("q", "u")], 0.2, q, u, p, w)
    one, batch = compile_program(prog, outs), compile_program(prog, outs, batch=True)
    h = 1e-30
    for group, x in (("q", q), ("u", u)):
        for k in range(len(x)):
            xc = x.astype(complex)
            xc[k] += 1j * h
            args = (0.2, xc, u, p, w) if group == "q" else (0.2, q, xc, p, w)
            values = one(*args)
            rows = batch(0.2, *(np.stack([a, a]) for a in args[1:3]), p, w)
            for out, v, vb in zip(outs, values, rows):
                ref = got[jacobian_name(out, group)][:, k]
                for step in (v, vb[1]):
                    assert np.iscomplexobj(step)
                    np.testing.assert_allclose(np.ravel(step.imag) / h, ref, rtol=1e-12,
                                               atol=1e-12 * max(1, abs(ref).max()), err_msg=f"{case}: d{out}/d{group}")
