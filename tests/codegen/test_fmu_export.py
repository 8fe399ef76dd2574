"""``kane export-fmu`` (issue 31, item 2): the FMI 2.0 FMU passes FMPy's validation; FMPy's Co-Simulation of it
equals ``kane simulate`` with RK4 at the same step, and its Model Exchange under CVode equals kane's dopri5; its
energy outputs equal kane's; parameters set through FMPy move it as kane's parameters move kane."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import load_model_or_script, main
from kane.codegen.fmu_export import FmuOptions, export_fmu
from kane.errors import ArgumentError, KaneError
from kane.io.trajectory import load_trajectory

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAIN = ROOT / "examples" / "planar_chain.toml"
pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler (cc or gcc) on this machine: CI installs gcc")

#: a pendulum (length L, mass m at the end of a massless rod, gravity g) driven by a torque tau [N m] at its pivot
PENDULUM = """
[model]
name = "pendulum"
gravity = [0, "-g", 0]
[parameters]
g = 9.81
L = {L}
m = 1.3
[inputs]
tau = 0.4
[[bodies]]
name = "bob"
mass = "m"
com = ["L", 0, 0]
inertia = [0.001, 0.001, 0.001]
[[joints]]
name = "pivot"
parent = "ground"
child = "bob"
type = "revolute"
axis = "z"
coordinates = ["theta"]
speed_names = ["omega"]
q0 = [0.9]
[[loads]]
type = "joint_torque"
joint = "pivot"
values = ["tau"]
[simulation]
t_end = 2.0
"""


def _pendulum(tmp_path, L=0.8) -> pathlib.Path:
    path = tmp_path / f"pendulum_{L}.toml"
    path.write_text(PENDULUM.format(L=L))
    return path


def _kane(model: pathlib.Path, out: pathlib.Path, *args):
    res = CliRunner().invoke(main, ["simulate", str(model), "-o", str(out), *args])
    assert res.exit_code == 0, res.output
    return load_trajectory(out)


def _rk4(model, tmp_path, t_end, dt):
    return _kane(model, tmp_path / f"{model.stem}_rk4.h5", "--method", "rk4", "--dt", str(dt), "--t-end", str(t_end),
                 "--output-dt", str(dt))


def _columns(result, names):
    return np.column_stack([result[n] for n in names])


@pytest.fixture(scope="module")
def chain_fmu(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "chain.fmu"
    return export_fmu(load_model_or_script(CHAIN), path, FmuOptions(dt=1e-3))


def test_fmu_validates_and_describes_the_model(chain_fmu):
    assert validate_fmu(str(chain_fmu.path)) == []
    with zipfile.ZipFile(chain_fmu.path) as zf:
        names = set(zf.namelist())
        xml = zf.read("modelDescription.xml").decode()
    assert {"modelDescription.xml", "sources/model.c", "sources/model.h", "sources/fmu.c",
            f"binaries/linux64/{chain_fmu.model_identifier}.so"} <= names
    root = ET.fromstring(xml)
    assert root.get("guid") == chain_fmu.guid and root.get("generationTool").startswith("kane ")
    assert root.find("ModelExchange") is not None and root.find("CoSimulation") is not None
    md = fmpy.read_model_description(str(chain_fmu.path))
    by = {v.name: v for v in md.modelVariables}
    assert [by[f"q{k}"].unit for k in range(1, 8)] == ["rad"] * 7
    assert by["u1"].unit == "rad/s" and by["der(u1)"].unit == "rad/s2" and by["energy"].unit == "J"
    assert by["der(q3)"].derivative is by["q3"]
    assert {v.name: float(v.start) for v in md.modelVariables if v.causality == "parameter"} == {
        "g": 9.8, "l": 1.0, "w": 0.1, "m": 1.0, "rk4_max_step": 1e-3}
    assert [v.variability for v in md.modelVariables if v.causality == "parameter"][:4] == ["fixed"] * 4
    assert len(md.derivatives) == 14 and md.numberOfEventIndicators == 0


@pytest.mark.parametrize("which", ["pendulum", "chain"])
def test_co_simulation_equals_kane_simulate_rk4(which, chain_fmu, tmp_path):
    """FMPy's Co-Simulation (one RK4 step per communication step) against ``kane simulate --method rk4`` at the
    same step: the same RK4 of the same equations, so to round-off; the energy output against kane's energy."""
    dt, t_end = 1e-3, 0.5
    if which == "chain":
        model, fmu = CHAIN, chain_fmu.path
        names = [f"q{k}" for k in range(1, 8)] + [f"u{k}" for k in range(1, 8)]
    else:
        model = _pendulum(tmp_path)
        fmu = export_fmu(load_model_or_script(model), tmp_path / "pendulum.fmu", FmuOptions(dt=dt)).path
        names = ["theta", "omega"]
    ref = _rk4(model, tmp_path, t_end, dt)
    res = fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=t_end, output_interval=dt,
                            output=names + ["energy", "kinetic_energy"])
    np.testing.assert_allclose(res["time"], ref.t, rtol=0, atol=1e-12)
    x_fmu, x_kane = _columns(res, names), np.column_stack([ref.q, ref.u])
    err = np.max(np.abs(x_fmu - x_kane))
    print(f"max |x_fmu - x_kane| = {err:.2e}")
    assert err < 1e-8, err
    assert np.max(np.abs(x_kane[-1] - x_kane[0])) > 0.1  # it moved
    np.testing.assert_allclose(res["energy"], ref.energy, rtol=0, atol=1e-8)
    assert np.max(np.abs(res["kinetic_energy"])) > 0.5


@pytest.mark.parametrize("which", ["pendulum", "chain"])
def test_model_exchange_under_cvode_equals_kane_dopri5(which, chain_fmu, tmp_path):
    """Model Exchange: FMPy's CVode (BDF, rtol = atol = 1e-12) against kane's dopri5 at rtol = atol = 1e-12, 1 s
    (reached: about 9e-10 for the pendulum and 1.4e-9 for the chain)."""
    if which == "chain":
        model, fmu = CHAIN, chain_fmu.path
        names = [f"q{k}" for k in range(1, 8)] + [f"u{k}" for k in range(1, 8)]
    else:
        model = _pendulum(tmp_path)
        fmu = export_fmu(load_model_or_script(model), tmp_path / "pendulum.fmu").path
        names = ["theta", "omega"]
    ref = _kane(model, tmp_path / "ref.h5", "--method", "dopri5", "--rtol", "1e-12", "--atol", "1e-12",
                "--t-end", "1.0", "--output-dt", "0.01")
    res = fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode", relative_tolerance=1e-12,
                            stop_time=1.0, output_interval=0.01, output=names + ["energy"])
    assert res["time"].shape == ref.t.shape
    err = np.max(np.abs(_columns(res, names) - np.column_stack([ref.q, ref.u])))
    print(f"max |x_fmu - x_kane| = {err:.2e}")
    assert err < 1e-8, err
    assert np.max(np.abs(ref.q[-1] - ref.q[0])) > 0.1
    np.testing.assert_allclose(res["energy"], ref.energy, rtol=0, atol=1e-8)


def test_rolling_disk_outputs_its_constraint_residuals(tmp_path):
    """The rolling disk (free joint, scalar-first quaternion, dependent speeds v1..v3): Co-Simulation equals kane
    simulate's RK4 (no projection); started 0.02 m above the floor, the configuration residual output equals
    kane's C(q) at the FMU's states (0.02, not 0), the velocity residual kane's (about 0: embedded speeds)."""
    disk = ROOT / "examples" / "rolling_disk.toml"
    lm = load_model_or_script(disk)
    res = export_fmu(lm, tmp_path / "disk.fmu", FmuOptions(dt=1e-3))
    assert validate_fmu(str(res.path)) == []
    assert res.sizes["n_u"] == 3 and res.sizes["n_constraint"] == 3 and res.sizes["n_configuration"] == 1
    names = ["x", "y", "z", "e0", "e1", "e2", "e3", "w1", "w2", "w3"]
    ref = _kane(disk, tmp_path / "disk.h5", "--method", "rk4", "--dt", "1e-3", "--t-end", "0.3", "--output-dt",
                "1e-3", "--no-project")
    kw = dict(fmi_type="CoSimulation", stop_time=0.3, output_interval=1e-3,
              output=names + ["configuration_residual[0]"] + [f"constraint_residual[{k}]" for k in range(3)])
    out = fmpy.simulate_fmu(str(res.path), **kw)
    err = np.max(np.abs(_columns(out, names) - np.column_stack([ref.q, ref.u])))
    assert err < 1e-8, err
    lifted = fmpy.simulate_fmu(str(res.path), start_values={"z": 0.42}, **kw)
    dyn = lm.derive().compile(backend="numpy")
    x = _columns(lifted, names)
    for k in (0, 150, -1):
        t, q, u = lifted["time"][k], x[k, :7], x[k, 7:]
        np.testing.assert_allclose(lifted["configuration_residual[0]"][k], dyn.configuration_residual(t, q)[0],
                                   rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose([lifted[f"constraint_residual[{i}]"][k] for i in range(3)],
                                   dyn.constraint_residual(t, q, u), rtol=0, atol=1e-12)
    assert abs(lifted["configuration_residual[0]"][0]) > 0.019


def test_two_instances_are_independent(chain_fmu, tmp_path):
    """Two Co-Simulation instances of one binary, stepped in turn with different parameters (g = 9.8 and 3.0),
    each equal a run of its own: the wrapper keeps no state outside its instance."""
    from fmpy import extract, instantiate_fmu, read_model_description

    md = read_model_description(str(chain_fmu.path))
    where = extract(str(chain_fmu.path), str(tmp_path / "x"))
    vr = chain_fmu.value_references
    states = [vr[f"q{k}"] for k in range(1, 8)] + [vr[f"u{k}"] for k in range(1, 8)]

    def start(g):
        fmu = instantiate_fmu(where, md, fmi_type="CoSimulation")
        fmu.setupExperiment(startTime=0.0)
        fmu.setReal([vr["g"]], [g])
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        return fmu

    def alone(g, n):
        fmu = start(g)
        for k in range(n):
            fmu.doStep(k * 1e-3, 1e-3)
        x = np.array(fmu.getReal(states))
        fmu.terminate()
        fmu.freeInstance()
        return x
    a, b = start(9.8), start(3.0)
    for k in range(200):
        a.doStep(k * 1e-3, 1e-3)
        b.doStep(k * 1e-3, 1e-3)
    xa, xb = np.array(a.getReal(states)), np.array(b.getReal(states))
    np.testing.assert_array_equal(xa, alone(9.8, 200))
    np.testing.assert_array_equal(xb, alone(3.0, 200))
    assert np.max(np.abs(xa - xb)) > 0.1
    for fmu in (a, b):
        fmu.terminate()
        fmu.freeInstance()


def test_parameters_and_inputs_set_through_fmpy_move_it_as_kane(tmp_path):
    """L = 0.8 -> 1.1 and tau = 0.4 -> -0.25 set as start values in FMPy equal kane simulate of the model file with
    those values; the change is far larger than the agreement."""
    dt, t_end = 2e-3, 0.6
    fmu = export_fmu(load_model_or_script(_pendulum(tmp_path)), tmp_path / "p.fmu", FmuOptions(dt=dt)).path
    changed = tmp_path / "changed.toml"
    changed.write_text(PENDULUM.format(L=1.1).replace("tau = 0.4", "tau = -0.25"))
    ref = _rk4(changed, tmp_path, t_end, dt)
    kw = dict(fmi_type="CoSimulation", stop_time=t_end, output_interval=dt, output=["theta", "omega"])
    base = fmpy.simulate_fmu(str(fmu), **kw)
    res = fmpy.simulate_fmu(str(fmu), start_values={"L": 1.1, "tau": -0.25}, **kw)
    err = np.max(np.abs(_columns(res, ["theta", "omega"]) - np.column_stack([ref.q, ref.u])))
    print(f"max |x_fmu - x_kane| = {err:.2e}")
    assert err < 1e-8, err
    assert np.max(np.abs(base["omega"] - res["omega"])) > 0.1


def test_substeps_of_do_step(tmp_path):
    """A communication step of 10 dt with rk4_max_step = dt takes 10 RK4 steps: the samples every 10 dt equal kane's
    RK4 run at dt."""
    dt = 1e-3
    model = _pendulum(tmp_path)
    fmu = export_fmu(load_model_or_script(model), tmp_path / "p.fmu", FmuOptions(dt=dt)).path
    ref = _rk4(model, tmp_path, 0.5, dt)
    kw = dict(fmi_type="CoSimulation", stop_time=0.5, output_interval=10 * dt, output=["theta", "omega"])
    res = fmpy.simulate_fmu(str(fmu), **kw)
    err = np.max(np.abs(_columns(res, ["theta", "omega"]) - np.column_stack([ref.q, ref.u])[::10]))
    assert err < 1e-10, err
    coarse = fmpy.simulate_fmu(str(fmu), start_values={"rk4_max_step": 10 * dt}, **kw)
    assert 1e-9 < np.max(np.abs(coarse["omega"] - res["omega"])) < 1e-3  # RK4 at 10 dt: other round-off and error


def test_cli_export_fmu(tmp_path):
    out = tmp_path / "pend.fmu"
    res = CliRunner().invoke(main, ["export-fmu", str(_pendulum(tmp_path)), "-o", str(out), "--dt", "0.002",
                                    "--fmi-type", "cs"])
    assert res.exit_code == 0, res.output
    md = fmpy.read_model_description(str(out))
    assert md.coSimulation is not None and md.modelExchange is None
    assert md.defaultExperiment.stepSize == "0.002" and validate_fmu(str(out)) == []
    units = {v.name: v.unit for v in md.modelVariables}
    assert (units["tau"], units["theta"], units["der(omega)"], units["L"]) == ("N.m", "rad", "rad/s2", None)


def test_bad_input_is_a_kane_error(tmp_path, monkeypatch):
    lm = load_model_or_script(_pendulum(tmp_path))
    with pytest.raises(ArgumentError, match=r"model\.zip must end in \.fmu"):
        export_fmu(lm, tmp_path / "model.zip")
    with pytest.raises(ArgumentError, match="fmi_type 'xx'"):
        export_fmu(lm, tmp_path / "m.fmu", FmuOptions(fmi_type="xx"))
    with pytest.raises(ArgumentError, match="dt must be"):
        export_fmu(lm, tmp_path / "m.fmu", FmuOptions(dt=-1.0))
    res = CliRunner().invoke(main, ["export-fmu", str(_pendulum(tmp_path)), "-o", str(tmp_path / "x.txt")])
    assert res.exit_code != 0 and "must end in .fmu" in res.output and "Traceback" not in res.output
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(KaneError, match="is not an executable program"):
        export_fmu(lm, tmp_path / "m.fmu")
    monkeypatch.setenv("CC", "false")  # a compiler that fails: the model cannot be built
    with pytest.raises(KaneError, match="C compiler failed"):
        export_fmu(lm, tmp_path / "m.fmu")
    assert not (tmp_path / "m.fmu").exists()


def test_cli_refuses_a_model_with_rolling_contacts(tmp_path):
    """Without its [[contacts]] the ball of ball_in_bowl.toml would fall through the bowl: no FMU of that."""
    out = tmp_path / "bowl.fmu"
    res = CliRunner().invoke(main, ["export-fmu", str(ROOT / "examples" / "ball_in_bowl.toml"), "-o", str(out)])
    assert res.exit_code == 2 and "kane export-fmu does not run the [[contacts]]" in " ".join(res.output.split())
    assert not out.exists()


def test_wrapper_matches_the_standard_fmi2_headers(chain_fmu, tmp_path):
    """fmu.c declares the FMI 2.0 types itself; with that block replaced by the standard's fmi2Functions.h (FMPy's
    copy), every function definition must match the standard's prototype: gcc -Werror -pedantic builds it."""
    headers = pathlib.Path(fmpy.__file__).parent / "c-code"
    cc = shutil.which("gcc") or shutil.which("cc")
    with zipfile.ZipFile(chain_fmu.path) as zf:
        zf.extractall(tmp_path)
    src = tmp_path / "sources"
    text = (src / "fmu.c").read_text()
    ours = re.search(r"/\* FMI 2\.0 types,.*?\} fmi2EventInfo;\n", text, flags=re.S)
    assert ours and "FMI2_EXPORT" not in ours.group(0)  # types only: every function stays to be checked
    (src / "fmu_std.c").write_text(text.replace(ours.group(0), '#include "fmi2Functions.h"\n'))
    done = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared",
                           f"-I{headers}", "-o", "std.so", "fmu_std.c", "model.c", "-lm"], cwd=src,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_model_without_parameters_inputs_or_gravity(tmp_path):
    """A free-spinning wheel (no parameters, no inputs, no gravity): the FMU validates, and Co-Simulation keeps the
    spin rate and the energy: kinetic I w^2 / 2 = 0.5 * 0.2 * 3^2 = 0.9 J, potential 0."""
    import kane
    from kane import joints as J

    s = kane.System("wheel")
    s.add_body("wheel", mass=1.0, inertia=(0.1, 0.1, 0.2))
    s.add_joint("ground", "wheel", J.Revolute("z"), coordinates=["phi"], speeds=["w"], q0=[0.0], u0=[3.0])
    res = export_fmu(kane.derive(s), tmp_path / "wheel.fmu", FmuOptions(dt=0.01, fmi_type="cs"))
    assert validate_fmu(str(res.path)) == []
    assert list(res.value_references)[:5] == ["phi", "w", "der(phi)", "der(w)", "rk4_max_step"]
    out = fmpy.simulate_fmu(str(res.path), stop_time=1.0, output_interval=0.01,
                            output=["phi", "w", "kinetic_energy", "potential_energy", "energy"])
    np.testing.assert_allclose(out["w"], 3.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(out["phi"], 3.0 * out["time"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["kinetic_energy"], 0.9, rtol=1e-14)
    np.testing.assert_allclose(out["energy"], 0.9, rtol=1e-14)
    assert np.all(out["potential_energy"] == 0.0)


def test_misuse_through_fmpy_is_an_error_with_a_message(chain_fmu, tmp_path):
    """A parameter set after initialization, a derivative or an output set, a negative step, a value reference
    out of range: fmi2Error, each logged in words; the state is left as it was."""
    from fmpy import extract, instantiate_fmu, read_model_description
    from fmpy.fmi1 import FMICallException  # FMPy raises it for FMI 2.0 calls too

    md = read_model_description(str(chain_fmu.path))
    vr = chain_fmu.value_references
    messages = []
    fmu = instantiate_fmu(extract(str(chain_fmu.path), str(tmp_path / "x")), md, fmi_type="CoSimulation",
                          logger=lambda *args: messages.append(args[-1].decode()))
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.doStep(0.0, 1e-3)
    before = fmu.getReal([vr["q7"], vr["u7"]])
    for call in (lambda: fmu.setReal([vr["g"]], [1.0]), lambda: fmu.setReal([vr["der(u1)"]], [1.0]),
                 lambda: fmu.setReal([vr["energy"]], [1.0]), lambda: fmu.doStep(1e-3, -1e-3),
                 lambda: fmu.getReal([len(vr)]), lambda: fmu.setReal([vr["rk4_max_step"]], [0.0])):
        with pytest.raises(FMICallException):
            call()
    assert fmu.getReal([vr["q7"], vr["u7"]]) == before and fmu.getReal([vr["g"]]) == [9.8]
    assert any("parameters are fixed after initialization" in m for m in messages), messages
    assert any("communication step must be a finite time >= 0" in m for m in messages), messages
    fmu.terminate()
    fmu.freeInstance()
