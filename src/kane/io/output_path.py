"""Output paths of kane's writers: checked before any work is done, and written by one run at a time.

:func:`check_output_path` refuses a directory, a virtual file system or an unwritable directory in plain words.
:class:`OutputLock` makes one writer per output path: it holds an exclusive ``flock`` on ``path + '.lock'``
(the file records the holder's pid and host), so a second run writing the same path, in this process or another,
refuses at start with a message naming the path and the process that writes it. The kernel drops the lock when
its process ends, a SIGKILL included, so a lock left by a killed run is stale by construction: the next run takes
it (the pid is only reported, never trusted). The kane command claims the path before it derives (:func:`claim`,
a claim a writer of the same path in this process then adopts), so a second run refuses in its first second.
"""

from __future__ import annotations

import fcntl
import gc
import os
import socket
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import KaneError

__all__ = ["TrajectoryFileError", "OutputBusyError", "OutputLock", "check_output_path", "claim", "LOCK_SUFFIX"]

LOCK_SUFFIX = ".lock"
_PARTIAL = ".partial"
_VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")


class TrajectoryFileError(KaneError, OSError):
    """A trajectory file cannot be read or written: missing, not HDF5, not a kane trajectory, or an output path
    that is a directory, lies in a read-only or virtual directory. The message names the path."""


class OutputBusyError(TrajectoryFileError):
    """Another run (``pid``, None when unknown) is writing the output path ``path``."""

    def __init__(self, path, pid: int | None, host: str):
        self.path, self.pid = str(path), pid
        who = f"process {pid}" + (f" on {host}" if host and host != socket.gethostname() else "") if pid else \
            "another process"
        super().__init__(f"output file {path} is being written by another kane run ({who}; lock file "
                         f"{path}{LOCK_SUFFIX}); wait for it to finish or write to another path (-o)")


def check_output_path(path: str | os.PathLike) -> Path:
    """Check that a trajectory can be written to ``path`` (and its ``.partial`` file) before any work is done:
    not a directory, not under /proc, /sys or /dev, no file where a directory is needed, the directory writable.
    Returns ``path`` as a Path; raises :class:`TrajectoryFileError` in plain words."""
    p = Path(path).expanduser()
    full = Path(os.path.abspath(p))
    for root in map(Path, _VIRTUAL_ROOTS):
        if full == root or root in full.parents:
            raise TrajectoryFileError(f"output file {p}: {root} is a virtual file system of the operating "
                                      f"system, not a place for files; choose a path in an ordinary directory")
    for candidate in (full, Path(str(full) + _PARTIAL)):
        if candidate.is_dir():
            raise TrajectoryFileError(f"output file {candidate} is a directory; give a file name such as "
                                      f"{candidate / 'run.h5'}")
        if candidate.exists() and not candidate.is_file():
            raise TrajectoryFileError(f"output file {candidate} exists and is not a regular file")
    parent = full.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise TrajectoryFileError(f"output file {p}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TrajectoryFileError(f"output file {p}: cannot write in directory {parent} (permission denied)")
    return p


_HELD: weakref.WeakValueDictionary[str, OutputLock] = weakref.WeakValueDictionary()
_GUARD = threading.Lock()


def _key(path) -> str:
    return os.path.realpath(os.path.abspath(Path(path).expanduser()))


class OutputLock:
    """The exclusive right to write ``path`` (and its ``.partial``): :meth:`acquire` or :func:`claim` it,
    :meth:`release` it (also when the object is collected or the process ends)."""

    def __init__(self, path, fd: int, claimed: bool):
        self.path, self.lock_path = Path(path), Path(str(path) + LOCK_SUFFIX)
        self._fd: int | None = fd
        self.claimed = claimed  # a claim of the command, not yet adopted by a writer

    @classmethod
    def acquire(cls, path, *, claim: bool = False) -> OutputLock:
        """The lock of ``path``: adopted from a claim of this process, or taken; :class:`OutputBusyError` when
        another run (or another writer of this process) holds it."""
        key = _key(path)
        for attempt in range(2):
            with _GUARD:
                held = _HELD.get(key)
                if held is None or held._fd is None:
                    lock = cls(path, cls._take(Path(path)), claim)
                    _HELD[key] = lock
                    return lock
                if held.claimed and not claim:
                    held.claimed = False
                    return held
            del held
            if attempt == 0:
                gc.collect()  # a writer of this process dropped unclosed (in a reference cycle) lets its path go
        raise OutputBusyError(path, os.getpid(), socket.gethostname())

    @staticmethod
    def _take(path: Path) -> int:
        lock_path = Path(str(path) + LOCK_SUFFIX)
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrajectoryFileError(f"cannot create the directory of output file {path}: "
                                      f"{exc.strerror or exc}") from exc
        while True:
            try:
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise TrajectoryFileError(f"cannot create the lock file {lock_path} of output file {path}: "
                                          f"{exc.strerror or exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                text = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
                os.close(fd)
                pid = int(text[0]) if text and text[0].isdigit() else None
                raise OutputBusyError(path, pid, text[1] if len(text) > 1 else "") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino  # not a lock file unlinked meanwhile
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
                return fd
            os.close(fd)

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Give the path up (the lock file goes); nothing when already released."""
        with _GUARD:
            fd, self._fd = self._fd, None
            if fd is None:
                return
            if _HELD.get(_key(self.path)) is self:
                del _HELD[_key(self.path)]
            try:
                self.lock_path.unlink(missing_ok=True)
            finally:
                os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)


@contextmanager
def claim(path) -> Iterator[OutputLock]:
    """Within the block ``path`` is claimed for this process: the first writer of ``path`` here adopts the
    claim, any other run refuses (:class:`OutputBusyError`); released at the end."""
    lock = OutputLock.acquire(path, claim=True)
    try:
        yield lock
    finally:
        lock.release()
