"""``kane realtime``: the closing summary and the log, on the virtual clock (no result depends on timing)."""

import io
import json
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import ArgumentError, ModelError
from kane.io.model_file import load_model
from kane.realtime.command import _status_writer, parse_couple
from kane.realtime.log_reader import load_realtime_log
from kane.realtime.model_table import realtime_settings

CHAIN = "examples/planar_chain.toml"


def test_the_command_prints_the_summary_and_writes_the_log(tmp_path):
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "link7:1,0,0", "--rate", "500", "--duration",
                                    "0.4", "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "status: completed" in lines[0]
    assert lines[1].startswith("missed deadlines: ") and lines[1].endswith(" of 200 periods")
    assert lines[2].startswith("compute time per period: p50 ")
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "completed" and int(f["n_committed"][0]) == 200
        # the chain starts horizontal along x: the tip of link7 (1 m along its x) is 7 m out
        assert f["point_position"][0].tolist() == pytest.approx([7.0, 0.0, 0.0], abs=1e-12)


def test_a_body_that_does_not_exist_is_named_with_the_bodies(tmp_path):
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "handle", "--virtual-clock", "-o",
                                    str(tmp_path / "x.h5")])
    assert res.exit_code == 2
    assert "no body named 'handle'; bodies: link1, link2" in res.output


def test_parse_couple():
    assert parse_couple("link7:1,0,0.5") == ("link7", (1.0, 0.0, 0.5))
    assert parse_couple("link7") == ("link7", (0.0, 0.0, 0.0))
    with pytest.raises(ArgumentError, match="three finite numbers"):
        parse_couple("link7:1,0")


CART = "examples/shopping_cart.toml"


def test_the_model_files_realtime_table_is_all_the_command_needs(tmp_path):
    out = tmp_path / "cart.h5"
    res = CliRunner().invoke(main, ["realtime", CART, "--device", "sim", "--duration", "0.3", "--virtual-clock",
                                    "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "status: completed" in res.output and "missed deadlines: " in res.output
    assert " of 300 periods" in res.output  # rate 1000 Hz from the table, 0.3 s
    with h5py.File(out, "r") as f:
        x_h, v_h = f["hand_position"][:], f["hand_velocity"][:]
        x_b, v_b, force = f["point_position"][:], f["point_velocity"][:], f["force"][:]
    # [realtime] point = [-0.3, 0, 0] of body B, which starts at the origin with q3 = 0
    assert x_b[0].tolist() == pytest.approx([-0.3, 0.0, 0.0], abs=1e-12)
    # the coupler's gains of the table, K = 500 N/m and B = 5 N s/m (no saturation below max_force = 40 N)
    np.testing.assert_allclose(force, 500.0 * (x_h - x_b) + 5.0 * (v_h - v_b), rtol=0, atol=1e-9)
    # the hand walks forward along +x (hand_path = "line"); the file's shove F = F0 exp(-t/T) (20 N at first) drives
    # the cart ahead of it, and the coupler holds the cart back
    assert x_b[-1, 0] - x_b[0, 0] > x_h[-1, 0] - x_h[0, 0] > 0.005 and force[-1, 0] < 0


def _cart_with(tmp_path, table):
    text = Path(CART).read_text().split("[realtime]")[0] + "[realtime]\n" + table
    path = tmp_path / "cart.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("table, message", [
    ('body = "basket"\n', r"\[realtime\], key 'body' \(line \d+\): no body named 'basket'; expected one of: B, C"),
    ('body = "B"\nstiffnes = 3.0\n', r"\[realtime\], key 'stiffnes' \(line \d+\): unknown key; allowed keys: body"),
    ('body = "B"\ndevice = "mouse"\n',
     r"\[realtime\], key 'device' \(line \d+\): expected one of 'sim', 'udp', 'replay'"),
    ('body = "B"\nrate = -5\n', r"\[realtime\], key 'rate' \(line \d+\): expected a number > 0, got -5"),
    ('body = "B"\npoint = [1, 2]\n',
     r"\[realtime\], key 'point' \(line \d+\): expected a list of 3 numbers or expression strings, got 2 items"),
    ('body = "B"\npoint = ["q3", 0, 0]\n',
     r"\[realtime\], key 'point' \(line \d+\): bad expression 'q3', column 1: unknown name 'q3'; known names: t, g"),
])
def test_realtime_table_errors_name_the_file_table_and_key(tmp_path, table, message):
    path = _cart_with(tmp_path, table)
    with pytest.raises(ModelError, match=rf"model file {re.escape(str(path))}: {message}"):
        realtime_settings(load_model(path))
    res = CliRunner().invoke(main, ["realtime", str(path), "--virtual-clock", "-o", str(tmp_path / "x.h5")])
    assert res.exit_code == 2 and "[realtime]" in res.output


def test_the_coupled_point_may_be_an_expression_of_the_parameters(tmp_path):
    assert realtime_settings(load_model(CHAIN)).point == (1.0, 0.0, 0.0)  # ["l", 0, 0], the tip of link7
    longer = tmp_path / "chain.toml"
    longer.write_text(Path(CHAIN).read_text().replace("l = 1.0 ", "l = 1.5 "))
    assert realtime_settings(load_model(longer)).point == (1.5, 0.0, 0.0)


def test_no_coupling_point_anywhere_is_a_clear_error(tmp_path):
    res = CliRunner().invoke(main, ["realtime", "examples/spherical_wrist.toml", "--virtual-clock", "-o",
                                    str(tmp_path / "x.h5")])
    assert res.exit_code == 2 and "give --couple BODY:X,Y,Z, or body (and point)" in res.output


class _Tty(io.StringIO):
    def isatty(self):
        return True


LOCK = "examples/shopping_cart_caster_lock.toml"


def test_the_switching_tables_lock_the_caster_inside_the_loop(tmp_path):
    """[[switching]] locks the swivel from 2 s to 4 s: the command runs the switched cart (compiled modes) and the
    log shows the lock held (the swivel rate w4 zero, its angle q4 still) only inside the interval, with a plastic
    lock that takes kinetic energy out."""
    out = tmp_path / "lock.h5"
    res = CliRunner().invoke(main, ["realtime", LOCK, "--duration", "4.5", "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "switched constraints, 2 modes compiled to C (any other on line)" in res.output
    assert "mode changes: 2, lock 1, unlock 1" in res.output
    assert load_realtime_log(out).counts["plant"] == "switched constraints, 2 modes compiled to C (any other on line)"
    with h5py.File(out, "r") as f:
        t, q, u, mode = f["t"][:], f["q"][:], f["u"][:], f["mode"][:]
        u_names, modes = json.loads(f.attrs["u_names"]), json.loads(f.attrs["modes"])
        kinds, times = f["events/kind"].asstr()[:].tolist(), f["events/t"][:]
        data = [json.loads(d) for d in f["events/data"].asstr()[:]]
    assert kinds == ["lock", "unlock"] and times.tolist() == pytest.approx([2.0, 4.0], abs=1e-12)
    w4 = u[:, u_names.index("w4")]
    locked = (t > 2.0) & (t <= 4.0)  # a row holds the state at the period's start
    assert np.all(np.abs(w4[locked]) < 1e-9) and np.ptp(q[locked, 3]) < 1e-9
    assert np.all(np.asarray(modes)[mode[locked]] == "caster_lock")
    assert np.max(np.abs(w4[t < 2.0])) > 0.1 and np.max(np.abs(w4[t > 4.01])) > 1e-3
    assert data[0]["delta_kinetic"] < 0.0


def test_status_line_is_rewritten_in_place_on_a_tty_only():
    assert _status_writer(io.StringIO())[0] is None
    stream = _Tty()
    status, end = _status_writer(stream)
    status("t 1.00 s  periods 1000")
    status("t 2.00 s  periods 20")
    end()
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") == 4
    assert text.split("\r")[2] == "t 2.00 s  periods 20  "  # padded over the longer previous line
    assert text.endswith("\r" + " " * 22 + "\r")


SCHEDULED = """
[model]
name = "scheduled"

[parameters]
m = 2.0
F0 = 3.0

[inputs]
F = "F0*sin(5*t)"               # drives the particle on the x rail; the hand holds the other one

[[bodies]]
name = "driven"
mass = "m"
particle = true

[[bodies]]
name = "handle"
mass = 1.0
particle = true

[[joints]]
name = "rail_x"
parent = "ground"
child = "driven"
type = "prismatic"
axis = "x"
coordinates = ["x"]
speed_names = ["vx"]

[[joints]]
name = "rail_y"
parent = "ground"
child = "handle"
type = "prismatic"
axis = "y"
coordinates = ["y"]
speed_names = ["vy"]

[[loads]]
type = "force"
body = "driven"
vector = ["F", 0, 0]

[realtime]
body = "handle"
rate = 500.0
"""


def test_the_model_files_input_schedules_are_held_over_each_period(tmp_path):
    """The schedule F(t) = F0 sin(5 t) is sampled at each period's start t_k = k T and held over the period (as the
    coupler force is): the driven particle's speed after k periods is sum_j F(t_j) T / m, its position
    sum_j (v_j T + F(t_j) T^2 / (2 m)) (hand derivation; RK4 is exact for a constant force)."""
    path = tmp_path / "scheduled.toml"
    path.write_text(SCHEDULED)
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", str(path), "--device", "sim", "--duration", "0.5",
                                    "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "inputs from the model's schedules, held over each period: F" in res.output
    with h5py.File(out, "r") as f:
        t, q, u = f["t"][:], f["q"][:], f["u"][:]  # each row: the state at the period's start
    m, T = 2.0, 1.0 / 500.0
    force = 3.0 * np.sin(5.0 * t)
    v = np.concatenate([[0.0], np.cumsum(force * T / m)])
    x = np.concatenate([[0.0], np.cumsum(v[:-1] * T + force * T ** 2 / (2 * m))])
    assert len(t) == 250
    np.testing.assert_allclose(u[:, 0], v[:-1], rtol=0, atol=1e-13)
    np.testing.assert_allclose(q[:, 0], x[:-1], rtol=0, atol=1e-13)
    assert np.ptp(q[:, 1]) > 0  # the hand moves the handle, not the driven particle


def test_a_schedule_that_is_not_finite_stops_the_loop_with_the_time(tmp_path):
    path = tmp_path / "scheduled.toml"
    path.write_text(SCHEDULED.replace('F = "F0*sin(5*t)"', 'F = "F0*sqrt(0.1 - t)"'))
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", str(path), "--device", "sim", "--duration", "0.5",
                                    "--virtual-clock", "-o", str(out)])
    assert "status: failed: the input F is nan at t = 0.102 s" in res.output, res.output
    with h5py.File(out, "r") as f:
        assert f.attrs["status"].startswith("failed: the input F is nan") and f["t"][-1] == pytest.approx(0.102)


def test_schedules_drive_the_compiled_modes_of_a_switching_model(tmp_path):
    """The driven particle locked (a plastic lock: v = 0) from 0.1 s to 0.2 s under the same held schedule: while
    locked it stands still; after the unlock its speed is the sum of F(t_j) T / m over the periods since 0.2 s."""
    text = SCHEDULED + ('\n[[constraints]]\nname = "hold"\ntype = "joint_lock"\njoint = "rail_x"\ntransient = true\n'
                        '\n[[switching]]\ntype = "lock"\nconstraint = "hold"\non = [[0.1, 0.2]]\n')
    path = tmp_path / "locked.toml"
    path.write_text(text)
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", str(path), "--device", "sim", "--duration", "0.4",
                                    "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "switched constraints, 2 modes compiled to C (any other on line)" in res.output
    assert "mode changes: 2, lock 1, unlock 1" in res.output
    with h5py.File(out, "r") as f:
        t, u = f["t"][:], f["u"][:]
    T, m = 1.0 / 500.0, 2.0
    locked = (t > 0.1 + 1e-9) & (t < 0.2 - 1e-9)
    assert locked.sum() == 49 and np.all(np.abs(u[locked, 0]) < 1e-12)
    k0 = int(np.flatnonzero(t > 0.2 - 1e-9)[0])  # the first period after the unlock
    v = np.cumsum(3.0 * np.sin(5.0 * t[k0:]) * T / m)
    np.testing.assert_allclose(u[k0 + 1:, 0], v[:-1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("rate, message", [
    ("0", "rate must be a finite frequency > 0 Hz, got 0.0"),
    ("nan", "rate must be a finite frequency > 0 Hz, got nan"),
    ("1e9", "rate 1e+09 Hz is above 100000 Hz, the most the real clock runs"),
])
def test_a_rate_the_loop_cannot_run_is_refused_before_anything_starts(tmp_path, rate, message):
    out = tmp_path / "x.h5"
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "link7", "--rate", rate, "-o", str(out)])
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output
    assert not out.exists() and not Path(str(out) + ".partial").exists()


def _not_hdf5(path):
    path.write_text("hello")


def _other_hdf5(path):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "kane.sweep"


def _no_rows(path):
    with h5py.File(path, "w") as f:
        f.attrs.update({"format": "kane.realtime_log", "status": "running"})
        for name, shape in (("t", (0,)), ("hand_position", (0, 3)), ("hand_velocity", (0, 3))):
            f.create_dataset(name, shape=shape, dtype=float)
        f["n_committed"] = np.zeros(1, dtype=np.int64)


def _no_velocity(path):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "kane.realtime_log"
        f["t"], f["hand_position"], f["n_committed"] = np.zeros(2), np.zeros((2, 3)), np.array([2])


@pytest.mark.parametrize("write, message", [
    (_not_hdf5, "not a readable HDF5 file"),
    (_other_hdf5, "not a log of kane realtime (format attribute 'kane.sweep', expected 'kane.realtime_log')"),
    (_no_rows, "no period was recorded (status 'running')"),
    (_no_velocity, "no dataset hand_velocity"),
])
def test_a_replay_file_that_is_not_a_log_is_named_with_what_it_lacks(tmp_path, write, message):
    bad = tmp_path / "bad.h5"
    write(bad)
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "link7", "--device", "replay", "--replay", str(bad),
                                    "--virtual-clock", "-o", str(tmp_path / "x.h5")])
    assert res.exit_code == 2 and f"replay log {str(bad)!r}: {message}" in res.output, res.output


def test_the_held_disk_example_runs_from_its_realtime_table_and_its_energy_balances(tmp_path):
    # seed 000's disk on the ramp, held by the brake, released at 0.5 s and caught at 1.5 s, its centre held by a
    # still hand; the brake's mode (rolling and the brake: no free speed) runs compiled as the free one does
    out = tmp_path / "disk.h5"
    res = CliRunner().invoke(main, ["realtime", "examples/disk_on_ramp_held.toml", "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "modes compiled to C" in res.output and "mode changes: 2, unlock 1, lock 1" in res.output
    assert "of 3000 periods" in res.output and "warning" not in res.output
    with h5py.File(out, "r") as f:
        t, q, force = f["t"][:], f["q"][:], f["force"][:]
        x, energy = f["point_position"][:], f["energy"][:]
        assert f["events/t"][:].tolist() == pytest.approx([0.5, 1.5], abs=1e-12)
        assert f["events/kind"].asstr()[:].tolist() == ["unlock", "lock"]
        lost = json.loads(f["events/data"].asstr()[1])["delta_kinetic"]
    held, caught = t < 0.5, t > 1.5
    assert np.all(q[held, 0] == 1.0) and np.all(force[held] == 0.0)  # the hand at the disk: no pull
    assert np.ptp(q[caught], axis=0).max() == 0.0 and lost < -1e-3  # caught: still; the impulse took energy
    assert force[(t > 0.6) & (t < 1.5), 0].max() > 5.8  # released: the pull down the ramp, m g sin(theta) at rest
    # a force held over a period does the work F . dx on the point: energy(k + 1) - energy(k) = F_k . dx_k in every
    # period (under forces held constant the disk accelerates uniformly, which RK4 integrates exactly), but in the
    # period that starts with the catch, which also loses what the impulse took
    balance = np.diff(energy) - np.sum(force[:-1] * np.diff(x, axis=0), axis=1)
    k = int(np.argmin(np.abs(t - 1.5)))
    assert balance[k] == pytest.approx(lost, abs=1e-12)
    assert np.abs(np.delete(balance, k)).max() < 1e-12


def test_dynamics_every_k_periods_check_the_gains_at_the_dynamics_period(tmp_path):
    out = tmp_path / "slow.h5"
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--dynamics-every", "10", "--damping", "1", "--duration", "0.2",
                                    "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    # the coupler acts on dynamics sampled at k T = 10 ms: the bound is K k T / 2 = 1000 * 0.01 / 2 = 5 N s/m
    assert "below the sampled-data passivity bound B >= K T / 2 = 1000 * 0.01 / 2 = 5 N s/m" in res.output
    # and the step is too long for the tip's effective mass with the dynamics a step behind (K h^2 / m = 0.345: the
    # step map's spectral radius is above 1; tests/realtime/test_coupler_stability.py checks the maps)
    assert ("unstable on the coupled point with the dynamics a step behind, back within the next step (spectral "
            "radius 1.091 of the step's map; a = K h^2 / m = 0.345, b = B h / m = 0.0345") in res.output
    assert "the dynamics every 10 periods, a step behind the coupler" in res.output and " of 200 periods" in res.output
    with h5py.File(out, "r") as f:
        q = f["q"][:]
    # the chain starts at rest: its first step (periods 0-9) is seen from period 20 on, the next from period 30
    assert np.all(q[:20] == q[0]) and np.any(q[20] != q[0])
    assert np.all(q[20:30, 0] - q[20, 0] == pytest.approx((np.arange(10)) * (q[21, 0] - q[20, 0]), abs=1e-15))


def test_the_summary_says_what_misses_and_saturation_mean_with_their_counts(tmp_path):
    """The closing summary explains a missed deadline and a saturated period in one line each, with the counts the
    log records; a 0.5 N force limit on the cart saturates the coupler in some periods."""
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", CART, "--device", "sim", "--duration", "0.3", "--max-force", "0.5",
                                    "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    miss = [ln for ln in lines if ln.startswith("  (a missed deadline: ")]
    sat = [ln for ln in lines if ln.startswith("saturated periods: ")]
    assert len(miss) == 1 and miss[0].endswith(" of 300 here)") and "1000 us after its start" in miss[0]
    assert len(sat) == 1 and "--max-force (0.5 N)" in sat[0]
    k = int(sat[0].split(":")[1].split(" of ")[0])
    assert 0 < k <= 300 and sat[0].startswith(f"saturated periods: {k} of 300: ")
    assert load_realtime_log(out).counts["saturated"] == k
    assert "--priority" not in res.output  # no advice under the virtual clock: nothing waits there


@pytest.mark.parametrize("missed, priority, advised", [(5, 0, True), (1, 0, False), (5, 80, False)])
def test_priority_is_suggested_above_one_percent_of_misses_at_priority_zero(missed, priority, advised):
    """More than 1 % of 200 periods missed (5, 2.5 %) at priority 0: the hint names --priority; 1 miss (0.5 %) or a
    run already at priority 80: no hint."""
    from types import SimpleNamespace

    from kane.realtime.command import _meaning_lines
    from kane.realtime.stats import DeadlineSummary
    d = DeadlineSummary(1e-3, 200, missed, 1e-4, 2e-4, 3e-4, 0.0, 0.0, ())
    lines = _meaning_lines(SimpleNamespace(deadlines=d, saturated=7), 20.0, None, priority, False)
    assert lines[1].startswith("saturated periods: 7 of 200: ") and "--max-force (20 N)" in lines[1]
    hint = [ln for ln in lines if "--priority N" in ln]
    assert bool(hint) is advised
    if advised:
        assert hint[0].startswith(f"hint: {100 * missed / 200:.1f} % of the deadlines were missed")


def test_a_second_run_writes_a_numbered_log_and_leaves_the_first(tmp_path):
    """Two runs with the same -o: the first writes rt.h5, the second rt-1.h5 (said on stderr and in the summary's
    log line); rt.h5 keeps the first run's 200 periods while the second ran 100."""
    out = tmp_path / "rt.h5"
    args = ["realtime", CHAIN, "--couple", "link7:1,0,0", "--rate", "500", "--virtual-clock", "-o", str(out)]
    first = CliRunner().invoke(main, [*args, "--duration", "0.4"])
    second = CliRunner().invoke(main, [*args, "--duration", "0.2"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    numbered = tmp_path / "rt-1.h5"
    assert f"writing {numbered}" in second.output and f"log: {numbered}" in second.output
    assert load_realtime_log(out).deadlines.periods == 200
    assert load_realtime_log(numbered).deadlines.periods == 100
