"""Generated code carries no user text (issue 27, item 1): hostile names in a model reach the exported C, the C
backend and the numba/numpy printers only as escaped comments; ``make`` builds, runs nothing planted, and the
program's numbers equal kane's."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane import joints as J
from kane.cli import main
from kane.codegen import c_backend
from kane.codegen.c_export import export_c
from kane.codegen.c_export_text import MAKEFILE
from kane.codegen.numpy_backend import compile_program

CC = shutil.which("cc") or shutil.which("gcc")
needs_make = pytest.mark.skipif(CC is None or shutil.which("make") is None, reason="no cc or make on this machine")
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-trigraphs"]


def _hostile(marker: pathlib.Path) -> list[str]:
    """Names that break out of a C comment or a Makefile line to run ``touch marker``, trigraphs, a line splice,
    non-ASCII."""
    return [f'*/ system("touch {marker}"); /*', f"\n\tall:\n\ttouch {marker}\n", f"x ??= ??/\n??' \\",
            f"\u00e9t\u00e9 \u2028 \u202e */ int {marker.name}; /*", "trailing backslash \\",
            f"\nmodel_demo: pwn\npwn:\n\ttouch {marker}\n#"]


def _system(marker: pathlib.Path) -> kane.System:
    """A double pendulum and a slider whose model, body and joint names are hostile and whose coordinates, speeds,
    parameters and inputs are C macros and keywords' neighbours (EOF, NULL, stdin, main, INFINITY, ...)."""
    bad = _hostile(marker)
    s = kane.System(bad[5] + bad[0])  # the model's name went into the Makefile's first line
    g, L, m = s.parameter("NULL", 9.81), s.parameter("INFINITY", 0.8), s.parameter("main", 1.3)
    k, c = s.parameter("\u03bc", 4.0), s.parameter("errno", 0.3)  # Greek mu: non-ASCII, and a libc macro
    tau = s.input("stdout", 0.7)
    s.gravity = (0, -g, 0)
    s.add_body(bad[0], mass=m, com=(L / 2, 0, 0), inertia=(0.01, m * L ** 2 / 12, m * L ** 2 / 12))
    s.add_body(bad[1], mass=2 * m, com=(L / 2, 0, 0), inertia=(0.02, 0.1, 0.1))
    s.add_body(bad[2], mass=m / 2, com=(0, 0, 0), inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", bad[0], J.Revolute("z"), name=bad[3], coordinates=["EOF"], speeds=["stdin"])
    s.add_joint(bad[0], bad[1], J.Revolute("z"), name=bad[4], parent_point=(L, 0, 0), coordinates=["\u03b8"],
                speeds=["main_"])
    s.add_joint(bad[1], bad[2], J.Prismatic("x"), name=bad[1] + "j", parent_point=(L, 0, 0),
                coordinates=["FILE"], speeds=["stderr"])
    s.add_joint_spring(bad[1] + "j", k, rest=0.2, damping=c)
    s.add_joint_torque(bad[3], [tau])
    return s


def _run(cmd, cwd):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"{cmd} failed:\n{res.stdout[-2000:]}{res.stderr[-4000:]}"
    return res.stdout


def _comments_only(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def _check_files(directory: pathlib.Path, names):
    """No user name outside comments; comments printable ASCII; the Makefile without any of the model's text."""
    makefile = (directory / "Makefile").read_text()
    assert makefile == MAKEFILE.format(P="model")  # the template filled with the prefix alone: no model text
    for name in names:
        assert name not in makefile
    for f in ("model.c", "model.h", "main.c", "Makefile"):
        text = (directory / f).read_text(encoding="utf-8")
        assert text.isascii() and all(c.isprintable() or c in "\n\t" for c in text), f
        assert "??" not in text and not re.search(r"\\\n", text), f  # no trigraph, no line splice
        code = _comments_only(text) if f != "Makefile" else text
        assert "/*" not in code and "*/" not in code and "touch" not in code, f
    header = _comments_only((directory / "model.h").read_text())
    for macro in ("EOF", "NULL", "stdin", "INFINITY", "errno", "FILE", "stdout", "stderr"):
        assert not re.search(rf"\b{macro}\b", header), f"{macro} used as an identifier in model.h"


@needs_make
def test_export_c_with_hostile_names_builds_runs_nothing_and_equals_kane(tmp_path):
    marker = tmp_path / "planted"
    system = _system(marker)
    eqs = kane.derive(system)
    out = tmp_path / "out"
    res = export_c(eqs, out)
    res_make = subprocess.run(["make", "CC=" + CC], cwd=out, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), "the exported build ran a command planted in a name"
    assert res_make.returncode == 0, res_make.stderr[-4000:]
    _check_files(out, _hostile(marker))
    assert "trigraph" not in res_make.stderr and "warning" not in res_make.stderr, res_make.stderr[-2000:]
    demo = _run([str(out / "model_demo")], out).splitlines()
    dyn = eqs.compile(backend="numpy")
    q0, u0 = np.array([0.3, -0.4, 0.25]), np.array([0.5, -1.0, 0.2])
    driver = textwrap.dedent(f"""\
        #include <stdio.h>
        #include "model.h"
        int main(void) {{
            model_t m;
            const double q[] = {{{", ".join(repr(float(x)) for x in q0)}}}, u[] = {{{", ".join(repr(float(x)) for x in u0)}}};
            double qd[MODEL_NQ], ud[MODEL_NU];
            int i;
            model_init(&m, 0);
            model_rhs(&m, 0.0, q, u, model_default_inputs, qd, ud);
            for (i = 0; i < MODEL_NU; ++i) printf("%.17g\\n", ud[i]);
            return 0;
        }}
        """)
    (out / "driver.c").write_text(driver)
    _run([CC, *STRICT, "-o", "driver", "driver.c", "model.c", "-lm"], out)
    udot_c = np.array([float(x) for x in _run([str(out / "driver")], out).split()])
    udot = dyn.udot(0.0, q0, u0)
    assert np.max(np.abs(udot)) > 1.0  # the state moves: the comparison is not of zeros
    np.testing.assert_allclose(udot_c, udot, rtol=1e-12, atol=1e-12 * np.max(np.abs(udot)))
    first = np.array([float(x) for x in demo[1].split()])
    np.testing.assert_array_equal(first[1:4], dyn.model.q0)  # main.c starts from the model's state
    assert not marker.exists()


@needs_make
def test_cli_export_c_of_a_hostile_model_file(tmp_path):
    marker = tmp_path / "planted"
    toml = textwrap.dedent(f"""\
        [model]
        name = {_toml(f'{chr(10)}model_demo: pwn{chr(10)}pwn:{chr(10)}{chr(9)}touch {marker}{chr(10)}# */ system("touch {marker}"); /* ')}
        gravity = [0, "-NULL", 0]
        [parameters]
        NULL = 9.81
        main = 1.5
        [[bodies]]
        name = {_toml(f'??= */ system("touch {marker}"); /*')}
        mass = "main"
        com = [0.5, 0, 0]
        inertia = [0.01, 0.1, 0.1]
        [[joints]]
        name = {_toml(chr(10) + chr(9) + f"touch {marker}")}
        type = "revolute"
        parent = "ground"
        child = {_toml(f'??= */ system("touch {marker}"); /*')}
        axis = "z"
        coordinates = ["EOF"]
        speed_names = ["stdin"]
        """)
    path = tmp_path / "hostile.toml"
    path.write_text(toml, encoding="utf-8")
    out = tmp_path / "exported"
    result = CliRunner().invoke(main, ["export-c", str(path), "-o", str(out), "--steps", "3"])
    assert result.exit_code == 0, result.output
    res_make = subprocess.run(["make", "CC=" + CC], cwd=out, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), "the exported build ran a command planted in a name"
    assert res_make.returncode == 0, res_make.stderr[-4000:]
    _check_files(out, [f'*/ system("touch {marker}"); /*', f"touch {marker}"])
    lines = _run([str(out / "model_demo")], out).splitlines()
    assert len(lines) == 5 and lines[0].startswith("# t [s] q[0]")  # the header (generated names only), t0, 3 steps


def _toml(text: str) -> str:
    """A TOML basic string of ``text`` (escapes for quotes, backslashes and control characters)."""
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text) + '"'


def test_backends_print_generated_names_only(tmp_path, monkeypatch):
    """The C backend's source, the numba module's and the numpy backend's generated Python carry no name of the
    model's (every identifier generated), and compute the numbers of the reference formulation."""
    monkeypatch.setenv("KANE_CACHE_DIR", str(tmp_path))
    eqs = kane.derive(_system(tmp_path / "planted"))
    prog = eqs.program
    names = [str(s) for s in (*eqs.model.q, *eqs.model.u, *eqs.model.parameters, *eqs.model.inputs)]
    sources = {"numpy": compile_program(prog, [], linear_solve=("M", "f", "udot")).source,
               "numpy batch": compile_program(prog, [], batch=True, linear_solve=("M", "f", "udot")).source,
               "c": c_backend.c_source(prog, [], ("M", "f", "udot"))[0]}
    if importlib.util.find_spec("numba") is not None:
        from kane.codegen.numba_backend import NumbaFunction

        sources["numba"] = NumbaFunction(prog, [], linear_solve=("M", "f", "udot")).source
    for which, src in sources.items():
        idents = set(re.findall(r"[^\W\d]\w*", src))
        assert not idents & set(names), (which, idents & set(names))
        assert src.isascii(), which
    q, u = np.array([0.3, -0.4, 0.25]), np.array([0.5, -1.0, 0.2])
    ref = eqs.compile(backend="numpy").udot(0.0, q, u)
    if c_backend.compiler_available()[0]:
        np.testing.assert_allclose(eqs.compile(backend="c").udot(0.0, q, u), ref, rtol=1e-12, atol=1e-12)


def _fmu_files(tmp_path, fmu):
    """The FMU's modelDescription.xml text and its sources/, extracted into ``tmp_path / 'fmu'``."""
    import zipfile

    out = tmp_path / "fmu"
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(out)
    return (out / "modelDescription.xml").read_text(encoding="utf-8"), out / "sources"


@needs_make
def test_export_fmu_with_hostile_names_validates_builds_strictly_and_equals_kane(tmp_path):
    """The FMU of the hostile model: its XML parses with every name escaped (no line break, tab or control
    character; FMPy's validation finds no problem), its sources carry no user text outside comments and build with
    -Wall -Wextra -Werror -pedantic -trigraphs, nothing planted runs, and its u' (der() variables, read through
    FMPy) equals kane's."""
    import xml.etree.ElementTree as ET

    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    from kane.codegen.fmu_export import export_fmu

    marker = tmp_path / "planted"
    eqs = kane.derive(_system(marker))
    res = export_fmu(eqs, tmp_path / "hostile.fmu")
    assert validate_fmu(str(res.path)) == []
    xml, sources = _fmu_files(tmp_path, res.path)
    root = ET.fromstring(xml)
    names = [v.get("name") for v in root.iter("ScalarVariable")]
    assert all(n.isprintable() for n in names) and len(set(names)) == len(names)
    assert list(res.value_references) == names  # the result names the variables as the XML does
    assert "EOF" in names and "\u03bc" in names  # kept as they are where nothing needs escaping
    assert root.get("modelName").startswith("<U+000A>model_demo: pwn<U+000A>pwn:<U+000A><U+0009>touch")
    assert res.model_identifier == "kane_model"  # the model's name is not an identifier: a generated one
    for f in ("model.c", "model.h", "fmu.c"):
        text = (sources / f).read_text(encoding="utf-8")
        assert text.isascii() and all(c.isprintable() or c in "\n\t" for c in text), f
        assert "??" not in text and not re.search(r"\\\n", text), f
        code = _comments_only(text)
        assert "/*" not in code and "*/" not in code and "touch" not in code, f
    assert "touch" not in (sources / "fmu.c").read_text()  # the wrapper has no model text, even in comments
    _run([CC, *STRICT, "-fPIC", "-shared", "-o", "strict.so", "fmu.c", "model.c", "-lm"], sources)
    assert not marker.exists(), "the FMU's build ran a command planted in a name"
    md = fmpy.read_model_description(str(res.path))
    der_u = [v.name for v in md.modelVariables if v.derivative is not None][eqs.model.n_q:]
    out = fmpy.simulate_fmu(str(res.path), fmi_type="ModelExchange", stop_time=1e-3, output_interval=1e-3,
                            output=der_u)
    udot = eqs.compile(backend="numpy").udot(0.0, np.asarray(eqs.model.q0), np.asarray(eqs.model.u0))
    np.testing.assert_allclose([out[n][0] for n in der_u], udot, rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(udot)) > 1.0 and not marker.exists()


@needs_make
def test_cli_export_fmu_of_a_hostile_model_file(tmp_path):
    """A model file whose name and description carry XML and C: the FMU's description escapes them (the parsed
    XML gives the text back, line breaks as <U+000A>), it validates, and nothing planted runs."""
    import xml.etree.ElementTree as ET

    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    marker = tmp_path / "planted"
    evil = f'"/><Unit name="x"/><!-- & ]]> */ system("touch {marker}"); /*'
    path = tmp_path / "hostile.toml"
    path.write_text(textwrap.dedent(f"""\
        [model]
        name = {_toml(evil + chr(10) + "x")}
        description = {_toml(evil)}
        [parameters]
        m = 1.5
        [[bodies]]
        name = {_toml(evil)}
        mass = "m"
        com = [0.5, 0, 0]
        inertia = [0.01, 0.1, 0.1]
        [[joints]]
        name = "j"
        type = "revolute"
        parent = "ground"
        child = {_toml(evil)}
        axis = "z"
        """), encoding="utf-8")
    out = tmp_path / "h.fmu"
    result = CliRunner().invoke(main, ["export-fmu", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert validate_fmu(str(out)) == [] and not marker.exists()
    xml, sources = _fmu_files(tmp_path, out)
    root = ET.fromstring(xml)
    assert root.get("description") == evil and root.get("modelName") == evil + "<U+000A>x"
    assert [u.get("name") for u in root.iter("Unit")].count("x") == 0
    assert "touch" not in _comments_only((sources / "model.c").read_text()) + (sources / "fmu.c").read_text()
    assert fmpy.read_model_description(str(out)).coSimulation.modelIdentifier == "kane_model"
