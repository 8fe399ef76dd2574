"""The C backend (issue 12): agreement with the numpy backend, the on-disk cache, fallbacks and compiler errors."""

from __future__ import annotations

import os
import re
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.algorithms import KaneMatrixDynamics, NOCDynamics, RecursiveDynamics
from kane.codegen import ProgramBuilder, compile_program
from kane.codegen import c_backend
from kane.codegen.c_backend import BackendNotice, CCompileError, CFunction
from kane.io.model_file import load_model

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "algorithms"))
from _trees import JOINT_KINDS, assert_close, random_state, random_tree  # noqa: E402

pytestmark = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    """A private cache directory, and nothing loaded in this process counted as cached."""
    monkeypatch.setenv("KANE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(c_backend, "_libs", {})
    return tmp_path / "c"


def _compare(ref, fast, model, n_states, seed, what):
    """Every method of the Dynamics interface, one state and a batch, to 1e-12 relative."""
    rng = np.random.default_rng(seed)
    Q, U = zip(*(random_state(model, rng, 0.4, 1.0) for _ in range(n_states)))
    Q, U = np.array(Q), np.array(U)[:, :ref.n_u]
    for name, args in (("udot", (0.3, Q[0], U[0])), ("mass_matrix", (0.3, Q[0])), ("udot", (0.3, Q, U)),
                       ("mass_matrix", (0.3, Q))):
        assert_close(getattr(fast, name)(*args), getattr(ref, name)(*args), 1e-12, f"{what} {name}")
    for a, b in zip(fast.rhs(0.1, Q, U), ref.rhs(0.1, Q, U)):  # q' and u'
        assert_close(a, b, 1e-12, f"{what} rhs")
    for a, b in zip(fast.rhs(0.1, Q[1], U[1]), ref.rhs(0.1, Q[1], U[1])):
        assert_close(a, b, 1e-12, f"{what} rhs")


@pytest.mark.parametrize("seed", [3, 11])
def test_kane_equations_of_random_trees_agree_with_numpy(seed):
    kinds = list(JOINT_KINDS)[seed % 4::4]  # a fourth of the joint kinds per seed: small enough to compile fast
    eqs = kane.derive(random_tree(seed, kinds=kinds, extra_revolute=0))
    ref, fast = eqs.compile(backend="numpy"), eqs.compile(backend="c")
    assert fast.backend == "c"
    _compare(ref, fast, eqs.model, 5, seed, f"tree {seed}")


def test_a_long_kernel_printed_in_parts_agrees_with_numpy(monkeypatch):
    """Kernels longer than SPLIT_ABOVE assignments are printed as several functions sharing an array of z's."""
    from kane.codegen import c_print

    monkeypatch.setattr(c_print, "SPLIT_ABOVE", 5)
    monkeypatch.setattr(c_print, "SPLIT_PART", 3)
    eqs = four_bar()
    fast = eqs.compile(backend="c")
    assert "kane_part2(" in fast._fn("M", ["M"], False).source
    _compare(eqs.compile(backend="numpy"), fast, eqs.model, 3, 3, "in parts")


def four_bar():
    s = kane.System("four_bar", gravity=(0, -9.81, 0))
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate((1.0, 2.0, 1.5)):
        m = 1.0 + i
        s.add_body(f"l{i}", mass=m, com=(L / 2, 0, 0), inertia=(1e-3, m * L**2 / 12, m * L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return kane.derive(s, dependent=["u2", "u3"])


@pytest.mark.parametrize("name", ["disk_on_ramp", "shopping_cart", "rolling_disk", "four_bar"])
def test_constrained_seed_models_agree_with_numpy(name):
    eqs = four_bar() if name == "four_bar" else kane.derive(load_model(ROOT / "examples" / f"{name}.toml").system)
    ref, fast = eqs.compile(backend="numpy"), eqs.compile(backend="c")
    _compare(ref, fast, eqs.model, 3, 5, name)
    q, u = random_state(eqs.model, np.random.default_rng(2))
    u = u[:ref.n_u]
    assert_close(fast.full_speeds(0.2, q, u), ref.full_speeds(0.2, q, u), 1e-12, "dependent speeds")
    assert_close(fast.constraint_residual(0.2, q, u), ref.constraint_residual(0.2, q, u), 1e-12, "residual")
    for a, b in zip(fast.constraints(0.2, q), ref.constraints(0.2, q)):
        assert_close(a, b, 1e-12, "constraint rows")
    if ref.parameter_names:  # other parameters: the C prelude recomputes its constants
        p = dict(zip(ref.parameter_names, np.array(eqs.model.parameter_defaults) * 1.3 + 0.1))
        assert_close(fast.udot(0.0, q, u, params=p), ref.udot(0.0, q, u, params=p), 1e-12, "changed parameters")
        assert not np.allclose(fast.udot(0.0, q, u, params=p), fast.udot(0.0, q, u))


@pytest.mark.skipif(not c_backend._numba_available(), reason="numba is not installed")
def test_numba_backend_agrees_with_numpy_on_a_constrained_seed_model():
    """The third backend on the same checks (one small model: numba compiles each function for seconds)."""
    eqs = kane.derive(load_model(ROOT / "examples" / "disk_on_ramp.toml").system)
    ref, fast = eqs.compile(backend="numpy"), eqs.compile(backend="numba")
    assert fast.backend == "numba"
    _compare(ref, fast, eqs.model, 3, 7, "numba disk_on_ramp")


def test_recursive_formulations_agree_with_numpy():
    model = random_tree(4, kinds=["spherical", "prismatic"], extra_revolute=1).compile()
    rng = np.random.default_rng(0)
    Q, U = map(np.array, zip(*(random_state(model, rng) for _ in range(4))))
    ud = rng.normal(size=model.n_u)
    names = ("udot_aba", "udot_crba", "M", "f", "tau", "joint_forces")  # ABA, CRBA, RNEA: one library
    ref, fast = RecursiveDynamics(model, backend="numpy"), RecursiveDynamics(model, backend="c")
    for q, u in ((Q[0], U[0]), (Q, U)):
        a, b = fast.evaluate(names, 0.1, q, u, udot=ud), ref.evaluate(names, 0.1, q, u, udot=ud)
        for name in names:
            assert_close(a[name], b[name], 1e-12, f"recursive {name} {q.shape}")
    for cls in (NOCDynamics, KaneMatrixDynamics):
        assert_close(cls(model, backend="c").udot(0.1, Q, U), cls(model).udot(0.1, Q, U), 1e-12, cls.__name__)


def _small_program(names=("q", "u", "k")):
    """A program whose symbols carry names that are C keywords or generated names (never printed into C)."""
    q1, u1, k, t = sp.symbols(f"{names[0]} {names[1]} {names[2]} t")
    b = ProgramBuilder({"t": (t,), "q": (q1,), "u": (u1,), "params": (k,), "inputs": ()})
    z = b.assign(sp.sin(q1) * k**2 + u1**3 / k)
    y = b.assign(sp.sqrt(1 + z**2) + sp.atan2(q1, u1) + sp.Abs(q1) * sp.sign(u1) - sp.Rational(1, 3) * t)
    return b.build({"y": [y, z, sp.Max(q1, u1, 0.5) + sp.exp(sp.pi * q1) / 7]})


def test_user_names_never_reach_c_and_math_agrees():
    prog = _small_program(("int", "z_0", "out"))
    fast, ref = CFunction(prog, ["y"]), compile_program(prog, ["y"])
    body = fast.source.split("static void kane_kernel(")[1].split("void kane_f(")[0].split("{", 1)[1]
    assert not re.search(r"\bint\b", body)  # the user's "int" is printed as q[0]; "z_0" may be its own z_0
    assert set(re.findall(r"\b(q|u|p|w|c)\[", body)) <= {"q", "u", "p", "c"}
    for q in (-0.7, 0.4):
        args = (0.25, np.array([q]), np.array([-1.3]), np.array([2.0]), np.zeros(0))
        assert_close(fast(*args)[0], ref(*args)[0], 1e-12, "functions")


def test_unknown_function_is_a_kane_error():
    q, t = sp.symbols("q t")
    b = ProgramBuilder({"t": (t,), "q": (q,), "u": (), "params": (), "inputs": ()})
    prog = b.build({"y": [sp.Function("mystery")(q)]})
    with pytest.raises(kane.KaneError, match="mystery"):
        CFunction(prog, ["y"])


def test_cache_serves_a_second_load_and_rebuilds_a_corrupted_entry(cache):
    prog = _small_program()
    args = (0.0, np.array([0.3]), np.array([0.2]), np.array([1.5]), np.zeros(0))
    first = CFunction(prog, ["y"])
    assert first.built and len(list(cache.glob("*.so"))) == 1 and "kane_kernel" in first.source
    c_backend._libs.clear()  # as if another process
    again = CFunction(prog, ["y"])
    assert not again.built
    lib = next(cache.glob("*.so"))
    data = lib.read_bytes()
    for bad in (data[: len(data) // 2], data[:1000] + bytes(len(data) - 1000)):  # truncated, zeroed
        tmp = lib.with_suffix(".bad")
        tmp.write_bytes(bad)
        os.replace(tmp, lib)  # a new file: the library loaded above stays mapped intact
        c_backend._libs.clear()
        fixed = CFunction(prog, ["y"])
        assert fixed.built, "a corrupted library must be rebuilt"
        assert lib.read_bytes() == data
        np.testing.assert_array_equal(fixed(*args)[0], first(*args)[0])


def test_two_processes_compiling_at_once_leave_one_valid_entry(cache):
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(HERE)!r})
        import numpy as np
        from test_c_backend import _small_program
        from kane.codegen.c_backend import CFunction
        f = CFunction(_small_program(), ["y"])
        print(repr(float(f(0.0, np.array([0.3]), np.array([0.2]), np.array([1.5]), np.zeros(0))[0][0])))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src")] + sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    assert outs[0][0] == outs[1][0]
    entries = sorted(p.name.split(".", 1)[1] for p in cache.iterdir() if p.name.startswith("kane"))
    assert entries == ["mac", "so"]  # one entry, and no temporary left
    assert not [p for p in cache.iterdir() if "tmp" in p.name]
    assert not CFunction(_small_program(), ["y"]).built  # and it is valid


def test_no_compiler_falls_back_with_one_notice(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/kane-cc")
    eqs = four_bar()
    with pytest.warns(BackendNotice) as record:
        dyn = eqs.compile()
    assert len(record) == 1 and "/nonexistent/kane-cc" in str(record[0].message)
    assert dyn.backend in ("numba", "numpy") and dyn.backend in str(record[0].message)
    q = np.array([0.7, -0.3, 2.0])
    assert_close(dyn.mass_matrix(0.0, q), eqs.compile(backend="numpy").mass_matrix(0.0, q), 1e-12, "fallback")
    with pytest.raises(CCompileError, match="kane-cc"):
        CFunction(_small_program(), ["y"])


def test_compiler_failure_names_the_first_message_and_the_fallback(monkeypatch, tmp_path):
    cc = tmp_path / "badcc"
    cc.write_text("#!/bin/sh\necho 'kane.c:1:1: error: something went wrong' >&2\necho 'second message' >&2\nexit 1\n")
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    with pytest.raises(CCompileError, match="error: something went wrong") as info:
        CFunction(_small_program(), ["y"])
    assert "second message" not in str(info.value)
    assert isinstance(info.value, kane.KaneError)
    eqs = four_bar()
    dyn = eqs.compile()
    with pytest.warns(BackendNotice, match="something went wrong") as record:
        M = dyn.mass_matrix(0.0, np.array([0.7, -0.3, 2.0]))
    assert len(record) == 1 and dyn.backend in str(record[0].message) and dyn.backend != "c"
    assert M.shape == (1, 1)
    with pytest.raises(CCompileError, match="something went wrong"):
        eqs.compile(backend="c").udot(0.0, np.array([0.7, -0.3, 2.0]), np.array([0.1]))


def test_rk4_step_in_c_matches_rk4_in_python():
    eqs = four_bar()
    ref, fast = eqs.compile(backend="numpy"), eqs.compile(backend="c")
    q, u, dt = np.array([0.7, -0.3, 2.0]), np.array([0.4]), 1e-3
    stepper = fast.stepper(0.0, q, u)
    t_end = stepper.step(50, dt)
    t = 0.0
    for _ in range(50):  # classical RK4 with the numpy backend
        def f(t, q, u):
            return ref.rhs(t, q, u)
        k1 = f(t, q, u)
        k2 = f(t + dt / 2, q + dt / 2 * k1[0], u + dt / 2 * k1[1])
        k3 = f(t + dt / 2, q + dt / 2 * k2[0], u + dt / 2 * k2[1])
        k4 = f(t + dt, q + dt * k3[0], u + dt * k3[1])
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        u = u + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        t += dt
    assert t_end == pytest.approx(t, rel=1e-14)
    assert_close(stepper.q, q, 1e-12, "RK4 q")
    assert_close(stepper.u, u, 1e-12, "RK4 u")
    stepper.u[:] = np.inf
    last_q = stepper.q.copy()
    with pytest.raises(kane.KaneError, match="not finite"):
        stepper.step(3, dt)
    np.testing.assert_array_equal(stepper.q, last_q)


def test_large_batch_is_split_over_threads_and_agrees(monkeypatch):
    prog = _small_program()
    fast, one = CFunction(prog, ["y"], threads=3), compile_program(prog, ["y"])
    rng = np.random.default_rng(0)
    Q, U, T = rng.normal(size=(7000, 1)), rng.normal(size=(7000, 1)), rng.normal(size=7000)
    P = rng.uniform(1, 2, size=(7000, 1))
    w = np.zeros(0)
    ref = np.array([one(T[k], Q[k], U[k], np.array([1.5]), w)[0] for k in range(7000)])
    assert_close(fast(T, Q, U, np.array([1.5]), w)[0], ref, 1e-12, "batch")
    ref = np.array([one(0.5, Q[k], U[k], P[k], w)[0] for k in range(7000)])
    assert_close(fast(0.5, Q, U, P, w)[0], ref, 1e-12, "batch of parameters")
    with pytest.raises(kane.KaneError, match="entries"):
        fast(0.0, np.zeros(2), np.zeros(1), np.array([1.5]), np.zeros(0))


def test_energy_rows_on_strided_views_agree_with_numpy_state_by_state():
    eqs = kane.derive(random_tree(5, kinds=list(JOINT_KINDS)[1::4], extra_revolute=0))
    assert eqs.has_potential
    ref, fast = eqs.compile(backend="numpy"), eqs.compile(backend="c")
    rng = np.random.default_rng(5)
    Q, U = zip(*(random_state(eqs.model, rng, 0.4, 1.0) for _ in range(150)))
    Q, U = np.array(Q), np.array(U)[:, :ref.n_u]
    wide = np.hstack([rng.normal(size=(150, 1)), Q, U, rng.normal(size=(150, 2))])  # a log's rows: t, q, u, more
    t, q, u = wide[:, 0], wide[:, 1:1 + ref.n_q], wide[:, 1 + ref.n_q:1 + ref.n_q + ref.n_u]
    expected = np.array([ref.kinetic_energy(t[k], Q[k], U[k]) + ref.potential_energy(t[k], Q[k])
                         for k in range(150)])
    rows = fast.energy_rows()
    assert_close(rows(t[:10], q[:10], u[:10]), expected[:10], 1e-12, "10 rows")
    assert_close(rows(t, q, u), expected, 1e-12, "150 rows (the buffers grown)")
    fn = fast._fn("energy", ["kinetic", "potential"], True)
    with pytest.raises(kane.KaneError, match="parameters"):
        fn.rows(np.zeros(fn.sizes["np"] + 1), np.zeros(fn.sizes["nw"]))
