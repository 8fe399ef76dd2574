"""`kane export-c MODEL --servo`: the standalone servo program builds with -std=c99 -Wall -Wextra -Werror, runs
without Python against state packets sent on loopback, and what it logs and sends back is the Python coupler's force
on its own logged state (to 1e-12), its states the compiled RK4 step of the model under that force (to 1e-12)."""

import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kane import realtime as rt
from kane.cli import main
from kane.io.model_file import load_model
from kane.realtime.c_servo import export_servo

CHAIN = Path(__file__).resolve().parents[2] / "examples" / "planar_chain.toml"
_STATE = struct.Struct("<4sHHQd3d3d")  # the protocol's state packet, written here from udp.py's docstring
_FORCE = struct.Struct("<4sHHQd3d")


def _free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="a C compiler")
def test_the_servo_program_computes_the_python_couplers_forces_and_steps(tmp_path):
    res = CliRunner().invoke(main, ["export-c", str(CHAIN), "--servo", "-o", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cli" / "servo_main.c").exists()
    loaded = load_model(CHAIN)
    out = export_servo(loaded, tmp_path / "servo")  # [realtime]: link7's tip, max_force 100 N, K 1000, B K T
    text = "".join(p.read_text() for p in out.files if p.suffix == ".c")
    assert "link" not in text and "planar" not in text  # no name of the model's in the C text
    cc = shutil.which("cc") or shutil.which("gcc")
    build = subprocess.run([cc, "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O2",
                            "-ffp-contract=off", "-pthread", "-o", "servo", "servo_main.c", "servo_period.c",
                            "servo_dynamics.c", "servo_point.c", "-lm"], cwd=out.directory, capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stderr
    # the same model and coupler in Python, to check the program's rows against
    loaded = load_model(CHAIN)  # afresh: export_servo added the coupler's inputs to the other one
    port_ = rt.add_coupler(loaded.system, "link7", (float(loaded.parameters["l"]), 0.0, 0.0))
    dyn = loaded.derive().compile()
    params = dict(loaded.parameters)
    cp = rt.VirtualCoupler(dyn, port_, out.gains, max_force=100.0, params=params)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names])
    x0, _ = cp.point_state(0.0, q0, u0)
    udp = _free_port()
    log = out.directory / "log.csv"
    proc = subprocess.Popen([str(out.directory / "servo"), str(udp), str(log), "0.3", "0", "1.0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    dev = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dev.setblocking(False)
    replies = []
    try:
        start = time.perf_counter()
        k = 0
        while proc.poll() is None and time.perf_counter() - start < 20:  # a hand pulling the tip along x, at 1 kHz
            s = min(time.perf_counter() - start, 0.5)
            dev.sendto(_STATE.pack(b"KRTS", 1, 0, k, s, x0[0] + 0.1 * s, x0[1], x0[2], 0.1, 0.0, 0.0),
                       ("127.0.0.1", udp))
            k += 1
            time.sleep(1e-3)
            while True:
                try:
                    replies.append(_FORCE.unpack(dev.recv(1024)))
                except (BlockingIOError, ConnectionRefusedError):
                    break
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        proc.kill()
        dev.close()
    assert proc.returncode == 0, stderr
    assert stdout.startswith("periods 300 ")
    rows = np.loadtxt(log, delimiter=",", skiprows=1, ndmin=2)
    assert rows.shape == (300, 23 + dyn.n_q + dyn.n_u)
    used = rows[:, 19] == 0
    assert used.sum() >= 250
    a = 23
    w = dyn.model.input_values()
    stepper = dyn.stepper(0.0, q0, u0, params, w)
    worst_f = worst_x = 0.0
    for i in np.flatnonzero(used):
        t, q, u = rows[i, 0], rows[i, a:a + dyn.n_q], rows[i, a + dyn.n_q:]
        point = cp.point_floats(t, q, u)
        fx, fy, fz, *_ = cp.force_floats(point, rows[i, 1:4], rows[i, 4:7])
        worst_f = max(worst_f, np.abs(np.array([fx, fy, fz]) - rows[i, 13:16]).max())
        worst_x = max(worst_x, np.abs(np.array(point) - rows[i, 7:13]).max())
    assert worst_f <= 1e-12 and worst_x <= 1e-12
    assert np.abs(rows[used, 13:16]).max() > 1.0
    worst_step = 0.0
    for i in range(299):  # each period's RK4 step under its force, from the logged state to the next row's
        stepper.set_state(rows[i, 0], rows[i, a:a + dyn.n_q], rows[i, a + dyn.n_q:])
        stepper.inputs[cp.input_index] = rows[i, 13:16]
        stepper.step(1, 1e-3)
        nxt = rows[i + 1]
        worst_step = max(worst_step, np.abs(stepper.q - nxt[a:a + dyn.n_q]).max(),
                         np.abs(stepper.u - nxt[a + dyn.n_q:]).max())
    assert worst_step <= 1e-12
    # what the device got back: -force of the period stamped t, then zero force
    by_t = {round(r[0] * 1e3): r for r in rows}
    *sent, last = replies
    assert len(sent) >= 100 and last[4] == rows[-1, 0] and last[5:] == (0.0, 0.0, 0.0)
    for magic, version, flags, seq, t, *force in sent:
        assert (magic, version, flags) == (b"KRTF", 1, 0)
        np.testing.assert_allclose(force, -by_t[round(t * 1e3)][13:16], rtol=0, atol=1e-12)


_POSE = struct.Struct("<4sHHQd3d3d4d3d")  # version 2: ... position, velocity, quaternion (w, x, y, z), angular velocity
_WRENCH = struct.Struct("<4sHHQd3d3d")

_WRIST_TABLE = """
[realtime]
body = "C"
point = [0, 0, 0.3]
stiffness = 200.0
rotational_stiffness = 2.0
rotational_damping = 0.02
max_torque = 0.5
"""


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="a C compiler")
def test_the_servo_program_couples_a_full_pose_over_protocol_2(tmp_path):
    # the spherical wrist's body coupled in position and orientation; the handle turns about n3 from the body's
    # start orientation; torques cut at 0.5 N m
    from kane.spatial import rotation_to_quaternion

    model = tmp_path / "wrist.toml"
    model.write_text((CHAIN.parent / "spherical_wrist.toml").read_text() + _WRIST_TABLE)
    out = export_servo(load_model(model), tmp_path / "servo")
    assert out.gains.rotational_stiffness == 2.0
    cc = shutil.which("cc") or shutil.which("gcc")
    build = subprocess.run([cc, "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O2",
                            "-ffp-contract=off", "-pthread", "-o", "servo", "servo_main.c", "servo_period.c",
                            "servo_dynamics.c", "servo_point.c", "-lm"], cwd=out.directory, capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stderr
    loaded = load_model(model)
    port_ = rt.add_coupler(loaded.system, "C", (0.0, 0.0, 0.3), rotational=True)
    dyn = loaded.derive().compile()
    params = dict(loaded.parameters)
    cp = rt.VirtualCoupler(dyn, port_, out.gains, max_force=20.0, params=params, max_torque=0.5)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names])
    x0, _ = cp.point_state(0.0, q0, u0)
    R0, _ = cp.pose_state(0.0, q0, u0)
    udp = _free_port()
    log = out.directory / "log.csv"
    proc = subprocess.Popen([str(out.directory / "servo"), str(udp), str(log), "0.2", "0", "1.0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dev = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dev.setblocking(False)
    replies = []
    try:
        start, k = time.perf_counter(), 0
        while proc.poll() is None and time.perf_counter() - start < 20:
            s = min(time.perf_counter() - start, 0.5)
            c, sn = np.cos(2 * s), np.sin(2 * s)
            R = np.array([[c, -sn, 0], [sn, c, 0], [0, 0, 1]]) @ R0
            dev.sendto(_POSE.pack(b"KRTS", 2, 0, k, s, *x0, 0.0, 0.0, 0.0, *rotation_to_quaternion(R), 0.0, 0.0,
                                  2.0), ("127.0.0.1", udp))
            k += 1
            time.sleep(1e-3)
            while True:
                try:
                    replies.append(_WRENCH.unpack(dev.recv(1024)))
                except (BlockingIOError, ConnectionRefusedError):
                    break
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        proc.kill()
        dev.close()
    assert proc.returncode == 0, stderr
    assert stdout.startswith("periods 200 ")
    rows = np.loadtxt(log, delimiter=",", skiprows=1, ndmin=2)
    a = 50
    assert rows.shape == (200, a + dyn.n_q + dyn.n_u)
    used = np.flatnonzero(rows[:, 19] == 0)
    assert used.size >= 150
    worst = 0.0
    for i in used:
        t, q, u = rows[i, 0], rows[i, a:a + dyn.n_q], rows[i, a + dyn.n_q:]
        pose = cp.point_floats(t, q, u)
        wrench = cp.wrench_floats(pose, rows[i, 1:4], rows[i, 4:7], rows[i, 26:35], rows[i, 35:38])
        worst = max(worst, np.abs(np.array(wrench[:3]) - rows[i, 13:16]).max(),
                    np.abs(np.array(wrench[3:6]) - rows[i, 23:26]).max(), np.abs(np.array(pose[6:]) -
                                                                                rows[i, 38:50]).max())
    assert worst <= 1e-12
    assert np.abs(rows[used, 23:26]).max() > 0.1 and np.linalg.norm(rows[used, 23:26], axis=1).max() <= 0.5 + 1e-12
    stepper = dyn.stepper(0.0, q0, u0, params, dyn.model.input_values())
    worst_step = 0.0
    for i in range(199):
        stepper.set_state(rows[i, 0], rows[i, a:a + dyn.n_q], rows[i, a + dyn.n_q:])
        stepper.inputs[cp.input_index] = np.concatenate([rows[i, 13:16], rows[i, 23:26]])
        stepper.step(1, 1e-3)
        worst_step = max(worst_step, np.abs(stepper.q - rows[i + 1, a:a + dyn.n_q]).max(),
                         np.abs(stepper.u - rows[i + 1, a + dyn.n_q:]).max())
    assert worst_step <= 1e-12
    by_t = {round(r[0] * 1e3): r for r in rows}
    *sent, last = replies
    assert len(sent) >= 100 and last[5:] == (0.0,) * 6
    for magic, version, flags, seq, t, *wrench in sent:
        assert (magic, version, flags) == (b"KRTF", 2, 0)
        row = by_t[round(t * 1e3)]
        np.testing.assert_allclose(wrench, -np.concatenate([row[13:16], row[23:26]]), rtol=0, atol=1e-12)
