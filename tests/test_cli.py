"""The ``kane`` command, run in-process with click's CliRunner."""

import json
import re
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.io.trajectory import load_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.mark.parametrize("command", [[], ["derive"], ["simulate"], ["plot"], ["info"]])
def test_help_of_every_command(runner, command):
    result = runner.invoke(main, command + ["--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: main" in result.output or "Usage: kane" in result.output
    text = " ".join(result.output.split())
    if not command:
        assert all(c in text for c in ("derive", "simulate", "plot", "info"))
    elif command == ["derive"]:
        assert "--format [text|latex|json]" in text and "--dependent" in text and "-o, --output" in text
    elif command == ["simulate"]:
        for opt in ("--t-end", "--method", "--rtol", "--atol", "--dt", "--output-dt", "-o, --output"):
            assert opt in text
        assert "dopri5" in text


def test_the_short_help_kept_for_the_commands_of_other_packages_is_their_own(runner):
    """`kane --help` shows study, realtime, assemble and view by the short help kept in kane.cli (their modules
    are not imported for it): it must be the commands' own."""
    from kane.cli import _PACKAGE_COMMANDS

    assert sorted(_PACKAGE_COMMANDS) == ["assemble", "realtime", "study", "view"]
    for name, (module, _, short_help) in _PACKAGE_COMMANDS.items():
        command = main.get_command(None, name)
        assert command.short_help == short_help and command.name == name and command.callback.__module__ == module
    text = " ".join(runner.invoke(main, ["--help"]).output.split())
    assert all(f"{name} {short_help[:40]}" in text for name, (_, _, short_help) in _PACKAGE_COMMANDS.items())


def test_derive_wrist_prints_dof_table_and_operation_counts(runner, tmp_path):
    out = tmp_path / "wrist.json"
    result = runner.invoke(main, ["derive", str(EXAMPLES / "spherical_wrist.toml"), "--format", "json",
                                  "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "spherical_wrist: 3 degrees of freedom" in text
    for head in ("joint", "rot x", "rot y", "rot z", "trn x", "trn y", "trn z"):
        assert head in text
    row = next(line for line in text.splitlines() if "wrist" in line and "gimbal" in line)
    assert row.count("DOF") == 3 and row.count("constraint") == 3
    for head in ("mul/div", "add/sub", "functions", "M (mass matrix)", "f (forcing)", "q' (kinematics)"):
        assert head in text
    data = json.loads(out.read_text())
    assert data["model"] == "spherical_wrist" and data["u_independent"] == ["u1", "u2", "u3"]
    assert data["operation_counts"]["M"]["mul_div"] == 0  # body-fixed speeds: a constant diagonal M


def test_derive_to_stdout_only_and_from_a_python_script(runner):
    result = runner.invoke(main, ["derive", str(EXAMPLES / "disk_on_ramp.toml"), "--format", "latex", "-o", "-"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("\\begin{align*}")
    result = runner.invoke(main, ["derive", str(EXAMPLES / "shopping_cart.py"), "--dependent", "v2,w4"])
    assert result.exit_code == 0, result.output
    assert "shopping_cart: 2 degrees of freedom" in result.output and "dependent: v2, w4" in result.output
    assert "M[0,0] =" in result.output


def test_simulate_writes_a_readable_file_then_plot_and_info(runner, tmp_path):
    h5 = tmp_path / "cart.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "shopping_cart.toml"), "-o", str(h5),
                                  "--t-end", "1.0", "--output-dt", "0.05"])
    assert result.exit_code == 0, result.output
    for row in ("function evaluations", "steps", "work-energy residual (relative)", "max constraint residual",
                "wall time"):
        assert row in result.output
    traj = load_trajectory(h5)
    assert traj.status == "completed" and traj.t[-1] == pytest.approx(1.0) and traj.n_samples == 21
    assert traj.q_names == ("q1", "q2", "q3", "q4") and traj.u_names == ("u1", "u2")
    assert traj.q[-1, 0] > 0.0  # pushed forward along b1
    assert max(abs(traj.residuals["constraint"])) < 1e-12
    for suffix in (".png", ".svg"):
        image = tmp_path / f"cart{suffix}"
        result = runner.invoke(main, ["plot", str(h5), "-o", str(image)])
        assert result.exit_code == 0, result.output
        assert image.stat().st_size > 1000
    result = runner.invoke(main, ["info", str(h5)])
    assert result.exit_code == 0, result.output
    for word in ("shopping_cart", "completed", "21", "dopri5", "mB", "L3", "q4"):
        assert word in result.output


def test_simulate_rk4_options_on_the_chain(runner, tmp_path):
    h5 = tmp_path / "chain.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "planar_chain.toml"), "-o", str(h5), "--t-end", "0.2",
                                  "--method", "rk4", "--dt", "0.001"])
    assert result.exit_code == 0, result.output
    traj = load_trajectory(h5)
    assert traj.stats.method == "rk4" and traj.stats.n_accepted == 200
    assert "energy drift (relative)" in result.output


def _one_paragraph_error(result, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    text = result.output.strip()
    assert text.startswith("error: ") and "\n\n" not in text
    for f in fragments:
        assert f in text


def test_malformed_model_exits_2_with_one_paragraph(runner, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "spherical_wrist.toml").read_text().replace('mass = "M"', "mass = [1, 2]"))
    for command in (["derive", str(bad)], ["simulate", str(bad), "-o", str(tmp_path / "x.h5")]):
        result = runner.invoke(main, command)
        _one_paragraph_error(result, str(bad), "[[bodies]] #1 'C'", "key 'mass'",
                             "expected a number or an expression string, got a list")
        assert len(result.output.strip().splitlines()) == 1


def test_code_in_a_model_is_refused_by_the_command(runner, tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "evil.toml"
    bad.write_text((EXAMPLES / "disk_on_ramp.toml").read_text().replace(
        'rows = ["u1 + u2"]', f"rows = [\"__import__('os').system('touch {marker}')\"]"))
    result = runner.invoke(main, ["derive", str(bad)])
    _one_paragraph_error(result, "[[constraints]] #1 'rolling'", "key 'rows'", "bad expression")
    assert not marker.exists()


def test_a_singular_start_exits_2_without_traceback(runner, tmp_path):
    locked = tmp_path / "locked.toml"  # gimbal lock at q2 = 0: the kinematic equations divide by sin(q2)
    locked.write_text((EXAMPLES / "spherical_wrist.toml").read_text().replace("q0 = [0.2, -1.0, 0.0]",
                                                                              "q0 = [0.2, 0.0, 0.0]"))
    result = runner.invoke(main, ["simulate", str(locked), "-o", str(tmp_path / "locked.h5")])
    _one_paragraph_error(result, "simulation failed at the start", "singular", "q2=0")


def test_a_failed_run_exits_2_and_keeps_its_results(runner, tmp_path):
    nan = tmp_path / "nan.toml"  # the couple becomes NaN at t = 0.2 s
    nan.write_text((EXAMPLES / "spherical_wrist.toml").read_text().replace('T3 = 0.0', 'T3 = "sqrt(0.2 - t)"'))
    h5 = tmp_path / "nan.h5"
    result = runner.invoke(main, ["simulate", str(nan), "-o", str(h5)])
    _one_paragraph_error(result, "simulation failed at t = 0.", "last good state", str(h5))
    traj = load_trajectory(h5)
    assert traj.status.startswith("failed") and 0.1 < traj.t[-1] <= 0.2


def test_bad_script_and_bad_results_file(runner, tmp_path):
    script = tmp_path / "empty.py"
    script.write_text("x = 1\n")
    result = runner.invoke(main, ["derive", str(script)])
    _one_paragraph_error(result, "build()", "system")
    junk = tmp_path / "junk.h5"
    junk.write_text("not hdf5")
    result = runner.invoke(main, ["info", str(junk)])
    _one_paragraph_error(result)


def test_ctrl_c_during_the_run_saves_the_samples_and_exits_130_with_progress_lines(runner, tmp_path, monkeypatch):
    import os
    import signal

    import kane.run_command
    from kane.simulate import Simulator

    monkeypatch.setattr(kane.run_command, "PROGRESS_EVERY_S", 0.0)  # stderr is not a terminal: a line per step here
    step = Simulator.step

    def step_then_ctrl_c(self):
        info = step(self)
        if self.stats.n_accepted == 30:
            os.kill(os.getpid(), signal.SIGINT)
        return info

    monkeypatch.setattr(Simulator, "step", step_then_ctrl_c)
    h5 = tmp_path / "wrist.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "spherical_wrist.toml"), "-o", str(h5),
                                  "--t-end", "100", "--output-dt", "0.01", "--loop", "python"])
    assert result.exit_code == 130, result.output
    assert "Traceback" not in result.output
    traj = load_trajectory(h5)
    assert traj.status == "interrupted: SIGINT" and traj.stats.n_accepted == 30
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("interrupted: SIGINT at t = ") and f"saved in {h5}" in last
    t_stop = float(last.split("t = ")[1].split()[0])
    n_grid = int(t_stop / 0.01 + 1e-9) + 1  # every output time up to the interruption, and no other
    assert traj.n_samples == n_grid
    np.testing.assert_allclose(traj.t, 0.01 * np.arange(n_grid), atol=1e-12)
    progress = [line for line in result.output.splitlines() if line.startswith("simulating: t = ")]
    assert len(progress) == 30  # one line per step taken
    times = [float(line.split("t = ")[1].split()[0]) for line in progress]
    assert times == sorted(times) and times[-1] == pytest.approx(t_stop, rel=1e-5)
    assert progress[-1].split(", ")[1] == "30 steps" and " of 100 s " in progress[-1]


def test_ctrl_c_during_the_compiled_loop_saves_the_samples_and_exits_130(runner, tmp_path, monkeypatch):
    """The signal is taken between two stretches of the compiled loop (at the progress call after the first)."""
    import os
    import signal

    from kane.simulate.compiled import CompiledRunner

    store = CompiledRunner._store

    def store_then_ctrl_c(self):
        store(self)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(CompiledRunner, "_store", store_then_ctrl_c)
    h5 = tmp_path / "chain.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "planar_chain.toml"), "-o", str(h5),
                                  "--t-end", "100", "--output-dt", "0.01"])
    assert result.exit_code == 130, result.output
    assert "Traceback" not in result.output
    traj = load_trajectory(h5)
    assert traj.status == "interrupted: SIGINT" and traj.stats.loop == "compiled"
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("interrupted: SIGINT at t = ") and f"saved in {h5}" in last
    t_stop = float(last.split("t = ")[1].split()[0])
    assert 0 < t_stop < 100 and t_stop - 0.02 < traj.t[-1] <= t_stop  # a sample owed within the last step is lost
    np.testing.assert_allclose(traj.t, 0.01 * np.arange(traj.n_samples), atol=1e-12)


def test_kane_simulate_and_the_api_write_the_same_samples(runner, tmp_path):
    """issue 28: the command line goes through kane.run and takes the compiled loop, as kane.simulate() does."""
    import kane
    from kane.io.model_file import load_model

    h5 = tmp_path / "chain.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "planar_chain.toml"), "-o", str(h5), "--t-end", "2",
                                  "--rtol", "1e-10", "--atol", "1e-10", "--output-dt", "0.01"])
    assert result.exit_code == 0, result.output
    assert "compiled loop" in result.output
    cli = load_trajectory(h5)
    lm = load_model(EXAMPLES / "planar_chain.toml")
    dyn = lm.derive().compile()
    q0, u0 = lm.initial_state(dyn)
    s = lm.simulation
    api = kane.simulate.simulate(dyn, (s.t_start, 2.0), q0, u0, method=s.method, rtol=1e-10, atol=1e-10, output_dt=0.01,
                        max_step=s.max_step, params=dict(lm.parameters), inputs=lm.input_function(dyn))
    assert cli.n_samples == api.n_samples == 201
    np.testing.assert_allclose(cli.t, api.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cli.x, api.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cli.energy, api.energy, rtol=0, atol=1e-12)
    for k in ("n_fev", "n_steps", "n_accepted", "n_rejected", "loop"):
        assert getattr(cli.stats, k) == getattr(api.stats, k), k
    assert cli.stats.loop == "compiled" and cli.stats.n_accepted > 1000
    info = runner.invoke(main, ["info", str(h5)])
    assert info.exit_code == 0 and "compiled loop" in info.output


def test_an_interrupt_during_start_up_prints_no_traceback(runner, tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("raise KeyboardInterrupt  # as if Ctrl-C came while the model was being built\n")
    result = runner.invoke(main, ["simulate", str(script), "-o", str(tmp_path / "slow.h5")])
    assert result.exit_code == 130, result.output
    assert "Traceback" not in result.output and "interrupted during start-up" in result.output
    assert "nothing was simulated or saved" in result.output and list(tmp_path.iterdir()) == [script]


def test_output_paths_are_checked_before_derivation(runner, tmp_path, monkeypatch):
    from kane.io.model_file import LoadedModel

    def no_derivation(*args, **kwargs):
        raise AssertionError("derived before checking the output path")

    monkeypatch.setattr(LoadedModel, "derive", no_derivation)
    model = str(EXAMPLES / "spherical_wrist.toml")
    (tmp_path / "afile").write_text("x")
    for output, words in (("/proc/wrist.h5", "/proc is a virtual file system"),
                          (str(tmp_path), "is a directory; give a file name such as"),
                          (str(tmp_path / "afile" / "w.h5"), "afile is a file, not a directory")):
        result = runner.invoke(main, ["simulate", model, "-o", output])
        _one_paragraph_error(result, words)


def test_the_step_limit_option_stops_the_run_and_keeps_it(runner, tmp_path):
    h5 = tmp_path / "wrist.h5"
    result = runner.invoke(main, ["simulate", str(EXAMPLES / "spherical_wrist.toml"), "-o", str(h5),
                                  "--max-steps", "25"])
    _one_paragraph_error(result, "the step limit was reached: 25 steps (max_steps = 25)", f"saved to {h5}")
    traj = load_trajectory(h5)
    assert traj.status.startswith("failed: the step limit") and traj.stats.n_steps == 25


def test_info_and_plot_read_a_killed_run_and_say_how_far_it_got(runner, tmp_path):
    import math

    from kane.io.trajectory import TrajectoryWriter

    h5 = tmp_path / "killed.h5"
    w = TrajectoryWriter(h5, flush_every=4, flush_seconds=math.inf)  # never closed: as after a SIGKILL
    w.open(q_names=("x",), u_names=("v",), description="killed run")
    for k in range(10):
        w.append(0.25 * k, np.array([math.cos(0.25 * k)]), np.array([-math.sin(0.25 * k)]))
    assert not h5.exists()
    result = runner.invoke(main, ["info", str(h5)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert f"{h5}.partial is incomplete" in text and "it got to t = 1.75 s, 8 samples" in text
    png = tmp_path / "killed.png"
    result = runner.invoke(main, ["plot", str(h5), "-o", str(png)])
    assert result.exit_code == 0, result.output
    assert png.stat().st_size > 1000 and "it got to t = 1.75 s, 8 samples" in " ".join(result.output.split())
    junk = tmp_path / "notes.txt"
    junk.write_text("not hdf5")
    _one_paragraph_error(runner.invoke(main, ["info", str(junk)]), "notes.txt is not an HDF5 file")


@pytest.mark.parametrize("command", [["sweep", "--grid", "m=1:2:2", "--in-process"], ["linearize"], ["export-c"]])
def test_commands_that_leave_the_rolling_contacts_out_refuse_the_file(runner, tmp_path, command):
    """Without its [[contacts]] the ball of ball_in_bowl.toml is a free body that falls through the bowl: a sweep,
    a linearization or C code of that would be a silent wrong answer."""
    out = tmp_path / "out"
    extra = [] if command[0] == "linearize" else ["-o", str(out)]
    result = runner.invoke(main, [command[0], str(EXAMPLES / "ball_in_bowl.toml"), *command[1:], *extra])
    assert result.exit_code == 2, result.output
    assert (f"kane {command[0]} does not run the [[contacts]] of this model" in " ".join(result.output.split())
            and "run it with kane simulate, kane view --live or kane assemble" in " ".join(result.output.split()))
    assert not out.exists()


def test_linearize_and_export_c_say_that_the_switching_rules_are_not_applied(runner, tmp_path):
    path = EXAMPLES / "disk_on_ramp_held.toml"
    lin = runner.invoke(main, ["linearize", str(path)])
    exp = runner.invoke(main, ["export-c", str(path), "-o", str(tmp_path / "disk_c")])
    assert lin.exit_code == 0 and exp.exit_code == 0, lin.output + exp.output
    assert "which the linearization does not apply: it holds with the switched constraints (brake) off" in lin.output
    assert "which the exported C code does not apply" in exp.output and (tmp_path / "disk_c" / "model.c").exists()
    assert "linearization: 3 states (q1, q2, u1)" in lin.output  # the free mode: the disk rolls (one speed)


def _leaf_commands(group, path=("kane",)):
    """(path, command) of every command under ``group``, the lazily loaded ones (command_group.LazyGroup) too."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _leaf_commands(cmd, (*path, name))
        else:
            yield (*path, name), cmd


def test_every_option_of_every_command_has_help_in_plain_words():
    """Each visible option of each kane command (lazy ones included) has non-empty help, and no help text, the
    command's own or an option's, points the reader to a module path such as kane.analysis.command."""
    commands = list(_leaf_commands(main))
    names = {" ".join(path) for path, _ in commands}
    assert {"kane realtime", "kane assemble", "kane sweep", "kane simulate", "kane export-c"} <= names
    bare, module_paths = [], []
    for path, cmd in commands:
        texts = [cmd.help or "", cmd.short_help or ""]
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                if not (p.help or "").strip():
                    bare.append(f"{' '.join(path)} {p.opts[0]}")
                texts.append(p.help or "")
        module_paths += [f"{' '.join(path)}: {m}" for t in texts for m in re.findall(r"\bkane\.[a-z_]+", t)]
    assert bare == [] and module_paths == []
