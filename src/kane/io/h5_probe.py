"""A file from elsewhere is first read by the HDF5 library in a child process with a time limit.

A damaged HDF5 file can make the HDF5 C library loop or crash while it reads the file's structure: in a recorded
run of ``bench/fuzz_hdf5.py`` (5,000 files), a real-time log with flipped bytes kept HDF5 2.0.0 looping in the read
of a root attribute, where no Python code can interrupt it. :func:`probe` reads what kane's readers read before
any data (every attribute, and each object's link, type, dtype and shape, up to :data:`MAX_OBJECTS` objects) in a
child Python that imports h5py alone (isolated mode, no site or user code, no kane); a child that runs past
``limit_s`` is killed, and a child that dies by a signal (the library crashed) is reported: both become an
:class:`~kane.io.h5_read.HDF5LayoutError` naming the file. A child that ends with a Python exception, or cleanly,
lets the caller go on: the caller's own checked readers then name what is wrong with the layout.

The child is forked per file from a probe server: one such Python (isolated, h5py imported, no file opened)
started by the first probe of a process, kept for the process (it ends when the process closes its end of the
pipe) and forked once per file, so a probe costs a fork (a few ms) instead of a Python start and an import of
h5py (about 0.2 s). The server itself never opens a file, so every child starts from the same state; a child
past the limit is killed with its server (their own process group; the next probe starts a new server), and one
that crashes is reported by the server with its signal. A probe while another thread's probe holds the server
starts a server of its own for that file, so no thread waits on another's file.

The commands that read a file a user was given (``kane info``, ``kane plot``, ``kane view RUN.h5``, through
:mod:`kane.viz.file_info`) probe first; the library's readers do not (a file kane wrote itself needs no probe). A
file that got through is remembered for the process by its identity and state (device, inode, size,
modification and status-change times, in nanoseconds): reading it again unchanged (``kane info`` after
``describe_file``, a plot after the info) forks no second child, and any write to the file (which moves its
status-change time, which no user tool can set back) probes it again.

    >>> probe("results.h5")          # returns, or raises HDF5LayoutError naming the file
"""

from __future__ import annotations

import atexit
import math
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time

from .h5_read import HDF5LayoutError

__all__ = ["MAX_OBJECTS", "PROBE_LIMIT_S", "probe"]

MAX_OBJECTS = 20_000  # objects whose metadata the child reads (a sweep file holds one group per stored run)
PROBE_LIMIT_S = 15.0  # [s] of wall time for the child: a few hundredths of a second for an intact file
_PASSED_MAX = 4096  # files remembered as probed (the oldest forgotten first)
_passed: dict[tuple, None] = {}  # the identities of the files that got through, in the order probed
_passed_lock = threading.Lock()

# The child's whole program: h5py only, the path as its argument; reading attributes and metadata, no data.
_CHILD = f"""
import sys
import h5py
seen = [0]
def look(obj):
    for key in obj.attrs:
        obj.attrs[key]
    if isinstance(obj, h5py.Dataset):
        obj.dtype, obj.shape, obj.chunks, obj.maxshape
def visit(name, obj):
    seen[0] += 1
    look(obj)
    return True if seen[0] >= {MAX_OBJECTS} else None
with h5py.File(sys.argv[1], "r") as f:
    look(f)
    f.visititems(visit)
"""

# The server's program: per request line (the path's bytes in hex), fork a child that runs the child's program (the
# function below) with stdin and stdout on /dev/null and an alarm past the limit (so a child whose caller died
# does not loop on), wait for it and answer its exit code (negative: the signal that ended it) on a line.
_SERVER = """
import os
import signal
import sys
import h5py


def child_program():
{body}


for line in sys.stdin.buffer:
    path = os.fsdecode(bytes.fromhex(line.decode()))
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            signal.alarm({alarm})
            sys.argv[1:] = [path]
            child_program()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(f"{{os.waitstatus_to_exitcode(status)}}\\n")
    sys.stdout.flush()
"""


class _Server:
    """One probe server (see the module's text) for the program ``child`` and the limit ``limit_s`` [s]."""

    def __init__(self, child: str, limit_s: float):
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HDF5_USE_FILE_LOCKING")}
        program = _SERVER.format(body=textwrap.indent(child.strip() or "pass", "    "),
                                 alarm=math.ceil(limit_s) + 2)
        self.key, self.limit_s = (os.getpid(), child, limit_s), limit_s
        self.proc = subprocess.Popen([sys.executable, "-I", "-c", program], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check(self, path) -> int | None:
        """The exit code of the child that read ``path`` (negative: its signal), None past the limit (the child
        and this server are killed then)."""
        deadline = time.monotonic() + self.limit_s
        answer = b""
        try:
            os.write(self.proc.stdin.fileno(), f"{os.fsencode(path).hex()}\n".encode())
            fd = self.proc.stdout.fileno()
            ready = select.poll()
            ready.register(fd, select.POLLIN)
            while not answer.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not ready.poll(math.ceil(left * 1000)):
                    self.kill()
                    return None
                chunk = os.read(fd, 64)
                if not chunk:  # the server itself ended: its own status stands for the child's
                    self.kill()
                    return self.proc.returncode or -int(signal.SIGKILL)
                answer += chunk
        except BaseException:  # an interrupt (or a broken pipe) leaves no child reading the file
            self.kill()
            raise
        code = int(answer)
        return None if code == -int(signal.SIGALRM) else code

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_server: _Server | None = None  # this process's probe server, started by the first probe
_server_lock = threading.Lock()


def _child_exit_code(path, limit_s: float) -> int | None:
    """The exit code of the child that read ``path`` (negative: its signal), None when it ran past ``limit_s``."""
    global _server
    if not _server_lock.acquire(blocking=False):  # another thread's file holds the server: a server of its own
        own = _Server(_CHILD, limit_s)
        try:
            return own.check(path)
        finally:
            own.close()
    try:
        if _server is None or _server.key != (os.getpid(), _CHILD, limit_s) or not _server.alive():
            if _server is not None and _server.key[0] == os.getpid():
                _server.kill()
            _server = _Server(_CHILD, limit_s)  # a forked process starts its own: the pipes are its parent's
        code = _server.check(path)
        if not _server.alive():
            _server = None
        return code
    finally:
        _server_lock.release()


@atexit.register
def _end_server() -> None:
    """The idle server of this process ends with it (killed: a forked process may hold its pipe open too)."""
    if _server is not None and _server.key[0] == os.getpid():
        _server.kill()


def probe(path, limit_s: float = PROBE_LIMIT_S) -> None:
    """Read the structure of the HDF5 file ``path`` in a child process (see the module's text); returns when the
    HDF5 library got through it, raises :class:`HDF5LayoutError` naming the file when the library hung past
    ``limit_s`` [s] or crashed. A file that is missing or not HDF5 is left to the caller's reader to name."""
    if not os.path.isfile(path):
        return
    identity = _identity(path)
    with _passed_lock:
        if identity in _passed:
            return
    code = _child_exit_code(path, limit_s)
    if code is None:
        raise HDF5LayoutError(path, "file structure", f"the HDF5 library did not get through the file's structure "
                                                      f"in {limit_s:g} s (a damaged file); nothing was read")
    if code < 0:
        raise HDF5LayoutError(path, "file structure", f"the HDF5 library crashed reading the file's structure "
                                                      f"(signal {-code}: a damaged file); nothing was read")
    with _passed_lock:
        _passed[identity] = None
        while len(_passed) > _PASSED_MAX:
            del _passed[next(iter(_passed))]


def _identity(path) -> tuple:
    """What makes a probe's verdict stand: the file (device, inode) as it is (size, mtime and ctime in ns)."""
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
