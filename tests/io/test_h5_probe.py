"""The HDF5 library's reading of a file from elsewhere, first in a child process (kane.io.h5_probe): a child that
hangs is killed at the limit and one that crashes is reported, both as an HDF5LayoutError naming the file, from the
library and from `kane info` / `kane plot`; an intact file passes and is read as before.

The damaged file that hung HDF5 2.0.0 in a recorded fuzz run is not reproducible on demand, so the hang and the
crash are played by the child's program itself (a sleep, a SIGSEGV): what is tested is that kane survives them."""

import signal
import time

import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.io import h5_probe
from kane.io.h5_read import HDF5LayoutError
from kane.io.trajectory import Trajectory
from kane.viz.file_info import describe_file


@pytest.fixture
def run(tmp_path):
    path = tmp_path / "run.h5"
    Trajectory(t=[0.0, 0.5, 1.0], q=[[0.0], [0.1], [0.2]], u=[[0.2], [0.2], [0.2]]).save(path)
    return path


def test_an_intact_file_passes_the_probe_and_is_described(run):
    h5_probe.probe(run)  # the real child program reads every attribute and object of the file
    rows = dict(describe_file(run).rows)
    assert rows["samples"] == "3, t = 0 to 1 s"


def test_a_child_that_hangs_is_killed_at_the_limit_and_the_file_named(run, monkeypatch):
    monkeypatch.setattr(h5_probe, "_CHILD", "import time\ntime.sleep(120)\n")
    t0 = time.monotonic()
    with pytest.raises(HDF5LayoutError, match=r"run\.h5: file structure: the HDF5 library did not get through"):
        h5_probe.probe(run, limit_s=1.0)
    assert time.monotonic() - t0 < 30.0  # killed at the limit, not after the child's two minutes


def test_a_child_that_crashes_is_reported_with_its_signal(run, monkeypatch):
    monkeypatch.setattr(h5_probe, "_CHILD", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    with pytest.raises(HDF5LayoutError, match=rf"run\.h5: file structure: the HDF5 library crashed .*signal "
                                              rf"{int(signal.SIGSEGV)}"):
        h5_probe.probe(run)


@pytest.mark.parametrize("command", ["info", "plot"])
def test_the_commands_refuse_a_file_whose_probe_hangs(run, monkeypatch, command):
    monkeypatch.setattr(h5_probe, "_CHILD", "import time\ntime.sleep(120)\n")
    monkeypatch.setattr(h5_probe, "PROBE_LIMIT_S", 1.0)
    monkeypatch.setattr(h5_probe.probe, "__defaults__", (1.0,))
    result = CliRunner().invoke(main, [command, str(run)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "run.h5: file structure: the HDF5 library did not get through the file's structure in 1 s" in \
        " ".join(result.output.split())


def test_a_file_that_passed_is_not_probed_again_until_it_changes(run, monkeypatch):
    children = []
    real = h5_probe.subprocess.run
    monkeypatch.setattr(h5_probe.subprocess, "run", lambda *a, **k: children.append(a) or real(*a, **k))
    h5_probe.probe(run)
    describe_file(run)
    h5_probe.probe(run)
    assert len(children) == 1  # the unchanged file: its first verdict stands
    Trajectory(t=[0.0, 1.0], q=[[0.0], [0.3]], u=[[0.3], [0.3]]).save(run)  # written again: probed again
    monkeypatch.setattr(h5_probe, "_CHILD", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    with pytest.raises(HDF5LayoutError, match="crashed"):
        h5_probe.probe(run)
    assert len(children) == 2
