"""``kane export-c`` (issue 12, item 5): the exported C compiles with gcc -std=c99 -Wall -Wextra -Werror, runs
without Python and reproduces u', M, f, the energy and the constraint residuals of the numpy backend, and kane's
own RK4, to 1e-12."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.cli import load_model_or_script, main
from kane.codegen.c_export import CExportOptions, export_c
from kane.errors import KaneError
from kane.simulate.fixed_step import RK4
from kane.simulate.stepping import Rhs

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "algorithms"))
sys.path.insert(0, str(ROOT / "bench"))
from _trees import assert_close, random_state  # noqa: E402
from models import pendulum_chain_kane  # noqa: E402

CC = shutil.which("gcc") or shutil.which("cc")
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine: CI installs gcc")


@pytest.fixture(scope="module")
def chain():
    return kane.derive(pendulum_chain_kane(7))


@pytest.fixture(scope="module")
def rolling():
    return load_model_or_script(ROOT / "examples" / "rolling_disk.toml").derive()


def _run(cmd, cwd=None):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{res.stderr[-4000:]}"
    return res.stdout


def _numbers(text):
    """{label: array} of the driver's lines 'label v v v ...'."""
    out = {}
    for line in text.splitlines():
        label, *vals = line.split()
        out[label] = np.array([float(v) for v in vals])
    return out


def _c_array(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def _driver(res, states, params) -> str:
    """A C program that calls every exported function at the given states with the parameters ``params`` (model
    order, through the struct's initializer) and prints the results, %.17g."""
    n_q, n_u, n_con, n_hol = (res.sizes[k] for k in ("n_q", "n_u", "n_constraint", "n_configuration"))
    lines = ["#include <stdio.h>", '#include "model.h"',
             "static void put(const char *label, int k, const double *x, int n) {",
             "    int i;", '    printf("%s%d", label, k);', '    for (i = 0; i < n; ++i) printf(" %.17g", x[i]);',
             '    printf("\\n");', "}", "int main(void) {",
             f"    const model_params p = {_c_array(params)};",
             f"    double qd[{n_q}], ud[{n_u}], M[{n_u * n_u}], f[{n_u}], e[3];", "    model_t m;",
             "    model_init(&m, &p);"]
    lines += [f"    double r[{n_con}];"] * bool(n_con) + [f"    double C[{n_hol}];"] * bool(n_hol)
    for k, (t, q, u) in enumerate(states):
        lines += ["    {", f"    const double q[] = {_c_array(q)}, u[] = {_c_array(u)};",
                  f"    model_rhs(&m, {t!r}, q, u, model_default_inputs, qd, ud);",
                  f'    put("qdot", {k}, qd, {n_q}); put("udot", {k}, ud, {n_u});',
                  f'    model_mass_matrix(&m, {t!r}, q, M); put("M", {k}, M, {n_u * n_u});',
                  f'    model_forcing(&m, {t!r}, q, u, model_default_inputs, f); put("f", {k}, f, {n_u});',
                  f"    e[0] = model_kinetic_energy(&m, {t!r}, q, u); e[1] = model_potential_energy(&m, {t!r}, q);",
                  f'    e[2] = model_energy(&m, {t!r}, q, u); put("energy", {k}, e, 3);']
        if n_con:
            lines.append(f'    model_constraint_residual(&m, {t!r}, q, u, r); put("res", {k}, r, {n_con});')
        if n_hol:
            lines.append(f'    model_configuration_residual(&m, {t!r}, q, C); put("C", {k}, C, {n_hol});')
        lines.append("    }")
    return "\n".join(lines + ["    return 0;", "}", ""])


@needs_cc
@pytest.mark.parametrize("which", ["chain", "rolling"])
def test_exported_functions_agree_with_numpy(which, request, tmp_path):
    eqs = request.getfixturevalue(which)
    model = eqs.model
    res = export_c(eqs, tmp_path / "out")
    includes = re.findall(r"#include\s*(\S+)", res.model_c.read_text())
    assert includes == ["<math.h>", '"model.h"'], includes  # what a microcontroller build needs, nothing more
    assert "malloc" not in res.model_c.read_text()
    rng = np.random.default_rng(5)
    params = model.parameter_values() * rng.uniform(0.8, 1.25, len(model.parameters))  # not the defaults
    dyn = eqs.compile(backend="numpy")
    n_u = dyn.n_u
    states = []
    for k in range(3):
        q, u = random_state(model, rng, 0.5, 1.0)
        states.append((0.1 * k, q, u[:n_u]))
    (res.directory / "driver.c").write_text(_driver(res, states, params))
    exe = tmp_path / "driver"
    _run([CC, *STRICT, "-o", str(exe), "driver.c", "model.c", "-lm"], cwd=res.directory)
    out = _numbers(_run([str(exe)]))
    for k, (t, q, u) in enumerate(states):
        qd, ud = dyn.rhs(t, q, u, params=params)
        assert_close(out[f"udot{k}"], ud, 1e-12, f"{which} u' {k}")
        assert_close(out[f"qdot{k}"], qd, 1e-12, f"{which} q' {k}")
        assert_close(out[f"M{k}"].reshape(n_u, n_u), dyn.mass_matrix(t, q, params=params), 1e-12, f"{which} M")
        assert_close(out[f"f{k}"], dyn.forcing(t, q, u, params=params), 1e-12, f"{which} f {k}")
        ke, pe = dyn.kinetic_energy(t, q, u, params=params), dyn.potential_energy(t, q, params=params)
        assert_close(out[f"energy{k}"], [ke, pe, ke + pe], 1e-12, f"{which} energy {k}")
        assert ke > 0
        if res.sizes["n_constraint"]:
            assert_close(out[f"res{k}"], dyn.constraint_residual(t, q, u, params=params), 1e-12, f"{which} A u + b")
        if res.sizes["n_configuration"]:
            c = dyn.configuration_residual(t, q, params=params)
            assert_close(out[f"C{k}"], c, 1e-12, f"{which} C(q)")
            assert np.max(np.abs(c)) > 1e-3  # random states are off the contact: the residual is exercised


@needs_cc
@pytest.mark.parametrize("which", ["chain", "rolling"])
def test_main_runs_kane_rk4_steps(which, request, tmp_path):
    """main.c, built by the exported Makefile (-Werror added), against kane's RK4 integrator in Python."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    eqs = request.getfixturevalue(which)
    model, dyn = eqs.model, eqs.compile(backend="numpy")
    q0, u0 = random_state(model, np.random.default_rng(2), 0.5, 1.0) if which == "chain" else (None, None)
    u0 = None if u0 is None else u0[:dyn.n_u]
    opts = CExportOptions(prefix="m7" if which == "chain" else "model", dt=0.01, steps=25, t0=0.5)
    res = export_c(eqs, tmp_path, q0=q0, u0=u0, options=opts)
    _run(["make", "-s", "-C", str(tmp_path), f"CC={CC}", "CFLAGS=" + " ".join(STRICT)])
    header, *lines = _run([str(tmp_path / f"{opts.prefix}_demo")]).splitlines()
    assert header.split() == ["#", "t", "[s]", *(f"q[{i}]" for i in range(model.n_q)),
                              *(f"u[{i}]" for i in range(dyn.n_u))]  # columns named (no user text in the C)
    rows = np.array([[float(v) for v in line.split()] for line in lines])
    assert rows.shape == (opts.steps + 1, 1 + model.n_q + dyn.n_u)
    if q0 is None:
        full = dict(zip(model.u, model.u0))
        q0, u0 = np.array(model.q0), np.array([full[s] for s in eqs.u_independent])
    rk4 = RK4(Rhs(dyn), opts.t0, np.concatenate([q0, u0]), opts.dt)
    ref = [np.concatenate([[rk4.t], rk4.x])]
    for _ in range(opts.steps):
        rk4.step()
        ref.append(np.concatenate([[rk4.t], rk4.x]))
    ref = np.array(ref)
    assert np.max(np.abs(ref[-1, 1:] - ref[0, 1:])) > 1e-2  # the state moves
    assert_close(rows, ref, 1e-12, f"{which} main.c against kane's RK4")
    assert res.functions[-1] == f"{opts.prefix}_rk4"


@needs_cc
def test_cli_export_of_a_model_file(tmp_path):
    """The disk on a ramp (seed 000 Example 1): u1' = -m g sin(theta) / (m + J/r^2) is constant, so RK4 is exact:
    u1 = a t, q1 = 1 + a t^2 / 2."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    out = tmp_path / "disk"
    result = CliRunner().invoke(main, ["export-c", str(ROOT / "examples" / "disk_on_ramp.toml"), "-o", str(out),
                                       "--dt", "0.05", "--steps", "8"])
    assert result.exit_code == 0, result.output
    assert "model.c" in result.output and f"make -C {out}" in result.output
    header = (out / "model.h").read_text()
    for row in ("q[0]  q1  [m]  q0 = 1.0", "u[0]  u1  [m/s]", "w[0]  Ff", "p4 (theta)  default 0.3"):
        assert row in header
    _run(["make", "-s", "-C", str(out), f"CC={CC}", "CFLAGS=" + " ".join(STRICT)])
    rows = np.loadtxt(_run([str(out / "model_demo")]).splitlines(), ndmin=2)  # the "#" header line skipped
    m, J, r, g, theta = 2.0, 0.25, 0.5, 9.81, 0.3
    a = -m * g * np.sin(theta) / (m + J / r**2)
    t = 0.05 * np.arange(9)
    assert_close(rows[:, 0], t, 1e-15, "t")
    assert_close(rows[:, 3], a * t, 1e-12, "u1")
    assert_close(rows[:, 1], 1.0 + 0.5 * a * t**2, 1e-12, "q1")
    assert_close(rows[:, 2], -(rows[:, 1] - 1.0) / r, 1e-12, "q2: rolling, r q2' = -q1'")


def test_output_directory_that_is_a_file(rolling, tmp_path):
    target = tmp_path / "taken"
    target.write_text("x")
    with pytest.raises(KaneError, match=f"output directory {re.escape(str(target))} is a file"):
        export_c(rolling, target)
    result = CliRunner().invoke(main, ["export-c", str(ROOT / "examples" / "disk_on_ramp.toml"), "-o", str(target)])
    assert result.exit_code == 2
    assert "is a file" in result.output and str(target) in result.output


def test_output_directory_not_writable(rolling, tmp_path):
    if os.geteuid() == 0:  # root writes anywhere a permission bit forbids; sysfs refuses new entries even to root
        target = pathlib.Path("/sys/kane_export_test")
        if not pathlib.Path("/sys").is_dir():
            pytest.skip("running as root without /sys: no directory that refuses writes")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = locked / "out"
    with pytest.raises(KaneError, match=f"cannot write into the output directory {re.escape(str(target))}"):
        export_c(rolling, target)


def test_model_file_error_gets_the_cli_message(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nname = 1\n')
    result = CliRunner().invoke(main, ["export-c", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and str(bad) in result.output and "name" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
