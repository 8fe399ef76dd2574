"""A file from elsewhere is first read by the HDF5 library in a child process with a time limit.

A damaged HDF5 file can make the HDF5 C library loop or crash while it reads the file's structure: in a recorded
run of ``bench/fuzz_hdf5.py`` (5,000 files), a real-time log with flipped bytes kept HDF5 2.0.0 looping in the read
of a root attribute, where no Python code can interrupt it. :func:`probe` reads what kane's readers read before
any data (every attribute, and each object's link, type, dtype and shape, up to :data:`MAX_OBJECTS` objects) in a
child Python that imports h5py alone (isolated mode, no site or user code, no kane); a child that runs past
``limit_s`` is killed, and a child that dies by a signal (the library crashed) is reported: both become an
:class:`~kane.io.h5_read.HDF5LayoutError` naming the file. A child that ends with a Python exception, or cleanly,
lets the caller go on: the caller's own checked readers then name what is wrong with the layout.

The commands that read a file a user was given (``kane info``, ``kane plot``, ``kane view RUN.h5``, through
:mod:`kane.viz.file_info`) probe first; the library's readers do not (a file kane wrote itself needs no probe, and
a probe costs a process start, about 0.3 s). A file that got through is remembered for the process by its
identity and state (device, inode, size, modification and status-change times, in nanoseconds): reading it again
unchanged (``kane info`` after ``describe_file``, a plot after the info) starts no second child, and any write
to the file (which moves its status-change time, which no user tool can set back) probes it again.

    >>> probe("results.h5")          # returns, or raises HDF5LayoutError naming the file
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from .h5_read import HDF5LayoutError

__all__ = ["MAX_OBJECTS", "PROBE_LIMIT_S", "probe"]

MAX_OBJECTS = 20_000  # objects whose metadata the child reads (a sweep file holds one group per stored run)
PROBE_LIMIT_S = 15.0  # [s] of wall time for the child: a few tenths of a second for an intact file
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
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HDF5_USE_FILE_LOCKING")}
    try:
        child = subprocess.run([sys.executable, "-I", "-c", _CHILD, os.fspath(path)], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=limit_s)
    except subprocess.TimeoutExpired:
        raise HDF5LayoutError(path, "file structure", f"the HDF5 library did not get through the file's structure "
                                                      f"in {limit_s:g} s (a damaged file); nothing was read") from None
    if child.returncode < 0:
        raise HDF5LayoutError(path, "file structure", f"the HDF5 library crashed reading the file's structure "
                                                      f"(signal {-child.returncode}: a damaged file); nothing was "
                                                      "read")
    with _passed_lock:
        _passed[identity] = None
        while len(_passed) > _PASSED_MAX:
            del _passed[next(iter(_passed))]


def _identity(path) -> tuple:
    """What makes a probe's verdict stand: the file (device, inode) as it is (size, mtime and ctime in ns)."""
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
