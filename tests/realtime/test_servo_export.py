"""The standalone servo program (kane.realtime.servo_export, ``kane export-c MODEL --servo``): built with the system
compiler and warnings as errors, fed replayed state packets on loopback in lockstep by this test acting as the
device, it sends back the same forces and logs the same rows as kane's Python period and its C period on the same
device log, to 1e-12; hostile names leave no user text in servo.c outside comments; what it does not run is refused
by name."""

import re
import shutil
import socket
import subprocess
from collections import Counter
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane import joints as J
from kane import realtime as rt
from kane.cli import main
from kane.errors import KaneError
from kane.io.model_file import LoadedModel, load_model
from kane.realtime.servo_export import export_servo
from kane.realtime.udp import pack_state, quaternion_matrix, unpack_force, unpack_wrench

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler on this machine")
FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L", "-ffp-contract=off"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _build(directory: Path) -> Path:
    """servo built from its sources with the strict flags (warnings are errors); its path."""
    out = subprocess.run([CC, *FLAGS, "-o", "servo", "servo.c", "period.c", "model.c", "-lpthread", "-lm"],
                         cwd=directory, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return directory / "servo"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lockstep(program: Path, packets: list, log: Path, duration: float, pose: bool) -> tuple:
    """Run ``program --replay`` and act as its device: send each state packet, wait for its reply. (replies
    [(seq, t, force (3,) [, torque (3,)])], the program's stdout)."""
    port = _free_port()
    replies: list = []
    proc = subprocess.Popen([str(program), "--replay", "--port", str(port), "--duration", repr(duration),
                             "--log", str(log), "--priority", "0", "--wait", "10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "lockstep on udp" in proc.stderr.readline()  # written once it listens: nothing sent is lost
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as dev:
            dev.bind(("127.0.0.1", 0))
            dev.settimeout(20.0)
            for packet in packets:  # one state, one reply: lockstep
                dev.sendto(packet, ("127.0.0.1", port))
                data = dev.recv(256)
                replies.append(unpack_wrench(data) if pose else unpack_force(data))
            data = dev.recv(256)  # the zero force after the run
            replies.append(unpack_wrench(data) if pose else unpack_force(data))
    finally:
        if proc.poll() is None and len(replies) < len(packets) + 1:  # a failed exchange: stop it
            proc.kill()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return replies, out


def _csv(path: Path, columns) -> dict:
    """The log's columns by kane log name: t, force (N, 3), q (N, n_q), ..."""
    with open(path) as f:
        header = f.readline().strip().split(",")
    assert tuple(header) == tuple(columns)
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    out: dict = {}
    for j, name in enumerate(header):
        base = re.sub(r"\[\d+\]$", "", name)
        out.setdefault(base, []).append(data[:, j])
    return {k: np.stack(v, 1) if len(v) > 1 or k in ("q", "u") else v[0] for k, v in out.items()}


def _kane_runs(plan, make_device, duration, tmp_path):
    """(Python period's log, C period's log, their devices) on the same replayed device log, virtual clock."""
    runs = []
    for path in (rt.LoopPath.PYTHON, rt.LoopPath.C):
        dev = make_device()
        o = plan.options
        opts = rt.LoopOptions(rate=o.rate, duration=duration, substeps=o.substeps, dynamics_every=o.dynamics_every,
                              clock=rt.ClockMode.VIRTUAL, loop_path=path)
        log = tmp_path / f"{path.value}.h5"
        result = rt.RealtimeLoop(plan.coupler, dev, plan.q0, plan.u0, params=plan.params, options=opts,
                                 log=log).run()
        assert result.loop_path == path.value and result.status == "completed"
        runs.append((h5py.File(log, "r"), dev))
    return runs


def _same(servo: dict, f, n: int) -> None:
    """Every column of the servo's log but the timings equal to the kane log's to 1e-12 (NaN where NaN)."""
    names = [k for k in servo if k not in ("compute_time", "lateness")]
    assert len(names) >= 13  # t, hand, point, force, power, energies, status, mode, q, u
    for name in names:
        ref = f[name][()]
        assert ref.shape[0] == n, name
        np.testing.assert_allclose(servo[name].reshape(ref.shape), ref, rtol=0, atol=1e-12, err_msg=name)


@needs_cc
@pytest.mark.parametrize("slow", ["", "dynamics_every = 3\nsubsteps = 2\n"], ids=["single-rate", "every-3"])
def test_the_servo_program_matches_kanes_periods_on_the_chain_point_coupler(tmp_path, slow):
    # the 7-link chain of examples/planar_chain.toml, its tip coupled ([realtime]: 1 kHz, K = 1000 N/m, 100 N); a
    # hand circling 0.3 m around the tip (the 100 N limit cuts part of it), one NaN state (refused); and the
    # slow-rate scheme (the dynamics every 3 periods with the mean force, 2 substeps, the point extrapolated)
    (tmp_path / "chain.toml").write_text((EXAMPLES / "planar_chain.toml").read_text() + slow)
    res = export_servo(load_model(tmp_path / "chain.toml"), tmp_path / "servo")
    program = _build(res.directory)
    plan, n = res.plan, 600
    T = plan.options.period
    assert (T, plan.coupler.gains.stiffness, plan.coupler.max_force) == (1e-3, 1000.0, 100.0)
    assert plan.options.dynamics_every == (3 if slow else 1)
    x0, _ = plan.coupler.point_state(0.0, plan.q0, plan.u0)
    t = np.arange(n) * T
    w = 2 * np.pi * 2
    pos = x0 + 0.3 * np.stack([np.sin(w * t), 1 - np.cos(w * t), 0 * t], 1)
    vel = 0.3 * w * np.stack([np.cos(w * t), np.sin(w * t), 0 * t], 1)
    pos[100] = np.nan
    packets = [pack_state(k, 1000.0 + t[k], pos[k], vel[k]) for k in range(n)]
    replies, out = _lockstep(program, packets, tmp_path / "servo.csv", n * T, pose=False)
    assert "status: completed" in out and "samples refused: 1, missing: 0" in out
    servo = _csv(tmp_path / "servo.csv", res.columns)
    (fp, dp), (fc, dc) = _kane_runs(plan, lambda: rt.Replay(t, pos, vel, max_force=100.0, workspace=plan.workspace),
                                    n * T, tmp_path)
    _same(servo, fp, n)
    _same(servo, fc, n)
    saturated = np.linalg.norm(fp["force"][()], axis=1) >= 100.0 - 1e-9
    assert 0 < saturated.sum() < n  # the limit cut some periods, not all
    assert [r[0] for r in replies[:n]] == list(range(n))  # each reply echoes the state it answers
    sent = np.array([r[2] for r in replies])
    for dev in (dp, dc):  # what the device displays: -force each period, zero after the run
        np.testing.assert_allclose(sent, np.array([f for _, f in dev.forces]), rtol=0, atol=1e-12)
    assert np.all(sent[-1] == 0.0) and np.abs(sent).max() > 50.0


_BALL = """
[model]
name = "ball"
[parameters]
m = 1.0
[[bodies]]
name = "b"
mass = "m"
inertia = [0.01, 0.02, 0.03]
[[joints]]
name = "ball"
parent = "ground"
child = "b"
type = "spherical"
[realtime]
body = "b"
stiffness = 10.0
damping = 1.0
rotational_stiffness = 1.0
rotational_damping = 0.05
max_torque = 0.5
substeps = 2
"""


@needs_cc
def test_the_servo_program_matches_kanes_periods_on_a_ball_joint_pose_coupler(tmp_path):
    # a body on a ball joint, a handle turning about a tilted axis (protocol version 2), the torque cut at 0.5 N m
    (tmp_path / "ball.toml").write_text(_BALL)
    res = export_servo(load_model(tmp_path / "ball.toml"), tmp_path / "servo")
    program = _build(res.directory)
    plan, n = res.plan, 300
    T = plan.options.period
    t = np.arange(n) * T
    angle = 1.5 * np.sin(4 * t)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    quat = np.concatenate([np.cos(angle / 2)[:, None], np.sin(angle / 2)[:, None] * axis], 1)
    R = np.array([quaternion_matrix(*e) for e in quat])  # what the device's quaternion means to kane
    w = (6 * np.cos(4 * t))[:, None] * axis
    zero = np.zeros((n, 3))
    packets = [pack_state(k, t[k], zero[k], zero[k], quat[k], w[k]) for k in range(n)]
    replies, out = _lockstep(program, packets, tmp_path / "servo.csv", n * T, pose=True)
    assert "status: completed" in out
    servo = _csv(tmp_path / "servo.csv", res.columns)
    (fp, dp), (fc, dc) = _kane_runs(plan, lambda: rt.Replay(t, zero, zero, max_force=20.0, workspace=plan.workspace,
                                                            orientation=R, angular_velocity=w), n * T, tmp_path)
    assert "body_orientation" in servo and "torque" in servo
    _same(servo, fp, n)
    _same(servo, fc, n)
    torque = np.array([r[3] for r in replies])
    assert np.abs(torque).max() > 0.1 and np.linalg.norm(torque, axis=1).max() <= 0.5 + 1e-12
    for dev in (dp, dc):
        np.testing.assert_allclose(torque, np.array([f for _, f in dev.torques]), rtol=0, atol=1e-12)


def _two_links(names: list, model: str) -> kane.System:
    """A double pendulum whose model, bodies, joints, parameters, coordinates and speeds are named by ``names``."""
    s = kane.System(model)
    g, L, m = s.parameter(names[0], 9.81), s.parameter(names[1], 0.8), s.parameter(names[2], 1.3)
    s.gravity = (0, -g, 0)
    s.add_body(names[3], mass=m, com=(L / 2, 0, 0), inertia=(0.01, m * L ** 2 / 12, m * L ** 2 / 12))
    s.add_body(names[4], mass=m / 2, com=(L / 2, 0, 0), inertia=(0.01, 0.02, 0.02))
    s.add_joint("ground", names[3], J.Revolute("z"), name=names[5], coordinates=[names[6]], speeds=[names[7]])
    s.add_joint(names[3], names[4], J.Revolute("z"), name=names[8], parent_point=(L, 0, 0), coordinates=[names[9]],
                speeds=[names[10]])
    return s


def _tokens(text: str) -> Counter:
    """The C tokens (identifiers, numbers, string literals, other characters) of ``text`` outside comments, counted
    (sympy may order a sum's terms by their names: the count is what names cannot change)."""
    code = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return Counter(re.findall(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_]\w*|[0-9][\w.]*|\S', code))


@needs_cc
def test_hostile_names_leave_no_user_text_in_servo_c(tmp_path):
    # the same model under hostile names (comment breakers, Makefile lines, trigraphs, C macros, non-ASCII) and
    # under plain ones: servo.c is the same text outside comments, and builds without running anything planted
    marker = tmp_path / "pwned"
    bad = [f'*/ system("touch {marker}"); /*', f"\n\tall:\n\ttouch {marker}\n", "x ??= ??/\n??' \\"]
    hostile = ["NULL", "INFINITY", "main", bad[0], bad[2], bad[1], "EOF", "stdin", bad[2] + "j", "\u03b8", "main_"]
    plain = ["g", "L", "m", "b1", "b2", "j1", "q1", "u1", "j2", "q2", "u2"]
    texts = []
    for names, model, where in ((hostile, bad[1] + bad[0], "hostile"), (plain, "plain", "plain")):
        res = export_servo(LoadedModel.from_system(_two_links(names, model)), tmp_path / where,
                           couple=f"{names[4]}:0.3,0,0")
        texts.append((res.directory / "servo.c").read_text())
        assert "pwned" not in (res.directory / "Makefile").read_text()
    assert _tokens(texts[0]) == _tokens(texts[1]) and texts[0].isascii()
    assert "touch" not in _tokens(texts[0]) and "out[5] = " in texts[0]
    _build(tmp_path / "hostile")
    assert not marker.exists()


def test_what_the_servo_program_does_not_run_is_refused_by_name(tmp_path):
    chain = (EXAMPLES / "planar_chain.toml").read_text()
    switching = EXAMPLES / "shopping_cart_caster_lock.toml"
    with pytest.raises(KaneError, match=r"does not run the \[\[switching\]\] rules"):
        export_servo(load_model(switching), tmp_path / "out")
    (tmp_path / "nobody.toml").write_text(chain.split("[realtime]")[0])
    with pytest.raises(KaneError, match=r"needs the coupled body"):
        export_servo(load_model(tmp_path / "nobody.toml"), tmp_path / "out2")
    with pytest.raises(KaneError, match=r"export-c --servo does not run the \[\[contacts\]\]"):
        export_servo(load_model(EXAMPLES / "ball_in_bowl.toml"), tmp_path / "out3")
    (tmp_path / "schedule.toml").write_text(chain + '\n[inputs]\nF = "0.5*sin(t)"\n')
    with pytest.raises(KaneError, match=r"does not run the \[inputs\] schedules \(F\)"):
        export_servo(load_model(tmp_path / "schedule.toml"), tmp_path / "out5")
    with pytest.raises(KaneError, match=r"does not run dependent speeds \(v1, v2, v3: constraints\)"):
        export_servo(load_model(EXAMPLES / "rolling_disk.toml"), tmp_path / "out4", couple="disk")
    r = CliRunner().invoke(main, ["export-c", str(switching), "--servo", "-o", str(tmp_path / "o5")])
    assert r.exit_code != 0 and "[[switching]]" in r.output and "Traceback" not in r.output


@needs_cc
def test_the_servo_program_waits_for_its_device_and_stops_when_it_stops_answering(tmp_path):
    # the real clock: no state packet within --wait: exit 1 naming the port; one packet, then silence: the newest
    # state is held for 5 ms, then the run stops after the timeout's 10 missing states (10 ms at 1 kHz)
    res = export_servo(load_model(EXAMPLES / "planar_chain.toml"), tmp_path / "servo")
    program = _build(res.directory)
    port = _free_port()
    run = [str(program), "--port", str(port), "--duration", "5", "--priority", "0", "--log", str(tmp_path / "l.csv")]
    out = subprocess.run(run + ["--wait", "0.2"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and f"no valid state packet on udp 127.0.0.1:{port} within 0.2 s" in out.stderr
    proc = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "listening on udp" in proc.stderr.readline()
    x0, _ = res.plan.coupler.point_state(0.0, res.plan.q0, res.plan.u0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as dev:
        dev.sendto(pack_state(7, 0.0, x0, np.zeros(3)), ("127.0.0.1", port))
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "status: device stopped answering" in out and "received 1, used 1" in out
    rows = np.loadtxt(tmp_path / "l.csv", delimiter=",", skiprows=1, ndmin=2)
    status = rows[:, res.columns.index("sample_status")]
    assert status[0] == 0 and np.all(status[-10:] == 2) and rows.shape[0] < 1000  # stopped within 1 s, not 5
    bad = subprocess.run([str(program), "--port", "70000"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "bad option or value: --port 70000" in bad.stderr


def test_the_cli_writes_the_servo_program(tmp_path):
    r = CliRunner().invoke(main, ["export-c", str(EXAMPLES / "planar_chain.toml"), "--servo", "-o",
                                  str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert "servo.c" in r.output and "make -C" in r.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["Makefile", "model.c", "model.h", "period.c",
                                                                   "period.h", "servo.c"]
    assert "#define SERVO_RATE 1000.0" in (tmp_path / "out" / "servo.c").read_text()
    if CC is not None and shutil.which("make"):  # the Makefile's own flags: warnings are errors there too
        made = subprocess.run(["make", "-C", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
        assert made.returncode == 0 and "-Werror" in made.stdout, made.stderr
        assert subprocess.run([str(tmp_path / "out" / "servo"), "--help"], capture_output=True).returncode == 0


def test_couple_without_servo_is_refused_by_name():
    from click.testing import CliRunner

    from kane.cli import main

    chain = Path(__file__).resolve().parents[2] / "examples" / "planar_chain.toml"
    done = CliRunner().invoke(main, ["export-c", str(chain), "--couple", "link7:0,0,0"])
    assert done.exit_code == 2 and "--couple: only with --servo" in done.output
