"""The HDF5 library's reading of a file from elsewhere, first in a child process (kane.io.h5_probe): a child that
hangs is killed at the limit and one that crashes is reported, both as an HDF5LayoutError naming the file, from the
library and from `kane info` / `kane plot`; an intact file passes and is read as before.

The damaged file that hung HDF5 2.0.0 in a recorded fuzz run is not reproducible on demand, so the hang and the
crash are played by the child's program itself (a sleep, a SIGSEGV): what is tested is that kane survives them."""

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

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


def _count_children(monkeypatch):
    """The files sent to a probe server (one forked child each) and the servers started, as they happen."""
    children, servers = [], []
    check, start = h5_probe._Server.check, h5_probe._Server.__init__
    monkeypatch.setattr(h5_probe._Server, "check", lambda self, path: children.append(path) or check(self, path))
    monkeypatch.setattr(h5_probe._Server, "__init__", lambda self, *a: servers.append(a) or start(self, *a))
    return children, servers


def test_a_file_that_passed_is_not_probed_again_until_it_changes(run, monkeypatch):
    children, _ = _count_children(monkeypatch)
    h5_probe.probe(run)
    describe_file(run)
    h5_probe.probe(run)
    assert len(children) == 1  # the unchanged file: its first verdict stands
    Trajectory(t=[0.0, 1.0], q=[[0.0], [0.3]], u=[[0.3], [0.3]]).save(run)  # written again: probed again
    monkeypatch.setattr(h5_probe, "_CHILD", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    with pytest.raises(HDF5LayoutError, match="crashed"):
        h5_probe.probe(run)
    assert len(children) == 2


def _runs(tmp_path, n):
    paths = [tmp_path / f"run{k}.h5" for k in range(n)]
    for k, path in enumerate(paths):
        Trajectory(t=[0.0, 1.0], q=[[0.0], [0.1 * k]], u=[[0.0], [0.1 * k]]).save(path)
    return paths


def test_one_server_forks_a_child_per_file_and_survives_their_crashes_and_output(tmp_path, monkeypatch):
    """Each file is read by a fresh child of one server: a crash of one child (its signal reported) and whatever
    a child prints leave the server answering for the next files; a hang kills the server, the next probe starts
    another."""
    children, servers = _count_children(monkeypatch)
    program = ("import os, signal, sys\nprint('12\\n-11\\n' * 5000)\n"
               "if sys.argv[1].endswith('run1.h5'): os.kill(os.getpid(), signal.SIGSEGV)\n"
               "if sys.argv[1].endswith('run3.h5'): signal.pause()\n")
    monkeypatch.setattr(h5_probe, "_CHILD", program)
    paths = _runs(tmp_path, 5)
    h5_probe.probe(paths[0], limit_s=5.0)
    with pytest.raises(HDF5LayoutError, match=rf"run1\.h5: .* crashed .*signal {int(signal.SIGSEGV)}"):
        h5_probe.probe(paths[1], limit_s=5.0)
    h5_probe.probe(paths[2], limit_s=5.0)
    assert (len(children), len(servers)) == (3, 1)  # three files, one server
    with pytest.raises(HDF5LayoutError, match=r"run3\.h5: .* did not get through .* in 1 s"):
        h5_probe.probe(paths[3], limit_s=1.0)
    h5_probe.probe(paths[4], limit_s=1.0)
    assert (len(children), len(servers)) == (5, 3)  # a server per limit; the hung one replaced


def test_the_child_is_isolated_from_kane_site_and_the_environment(run, monkeypatch):
    """The forked child has what a fresh isolated Python that imported h5py alone has: no kane, no user code or
    user site, none of this process's environment variables; a child that finds otherwise crashes itself, which
    would be reported."""
    monkeypatch.setenv("KANE_PROBE_SECRET", "1")
    monkeypatch.setattr(h5_probe, "_CHILD", "import os, signal, sys\n"
                        "leaks = ['kane' in sys.modules, not sys.flags.isolated, not sys.flags.no_user_site,\n"
                        "         'KANE_PROBE_SECRET' in os.environ, 'h5py' not in sys.modules]\n"
                        "if any(leaks): os.kill(os.getpid(), signal.SIGSEGV)\n")
    h5_probe.probe(run)
    monkeypatch.setattr(h5_probe, "_CHILD", h5_probe._CHILD.replace("'kane'", "'h5py'"))  # the check can fail
    run.write_bytes(run.read_bytes())  # written again: its passed verdict no longer stands
    with pytest.raises(HDF5LayoutError, match="crashed"):
        h5_probe.probe(run, limit_s=5.0)


def test_threads_probe_at_once_and_none_waits_on_another_threads_hang(tmp_path, monkeypatch):
    monkeypatch.setattr(h5_probe, "_CHILD", "import signal, sys\n"
                        "if sys.argv[1].endswith('run0.h5'): signal.pause()\n")
    paths = _runs(tmp_path, 5)
    outcomes, hung_started, errors = [], threading.Event(), []

    def hang():
        hung_started.set()
        try:
            h5_probe.probe(paths[0], limit_s=3.0)
        except HDF5LayoutError as exc:
            errors.append(str(exc))
        outcomes.append("hang ended")

    slow = threading.Thread(target=hang)
    slow.start()
    hung_started.wait()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda p: h5_probe.probe(p, limit_s=3.0), paths[1:]))
    outcomes.append("others probed")
    slow.join()
    assert outcomes == ["others probed", "hang ended"]  # the four files did not wait for the hang's 3 s
    assert len(errors) == 1 and "run0.h5" in errors[0] and "did not get through" in errors[0]
