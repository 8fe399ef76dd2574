"""`kane view`: a run file that is truncated or from another program gets one line and exit status 2; a run
without a model path needs --model; a port in use gives the next free one, and the command says so."""

import socket
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _view_process import start_view  # noqa: E402

CART = Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml"


@pytest.fixture(scope="module")
def cart_run(make_cart_run):
    return make_cart_run(0.5, 0.05)


def _view(*args):
    result = CliRunner().invoke(main, ["view", *map(str, args)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    return result.exit_code, lines


def test_a_truncated_run_file_is_one_line_and_status_2(cart_run, tmp_path):
    cut = tmp_path / "cut.h5"
    cut.write_bytes(cart_run.read_bytes()[:700])
    code, lines = _view(cut)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and "cut.h5" in lines[0]


def test_a_file_of_another_program_is_one_line_and_status_2(tmp_path):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["t"] = np.arange(3.0)
    code, lines = _view(other)
    assert code == 2 and len(lines) == 1 and "other.h5" in lines[0]


def test_a_run_naming_no_model_file_asks_for_model(cart_run, tmp_path):
    traj = kane.load_trajectory(cart_run)
    bare = tmp_path / "bare.h5"
    kane.Trajectory(traj.t, traj.q, traj.u, q_names=traj.q_names, u_names=traj.u_names,
                    description="made in Python").save(bare)
    code, lines = _view(bare)
    assert code == 2 and len(lines) == 1 and "--model" in lines[0]
    code, lines = _view(bare, "--model", CART.parent / "planar_chain.toml")  # the wrong model
    assert code == 2 and len(lines) == 1 and "are not those of model 'planar_chain'" in lines[0]


def test_a_port_in_use_gives_the_next_free_one(cart_run):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc, lines = start_view([cart_run, "--port", port])
        proc.terminate()
        proc.wait(timeout=10)
    said = [ln.strip() for ln in lines if ln.startswith(("port", "kane view"))]
    assert said[0].startswith(f"port {port} is in use; serving on port ")
    served = int(said[0].rsplit(" ", 1)[1])
    assert served != port and said[1].startswith(f"kane view: open http://127.0.0.1:{served}/?token=")
    assert said[1].endswith(" (Ctrl-C to stop)") and len(said[1].split()[3].split("token=")[1]) >= 40


def test_a_trace_on_a_missing_body_is_one_line_and_status_2(cart_run):
    code, lines = _view(cart_run, "--trace", "basket:0,0,0")
    assert code == 2 and len(lines) == 1 and "no body named 'basket'; bodies: B, C" in lines[0]
    code, lines = _view(cart_run, "--trace", "B:1,2")
    assert code == 2 and len(lines) == 1 and "--trace 'B:1,2'" in lines[0]
